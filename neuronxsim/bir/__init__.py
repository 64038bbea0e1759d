"""BIR, the Backend IR: the opcode table, node classes, modules and BIR JSON.

Everything here is generated from the C++ core's single opcode table
(``cpp/bir/InstructionType.def``): the :class:`InstructionType` IntEnum below is built from the
core's list at import time, so Python, C++ and JSON always agree on names and ordinals.

>>> from neuronxsim import bir
>>> int(bir.InstructionType.BIRKernel)
54
>>> m = bir.Module()
>>> f = m.addFunction()
>>> node = f.addBlock().addInstruction(bir.InstructionType.BIRKernel)
>>> node.set_kernel_name("MLP")
"""

from __future__ import annotations

import enum
import errno
import os
import stat
import tempfile
from typing import Union

from neuronxsim.errors import BIRError
from neuronxsim.starfish.lib import _core

_b = _core.bir

#: The 110-member opcode enum; ordinals 50..58 are pinned by seed 000.
InstructionType = enum.IntEnum(
    "InstructionType",
    [(name, i) for i, name in enumerate(_b.opcode_names())],
    module=__name__,
)
InstructionType.__doc__ = "bir::InstructionType: the BIR opcode enum (110 members, 0..109)."

#: Where each slot's name and ordinal come from: "SEED", "PUBLIC" or "OURS".
OPCODE_ORIGINS = dict(zip(InstructionType, _b.opcode_origins()))
#: What kind of instruction each opcode is: "Comp", "DMA", "Sync", "Ctrl", "Coll", "Sym", or "Cust"
#: (seed 000's Custom / Extension band, slots 53..57: opaque boxes with their own latency model).
OPCODE_CATEGORIES = dict(zip(InstructionType, _b.opcode_categories()))
#: The node class each opcode is built as ("InstBIRKernel", ...).
OPCODE_NODE_CLASSES = dict(zip(InstructionType, _b.opcode_node_classes()))

# Enums, operands and containers, re-exported from the core.
Engine = _b.Engine
DType = _b.DType
ActivationFunc = _b.ActivationFunc
AluOp = _b.AluOp
AccumCmd = _b.AccumCmd
ReduceAxis = _b.ReduceAxis
MemsetMode = _b.MemsetMode
MemoryType = _b.MemoryType
TensorKind = _b.TensorKind
AddrSpace = _b.AddrSpace
AccessFlavour = _b.AccessFlavour
PerfMode = _b.PerfMode
DmaMode = _b.DmaMode
DgeType = _b.DgeType
APPair = _b.APPair
AccessPattern = _b.AccessPattern
View = _b.View
MemoryLocation = _b.MemoryLocation
MemoryLocationSet = _b.MemoryLocationSet
Instruction = _b.Instruction
BasicBlock = _b.BasicBlock
Function = _b.Function
Module = _b.Module
dtype_size = _b.dtype_size
check_start_partition = _b.check_start_partition
BIR_VERSION = _b.BIR_VERSION
FORMAT_VERSION = _b.FORMAT_VERSION

NODE_CLASSES = {name: getattr(_b, name) for name in sorted(set(_b.opcode_node_classes()))}
globals().update(NODE_CLASSES)


def _module_from_json(text: str) -> Module:
    return Module.from_json(text, verify=False)  # as it was, verified or not


def _module_reduce(self):
    """A module pickles as its BIR JSON (the one serialised form of a module)."""
    return (_module_from_json, (self.to_json(-1),))


Module.__reduce__ = _module_reduce


def instruction_type_string(t: int) -> str:
    """``bir::InstructionType::string``: the opcode name of ordinal ``t`` (BIRError if out of range)."""
    return _b.instruction_type_string(int(t))


def string2InstructionType(s: str) -> InstructionType:
    """``bir::string2InstructionType``: the exact inverse of :func:`instruction_type_string`."""
    return InstructionType(_b.string2InstructionType(s))


def field_offsets() -> dict[str, int]:
    """Byte offsets of the pinned node fields (``"Class.field"``) and ``"sizeof(Class)"`` entries."""
    return dict(_b.field_offsets())


def load(path: Union[str, os.PathLike], verify: bool = True) -> Module:
    """Reads a BIR JSON file; the module's ``files_dir`` (where its file references resolve) is the
    file's folder. Raises :class:`BIRError` naming the JSON path of any problem."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BIRError(f"{os.fspath(path)}: not UTF-8 text (byte {e.start})") from None
    module = Module.from_json(text, verify=verify)
    module.files_dir = os.path.dirname(os.path.abspath(path))
    return module


def save(module: Module, path: Union[str, os.PathLike], indent: int = 1) -> None:
    """Writes ``module`` as BIR JSON, atomically (an interrupted save leaves no partial file)."""
    atomic_write_text(path, module.to_json(indent))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Union[str, os.PathLike], text: str) -> None:
    """Writes ``text`` (UTF-8) to a temporary file beside ``path`` and renames it into place."""
    atomic_write_bytes(path, text.encode("utf-8"))


_NOT_REGULAR = ((stat.S_ISDIR, "is a directory"), (stat.S_ISFIFO, "is a named pipe (FIFO)"),
                (stat.S_ISCHR, "is a character device"), (stat.S_ISBLK, "is a block device"),
                (stat.S_ISSOCK, "is a socket"))


def not_a_regular_file(mode: int) -> "str | None":
    """What a file of ``st_mode`` ``mode`` is when it is not a regular file ("is a directory"),
    else None: the atomic writes below refuse such a path, the command line's inputs too."""
    for test, what in _NOT_REGULAR:
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "is not a regular file"


def atomic_write_bytes(path: Union[str, os.PathLike], data: bytes) -> None:
    """Writes ``data`` to a temporary file beside ``path`` and renames it into place. An
    ``OSError`` names ``path`` (not the temporary file, nor nothing: a full disk's ENOSPC has no
    file name of its own). An existing ``path`` that is not a regular file (a pipe, a device)
    is refused: the rename would replace it, and ``-o /dev/full`` as root removed the device."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    kind = None if mode is None else not_a_regular_file(mode)
    if kind:
        raise OSError(errno.EEXIST, f"{kind}; only a regular file is replaced, name a file to write", path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 is for the temporary only
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError) and e.strerror:
            raise OSError(e.errno, e.strerror, path) from e
        raise


def iter_instructions(module: Module):
    """Yields ``(function_index, block_index, instruction_index, instruction)`` in program order."""
    for fi, f in enumerate(module.functions):
        for bi, b in enumerate(f.blocks):
            for ii, inst in enumerate(b.instructions):
                yield fi, bi, ii, inst


__all__ = [
    "InstructionType", "OPCODE_ORIGINS", "OPCODE_CATEGORIES", "OPCODE_NODE_CLASSES", "NODE_CLASSES", "Engine", "DType",
    "ActivationFunc", "AluOp", "AccumCmd", "ReduceAxis", "MemsetMode", "MemoryType", "TensorKind",
    "AddrSpace", "AccessFlavour", "PerfMode", "DmaMode", "DgeType", "APPair", "AccessPattern",
    "MemoryLocation", "MemoryLocationSet", "Instruction", "BasicBlock", "Function", "Module",
    "instruction_type_string", "string2InstructionType", "field_offsets", "load", "save",
    "atomic_write_text", "atomic_write_bytes", "not_a_regular_file", "iter_instructions", "dtype_size", "check_start_partition", "BIRError",
    "BIR_VERSION", "FORMAT_VERSION",
] + sorted(NODE_CLASSES)

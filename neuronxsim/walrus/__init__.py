"""walrus: the kernel-node resolvers and KLR files.

* :func:`resolve_kernel_nodes` replaces IT55 (``InstNKIKernel``, user ``@nki.jit`` kernels) and IT56
  (``InstNKIKLIRKernel``, registry kernels re-traced at codegen time) nodes with the ISA code of
  their kernels. IT55 names, in ``func``, the kernel the NKI front end compiled when the program
  was built (``penguin.ir.nki_compile``): found among the kernels compiled in this process
  (:func:`add_compiled_nki_kernel`), else as that file in the module's folder. IT56 carries its
  kernel in one of two forms, chosen by ``kernel_format``: Form A (anything but ``"bir"``,
  beta2): ``klir_binary`` is the path of a KLR file; Form B (``"bir"``, beta3): ``klir_binary``
  is BIR JSON text or the path of a BIR JSON file. Files are found inside the module's files
  folder (``base_dir``, else ``Module.files_dir``, else the working directory) or a folder allowed
  explicitly, never outside them (cpp/walrus/FileReference.h).
* :func:`write_klr` / :func:`read_klr` write and read traced kernels as KLR files (the beta2
  carrier); :func:`klr_info` says what any KLR file holds, including the source-level files
  klr-lang writes.
* :func:`leaf_signature` / :func:`leaf_signatures`: each IT54 leaf's operands by role and typed
  attrs, the one declaration the resolver, the Penguin families and the codegen read.

The file format is specified in ``docs/klr-format.md``.

>>> from neuronxsim import walrus
>>> info = walrus.klr_info("add_kernel.nki.klr")          # doctest: +SKIP
>>> info["kind"], info["lowerable"]                       # doctest: +SKIP
('nki', False)
"""

from __future__ import annotations

import os
from typing import Iterable, Optional, Union

from neuronxsim.bir import InstructionType, Module
from neuronxsim.errors import KLRError
from neuronxsim.starfish.lib import _core
from neuronxsim.walrus.signatures import LeafSignature, leaf_signature, leaf_signatures

_w = _core.walrus

PathLike = Union[str, os.PathLike]

#: The metadata format string of the KLR files neuronxsim writes.
NEURONXSIM_KLR_FORMAT: str = _w.NEURONXSIM_KLR_FORMAT

_RESOLVABLE = (InstructionType.NKIKernel, InstructionType.NKIKLIRKernel)


def klr_info(path: PathLike) -> dict:
    """What a KLR file holds, without lowering it.

    Keys: ``version`` (the header's triple), ``format`` (metadata), ``kind`` (``python``, ``nki``,
    ``kernel``, ``lnc`` or ``hlo``), ``contents_ctor`` and ``numbering`` (klr-lang 0.0.12 and upstream
    KLR number the Contents constructors differently), ``lowerable`` and ``lowering_refusal``; then
    ``entry`` (source kernels), ``callsite`` (``hlo``), or ``kernel_name``, ``inputs``,
    ``outputs``, ``bodies`` and ``statements`` (traced kernels). Raises :class:`KLRError` naming the
    path and byte offset of anything malformed.
    """
    return _w.klr_info(os.fspath(path))


def read_klr(path: PathLike) -> dict:
    """:func:`klr_info` plus, for a traced kernel, ``module``: the kernel as a verified
    :class:`neuronxsim.bir.Module` (one function per logical NeuronCore)."""
    path = os.fspath(path)
    info = klr_info(path)
    if info["lowerable"]:
        info["module"] = _w.read_kernel_file(path)
    return info


def read_kernel(path: PathLike) -> Module:
    """The traced kernel a KLR file holds; :class:`KLRError` for any other file (a source-level
    kernel, a call-site record, a truncated or corrupt file)."""
    return _w.read_kernel_file(os.fspath(path))


#: Folders this process wrote KLR files into: a module built in this process may name them.
_WRITTEN_DIRS: set = set()


def write_klr(module: Module, path: PathLike, kernel_name: str = "kernel") -> None:
    """Writes an ISA-level module as a KLR file, atomically. Kernel nodes must be resolved first."""
    _w.write_kernel_file(module, os.fspath(path), kernel_name)
    _WRITTEN_DIRS.add(os.path.dirname(os.path.abspath(path)))


def encode_klr(module: Module, kernel_name: str = "kernel") -> tuple[bytes, dict]:
    """The bytes :func:`write_klr` would write, and how its instructions were encoded
    (``klr_operators``, ``extended_operators``, ``generic_instructions``)."""
    return _w.encode_kernel(module, kernel_name)


def decode_klr(data: bytes) -> Module:
    """The traced kernel held by KLR file bytes."""
    return _w.decode_kernel(bytes(data))


def add_compiled_nki_kernel(handle: str, data: bytes) -> None:
    """Registers a user kernel the NKI front end compiled (BIR JSON for a ``.json`` handle, KLR
    bytes for ``.klr``) under ``handle``, the ``func`` IT55 nodes name it by."""
    _w.add_compiled_nki_kernel(handle, bytes(data))


def compiled_nki_kernel(handle: str) -> Optional[bytes]:
    """The artifact registered under ``handle`` in this process, or None."""
    return _w.compiled_nki_kernel(handle)


def kernel_node_latency_stats() -> dict:
    """How many kernel-node latencies (bir::Hwm pricing an unexpanded node by its expansion) were
    ``computed`` and how many served from the per-process cache (``cached``)."""
    return dict(_w.kernel_node_latency_stats())


def _kind_flags(kinds: Iterable[Union[InstructionType, str, int]]) -> tuple[bool, bool]:
    wanted = set()
    for k in kinds:
        op = InstructionType[k] if isinstance(k, str) else InstructionType(int(k))
        if op not in _RESOLVABLE:
            raise ValueError(f"{op.name} nodes are not resolved here (only NKIKernel and NKIKLIRKernel)")
        wanted.add(op)
    return InstructionType.NKIKernel in wanted, InstructionType.NKIKLIRKernel in wanted


def resolve_kernel_nodes(
    module: Module,
    kinds: Iterable[Union[InstructionType, str, int]] = _RESOLVABLE,
    base_dir: Optional[PathLike] = None,
    verify: bool = True,
    allowed_dirs: Iterable[PathLike] = (),
) -> Module:
    """A copy of ``module`` with its IT55 and/or IT56 nodes replaced by their kernels' ISA code.

    ``module`` itself is left untouched (objects taken from it stay valid, and an error leaves
    nothing half done). File references resolve inside ``base_dir`` (default: the module's
    ``files_dir``, else the working directory) or one of ``allowed_dirs``; a reference outside
    them (``../``, an absolute path elsewhere, a link leading out) is refused. Without
    ``base_dir``, the folders this process wrote KLR files into (:func:`write_klr`, as the codegen
    does) are allowed too. Raises :class:`KernelError` when a kernel does not fit its node or its
    file is outside, :class:`KLRError` for a bad KLR file, :class:`BIRError` for bad BIR JSON.
    """
    copy = module.clone()
    resolve_kernel_nodes_in_place(copy, kinds, base_dir, verify, allowed_dirs)
    return copy


def resolve_kernel_nodes_in_place(
    module: Module,
    kinds: Iterable[Union[InstructionType, str, int]] = _RESOLVABLE,
    base_dir: Optional[PathLike] = None,
    verify: bool = True,
    allowed_dirs: Iterable[PathLike] = (),
) -> int:
    """:func:`resolve_kernel_nodes` on ``module`` itself, for a caller that owns it (a pipeline
    stage's copy); returns the number of nodes resolved. On error the module may be partly
    resolved, and instruction objects taken from it before are invalid afterwards."""
    nki, klir = _kind_flags(kinds)
    allowed = [os.fspath(d) for d in allowed_dirs]
    if base_dir is None:
        allowed += sorted(_WRITTEN_DIRS)
    return _w.resolve_kernel_nodes(module, nki, klir, os.fspath(base_dir) if base_dir is not None else "", allowed,
                                   verify)


def lower_kernel_inst(module: Module, base_dir: Optional[PathLike] = None,
                      allowed_dirs: Iterable[PathLike] = ()) -> Module:
    """``TranslateNKIASTToBIR::lowerKernelInst`` over a module: resolves its IT56 nodes (files
    confined as :func:`resolve_kernel_nodes` says)."""
    return resolve_kernel_nodes(module, (InstructionType.NKIKLIRKernel,), base_dir, allowed_dirs=allowed_dirs)


def resolve_nki_kernels(module: Module, base_dir: Optional[PathLike] = None) -> Module:
    """Resolves a module's IT55 (``InstNKIKernel``) nodes."""
    return resolve_kernel_nodes(module, (InstructionType.NKIKernel,), base_dir)


__all__ = [
    "NEURONXSIM_KLR_FORMAT", "klr_info", "read_klr", "read_kernel", "write_klr", "encode_klr",
    "decode_klr", "resolve_kernel_nodes", "resolve_kernel_nodes_in_place", "lower_kernel_inst", "resolve_nki_kernels",
    "add_compiled_nki_kernel", "compiled_nki_kernel", "kernel_node_latency_stats", "KLRError",
    "LeafSignature", "leaf_signature", "leaf_signatures",
]

"""``neuronxsim info FILE``: what a BIR JSON module, a Penguin program (``program.json``) or a
KLR file holds. The kind is recognised from the file's first bytes: JSON naming the Penguin
format is a program, other JSON a BIR module (a JSON array, string, number, true, false or null
is refused as one, since a module is an object), anything else must be a KLR file."""

from __future__ import annotations

import codecs
import collections
import json
import re

from neuronxsim.cli import printing
from neuronxsim.cli.inputs import InputError, read_bytes

#: How a Penguin program file begins (``Program.save`` writes ``format`` first).
_PENGUIN = re.compile(rb'"format"\s*:\s*"neuronxsim-penguin"')
_PENGUIN_WINDOW = 1 << 16

_KLR_KEYS = ("kernel_name", "entry", "callsite", "inputs", "outputs", "bodies", "statements", "numbering")


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="summarise a BIR JSON module, a Penguin program or a KLR file")
    p.add_argument("file")
    printing.add_options(p)
    p.set_defaults(func=run)


def _module_info(path: str, data: bytes) -> tuple[dict, callable]:
    from neuronxsim import bir
    from neuronxsim.bir.printer import format_module
    from neuronxsim.cli.kernel_report import kernel_nodes

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        module = bir.Module.from_json(text)
    except bir.BIRError as e:
        raise bir.BIRError(f"{path}: not a BIR module: {e}") from None
    opcodes = collections.Counter(i.opcode_name for f in module.functions for b in f.blocks for i in b.instructions)
    doc = {"kind": "bir", "arch": module.arch, "functions": len(module.functions),
           "instructions": sum(opcodes.values()), "opcodes": dict(sorted(opcodes.items())),
           "kernel_nodes": [vars(n) for n in kernel_nodes(module)]}
    return doc, lambda: print(format_module(module))


def _program_info(path: str, data: bytes) -> tuple[dict, callable]:
    from neuronxsim.errors import CodegenError
    from neuronxsim.starfish.penguin.ir import Program

    try:
        program = Program.loads(data)
    except CodegenError as e:
        raise CodegenError(f"{path}: {e}") from None
    tensors = [t.to_json() for t in program.tensors.values()]
    insts = [{"op": type(i).__name__, "name": i.label} for i in program.insts]
    doc = {"kind": "penguin-program", "name": program.name, "tensors": tensors, "insts": insts}

    def text():
        print(f"{path}: Penguin program '{program.name}': {len(tensors)} tensors, {len(insts)} macro instructions")
        for t in tensors:
            print(f"  tensor {t['name']:<16} {t['kind']:<8} {t['dtype']:<9} {t['shape']}")
        for i in insts:
            print(f"  {i['name']:<16} {i['op']}")
    return doc, text


def _klr_info(path: str) -> tuple[dict, callable]:
    from neuronxsim import walrus

    info = walrus.klr_info(path)
    doc = {"kind": "klr", "klr": {**info, "version": list(info["version"])}}

    def text():
        print(f"{path}: KLR {'.'.join(map(str, info['version']))}, format {info['format']!r}, kind {info['kind']}")
        for key in _KLR_KEYS:
            if key in info:
                print(f"  {key}: {info[key]}")
        print("  lowerable" if info["lowerable"] else f"  not lowerable: {info['lowering_refusal']}")
    return doc, text


def _json_scalar(data: bytes) -> bool:
    """Whether the file is one JSON string, number, true, false or null (a KLR file is binary
    CBOR, never valid JSON)."""
    if data.lstrip()[:1] not in b'"-0123456789tfn':  # (a JSON scalar's possible first bytes)
        return False
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def run(args) -> int:
    data = read_bytes(args.file, "file to summarise")
    # (A UTF-8 byte order mark before JSON is skipped here, as the module reader skips it.)
    start = (data[len(codecs.BOM_UTF8):] if data.startswith(codecs.BOM_UTF8) else data).lstrip()[:1]
    if not data:
        raise InputError(f"{args.file}: the file is empty")
    if start == b"{" and _PENGUIN.search(data[:_PENGUIN_WINDOW]):
        doc, text = _program_info(args.file, data)
    elif start in (b"{", b"[") or _json_scalar(data):
        doc, text = _module_info(args.file, data)
    else:
        doc, text = _klr_info(args.file)
    printing.emit(args, {"command": "info", "file": args.file, **doc}, text)
    return 0

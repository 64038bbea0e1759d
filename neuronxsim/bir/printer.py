"""A readable listing of a BIR module (what ``neuronxsim info`` and the demo print)."""

from __future__ import annotations

from neuronxsim import bir


def _ap(a) -> str:
    if a.is_immediate:
        return f"imm({a.imm:g}:{a.dtype.name})"
    pairs = ", ".join(f"[{p.step},{p.num}]" for p in a.pattern)
    flavour = "" if a.flavour == bir.AccessFlavour.Plain else f" {a.flavour.name.lower()}"
    return f"{a.memref}@{a.offset} [{pairs}] {a.dtype.name}{flavour}"


def _value(v) -> str:
    if isinstance(v, str):
        return repr(v) if len(v) <= 60 else repr(v[:57] + "...")
    if hasattr(v, "name") and not isinstance(v, (list, tuple)):
        return v.name
    return repr(v)


def format_instruction(inst, indent: str = "    ") -> str:
    fields = [(n, getattr(inst, n)) for n in type(inst).field_names]
    shown = ", ".join(f"{n}={_value(v)}" for n, v in fields if v not in (None, [], "", ()))
    lines = [f"{indent}{inst.name} = {inst.opcode_name}[{inst.opcode}] {inst.engine.name}"
             + (f" {{{shown}}}" if shown else "")]
    for side in ("ins", "outs"):
        for i, a in enumerate(getattr(inst, side)):
            lines.append(f"{indent}    {side}[{i}]: {_ap(a)}")
    if inst.source:
        lines.append(f"{indent}    source: {inst.source}")
    return "\n".join(lines)


def format_module(module) -> str:
    out = [f"module arch={module.arch} neuron_core_id={module.neuron_core_id} "
           f"(BIR JSON v{bir.BIR_VERSION}, neuronxsim format {bir.FORMAT_VERSION})"]
    for fi, f in enumerate(module.functions):
        out.append(f"function[{fi}] {f.name}")
        for a in f.allocations:
            loc = a.location
            where = (f"{loc.type.name}" if loc.type.name not in ("SB", "PSUM")
                     else f"{loc.type.name} partitions {loc.base_partition}+{loc.partitions} "
                          f"bytes {loc.addr}+{loc.bytes_per_partition}")
            out.append(f"  tensor {loc.name}: {a.kind.name} {a.dtype.name}{list(a.tensor_shape)} in {where}")
        for b in f.blocks:
            out.append(f"  block {b.name} ({len(b)} instructions)")
            out.extend(format_instruction(inst) for inst in b.instructions)
    return "\n".join(out)

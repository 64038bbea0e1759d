"""Writes a finished trace as BIR: one function per NeuronCore.

Kernel inputs become ``Input`` DRAM tensors named after their parameters, returned tensors
``Output`` tensors, other HBM tensors internal ``DRAM`` tensors, and each allocated SBUF/PSUM storage
an on-chip tensor at the address the allocator chose. Every enabled op becomes one ISA node with
its engine, its fields and ``source = "file.py:LINE"``.
"""

from __future__ import annotations

from neuronxsim import bir

from . import dtypes as dt
from .tensor import INPUT, SBUF
from .tracer import Access, CoreTrace

_PLAIN = bir.AccessFlavour.Plain
_create_ap = bir.Instruction.createAP


def emit_core(module: "bir.Module", core: CoreTrace, outputs: set) -> "bir.Function":
    """Appends ``core`` to ``module`` as a function (storages must be allocated)."""
    fn = module.addFunction()
    for st in core.storages:
        if st.on_chip:
            if st.first_use < 0:
                continue
            st.location = fn.createOnChipTensor(
                st.name, bir.MemoryType.SB if st.kind == SBUF else bir.MemoryType.PSUM,
                dt.to_bir(st.dtype), st.partitions, st.bytes_per_partition, 0, st.addr,
                [st.partitions, st.row])
        elif st.kind == INPUT:
            st.location = fn.createDramTensor(st.name, bir.MemoryType.Input, dt.to_bir(st.dtype),
                                              list(st.shape), bir.TensorKind.ExternalInput)
        elif st in outputs:
            st.location = fn.createDramTensor(st.name, bir.MemoryType.Output, dt.to_bir(st.dtype),
                                              list(st.shape), bir.TensorKind.ExternalOutput)
        elif st.first_use >= 0:
            st.location = fn.createDramTensor(st.name, bir.MemoryType.DRAM, dt.to_bir(st.dtype),
                                              list(st.shape), bir.TensorKind.Internal)
    block = fn.addBlock()
    add = block.addInstruction
    patterns = {}  # a tile's pattern is typically written once and read again: build it once
    for op in core.ops:
        if not op.enabled:
            continue
        inst = add(op.opcode)
        inst.engine = op.engine
        if op.loc is not None:
            inst.source = op.loc.short
        if op.fields:
            for name, value in op.fields.items():
                setattr(inst, name, value)
        inst.ins = [_operand(a, patterns) for a in op.ins]
        inst.outs = [_operand(a, patterns) for a in op.outs]
    return fn


def _operand(a, patterns: dict) -> "bir.AccessPattern":
    if isinstance(a, Access):
        key = (id(a.storage), a.offset, tuple(a.pairs))
        ap = patterns.get(key)
        if ap is None:
            ap = patterns[key] = _create_ap(a.storage.location, a.offset, a.pairs, [], -1)
            ap.flavour = _PLAIN
        return ap
    return bir.AccessPattern.immediate(float(a))


__all__ = ["emit_core"]

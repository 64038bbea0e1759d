"""Writes a finished trace as BIR: one function per NeuronCore.

Kernel inputs become ``Input`` DRAM tensors named after their parameters, returned tensors
``Output`` tensors, other HBM tensors internal ``DRAM`` tensors, and each allocated SBUF/PSUM storage
an on-chip tensor at the address the allocator chose. Every enabled op becomes one ISA node with
its engine, its fields and ``source = "file.py:LINE"``.
"""

from __future__ import annotations

from neuronxsim import bir
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from .tensor import INPUT, SBUF
from .tracer import Access, CoreTrace

# One binding call appends all the nodes (cpp/python/bind_isa_emit.cpp).
_append_isa = _core.bir.append_isa
_ENGINE_NUMBERS = {e: int(e) for e in bir.Engine.__members__.values()}


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
    records = []
    for op in core.ops:
        if op.enabled:
            records.append((op.opcode, _ENGINE_NUMBERS[op.engine],
                            op.loc.short if op.loc is not None else "", op.fields,
                            [_operand(a) for a in op.ins], [_operand(a) for a in op.outs]))
    _append_isa(block, records)
    return fn


def _operand(a):
    if isinstance(a, Access):
        return (a.storage.location, a.offset, a.pairs)
    return float(a)


__all__ = ["emit_core"]

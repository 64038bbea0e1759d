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
from .tensor import INPUT, SBUF, SHARED_HBM
from .tracer import CoreTrace

# One binding call appends all the nodes (cpp/python/bind_isa_emit.cpp).
_append_isa = _core.bir.append_isa
_ENGINE_NUMBERS = {e: int(e) for e in bir.Engine.__members__.values()}


def emit_core(module: "bir.Module", core: CoreTrace, outputs: set) -> "bir.Function":
    """Appends ``core`` to ``module`` as a function (its storages must be allocated)."""
    fn = module.addFunction()
    to_bir = dt.BIR_DTYPES
    on_chip = fn.createOnChipTensor
    sb, psum = bir.MemoryType.SB, bir.MemoryType.PSUM
    locations = []
    unique_name = core.unique_name
    for st in core.storages:
        if st.first_use < 0 and (st.on_chip or st.kind not in (INPUT, SHARED_HBM)):
            continue  # never touched by an enabled instruction (and not a kernel input/output)
        if st.name is None:  # temporaries are named when they turn out to be needed
            st.name = unique_name(st.hint)
        if st.on_chip:
            loc = on_chip(st.name, sb if st.kind == SBUF else psum, to_bir[st.dtype],
                          st.partitions, st.row * st.dtype.itemsize, 0, st.addr,
                          [st.partitions, st.row])
        elif st.kind == INPUT:
            loc = fn.createDramTensor(st.name, bir.MemoryType.Input, to_bir[st.dtype],
                                      list(st.shape), bir.TensorKind.ExternalInput)
        elif st in outputs:
            loc = fn.createDramTensor(st.name, bir.MemoryType.Output, to_bir[st.dtype],
                                      list(st.shape), bir.TensorKind.ExternalOutput)
        elif st.first_use >= 0:
            loc = fn.createDramTensor(st.name, bir.MemoryType.DRAM, to_bir[st.dtype],
                                      list(st.shape), bir.TensorKind.Internal)
        else:
            continue  # a shared_hbm tensor nothing touches and the kernel does not return
        st.location = loc
        st.location_index = len(locations)
        locations.append(loc)
    records = []
    engines = _ENGINE_NUMBERS
    for op in core.ops:
        if op.enabled:
            records.append((
                op.opcode, engines[op.engine], op.loc.short if op.loc is not None else "",
                op.fields,
                [(a.storage.location_index, a.offset, a.pairs) for a in op.ins],
                [(a.storage.location_index, a.offset, a.pairs) for a in op.outs]))
    _append_isa(fn.addBlock(), locations, records)
    return fn


__all__ = ["emit_core"]

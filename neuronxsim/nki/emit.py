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

# One binding call creates the tensors and appends all the nodes (cpp/python/bind_isa_emit.cpp).
_emit_traced = _core.bir.emit_traced
_DTYPE_NUMBERS = {d: int(b) for d, b in dt.BIR_DTYPES.items()}
_SB, _PSUM = int(bir.MemoryType.SB), int(bir.MemoryType.PSUM)
_INPUT, _OUTPUT, _DRAM = int(bir.MemoryType.Input), int(bir.MemoryType.Output), \
    int(bir.MemoryType.DRAM)
_EXTERNAL_INPUT, _EXTERNAL_OUTPUT, _INTERNAL = int(bir.TensorKind.ExternalInput), \
    int(bir.TensorKind.ExternalOutput), int(bir.TensorKind.Internal)


def emit_core(module: "bir.Module", core: CoreTrace, outputs: set) -> "bir.Function":
    """Appends ``core`` to ``module`` as a function (its storages must be allocated)."""
    fn = module.addFunction()
    dtypes = _DTYPE_NUMBERS
    tensors = []  # (name, memory type, dtype, shape, kind, partitions, bytes, addr)
    unique_name = core.unique_name
    for st in core.storages:
        if st.first_use < 0 and (st.on_chip or st.kind not in (INPUT, SHARED_HBM)):
            continue  # never touched by an enabled instruction (and not a kernel input/output)
        if st.name is None:  # temporaries are named when they turn out to be needed
            st.name = unique_name(st.hint)
        if st.on_chip:
            tensors.append((st.name, _SB if st.kind == SBUF else _PSUM, dtypes[st.dtype],
                            (st.partitions, st.row), _INTERNAL, st.partitions,
                            st.row * st.dtype.itemsize, st.addr))
        elif st.kind == INPUT:
            tensors.append((st.name, _INPUT, dtypes[st.dtype], st.shape, _EXTERNAL_INPUT, 0, 0, 0))
        elif st in outputs:
            tensors.append((st.name, _OUTPUT, dtypes[st.dtype], st.shape, _EXTERNAL_OUTPUT, 0, 0,
                            0))
        elif st.first_use >= 0:
            tensors.append((st.name, _DRAM, dtypes[st.dtype], st.shape, _INTERNAL, 0, 0, 0))
        else:
            continue  # a shared_hbm tensor nothing touches and the kernel does not return
        st.location_index = len(tensors) - 1
    _emit_traced(fn, tensors, core.ops)
    return fn


__all__ = ["emit_core"]

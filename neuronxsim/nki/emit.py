"""The emission pass: a traced NeuronCore as a BIR function.

Kernel inputs become ``Input`` DRAM tensors named after their parameters, returned tensors
``Output`` tensors, other HBM tensors internal ``DRAM`` tensors, and each allocated SBUF/PSUM
storage an on-chip tensor at the address the allocation pass chose. Every op of the program
becomes one ISA node with its engine, its fields and ``source = "file.py:LINE"``.

The boundary to libBIR is one call of plain records (``_core.bir.emit_trace``, see
``cpp/python/bind_isa_emit.cpp``), checked field by field on the C++ side:

* a tensor is ``(name, memory type, dtype, shape, tensor kind, partitions, bytes per partition,
  start partition, address)``, enums as ints (on-chip tensors use partitions, bytes, start
  partition and address; DRAM tensors the kind);
* an instruction is a tuple whose first six elements are ``(opcode, engine, source, fields,
  ins, outs)``: ints, a str, None or a dict of the node's fields by their BIR names, and lists
  of operands, each a tuple whose first three elements are ``(storage number, offset, pairs)``
  (a plain access pattern in the dtype of the tensor ``tensor_of[storage number]``, ``pairs``
  ``((step, num), ...)``) or a number (an fp32 immediate). The record's ops and accesses
  (:mod:`.record`) are such tuples already: they go as they are.
"""

from __future__ import annotations

from neuronxsim import bir
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from .tensor import INPUT, SBUF, SHARED_HBM

_emit_trace = _core.bir.emit_trace
_DTYPE_NUMBERS = {d: int(b) for d, b in dt.BIR_DTYPES.items()}
_SB, _PSUM = int(bir.MemoryType.SB), int(bir.MemoryType.PSUM)
_INPUT, _OUTPUT, _DRAM = int(bir.MemoryType.Input), int(bir.MemoryType.Output), \
    int(bir.MemoryType.DRAM)
_EXTERNAL_INPUT, _EXTERNAL_OUTPUT, _INTERNAL = int(bir.TensorKind.ExternalInput), \
    int(bir.TensorKind.ExternalOutput), int(bir.TensorKind.Internal)


class Emission:
    """Appends the program's function to ``program.module`` (``program.function``)."""

    name = "emission"

    def run(self, program) -> None:
        record = program.record
        first_use, addr = program.first_use, program.addr
        outputs = set(program.outputs)
        dtypes = _DTYPE_NUMBERS
        tensors = []
        tensor_of = [-1] * len(program.storages)  # sid -> index in tensors
        unique_name = record.unique_name
        for st in program.storages:
            used = first_use[st.sid] >= 0
            if not used and (st.on_chip or st.kind not in (INPUT, SHARED_HBM)):
                continue  # never touched by an instruction (and not a kernel input/output)
            if st.name is None:  # temporaries are named when they turn out to be needed
                st.name = unique_name(st.hint)
            if st.on_chip:
                tensors.append((st.name, _SB if st.kind == SBUF else _PSUM, dtypes[st.dtype],
                                (st.layout.partitions, st.layout.row), _INTERNAL,
                                st.layout.partitions, st.bytes_per_partition,
                                0 if st.placement is None else st.placement[0], addr[st.sid]))
            elif st.kind == INPUT:
                tensors.append((st.name, _INPUT, dtypes[st.dtype], st.shape, _EXTERNAL_INPUT, 0,
                                0, 0, 0))
            elif st in outputs:
                tensors.append((st.name, _OUTPUT, dtypes[st.dtype], st.shape, _EXTERNAL_OUTPUT,
                                0, 0, 0, 0))
            elif used:
                tensors.append((st.name, _DRAM, dtypes[st.dtype], st.shape, _INTERNAL, 0, 0, 0,
                                0))
            else:
                continue  # a shared_hbm tensor nothing touches and the kernel does not return
            tensor_of[st.sid] = len(tensors) - 1
        program.function = program.module.addFunction()
        _emit_trace(program.function, tensors, tensor_of, program.ops)


__all__ = ["Emission"]

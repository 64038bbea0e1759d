"""The emission pass: a traced NeuronCore as a BIR function.

Kernel inputs become ``Input`` DRAM tensors named after their parameters, returned tensors
``Output`` tensors, other HBM tensors internal ``DRAM`` tensors, and each allocated SBUF/PSUM
storage an on-chip tensor at the address the allocation pass chose. Every op of the program
becomes one ISA node with its engine, its fields and ``source = "file.py:LINE"``.

The tensor records are made in C (``_core.nki.tensor_table``, ``cpp/python/trace_emit_tensors.cpp``,
which reads each storage's slots by their names). The boundary to libBIR is one call of plain
records (``_core.bir.emit_trace``, see ``cpp/python/bind_isa_emit.cpp``), checked field by field on
the C++ side. The pass makes both calls as one (``_core.nki.emit_program``: the tensor records
go over as C rows, not tuples; :func:`emit_in_two_calls` is what it does):

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
# The storage kinds and BIR numbers the tensor table (cpp/python/trace_emit_tensors.cpp) uses.
_KINDS = (SBUF, INPUT, SHARED_HBM, _DTYPE_NUMBERS, _SB, _PSUM, _INPUT, _OUTPUT, _DRAM,
          _EXTERNAL_INPUT, _EXTERNAL_OUTPUT, _INTERNAL)
_tensor_table = _core.nki.tensor_table
_emit_program = _core.nki.emit_program


class Emission:
    """Appends the program's function to ``program.module`` (``program.function``)."""

    name = "emission"

    def run(self, program) -> None:
        record = program.record
        # (one C call: the tensor table and emit_trace joined, see emit_in_two_calls)
        program.function = _emit_program(program.module, program.storages, program.first_use,
                                         program.addr, set(program.outputs), record.names,
                                         record.name_counts, _KINDS, program.ops)


def emit_in_two_calls(program) -> None:
    """What ``Emission.run``'s one call (``_core.nki.emit_program``) does, as the two calls it
    joins: the tensor table as tuples, a new function, and ``emit_trace`` of those tuples and the
    records. (The tests compare the two.)"""
    record = program.record
    # (in C: a storage no instruction touches is left out unless it is a kernel input or a
    # returned output; temporaries are named here, when they turn out to be needed)
    tensors, tensor_of = _tensor_table(program.storages, program.first_use, program.addr,
                                       set(program.outputs), record.names, record.name_counts,
                                       _KINDS)
    program.function = program.module.addFunction()
    _emit_trace(program.function, tensors, tensor_of, program.ops)


__all__ = ["Emission", "emit_in_two_calls"]

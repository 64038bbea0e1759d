// The emission pass's two halves, for the one call that joins them (emit_program,
// trace_emit_tensors.cpp): the tensor table (trace_emit_tensors.cpp) describes each emitted
// tensor as a TensorRow, and emit_trace's builder (bind_isa_emit.cpp) makes the function's
// tensors and nodes from those rows. `tensor_table` turns the rows into the tuples `emit_trace`
// takes; emit_program hands them over as they are (building and reading back a tuple, a few ints
// and a shape tuple per tensor was a tenth of the emission).
#pragma once

#include <Python.h>

#include <cstdint>
#include <vector>

namespace bir {
class Function;
}

namespace nxs::py_bind {

// One emitted tensor: the items of its emit_trace tuple (name, memory type, dtype, shape, kind,
// partitions, bytes per partition, start partition, address), new references (released by the
// destructor). An on-chip tensor's shape is the pair (partitions, row): `shape` is null and
// `row` set; `start` null is a start partition of 0; `bytes` is a number, not an object. The
// DRAM tensors' partitions, bytes, start partition and address (0 in their tuples) are unused.
struct TensorRow {
  PyObject* name = nullptr;
  PyObject* type = nullptr;
  PyObject* dtype = nullptr;
  PyObject* shape = nullptr;
  PyObject* row = nullptr;
  PyObject* kind = nullptr;
  PyObject* partitions = nullptr;
  int64_t bytes = 0;
  PyObject* start = nullptr;
  PyObject* addr = nullptr;

  TensorRow() = default;
  TensorRow(TensorRow&& o) noexcept { *this = std::move(o); }
  TensorRow& operator=(TensorRow&& o) noexcept;
  TensorRow(const TensorRow&) = delete;
  TensorRow& operator=(const TensorRow&) = delete;
  ~TensorRow();
};

// The tensor table of tensor_table's seven arguments (see trace_emit_tensors.cpp): the rows in
// storage order and the tensor of each storage number (-1: none). False with a Python error set.
bool collectTensors(PyObject* const* args, std::vector<TensorRow>& rows, std::vector<int64_t>& tensorOf);

// emit_trace (bind_isa_emit.cpp) with its tensors given as rows: the same checks, in the same
// order, with the same BIRErrors. `records` is a list.
void emitRows(bir::Function& fn, const std::vector<TensorRow>& rows, const std::vector<int64_t>& tensorOf,
              PyObject* records);

}  // namespace nxs::py_bind

// The record's tuples, for the other trace_*.cpp files (see trace_record.cpp).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// The positions of the record's tuples: the one home of every C file that makes or reads them
// (trace_record.cpp, trace_assign.cpp, trace_tracer_methods.cpp, trace_plain_access.cpp,
// bind_isa_emit.cpp). The properties of neuronxsim.nki.record.Op and Access name the same
// positions; tests/nki/test_record.py compares them through nki.RECORD_POSITIONS.
namespace op_pos {
enum : Py_ssize_t { opcode_number, engine_number, source, fields, ins, outs, opcode, engine, loc, loop, index,
                    out_box, zero_fill, size };
}
namespace access_pos {
enum : Py_ssize_t { sid, offset, pairs, storage, size };
}

// cls((storage.sid, offset, pairs, storage)): an Access of the tracer's record (a new
// reference; null with an error set).
PyObject* newAccessRecord(PyObject* cls, PyObject* storage, PyObject* offset, PyObject* pairs);

// newAccessRecord(cls, storage, offset, [(step, num), ...]) for pairs known by value: `n` pairs
// at `values` (step, num, step, num, ...). The shared list of those values when there is one (no
// list made only to be compared and dropped), else a new list of new (int, int) tuples, shared as
// newAccessRecord shares it. (A new reference; null with an error set.)
PyObject* newAccessRecordOfValues(PyObject* cls, PyObject* storage, PyObject* offset, const long long* values,
                                  int n);

// tuple(pairs) of an access's pairs (a new reference; null with an error set): for a list the
// record shares (see trace_record.cpp), one tuple made once and kept with it (the list is never
// edited, so the tuple stays equal to it); else PySequence_Tuple(pairs). Accumulation groups key
// their regions by (offset, tuple(pairs)), looked up a few times per matmul: one tuple object
// per pattern spares the tuple's making and, between equal regions, the comparing of its pairs.
PyObject* pairsTuple(PyObject* pairs);

// CoreTrace.redirected (neuronxsim.nki.tracer), a list: op index -> the op's first output as
// redirects left it, None (or past the end) where no redirect moved it. A list, not a dict: an
// op index is its position in the core's record, and a dict entry cost a hash and, as it grew, a
// resize per redirect. redirectedOutput: the entry of `index` (borrowed), or null with no error
// where there is none (a copy's index -1 has none) and null with an error set on error.
// setRedirected: the entry of `index` (>= 0) is `acc`; 0, or -1 with an error set.
PyObject* redirectedOutput(PyObject* redirected, PyObject* index);
int setRedirected(PyObject* redirected, PyObject* index, PyObject* acc);

// new_op's arguments (cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None,
// zero_fill=False) -> an Op of the tracer's record (a new reference; null with an error set).
PyObject* newOpRecord(PyObject* const* args, Py_ssize_t nargs);

}  // namespace nxs::py_bind

// A matmul recorded straight into its PSUM destination (trace_assign.cpp holds the steps,
// trace_matmul.cpp's matmul_into uses them): the destination checks and the accumulation-group
// bookkeeping of place_matmul's C path, without the temporary result tile and its redirect.
#pragma once

#include <Python.h>

#include "trace_ref.h"

namespace nxs::py_bind {

// A PSUM destination as matmulDestination found it: its storage, the storage's state, its
// MatmulGroups (None before the tile's first matmul) and its write count.
struct MatmulDestination {
  OwnedRef st{nullptr}, s{nullptr}, groups{nullptr};
  long long writes = 0;
};

// Whether a plain matmul (no mask box) may write the view `dst` directly as place_matmul's C path
// would place it (1; 0 if not, -1 on error): an exact Tensor in PSUM, no double-row pair in the
// core, and pending nl.zeros zeros only when `accumulate`. Changes nothing.
int matmulDestination(PyObject* tr, PyObject* dst, bool accumulate, MatmulDestination& d);

// place_matmul's end for the matmul `op` just recorded writing `acc` (write_plain's access of the
// destination `d`): the tile's MatmulGroups made if it is the first matmul, then the group of
// acc's region joined (`accumulate`) or started. 0, or -1 with the error set (a refusal is the
// tracer's NKIError, without a kernel line, as place_matmul raises it).
int placeWrittenMatmul(PyObject* tr, MatmulDestination& d, PyObject* op, PyObject* acc, bool accumulate);

// NKI 0.6's accumulate=None (nki06/isa.py's _accumulates) for the view `dst` of a PSUM storage,
// where its answer is plain: 1 (add: dst holds nl.zeros zeros, or an accumulation group is open on
// exactly the region of dst's access), 0 (start a group: nothing wrote dst), 2 where only the
// definition can say (nothing open there, groups open on other regions: its refusals), -1 on error.
// `access` (plain_tile_access) and `pe` give dst's access, made only for the group lookup.
// Changes nothing.
int accumulatesOnto(PyObject* dst, PyObject* access, PyObject* pe);

}  // namespace nxs::py_bind

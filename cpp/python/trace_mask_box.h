// The box a mask remembers, for the C paths that take masked instructions
// (trace_mask_box.cpp says what it answers).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// What indexing.mask_box(mask, shape) answers from what the mask (or _PREDICATE_BOXES) remembers:
// 1 with `*box` set (a new reference; the mask then remembers it, as mask_box does), 0 when the
// definition must compute it (nothing changed), -1 with an error set.
int rememberedMaskBox(PyObject* mask, PyObject* shape, PyObject** box);

}  // namespace nxs::py_bind

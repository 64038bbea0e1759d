// The box a mask remembers, for the C paths that take masked instructions
// (trace_mask_box.cpp says what it answers).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// What indexing.mask_box(mask, shape) answers from what the mask (or _PREDICATE_BOXES) remembers:
// 1 with `*box` set (a new reference; the mask then remembers it, as mask_box does), 0 when the
// definition must compute it (nothing changed), -1 with an error set.
int rememberedMaskBox(PyObject* mask, PyObject* shape, PyObject** box);

// What instructions.keeps_all(mask, shape) answers from that box, for a mask (not None): 1 when it
// is the full box of `shape`, 0 when the box is not remembered or is not the full one, -1 with an
// error set.
int rememberedKeepsAll(PyObject* mask, PyObject* shape);

}  // namespace nxs::py_bind

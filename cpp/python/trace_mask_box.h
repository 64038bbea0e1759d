// Whether a mask keeps a whole tile, from the box it remembers, for the C paths that take masked
// instructions (trace_mask_box.cpp says what it answers).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// What instructions.keeps_all(mask, shape) answers from the box indexing.mask_box(mask, shape)
// answers from what the mask (or _PREDICATE_BOXES) remembers, for a mask (not None): 1 when it is
// the full box of `shape`, 0 when the box is not remembered or is not the full one, -1 with an
// error set.
int rememberedKeepsAll(PyObject* mask, PyObject* shape);

}  // namespace nxs::py_bind

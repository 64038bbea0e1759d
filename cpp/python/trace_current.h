// The tracer recording a kernel, for the C fast paths (trace_current.cpp is its one home).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// The current tracer (borrowed), or null when no kernel is being traced (no error set).
PyObject* currentTracer();

}  // namespace nxs::py_bind

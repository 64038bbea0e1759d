// The kernel line a call comes from, for the C fast paths that stand in for an `nl` / `nisa`
// function (trace_call_site.cpp).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// What `caller_location(skip)` answers when called from the Python frame `up - 1 - skip`... put
// simply: the location of the Python frame `up` frames above the innermost running one (0: the
// innermost, i.e. the Python function that called the running C function), answered from the table
// of remembered call sites, else by the Python frame walk. A new reference (a SourceLocation or
// None), or null with an error set.
PyObject* callSiteLocation(long up);

}  // namespace nxs::py_bind

// The tracer recording a kernel, `_core.nki.current()` (neuronxsim.nki.tracer.current): the
// object last given to `set_current(tracer)`, or, when that is None, what the Python function
// given to `set_no_tracer(fn)` answers (it raises the error that says nl / nisa functions run
// only inside a traced kernel); `peek()`, the same tracer or None (never an error: for whoever
// only asks whether a trace is running, e.g. the progress bar). This is the one home of the
// current tracer.
//
// Why C: nearly every nl / nisa call asks for the tracer first, and a Python function that
// returns a module global costs a Python frame.
#include "trace_current.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {

PyObject* tracer = nullptr;    // the current tracer (a reference), or null
PyObject* noTracer = nullptr;  // the Python function for "no tracer"

}  // namespace

PyObject* currentTracer() { return tracer; }

namespace {

PyObject* current(PyObject*, PyObject*) {
  if (tracer != nullptr) return Py_NewRef(tracer);
  if (noTracer == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "current: no tracer and no set_no_tracer function");
    return nullptr;
  }
  return PyObject_CallNoArgs(noTracer);
}

PyObject* peek(PyObject*, PyObject*) { return Py_NewRef(tracer != nullptr ? tracer : Py_None); }

PyMethodDef peekDef = {"peek", peek, METH_NOARGS,
                       "peek(): the tracer recording a kernel (see set_current), else None."};

PyMethodDef currentDef = {"current", current, METH_NOARGS,
                          "current(): the tracer recording a kernel (see set_current), else what "
                          "the set_no_tracer function answers."};

void bindCurrent(py::module_& m) {
  m.attr("current") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&currentDef, nullptr, nullptr));
  m.attr("peek") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&peekDef, nullptr, nullptr));
  m.def(
      "set_current",
      [](py::object t) {
        PyObject* previous = tracer;
        tracer = t.is_none() ? nullptr : t.inc_ref().ptr();
        Py_XDECREF(previous);
      },
      py::arg("tracer"), "The tracer current() returns from now on (None: no tracer).");
  m.def(
      "set_no_tracer",
      [](py::object fn) {
        Py_XDECREF(noTracer);
        noTracer = fn.inc_ref().ptr();
      },
      py::arg("fn"), "The Python function current() calls when there is no tracer.");
}

NXS_REGISTER_SUBMODULE(nki, 42, "the NKI tracer's hot paths", bindCurrent);

}  // namespace
}  // namespace nxs::py_bind

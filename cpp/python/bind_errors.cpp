// C++ exceptions -> the Python classes of neuronxsim.errors (one hierarchy, same names).
#include <Python.h>

#include "bindings.h"
#include "bir/Error.h"

namespace nxs::py_bind {
namespace {

void raise(const char* cls, const char* msg) {
  try {
    py::object errors = py::module_::import("neuronxsim.errors");
    PyErr_SetString(errors.attr(cls).ptr(), msg);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable(__func__);
    PyErr_SetString(PyExc_ValueError, msg);
  }
}

}  // namespace

void bindErrors(py::module_& m) {
  prepareForOutOfMemory();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const bir::BIRError& e) {
      raise("BIRError", e.what());
    } catch (const sim::SimulationError& e) {
      raise("SimulationError", e.what());
    } catch (const walrus::KernelError& e) {
      raise("KernelError", e.what());
    } catch (const klr::KLRError& e) {
      raise("KLRError", e.what());
    } catch (const nxs::Error& e) {
      raise("NeuronxsimError", e.what());
    } catch (const std::bad_alloc& e) {
      keepMemoryReserve();  // the unwinding that may have used it is over
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });
}

}  // namespace nxs::py_bind

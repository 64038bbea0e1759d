// The kernel line an `nl` / `nisa` call comes from, `_core.nki.caller_location(skip=0)`
// (neuronxsim.nki.errors.caller_location): the frame `1 + skip` above the calling function, when
// that frame's call site was seen before (`remember_call_site(code, lasti, location)`), is
// answered from a table; anything else goes to the Python walk over the frames
// (`set_call_site_walk(fn)`, called with the same arguments), which remembers what it finds.
//
// Why C: every instruction a kernel records asks for its line once or twice, and a Python
// function that reads `sys._getframe` and looks up a tuple key costs more than the lookup.
#include "bindings.h"

#include <unordered_map>

namespace nxs::py_bind {
namespace {

struct CallSite {
  PyCodeObject* code;
  int lasti;
  bool operator==(const CallSite& o) const { return code == o.code && lasti == o.lasti; }
};

struct CallSiteHash {
  size_t operator()(const CallSite& s) const {
    return std::hash<const void*>()(s.code) ^ (static_cast<size_t>(s.lasti) * 0x9E3779B97F4A7C15ull);
  }
};

// Call site -> its location. Holds a reference to both (the code object: so that its address is
// not reused while it is a key).
std::unordered_map<CallSite, PyObject*, CallSiteHash> knownSites;
PyObject* walk = nullptr;  // the Python walk over the frames

PyObject* callerLocation(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "caller_location takes at most one argument (skip)");
    return nullptr;
  }
  long skip = 0;
  if (nargs == 1) {
    skip = PyLong_AsLong(args[0]);
    if (skip == -1 && PyErr_Occurred()) return nullptr;
  }
  PyFrameObject* frame = PyEval_GetFrame();  // (borrowed) the calling function's
  Py_XINCREF(frame);
  for (long i = 0; frame != nullptr && i <= skip; ++i) {
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  if (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const CallSite site{code, PyFrame_GetLasti(frame)};
    Py_DECREF(code);  // (the running frame holds them both)
    Py_DECREF(frame);
    auto known = knownSites.find(site);
    if (known != knownSites.end()) return Py_NewRef(known->second);
  }
  if (walk == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "caller_location: no frame walk was set");
    return nullptr;
  }
  return PyObject_Vectorcall(walk, args, static_cast<size_t>(nargs), nullptr);
}

PyMethodDef callerLocationDef = {
    "caller_location", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(callerLocation)),
    METH_FASTCALL,
    "caller_location(skip=0): the location of the frame 1 + skip above the calling function, if "
    "remembered; else what the frame walk (set_call_site_walk) answers for the same arguments."};

void forgetCallSites() {
  for (auto& [site, location] : knownSites) {
    Py_DECREF(reinterpret_cast<PyObject*>(site.code));
    Py_DECREF(location);
  }
  knownSites.clear();
}

void bindCallSite(py::module_& m) {
  m.attr("caller_location") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&callerLocationDef, nullptr, nullptr));
  m.def(
      "remember_call_site",
      [](py::object code, int lasti, py::object location) {
        if (!PyCode_Check(code.ptr())) throw py::type_error("remember_call_site: code must be a code object");
        const CallSite site{reinterpret_cast<PyCodeObject*>(code.ptr()), lasti};
        if (knownSites.count(site)) return;
        knownSites.emplace(site, location.inc_ref().ptr());
        code.inc_ref();
      },
      py::arg("code"), py::arg("lasti"), py::arg("location"),
      "Remembers the location of the call at bytecode offset `lasti` of `code` (for caller_location).");
  m.def("forget_call_sites", &forgetCallSites, "Forgets every remembered call site.");
  m.def(
      "set_call_site_walk",
      [](py::object fn) {
        Py_XDECREF(walk);
        walk = fn.inc_ref().ptr();
      },
      py::arg("walk"), "The Python function caller_location calls for a call site it does not know.");
}

NXS_REGISTER_SUBMODULE(nki, 41, "the NKI tracer's hot paths", bindCallSite);

}  // namespace
}  // namespace nxs::py_bind

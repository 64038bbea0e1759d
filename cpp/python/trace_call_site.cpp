// The kernel line an `nl` / `nisa` call comes from, `_core.nki.caller_location(skip=0)`
// (neuronxsim.nki.errors.caller_location): the frame `1 + skip` above the calling function, when
// that frame's call site was seen before (`remember_call_site(code, lasti, location)`), is
// answered from a table; anything else goes to the Python walk over the frames
// (`set_call_site_walk(fn)`, called with the same arguments), which remembers what it finds.
//
// Why C: every instruction a kernel records asks for its line once or twice, and a Python
// function that reads `sys._getframe` and looks up a tuple key costs more than the lookup. On
// CPython 3.11 (the exact version the module was built for) the frames are read directly, as
// PyEval_GetFrame / PyFrame_GetBack / PyFrame_GetLasti do, but without making a frame object for
// each (the calling nl / nisa function's frame is new on every call, and its frame object is
// allocated, then freed as it returns); checked against those functions on the first call, and
// any other version or a disagreement takes them.
#include "trace_call_site.h"

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

// The call site of the Python frame `up` frames above the innermost, through the frame objects;
// false if there is no such frame.
bool siteByFrameObjects(long up, CallSite& site) {
  PyFrameObject* frame = PyEval_GetFrame();  // (borrowed) the innermost Python frame
  Py_XINCREF(frame);
  for (long i = 0; frame != nullptr && i < up; ++i) {
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  if (frame == nullptr) return false;
  PyCodeObject* code = PyFrame_GetCode(frame);
  site = CallSite{code, PyFrame_GetLasti(frame)};
  Py_DECREF(code);  // (the running frame holds them both)
  Py_DECREF(frame);
  return true;
}

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
// CPython 3.11's _PyInterpreterFrame (Include/internal/pycore_frame.h), whose layout the public
// headers do not give: only the fields read here, in their places.
struct InterpreterFrame311 {
  PyObject* f_func;
  PyObject* f_globals;
  PyObject* f_builtins;
  PyObject* f_locals;
  PyCodeObject* f_code;
  PyFrameObject* frame_obj;
  InterpreterFrame311* previous;
  _Py_CODEUNIT* prev_instr;
  int stacktop;
  bool is_entry;
  char owner;
};
constexpr char kFrameOwnedByGenerator = 1;

_Py_CODEUNIT* firstUnit(PyCodeObject* code) { return reinterpret_cast<_Py_CODEUNIT*>(code->co_code_adaptive); }

// _PyFrame_IsIncomplete: a frame whose function has not started yet (PyFrame_GetBack skips it).
bool incomplete(const InterpreterFrame311* f) {
  return f->owner != kFrameOwnedByGenerator && f->prev_instr < firstUnit(f->f_code) + f->f_code->_co_firsttraceable;
}

bool siteByInterpreterFrames(long up, CallSite& site) {
  auto* f = reinterpret_cast<InterpreterFrame311*>(PyThreadState_Get()->cframe->current_frame);
  for (long i = 0; f != nullptr && i < up; ++i) {
    f = f->previous;
    while (f != nullptr && incomplete(f)) f = f->previous;
  }
  if (f == nullptr) return false;
  const auto lasti = static_cast<int>(f->prev_instr - firstUnit(f->f_code));  // (PyFrame_GetLasti)
  site = CallSite{f->f_code, lasti < 0 ? -1 : lasti * static_cast<int>(sizeof(_Py_CODEUNIT))};
  return true;
}

// 1: read the interpreter's frames; 0: the frame objects; -1: not yet checked.
int directWalk = Py_Version == PY_VERSION_HEX ? -1 : 0;
#endif

bool siteAbove(long up, CallSite& site) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  if (directWalk == 1) return siteByInterpreterFrames(up, site);
  if (directWalk == -1) {  // (the first call: both walks must agree, else the frame objects' for good)
    CallSite direct{}, objects{};
    const bool a = siteByInterpreterFrames(up, direct), b = siteByFrameObjects(up, objects);
    directWalk = a == b && (!a || direct == objects) ? 1 : 0;
    site = objects;
    return b;
  }
#endif
  return siteByFrameObjects(up, site);
}

}  // namespace

PyObject* callSiteLocation(long up) {
  CallSite site{};
  if (siteAbove(up, site)) {
    auto known = knownSites.find(site);
    if (known != knownSites.end()) return Py_NewRef(known->second);
  }
  if (walk == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "caller_location: no frame walk was set");
    return nullptr;
  }
  return PyObject_CallNoArgs(walk);  // (skip plays no part in the walk)
}

namespace {

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
  return callSiteLocation(1 + skip);  // (the frame 1 + skip above the function calling this)
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

// `_core.nki.FastCall(wrapped, fast)`: a public `nl` / `nisa` function whose commonest call takes a
// C path. Every call first goes to `fast` (a C function taking the same arguments), which answers
// it or returns NotImplemented having changed nothing; whatever `fast` declines goes to `wrapped`,
// the function's Python definition, which stays the one home of its behaviour (every check, every
// error message: `fast` takes only calls whose result it knows to be the Python definition's).
//
// The object stands for the function everywhere else too: `__name__`, `__qualname__`, `__module__`,
// `__doc__` and any other attribute not its own are the definition's, `__wrapped__` is the
// definition (so `inspect.signature` and `inspect.unwrap` see it), and it pickles by reference
// (by its module and qualified name, as a function does). It is not a `types.FunctionType`:
// what tells the API's functions apart (neuronxsim.nki.arguments, the API tests) unwraps it.
//
// Why C: the call of a Python function costs a frame (and caller_location a walk from it), which
// for the one-line answers of nc_matmul on two SBUF tiles or nl.affine_range(n) is most of the
// call.
#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace fast_call {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct FastCall {
  PyObject_HEAD
  PyObject* wrapped;  // the Python definition
  PyObject* fast;     // the C path: a result, or NotImplemented
  PyObject* dict;     // the instance's own attributes
  vectorcallfunc vectorcall;
};

PyTypeObject FastCallType;  // (zero; filled in and readied by bindFastCall)

FastCall* self(PyObject* o) { return reinterpret_cast<FastCall*>(o); }

PyObject* call(PyObject* o, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  FastCall* f = self(o);
  PyObject* r = PyObject_Vectorcall(f->fast, args, PyVectorcall_NARGS(nargsf), kwnames);
  if (r != Py_NotImplemented) return r;  // (a result, or an error)
  Py_DECREF(r);
  return PyObject_Vectorcall(f->wrapped, args, nargsf, kwnames);
}

PyObject* newFastCall(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *wrapped, *fast;
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError, "FastCall(wrapped, fast) takes no keywords");
    return nullptr;
  }
  if (!PyArg_UnpackTuple(args, "FastCall", 2, 2, &wrapped, &fast)) return nullptr;
  if (!PyCallable_Check(wrapped) || !PyCallable_Check(fast)) {
    PyErr_SetString(PyExc_TypeError, "FastCall(wrapped, fast): both must be callable");
    return nullptr;
  }
  PyObject* o = type->tp_alloc(type, 0);
  if (o == nullptr) return nullptr;
  FastCall* f = self(o);
  f->wrapped = Py_NewRef(wrapped);
  f->fast = Py_NewRef(fast);
  f->dict = nullptr;
  f->vectorcall = call;
  return o;
}

int traverse(PyObject* o, visitproc visit, void* arg) {
  Py_VISIT(self(o)->wrapped);
  Py_VISIT(self(o)->fast);
  Py_VISIT(self(o)->dict);
  return 0;
}

int clear(PyObject* o) {
  Py_CLEAR(self(o)->wrapped);
  Py_CLEAR(self(o)->fast);
  Py_CLEAR(self(o)->dict);
  return 0;
}

void dealloc(PyObject* o) {
  PyObject_GC_UnTrack(o);
  clear(o);
  Py_TYPE(o)->tp_free(o);
}

// Attributes not the object's own are the definition's (its __name__, __code__, __defaults__...).
PyObject* getattro(PyObject* o, PyObject* name) {
  PyObject* r = PyObject_GenericGetAttr(o, name);
  if (r != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(self(o)->wrapped, name);
}

PyObject* forwarded(PyObject* o, void* name) {
  return PyObject_GetAttrString(self(o)->wrapped, static_cast<const char*>(name));
}

PyObject* getWrapped(PyObject* o, void*) { return Py_NewRef(self(o)->wrapped); }

PyObject* repr(PyObject* o) { return PyObject_Repr(self(o)->wrapped); }

// Pickled (and copied) by reference, as a function is: its qualified name in its module.
PyObject* reduce(PyObject* o, PyObject*) { return PyObject_GetAttrString(self(o)->wrapped, "__qualname__"); }

PyGetSetDef getset[] = {
    {"__name__", forwarded, nullptr, "the definition's name", const_cast<char*>("__name__")},
    {"__qualname__", forwarded, nullptr, "the definition's qualified name", const_cast<char*>("__qualname__")},
    {"__module__", forwarded, nullptr, "the definition's module", const_cast<char*>("__module__")},
    {"__doc__", forwarded, nullptr, "the definition's docstring", const_cast<char*>("__doc__")},
    {"__wrapped__", getWrapped, nullptr, "the Python definition", nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "the object's own attributes", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef methods[] = {{"__reduce__", reduce, METH_NOARGS, "pickled by reference (module and qualified name)"},
                         {nullptr, nullptr, 0, nullptr}};

void bindFastCall(py::module_& m) {
  Py_SET_REFCNT(reinterpret_cast<PyObject*>(&FastCallType), 1);  // (a static type: never freed)
  FastCallType.tp_name = "neuronxsim.nki.arguments.FastCall";
  FastCallType.tp_basicsize = sizeof(FastCall);
  FastCallType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  FastCallType.tp_doc =
      "FastCall(wrapped, fast): the function `wrapped` (a Python definition) whose calls go to "
      "`fast` first (a C path answering the same arguments, or NotImplemented).";
  FastCallType.tp_new = newFastCall;
  FastCallType.tp_dealloc = dealloc;
  FastCallType.tp_traverse = traverse;
  FastCallType.tp_clear = clear;
  FastCallType.tp_vectorcall_offset = offsetof(FastCall, vectorcall);
  FastCallType.tp_call = PyVectorcall_Call;
  FastCallType.tp_getattro = getattro;
  FastCallType.tp_repr = repr;
  FastCallType.tp_getset = getset;
  FastCallType.tp_methods = methods;
  FastCallType.tp_dictoffset = offsetof(FastCall, dict);
  if (PyType_Ready(&FastCallType) < 0) throw py::error_already_set();
  m.attr("FastCall") = py::handle(reinterpret_cast<PyObject*>(&FastCallType));
}

NXS_REGISTER_SUBMODULE(nki, 40, "the NKI tracer's hot paths", bindFastCall);

}  // namespace fast_call
}  // namespace
}  // namespace nxs::py_bind

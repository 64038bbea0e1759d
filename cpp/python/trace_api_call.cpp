// `_core.nki.ApiCall(wrapped, explain, instruction)`: a public function of the NKI 0.6 dialect
// (neuronxsim.nki06._api.api is the one home of what it does; this is its call). A call passes its
// arguments unchanged to `wrapped`, the function's Python definition. A TypeError out of it goes to
// `explain(args, kwargs)`, which answers the TypeError naming the function and the kernel line for
// arguments that do not fit the documented signature (raised instead, `from None`, as `raise error
// from None` in an `except` block does: its context the original), or None for a TypeError of the
// function's body (re-raised unchanged). With an `instruction` class (nisa's NkiInstruction; None
// for the other functions) the call answers an instance of it, made without its `__init__`, whose
// `handle` is the slice of the current tracer's `ops` the call appended, and not what `wrapped`
// returned.
//
// `fast` (settable; None at first): a C function taking the call's arguments before `wrapped` does,
// which answers the function's commonest calls (trace_nki06_fast.cpp's) or returns NotImplemented,
// having changed nothing, for `wrapped` to answer; its errors are treated as `wrapped`'s.
//
// The object stands for the function everywhere else too, as trace_fast_call.cpp's FastCall does:
// `__name__`, `__qualname__`, `__module__`, `__doc__` and any attribute not its own are the
// definition's, `__wrapped__` is the definition (so `inspect.signature` and `inspect.unwrap` see
// it), it has a `__dict__` (api copies the definition's into it, as functools.wraps does), it binds
// as a method when it is a class attribute (NkiTensor's view methods), as a function does, and it
// pickles by reference (its module and qualified name).
//
// Why C: the Python wrapper it replaces repacked every call's arguments into a tuple and a dict
// (`*args, **kwargs`) and ran a frame of its own, about a tenth of recording an NKI 0.6 kernel.
// Without that frame the definitions are called by the kernel directly: they find the kernel's line
// with `caller_location()` (the frame above them), not `caller_location(1)`.
#include "bindings.h"
#include "trace_current.h"
#include "trace_slotted.h"

namespace nxs::py_bind {
namespace {
namespace api_call {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct ApiCall {
  PyObject_HEAD
  PyObject* wrapped;      // the Python definition
  PyObject* explain;      // explain(args, kwargs): the TypeError to raise instead, or None
  PyObject* instruction;  // the class of the handle the call answers, or null (the function's own result)
  PyObject* fast;         // a C path that answers the commonest calls, or null (see `fast` below)
  PyObject* dict;         // the instance's own attributes
  vectorcallfunc vectorcall;
};

PyTypeObject ApiCallType;    // (zero; filled in and readied by bindApiCall)
PyObject* opsName = nullptr;  // "ops" (interned, kept for good: slotAttr's key)
PyObject* noArgs = nullptr;   // ()
PyObject* handleName = nullptr;  // "handle" (interned, kept for good: not made again on every call)

ApiCall* self(PyObject* o) { return reinterpret_cast<ApiCall*>(o); }

// The exception set (a TypeError out of `wrapped`) replaced, when `explain` says so, by the
// TypeError it makes of the call's arguments; always returns null (an error set).
PyObject* explained(ApiCall* a, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb != nullptr) PyException_SetTraceback(value, tb);
  PyObject* error = nullptr;
  PyObject* positional = PyTuple_New(nargs);
  PyObject* keywords = PyDict_New();
  if (positional != nullptr && keywords != nullptr) {
    for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(positional, i, Py_NewRef(args[i]));
    bool filled = true;
    const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw && filled; ++i)
      filled = PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) == 0;
    if (filled) error = PyObject_CallFunctionObjArgs(a->explain, positional, keywords, nullptr);
  }
  Py_XDECREF(positional);
  Py_XDECREF(keywords);
  if (error == Py_None) {  // (a TypeError of the body: `raise`)
    Py_DECREF(error);
    PyErr_Restore(type, value, tb);
    return nullptr;
  }
  Py_XDECREF(type);
  Py_XDECREF(tb);
  if (error != nullptr && !PyExceptionInstance_Check(error)) {  // (what `raise error` says of it)
    Py_DECREF(error);
    error = nullptr;
    PyErr_SetString(PyExc_TypeError, "exceptions must derive from BaseException");
  }
  if (error == nullptr) {  // (explain failed: its error, raised while handling the TypeError)
    PyObject *type2, *value2, *tb2;
    PyErr_Fetch(&type2, &value2, &tb2);
    PyErr_NormalizeException(&type2, &value2, &tb2);
    if (tb2 != nullptr) PyException_SetTraceback(value2, tb2);
    if (value2 != value) {
      PyException_SetContext(value2, value);  // (steals value)
    } else {
      Py_DECREF(value);
    }
    PyErr_Restore(type2, value2, tb2);
    return nullptr;
  }
  // `raise error from None` in the except block: its context the TypeError, no cause, suppressed.
  // (PyErr_Restore, not PyErr_SetObject: that would make the context whatever exception the
  // kernel itself is handling, if any, instead.)
  if (error != value) {
    PyException_SetContext(error, value);  // (steals value)
  } else {
    Py_DECREF(value);
  }
  PyException_SetCause(error, nullptr);  // (sets __suppress_context__)
  PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(error))), error, PyException_GetTraceback(error));
  return nullptr;
}

// An `instruction` instance whose handle is ops[first:] (object.__new__: no __init__ run).
PyObject* handleOf(ApiCall* a, PyObject* ops, Py_ssize_t first) {
  PyObject* made = PyBaseObject_Type.tp_new(reinterpret_cast<PyTypeObject*>(a->instruction), noArgs, nullptr);
  if (made == nullptr) return nullptr;
  PyObject* handle;
  if (PyList_CheckExact(ops)) {
    handle = PyList_GetSlice(ops, first, PY_SSIZE_T_MAX);
  } else {  // (ops[first:] of whatever else it is: None without a tracer raises as Python does)
    PyObject* start = PyLong_FromSsize_t(first);
    PyObject* slice = start != nullptr ? PySlice_New(start, nullptr, nullptr) : nullptr;
    handle = slice != nullptr ? PyObject_GetItem(ops, slice) : nullptr;
    Py_XDECREF(slice);
    Py_XDECREF(start);
  }
  if (handle == nullptr || PyObject_SetAttr(made, handleName, handle) < 0) Py_CLEAR(made);
  Py_XDECREF(handle);
  return made;
}

// The call of `fast` (when set), else of `wrapped`, or of `wrapped` when `fast` declines
// (NotImplemented, having changed nothing).
PyObject* answer(ApiCall* a, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (a->fast != nullptr) {
    PyObject* r = PyObject_Vectorcall(a->fast, args, nargsf, kwnames);
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
  }
  return PyObject_Vectorcall(a->wrapped, args, nargsf, kwnames);
}

PyObject* call(PyObject* o, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  ApiCall* a = self(o);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (a->instruction == nullptr) {
    PyObject* r = answer(a, args, nargsf, kwnames);
    if (r == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) return explained(a, args, nargs, kwnames);
    return r;
  }
  // The tracer's ops list as it is before the call (the slice is of this list, even if the call
  // moves the tracer to another), and its length.
  PyObject* tracer = currentTracer();  // (borrowed)
  PyObject* ops = tracer != nullptr ? slotAttr(tracer, opsName) : Py_NewRef(Py_None);
  if (ops == nullptr) return nullptr;
  Py_ssize_t first = 0;
  if (ops != Py_None) {
    first = PyObject_Size(ops);
    if (first < 0) {
      Py_DECREF(ops);
      return nullptr;
    }
  }
  PyObject* r = answer(a, args, nargsf, kwnames);
  if (r == nullptr) {
    Py_DECREF(ops);
    if (PyErr_ExceptionMatches(PyExc_TypeError)) return explained(a, args, nargs, kwnames);
    return nullptr;
  }
  Py_DECREF(r);
  PyObject* made = handleOf(a, ops, first);
  Py_DECREF(ops);
  return made;
}

PyObject* newApiCall(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *wrapped, *explain, *instruction;
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError, "ApiCall(wrapped, explain, instruction) takes no keywords");
    return nullptr;
  }
  if (!PyArg_UnpackTuple(args, "ApiCall", 3, 3, &wrapped, &explain, &instruction)) return nullptr;
  if (!PyCallable_Check(wrapped) || !PyCallable_Check(explain)) {
    PyErr_SetString(PyExc_TypeError, "ApiCall(wrapped, explain, instruction): wrapped and explain must be callable");
    return nullptr;
  }
  if (instruction != Py_None && !PyType_Check(instruction)) {
    PyErr_SetString(PyExc_TypeError, "ApiCall(wrapped, explain, instruction): instruction must be a class or None");
    return nullptr;
  }
  PyObject* o = type->tp_alloc(type, 0);
  if (o == nullptr) return nullptr;
  ApiCall* a = self(o);
  a->wrapped = Py_NewRef(wrapped);
  a->explain = Py_NewRef(explain);
  a->instruction = instruction != Py_None ? Py_NewRef(instruction) : nullptr;
  a->fast = nullptr;
  a->dict = nullptr;
  a->vectorcall = call;
  return o;
}

int traverse(PyObject* o, visitproc visit, void* arg) {
  Py_VISIT(self(o)->wrapped);
  Py_VISIT(self(o)->explain);
  Py_VISIT(self(o)->instruction);
  Py_VISIT(self(o)->fast);
  Py_VISIT(self(o)->dict);
  return 0;
}

int clear(PyObject* o) {
  Py_CLEAR(self(o)->wrapped);
  Py_CLEAR(self(o)->explain);
  Py_CLEAR(self(o)->instruction);
  Py_CLEAR(self(o)->fast);
  Py_CLEAR(self(o)->dict);
  return 0;
}

void dealloc(PyObject* o) {
  PyObject_GC_UnTrack(o);
  clear(o);
  Py_TYPE(o)->tp_free(o);
}

// As a function binds: itself from the class, a bound method from an instance.
PyObject* descrGet(PyObject* o, PyObject* instance, PyObject*) {
  if (instance == nullptr || instance == Py_None) return Py_NewRef(o);
  return PyMethod_New(o, instance);
}

// Attributes not the object's own are the definition's (its __code__, __defaults__...).
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

PyObject* getExplain(PyObject* o, void*) { return Py_NewRef(self(o)->explain); }

PyObject* getInstruction(PyObject* o, void*) {
  return Py_NewRef(self(o)->instruction != nullptr ? self(o)->instruction : Py_None);
}

PyObject* getFast(PyObject* o, void*) { return Py_NewRef(self(o)->fast != nullptr ? self(o)->fast : Py_None); }

int setFast(PyObject* o, PyObject* value, void*) {
  if (value != nullptr && value != Py_None && !PyCallable_Check(value)) {
    PyErr_SetString(PyExc_TypeError, "ApiCall.fast must be callable or None");
    return -1;
  }
  Py_XSETREF(self(o)->fast, value != nullptr && value != Py_None ? Py_NewRef(value) : nullptr);
  return 0;
}

PyObject* repr(PyObject* o) { return PyObject_Repr(self(o)->wrapped); }

// Pickled (and copied) by reference, as a function is: its qualified name in its module.
PyObject* reduce(PyObject* o, PyObject*) { return PyObject_GetAttrString(self(o)->wrapped, "__qualname__"); }

PyGetSetDef getset[] = {
    {"__name__", forwarded, nullptr, "the definition's name", const_cast<char*>("__name__")},
    {"__qualname__", forwarded, nullptr, "the definition's qualified name", const_cast<char*>("__qualname__")},
    {"__module__", forwarded, nullptr, "the definition's module", const_cast<char*>("__module__")},
    {"__doc__", forwarded, nullptr, "the definition's docstring", const_cast<char*>("__doc__")},
    {"__wrapped__", getWrapped, nullptr, "the Python definition", nullptr},
    {"explain", getExplain, nullptr, "explain(args, kwargs): the TypeError of a call that does not fit", nullptr},
    {"instruction", getInstruction, nullptr, "the class of the handle a call answers, or None", nullptr},
    {"fast", getFast, setFast,
     "a C path taking the call's arguments first (None: none): its answer, or NotImplemented having changed "
     "nothing, when the definition answers",
     nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, "the object's own attributes", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef methods[] = {{"__reduce__", reduce, METH_NOARGS, "pickled by reference (module and qualified name)"},
                         {nullptr, nullptr, 0, nullptr}};

void bindApiCall(py::module_& m) {
  opsName = PyUnicode_InternFromString("ops");
  noArgs = PyTuple_New(0);
  handleName = PyUnicode_InternFromString("handle");
  if (opsName == nullptr || noArgs == nullptr || handleName == nullptr) throw py::error_already_set();
  Py_SET_REFCNT(reinterpret_cast<PyObject*>(&ApiCallType), 1);  // (a static type: never freed)
  ApiCallType.tp_name = "neuronxsim.nki06._api.ApiCall";
  ApiCallType.tp_basicsize = sizeof(ApiCall);
  // (METHOD_DESCRIPTOR: `t.permute(...)` calls it with t first, as it does a function, without
  // making the bound method.)
  ApiCallType.tp_flags =
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  ApiCallType.tp_doc =
      "ApiCall(wrapped, explain, instruction): the NKI 0.6 function `wrapped` (a Python definition); "
      "a TypeError out of it is replaced by explain(args, kwargs) unless that is None; with an "
      "`instruction` class, a call answers one whose handle is the instructions it recorded.";
  ApiCallType.tp_new = newApiCall;
  ApiCallType.tp_dealloc = dealloc;
  ApiCallType.tp_traverse = traverse;
  ApiCallType.tp_clear = clear;
  ApiCallType.tp_vectorcall_offset = offsetof(ApiCall, vectorcall);
  ApiCallType.tp_call = PyVectorcall_Call;
  ApiCallType.tp_descr_get = descrGet;
  ApiCallType.tp_getattro = getattro;
  ApiCallType.tp_repr = repr;
  ApiCallType.tp_getset = getset;
  ApiCallType.tp_methods = methods;
  ApiCallType.tp_dictoffset = offsetof(ApiCall, dict);
  if (PyType_Ready(&ApiCallType) < 0) throw py::error_already_set();
  m.attr("ApiCall") = py::handle(reinterpret_cast<PyObject*>(&ApiCallType));
}

NXS_REGISTER_SUBMODULE(nki, 40, "the NKI tracer's hot paths", bindApiCall);

}  // namespace api_call
}  // namespace
}  // namespace nxs::py_bind

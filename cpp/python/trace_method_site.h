// A call site of the trace_*.cpp fast paths that calls a method of the tracer by name,
// `self.name(*args)` (PyObject_VectorcallMethod), where the method is usually one of the
// tracer's own C methods (a METH_FASTCALL method descriptor on its class: record, new_result,
// write_fresh, fresh_result, place_matmul).
//
// Why: a matmul of a kernel's inner loop makes five such calls; each walks the method lookup,
// the descriptor's vectorcall and its checks, a share of the matmul's cost. The site learns
// once per class (and class version) whether `name` is such a descriptor, and then calls its C
// function as the descriptor's vectorcall would; anything else keeps PyObject_VectorcallMethod.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

class MethodSite {
 public:
  // self.name(*args[1:]) with self = args[0] (nargs counts self): a new reference, null with an
  // error set. `name`: an interned str the caller keeps for good.
  PyObject* call(PyObject* name, PyObject* const* args, Py_ssize_t nargs) {
    PyTypeObject* type = Py_TYPE(args[0]);
    if (type != type_ || version_ == 0 || type->tp_version_tag != version_) learn(type, name);
    if (fast_ != nullptr) {  // (with the descriptor's own recursion guard)
      if (Py_EnterRecursiveCall(" while calling a Python object")) return nullptr;
      PyObject* result = fast_(args[0], args + 1, nargs - 1);
      Py_LeaveRecursiveCall();
      return result;
    }
    return PyObject_VectorcallMethod(name, args, static_cast<size_t>(nargs), nullptr);
  }

 private:
  // What PyObject_VectorcallMethod finds for `name` on instances of `type`: a C METH_FASTCALL
  // method it would call unbound (the class reads attributes the generic way, its instances
  // have no __dict__ to shadow it, and the class's attribute is a plain method descriptor), or
  // null (the general call).
  void learn(PyTypeObject* type, PyObject* name) {
    type_ = type;
    fast_ = nullptr;
    PyObject* descr = _PyType_Lookup(type, name);  // (borrowed; assigns the class a version tag)
    version_ = PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG) ? type->tp_version_tag : 0u;
    bool noDict = type->tp_dictoffset == 0;
#ifdef Py_TPFLAGS_MANAGED_DICT
    noDict = noDict && !PyType_HasFeature(type, Py_TPFLAGS_MANAGED_DICT);
#endif
    if (version_ == 0 || !noDict || type->tp_getattro != PyObject_GenericGetAttr || descr == nullptr ||
        Py_TYPE(descr) != &PyMethodDescr_Type)
      return;
    PyMethodDef* def = reinterpret_cast<PyMethodDescrObject*>(descr)->d_method;
    // (the descriptor's own check of self: its class is type or a base)
    if (def->ml_flags == METH_FASTCALL && PyType_IsSubtype(type, PyDescr_TYPE(descr)))
      fast_ = reinterpret_cast<_PyCFunctionFast>(reinterpret_cast<void (*)()>(def->ml_meth));
  }

  PyTypeObject* type_ = nullptr;
  unsigned int version_ = 0;
  _PyCFunctionFast fast_ = nullptr;
};

// fn(*args) (a new reference; null with an error set) for a callable the fast paths were given,
// usually another of their C functions (plain_tile_access, write_plain): a builtin of
// METH_FASTCALL is called as its vectorcall would call it (its self, the arguments, the
// recursion guard), without the vectorcall's dispatch; anything else by PyObject_Vectorcall.
inline PyObject* callFast(PyObject* fn, PyObject* const* args, Py_ssize_t nargs) {
  if (PyCFunction_CheckExact(fn) && PyCFunction_GET_FLAGS(fn) == METH_FASTCALL) {
    auto meth = reinterpret_cast<_PyCFunctionFast>(reinterpret_cast<void (*)()>(PyCFunction_GET_FUNCTION(fn)));
    if (Py_EnterRecursiveCall(" while calling a Python object")) return nullptr;
    PyObject* result = meth(PyCFunction_GET_SELF(fn), args, nargs);
    Py_LeaveRecursiveCall();
    return result;
  }
  return PyObject_Vectorcall(fn, args, static_cast<size_t>(nargs), nullptr);
}

// module.name (a new reference; null with an error set): from the module's dict, where a module's
// own functions are (what PyObject_GetAttr finds there after looking at the module type's
// attributes, which have other names), else by PyObject_GetAttr. For the fast paths that call a
// module's function as it is now (tests replace some): PyObject_GetAttr looks at the module
// type's attributes first, a few times the cost of the dict's look-up.
inline PyObject* moduleAttr(PyObject* module, PyObject* name) {
  PyObject* dict = PyModule_Check(module) ? PyModule_GetDict(module) : nullptr;  // (borrowed)
  if (PyObject* v = dict != nullptr ? PyDict_GetItemWithError(dict, name) : nullptr) return Py_NewRef(v);
  if (PyErr_Occurred()) return nullptr;
  return PyObject_GetAttr(module, name);
}

}  // namespace nxs::py_bind

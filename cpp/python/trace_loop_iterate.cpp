// `Tracer.iterate(kind, values, loc, directives=())` of the NKI tracer (neuronxsim.nki.tracer), in
// C, installed on the class as a method descriptor by `iterate_method()` once
// `configure_iterate(loop_class, loop_iteration_class, static)` has given it the record's Loop and
// LoopIteration classes (slotted: made with new_slotted's slot order) and the "static" kind.
//
// It returns an iterator that runs the body of a loop of `kind` over `values`, as the Python
// generator it replaces did: on the first next(), `outer = self.loop` and the Loop(kind,
// len(values), loc, outer, directives) are made; each next() sets `self.loop` to
// LoopIteration(loop, i) and gives value i as a LoopIndex (a plain int for a "static" loop);
// when the values run out, or when the iterator is dropped before (a `break`, an exception out
// of the body), `self.loop` is `outer` again. An iterator never started changes nothing.
//
// Why C: kernels run a loop per few instructions (the trip counts of tiled kernels are small),
// and the generator's frame, resumed per iteration, and the Python calls it made cost more than
// the iteration's own work. For the same reason the nl range functions' C path (rangeFast) makes
// the iterator of a range of machine words itself, counting its values, with no range object,
// its iterator or the call of Tracer.iterate by name.
#include "trace_equal.h"
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_loop_index.h"
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace loop_iterate {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

PyObject* loopClass = nullptr;
PyObject* iterationClass = nullptr;
PyObject* staticKind = nullptr;
PyObject* loopName = nullptr;  // "loop", the tracer's attribute
PyObject* iterateName = nullptr;  // "iterate", the tracer's method
PyObject* iterateDescr = nullptr;  // Tracer.iterate as iterate_method made it
PyObject* emptyDirectives = nullptr;  // ()

using Owned = nxs::py_bind::OwnedRef;

struct LoopIterator {
  PyObject_HEAD
  PyObject* tracer;
  PyObject* kind;
  PyObject* values;  // null for a counted range (below)
  PyObject* loc;
  PyObject* directives;
  PyObject* values_it;  // iter(values), once started
  PyObject* loop;       // the Loop, once started
  PyObject* outer;      // the tracer's loop when it started
  Py_ssize_t index;
  // A counted range (values null): `trips` values from `first`, `step` apart.
  long long first, step;
  Py_ssize_t trips;
  int state;  // 0: not started, 1: running, 2: done
  bool symbolic;
};

PyTypeObject LoopIteratorType;  // (zero; filled in and readied by bindIterate)

// self.loop = outer, once (the generator's `finally`); -1 with an error set.
int finish(LoopIterator* it) {
  if (it->state != 1) return 0;
  it->state = 2;
  return slotSet(it->tracer, loopName, it->outer);
}

int start(LoopIterator* it) {
  it->outer = slotAttr(it->tracer, loopName);
  if (it->outer == nullptr) return -1;
  const Py_ssize_t trips = it->values == nullptr ? it->trips : PyObject_Size(it->values);
  if (trips < 0) return -1;
  Owned count(PyLong_FromSsize_t(trips));
  if (count.get() == nullptr) return -1;
  PyObject* const slots[5] = {it->kind, count.get(), it->loc, it->outer, it->directives};
  it->loop = newSlottedObject(loopClass, slots, 5);
  if (it->loop == nullptr) return -1;
  it->state = 1;  // (from here on, whatever happens, self.loop is restored)
  if (it->values != nullptr) {
    it->values_it = PyObject_GetIter(it->values);
    if (it->values_it == nullptr) return -1;
  }
  const int isStatic = equalTo(it->kind, staticKind);
  if (isStatic < 0) return -1;
  it->symbolic = !isStatic;
  return 0;
}

// The next iteration begins: self.loop = LoopIteration(loop, index); index += 1. -1 with an error set.
int enter(LoopIterator* it) {
  Owned i(PyLong_FromSsize_t(it->index++));
  if (i.get() == nullptr) return -1;
  PyObject* const slots[2] = {it->loop, i.get()};
  Owned iteration(newSlottedObject(iterationClass, slots, 2));
  if (iteration.get() == nullptr) return -1;
  return slotSet(it->tracer, loopName, iteration.get());
}

PyObject* next(PyObject* self) {
  auto* it = reinterpret_cast<LoopIterator*>(self);
  if (it->state == 2) return nullptr;
  if (it->state == 0 && start(it) < 0) {
    if (it->state == 1) {  // (the generator's finally ran too)
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      if (finish(it) < 0) PyErr_WriteUnraisable(self);
      PyErr_Restore(type, value, tb);
    }
    it->state = 2;
    return nullptr;
  }
  if (it->values == nullptr) {  // a counted range
    if (it->index == it->trips) {
      finish(it);  // (an error here is StopIteration's replacement, as from a finally)
      return nullptr;
    }
    // (between the range's ends, so a machine word; the product alone may not be)
    const auto v = static_cast<long long>(it->first + static_cast<__int128>(it->index) * it->step);
    if (enter(it) < 0) return nullptr;
    return it->symbolic ? loopIndexOfValue(v) : PyLong_FromLongLong(v);
  }
  Owned value(PyIter_Next(it->values_it));
  if (value.get() == nullptr) {
    if (PyErr_Occurred()) {
      PyObject *type, *v, *tb;
      PyErr_Fetch(&type, &v, &tb);
      if (finish(it) < 0) PyErr_WriteUnraisable(self);
      PyErr_Restore(type, v, tb);
      return nullptr;
    }
    finish(it);  // (an error here is StopIteration's replacement, as from a finally)
    return nullptr;
  }
  if (enter(it) < 0) return nullptr;
  return it->symbolic ? newLoopIndex(value.get()) : value.release();
}

void dealloc(PyObject* self) {
  auto* it = reinterpret_cast<LoopIterator*>(self);
  if (it->state == 1) {  // dropped before the values ran out: the generator's close()
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (finish(it) < 0) PyErr_WriteUnraisable(self);
    PyErr_Restore(type, value, tb);
  }
  for (PyObject* o : {it->tracer, it->kind, it->values, it->loc, it->directives, it->values_it, it->loop, it->outer})
    Py_XDECREF(o);
  Py_TYPE(self)->tp_free(self);
}

// A new LoopIterator (null with an error set); `values` null for a counted range, whose first,
// step and trips the caller sets.
LoopIterator* newIterator(PyObject* tracer, PyObject* kind, PyObject* values, PyObject* loc, PyObject* directives) {
  auto* it = PyObject_New(LoopIterator, &LoopIteratorType);
  if (it == nullptr) return nullptr;
  it->tracer = Py_NewRef(tracer);
  it->kind = Py_NewRef(kind);
  it->values = Py_XNewRef(values);
  it->loc = Py_NewRef(loc);
  it->directives = Py_NewRef(directives);
  it->values_it = it->loop = it->outer = nullptr;
  it->index = 0;
  it->first = it->step = 0;
  it->trips = 0;
  it->state = 0;
  it->symbolic = true;
  return it;
}

PyObject* iterate(PyObject* tracer, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3 || nargs > 4) {
    PyErr_SetString(PyExc_TypeError, "iterate(kind, values, loc, directives=())");
    return nullptr;
  }
  if (loopClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "iterate: call configure_iterate first");
    return nullptr;
  }
  Owned noDirectives(nargs == 4 ? nullptr : PyTuple_New(0));
  PyObject* directives = nargs == 4 ? args[3] : noDirectives.get();
  if (directives == nullptr) return nullptr;
  return reinterpret_cast<PyObject*>(newIterator(tracer, args[0], args[1], args[2], directives));
}

PyMethodDef iterateDef = {
    "iterate", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(iterate)), METH_FASTCALL,
    "iterate(kind, values, loc, directives=()): an iterator running a loop body of `kind` over `values`, with "
    "every op it records referring to its iteration (see tracer.py)."};

// nl.affine_range / sequential_range / static_range (a FastCall's C path, see
// trace_fast_call.cpp) for one to three plain ints and no directives: what language.py's
// _traced_loop does, `current().iterate(kind, range(...), caller_location(1))` with the call's
// line; NotImplemented for anything else (a loop index or other int subclass, None, a step of
// 0, no trace running: the Python definition answers it, with its errors). `kind` (the
// function's self) is the loop's kind.
PyObject* rangeFast(PyObject* kind, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tracer = currentTracer();
  if (tracer == nullptr || nargs < 1 || nargs > 3 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0))
    Py_RETURN_NOTIMPLEMENTED;
  for (Py_ssize_t i = 0; i < nargs; ++i)
    if (!PyLong_CheckExact(args[i])) Py_RETURN_NOTIMPLEMENTED;
  if (nargs == 3) {
    const int zero = PyObject_Not(args[2]);
    if (zero != 0) return zero < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  long long bounds[3] = {0, 0, 1};  // start, stop, step: range()'s defaults
  bool words = true;
  for (Py_ssize_t i = 0; i < nargs && words; ++i) {
    int overflow = 0;
    bounds[nargs == 1 ? 1 : i] = PyLong_AsLongLongAndOverflow(args[i], &overflow);
    words = overflow == 0;
  }
  if (words && _PyType_Lookup(Py_TYPE(tracer), iterateName) == iterateDescr) {
    // What Tracer.iterate(kind, range(start, stop, step), loc) makes, counted here
    const long long start = bounds[0], stop = bounds[1], step = bounds[2];
    __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
    const __int128 by = step > 0 ? step : -static_cast<__int128>(step);
    const __int128 trips = span <= 0 ? 0 : (span + by - 1) / by;
    if (trips <= PY_SSIZE_T_MAX) {
      LoopIterator* it = newIterator(tracer, kind, nullptr, loc.get(), emptyDirectives);
      if (it == nullptr) return nullptr;
      it->first = start;
      it->step = step;
      it->trips = static_cast<Py_ssize_t>(trips);
      return reinterpret_cast<PyObject*>(it);
    }
  }
  Owned values(PyObject_Vectorcall(reinterpret_cast<PyObject*>(&PyRange_Type), args, nargs, nullptr));
  if (values.get() == nullptr) return nullptr;
  PyObject* const call[4] = {tracer, kind, values.get(), loc.get()};
  return PyObject_VectorcallMethod(iterateName, call, 4, nullptr);
}

PyMethodDef rangeFastDef = {
    "range_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(rangeFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "range_fast(start, stop=None, step=1): a traced loop of this function's kind over plain ints, as "
    "nl.affine_range and its kin record it; NotImplemented for any other call."};

void bindIterate(py::module_& m) {
  iterateName = PyUnicode_InternFromString("iterate");
  if (iterateName == nullptr) throw py::error_already_set();
  loopName = PyUnicode_InternFromString("loop");
  if (loopName == nullptr) throw py::error_already_set();
  emptyDirectives = PyTuple_New(0);
  if (emptyDirectives == nullptr) throw py::error_already_set();
  Py_SET_REFCNT(reinterpret_cast<PyObject*>(&LoopIteratorType), 1);  // (a static type: never freed)
  LoopIteratorType.tp_name = "neuronxsim.nki.tracer.LoopIterator";
  LoopIteratorType.tp_basicsize = sizeof(LoopIterator);
  LoopIteratorType.tp_flags = Py_TPFLAGS_DEFAULT;
  LoopIteratorType.tp_doc = "The iterations of a traced loop (Tracer.iterate).";
  LoopIteratorType.tp_iter = PyObject_SelfIter;
  LoopIteratorType.tp_iternext = next;
  LoopIteratorType.tp_dealloc = dealloc;
  if (PyType_Ready(&LoopIteratorType) < 0) throw py::error_already_set();
  m.def(
      "configure_iterate",
      [](py::type loop, py::type iteration, py::str staticName) {
        for (PyObject** slot : {&loopClass, &iterationClass, &staticKind}) Py_XDECREF(*slot);
        loopClass = loop.inc_ref().ptr();
        iterationClass = iteration.inc_ref().ptr();
        staticKind = staticName.inc_ref().ptr();
      },
      py::arg("loop_class"), py::arg("loop_iteration_class"), py::arg("static"),
      "Gives Tracer.iterate the record's Loop and LoopIteration classes and the kind of a static loop.");
  m.def(
      "iterate_method",
      [](py::type cls) {
        PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &iterateDef);
        if (descr == nullptr) throw py::error_already_set();
        Py_XDECREF(iterateDescr);
        iterateDescr = Py_NewRef(descr);  // (what rangeFast finds on the class when it is installed)
        return py::reinterpret_steal<py::object>(descr);
      },
      py::arg("cls"), "Tracer.iterate in C, as a method of the tracer class cls.");
  m.def(
      "range_fast",
      [](py::str kind) {
        PyObject* k = kind.ptr();
        Py_INCREF(k);
        PyUnicode_InternInPlace(&k);  // (the kind as language.py spells it: the interned literal)
        PyObject* fn = PyCFunction_NewEx(&rangeFastDef, k, nullptr);
        Py_DECREF(k);
        if (fn == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(fn);
      },
      py::arg("kind"), "The C path of the nl range function of loops of `kind` (for FastCall).");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindIterate);

}  // namespace loop_iterate
}  // namespace
}  // namespace nxs::py_bind

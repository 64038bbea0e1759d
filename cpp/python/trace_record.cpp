// The tuples of the NKI tracer's record (neuronxsim/nki/record.py), made in C:
//   new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, zero_fill=False)
//     -> cls((opcode number, engine number, loc.short or "", fields, ins, outs, opcode, engine,
//             loc, loop, index, out_box, zero_fill))
//   new_access(cls, storage, offset, pairs) -> cls((storage.sid, offset, pairs, storage))
// `cls` is the record's tuple subclass (Op, Access). An enum member's number is read once per
// member object (int(member)) and kept: members are singletons, and int() of a bound enum calls
// into its binding.
//
// Why C: every recorded instruction makes one op and a few accesses, and a Python function
// that builds a tuple costs a Python frame and an intermediate tuple.
#include "trace_record.h"

#include "bindings.h"
#include "trace_slotted.h"

#include <unordered_map>

namespace nxs::py_bind {
namespace {

std::unordered_map<PyObject*, PyObject*> memberNumbers;  // member -> int (both referenced)
PyObject* shortName = nullptr;                           // "short" (interned)
PyObject* sidName = nullptr;                             // "sid" (interned)

PyObject* numberOf(PyObject* member) {
  if (PyLong_CheckExact(member)) return Py_NewRef(member);
  auto known = memberNumbers.find(member);
  if (known != memberNumbers.end()) return Py_NewRef(known->second);
  PyObject* number = PyNumber_Long(member);
  if (number == nullptr) return nullptr;
  memberNumbers.emplace(Py_NewRef(member), Py_NewRef(number));
  return number;
}

// An instance of the tuple subclass `cls` holding `items` (references stolen; null items are
// errors already set).
PyObject* tupleOf(PyObject* cls, PyObject** items, Py_ssize_t n) {
  PyObject* t = nullptr;
  bool ok = true;
  for (Py_ssize_t i = 0; i < n; ++i) ok = ok && items[i] != nullptr;
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &PyTuple_Type)) {
    if (ok) PyErr_SetString(PyExc_TypeError, "the record's class must be a tuple subclass");
    ok = false;
  }
  if (ok) t = reinterpret_cast<PyTypeObject*>(cls)->tp_alloc(reinterpret_cast<PyTypeObject*>(cls), n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (t != nullptr)
      PyTuple_SET_ITEM(t, i, items[i]);
    else
      Py_XDECREF(items[i]);
  }
  return t;
}

PyObject* newOp(PyObject*, PyObject* const* args, Py_ssize_t nargs) { return newOpRecord(args, nargs); }

PyObject* newAccess(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "new_access(cls, storage, offset, pairs)");
    return nullptr;
  }
  return newAccessRecord(args[0], args[1], args[2], args[3]);
}

PyMethodDef newOpDef = {"new_op", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(newOp)),
                        METH_FASTCALL,
                        "new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, "
                        "zero_fill=False): an op record (see neuronxsim.nki.record.new_op)."};
PyMethodDef newAccessDef = {"new_access",
                            reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(newAccess)),
                            METH_FASTCALL,
                            "new_access(cls, storage, offset, pairs): an access record "
                            "(see neuronxsim.nki.record.new_access)."};

void bindRecord(py::module_& m) {
  shortName = PyUnicode_InternFromString("short");
  sidName = PyUnicode_InternFromString("sid");
  if (shortName == nullptr || sidName == nullptr) throw py::error_already_set();
  m.attr("new_op") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&newOpDef, nullptr, nullptr));
  m.attr("new_access") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&newAccessDef, nullptr, nullptr));
  py::dict op, access;
  const char* opNames[] = {"opcode_number", "engine_number", "source", "fields", "ins", "outs", "opcode",
                           "engine", "loc", "loop", "index", "out_box", "zero_fill"};
  for (Py_ssize_t i = 0; i < op_pos::size; ++i) op[opNames[i]] = i;
  const char* accessNames[] = {"sid", "offset", "pairs", "storage"};
  for (Py_ssize_t i = 0; i < access_pos::size; ++i) access[accessNames[i]] = i;
  m.attr("RECORD_POSITIONS") = py::dict(py::arg("Op") = op, py::arg("Access") = access);
}

NXS_REGISTER_SUBMODULE(nki, 43, "the NKI tracer's hot paths", bindRecord);

}  // namespace

PyObject* newOpRecord(PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 9 || nargs > 11) {
    PyErr_SetString(PyExc_TypeError,
                    "new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, "
                    "zero_fill=False)");
    return nullptr;
  }
  PyObject* loc = args[6];
  static_assert(op_pos::size == 13 && access_pos::size == 4, "new_op and new_access fill every position, in order");
  PyObject* items[op_pos::size] = {
      numberOf(args[1]),
      numberOf(args[2]),
      loc == Py_None ? PyUnicode_FromStringAndSize("", 0) : slotAttr(loc, shortName),
      Py_NewRef(args[5]),  // fields
      Py_NewRef(args[3]),  // ins
      Py_NewRef(args[4]),  // outs
      Py_NewRef(args[1]),  // opcode
      Py_NewRef(args[2]),  // engine
      Py_NewRef(loc),
      Py_NewRef(args[7]),   // loop
      Py_NewRef(args[8]),   // index
      Py_NewRef(nargs > 9 ? args[9] : Py_None),    // out_box
      Py_NewRef(nargs > 10 ? args[10] : Py_False),  // zero_fill
  };
  return tupleOf(args[0], items, op_pos::size);
}

PyObject* newAccessRecord(PyObject* cls, PyObject* storage, PyObject* offset, PyObject* pairs) {
  PyObject* items[access_pos::size] = {slotAttr(storage, sidName), Py_NewRef(offset), Py_NewRef(pairs),
                                      Py_NewRef(storage)};
  return tupleOf(cls, items, access_pos::size);
}

}  // namespace nxs::py_bind

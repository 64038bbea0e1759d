// Shared helpers of the pybind11 bindings (one extension module, neuronxsim.starfish.lib._core,
// with one submodule per core area).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string_view>
#include <vector>

#include "bir/Enums.h"

namespace nxs::py_bind {

namespace py = pybind11;

void bindErrors(py::module_& m);
// Out of memory as MemoryError, never an abort (out_of_memory.cpp): prepareForOutOfMemory() once
// at import, keepMemoryReserve() again after a std::bad_alloc has been translated.
void prepareForOutOfMemory();
void keepMemoryReserve();

// Each core area binds itself into its own submodule of _core (`_core.bir`, `_core.sim`, ...) by
// registering here from its bind_<area>.cpp, so adding an area touches no shared file:
//   NXS_REGISTER_SUBMODULE(sim, 20, "the tile-engine simulator", bindSim)
// Submodules are bound in increasing `order` (bir is 10 and comes first: others use its types).
// Several binders may register the same submodule name; they fill one submodule. Give each
// registration's binder function its own name.
struct SubmoduleBinder {
  const char* name;
  int order;
  const char* doc;
  void (*bind)(py::module_&);
};
std::vector<SubmoduleBinder>& submoduleBinders();
#define NXS_REGISTER_SUBMODULE(name, order, doc, fn)                                          \
  static const bool nxs_registered_##name##_##fn = (::nxs::py_bind::submoduleBinders().push_back( \
                                                        {#name, order, doc, fn}),                 \
                                                    true)

// Registers a BIR enum under its own name, members spelled as in BIR JSON.
template <class E>
py::enum_<E> bindEnum(py::module_& m) {
  py::enum_<E> e(m, std::string(bir::EnumTraits<E>::kTypeName).c_str());
  const auto& names = bir::EnumTraits<E>::kNames;
  for (size_t i = 0; i < names.size(); ++i) e.value(std::string(names[i]).c_str(), static_cast<E>(i));
  return e;
}

// A pointer into an object owned by `owner`, returned to Python so that it keeps `owner` alive.
template <class T>
py::object borrowed(T* p, py::handle owner) {
  return py::cast(p, py::return_value_policy::reference_internal, owner);
}

}  // namespace nxs::py_bind

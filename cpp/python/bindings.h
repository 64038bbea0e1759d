// Shared helpers of the pybind11 bindings (one extension module, neuronxsim.starfish.lib._core,
// with one submodule per core area).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "bir/Enums.h"
#include "bir/InlineVector.h"

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

// Enums: bindEnum<E>(m, name, names) binds a C++ enum whose members are 0..n-1, named `names`, as
// py::enum_<E> would, with its Python behaviour (tests/bir/test_enum_bindings.py: type, members,
// .name/.value, int conversion, comparisons, hash, pickling, repr/str, docstrings, use as arguments
// and results). py::enum_ compiles about ten pybind11 functions (dispatcher, argument loaders) per
// enum; EnumBinder (bind_enum.cpp) registers the type with py::class_<E> and adds the same methods
// once, as functions over any enum (the enum's type_info is their data), with the signatures
// py::enum_ gives them: a third of the glue batch's compile time for the 15 enums. It uses
// pybind11's internals (cpp_function::initialize_generic, function_record, type_caster_generic), so
// it is compiled with the pybind11 it was written against (3.1, pinned in pyproject.toml) only;
// any other version binds through py::enum_.
// (cmake -DNXS_ENUM_BINDER=OFF forces py::enum_: scripts/test-portable.sh tests the fallback so.)
#ifndef NXS_ENUM_BINDER
#if PYBIND11_VERSION_MAJOR == 3 && PYBIND11_VERSION_MINOR == 1
#define NXS_ENUM_BINDER 1
#else
#define NXS_ENUM_BINDER 0
#endif
#endif

namespace enum_binder {
// What the shared methods need of one enum type (of uint8_t underlying type).
struct EnumType {
  const std::type_info* type;
  void* (*make)(std::uint8_t value);  // a new E holding `value`, for the instance to own
};
// In py::enum_'s order: the type's attributes up to its `value` property, whose getter it returns
// (added by the caller through py::class_, as py::enum_ does); then the rest and the members.
py::cpp_function defineEnumHead(py::handle cls, py::handle scope, const EnumType& type);
void defineEnumTail(py::handle cls, const EnumType& type, const std::string_view* names, size_t count);
}  // namespace enum_binder

template <class E>
void bindEnum(py::module_& m, const char* name, const std::string_view* names, size_t count) {
#if NXS_ENUM_BINDER
  constexpr bool kBinder = std::is_same_v<std::underlying_type_t<E>, std::uint8_t>;
#else
  constexpr bool kBinder = false;
#endif
  if constexpr (kBinder) {
    static const enum_binder::EnumType type{
        &typeid(E), [](std::uint8_t v) -> void* { return new E(static_cast<E>(v)); }};
    py::class_<E> cls(m, name);
    const py::cpp_function value = enum_binder::defineEnumHead(cls, m, type);
    cls.def_property_readonly("value", value, py::return_value_policy::reference_internal, py::pos_only());
    enum_binder::defineEnumTail(cls, type, names, count);
  } else {
    py::enum_<E> e(m, name);
    for (size_t i = 0; i < count; ++i) e.value(std::string(names[i]).c_str(), static_cast<E>(i));
  }
}

// A BIR enum under its own name, members spelled as in BIR JSON.
template <class E>
void bindEnum(py::module_& m) {
  const auto& names = bir::EnumTraits<E>::kNames;
  bindEnum<E>(m, std::string(bir::EnumTraits<E>::kTypeName).c_str(), names.data(), names.size());
}

// A pointer into an object owned by `owner`, returned to Python so that it keeps `owner` alive.
template <class T>
py::object borrowed(T* p, py::handle owner) {
  return py::cast(p, py::return_value_policy::reference_internal, owner);
}

}  // namespace nxs::py_bind

// bir::InlineVector (an access pattern's pairs) converts as std::vector does: a Python list.
namespace pybind11::detail {
template <class T, size_t N>
struct type_caster<bir::InlineVector<T, N>> : list_caster<bir::InlineVector<T, N>, T> {};
}  // namespace pybind11::detail

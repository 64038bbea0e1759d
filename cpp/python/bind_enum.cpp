// EnumBinder (bindings.h, bindEnum): the methods py::enum_<E> gives an enum type, written once for
// every enum of uint8_t underlying type. Each is a pybind11 function whose data is the enum's
// EnumType and whose signature is the one py::enum_'s would have (pybind11 writes it from the
// signature of the same C++ function with `Self` for the enum, then names the enum's registered
// type in its place), so that docstrings, stubs and argument errors stay the same.
#include <string>
#include <typeindex>
#include <vector>

#include "bindings.h"

#if NXS_ENUM_BINDER

namespace nxs::py_bind::enum_binder {
namespace {

namespace pyd = py::detail;
using Impl = py::handle (*)(pyd::function_call&);

struct Self {};  // the enum, in signatures

// The signature text pybind11 writes for Ret(Args...) and the types it names.
template <class Ret, class... Args>
struct Signature {
  using Sig = pyd::ReadableFunctionSignature<pyd::argument_loader<Args...>,
                                             pyd::make_caster<std::conditional_t<std::is_void_v<Ret>, pyd::void_type, Ret>>>;
  static constexpr size_t kArgs = sizeof...(Args);
  static const char* text() { return Sig::kSig.text; }
  static const auto& types() { return Sig::kTypes; }
};

// A pybind11 function of signature `Sig` (with the enum for Self) calling `impl` with the enum's
// EnumType as its data, the attributes `extra` applied as cpp_function's constructor applies them.
class Method : public py::cpp_function {
 public:
  template <class Sig, class... Extra>
  Method(Sig, Impl impl, const EnumType& type, const Extra&... extra) {
    auto rec = make_function_record();
    rec->impl = impl;
    rec->data[0] = const_cast<EnumType*>(&type);
    rec->nargs_pos = static_cast<std::uint16_t>(Sig::kArgs);
    rec->has_args = false;
    rec->has_kwargs = false;
    pyd::process_attributes<Extra...>::init(extra..., rec.get());
    std::vector<const std::type_info*> types(Sig::types().begin(), Sig::types().end());
    for (auto& t : types)
      if (t && *t == typeid(Self)) t = type.type;
    initialize_generic(std::move(rec), Sig::text(), types.data(), Sig::kArgs);
  }
};

const EnumType& typeOf(const pyd::function_call& call) { return *static_cast<const EnumType*>(call.func.data[0]); }

// Argument i as the enum, by type_caster_base's rules (the enum's instances; None in the second,
// converting pass, as a null pointer). False: not one, try the next overload.
bool loadEnum(pyd::function_call& call, size_t i, const std::uint8_t** out) {
  pyd::type_caster_generic caster(*typeOf(call).type);
  if (!caster.load(call.args[i], call.args_convert[i])) return false;
  *out = static_cast<const std::uint8_t*>(caster.value);
  return true;
}
// ... and by value: an instance without a value is a reference_cast_error, as for py::enum_.
bool loadEnumValue(pyd::function_call& call, size_t i, std::uint8_t* out) {
  const std::uint8_t* p = nullptr;
  if (!loadEnum(call, i, &p)) return false;
  if (!p) throw py::reference_cast_error();
  *out = *p;
  return true;
}

py::handle toInt(std::uint8_t v) { return pyd::make_caster<std::uint8_t>::cast(v, py::return_value_policy::move, {}); }
py::handle toBool(bool v) { return py::bool_(v).release(); }

// __init__(self, value) and __setstate__(self, state): a new-style constructor (argument 0 is the
// instance's value_and_holder); the instance owns a new E, as py::init's factory makes it.
py::handle construct(pyd::function_call& call) {
  auto& v_h = *reinterpret_cast<pyd::value_and_holder*>(call.args[0].ptr());
  pyd::make_caster<std::uint8_t> value;
  if (!value.load(call.args[1], call.args_convert[1])) return PYBIND11_TRY_NEXT_OVERLOAD;
  v_h.value_ptr() = typeOf(call).make(static_cast<std::uint8_t>(value));
  return py::none().release();
}

py::handle toScalar(pyd::function_call& call) {  // __int__, __index__, value
  std::uint8_t v;
  if (!loadEnumValue(call, 0, &v)) return PYBIND11_TRY_NEXT_OVERLOAD;
  return toInt(v);
}

template <bool kEqual>
py::handle compareSameType(pyd::function_call& call) {  // __eq__/__ne__(self, other: E | None)
  std::uint8_t a;
  const std::uint8_t* b = nullptr;
  if (!loadEnumValue(call, 0, &a) || !loadEnum(call, 1, &b)) return PYBIND11_TRY_NEXT_OVERLOAD;
  return toBool(kEqual ? (b && a == *b) : (!b || a != *b));
}

template <bool kEqual>
py::handle compareOtherType(pyd::function_call& call) {  // __eq__/__ne__(self, other: object)
  std::uint8_t a;
  if (!loadEnumValue(call, 0, &a) || !call.args[1]) return PYBIND11_TRY_NEXT_OVERLOAD;
  return toBool(!kEqual);
}

void addMethod(py::handle cls, const char* name, const py::cpp_function& f) {
  py::object c = py::reinterpret_borrow<py::object>(cls);
  pyd::add_class_method(c, name, f);
}

}  // namespace

py::cpp_function defineEnumHead(py::handle cls, py::handle scope, const EnumType& type) {
  if (pyd::global_internals_native_enum_type_map_contains(std::type_index(*type.type)))  // as py::enum_
    py::pybind11_fail("pybind11::enum_ \"" + std::string(py::str(cls.attr("__name__"))) +
                      "\" is already registered as a pybind11::native_enum!");
  pyd::enum_base base(cls, scope);
  base.init(/*is_arithmetic=*/false, /*is_convertible=*/false);  // enum classes, not arithmetic
  addMethod(cls, "__init__",
            Method(Signature<void, pyd::value_and_holder&, std::uint8_t>{}, construct, type, py::name("__init__"),
                   py::is_method(cls), py::sibling(py::getattr(cls, "__init__", py::none())),
                   pyd::is_new_style_constructor(), py::arg("value")));
  const Method value(Signature<std::uint8_t, Self>{}, toScalar, type);
  py::cpp_function getter;
  static_cast<py::object&>(getter) = value;  // the same function object, as a plain cpp_function
  return getter;
}

void defineEnumTail(py::handle cls, const EnumType& type, const std::string_view* names, size_t count) {
  auto def = [&](const char* name, auto sig, Impl impl) {
    addMethod(cls, name, Method(sig, impl, type, py::name(name), py::is_method(cls),
                                py::sibling(py::getattr(cls, name, py::none())), py::arg("other"), py::pos_only()));
  };
  def("__eq__", Signature<bool, Self, Self*>{}, compareSameType<true>);
  def("__ne__", Signature<bool, Self, Self*>{}, compareSameType<false>);
  def("__eq__", Signature<bool, Self, const py::object&>{}, compareOtherType<true>);
  def("__ne__", Signature<bool, Self, const py::object&>{}, compareOtherType<false>);
  for (const char* name : {"__int__", "__index__"})
    addMethod(cls, name, Method(Signature<std::uint8_t, Self>{}, toScalar, type, py::name(name), py::is_method(cls),
                                py::sibling(py::getattr(cls, name, py::none())), py::pos_only()));
  py::setattr(cls, "__setstate__",
              Method(Signature<void, pyd::value_and_holder&, std::uint8_t>{}, construct, type,
                     pyd::is_new_style_constructor(), py::name("__setstate__"), py::is_method(cls), py::arg("state"),
                     py::pos_only()));
  pyd::enum_base base(cls, py::none());
  for (size_t i = 0; i < count; ++i) base.value(std::string(names[i]).c_str(), cls(i), nullptr);
}

}  // namespace nxs::py_bind::enum_binder

#endif  // NXS_ENUM_BINDER

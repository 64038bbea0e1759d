// Generated enums (see Enums.def) and their name <-> value traits.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "Enums.def"

namespace bir {

#define BIR_ENUM_MEMBER(v) v,
#define BIR_DECLARE_ENUM(E) enum class E : uint8_t { BIR_ENUM_##E(BIR_ENUM_MEMBER) };
BIR_ENUMS(BIR_DECLARE_ENUM)
#undef BIR_DECLARE_ENUM

enum class DTypeClass : uint8_t { Float, Int, UInt };
#define BIR_DTYPE_MEMBER(name, bytes, cls) name,
enum class DType : uint8_t { BIR_DTYPES(BIR_DTYPE_MEMBER) };
#undef BIR_DTYPE_MEMBER

template <class E>
struct EnumTraits;

#define BIR_ENUM_NAME(v) #v,
#define BIR_ENUM_COUNT(v) +1
#define BIR_DECLARE_TRAITS(E)                                                   \
  template <>                                                                   \
  struct EnumTraits<E> {                                                        \
    static constexpr std::string_view kTypeName = #E;                           \
    static constexpr int kCount = 0 BIR_ENUM_##E(BIR_ENUM_COUNT);              \
    static constexpr std::array<std::string_view, kCount> kNames = {            \
        BIR_ENUM_##E(BIR_ENUM_NAME)};                                           \
  };
BIR_ENUMS(BIR_DECLARE_TRAITS)
#undef BIR_DECLARE_TRAITS

#define BIR_DTYPE_NAME(name, bytes, cls) #name,
#define BIR_DTYPE_COUNT(name, bytes, cls) +1
template <>
struct EnumTraits<DType> {
  static constexpr std::string_view kTypeName = "DType";
  static constexpr int kCount = 0 BIR_DTYPES(BIR_DTYPE_COUNT);
  static constexpr std::array<std::string_view, kCount> kNames = {BIR_DTYPES(BIR_DTYPE_NAME)};
};
#undef BIR_DTYPE_NAME
#undef BIR_DTYPE_COUNT
#undef BIR_ENUM_NAME
#undef BIR_ENUM_COUNT
#undef BIR_ENUM_MEMBER

// Whether E is one of the enums above (has EnumTraits): what the JSON and binary readers and
// writers spell by name or ordinal.
template <class E, class = void>
struct IsBirEnum : std::false_type {};
template <class E>
struct IsBirEnum<E, std::void_t<decltype(EnumTraits<E>::kNames)>> : std::true_type {};

template <class E>
std::string_view enumName(E v) {
  const auto i = static_cast<size_t>(v);
  return i < EnumTraits<E>::kNames.size() ? EnumTraits<E>::kNames[i] : std::string_view("?");
}

// Name -> value; false when the name is not a member.
template <class E>
bool enumFromName(std::string_view name, E* out) {
  const auto& names = EnumTraits<E>::kNames;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) {
      *out = static_cast<E>(i);
      return true;
    }
  return false;
}

// "a, b, c": the members, for error messages.
template <class E>
std::string enumMemberList() {
  std::string s;
  for (auto n : EnumTraits<E>::kNames) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

constexpr int dtypeSize(DType t) {
#define BIR_DTYPE_SIZE(name, bytes, cls) \
  case DType::name:                      \
    return bytes;
  switch (t) { BIR_DTYPES(BIR_DTYPE_SIZE) }
#undef BIR_DTYPE_SIZE
  return 0;
}

constexpr DTypeClass dtypeClass(DType t) {
#define BIR_DTYPE_CLASS(name, bytes, cls) \
  case DType::name:                       \
    return DTypeClass::cls;
  switch (t) { BIR_DTYPES(BIR_DTYPE_CLASS) }
#undef BIR_DTYPE_CLASS
  return DTypeClass::Float;
}

constexpr bool isFloat(DType t) { return dtypeClass(t) == DTypeClass::Float; }

}  // namespace bir

// A strict, allocation-light JSON document for the BIR JSON reader's common case.
//
// moduleFromJson reads a module twice only when something is wrong: first from this document,
// then, if the document declines the text or the module reader refuses it, from nlohmann's, whose
// messages are the reader's. So this parser need not word errors; it must only never accept a
// text nlohmann refuses, and give every value it accepts exactly as nlohmann would (same type,
// same number). It declines (parse returns false) anything outside a plain subset:
//   * strings with an escape, a control byte or any byte above 0x7F (nlohmann decodes escapes and
//     checks UTF-8; keys and names in BIR JSON are plain ASCII),
//   * integers of more than 18 digits (nlohmann falls back to a double past 64 bits),
//   * non-finite numbers (nlohmann's "number overflow"), an object with a repeated key,
//   * anything that is not JSON (a byte-order mark, trailing text, ...).
// Strings are views into the text, which must outlive the document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bir::json {

struct Member;

class Value {
 public:
  enum class Type : uint8_t { Null, Boolean, Integer, Unsigned, Float, String, Array, Object };

  bool is_null() const { return type_ == Type::Null; }
  bool is_boolean() const { return type_ == Type::Boolean; }
  bool is_number_unsigned() const { return type_ == Type::Unsigned; }
  bool is_number_integer() const { return type_ == Type::Integer || type_ == Type::Unsigned; }
  bool is_number() const { return is_number_integer() || type_ == Type::Float; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }
  // nlohmann's names, for the (discarded) messages of a refused module.
  const char* type_name() const;

  bool boolean() const { return boolean_; }
  int64_t integer() const { return integer_; }
  uint64_t unsignedInteger() const { return static_cast<uint64_t>(integer_); }
  double number() const;
  std::string_view string() const { return text_; }

  // Arrays: elements; objects: members (in document order; none for other values).
  size_t size() const { return size_; }
  const Value& operator[](size_t i) const { return items_[i]; }
  const Member* begin() const { return members_; }
  const Member* end() const;
  // The member named `key`, or null (also for a value that is no object).
  const Value* find(std::string_view key) const;

 private:
  friend class Parser;
  Type type_ = Type::Null;
  bool boolean_ = false;
  uint32_t size_ = 0;
  int64_t integer_ = 0;  // Integer, Unsigned (as bits)
  double float_ = 0;
  std::string_view text_;
  const Value* items_ = nullptr;
  const Member* members_ = nullptr;
};

struct Member {
  std::string_view key;
  Value value;
};

inline const Member* Value::end() const { return is_object() ? members_ + size_ : members_; }

class Document {
 public:
  // Reads `text` (nesting already bounded by the caller); false when it declines the text.
  bool parse(std::string_view text);
  const Value& root() const { return root_; }

 private:
  friend class Parser;
  Value root_;
  // Finished arrays' elements and objects' members, in blocks that never move.
  std::vector<std::unique_ptr<Value[]>> valueBlocks_;
  std::vector<std::unique_ptr<Member[]>> memberBlocks_;
};

}  // namespace bir::json

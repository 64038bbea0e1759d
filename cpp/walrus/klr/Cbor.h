// A small, strict CBOR (RFC 8949) reader and writer for KLR files.
//
// The reader decodes one data item at a time into a tree of Items that remember the byte offset
// of their head, so every later error can say where the problem is. It accepts exactly what KLR
// writes: definite lengths only, integers up to 64 bits, text and byte strings, arrays, maps,
// tags, false/true/null, float32 and float64. Everything else (indefinite lengths, reserved
// additional-information values, float16, other simple values, invalid UTF-8, lengths longer than
// the input, nesting deeper than the limit) is refused with klr::KLRError naming the byte offset.
//
// The writer encodes an Item tree with the shortest head for every length and value (canonical
// CBOR), which is also how KLR's own serializers write.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace klr::cbor {

enum class Type : uint8_t { Unsigned, Negative, Bytes, Text, Array, Map, Tag, Bool, Null, Float };

const char* typeName(Type t);

struct Item {
  Type type = Type::Null;
  uint64_t offset = 0;      // byte offset of the item's head in the decoded input (0 when built)
  uint64_t value = 0;       // Unsigned: the value; Negative: the integer is -1 - value;
                            // Tag: the tag number; Bool: 0 or 1
  double number = 0.0;      // Float
  uint8_t float_bytes = 0;  // Float: 4 (float32) or 8 (float64)
  std::string bytes;        // Text (valid UTF-8) or Bytes
  std::vector<Item> items;  // Array: the elements; Map: key, value, key, value...; Tag: the content

  bool isTag() const { return type == Type::Tag; }
  const Item& tagged() const { return items.front(); }  // Tag only
};

// ---- building items ----
Item unsignedInt(uint64_t v);
Item integer(int64_t v);
Item text(std::string s);
Item array(std::vector<Item> elements);
Item tag(uint64_t number, Item content);
Item boolean(bool v);
Item float32(float v);
Item float64(double v);

// ---- encoding ----
void encodeTo(const Item& item, std::string& out);
std::string encode(const Item& item);

// ---- decoding ----

// Some producers write a record's array header with a count that is larger than the number of
// items that follow (KLR counts zero-size proof fields, see KlrValue.h). A quirk tells the decoder
// that an array directly inside tag `tag` declaring `declared` elements holds `actual` of them.
struct CountQuirk {
  uint64_t tag;
  uint64_t declared;  // below 24: a one-byte array head
  uint64_t actual;
};

struct DecodeOptions {
  int max_depth = 256;                 // arrays, maps and tags nested in one another
  std::vector<CountQuirk> count_quirks;
};

class Decoder {
 public:
  Decoder(std::string_view data, DecodeOptions options = {});

  // Decodes the next data item. Throws klr::KLRError ("byte N: ...") on malformed input.
  Item next();
  bool atEnd() const { return pos_ == data_.size(); }
  bool startsWith(std::string_view prefix) const { return data_.substr(pos_).starts_with(prefix); }
  uint64_t position() const { return pos_; }

 private:
  Item decode(int depth, int64_t forcedCount);
  uint64_t readArgument(uint8_t info, uint64_t headOffset, const char* what);
  void need(uint64_t n, uint64_t headOffset, const char* what) const;
  uint8_t byte();

  std::string_view data_;
  DecodeOptions options_;
  uint64_t pos_ = 0;
};

// "byte N: message": the form of every decoding error.
[[noreturn]] void failAt(uint64_t offset, const std::string& message);

}  // namespace klr::cbor

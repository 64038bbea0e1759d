#include "walrus/klr/Cbor.h"

#include <cstring>

#include "bir/Error.h"

namespace klr::cbor {
namespace {

enum Major : uint8_t {
  kUnsigned = 0,
  kNegative = 1,
  kBytes = 2,
  kText = 3,
  kArray = 4,
  kMap = 5,
  kTag = 6,
  kSimple = 7,
};

void appendHead(std::string& out, uint8_t major, uint64_t arg) {
  const auto m = static_cast<uint8_t>(major << 5);
  auto push = [&](uint8_t b) { out.push_back(static_cast<char>(b)); };
  if (arg < 24) return push(m | static_cast<uint8_t>(arg));
  int n;
  uint8_t info;
  if (arg <= 0xff) {
    n = 1, info = 24;
  } else if (arg <= 0xffff) {
    n = 2, info = 25;
  } else if (arg <= 0xffffffffu) {
    n = 4, info = 26;
  } else {
    n = 8, info = 27;
  }
  push(m | info);
  for (int i = n - 1; i >= 0; --i) push(static_cast<uint8_t>(arg >> (8 * i)));
}

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF are invalid, as RFC 3629 says).
size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((b0 & 0xe0) == 0xc0) {
    n = 2, cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3, cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

}  // namespace

const char* typeName(Type t) {
  switch (t) {
    case Type::Unsigned: return "unsigned integer";
    case Type::Negative: return "negative integer";
    case Type::Bytes: return "byte string";
    case Type::Text: return "text string";
    case Type::Array: return "array";
    case Type::Map: return "map";
    case Type::Tag: return "tag";
    case Type::Bool: return "boolean";
    case Type::Null: return "null";
    case Type::Float: return "float";
  }
  return "?";
}

void failAt(uint64_t offset, const std::string& message) {
  throw KLRError("byte " + std::to_string(offset) + ": " + message);
}

// ---- building ----

Item unsignedInt(uint64_t v) {
  Item it;
  it.type = Type::Unsigned;
  it.value = v;
  return it;
}

Item integer(int64_t v) {
  if (v >= 0) return unsignedInt(static_cast<uint64_t>(v));
  Item it;
  it.type = Type::Negative;
  it.value = static_cast<uint64_t>(-(v + 1));
  return it;
}

Item text(std::string s) {
  Item it;
  it.type = Type::Text;
  it.bytes = std::move(s);
  return it;
}

Item array(std::vector<Item> elements) {
  Item it;
  it.type = Type::Array;
  it.items = std::move(elements);
  return it;
}

Item tag(uint64_t number, Item content) {
  Item it;
  it.type = Type::Tag;
  it.value = number;
  it.items.push_back(std::move(content));
  return it;
}

Item boolean(bool v) {
  Item it;
  it.type = Type::Bool;
  it.value = v ? 1 : 0;
  return it;
}

Item float32(float v) {
  Item it;
  it.type = Type::Float;
  it.number = v;
  it.float_bytes = 4;
  return it;
}

Item float64(double v) {
  Item it;
  it.type = Type::Float;
  it.number = v;
  it.float_bytes = 8;
  return it;
}

// ---- encoding ----

void encodeTo(const Item& it, std::string& out) {
  switch (it.type) {
    case Type::Unsigned: return appendHead(out, kUnsigned, it.value);
    case Type::Negative: return appendHead(out, kNegative, it.value);
    case Type::Bytes:
    case Type::Text:
      appendHead(out, it.type == Type::Text ? kText : kBytes, it.bytes.size());
      out += it.bytes;
      return;
    case Type::Array:
      appendHead(out, kArray, it.items.size());
      for (const Item& e : it.items) encodeTo(e, out);
      return;
    case Type::Map:
      appendHead(out, kMap, it.items.size() / 2);
      for (const Item& e : it.items) encodeTo(e, out);
      return;
    case Type::Tag:
      appendHead(out, kTag, it.value);
      encodeTo(it.items.at(0), out);
      return;
    case Type::Bool: return appendHead(out, kSimple, it.value ? 21 : 20);
    case Type::Null: return appendHead(out, kSimple, 22);
    case Type::Float: {
      uint64_t bits;
      int n;
      if (it.float_bytes == 4) {
        const auto f = static_cast<float>(it.number);
        uint32_t b32;
        std::memcpy(&b32, &f, 4);
        bits = b32, n = 4;
        out.push_back(static_cast<char>(0xfa));
      } else {
        std::memcpy(&bits, &it.number, 8);
        n = 8;
        out.push_back(static_cast<char>(0xfb));
      }
      for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<char>(bits >> (8 * i)));
      return;
    }
  }
}

std::string encode(const Item& item) {
  std::string out;
  encodeTo(item, out);
  return out;
}

// ---- decoding ----

Decoder::Decoder(std::string_view data, DecodeOptions options)
    : data_(data), options_(std::move(options)) {}

Item Decoder::next() {
  if (atEnd()) failAt(pos_, "expected a CBOR data item, found the end of the input");
  return decode(0, -1);
}

uint8_t Decoder::byte() { return static_cast<uint8_t>(data_[pos_++]); }

void Decoder::need(uint64_t n, uint64_t headOffset, const char* what) const {
  if (n > data_.size() - pos_)
    failAt(headOffset, std::string("truncated ") + what + ": it needs " + std::to_string(n) +
                           " more byte(s) but the input ends after " +
                           std::to_string(data_.size() - pos_));
}

uint64_t Decoder::readArgument(uint8_t info, uint64_t headOffset, const char* what) {
  if (info < 24) return info;
  if (info >= 28) {
    if (info == 31)
      failAt(headOffset, std::string("indefinite-length ") + what +
                             " (KLR writes definite lengths only)");
    failAt(headOffset, "reserved additional information " + std::to_string(info));
  }
  const uint64_t n = uint64_t{1} << (info - 24);
  need(n, headOffset, what);
  uint64_t v = 0;
  for (uint64_t i = 0; i < n; ++i) v = (v << 8) | byte();
  return v;
}

// `forcedCount` >= 0 when the enclosing tag has a count quirk (see CountQuirk): an array item
// then holds that many elements whatever its head declares.
Item Decoder::decode(int depth, int64_t forcedCount) {
  Item it;
  it.offset = pos_;
  need(1, pos_, "data item");
  const uint8_t head = byte();
  const uint8_t major = head >> 5, info = head & 0x1f;
  static const char* kMajorNames[] = {"unsigned integer", "negative integer", "byte string",
                                      "text string", "array", "map", "tag", "simple value"};
  if (major == kSimple) {
    switch (info) {
      case 20:
      case 21:
        it.type = Type::Bool;
        it.value = info == 21;
        return it;
      case 22:
        it.type = Type::Null;
        return it;
      case 26:
      case 27: {
        const uint64_t n = info == 26 ? 4 : 8;
        need(n, it.offset, "float");
        uint64_t bits = 0;
        for (uint64_t i = 0; i < n; ++i) bits = (bits << 8) | byte();
        it.type = Type::Float;
        it.float_bytes = static_cast<uint8_t>(n);
        if (n == 4) {
          const auto b32 = static_cast<uint32_t>(bits);
          float f;
          std::memcpy(&f, &b32, 4);
          it.number = f;
        } else {
          std::memcpy(&it.number, &bits, 8);
        }
        return it;
      }
      case 25:
        failAt(it.offset, "float16 value (KLR writes float32 and float64 only)");
      case 31:
        failAt(it.offset, "unexpected break code 0xff (KLR writes definite lengths only)");
      default:
        failAt(it.offset, "unsupported simple value (head byte 0x" +
                              std::string(1, "0123456789abcdef"[head >> 4]) +
                              std::string(1, "0123456789abcdef"[head & 15]) + ")");
    }
  }
  const uint64_t arg = readArgument(info, it.offset, kMajorNames[major]);
  switch (major) {
    case kUnsigned:
    case kNegative:
      it.type = major == kUnsigned ? Type::Unsigned : Type::Negative;
      it.value = arg;
      return it;
    case kBytes:
    case kText: {
      need(arg, it.offset, kMajorNames[major]);
      it.type = major == kText ? Type::Text : Type::Bytes;
      it.bytes.assign(data_.substr(pos_, arg));
      if (it.type == Type::Text) {
        for (size_t i = 0; i < it.bytes.size();) {
          const size_t n = utf8SequenceLength(it.bytes, i);
          if (n == 0)
            failAt(pos_ + i, "text string starting at byte " + std::to_string(it.offset) +
                                 " is not valid UTF-8");
          i += n;
        }
      }
      pos_ += arg;
      return it;
    }
    case kArray:
    case kMap: {
      if (depth >= options_.max_depth)
        failAt(it.offset, "nesting is deeper than " + std::to_string(options_.max_depth) + " levels");
      it.type = major == kArray ? Type::Array : Type::Map;
      uint64_t count = arg;
      if (major == kArray && forcedCount >= 0) count = static_cast<uint64_t>(forcedCount);
      // Every element takes at least one byte: refuse impossible counts before allocating.
      const uint64_t perElement = major == kMap ? 2 : 1;
      if (count > (data_.size() - pos_) / perElement)
        failAt(it.offset, std::string(kMajorNames[major]) + " of " + std::to_string(arg) +
                              " element(s) cannot fit in the " +
                              std::to_string(data_.size() - pos_) + " byte(s) that remain");
      it.items.reserve(count * perElement);
      for (uint64_t i = 0; i < count * perElement; ++i) it.items.push_back(decode(depth + 1, -1));
      return it;
    }
    case kTag: {
      if (depth >= options_.max_depth)
        failAt(it.offset, "nesting is deeper than " + std::to_string(options_.max_depth) + " levels");
      it.type = Type::Tag;
      it.value = arg;
      int64_t actual = -1;
      for (const CountQuirk& q : options_.count_quirks)
        if (q.tag == arg && q.declared < 24 && pos_ < data_.size() &&
            static_cast<uint8_t>(data_[pos_]) == (0x80 | q.declared))
          actual = static_cast<int64_t>(q.actual);
      it.items.push_back(decode(depth + 1, actual));
      return it;
    }
  }
  failAt(it.offset, "unreachable CBOR major type");
}

}  // namespace klr::cbor

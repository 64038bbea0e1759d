#include "JsonDocument.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace bir::json {

const char* Value::type_name() const {
  switch (type_) {
    case Type::Null: return "null";
    case Type::Boolean: return "boolean";
    case Type::Integer:
    case Type::Unsigned:
    case Type::Float: return "number";
    case Type::String: return "string";
    case Type::Array: return "array";
    case Type::Object: return "object";
  }
  return "?";
}

double Value::number() const {
  if (type_ == Type::Integer) return static_cast<double>(integer_);
  if (type_ == Type::Unsigned) return static_cast<double>(unsignedInteger());
  return float_;
}

const Value* Value::find(std::string_view key) const {
  for (const Member* m = begin(); m != end(); ++m)
    if (m->key == key) return &m->value;
  return nullptr;
}

namespace {
struct Decline {};  // thrown inside the parser only
}  // namespace

class Parser {
 public:
  Parser(std::string_view text, Document& doc) : s_(text.data()), end_(text.data() + text.size()), doc_(doc) {}

  void run() {
    value(doc_.root_);
    skipSpace();
    if (s_ != end_) throw Decline{};
  }

 private:
  const char* s_;
  const char* end_;
  Document& doc_;
  // Containers being read, innermost last; their finished children wait here.
  std::vector<Value> valueStack_;
  std::vector<Member> memberStack_;
  size_t valueFree_ = 0, memberFree_ = 0;  // room left in the newest block

  void skipSpace() {
    while (s_ != end_ && (*s_ == ' ' || *s_ == '\n' || *s_ == '\r' || *s_ == '\t')) ++s_;
  }
  char peek() const {
    if (s_ == end_) throw Decline{};
    return *s_;
  }

  std::string_view string() {
    ++s_;  // the opening quote
    const char* start = s_;
    while (true) {
      if (s_ == end_) throw Decline{};
      const unsigned char c = static_cast<unsigned char>(*s_);
      if (c == '"') break;
      if (c == '\\' || c < 0x20 || c > 0x7F) throw Decline{};
      ++s_;
    }
    std::string_view out(start, static_cast<size_t>(s_ - start));
    ++s_;
    return out;
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  void number(Value& v) {
    const char* start = s_;
    const bool negative = *s_ == '-';
    if (negative) ++s_;
    if (s_ == end_ || !digit(*s_)) throw Decline{};
    if (*s_ == '0') {
      ++s_;
      if (s_ != end_ && digit(*s_)) throw Decline{};  // a leading zero
    } else {
      while (s_ != end_ && digit(*s_)) ++s_;
    }
    bool isFloat = false;
    if (s_ != end_ && *s_ == '.') {
      isFloat = true;
      ++s_;
      if (s_ == end_ || !digit(*s_)) throw Decline{};
      while (s_ != end_ && digit(*s_)) ++s_;
    }
    if (s_ != end_ && (*s_ == 'e' || *s_ == 'E')) {
      isFloat = true;
      ++s_;
      if (s_ != end_ && (*s_ == '+' || *s_ == '-')) ++s_;
      if (s_ == end_ || !digit(*s_)) throw Decline{};
      while (s_ != end_ && digit(*s_)) ++s_;
    }
    if (isFloat) {
      double d = 0;
      const auto r = std::from_chars(start, s_, d);
      if (r.ec != std::errc() || r.ptr != s_ || !std::isfinite(d)) throw Decline{};
      v.type_ = Value::Type::Float;
      v.float_ = d;
      return;
    }
    const char* digits = negative ? start + 1 : start;
    if (s_ - digits > 18) throw Decline{};
    int64_t x = 0;
    for (const char* p = digits; p != s_; ++p) x = x * 10 + (*p - '0');
    v.type_ = negative ? Value::Type::Integer : Value::Type::Unsigned;
    v.integer_ = negative ? -x : x;
  }

  void literal(std::string_view word) {
    if (static_cast<size_t>(end_ - s_) < word.size() || std::memcmp(s_, word.data(), word.size()) != 0)
      throw Decline{};
    s_ += word.size();
  }

  void value(Value& v) {
    skipSpace();
    switch (peek()) {
      case '{': return object(v);
      case '[': return array(v);
      case '"':
        v.type_ = Value::Type::String;
        v.text_ = string();
        return;
      case 't':
        literal("true");
        v.type_ = Value::Type::Boolean;
        v.boolean_ = true;
        return;
      case 'f':
        literal("false");
        v.type_ = Value::Type::Boolean;
        return;
      case 'n':
        literal("null");
        return;
      default: return number(v);
    }
  }

  void array(Value& v) {
    ++s_;
    v.type_ = Value::Type::Array;
    const size_t first = valueStack_.size();
    skipSpace();
    if (peek() == ']') {
      ++s_;
    } else {
      while (true) {
        Value item;
        value(item);  // a nested container leaves the stack as it found it
        valueStack_.push_back(item);
        skipSpace();
        const char c = peek();
        ++s_;
        if (c == ']') break;
        if (c != ',') throw Decline{};
      }
    }
    const size_t n = valueStack_.size() - first;
    v.size_ = static_cast<uint32_t>(n);
    v.items_ = store(doc_.valueBlocks_, valueFree_, valueStack_.data() + first, n);
    valueStack_.resize(first);
  }

  void object(Value& v) {
    ++s_;
    v.type_ = Value::Type::Object;
    const size_t first = memberStack_.size();
    skipSpace();
    if (peek() == '}') {
      ++s_;
    } else {
      while (true) {
        skipSpace();
        if (peek() != '"') throw Decline{};
        Member m;
        m.key = string();
        skipSpace();
        if (peek() != ':') throw Decline{};
        ++s_;
        value(m.value);
        for (size_t i = first; i < memberStack_.size(); ++i)
          if (memberStack_[i].key == m.key) throw Decline{};  // nlohmann keeps the last of a repeated key
        memberStack_.push_back(m);
        skipSpace();
        const char c = peek();
        ++s_;
        if (c == '}') break;
        if (c != ',') throw Decline{};
      }
    }
    const size_t n = memberStack_.size() - first;
    v.size_ = static_cast<uint32_t>(n);
    v.members_ = store(doc_.memberBlocks_, memberFree_, memberStack_.data() + first, n);
    memberStack_.resize(first);
  }

  // Copies n finished children into the document's blocks.
  template <class T>
  static const T* store(std::vector<std::unique_ptr<T[]>>& blocks, size_t& free, const T* from, size_t n) {
    if (n == 0) return nullptr;
    constexpr size_t kBlock = 4096;
    if (n > free) {
      // A child list longer than a block gets a block of its own (the current one stays open).
      if (n >= kBlock) {
        auto own = std::make_unique<T[]>(n);
        T* out = own.get();
        std::copy(from, from + n, out);
        blocks.insert(blocks.end() - (blocks.empty() ? 0 : 1), std::move(own));
        return out;
      }
      blocks.push_back(std::make_unique<T[]>(kBlock));
      free = kBlock;
    }
    T* out = blocks.back().get() + (kBlock - free);
    std::copy(from, from + n, out);
    free -= n;
    return out;
  }
};

bool Document::parse(std::string_view text) {
  root_ = Value();
  valueBlocks_.clear();
  memberBlocks_.clear();
  try {
    Parser(text, *this).run();
    return true;
  } catch (const Decline&) {
    return false;
  }
}

}  // namespace bir::json

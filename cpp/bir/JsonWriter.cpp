#include "JsonWriter.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace bir::json {

void Writer::newline(size_t depth) {
  out_ += '\n';
  out_.append(static_cast<size_t>(indent_) * depth, ' ');
}

void Writer::separate(Level& l) {
  if (l.count++ > 0) out_ += ',';
  if (indent_ >= 0) newline(levels_.size());
}

// Objects placed their separator with the key; array elements place it here.
void Writer::beforeValue() {
  if (!levels_.empty() && !levels_.back().object) separate(levels_.back());
}

void Writer::open(bool object, char c) {
  beforeValue();
  out_ += c;
  levels_.push_back({object, 0, keys_.size()});
}

void Writer::close(char c) {
  const Level l = levels_.back();
  levels_.pop_back();
  keys_.resize(l.firstKey);
  if (l.count > 0 && indent_ >= 0) newline(levels_.size());
  out_ += c;
}

void Writer::beginObject() { open(true, '{'); }
void Writer::endObject() { close('}'); }
void Writer::beginArray() { open(false, '['); }
void Writer::endArray() { close(']'); }

void Writer::key(std::string_view k) {
  separate(levels_.back());
  keys_.push_back(k);
  string(k);
  out_ += indent_ >= 0 ? ": " : ":";
}

bool Writer::hasKey(std::string_view k) const {
  for (size_t i = levels_.back().firstKey; i < keys_.size(); ++i)
    if (keys_[i] == k) return true;
  return false;
}

void Writer::null() {
  beforeValue();
  out_ += "null";
}

void Writer::boolean(bool v) {
  beforeValue();
  out_ += v ? "true" : "false";
}

void Writer::integer(int64_t v) {
  beforeValue();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
}

void Writer::number(double v) {
  beforeValue();
  char buf[64];  // nlohmann's number buffer
  out_.append(buf, nlohmann::detail::to_chars(buf, buf + sizeof buf, v));
}

void Writer::string(std::string_view v) {
  // Keys come here too, after their separator (beforeValue does nothing inside an object).
  beforeValue();
  bool plain = true;
  for (const char c : v) plain &= c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
  if (plain) {
    out_ += '"';
    out_ += v;
    out_ += '"';
    return;
  }
  out_ += nlohmann::ordered_json(std::string(v)).dump();
}

void Writer::dumped(std::string_view text) {
  beforeValue();
  for (const char c : text) {
    if (c == '\n') newline(levels_.size());  // strings hold no raw newline: this is layout
    else out_ += c;
  }
}

}  // namespace bir::json

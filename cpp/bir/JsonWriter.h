// A streaming JSON writer that lays text out exactly as nlohmann's dump(indent) does, for the
// BIR JSON writer (Json.cpp): the module is written as it is walked, with no document in between
// (about ten times faster than building nlohmann's document and dumping it).
//
// Layout (nlohmann's): indent < 0 is compact ({"k":v,...}); indent >= 0 puts every member and
// element on its own line, `indent` spaces deeper than its container, after "key": . Empty objects
// and arrays are {} and []. Numbers: integers in decimal, doubles (finite only) as nlohmann's
// shortest round-trip form (its to_chars). Strings: plain ASCII is copied; anything else goes
// through nlohmann's escaping (which also refuses invalid UTF-8, with its exception).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bir::json {

class Writer {
 public:
  explicit Writer(int indent) : indent_(indent) {}

  int indent() const { return indent_; }
  void beginObject();
  void endObject();
  void beginArray();
  void endArray();
  // The next value's name, in the innermost (open) object. The text must outlive the object.
  void key(std::string_view k);
  void null();
  void boolean(bool v);
  void integer(int64_t v);
  void number(double v);  // finite
  void string(std::string_view v);
  // A whole value as nlohmann's dump(indent()) gives it on its own (indented here to its depth).
  void dumped(std::string_view text);
  // Whether the innermost open object already has member `k`.
  bool hasKey(std::string_view k) const;

  std::string take() { return std::move(out_); }

 private:
  struct Level {
    bool object;
    uint32_t count;
    size_t firstKey;  // its keys: keys_[firstKey..]
  };
  void beforeValue();
  void separate(Level& l);
  void open(bool object, char c);
  void close(char c);
  void newline(size_t depth);

  int indent_;
  std::string out_;
  std::vector<Level> levels_;
  std::vector<std::string_view> keys_;
};

}  // namespace bir::json

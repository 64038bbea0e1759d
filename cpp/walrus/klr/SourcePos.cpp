#include "walrus/klr/SourcePos.h"

namespace klr {

Item sourcePosItem(const std::string& source) {
  auto pos = [](uint64_t line, Item filename) {
    return record(tags::Pos, 0, {nat(line), nat(0), none(), none(), std::move(filename)});
  };
  if (source.empty()) return pos(0, none());
  const size_t colon = source.rfind(':');
  if (colon != std::string::npos && colon + 1 < source.size() && source[colon + 1] != '0' &&
      source.size() - colon - 1 <= 18 &&
      source.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    return pos(std::stoull(source.substr(colon + 1)), some(cbor::text(source.substr(0, colon))));
  return pos(0, some(cbor::text(source)));
}

std::string readSourcePos(const Item& it, const std::string& what) {
  Record r(it, tags::Pos, what);
  r.expectFields(4, 5);
  const uint64_t line = readNat(r[0], what + ".line");
  readNat(r[1], what + ".column");
  for (size_t i = 2; i < 4; ++i)
    if (const Item* v = readOption(r[i], r.field(i))) readNat(*v, r.field(i));
  const Item* file = r.size() == 5 ? readOption(r[4], what + ".filename") : nullptr;
  if (!file) return line ? "line " + std::to_string(line) : std::string();
  std::string name = readString(*file, what + ".filename");
  return line ? name + ":" + std::to_string(line) : name;
}

}  // namespace klr

#include "walrus/klr/AttrCodec.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <unordered_set>

#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/VisitNode.h"

namespace klr {
namespace {

using namespace bir;
using bir::visitNode;

template <class E, class = void>
struct IsBirEnum : std::false_type {};
template <class E>
struct IsBirEnum<E, std::void_t<decltype(EnumTraits<E>::kNames)>> : std::true_type {};

// ---- field value -> CBOR ----
Item value(bool v) { return cbor::boolean(v); }
Item value(int64_t v) { return cbor::integer(v); }
Item value(double v) { return cbor::float64(v); }
Item value(const std::string& v) { return cbor::text(v); }
Item value(const APPair& p) { return cbor::array({cbor::integer(p.step), cbor::integer(p.num)}); }
template <class E, std::enable_if_t<IsBirEnum<E>::value, int> = 0>
Item value(E v);
template <class A, class B>
Item value(const std::pair<A, B>& p);
template <class T>
Item value(const std::vector<T>& v);
template <class T>
Item value(const std::optional<T>& v);

template <class E, std::enable_if_t<IsBirEnum<E>::value, int>>
Item value(E v) {
  return cbor::text(std::string(enumName(v)));
}
template <class A, class B>
Item value(const std::pair<A, B>& p) {
  return cbor::array({value(p.first), value(p.second)});
}
template <class T>
Item value(const std::vector<T>& v) {
  std::vector<Item> out;
  for (const auto& x : v) out.push_back(value(x));
  return cbor::array(std::move(out));
}
template <class T>
Item value(const std::optional<T>& v) {
  return v ? some(value(*v)) : none();
}

// ---- CBOR -> field value ----
void read(const Item& it, bool& v, const std::string& w) { v = readBool(it, w); }
void read(const Item& it, int64_t& v, const std::string& w) { v = readInt(it, w); }
void read(const Item& it, double& v, const std::string& w) { v = readFloat(it, w); }
void read(const Item& it, std::string& v, const std::string& w) { v = readString(it, w); }
void pairItems(const Item& it, const std::string& w) {
  if (readList(it, w).size() != 2) fail(it, w, "expected a pair (an array of 2)");
}
void read(const Item& it, APPair& p, const std::string& w) {
  pairItems(it, w);
  p.step = readInt(it.items[0], w);
  p.num = readInt(it.items[1], w);
}
template <class E, std::enable_if_t<IsBirEnum<E>::value, int> = 0>
void read(const Item& it, E& v, const std::string& w);
template <class A, class B>
void read(const Item& it, std::pair<A, B>& p, const std::string& w);
template <class T>
void read(const Item& it, std::vector<T>& v, const std::string& w);
template <class T>
void read(const Item& it, std::optional<T>& v, const std::string& w);

template <class E, std::enable_if_t<IsBirEnum<E>::value, int>>
void read(const Item& it, E& v, const std::string& w) {
  const std::string name = readString(it, w);
  if (!enumFromName(name, &v))
    fail(it, w, "unknown " + std::string(EnumTraits<E>::kTypeName) + " '" + name + "'");
}
template <class A, class B>
void read(const Item& it, std::pair<A, B>& p, const std::string& w) {
  pairItems(it, w);
  read(it.items[0], p.first, w);
  read(it.items[1], p.second, w);
}
template <class T>
void read(const Item& it, std::vector<T>& v, const std::string& w) {
  const auto& items = readList(it, w);
  v.assign(items.size(), T{});
  for (size_t i = 0; i < items.size(); ++i) read(items[i], v[i], w + "[" + std::to_string(i) + "]");
}
template <class T>
void read(const Item& it, std::optional<T>& v, const std::string& w) {
  const Item* x = readOption(it, w);
  if (!x) return v.reset();
  T t{};
  read(*x, t, w);
  v = std::move(t);
}

// Values compare bit for bit: -0.0 differs from 0.0 and a NaN equals itself.
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same(const std::optional<double>& a, const std::optional<double>& b) {
  return a.has_value() == b.has_value() && (!a || same(*a, *b));
}
template <class T>
bool same(const T& a, const T& b) {
  return a == b;
}

Item attr(std::string name, Item v) { return cbor::array({cbor::text(std::move(name)), std::move(v)}); }

void baseAttrs(const Instruction& I, std::vector<Item>& out) {
  if (!I.kernel.empty()) out.push_back(attr("kernel", cbor::text(I.kernel)));
  if (!I.extra_json.empty()) out.push_back(attr("extra_json", cbor::text(I.extra_json)));
}

// extra_json is written back into BIR JSON verbatim, so it must be a JSON object; the nesting is
// bounded as the BIR JSON reader bounds it.
bool isJsonObject(const std::string& text) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if ((c == '[' || c == '{') && ++depth > kMaxJsonDepth) {
      return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  if (!nlohmann::ordered_json::accept(text)) return false;  // the variant KernelEncoder.cpp parses with: one instantiation
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

bool sameAccess(const AccessPattern& a, const AccessPattern& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.loc == b.loc && a.offset == b.offset &&
         a.pattern == b.pattern && same(a.imm, b.imm);
}

bool plainMarshalling(const AccessPattern& a) {
  return a.flavour == AccessFlavour::Plain && a.accessShape().empty() && a.partitionDim() < 0;
}

// How operands were marshalled (AccessPattern::flavour, access_shape, partition_dim: what
// Instruction::createAP and the kernel-node builders record), which no KLR operand can hold:
// "access" = [[side, index, flavour, access_shape, partition_dim], ...] for every operand that is
// not plain.
void marshallingAttr(const Instruction& I, std::vector<Item>& out) {
  std::vector<Item> entries;
  for (const char* side : {"ins", "outs"}) {
    const auto& list = side[0] == 'i' ? I.ins : I.outs;
    for (size_t k = 0; k < list.size(); ++k)
      if (!plainMarshalling(list[k]))
        entries.push_back(cbor::array({cbor::text(side), cbor::integer(static_cast<int64_t>(k)),
                                       value(list[k].flavour), value(list[k].accessShape()),
                                       cbor::integer(list[k].partitionDim())}));
  }
  if (!entries.empty()) out.push_back(attr("access", cbor::array(std::move(entries))));
}

void applyMarshalling(Instruction& I, const Item& v, const std::string& where) {
  for (const Item& e : readList(v, where)) {
    if (readList(e, where).size() != 5) fail(e, where, "expected [side, index, flavour, access_shape, partition_dim]");
    const std::string side = readString(e.items[0], where);
    if (side != "ins" && side != "outs") fail(e.items[0], where, "side must be \"ins\" or \"outs\"");
    auto& list = side == "ins" ? I.ins : I.outs;
    const int64_t k = readInt(e.items[1], where);
    if (k < 0 || k >= static_cast<int64_t>(list.size()))
      fail(e.items[1], where, I.opcodeName() + " has no " + side + "[" + std::to_string(k) + "]");
    AccessPattern& ap = list[static_cast<size_t>(k)];
    read(e.items[2], ap.flavour, where);
    std::vector<int64_t> shape;
    int64_t partitionDim = -1;
    read(e.items[3], shape, where);
    read(e.items[4], partitionDim, where);
    ap.setAccessShape(std::move(shape));
    ap.setPartitionDim(partitionDim);
  }
}

}  // namespace

std::vector<Item> differingAttrs(const Instruction& want, const Instruction& got) {
  std::vector<Item> out;
  if (want.opcode() != got.opcode()) out.push_back(attr("opcode", cbor::text(want.opcodeName())));
  if (want.engine != got.engine) out.push_back(attr("engine", value(want.engine)));
  baseAttrs(want, out);
  marshallingAttr(want, out);
  visitNode(want, [&](const auto& w) {
    using T = std::remove_cvref_t<decltype(w)>;
    const T& g = static_cast<const T&>(got);
    T::fields([&](const char* key, auto member) {
      if (!same(w.*member, g.*member)) out.push_back(attr(key, value(w.*member)));
    });
  });
  return out;
}

std::vector<Item> allAttrs(const Instruction& I) {
  std::vector<Item> out;
  baseAttrs(I, out);
  marshallingAttr(I, out);
  visitNode(I, [&](const auto& node) {
    using T = std::remove_cvref_t<decltype(node)>;
    T::fields([&](const char* key, auto member) { out.push_back(attr(key, value(node.*member))); });
  });
  return out;
}

std::optional<Opcode> readOpcodeAttr(const Item& attrs, const std::string& what) {
  for (const Item& a : readList(attrs, what)) {
    pairItems(a, what);
    if (readString(a.items[0], what) != "opcode") continue;
    const std::string name = readString(a.items[1], what + ".opcode");
    try {
      return string2InstructionType(name);
    } catch (const BIRError& e) {
      fail(a.items[1], what + ".opcode", e.what());
    }
  }
  return std::nullopt;
}

void applyAttrs(Instruction& I, const Item& attrs, const std::string& what) {
  std::unordered_set<std::string> seen;
  for (const Item& a : readList(attrs, what)) {
    pairItems(a, what);
    const std::string name = readString(a.items[0], what);
    const Item& v = a.items[1];
    const std::string where = what + "." + name;
    if (!seen.insert(name).second) fail(a, where, "attribute '" + name + "' appears twice");
    if (name == "opcode") continue;
    if (name == "engine") {
      read(v, I.engine, where);
    } else if (name == "kernel") {
      read(v, I.kernel, where);
    } else if (name == "access") {
      applyMarshalling(I, v, where);
    } else if (name == "extra_json") {
      read(v, I.extra_json, where);
      if (!isJsonObject(I.extra_json)) fail(v, where, "extra_json is not a JSON object");
    } else {
      bool found = false;
      visitNode(I, [&](auto& node) {
        using T = std::remove_cvref_t<decltype(node)>;
        T::fields([&](const char* key, auto member) {
          if (found || name != key) return;
          found = true;
          read(v, node.*member, where);
        });
      });
      if (!found)
        fail(a, where, I.opcodeName() + " (" + nodeClassName(I.nodeClass()) + ") has no field '" +
                           name + "'");
    }
  }
}

bool sameOperands(const Instruction& a, const Instruction& b) {
  auto sameList = [](const std::vector<AccessPattern>& x, const std::vector<AccessPattern>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!sameAccess(x[i], y[i])) return false;
    return true;
  };
  return sameList(a.ins, b.ins) && sameList(a.outs, b.outs);
}

}  // namespace klr

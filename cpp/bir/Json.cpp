#include "Json.h"

#include <cmath>
#include <limits>
#include <unordered_set>
#include <nlohmann/json.hpp>

#include "Error.h"
#include "JsonDocument.h"
#include "JsonWriter.h"
#include "MachineConfig.h"
#include "Verifier.h"
#include "VisitNode.h"

namespace bir {
namespace {

using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// The JSON path of the element being read, rendered only when something is wrong.

class JsonPath {
 public:
  // `key` is always a string literal (a field name), so a view of it stays valid.
  void push(std::string_view key) { segs_.push_back({key, -1}); }
  void push(size_t index) { segs_.push_back({{}, static_cast<int64_t>(index)}); }
  void pop() { segs_.pop_back(); }
  std::string str() const {
    std::string s;
    for (const auto& seg : segs_) {
      if (seg.index >= 0) {
        s += "[" + std::to_string(seg.index) + "]";
      } else {
        if (!s.empty()) s += ".";
        s += seg.key;
      }
    }
    return s;
  }
  [[noreturn]] void fail(const std::string& msg) const { throw BIRError(located(str(), msg)); }

 private:
  struct Seg {
    std::string_view key;
    int64_t index;
  };
  std::vector<Seg> segs_;
};

class Scope {
 public:
  template <class K>
  Scope(JsonPath& p, K key) : p_(p) {
    p_.push(key);
  }
  ~Scope() { p_.pop(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  JsonPath& p_;
};

// ---------------------------------------------------------------------------------------------
// Scalars

// The two documents the readers below read: nlohmann's (any JSON; its messages are the reader's)
// and json::Document (the plain subset, read first; see moduleFromJson).
struct DocumentDeclined {};  // a json::Document holds what only nlohmann's reader keeps

const ojson* memberOf(const ojson& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}
const json::Value* memberOf(const json::Value& obj, const char* key) { return obj.find(key); }
bool booleanOf(const ojson& j) { return j.get<bool>(); }
bool booleanOf(const json::Value& j) { return j.boolean(); }
uint64_t unsignedOf(const ojson& j) { return j.get<uint64_t>(); }
uint64_t unsignedOf(const json::Value& j) { return j.unsignedInteger(); }
int64_t integerOf(const ojson& j) { return j.get<int64_t>(); }
int64_t integerOf(const json::Value& j) { return j.integer(); }
double numberOf(const ojson& j) { return j.get<double>(); }
double numberOf(const json::Value& j) { return j.number(); }
std::string_view stringOf(const ojson& j) { return j.get_ref<const std::string&>(); }
std::string_view stringOf(const json::Value& j) { return j.string(); }

template <class J>
void expectObject(const J& j, const JsonPath& p) {
  if (!j.is_object()) p.fail(std::string("expected an object, got ") + j.type_name());
}
template <class J>
void expectArray(const J& j, const JsonPath& p) {
  if (!j.is_array()) p.fail(std::string("expected an array, got ") + j.type_name());
}

template <class J>
void fromJson(const J& j, bool& v, JsonPath& p) {
  if (!j.is_boolean()) p.fail(std::string("expected a boolean, got ") + j.type_name());
  v = booleanOf(j);
}

template <class J>
void fromJson(const J& j, int64_t& v, JsonPath& p) {
  if (j.is_number_unsigned()) {
    const uint64_t u = unsignedOf(j);
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      p.fail("integer " + std::to_string(u) + " is out of range");
    v = static_cast<int64_t>(u);
    return;
  }
  if (!j.is_number_integer()) p.fail(std::string("expected an integer, got ") + j.type_name());
  v = integerOf(j);
}

// Non-finite doubles are written as the strings "inf", "-inf" and "nan" (JSON has no spelling).
template <class J>
void fromJson(const J& j, double& v, JsonPath& p) {
  if (j.is_number()) {
    v = numberOf(j);
    return;
  }
  if (j.is_string()) {
    const std::string_view s = stringOf(j);
    if (s == "inf") return void(v = std::numeric_limits<double>::infinity());
    if (s == "-inf") return void(v = -std::numeric_limits<double>::infinity());
    if (s == "nan") return void(v = std::numeric_limits<double>::quiet_NaN());
  }
  p.fail(std::string("expected a number, got ") + j.type_name());
}

template <class J>
void fromJson(const J& j, std::string& v, JsonPath& p) {
  if (!j.is_string()) p.fail(std::string("expected a string, got ") + j.type_name());
  v = std::string(stringOf(j));
}

template <class J, class E, std::enable_if_t<IsBirEnum<E>::value, int> = 0>
void fromJson(const J& j, E& v, JsonPath& p) {
  if (!j.is_string())
    p.fail(std::string("expected a ") + std::string(EnumTraits<E>::kTypeName) + " name, got " +
           j.type_name());
  const std::string_view s = stringOf(j);
  if (!enumFromName(s, &v))
    p.fail("unknown " + std::string(EnumTraits<E>::kTypeName) + " '" + std::string(s) +
           "' (expected one of: " + enumMemberList<E>() + ")");
}

// ---------------------------------------------------------------------------------------------
// Aggregates

template <class J>
void fromJson(const J& j, APPair& v, JsonPath& p) {
  if (!j.is_array() || j.size() != 2) p.fail("expected a [step, num] pair");
  {
    Scope s(p, size_t{0});
    fromJson(j[0], v.step, p);
  }
  Scope s(p, size_t{1});
  fromJson(j[1], v.num, p);
}

template <class J>
void fromJson(const J& j, std::pair<std::string, std::string>& v, JsonPath& p) {
  if (!j.is_array() || j.size() != 2) p.fail("expected a [key, value] pair of strings");
  {
    Scope s(p, size_t{0});
    fromJson(j[0], v.first, p);
  }
  Scope s(p, size_t{1});
  fromJson(j[1], v.second, p);
}


// A JSON array into a vector-like sequence (std::vector, InlineVector), element by element.
template <class J, class Seq>
void fromJsonArray(const J& j, Seq& v, JsonPath& p) {
  expectArray(j, p);
  v.clear();
  v.resize(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    Scope s(p, i);
    fromJson(j[i], v[i], p);
  }
}

template <class J, class T>
void fromJson(const J& j, std::vector<T>& v, JsonPath& p) {
  fromJsonArray(j, v, p);
}

template <class J, class T, size_t N>
void fromJson(const J& j, InlineVector<T, N>& v, JsonPath& p) {
  fromJsonArray(j, v, p);
}

template <class J, class T>
void fromJson(const J& j, std::optional<T>& v, JsonPath& p) {
  if (j.is_null()) {
    v.reset();
    return;
  }
  T x{};
  fromJson(j, x, p);
  v = x;
}

// ---------------------------------------------------------------------------------------------
// Unknown keys are kept verbatim (as a compact JSON object) and written back after the known ones.

std::string collectExtra(const ojson& obj, std::initializer_list<std::string_view> known,
                         const std::vector<std::string_view>& moreKnown = {}) {
  ojson extra = ojson::object();
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool isKnown = false;
    for (auto k : known) isKnown = isKnown || it.key() == k;
    for (auto k : moreKnown) isKnown = isKnown || it.key() == k;
    if (!isKnown) extra[it.key()] = it.value();
  }
  return extra.empty() ? std::string() : extra.dump();
}

// json::Document: no unknown keys (nlohmann's reader keeps them, re-dumped exactly as it does).
std::string collectExtra(const json::Value& obj, std::initializer_list<std::string_view> known,
                         const std::vector<std::string_view>& moreKnown = {}) {
  for (const json::Member& m : obj) {
    bool isKnown = false;
    for (auto k : known) isKnown = isKnown || m.key == k;
    for (auto k : moreKnown) isKnown = isKnown || m.key == k;
    if (!isKnown) throw DocumentDeclined{};
  }
  return std::string();
}

template <class J, class T>
void readOptionalMember(const J& obj, const char* key, T& out, JsonPath& p) {
  const J* it = memberOf(obj, key);
  if (!it) return;
  Scope s(p, key);
  fromJson(*it, out, p);
}

template <class J, class T>
void readRequiredMember(const J& obj, const char* key, T& out, JsonPath& p) {
  const J* it = memberOf(obj, key);
  if (!it) p.fail(std::string("missing required field '") + key + "'");
  Scope s(p, key);
  fromJson(*it, out, p);
}

// ---------------------------------------------------------------------------------------------
// Node fields, through each class's fields(visitor)

template <class T, class J>
void readFields(T& node, const J& j, JsonPath& p, std::vector<std::string_view>& known) {
  T::fields([&](const char* key, auto member) {
    known.push_back(key);
    const J* it = memberOf(j, key);
    if (!it) return;
    Scope s(p, key);
    fromJson(*it, node.*member, p);
  });
}

template <class J>
void readNodeFields(Instruction& I, const J& j, JsonPath& p,
                    std::vector<std::string_view>& known) {
  visitNode(I, [&](auto& node) { readFields(node, j, p, known); });
}

// ---------------------------------------------------------------------------------------------
// Writer: one walk of the module (the schema's field order lives here only) over either of two
// back ends with the same calls: json::Writer, which writes the text directly, and
// DocumentBuilder, which builds nlohmann's document and dumps it (the reference the tests hold the
// direct text to, byte for byte).

class DocumentBuilder {
 public:
  explicit DocumentBuilder(int indent) : indent_(indent) {}
  void beginObject() { stack_.push_back(&place(ojson::object())); }
  void endObject() { stack_.pop_back(); }
  void beginArray() { stack_.push_back(&place(ojson::array())); }
  void endArray() { stack_.pop_back(); }
  void key(std::string_view k) { key_ = k; }
  void boolean(bool v) { place(v); }
  void integer(int64_t v) { place(v); }
  void number(double v) { place(v); }
  void string(std::string_view v) { place(std::string(v)); }
  ojson& innermost() { return *stack_.back(); }
  std::string take() { return root_.dump(indent_); }

 private:
  // A new value where the innermost container takes it (an object member of the same name keeps
  // its place and takes the new value, as nlohmann's operator[] does).
  ojson& place(ojson v) {
    if (stack_.empty()) return root_ = std::move(v);
    ojson& top = *stack_.back();
    if (top.is_object()) return top[key_] = std::move(v);
    top.push_back(std::move(v));
    return top.back();
  }
  int indent_;
  ojson root_;
  std::vector<ojson*> stack_;
  std::string key_;
};

// Unknown fields (kept verbatim as a compact JSON object), written after the known ones; a name
// the object already has is not written again.
ojson extraFields(const std::string& extra, const JsonPath& p) {
  ojson e;
  try {
    e = ojson::parse(extra);
  } catch (const nlohmann::json::exception& ex) {
    p.fail(std::string("extra fields are not valid JSON: ") + ex.what());
  }
  if (!e.is_object()) p.fail("extra fields must be a JSON object");
  return e;
}

void putExtra(DocumentBuilder& d, const std::string& extra, const JsonPath& p) {
  if (extra.empty()) return;
  const ojson e = extraFields(extra, p);
  ojson& obj = d.innermost();
  for (auto it = e.begin(); it != e.end(); ++it)
    if (!obj.contains(it.key())) obj[it.key()] = it.value();
}

void putExtra(json::Writer& w, const std::string& extra, const JsonPath& p) {
  if (extra.empty()) return;
  const ojson e = extraFields(extra, p);
  for (auto it = e.begin(); it != e.end(); ++it)
    if (!w.hasKey(it.key())) {
      w.key(it.key());
      w.dumped(it.value().dump(w.indent()));
    }
}

// Non-finite doubles are written as the strings "inf", "-inf" and "nan" (JSON has no spelling).
template <class W>
void put(W& w, double v) {
  if (std::isnan(v)) return w.string("nan");
  if (std::isinf(v)) return w.string(v > 0 ? "inf" : "-inf");
  w.number(v);
}
template <class W, class E, std::enable_if_t<IsBirEnum<E>::value, int> = 0>
void put(W& w, E v) {
  w.string(enumName(v));
}
template <class W>
void put(W& w, bool v) {
  w.boolean(v);
}
template <class W>
void put(W& w, int64_t v) {
  w.integer(v);
}
template <class W>
void put(W& w, const std::string& v) {
  w.string(v);
}
template <class W>
void put(W& w, const APPair& v) {
  w.beginArray();
  w.integer(v.step);
  w.integer(v.num);
  w.endArray();
}
template <class W>
void put(W& w, const std::pair<std::string, std::string>& v) {
  w.beginArray();
  w.string(v.first);
  w.string(v.second);
  w.endArray();
}
template <class W, class T>
void put(W& w, const std::vector<T>& v) {
  w.beginArray();
  for (const auto& x : v) put(w, x);
  w.endArray();
}
template <class W, class T, size_t N>
void put(W& w, const InlineVector<T, N>& v) {
  w.beginArray();
  for (const auto& x : v) put(w, x);
  w.endArray();
}
template <class W, class T>
void member(W& w, std::string_view key, const T& v) {
  w.key(key);
  put(w, v);
}

template <class W, class T>
void writeFields(W& w, const T& node) {
  T::fields([&](const char* key, auto field) {
    const auto& v = node.*field;
    using F = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<F, std::optional<bool>> || std::is_same_v<F, std::optional<int64_t>> ||
                  std::is_same_v<F, std::optional<double>>) {
      if (v) member(w, key, *v);
    } else {
      member(w, key, v);
    }
  });
}

template <class W>
void writeNodeFields(W& w, const Instruction& I) {
  visitNode(I, [&](const auto& node) { writeFields(w, node); });
}

template <class W>
void writeArg(W& w, const AccessPattern& a, const JsonPath& p) {
  if (a.kind != ArgKind::ImmValue && (!a.loc || !a.loc->set)) p.fail("access pattern has no memory location");
  w.beginObject();
  if (a.kind == ArgKind::ImmValue) {
    member(w, "kind", std::string("imm_value"));
    member(w, "dtype", a.dtype);
    member(w, "value", a.imm);
    return w.endObject();
  }
  w.key("kind");
  w.string("physical_ap");
  member(w, "ap", a.pattern);
  member(w, "dtype", a.dtype);
  member(w, "offset", a.offset);
  member(w, "memsetref", a.loc->set->name);
  member(w, "memref", a.loc->name);
  if (a.flavour != AccessFlavour::Plain) member(w, "access", a.flavour);
  if (!a.accessShape().empty()) member(w, "access_shape", a.accessShape());
  if (a.partitionDim() >= 0) member(w, "partition_dim", a.partitionDim());
  if (a.lnc_size != 1) member(w, "lnc_size", int64_t{a.lnc_size});
  if (a.reduce) member(w, "reduce", true);
  w.endObject();
}

template <class W>
void writeInstruction(W& w, const Instruction& I, JsonPath& p) {
  w.beginObject();
  member(w, "opcode", I.opcodeName());
  member(w, "name", I.name);
  member(w, "engine", I.engine);
  for (const char* side : {"ins", "outs"}) {
    const auto& list = side[0] == 'i' ? I.ins : I.outs;
    Scope s(p, side);
    w.key(side);
    w.beginArray();
    for (size_t i = 0; i < list.size(); ++i) {
      Scope si(p, i);
      writeArg(w, list[i], p);
    }
    w.endArray();
  }
  writeNodeFields(w, I);
  if (!I.source.empty()) member(w, "source", I.source);
  if (!I.kernel.empty()) member(w, "kernel", I.kernel);
  putExtra(w, I.extra_json, p);
  w.endObject();
}

template <class W>
void writeLocation(W& w, const MemoryLocation& l, const JsonPath& p) {
  w.beginObject();
  w.key("Skind");
  w.string("memory_location");
  member(w, "name", l.name);
  member(w, "type", l.type);
  member(w, "addr", l.addr);
  w.key("dims");
  w.beginArray();
  w.integer(l.partitions);
  w.integer(l.bytes_per_partition);
  w.endArray();
  member(w, "bank", l.bank);
  member(w, "base", l.base_partition);
  member(w, "allocated", l.allocated);
  member(w, "pinned", l.pinned);
  member(w, "tensor_id", l.tensor_id);
  putExtra(w, l.extra_json, p);
  w.endObject();
}

template <class W>
void writeAllocation(W& w, const MemoryLocationSet& a, JsonPath& p) {
  w.beginObject();
  w.key("Skind");
  w.string("memory_location_set");
  member(w, "addr_space", a.addr_space);
  member(w, "dtype", a.dtype);
  member(w, "partition_dim", a.partition_dim);
  member(w, "tensor_shape", a.tensor_shape);
  member(w, "name", a.name);
  member(w, "file", a.file);
  member(w, "no_spill", a.no_spill);
  member(w, "volatile", a.is_volatile);
  member(w, "virtual", a.is_virtual);
  member(w, "kind", a.kind);
  member(w, "tensor_class", a.tensor_class);
  {
    Scope s(p, "memorylocations");
    w.key("memorylocations");
    w.beginArray();
    for (size_t i = 0; i < a.locations.size(); ++i) {
      Scope si(p, i);
      writeLocation(w, *a.locations[i], p);
    }
    w.endArray();
  }
  putExtra(w, a.extra_json, p);
  w.endObject();
}

template <class W>
void writeFunction(W& w, const Function& f, JsonPath& p) {
  w.beginObject();
  member(w, "name", f.name);
  member(w, "attributes", f.attributes);
  {
    Scope s(p, "allocations");
    w.key("allocations");
    w.beginArray();
    for (size_t i = 0; i < f.allocations().size(); ++i) {
      Scope si(p, i);
      writeAllocation(w, *f.allocations()[i], p);
    }
    w.endArray();
  }
  {
    Scope s(p, "blocks");
    w.key("blocks");
    w.beginArray();
    for (size_t b = 0; b < f.blocks().size(); ++b) {
      Scope sb(p, b);
      const BasicBlock& bb = *f.blocks()[b];
      w.beginObject();
      member(w, "name", bb.name);
      Scope si(p, "instructions");
      w.key("instructions");
      w.beginArray();
      for (size_t i = 0; i < bb.size(); ++i) {
        Scope sii(p, i);
        writeInstruction(w, *bb.at(i), p);
      }
      w.endArray();
      w.endObject();
    }
    w.endArray();
  }
  putExtra(w, f.extra_json, p);
  w.endObject();
}

template <class W>
std::string writeModule(W&& w, const Module& m) {
  JsonPath p;
  w.beginObject();
  w.key("attributes");
  w.beginObject();
  member(w, "neuron_core_id", m.neuron_core_id);
  putExtra(w, m.attributes_extra_json, p);
  w.endObject();
  {
    Scope s(p, "functions");
    w.key("functions");
    w.beginArray();
    for (size_t i = 0; i < m.functions().size(); ++i) {
      Scope si(p, i);
      writeFunction(w, *m.functions()[i], p);
    }
    w.endArray();
  }
  member(w, "arch", m.arch);
  member(w, "version", Module::kBirVersion);
  member(w, "neuronxsim_format", Module::kFormatVersion);
  putExtra(w, m.extra_json, p);
  w.endObject();
  return w.take();
}

// ---------------------------------------------------------------------------------------------
// Reader

template <class J>
AccessPattern readArg(const J& j, const Function& f, JsonPath& p) {
  expectObject(j, p);
  std::string kind;
  readRequiredMember(j, "kind", kind, p);
  AccessPattern a;
  readOptionalMember(j, "dtype", a.dtype, p);
  if (kind == "imm_value") {
    a.kind = ArgKind::ImmValue;
    readRequiredMember(j, "value", a.imm, p);
    return a;
  }
  if (kind != "physical_ap") {
    Scope s(p, "kind");
    p.fail("argument kind '" + kind + "' is not supported (expected physical_ap or imm_value)");
  }
  readRequiredMember(j, "ap", a.pattern, p);
  readOptionalMember(j, "offset", a.offset, p);
  std::string memref, memsetref;
  readRequiredMember(j, "memref", memref, p);
  a.loc = f.findLocation(memref);
  if (!a.loc) {
    Scope s(p, "memref");
    p.fail("no memory location named '" + memref + "' in function '" + f.name + "'");
  }
  readOptionalMember(j, "memsetref", memsetref, p);
  if (!memsetref.empty() && memsetref != a.loc->set->name) {
    Scope s(p, "memsetref");
    p.fail("memory location '" + memref + "' belongs to '" + a.loc->set->name + "', not '" +
           memsetref + "'");
  }
  readOptionalMember(j, "access", a.flavour, p);
  std::vector<int64_t> accessShape;
  int64_t partitionDim = -1, lncSize = 1;
  readOptionalMember(j, "access_shape", accessShape, p);
  readOptionalMember(j, "partition_dim", partitionDim, p);
  readOptionalMember(j, "lnc_size", lncSize, p);
  a.setAccessShape(std::move(accessShape));
  a.setPartitionDim(partitionDim);
  a.lnc_size = narrowLncSize(lncSize, [&p] {
    Scope s(p, "lnc_size");
    return p.str();
  });
  readOptionalMember(j, "reduce", a.reduce, p);
  return a;
}

template <class J>
std::unique_ptr<MemoryLocation> readLocation(const J& j, JsonPath& p) {
  expectObject(j, p);
  auto l = std::make_unique<MemoryLocation>();
  readRequiredMember(j, "name", l->name, p);
  readRequiredMember(j, "type", l->type, p);
  readOptionalMember(j, "addr", l->addr, p);
  std::vector<int64_t> dims;
  readRequiredMember(j, "dims", dims, p);
  if (dims.size() != 2) {
    Scope s(p, "dims");
    p.fail("expected [partitions, bytes_per_partition], got " + std::to_string(dims.size()) +
           " numbers");
  }
  l->partitions = dims[0];
  l->bytes_per_partition = dims[1];
  readOptionalMember(j, "bank", l->bank, p);
  readOptionalMember(j, "base", l->base_partition, p);
  readOptionalMember(j, "allocated", l->allocated, p);
  readOptionalMember(j, "pinned", l->pinned, p);
  readOptionalMember(j, "tensor_id", l->tensor_id, p);
  l->extra_json = collectExtra(j, {"Skind", "name", "type", "addr", "dims", "bank", "base",
                                   "allocated", "pinned", "tensor_id"});
  return l;
}

template <class J>
std::unique_ptr<MemoryLocationSet> readAllocation(const J& j, JsonPath& p) {
  expectObject(j, p);
  auto a = std::make_unique<MemoryLocationSet>();
  readRequiredMember(j, "name", a->name, p);
  readOptionalMember(j, "addr_space", a->addr_space, p);
  readRequiredMember(j, "dtype", a->dtype, p);
  readOptionalMember(j, "partition_dim", a->partition_dim, p);
  readOptionalMember(j, "tensor_shape", a->tensor_shape, p);
  readOptionalMember(j, "file", a->file, p);
  readOptionalMember(j, "no_spill", a->no_spill, p);
  readOptionalMember(j, "volatile", a->is_volatile, p);
  readOptionalMember(j, "virtual", a->is_virtual, p);
  readOptionalMember(j, "kind", a->kind, p);
  readOptionalMember(j, "tensor_class", a->tensor_class, p);
  const J* it = memberOf(j, "memorylocations");
  if (!it) p.fail("missing required field 'memorylocations'");
  Scope s(p, "memorylocations");
  expectArray(*it, p);
  for (size_t i = 0; i < it->size(); ++i) {
    Scope si(p, i);
    a->locations.push_back(readLocation((*it)[i], p));
  }
  a->extra_json = collectExtra(j, {"Skind", "addr_space", "dtype", "partition_dim",
                                   "tensor_shape", "name", "file", "no_spill", "volatile",
                                   "virtual", "kind", "tensor_class", "memorylocations"});
  return a;
}

template <class J>
void readInstruction(const J& j, Function& f, BasicBlock& bb, JsonPath& p) {
  expectObject(j, p);
  std::string opname, name;
  readRequiredMember(j, "opcode", opname, p);
  Opcode op;
  {
    Scope s(p, "opcode");
    if (opname == "Loop")
      p.fail("Loop blocks are not supported: neuronxsim executes unrolled BIR");
    try {
      op = string2InstructionType(opname);
    } catch (const BIRError& e) {
      p.fail(e.what());
    }
  }
  readRequiredMember(j, "name", name, p);
  if (f.hasInstructionName(name)) {
    Scope s(p, "name");
    p.fail("instruction name '" + name + "' is used twice in function '" + f.name + "'");
  }
  auto inst = createInstruction(op, name);
  readOptionalMember(j, "engine", inst->engine, p);
  for (const char* side : {"ins", "outs"}) {
    const J* it = memberOf(j, side);
    if (!it) continue;
    Scope s(p, side);
    expectArray(*it, p);
    auto& list = side[0] == 'i' ? inst->ins : inst->outs;
    for (size_t i = 0; i < it->size(); ++i) {
      Scope si(p, i);
      list.push_back(readArg((*it)[i], f, p));
    }
  }
  std::vector<std::string_view> known = {"opcode", "name", "engine", "ins", "outs", "source",
                                         "kernel"};
  readNodeFields(*inst, j, p, known);
  readOptionalMember(j, "source", inst->source, p);
  readOptionalMember(j, "kernel", inst->kernel, p);
  inst->extra_json = collectExtra(j, {}, known);
  bb.append(std::move(inst));
}

template <class J>
void readFunction(const J& j, Function& f, JsonPath& p) {
  expectObject(j, p);
  readOptionalMember(j, "attributes", f.attributes, p);
  if (const J* it = memberOf(j, "allocations")) {
    Scope s(p, "allocations");
    expectArray(*it, p);
    for (size_t i = 0; i < it->size(); ++i) {
      Scope si(p, i);
      auto set = readAllocation((*it)[i], p);
      try {
        f.addAllocation(std::move(set));
      } catch (const BIRError& e) {
        p.fail(e.what());
      }
    }
  }
  if (const J* it = memberOf(j, "blocks")) {
    Scope s(p, "blocks");
    expectArray(*it, p);
    for (size_t b = 0; b < it->size(); ++b) {
      Scope sb(p, b);
      const J& bj = (*it)[b];
      expectObject(bj, p);
      std::string bname;
      readOptionalMember(bj, "name", bname, p);
      BasicBlock* bb = f.addBlock(bname);
      const J* insts = memberOf(bj, "instructions");
      if (!insts) continue;
      Scope si(p, "instructions");
      expectArray(*insts, p);
      for (size_t i = 0; i < insts->size(); ++i) {
        Scope sii(p, i);
        readInstruction((*insts)[i], f, *bb, p);
      }
    }
  }
  f.extra_json = collectExtra(j, {"name", "attributes", "allocations", "blocks"});
}

// Refuses nesting deeper than kMaxJsonDepth before nlohmann (or our writer) recurses into it.
void checkDepth(std::string_view text) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw BIRError("JSON nesting is deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels at byte " + std::to_string(i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace

std::string moduleToJson(const Module& m, int indent) { return writeModule(json::Writer(indent), m); }

std::string moduleToJsonThroughDocument(const Module& m, int indent) {
  return writeModule(DocumentBuilder(indent), m);
}

namespace {

template <class J>
std::unique_ptr<Module> readModule(const J& j) {
  JsonPath p;
  auto m = std::make_unique<Module>();
  try {
    expectObject(j, p);
    int64_t version = Module::kBirVersion, format = Module::kFormatVersion;
    readOptionalMember(j, "version", version, p);
    if (version != Module::kBirVersion) {
      Scope s(p, "version");
      p.fail("BIR JSON version " + std::to_string(version) + " is not supported (expected " +
             std::to_string(Module::kBirVersion) + ")");
    }
    readOptionalMember(j, "neuronxsim_format", format, p);
    if (format > Module::kFormatVersion || format < 1) {
      Scope s(p, "neuronxsim_format");
      p.fail("format revision " + std::to_string(format) + " is not supported (this build reads " +
             std::to_string(Module::kFormatVersion) + ")");
    }
    if (const J* it = memberOf(j, "attributes")) {
      Scope s(p, "attributes");
      expectObject(*it, p);
      readOptionalMember(*it, "neuron_core_id", m->neuron_core_id, p);
      m->attributes_extra_json = collectExtra(*it, {"neuron_core_id"});
    }
    readOptionalMember(j, "arch", m->arch, p);
    if (canonicalArch(m->arch).empty()) {
      Scope s(p, "arch");
      p.fail("unknown arch '" + m->arch + "' (known: " + knownArchNames() + ")");
    }
    const J* funcs = memberOf(j, "functions");
    if (!funcs) p.fail("missing required field 'functions'");
    Scope s(p, "functions");
    expectArray(*funcs, p);
    for (size_t i = 0; i < funcs->size(); ++i) {
      Scope si(p, i);
      const J& fj = (*funcs)[i];
      expectObject(fj, p);
      std::string fname;
      readOptionalMember(fj, "name", fname, p);
      readFunction(fj, *m->addFunction(fname), p);
    }
  } catch (const nlohmann::json::exception& e) {
    // Our readers check types before every access; this is a last line of defence.
    throw BIRError(located(p.str(), e.what()));
  }
  m->extra_json = collectExtra(
      j, {"attributes", "functions", "arch", "version", "neuronxsim_format"});
  return m;
}

// The common case, about ten times faster than through nlohmann's document: plain text (see
// JsonDocument.h) that makes a module. Null for anything else, which the nlohmann reader then
// reads or refuses with its own words.
std::unique_ptr<Module> readPlainModule(std::string_view text) {
  json::Document doc;
  if (!doc.parse(text)) return nullptr;
  try {
    return readModule(doc.root());
  } catch (const BIRError&) {
    return nullptr;
  } catch (const DocumentDeclined&) {
    return nullptr;
  }
}

// nlohmann's parser keeps the last of a repeated key, so {"op": "add", "op": "mult"} would read as
// mult: its parse callback refuses the repeat instead, naming the key by its JSON path. (The plain
// document declines a repeated key, so a text with one is always read here.)
class RepeatedKeyCheck {
 public:
  bool operator()(int, nlohmann::json::parse_event_t event, ojson& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        enter(event == E::array_start);
        break;
      case E::key: {
        Frame& f = stack_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          throw BIRError(located(path(), "the key '" + f.key + "' appears twice in one object (each field is named once)"));
        break;
      }
      case E::object_end:
      case E::array_end:
        stack_.pop_back();
        [[fallthrough]];
      case E::value:
        if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    size_t index = 0;
    std::string key;  // an object's current key
    std::unordered_set<std::string> keys;
  };
  void enter(bool array) { stack_.push_back(Frame{array, 0, {}, {}}); }
  // The path of the current value: each enclosing container's current key or index.
  std::string path() const {
    std::string s;
    for (const Frame& f : stack_) {
      if (f.array) {
        s += "[" + std::to_string(f.index) + "]";
      } else {
        if (!s.empty()) s += ".";
        s += f.key;
      }
    }
    return s;
  }
  std::vector<Frame> stack_;
};

}  // namespace

std::vector<std::string> extraFieldNames(const std::string& extra_json) {
  std::vector<std::string> names;
  if (extra_json.empty()) return names;
  const ojson e = extraFields(extra_json, JsonPath());
  for (auto it = e.begin(); it != e.end(); ++it) names.push_back(it.key());
  return names;
}

std::unique_ptr<Module> moduleFromJson(std::string_view text, const JsonReadOptions& opts) {
  checkDepth(text);
  std::unique_ptr<Module> m = opts.plain_first ? readPlainModule(text) : nullptr;
  if (!m) {
    ojson j;
    try {
      j = ojson::parse(text.begin(), text.end(), RepeatedKeyCheck());
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers like 1e5000
      throw BIRError(std::string("invalid JSON: ") + e.what());
    }
    m = readModule(j);
  }
  if (opts.verify) verifyModule(*m);
  return m;
}

}  // namespace bir

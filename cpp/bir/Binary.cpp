#include "Binary.h"

#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "Error.h"
#include "MachineConfig.h"
#include "Verifier.h"
#include "VisitNode.h"

namespace bir {
namespace {

static_assert(std::endian::native == std::endian::little, "BIR binary stores doubles as little-endian bytes");

constexpr std::string_view kMagic{"NXSBIR\0\1", 8};

// ---------------------------------------------------------------------------------------------
// Writer

class Out {
 public:
  void raw(const void* p, size_t n) { s_.append(static_cast<const char*>(p), n); }
  void varint(uint64_t v) {
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    s_.append(buf, n);
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

void put(Out& o, int64_t v) { o.varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
void put(Out& o, bool v) { o.varint(v ? 1 : 0); }
void put(Out& o, double v) { o.raw(&v, sizeof v); }
void put(Out& o, std::string_view v) {
  o.varint(v.size());
  o.raw(v.data(), v.size());
}
void put(Out& o, const std::string& v) { put(o, std::string_view(v)); }
template <class E, std::enable_if_t<IsBirEnum<E>::value, int> = 0>
void put(Out& o, E v) {
  o.varint(static_cast<uint64_t>(v));
}
void put(Out& o, const APPair& v) {
  put(o, v.step);
  put(o, v.num);
}
void put(Out& o, const std::pair<std::string, std::string>& v) {
  put(o, v.first);
  put(o, v.second);
}
template <class Seq>
void putSeq(Out& o, const Seq& v) {
  o.varint(v.size());
  for (const auto& x : v) put(o, x);
}
template <class T>
void put(Out& o, const std::vector<T>& v) {
  putSeq(o, v);
}
template <class T, size_t N>
void put(Out& o, const InlineVector<T, N>& v) {
  putSeq(o, v);
}
template <class T>
void put(Out& o, const std::optional<T>& v) {
  put(o, v.has_value());
  if (v) put(o, *v);
}

template <class T>
void putFields(Out& o, const T& node) {
  T::fields([&](const char*, auto field) { put(o, node.*field); });
}

using LocationIndex = std::unordered_map<const MemoryLocation*, uint64_t>;

void putArg(Out& o, const AccessPattern& a, const Function& f, const LocationIndex& index) {
  put(o, a.kind == ArgKind::ImmValue);
  put(o, a.dtype);
  if (a.kind == ArgKind::ImmValue) return put(o, a.imm);
  auto at = a.loc ? index.find(a.loc) : index.end();
  if (at == index.end() && a.loc) {  // (a location of another function: JSON names it, and reads it back as this one's)
    const MemoryLocation* same = f.findLocation(a.loc->name);
    at = same ? index.find(same) : index.end();
  }
  if (at == index.end())
    throw BIRError("BIR binary: an access pattern of function '" + f.name + "' names " +
                   (a.loc ? "memory location '" + a.loc->name + "', which the function does not allocate"
                          : std::string("no memory location")));
  put(o, a.pattern);
  put(o, a.offset);
  o.varint(at->second);
  put(o, a.flavour);
  put(o, a.accessShape());
  put(o, a.partitionDim());
  put(o, int64_t{a.lnc_size});
  put(o, a.reduce);
}

void putFunction(Out& o, const Function& f) {
  put(o, f.name);
  put(o, f.attributes);
  put(o, f.extra_json);
  LocationIndex index;
  o.varint(f.allocations().size());
  for (const auto& set : f.allocations()) {
    const MemoryLocationSet& a = *set;
    put(o, a.name);
    put(o, a.addr_space);
    put(o, a.dtype);
    put(o, a.partition_dim);
    put(o, a.tensor_shape);
    put(o, a.file);
    put(o, a.no_spill);
    put(o, a.is_volatile);
    put(o, a.is_virtual);
    put(o, a.kind);
    put(o, a.tensor_class);
    put(o, a.extra_json);
    o.varint(a.locations.size());
    for (const auto& loc : a.locations) {
      const MemoryLocation& l = *loc;
      index.emplace(&l, index.size());
      put(o, l.name);
      put(o, l.type);
      put(o, l.addr);
      put(o, l.partitions);
      put(o, l.bytes_per_partition);
      put(o, l.bank);
      put(o, l.base_partition);
      put(o, l.allocated);
      put(o, l.pinned);
      put(o, l.tensor_id);
      put(o, l.extra_json);
    }
  }
  o.varint(f.blocks().size());
  for (const auto& block : f.blocks()) {
    put(o, block->name);
    o.varint(block->size());
    for (const auto& inst : block->instructions()) {
      const Instruction& I = *inst;
      o.varint(I.opcode());
      put(o, I.name);
      put(o, I.engine);
      for (const auto* list : {&I.ins, &I.outs}) {
        o.varint(list->size());
        for (const AccessPattern& a : *list) putArg(o, a, f, index);
      }
      visitNode(I, [&](const auto& node) { putFields(o, node); });
      put(o, I.source);
      put(o, I.kernel);
      put(o, I.extra_json);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reader: every read checks what is left; every count is bounded by the bytes left (an element
// takes at least one), so corrupt counts cannot ask for huge allocations.

class In {
 public:
  explicit In(std::string_view s) : s_(s) {}
  [[noreturn]] void fail(const std::string& what) const { throw BIRError(where() + ": " + what); }
  std::string where() const { return "BIR binary, byte " + std::to_string(at_); }
  const char* take(size_t n, const char* what) {
    if (n > s_.size() - at_) failTruncated(what);
    const char* p = s_.data() + at_;
    at_ += n;
    return p;
  }
  [[gnu::always_inline]] uint64_t varint(const char* what) {
    const size_t left = s_.size() - at_;
    const auto* p = reinterpret_cast<const uint8_t*>(s_.data() + at_);
    if (left > 0 && p[0] < 0x80) {  // (most are one byte: counts, ordinals, small integers)
      ++at_;
      return p[0];
    }
    // With the longest varint's ten bytes left, its bytes are read without a bound check each
    // (offsets, steps and the zigzag of negative numbers take two or more).
    if (left < kMaxVarintBytes) return varintNearEnd(what);
    uint64_t v = p[0] & 0x7f;
    for (size_t i = 1; i < kMaxVarintBytes; ++i) {
      const uint64_t b = p[i];
      v |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        at_ += i + 1;
        if (i == kMaxVarintBytes - 1 && b > 1) failLongVarint(what);
        return v;
      }
    }
    at_ += kMaxVarintBytes;
    failLongVarint(what);
  }
  size_t count(const char* what) {
    const uint64_t n = varint(what);
    if (n > s_.size() - at_) failCount(n, what);
    return static_cast<size_t>(n);
  }
  bool done() const { return at_ == s_.size(); }

 private:
  static constexpr size_t kMaxVarintBytes = 10;  // 7 bits each: 64 bits and no more
  // A varint that may run past the end: one byte at a time, each checked.
  [[gnu::noinline]] uint64_t varintNearEnd(const char* what) {
    uint64_t v = 0;
    for (size_t i = 0; i < kMaxVarintBytes; ++i) {
      const auto b = static_cast<uint8_t>(*take(1, what));
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (!(b & 0x80)) {
        if (i == kMaxVarintBytes - 1 && b > 1) break;
        return v;
      }
    }
    failLongVarint(what);
  }
  // The refusals, out of line: only a refusal builds strings.
  [[noreturn, gnu::noinline]] void failTruncated(const char* what) const {
    fail(std::string("truncated (reading ") + what + ")");
  }
  [[noreturn, gnu::noinline]] void failLongVarint(const char* what) const {
    fail(std::string("a varint longer than 64 bits (reading ") + what + ")");
  }
  [[noreturn, gnu::noinline]] void failCount(uint64_t n, const char* what) const {
    fail("a count of " + std::to_string(n) + " with " + std::to_string(s_.size() - at_) + " bytes left (reading " +
         what + ")");
  }

  std::string_view s_;
  size_t at_ = 0;
};

// Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF): what BIR JSON's
// strings hold, so that every module read writes as JSON.
bool validUtf8(std::string_view s) {
  static constexpr uint32_t kLeast[5] = {0, 0, 0x80, 0x800, 0x10000};  // by sequence length
  for (size_t i = 0; i < s.size();) {
    uint64_t eight;  // ASCII eight bytes at a time (names and source lines are)
    if (s.size() - i >= sizeof eight) {
      std::memcpy(&eight, s.data() + i, sizeof eight);
      if (!(eight & 0x8080808080808080u)) {
        i += sizeof eight;
        continue;
      }
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || s.size() - i < len) return false;
    uint32_t cp = c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < kLeast[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// The fields' readers below are inline, their refusals out of line: a module holds a few dozen
// fields per instruction, and as calls they cost about a fifth of a read.
[[noreturn, gnu::noinline]] void failBoolean(const In& in, uint64_t u, const char* what) {
  in.fail(std::string("boolean ") + std::to_string(u) + " (reading " + what + ")");
}
[[gnu::always_inline]] inline void get(In& in, int64_t& v, const char* what) {
  const uint64_t u = in.varint(what);
  v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}
[[gnu::always_inline]] inline void get(In& in, bool& v, const char* what) {
  const uint64_t u = in.varint(what);
  if (u > 1) failBoolean(in, u, what);
  v = u == 1;
}
void get(In& in, double& v, const char* what) { std::memcpy(&v, in.take(sizeof v, what), sizeof v); }
void get(In& in, std::string& v, const char* what) {
  const size_t n = in.count(what);
  if (n == 0) return v.clear();  // (most of an instruction's strings: its kernel, its unknown fields)
  const std::string_view text(in.take(n, what), n);
  if (!validUtf8(text)) in.fail(std::string("a string that is not UTF-8 (reading ") + what + ")");
  // Made, then moved in: assign()'s general path (it may overlap the string's own text) cost as
  // much as the rest of the string's reading.
  v = std::string(text);
}

// The unknown fields kept verbatim: "" or a JSON object's text, as the JSON reader keeps them.
void getExtra(In& in, std::string& v, const char* what) {
  get(in, v, what);
  if (!v.empty() && (v.front() != '{' || !nlohmann::json::accept(v)))
    in.fail(std::string("unknown fields that are not a JSON object (reading ") + what + ")");
}
template <class E>
[[noreturn, gnu::noinline]] void failOrdinal(const In& in, uint64_t u, const char* what) {
  in.fail(std::string(EnumTraits<E>::kTypeName) + " ordinal " + std::to_string(u) + " (reading " + what + ")");
}
template <class E, std::enable_if_t<IsBirEnum<E>::value, int> = 0>
[[gnu::always_inline]] inline void get(In& in, E& v, const char* what) {
  const uint64_t u = in.varint(what);
  if (u >= static_cast<uint64_t>(EnumTraits<E>::kCount)) failOrdinal<E>(in, u, what);
  v = static_cast<E>(u);
}
[[gnu::always_inline]] inline void get(In& in, APPair& v, const char* what) {
  get(in, v.step, what);
  get(in, v.num, what);
}
void get(In& in, std::pair<std::string, std::string>& v, const char* what) {
  get(in, v.first, what);
  get(in, v.second, what);
}
template <class Seq>
void getSeq(In& in, Seq& v, const char* what) {
  v.clear();
  v.resize(in.count(what));
  for (auto& x : v) get(in, x, what);
}
template <class T>
void get(In& in, std::vector<T>& v, const char* what) {
  getSeq(in, v, what);
}
template <class T, size_t N>
void get(In& in, InlineVector<T, N>& v, const char* what) {
  getSeq(in, v, what);
}
template <class T>
void get(In& in, std::optional<T>& v, const char* what) {
  bool present;
  get(in, present, what);
  if (!present) return v.reset();
  T x{};
  get(in, x, what);
  v = std::move(x);
}

template <class T>
void getFields(In& in, T& node) {
  T::fields([&](const char* key, auto field) { get(in, node.*field, key); });
}

void getArg(In& in, AccessPattern& a, const std::vector<MemoryLocation*>& locations) {
  bool immediate;
  get(in, immediate, "an access pattern's kind");
  a.kind = immediate ? ArgKind::ImmValue : ArgKind::PhysicalAP;
  get(in, a.dtype, "an access pattern's dtype");
  if (a.kind == ArgKind::ImmValue) return get(in, a.imm, "an immediate's value");
  get(in, a.pattern, "an access pattern");
  get(in, a.offset, "an access pattern's offset");
  const uint64_t loc = in.varint("an access pattern's memory location");
  if (loc >= locations.size())
    in.fail("memory location " + std::to_string(loc) + " of a function with " + std::to_string(locations.size()));
  a.loc = locations[loc];
  get(in, a.flavour, "an access pattern's access");
  std::vector<int64_t> accessShape;
  int64_t partitionDim = -1, lncSize = 1;
  get(in, accessShape, "an access pattern's access_shape");
  get(in, partitionDim, "an access pattern's partition_dim");
  get(in, lncSize, "an access pattern's lnc_size");
  a.setAccessShape(std::move(accessShape));
  a.setPartitionDim(partitionDim);
  a.lnc_size = narrowLncSize(lncSize, [&in] { return in.where() + " (an access pattern's lnc_size)"; });
  get(in, a.reduce, "an access pattern's reduce");
}

void getFunction(In& in, Function& f) {
  get(in, f.attributes, "a function's attributes");
  getExtra(in, f.extra_json, "a function's unknown fields");
  std::vector<MemoryLocation*> locations;
  const size_t nSets = in.count("a function's allocations");
  for (size_t i = 0; i < nSets; ++i) {
    auto a = std::make_unique<MemoryLocationSet>();
    get(in, a->name, "an allocation's name");
    get(in, a->addr_space, "an allocation's addr_space");
    get(in, a->dtype, "an allocation's dtype");
    get(in, a->partition_dim, "an allocation's partition_dim");
    get(in, a->tensor_shape, "an allocation's tensor_shape");
    get(in, a->file, "an allocation's file");
    get(in, a->no_spill, "an allocation's no_spill");
    get(in, a->is_volatile, "an allocation's volatile");
    get(in, a->is_virtual, "an allocation's virtual");
    get(in, a->kind, "an allocation's kind");
    get(in, a->tensor_class, "an allocation's tensor_class");
    getExtra(in, a->extra_json, "an allocation's unknown fields");
    const size_t nLocs = in.count("an allocation's memory locations");
    for (size_t k = 0; k < nLocs; ++k) {
      auto l = std::make_unique<MemoryLocation>();
      get(in, l->name, "a memory location's name");
      get(in, l->type, "a memory location's type");
      get(in, l->addr, "a memory location's addr");
      get(in, l->partitions, "a memory location's partitions");
      get(in, l->bytes_per_partition, "a memory location's bytes_per_partition");
      get(in, l->bank, "a memory location's bank");
      get(in, l->base_partition, "a memory location's base");
      get(in, l->allocated, "a memory location's allocated");
      get(in, l->pinned, "a memory location's pinned");
      get(in, l->tensor_id, "a memory location's tensor_id");
      getExtra(in, l->extra_json, "a memory location's unknown fields");
      locations.push_back(l.get());
      a->locations.push_back(std::move(l));
    }
    try {
      f.addAllocation(std::move(a));
    } catch (const BIRError& e) {
      in.fail(e.what());
    }
  }
  const size_t nBlocks = in.count("a function's blocks");
  for (size_t b = 0; b < nBlocks; ++b) {
    std::string name;
    get(in, name, "a block's name");
    BasicBlock* bb = f.addBlock(std::move(name));
    const size_t nInsts = in.count("a block's instructions");
    bb->reserve(nInsts);
    for (size_t i = 0; i < nInsts; ++i) {
      const uint64_t op = in.varint("an opcode");
      if (op >= static_cast<uint64_t>(InstructionType::kCount)) in.fail("opcode ordinal " + std::to_string(op));
      std::string instName;
      get(in, instName, "an instruction's name");
      auto inst = createInstruction(static_cast<Opcode>(op), instName);
      get(in, inst->engine, "an instruction's engine");
      for (auto* list : {&inst->ins, &inst->outs}) {
        list->resize(in.count("an instruction's operands"));
        for (AccessPattern& a : *list) getArg(in, a, locations);
      }
      visitNode(*inst, [&](auto& node) { getFields(in, node); });
      get(in, inst->source, "an instruction's source");
      get(in, inst->kernel, "an instruction's kernel");
      getExtra(in, inst->extra_json, "an instruction's unknown fields");
      const Instruction* added = bb->append(std::move(inst));
      if (!instName.empty() && added->name != instName)  // (append renamed it: the name was taken)
        in.fail("instruction name '" + instName + "' is used twice in function '" + f.name + "'");
    }
  }
}

}  // namespace

std::string moduleToBinary(const Module& m) {
  Out o;
  o.raw(kMagic.data(), kMagic.size());
  put(o, kBinaryFormat);
  put(o, Module::kBirVersion);
  put(o, Module::kFormatVersion);
  put(o, m.neuron_core_id);
  put(o, m.attributes_extra_json);
  put(o, m.arch);
  put(o, m.extra_json);
  o.varint(m.functions().size());
  for (const auto& f : m.functions()) putFunction(o, *f);
  return o.take();
}

std::unique_ptr<Module> moduleFromBinary(std::string_view bytes, bool verify) {
  if (bytes.substr(0, kMagic.size()) != kMagic) throw BIRError("BIR binary: the data does not start with its magic bytes \"NXSBIR\\0\\1\"");
  In in(bytes);
  in.take(kMagic.size(), "the magic bytes");
  for (const auto& [expected, what] : {std::pair{kBinaryFormat, "binary format"},
                                       std::pair{Module::kBirVersion, "BIR version"},
                                       std::pair{Module::kFormatVersion, "neuronxsim_format revision"}}) {
    int64_t v;
    get(in, v, what);
    if (v != expected)
      in.fail(std::string(what) + " " + std::to_string(v) + " is not supported (this build reads " +
              std::to_string(expected) + ")");
  }
  auto m = std::make_unique<Module>();
  get(in, m->neuron_core_id, "the module's neuron_core_id");
  getExtra(in, m->attributes_extra_json, "the module's unknown attributes");
  get(in, m->arch, "the module's arch");
  if (canonicalArch(m->arch).empty()) in.fail("the module's arch '" + m->arch + "' is unknown (known: " + knownArchNames() + ")");
  getExtra(in, m->extra_json, "the module's unknown fields");
  const size_t nFuncs = in.count("the module's functions");
  for (size_t i = 0; i < nFuncs; ++i) {
    std::string name;
    get(in, name, "a function's name");
    getFunction(in, *m->addFunction(std::move(name)));
  }
  if (!in.done()) in.fail("unexpected bytes after the module");
  if (verify) verifyModule(*m);
  return m;
}

}  // namespace bir

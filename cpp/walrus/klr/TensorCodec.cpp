#include "walrus/klr/TensorCodec.h"

#include <cmath>
#include <limits>

#include "bir/Error.h"

namespace klr {
namespace {

using bir::AccessPattern;
using bir::MemoryLocation;

// KLR Memory constructors (kMemory): hbm, sbuf, psum, reg, shared_hbm, private_hbm.
enum KlrMemory { kHbm = 0, kSbuf = 1, kPsum = 2, kReg = 3, kSharedHbm = 4, kPrivateHbm = 5 };

// Product of v[from..]; -1 when it overflows (an allocation's shape is only checked for signs).
int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i)
    if (__builtin_mul_overflow(p, v[i], &p)) return -1;
  return p;
}

// The shape a TensorName gives the location: the allocation's tensor_shape when it describes the
// location exactly (partition dim first for SBUF/PSUM), else the location's own 2-D shape.
std::vector<int64_t> klrShape(const MemoryLocation& l) {
  const auto& ts = l.set->tensor_shape;
  const int64_t dsize = bir::dtypeSize(l.set->dtype);
  if (l.isOnChip()) {
    const int64_t row = l.bytes_per_partition / dsize;
    if (!ts.empty() && ts[0] == l.partitions && product(ts, 1) == row) return ts;
    return {l.partitions, row};
  }
  const int64_t elems = l.partitions * l.bytes_per_partition / dsize;
  if (!ts.empty() && product(ts) == elems) return ts;
  return {1, elems};
}

Item natItem(int64_t v, const char* what) {
  if (v < 0) throw NotRepresentable{std::string(what) + " " + std::to_string(v) + " is negative"};
  return nat(static_cast<uint64_t>(v));
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

AccessPattern readAccess(const Item& it, TensorTable& tensors, const std::string& what,
                         std::optional<AccessPattern>* index, int64_t* indirectDim) {
  Record acc(it, tags::Access, what);
  acc.expectFields(1);
  if (acc.ctor() == ctors::AccessSimple) {
    MemoryLocation* loc = tensors.resolve(acc[0], what + ".tensor");
    return bir::sequentialPattern(loc);
  }
  if (acc.ctor() != ctors::AccessBirPattern) {
    static const char* kNames[] = {"simple", "basic", "pattern", "birPattern"};
    fail(it, what,
         std::string("Access.") + (acc.ctor() < 4 ? kNames[acc.ctor()] : "?") +
             " is not supported: neuronxsim reads Access.birPattern (BIR's access pattern) and "
             "Access.simple (a whole tensor)");
  }
  Record bap(acc[0], tags::BirAccessPattern, what);
  bap.expectFields(7);
  AccessPattern ap;
  ap.loc = tensors.resolve(bap[0], what + ".tensor");
  ap.dtype = ap.loc->set->dtype;
  ap.offset = readSize(bap[1], what + ".offset");
  for (const Item& p : readList(bap[2], what + ".pattern"))
    ap.pattern.push_back(readApPair(p, what + ".pattern"));
  if (readOption(bap[3], what + ".scalarOffset"))
    fail(bap[3], what, "dynamic offsets (scalarOffset) are not supported");
  if (const Item* vec = readOption(bap[4], what + ".vectorOffset")) {
    if (!index) fail(bap[4], what, "only a DMA source may have an indirect index (vectorOffset)");
    *index = readAccess(*vec, tensors, what + ".vectorOffset", nullptr, nullptr);
  }
  const int64_t dim = readInt(bap[5], what + ".indirectDim");
  if (indirectDim) *indirectDim = dim;
  if (const Item* d = readOption(bap[6], what + ".dtypeOverride")) ap.dtype = readDtype(*d, what);
  return ap;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Writing

Item dtypeItem(bir::DType t) {
  const int c = kDtype.find(bir::enumName(t));
  if (c < 0) throw NotRepresentable{"dtype " + std::string(bir::enumName(t)) + " has no KLR Dtype"};
  return enumItem(kDtype, c);
}

Item engineItem(bir::Engine e) { return enumItem(kEngine, klrCtorOf(e, kEngine, 0)); }

Item tensorNameItem(const MemoryLocation& l) {
  const std::vector<int64_t> shape = klrShape(l);
  std::vector<Item> freeDims;
  for (size_t i = 1; i < shape.size(); ++i) freeDims.push_back(natItem(shape[i], "dimension"));
  const int64_t freeElements = product(shape, 1);
  const int64_t dsize = bir::dtypeSize(l.set->dtype);
  int memory;
  int64_t parSize, freeSize, parOffset = 0, freeOffset = 0;
  if (l.isOnChip()) {
    memory = l.type == bir::MemoryType::SB ? kSbuf : kPsum;
    parSize = l.partitions;
    freeSize = l.bytes_per_partition;
    parOffset = l.base_partition;
    freeOffset = l.addr;
  } else {
    memory = kHbm;
    parSize = shape[0];
    freeSize = freeElements * dsize;
  }
  Item address = record(tags::Address, 0,
                        {cbor::text(l.name), enumItem(kMemory, memory), natItem(parSize, "parSize"),
                         natItem(freeSize, "freeSize"), some(natItem(parOffset, "parOffset")),
                         some(natItem(freeOffset, "freeOffset")), cbor::boolean(false)});
  // Six items and a header of six: KLR's header also counts two zero-size proofs (8), which
  // is not well-formed CBOR; KLR's own reader therefore refuses this record (docs/klr-format.md).
  return record(tags::TensorName, 0,
                {cbor::text(l.name), dtypeItem(l.set->dtype),
                 record(tags::Shape, 0, {natItem(shape[0], "dimension"), list(std::move(freeDims))}),
                 std::move(address), natItem(freeElements, "freeElements"), cbor::boolean(false)});
}

Item apPairItem(const bir::APPair& p) {
  // The third field, KLR's per-pair offset used when it combines patterns, carries nothing
  // for a BIR pattern, whose offset is BirAccessPattern.offset.
  return record(tags::APPair, 0, {cbor::integer(p.step), natItem(p.num, "num"), nat(0)});
}

Item tensorRefItem(const AccessPattern& ap, const AccessPattern* index, int64_t indirectDim) {
  if (ap.isImmediate()) throw NotRepresentable{"an immediate where KLR wants a tensor"};
  std::vector<Item> pairs;
  for (const auto& p : ap.pattern) pairs.push_back(apPairItem(p));
  Item vectorOffset = none();
  if (index) {
    Item idx = tensorRefItem(*index);
    // tensorRefItem wraps an Access in TensorRef.abstract; vectorOffset holds the Access itself.
    vectorOffset = some(std::move(idx.items[0].items[0]));
  }
  Item bap = record(tags::BirAccessPattern, 0,
                    {tensorNameItem(*ap.loc), natItem(ap.offset, "offset"), list(std::move(pairs)),
                     none(), std::move(vectorOffset), cbor::integer(indirectDim),
                     ap.dtype == ap.loc->set->dtype ? none() : some(dtypeItem(ap.dtype))});
  Item access = record(tags::Access, ctors::AccessBirPattern, {std::move(bap)});
  return record(tags::TensorRef, ctors::TensorRefAbstract, {std::move(access)});
}

Item immediateFloat(double v) {
  // Outside float32's range the value becomes +-inf explicitly (a plain cast would be undefined);
  // the writer compares what reads back and records the exact value when they differ.
  constexpr double kMax = std::numeric_limits<float>::max();
  float f;
  if (std::isfinite(v) && std::fabs(v) > kMax)
    f = v > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  else
    f = static_cast<float>(v);
  return record(tags::Immediate, ctors::ImmediateFloat, {cbor::float32(f)});
}

Item immediateInt(int64_t v) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    throw NotRepresentable{"integer " + std::to_string(v) + " exceeds KLR's Int32"};
  return record(tags::Immediate, ctors::ImmediateInt, {cbor::integer(v)});
}

Item operandTile(const AccessPattern& ap) {
  return record(tags::Operand, ctors::OperandTile, {tensorRefItem(ap)});
}

Item operandImmediate(Item immediate) {
  std::vector<Item> f;
  f.push_back(std::move(immediate));
  return record(tags::Operand, ctors::OperandImm, std::move(f));
}

Item isaOperandItem(const AccessPattern& ap) {
  if (ap.isImmediate())
    return record(tags::NxsImmediate, 0, {dtypeItem(ap.dtype), cbor::float64(ap.imm)});
  return operandTile(ap);
}

// ---------------------------------------------------------------------------------------------
// Reading

bir::DType readDtype(const Item& it, const std::string& what) {
  return birEnumOf<bir::DType>(it, kDtype, what);
}

bir::Engine readEngine(const Item& it, const std::string& what) {
  return birEnumOf<bir::Engine>(it, kEngine, what);
}

int64_t readSize(const Item& it, const std::string& what) {
  const uint64_t v = readNat(it, what);
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(it, what, "natural number " + std::to_string(v) + " exceeds 63 bits");
  return static_cast<int64_t>(v);
}

bir::APPair readApPair(const Item& it, const std::string& what) {
  Record r(it, tags::APPair, what);
  r.expectFields(3);
  return {readInt(r[0], what + ".step"), readSize(r[1], what + ".num")};
}

TensorTable TensorTable::declared(const bir::Function& f) { return TensorTable(&f, nullptr); }

TensorTable TensorTable::deriving(bir::Function& f, std::unordered_set<std::string> inputs,
                                  std::unordered_set<std::string> outputs) {
  TensorTable t(&f, &f);
  t.inputs_ = std::move(inputs);
  t.outputs_ = std::move(outputs);
  return t;
}

MemoryLocation* TensorTable::resolve(const Item& it, const std::string& what) {
  Record tn(it, tags::TensorName, what);
  tn.expectFields(6);
  const std::string name = readString(tn[0], what + ".name");
  const bir::DType dtype = readDtype(tn[1], what + ".dtype");
  Record shape(tn[2], tags::Shape, what + ".shape");
  shape.expectFields(2);
  std::vector<int64_t> dims = {readSize(shape[0], what + ".shape.parDim")};
  for (const Item& d : readList(shape[1], what + ".shape.freeDims"))
    dims.push_back(readSize(d, what + ".shape.freeDims"));
  Record addr(tn[3], tags::Address, what + ".address");
  addr.expectFields(7);
  const int memory = readEnum(addr[1], kMemory, what + ".address.memory");
  const int64_t parSize = readSize(addr[2], what + ".address.parSize");
  const int64_t freeSize = readSize(addr[3], what + ".address.freeSize");
  const Item* parOffset = readOption(addr[4], what + ".address.parOffset");
  const Item* freeOffset = readOption(addr[5], what + ".address.freeOffset");
  readBool(addr[6], what + ".address.isShared");
  readSize(tn[4], what + ".freeElements");
  readBool(tn[5], what + ".addressRotation");
  if (memory == kReg) fail(it, what, "tensor " + quoted(name) + " lives in registers (unsupported)");

  MemoryLocation* loc = f_->findLocation(name);
  if (!loc) {
    if (!mutable_)
      fail(it, what, "tensor " + quoted(name) + " is not declared in function " + quoted(f_->name));
    return create(it, what, name, dtype, dims, memory, parSize, freeSize, parOffset, freeOffset);
  }
  // The TensorName must describe the declared tensor.
  if (loc->set->dtype != dtype)
    fail(it, what, "tensor " + quoted(name) + " is " + std::string(bir::enumName(loc->set->dtype)) +
                       " but its TensorName says " + std::string(bir::enumName(dtype)));
  const bool onChip = memory == kSbuf || memory == kPsum;
  const bool sameMemory = onChip ? loc->type == (memory == kSbuf ? bir::MemoryType::SB
                                                                 : bir::MemoryType::PSUM)
                                 : loc->isDram();
  if (!sameMemory)
    fail(it, what, "tensor " + quoted(name) + " is in " + std::string(bir::enumName(loc->type)) +
                       " but its TensorName says " + std::string(kMemory.ctors[memory]));
  if (onChip && (parSize != loc->partitions || freeSize != loc->bytes_per_partition ||
                 (parOffset && readSize(*parOffset, what) != loc->base_partition) ||
                 (freeOffset && readSize(*freeOffset, what) != loc->addr)))
    fail(it, what, "the address of tensor " + quoted(name) +
                       " disagrees with its declaration (partitions, bytes, base, addr)");
  return loc;
}

MemoryLocation* TensorTable::create(const Item& at, const std::string& what, const std::string& name,
                                    bir::DType dtype, const std::vector<int64_t>& shape, int memory,
                                    int64_t parSize, int64_t freeSize, const Item* parOffset,
                                    const Item* freeOffset) {
  // Sizes come from the file: keep every byte count inside int64 before BIR computes with them.
  int64_t bytes = bir::dtypeSize(dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, d, &bytes) || bytes > (int64_t{1} << 50))
      fail(at, what, "tensor " + quoted(name) + " is too large");
  try {
    if (memory == kSbuf || memory == kPsum) {
      if (!parOffset || !freeOffset)
        fail(at, what, "tensor " + quoted(name) +
                           " has no address (parOffset/freeOffset): lowering needs a kernel whose "
                           "SBUF and PSUM tensors are allocated");
      return mutable_->createOnChipTensor(
          name, memory == kSbuf ? bir::MemoryType::SB : bir::MemoryType::PSUM, dtype, parSize,
          freeSize, readSize(*parOffset, what), readSize(*freeOffset, what), shape);
    }
    bir::MemoryType type = bir::MemoryType::DRAM;
    bir::TensorKind kind = bir::TensorKind::Internal;
    if (inputs_.count(name)) {
      type = bir::MemoryType::Input;
      kind = bir::TensorKind::ExternalInput;
    } else if (outputs_.count(name)) {
      type = bir::MemoryType::Output;
      kind = bir::TensorKind::ExternalOutput;
    }
    return mutable_->createDramTensor(name, type, dtype, shape, kind);
  } catch (const bir::BIRError& e) {
    fail(at, what, e.what());
  }
}

AccessPattern readTensorRef(const Item& it, TensorTable& tensors, const std::string& what,
                            std::optional<AccessPattern>* index, int64_t* indirectDim) {
  Record ref(it, tags::TensorRef, what);
  if (ref.ctor() != ctors::TensorRefAbstract) {
    static const char* kNames[] = {"abstract", "sbuf", "psum", "hbm", "register"};
    fail(it, what,
         std::string("TensorRef.") + (ref.ctor() < 5 ? kNames[ref.ctor()] : "?") +
             " is not supported: neuronxsim reads tensors as TensorRef.abstract");
  }
  ref.expectFields(1);
  return readAccess(ref[0], tensors, what, index, indirectDim);
}

double readImmediate(const Item& it, const std::string& what) {
  Record r(it, tags::Immediate, what);
  r.expectFields(1);
  if (r.ctor() == ctors::ImmediateInt) {
    const int64_t v = readInt(r[0], what);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      fail(r[0], what, "Immediate.int " + std::to_string(v) + " exceeds Int32");
    return static_cast<double>(v);
  }
  if (r.ctor() == ctors::ImmediateFloat) return readFloat(r[0], what);
  fail(it, what, "Immediate.register and Immediate.pointer are not supported (expected int or float)");
}

void readOperand(const Item& it, TensorTable& tensors, const std::string& what, double* value,
                 std::optional<AccessPattern>* tile) {
  Record r(it, tags::Operand, what);
  r.expectFields(1);
  if (r.ctor() == ctors::OperandImm) {
    *value = readImmediate(r[0], what);
    tile->reset();
  } else if (r.ctor() == ctors::OperandTile) {
    *tile = readTensorRef(r[0], tensors, what);
  } else {
    fail(it, what, "Operand has no constructor " + std::to_string(r.ctor()));
  }
}

AccessPattern readIsaOperand(const Item& it, TensorTable& tensors, const std::string& what) {
  if (isRecordOf(it, tags::NxsImmediate)) {
    Record r(it, tags::NxsImmediate, what);
    r.expectFields(2);
    const bir::DType dtype = readDtype(r[0], what + ".dtype");
    return AccessPattern::immediate(readFloat(r[1], what + ".value"), dtype);
  }
  double value = 0;
  std::optional<AccessPattern> tile;
  readOperand(it, tensors, what, &value, &tile);
  return tile ? *tile : AccessPattern::immediate(value);
}

}  // namespace klr

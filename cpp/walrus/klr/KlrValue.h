// KLR's value encoding on top of CBOR (KLR/Serde/Basic.lean, docs/disk_format.md), and the tag
// numbers of every KLR type neuronxsim reads or writes, plus neuronxsim's own extension tags.
//
// Every value of a Lean inductive or structure is a CBOR tag whose 16-bit number is
// (type tag << 8 | constructor tag), enclosing a definite array of the constructor's fields in
// declaration order: `d9 TT CC 8n <fields...>`. Option is type 0xff (none = ctor 0, some = 1).
// Lists are arrays, String is text, Nat/Int are CBOR integers (64 bits), Float32/Float are
// float32/float64, Bool is false/true.
//
// KLR quirk: TensorName, Slice and AccessBasic have proof (Prop) fields of zero size that KLR still
// counts in the array header (TensorName declares 8 and writes 6 items). klrDecodeOptions()
// teaches the CBOR decoder to read those records; neuronxsim never writes the quirk.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bir/Enums.h"
#include "walrus/klr/Cbor.h"

namespace klr {

using cbor::Item;

// ---- type tags ----
namespace tags {
// KLR Core (KLR/Core/Basic.lean, Tensor.lean, Operators.lean)
inline constexpr uint8_t Pos = 100, Stmt = 103, Block = 104, Kernel = 105, LncKernel = 108,
                         Memory = 110, Dtype = 111, Shape = 112,
                         Address = 113, TensorName = 114, Slice = 115, AccessBasic = 118,
                         APPair = 119, BirAccessPattern = 124, Access = 125, TensorRef = 128,
                         MatmulPerfMode = 129, Engine = 130, Immediate = 131, Operand = 133,
                         DataPattern = 134, AluOp = 135, DropoutThresholdType = 136, AccumCmd = 137,
                         ActivationFunc = 138, DgeComputeOp = 140, DmaBounds = 141,
                         TensorScalarReverseOps = 144, TensorSubDim = 145, Operator = 218,
                         PrintOutputBuffer = 214;
// The operator payload records (each Operator constructor wraps one).
inline constexpr uint8_t Dropout = 147, NcActivate = 149, NcAffineSelect = 151, DmaCopy = 152,
                         NcDmaCopy = 153, Transpose = 155, Shuffle = 157, MemSet = 158, Iota = 159,
                         NcRangeSelect = 165, CopyPredicated = 168, TensorTensorScan = 169,
                         FindIndex8 = 171, MatchReplace8 = 172, Max8 = 173,
                         BatchNormAggregate = 174, BatchNormStats = 175, Reciprocal = 176, Copy = 177,
                         NcCopy = 178, TensorReduce = 179, TensorScalar = 180, TensorTensor = 182,
                         NcMatMul = 183, SelectReduce = 185, DevicePrint = 215;
// The container (KLR/Serde/File.lean, KLR/File.lean)
inline constexpr uint8_t KLRFile = 0xd9, KLRFileCtor = 0xf7, KLRMetaData = 0xeb, Contents = 0xec,
                         Option = 0xff;
// neuronxsim's extensions, in the range 0xf0..0xfe that KLR leaves unassigned (docs/klr-format.md)
inline constexpr uint8_t NxsOperator = 0xf0, NxsImmediate = 0xf1, NxsModule = 0xf8;
}  // namespace tags

// Constructor numbers of the types above that neuronxsim builds by hand.
namespace ctors {
inline constexpr uint8_t NxsOperatorExt = 0, NxsOperatorIsa = 1;
inline constexpr uint8_t TensorRefAbstract = 0, AccessSimple = 0, AccessBirPattern = 3;
inline constexpr uint8_t OperandImm = 0, OperandTile = 1;
inline constexpr uint8_t ImmediateInt = 2, ImmediateFloat = 3;
inline constexpr uint8_t DmaBoundsSkip = 0, DmaBoundsError = 1;
}  // namespace ctors

// Options for decoding KLR data: KLR's nesting plus its Prop-counting quirk.
cbor::DecodeOptions klrDecodeOptions();

// ---- KLR enums (types whose constructors take no fields), in constructor order ----
struct KlrEnum {
  uint8_t type;
  const char* name;
  std::span<const std::string_view> ctors;
  // Index of `ctorName`, or -1.
  int find(std::string_view ctorName) const;
};
extern const KlrEnum kMemory, kDtype, kEngine, kAluOp, kAccumCmd, kActivationFunc, kMatmulPerfMode,
    kTensorSubDim, kTensorScalarReverseOps, kDgeComputeOp, kDropoutThresholdType,
    kPrintOutputBuffer;

// The 76 constructors of Core.Operator, in order (their names appear in error messages).
std::span<const std::string_view> operatorCtorNames();
int operatorCtor(std::string_view name);  // -1 when unknown

// ---- writing ----
Item record(uint8_t type, uint8_t ctor, std::vector<Item> fields);
Item enumItem(const KlrEnum& e, int ctor);
Item none();
Item some(Item v);
Item nat(uint64_t v);
Item list(std::vector<Item> elements);

// ---- reading ----
// The fields of one record, read with the name of what is being read for error messages
// ("NcMatMul.dst" ...). Every accessor checks the type and throws KLRError("byte N: what: ...").
class Record {
 public:
  Record(const Item& item, uint8_t type, std::string what);
  uint8_t ctor() const { return ctor_; }
  size_t size() const { return fields_->size(); }
  const Item& item() const { return *item_; }
  const std::string& what() const { return what_; }
  // Refuses a record whose field count is not `n` (or not in [lo, hi]).
  const Record& expectFields(size_t n) const { return expectFields(n, n); }
  const Record& expectFields(size_t lo, size_t hi) const;
  const Item& operator[](size_t i) const { return fields_->at(i); }
  std::string field(size_t i) const;  // what().<i> for messages, e.g. "NcMatMul[3]"

 private:
  const Item* item_;
  const std::vector<Item>* fields_;
  uint8_t ctor_;
  std::string what_;
};

[[noreturn]] void fail(const Item& at, const std::string& what, const std::string& message);

// True when `it` is a record of KLR type `type` (any constructor).
bool isRecordOf(const Item& it, uint8_t type);

uint64_t readNat(const Item& it, const std::string& what);
int64_t readInt(const Item& it, const std::string& what);
std::string readString(const Item& it, const std::string& what);
bool readBool(const Item& it, const std::string& what);
double readFloat(const Item& it, const std::string& what);
const std::vector<Item>& readList(const Item& it, const std::string& what);
// The content of `some`, or null for `none`.
const Item* readOption(const Item& it, const std::string& what);
// The constructor index of an enum value (checked against the table).
int readEnum(const Item& it, const KlrEnum& e, const std::string& what);

// ---- BIR enums <-> KLR enums, matched by name ----
// ActivationFunc names differ between BIR JSON and KLR; these translate them.
std::string_view klrActivationName(std::string_view birName);
std::string_view birActivationName(std::string_view klrName);

// The KLR constructor for a BIR enum value with the same name, or `fallback` when KLR has none
// (the caller records the exact value in an extension attribute).
template <class E>
int klrCtorOf(E v, const KlrEnum& e, int fallback) {
  const int c = e.find(bir::enumName(v));
  return c >= 0 ? c : fallback;
}

// The BIR enum value a KLR enum value names; KLRError when BIR has no such member.
template <class E>
E birEnumOf(const Item& it, const KlrEnum& e, const std::string& what) {
  const std::string_view name = e.ctors[static_cast<size_t>(readEnum(it, e, what))];
  E v{};
  if (!bir::enumFromName(name, &v))
    fail(it, what, std::string("KLR ") + e.name + " '" + std::string(name) + "' has no BIR " +
                       std::string(bir::EnumTraits<E>::kTypeName) + " equivalent");
  return v;
}

}  // namespace klr

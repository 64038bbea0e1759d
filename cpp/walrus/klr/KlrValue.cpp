#include "walrus/klr/KlrValue.h"

#include <array>
#include <limits>

#include "bir/Error.h"

namespace klr {
namespace {

// Constructor names in declaration order, as KLR/Core/*.lean declares them (public facts).
constexpr std::string_view kMemoryNames[] = {"hbm", "sbuf", "psum", "reg", "shared_hbm", "private_hbm"};
constexpr std::string_view kDtypeNames[] = {
    "bfloat16", "float8e3", "float8e4", "float8e5", "float16", "float32", "float32r",
    "int8", "int16", "int64", "int32", "uint8", "uint16", "uint32", "uint64",
    "float8_e4m3", "float8_e4m3fn", "float8_e5m2_x4", "float8_e4m3fn_x4", "float4_e2m1fn_x4"};
// KLR spells the engines in lower case; neuronxsim's names are BIR JSON's.
constexpr std::string_view kEngineNames[] = {"Unassigned", "Activation", "DMA", "DVE", "PE", "Pool", "SP"};
constexpr std::string_view kAluOpNames[] = {
    "abs", "add", "arith_shift_left", "arith_shift_right", "average", "bitwise_and",
    "bitwise_not", "bitwise_or", "bitwise_xor", "bypass", "divide", "is_equal", "is_ge", "is_gt",
    "is_le", "is_lt", "logical_and", "logical_or", "logical_shift_left", "logical_shift_right",
    "logical_xor", "max", "min", "mod", "mult", "not_equal", "pow", "rsqrt", "subtract"};
constexpr std::string_view kAccumCmdNames[] = {"Idle", "Zero", "Accumulate", "ZeroAccumulate",
                                               "LoadAccumulate"};
constexpr std::string_view kActivationNames[] = {
    "abs", "arctan", "copy", "erf", "erf_dx", "exp", "gelu", "gelu_apprx_tanh", "gelu_dx",
    "log", "mish", "reciprocal", "relu", "rsqrt", "sigmoid", "sign", "silu", "silu_dx", "sin",
    "softplus", "sqrt", "square", "tanh", "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx"};
constexpr std::string_view kPerfModeNames[] = {"None", "DoubleRow", "DoubleRowSwInterleave"};
constexpr std::string_view kSubDimNames[] = {"X", "XY", "XYZ", "XYZW"};
constexpr std::string_view kReverseNames[] = {"none", "first", "second", "both"};
constexpr std::string_view kDgeComputeNames[] = {"none", "add"};
constexpr std::string_view kDropoutThresholdNames[] = {"DropRate", "KeepRate"};
constexpr std::string_view kPrintBufferNames[] = {"stdout", "stderr"};

constexpr std::string_view kOperatorNames[] = {
    "activate", "ncActivate", "activationReduce", "affineSelect", "ncAffineSelect",
    "batchNormAggregate", "batchNormStats", "copy", "ncCopy", "copyPredicated", "dmaCopy",
    "ncDmaCopy", "dmaTranspose", "dropout", "findIndex8", "iota", "loadMaskRegister",
    "loadStationary", "localGather", "ncLocalGather", "matMul", "ncMatMul", "matchReplace8",
    "matchValueLoad", "max8", "memSet", "rangeSelect", "ncRangeSelect", "reciprocal",
    "scalarTensorTensor", "ncScalarTensorTensor", "shuffle", "tensorReduce", "tensorScalar",
    "tensorTensor", "tensorTensorScan", "tensorPartitionReduce", "tensorScalarReduce",
    "transpose", "selectReduce", "sequenceBounds", "sendRecv", "sendRecvCompute", "tensorLoad",
    "tensorStore", "registerMove", "cmpBranch", "registerAluOp", "quantizeMX", "ncMatMulMX",
    "dmaCompute", "allReduce", "allGather", "reduceScatter", "collectivePermute",
    "collectivePermuteImplicit", "collectivePermuteImplicitReduce", "broadcast", "allToAll",
    "rankId", "currentProcessingRankId", "send", "recv", "coreBarrier", "rng", "rand2",
    "randGetState", "setRngSeed", "randSetState", "extendedInst", "tensorScalarCumulative",
    "ncNGather", "nonzeroWithCount", "devicePrint", "exponential", "activate2"};
static_assert(std::size(kOperatorNames) == 76, "Core.Operator has 76 constructors");

// BIR ActivationFunc name -> KLR ActivationFunc name, where KLR spells it differently.
constexpr std::pair<std::string_view, std::string_view> kActivationRenames[] = {
    {"Abs", "abs"}, {"Arctan", "arctan"}, {"Copy", "copy"}, {"Erf", "erf"},
    {"Derivative_Erf", "erf_dx"}, {"Exp", "exp"}, {"Gelu", "gelu"},
    {"Gelu_apprx_tanh", "gelu_apprx_tanh"}, {"Derivative_Gelu", "gelu_dx"}, {"Ln", "log"},
    {"Mish", "mish"}, {"Reciprocal", "reciprocal"}, {"Relu", "relu"}, {"Rsqrt", "rsqrt"},
    {"Sigmoid", "sigmoid"}, {"Sign", "sign"}, {"Silu", "silu"}, {"Derivative_silu", "silu_dx"},
    {"Sin", "sin"}, {"Softplus", "softplus"}, {"Sqrt", "sqrt"}, {"Square", "square"},
    {"Tanh", "tanh"}, {"Gelu_apprx_sigmoid", "gelu_apprx_sigmoid"}};

std::string tagName(uint64_t tag) {
  static const char* hex = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 12; i >= 0; i -= 4) s += hex[(tag >> i) & 15];
  return s;
}

}  // namespace

const KlrEnum kMemory{tags::Memory, "Memory", kMemoryNames};
const KlrEnum kDtype{tags::Dtype, "Dtype", kDtypeNames};
const KlrEnum kEngine{tags::Engine, "Engine", kEngineNames};
const KlrEnum kAluOp{tags::AluOp, "AluOp", kAluOpNames};
const KlrEnum kAccumCmd{tags::AccumCmd, "AccumCmd", kAccumCmdNames};
const KlrEnum kActivationFunc{tags::ActivationFunc, "ActivationFunc", kActivationNames};
const KlrEnum kMatmulPerfMode{tags::MatmulPerfMode, "MatmulPerfMode", kPerfModeNames};
const KlrEnum kTensorSubDim{tags::TensorSubDim, "TensorSubDim", kSubDimNames};
const KlrEnum kTensorScalarReverseOps{tags::TensorScalarReverseOps, "TensorScalarReverseOps",
                                      kReverseNames};
const KlrEnum kDgeComputeOp{tags::DgeComputeOp, "DgeComputeOp", kDgeComputeNames};
const KlrEnum kDropoutThresholdType{tags::DropoutThresholdType, "DropoutThresholdType",
                                    kDropoutThresholdNames};
const KlrEnum kPrintOutputBuffer{tags::PrintOutputBuffer, "PrintOutputBuffer", kPrintBufferNames};

int KlrEnum::find(std::string_view ctorName) const {
  for (size_t i = 0; i < ctors.size(); ++i)
    if (ctors[i] == ctorName) return static_cast<int>(i);
  return -1;
}

std::span<const std::string_view> operatorCtorNames() { return kOperatorNames; }

int operatorCtor(std::string_view name) {
  for (size_t i = 0; i < std::size(kOperatorNames); ++i)
    if (kOperatorNames[i] == name) return static_cast<int>(i);
  return -1;
}

cbor::DecodeOptions klrDecodeOptions() {
  cbor::DecodeOptions o;
  o.count_quirks = {{uint64_t{tags::TensorName} << 8, 8, 6},
                    {uint64_t{tags::Slice} << 8, 4, 3},
                    {uint64_t{tags::AccessBasic} << 8, 3, 2}};
  return o;
}

// ---- writing ----

Item record(uint8_t type, uint8_t ctor, std::vector<Item> fields) {
  return cbor::tag(uint64_t{type} << 8 | ctor, cbor::array(std::move(fields)));
}
Item enumItem(const KlrEnum& e, int ctor) { return record(e.type, static_cast<uint8_t>(ctor), {}); }
Item none() { return record(tags::Option, 0, {}); }
Item some(Item v) {
  std::vector<Item> f;
  f.push_back(std::move(v));
  return record(tags::Option, 1, std::move(f));
}
Item nat(uint64_t v) { return cbor::unsignedInt(v); }
Item list(std::vector<Item> elements) { return cbor::array(std::move(elements)); }

// ---- reading ----

void fail(const Item& at, const std::string& what, const std::string& message) {
  cbor::failAt(at.offset, what.empty() ? message : what + ": " + message);
}

bool isRecordOf(const Item& it, uint8_t type) {
  return it.isTag() && it.value >> 8 == type && it.value <= 0xffff;
}

Record::Record(const Item& item, uint8_t type, std::string what)
    : item_(&item), what_(std::move(what)) {
  const std::string expected = "a " + what_ + " record (KLR tag " + std::to_string(type) + ")";
  if (!item.isTag())
    fail(item, what_, "expected " + expected + ", found a " + cbor::typeName(item.type));
  if (item.value >> 8 != type || item.value > 0xffff)
    fail(item, what_, "expected " + expected + ", found tag " + tagName(item.value));
  const Item& content = item.tagged();
  if (content.type != cbor::Type::Array)
    fail(content, what_, std::string("expected the array of fields after the tag, found a ") +
                             cbor::typeName(content.type));
  fields_ = &content.items;
  ctor_ = static_cast<uint8_t>(item.value & 0xff);
}

const Record& Record::expectFields(size_t lo, size_t hi) const {
  if (size() < lo || size() > hi)
    fail(*item_, what_,
         "constructor " + std::to_string(ctor_) + " has " + std::to_string(size()) +
             " field(s); expected " +
             (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)));
  return *this;
}

std::string Record::field(size_t i) const { return what_ + "[" + std::to_string(i) + "]"; }

uint64_t readNat(const Item& it, const std::string& what) {
  if (it.type != cbor::Type::Unsigned)
    fail(it, what, std::string("expected a natural number, found a ") + cbor::typeName(it.type));
  return it.value;
}

int64_t readInt(const Item& it, const std::string& what) {
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (it.type == cbor::Type::Unsigned) {
    if (it.value > kMax) fail(it, what, "integer " + std::to_string(it.value) + " exceeds 64 bits");
    return static_cast<int64_t>(it.value);
  }
  if (it.type == cbor::Type::Negative) {
    if (it.value > kMax) fail(it, what, "negative integer exceeds 64 bits");
    return -static_cast<int64_t>(it.value) - 1;
  }
  fail(it, what, std::string("expected an integer, found a ") + cbor::typeName(it.type));
}

std::string readString(const Item& it, const std::string& what) {
  if (it.type != cbor::Type::Text)
    fail(it, what, std::string("expected a text string, found a ") + cbor::typeName(it.type));
  return it.bytes;
}

bool readBool(const Item& it, const std::string& what) {
  if (it.type != cbor::Type::Bool)
    fail(it, what, std::string("expected a boolean, found a ") + cbor::typeName(it.type));
  return it.value != 0;
}

double readFloat(const Item& it, const std::string& what) {
  if (it.type != cbor::Type::Float)
    fail(it, what, std::string("expected a float, found a ") + cbor::typeName(it.type));
  return it.number;
}

const std::vector<Item>& readList(const Item& it, const std::string& what) {
  if (it.type != cbor::Type::Array)
    fail(it, what, std::string("expected a list, found a ") + cbor::typeName(it.type));
  return it.items;
}

const Item* readOption(const Item& it, const std::string& what) {
  Record r(it, tags::Option, what);
  if (r.ctor() == 0) {
    r.expectFields(0);
    return nullptr;
  }
  if (r.ctor() != 1) fail(it, what, "Option has no constructor " + std::to_string(r.ctor()));
  r.expectFields(1);
  return &r[0];
}

int readEnum(const Item& it, const KlrEnum& e, const std::string& what) {
  Record r(it, e.type, what);
  if (r.ctor() >= e.ctors.size())
    fail(it, what, std::string(e.name) + " has no constructor " + std::to_string(r.ctor()) +
                       " (it has " + std::to_string(e.ctors.size()) + ")");
  r.expectFields(0);
  return r.ctor();
}

std::string_view klrActivationName(std::string_view birName) {
  for (const auto& [b, k] : kActivationRenames)
    if (b == birName) return k;
  return {};
}

std::string_view birActivationName(std::string_view klrName) {
  for (const auto& [b, k] : kActivationRenames)
    if (k == klrName) return b;
  return {};
}

}  // namespace klr

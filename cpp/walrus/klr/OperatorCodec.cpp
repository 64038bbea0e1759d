#include "walrus/klr/OperatorCodec.h"

#include <cmath>

#include "bir/Error.h"

namespace klr {
namespace {

using namespace bir;
using Fields = std::vector<Item>;

// ---------------------------------------------------------------------------------------------
// Encoding helpers

Item op(std::string_view ctorName, uint8_t payloadTag, Fields fields) {
  Fields payload;
  payload.push_back(record(payloadTag, 0, std::move(fields)));
  return record(tags::Operator, static_cast<uint8_t>(operatorCtor(ctorName)), std::move(payload));
}

Item ref(const AccessPattern& ap) { return tensorRefItem(ap); }
Item optRef(const std::vector<AccessPattern>& list, size_t i) {
  return i < list.size() ? some(ref(list[i])) : none();
}
Item alu(AluOp o) { return enumItem(kAluOp, klrCtorOf(o, kAluOp, 0)); }
Item accum(AccumCmd a) { return enumItem(kAccumCmd, klrCtorOf(a, kAccumCmd, 0)); }
Item boolean(bool b) { return cbor::boolean(b); }
Item noDtype() { return none(); }

Item dataPattern(int64_t offset, const std::vector<APPair>& pattern, int64_t channelMultiplier) {
  Fields pairs;
  for (const auto& p : pattern) pairs.push_back(apPairItem(p));
  return record(tags::DataPattern, 0,
                {cbor::integer(offset), list(std::move(pairs)), cbor::integer(channelMultiplier)});
}

Item natList(const std::vector<int64_t>& v, const char* what) {
  Fields out;
  for (int64_t x : v) {
    if (x < 0) throw NotRepresentable{std::string(what) + " holds a negative value"};
    out.push_back(nat(static_cast<uint64_t>(x)));
  }
  return list(std::move(out));
}

// Operand counts a mapping relies on (the verifier allows ranges).
void expectOperands(const Instruction& I, size_t ins, size_t outs) {
  if (I.ins.size() != ins || I.outs.size() != outs)
    throw NotRepresentable{"operand counts differ from the KLR operator's"};
}

bool isPositiveZero(double v) { return v == 0.0 && !std::signbit(v); }

// ---------------------------------------------------------------------------------------------
// BIR -> KLR, one function per node class

Item encode(const InstActivation& I) {
  const size_t n = 1 + I.has_bias + I.has_scale_tensor;
  expectOperands(I, n, 1);
  const int func = kActivationFunc.find(klrActivationName(enumName(I.func)));
  Item scale = I.has_scale_tensor ? operandTile(I.ins[n - 1]) : operandImmediate(immediateFloat(I.scale));
  return op("ncActivate", tags::NcActivate,
            {ref(I.outs[0]), ref(I.ins[0]), accum(I.acc),
             enumItem(kActivationFunc, func >= 0 ? func : kActivationFunc.find("copy")),
             std::move(scale), I.has_bias ? some(ref(I.ins[1])) : none(),
             I.acc != AccumCmd::Idle ? some(alu(I.acc_op)) : none(), none(), noDtype()});
}

Item encode(const InstMemset& I) {
  expectOperands(I, 0, 1);
  const bool integral = !isFloat(I.outs[0].dtype) && std::nearbyint(I.constant) == I.constant &&
                        std::fabs(I.constant) < 2147483648.0;
  return op("memSet", tags::MemSet,
            {ref(I.outs[0]),
             integral ? immediateInt(static_cast<int64_t>(I.constant)) : immediateFloat(I.constant),
             dtypeItem(I.outs[0].dtype), engineItem(I.engine)});
}

// dst, src, dtype: the shape of several one-input DVE operators.
Item encodeUnary(const Instruction& I, std::string_view ctor, uint8_t payloadTag) {
  expectOperands(I, 1, 1);
  return op(ctor, payloadTag, {ref(I.outs[0]), ref(I.ins[0]), noDtype()});
}

Item encode(const InstTensorCopy& I) {
  expectOperands(I, 1, 1);
  return op("ncCopy", tags::NcCopy, {ref(I.outs[0]), ref(I.ins[0]), noDtype(), engineItem(I.engine)});
}

Item encode(const InstTensorReduce& I) {
  expectOperands(I, 1, 1);
  return op("tensorReduce", tags::TensorReduce,
            {ref(I.outs[0]), ref(I.ins[0]), alu(I.op),
             enumItem(kTensorSubDim, klrCtorOf(I.axis, kTensorSubDim, 0)), boolean(I.negate),
             noDtype(), boolean(false)});
}

Item reverseOps(bool first, bool second) {
  return enumItem(kTensorScalarReverseOps, (first ? 1 : 0) | (second ? 2 : 0));
}

Item encode(const InstTensorScalar& I) {
  expectOperands(I, 1, 1);
  const bool second = I.op1 != AluOp::bypass || !isPositiveZero(I.const1);
  return op("tensorScalar", tags::TensorScalar,
            {ref(I.outs[0]), ref(I.ins[0]), operandImmediate(immediateFloat(I.const0)), alu(I.op0),
             second ? some(operandImmediate(immediateFloat(I.const1))) : none(),
             second ? some(alu(I.op1)) : none(), reverseOps(I.reverse0, I.reverse1),
             engineItem(I.engine), noDtype()});
}

Item encode(const InstTensorScalarPtr& I) {
  if (I.outs.size() != 1 || I.ins.size() < 2) throw NotRepresentable{"operand counts"};
  const bool tile1 = I.ins.size() == 3;
  const bool second = tile1 || I.op1 != AluOp::bypass || !isPositiveZero(I.const1);
  Item imm1 = tile1 ? some(operandTile(I.ins[2]))
                    : (second ? some(operandImmediate(immediateFloat(I.const1))) : none());
  return op("tensorScalar", tags::TensorScalar,
            {ref(I.outs[0]), ref(I.ins[0]), operandTile(I.ins[1]), alu(I.op0), std::move(imm1),
             second ? some(alu(I.op1)) : none(), reverseOps(I.reverse0, I.reverse1),
             engineItem(I.engine), noDtype()});
}

Item encode(const InstTensorTensor& I) {
  expectOperands(I, 2, 1);
  return op("tensorTensor", tags::TensorTensor,
            {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), alu(I.op), noDtype(), engineItem(I.engine)});
}

Item encode(const InstTensorTensorScan& I) {
  if (I.outs.size() != 1 || I.ins.size() < 2) throw NotRepresentable{"operand counts"};
  Item init = I.ins.size() == 3 ? operandTile(I.ins[2]) : operandImmediate(immediateFloat(I.initial));
  return op("tensorTensorScan", tags::TensorTensorScan,
            {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), alu(I.op0), alu(I.op1),
             reverseOps(false, false), std::move(init), accum(AccumCmd::Idle), noDtype()});
}

Item encode(const InstStreamShuffle& I) {
  expectOperands(I, 1, 1);
  Fields mask;
  for (int64_t m : I.shuffle_mask) mask.push_back(immediateInt(m));
  return op("shuffle", tags::Shuffle, {ref(I.outs[0]), ref(I.ins[0]), list(std::move(mask)), noDtype()});
}

Item encode(const InstStreamTranspose& I) {
  expectOperands(I, 1, 1);
  return op("transpose", tags::Transpose,
            {ref(I.outs[0]), ref(I.ins[0]), noDtype(), engineItem(I.engine)});
}

Item encode(const InstIota& I) {
  expectOperands(I, 0, 1);
  return op("iota", tags::Iota,
            {ref(I.outs[0]), dataPattern(I.base, I.pattern, I.channel_multiplier), noDtype()});
}

Item encode(const InstAffineSelect& I) {
  expectOperands(I, 1, 1);
  return op("ncAffineSelect", tags::NcAffineSelect,
            {ref(I.outs[0]), dataPattern(I.base, I.pattern, I.channel_multiplier), ref(I.ins[0]),
             immediateFloat(I.fill_value), noDtype(), alu(I.compare_op)});
}

Item encode(const InstRangeSelect& I) {
  if (I.ins.size() != 3 || I.outs.empty()) throw NotRepresentable{"operand counts"};
  const bool reduce = I.outs.size() == 2;
  return op("ncRangeSelect", tags::NcRangeSelect,
            {ref(I.outs[0]), accum(reduce ? AccumCmd::ZeroAccumulate : AccumCmd::Idle),
             optRef(I.outs, 1), reduce ? some(alu(AluOp::max)) : none(), alu(I.comp_op0),
             alu(I.comp_op1), ref(I.ins[1]), ref(I.ins[2]), immediateInt(I.range_start),
             ref(I.ins[0]), immediateFloat(I.fill_value), noDtype()});
}

Item encode(const InstSelectReduce& I) {
  if (I.ins.size() < 2 || I.outs.empty()) throw NotRepresentable{"operand counts"};
  const bool reduce = I.outs.size() == 2;
  Item onFalse = I.ins.size() == 3 ? operandTile(I.ins[2])
                                   : operandImmediate(immediateFloat(I.on_false_value));
  return op("selectReduce", tags::SelectReduce,
            {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), std::move(onFalse), optRef(I.outs, 1),
             accum(reduce ? AccumCmd::ZeroAccumulate : AccumCmd::Idle), alu(I.reduce_op),
             boolean(false), noDtype()});
}

Item encode(const InstCopyPredicated& I) {
  expectOperands(I, 2, 1);
  return op("copyPredicated", tags::CopyPredicated,
            {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), noDtype(), boolean(false)});
}

Item encode(const InstDropout& I) {
  expectOperands(I, 1, 1);
  return op("dropout", tags::Dropout,
            {ref(I.outs[0]), ref(I.ins[0]), enumItem(kDropoutThresholdType, 0),
             operandImmediate(immediateFloat(I.prob)), noDtype()});
}

Item encode(const InstMaxIndex& I) {
  expectOperands(I, 2, 1);
  return op("findIndex8", tags::FindIndex8, {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), noDtype()});
}

Item encode(const InstMatchReplace& I) {
  if (I.ins.size() != 2 || I.outs.empty()) throw NotRepresentable{"operand counts"};
  return op("matchReplace8", tags::MatchReplace8,
            {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), immediateFloat(I.imm_value),
             optRef(I.outs, 1), noDtype()});
}

Item encode(const InstMatmult& I) {
  expectOperands(I, 2, 1);
  return op("ncMatMul", tags::NcMatMul,
            {ref(I.outs[0]), ref(I.ins[0]), ref(I.ins[1]), boolean(false), boolean(false),
             boolean(I.is_transpose), natList(I.tile_position, "tile_position"),
             natList(I.tile_size, "tile_size"),
             enumItem(kMatmulPerfMode, klrCtorOf(I.perf_mode, kMatmulPerfMode, 0))});
}

Item encode(const InstDMA& I) {
  if (I.outs.size() != 1 || I.ins.empty()) throw NotRepresentable{"operand counts"};
  const AccessPattern* index = I.ins.size() == 2 ? &I.ins[1] : nullptr;
  const int dge = static_cast<int>(I.dge_type);
  return op("ncDmaCopy", tags::NcDmaCopy,
            {ref(I.outs[0]), tensorRefItem(I.ins[0], index, index ? I.indirect_dim : 0),
             enumItem(kDgeComputeOp, I.dst_rmw_op == AluOp::add ? 1 : 0),
             record(tags::DmaBounds, I.oob_is_err ? ctors::DmaBoundsError : ctors::DmaBoundsSkip, {}),
             nat(static_cast<uint64_t>(dge)), boolean(false), none(), engineItem(I.engine)});
}

Item encode(const InstDevicePrint& I) {
  expectOperands(I, 1, 0);
  return op("devicePrint", tags::DevicePrint,
            {ref(I.ins[0]), cbor::text(I.prefix), enumItem(kPrintOutputBuffer, 0)});
}

// ---------------------------------------------------------------------------------------------
// KLR -> BIR

// What the decoders share: the operator's payload fields, the tensors, and the opcode to build.
struct Decoding {
  const Record& p;
  TensorTable& tensors;
  std::optional<Opcode> opcode;

  AccessPattern tile(size_t i) const { return readTensorRef(p[i], tensors, p.field(i)); }
  std::optional<AccessPattern> optTile(size_t i) const {
    const Item* v = readOption(p[i], p.field(i));
    if (!v) return std::nullopt;
    return readTensorRef(*v, tensors, p.field(i));
  }
  AluOp alu(size_t i) const { return birEnumOf<AluOp>(p[i], kAluOp, p.field(i)); }
  std::optional<AluOp> optAlu(size_t i) const {
    const Item* v = readOption(p[i], p.field(i));
    if (!v) return std::nullopt;
    return birEnumOf<AluOp>(*v, kAluOp, p.field(i));
  }
  AccumCmd accum(size_t i) const { return birEnumOf<AccumCmd>(p[i], kAccumCmd, p.field(i)); }
  bool flag(size_t i) const { return readBool(p[i], p.field(i)); }
  double imm(size_t i) const { return readImmediate(p[i], p.field(i)); }
  Engine engine(size_t i) const { return readEngine(p[i], p.field(i)); }
  // An Operand: its immediate value in *value, or its tile.
  std::optional<AccessPattern> operand(size_t i, double* value) const {
    std::optional<AccessPattern> t;
    readOperand(p[i], tensors, p.field(i), value, &t);
    return t;
  }
  [[noreturn]] void refuse(size_t i, const std::string& why) const { fail(p[i], p.field(i), why); }

  template <class T>
  std::unique_ptr<T> make(Opcode natural, Engine engine) const {
    const Opcode o = opcode.value_or(natural);
    if (nodeClassOf(o) != nodeClassOf(natural))
      fail(p.item(), p.what(), "opcode " + InstructionType::string(o) + " cannot stand for " +
                                   InstructionType::string(natural) + " (another node class)");
    std::unique_ptr<T> I(static_cast<T*>(createInstruction(o).release()));
    I->engine = engine;
    return I;
  }
};

void readDataPattern(const Decoding& d, size_t i, int64_t* base, std::vector<APPair>* pattern,
                     int64_t* channelMultiplier) {
  Record r(d.p[i], tags::DataPattern, d.p.field(i));
  r.expectFields(3);
  *base = readInt(r[0], r.field(0));
  for (const Item& pair : readList(r[1], r.field(1))) pattern->push_back(readApPair(pair, r.field(1)));
  *channelMultiplier = readInt(r[2], r.field(2));
}

std::unique_ptr<Instruction> decodeNcActivate(const Decoding& d) {
  d.p.expectFields(9);
  auto I = d.make<InstActivation>(InstructionType::Activation, Engine::Activation);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  I->acc = d.accum(2);
  const std::string_view klrFunc = kActivationFunc.ctors[readEnum(d.p[3], kActivationFunc, d.p.field(3))];
  if (!enumFromName(birActivationName(klrFunc), &I->func))
    d.refuse(3, "KLR activation function '" + std::string(klrFunc) + "' has no BIR equivalent");
  std::optional<AccessPattern> scaleTile = d.operand(4, &I->scale);
  if (auto bias = d.optTile(5)) {
    I->has_bias = true;
    I->ins.push_back(*bias);
  }
  if (scaleTile) {
    I->has_scale_tensor = true;
    I->ins.push_back(*scaleTile);
  }
  if (auto r = d.optAlu(6)) I->acc_op = *r;
  if (readOption(d.p[7], d.p.field(7)))
    d.refuse(7, "a reduction result tensor (reduceRes) has no BIR Activation equivalent (BIR "
                "accumulates in the engine's registers)");
  return I;
}

std::unique_ptr<Instruction> decodeMemSet(const Decoding& d) {
  d.p.expectFields(4);
  auto I = d.make<InstMemset>(InstructionType::Memset, d.engine(3));
  I->outs = {d.tile(0)};
  I->constant = d.imm(1);
  readDtype(d.p[2], d.p.field(2));
  return I;
}

template <class T>
std::unique_ptr<Instruction> decodeUnary(const Decoding& d, Opcode opcode, Engine engine) {
  d.p.expectFields(3);
  auto I = d.make<T>(opcode, engine);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  return I;
}

std::unique_ptr<Instruction> decodeCopy(const Decoding& d, bool nc) {
  d.p.expectFields(nc ? 4 : 3);
  auto I = d.make<InstTensorCopy>(InstructionType::TensorCopy,
                                  nc ? d.engine(3) : Engine::Unassigned);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  return I;
}

std::unique_ptr<Instruction> decodeTensorReduce(const Decoding& d) {
  d.p.expectFields(7);
  auto I = d.make<InstTensorReduce>(InstructionType::TensorReduce, Engine::Unassigned);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  I->op = d.alu(2);
  I->axis = birEnumOf<ReduceAxis>(d.p[3], kTensorSubDim, d.p.field(3));
  I->negate = d.flag(4);
  return I;
}

void readReverse(const Decoding& d, size_t i, bool* first, bool* second) {
  const int r = readEnum(d.p[i], kTensorScalarReverseOps, d.p.field(i));
  *first = r & 1;
  *second = r & 2;
}

std::unique_ptr<Instruction> decodeTensorScalar(const Decoding& d) {
  d.p.expectFields(9);
  double imm0 = 0, imm1 = 0;
  std::optional<AccessPattern> tile0 = d.operand(2, &imm0), tile1;
  if (const Item* v = readOption(d.p[4], d.p.field(4))) readOperand(*v, d.tensors, d.p.field(4), &imm1, &tile1);
  const AluOp op1 = d.optAlu(5).value_or(AluOp::bypass);
  const Engine engine = d.engine(7);
  if (!tile0) {
    if (tile1) d.refuse(4, "a tensor second operand after an immediate first one has no BIR equivalent");
    auto I = d.make<InstTensorScalar>(InstructionType::TensorScalar, engine);
    I->outs = {d.tile(0)};
    I->ins = {d.tile(1)};
    I->const0 = imm0;
    I->op0 = d.alu(3);
    I->const1 = imm1;
    I->op1 = op1;
    readReverse(d, 6, &I->reverse0, &I->reverse1);
    return I;
  }
  auto I = d.make<InstTensorScalarPtr>(InstructionType::TensorScalarPtr, engine);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), *tile0};
  if (tile1) I->ins.push_back(*tile1);
  I->op0 = d.alu(3);
  I->const1 = imm1;
  I->op1 = op1;
  readReverse(d, 6, &I->reverse0, &I->reverse1);
  return I;
}

std::unique_ptr<Instruction> decodeTensorTensor(const Decoding& d) {
  d.p.expectFields(6);
  auto I = d.make<InstTensorTensor>(InstructionType::TensorTensor, d.engine(5));
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  I->op = d.alu(3);
  return I;
}

std::unique_ptr<Instruction> decodeTensorTensorScan(const Decoding& d) {
  d.p.expectFields(9);
  auto I = d.make<InstTensorTensorScan>(InstructionType::TensorTensorScan, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  I->op0 = d.alu(3);
  I->op1 = d.alu(4);
  if (readEnum(d.p[5], kTensorScalarReverseOps, d.p.field(5)) != 0)
    d.refuse(5, "reversed scan operands have no BIR equivalent");
  if (auto init = d.operand(6, &I->initial)) I->ins.push_back(*init);
  if (d.accum(7) != AccumCmd::Idle) d.refuse(7, "an accumulating scan has no BIR equivalent");
  return I;
}

std::unique_ptr<Instruction> decodeShuffle(const Decoding& d) {
  d.p.expectFields(4);
  auto I = d.make<InstStreamShuffle>(InstructionType::StreamShuffle, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  for (const Item& m : readList(d.p[2], d.p.field(2))) {
    const double v = readImmediate(m, d.p.field(2));
    if (std::nearbyint(v) != v) d.refuse(2, "a shuffle mask entry is not an integer");
    I->shuffle_mask.push_back(static_cast<int64_t>(v));
  }
  return I;
}

std::unique_ptr<Instruction> decodeTranspose(const Decoding& d) {
  d.p.expectFields(4);
  auto I = d.make<InstStreamTranspose>(InstructionType::StreamTranspose, d.engine(3));
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  return I;
}

std::unique_ptr<Instruction> decodeIota(const Decoding& d) {
  d.p.expectFields(3);
  auto I = d.make<InstIota>(InstructionType::Iota, Engine::Pool);
  I->outs = {d.tile(0)};
  readDataPattern(d, 1, &I->base, &I->pattern, &I->channel_multiplier);
  return I;
}

std::unique_ptr<Instruction> decodeNcAffineSelect(const Decoding& d) {
  d.p.expectFields(6);
  auto I = d.make<InstAffineSelect>(InstructionType::TensorScalarAffineSelect, Engine::Pool);
  I->outs = {d.tile(0)};
  readDataPattern(d, 1, &I->base, &I->pattern, &I->channel_multiplier);
  I->ins = {d.tile(2)};
  I->fill_value = d.imm(3);
  I->compare_op = d.alu(5);
  return I;
}

std::unique_ptr<Instruction> decodeNcRangeSelect(const Decoding& d) {
  d.p.expectFields(12);
  auto I = d.make<InstRangeSelect>(InstructionType::RangeSelect, Engine::DVE);
  I->outs = {d.tile(0)};
  if (auto res = d.optTile(2)) {
    if (d.optAlu(3) != AluOp::max)
      d.refuse(3, "BIR's RangeSelect reduces its second output with max only");
    I->outs.push_back(*res);
  }
  I->comp_op0 = d.alu(4);
  I->comp_op1 = d.alu(5);
  I->ins = {d.tile(9), d.tile(6), d.tile(7)};
  const double start = d.imm(8);
  if (std::nearbyint(start) != start) d.refuse(8, "rangeStart is not an integer");
  I->range_start = static_cast<int64_t>(start);
  I->fill_value = d.imm(10);
  return I;
}

std::unique_ptr<Instruction> decodeSelectReduce(const Decoding& d) {
  d.p.expectFields(9);
  auto I = d.make<InstSelectReduce>(InstructionType::SelectReduce, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  if (auto onFalse = d.operand(3, &I->on_false_value)) I->ins.push_back(*onFalse);
  if (auto res = d.optTile(4)) I->outs.push_back(*res);
  I->reduce_op = d.alu(6);
  if (d.flag(7)) d.refuse(7, "a reversed predicate has no BIR equivalent");
  return I;
}

std::unique_ptr<Instruction> decodeCopyPredicated(const Decoding& d) {
  d.p.expectFields(5);
  auto I = d.make<InstCopyPredicated>(InstructionType::CopyPredicated, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  if (d.flag(4)) d.refuse(4, "a reversed predicate has no BIR equivalent");
  return I;
}

std::unique_ptr<Instruction> decodeDropout(const Decoding& d) {
  d.p.expectFields(5);
  auto I = d.make<InstDropout>(InstructionType::Dropout, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1)};
  const bool keepRate = readEnum(d.p[2], kDropoutThresholdType, d.p.field(2)) == 1;
  double threshold = 0;
  if (d.operand(3, &threshold)) d.refuse(3, "a tensor dropout threshold has no BIR equivalent");
  I->prob = keepRate ? 1.0 - threshold : threshold;
  return I;
}

std::unique_ptr<Instruction> decodeFindIndex8(const Decoding& d) {
  d.p.expectFields(4);
  auto I = d.make<InstMaxIndex>(InstructionType::MaxIndex, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  return I;
}

std::unique_ptr<Instruction> decodeMatchReplace8(const Decoding& d) {
  d.p.expectFields(6);
  auto I = d.make<InstMatchReplace>(InstructionType::MatchReplace, Engine::DVE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  I->imm_value = d.imm(3);
  if (auto idx = d.optTile(4)) I->outs.push_back(*idx);
  return I;
}

std::vector<int64_t> readNatList(const Decoding& d, size_t i) {
  std::vector<int64_t> out;
  for (const Item& v : readList(d.p[i], d.p.field(i))) out.push_back(readSize(v, d.p.field(i)));
  return out;
}

std::unique_ptr<Instruction> decodeNcMatMul(const Decoding& d) {
  d.p.expectFields(9);
  auto I = d.make<InstMatmult>(InstructionType::Matmult, Engine::PE);
  I->outs = {d.tile(0)};
  I->ins = {d.tile(1), d.tile(2)};
  // isStationaryOneZero / isMovingZero (fields 3, 4) are performance hints with no effect on the
  // result; BIR's Matmult has no such fields.
  d.flag(3);
  d.flag(4);
  I->is_transpose = d.flag(5);
  I->tile_position = readNatList(d, 6);
  I->tile_size = readNatList(d, 7);
  I->perf_mode = birEnumOf<PerfMode>(d.p[8], kMatmulPerfMode, d.p.field(8));
  return I;
}

bool readBoundsIsError(const Decoding& d, size_t i) {
  Record b(d.p[i], tags::DmaBounds, d.p.field(i));
  if (b.ctor() > ctors::DmaBoundsError)
    d.refuse(i, "a DMA bounds check read from a register has no BIR equivalent");
  b.expectFields(0);
  return b.ctor() == ctors::DmaBoundsError;
}

std::unique_ptr<Instruction> decodeDma(const Decoding& d, bool nc) {
  d.p.expectFields(nc ? 8 : 5);
  auto I = d.make<InstDMA>(InstructionType::DMACopy, nc ? d.engine(7) : Engine::DMA);
  I->outs = {d.tile(0)};
  std::optional<AccessPattern> index;
  int64_t indirectDim = 0;
  I->ins = {readTensorRef(d.p[1], d.tensors, d.p.field(1), &index, &indirectDim)};
  if (index) {
    I->ins.push_back(*index);
    I->indirect_dim = indirectDim;
  }
  I->dst_rmw_op = readEnum(d.p[2], kDgeComputeOp, d.p.field(2)) == 1 ? AluOp::add : AluOp::bypass;
  if (nc) {
    I->oob_is_err = readBoundsIsError(d, 3);
    const uint64_t dge = readNat(d.p[4], d.p.field(4));
    if (dge >= EnumTraits<DgeType>::kCount) d.refuse(4, "dgeMode " + std::to_string(dge) + " is unknown");
    I->dge_type = static_cast<DgeType>(dge);
    d.flag(5);
    if (const Item* prio = readOption(d.p[6], d.p.field(6))) readNat(*prio, d.p.field(6));
  } else {
    I->oob_is_err = readBoundsIsError(d, 3) || readBoundsIsError(d, 4);
  }
  return I;
}

std::unique_ptr<Instruction> decodeDevicePrint(const Decoding& d) {
  d.p.expectFields(3);
  auto I = d.make<InstDevicePrint>(InstructionType::DevicePrint, Engine::Unassigned);
  I->ins = {d.tile(0)};
  I->prefix = readString(d.p[1], d.p.field(1));
  readEnum(d.p[2], kPrintOutputBuffer, d.p.field(2));  // stdout or stderr: printing only
  return I;
}

}  // namespace

std::optional<Item> encodeOperator(const Instruction& I) {
  switch (I.nodeClass()) {
    case NodeClass::Activation: return encode(*cast<InstActivation>(&I));
    case NodeClass::Memset: return encode(*cast<InstMemset>(&I));
    case NodeClass::Reciprocal: return encodeUnary(I, "reciprocal", tags::Reciprocal);
    case NodeClass::TensorCopy: return encode(*cast<InstTensorCopy>(&I));
    case NodeClass::TensorReduce: return encode(*cast<InstTensorReduce>(&I));
    case NodeClass::TensorScalar: return encode(*cast<InstTensorScalar>(&I));
    case NodeClass::TensorScalarPtr: return encode(*cast<InstTensorScalarPtr>(&I));
    case NodeClass::TensorTensor: return encode(*cast<InstTensorTensor>(&I));
    case NodeClass::TensorTensorScan: return encode(*cast<InstTensorTensorScan>(&I));
    case NodeClass::BNStats: return encodeUnary(I, "batchNormStats", tags::BatchNormStats);
    case NodeClass::BNStatsAggregate: return encodeUnary(I, "batchNormAggregate", tags::BatchNormAggregate);
    case NodeClass::StreamShuffle: return encode(*cast<InstStreamShuffle>(&I));
    case NodeClass::StreamTranspose: return encode(*cast<InstStreamTranspose>(&I));
    case NodeClass::Iota: return encode(*cast<InstIota>(&I));
    case NodeClass::AffineSelect: return encode(*cast<InstAffineSelect>(&I));
    case NodeClass::RangeSelect: return encode(*cast<InstRangeSelect>(&I));
    case NodeClass::SelectReduce: return encode(*cast<InstSelectReduce>(&I));
    case NodeClass::CopyPredicated: return encode(*cast<InstCopyPredicated>(&I));
    case NodeClass::Dropout: return encode(*cast<InstDropout>(&I));
    case NodeClass::Max: return encodeUnary(I, "max8", tags::Max8);
    case NodeClass::MaxIndex: return encode(*cast<InstMaxIndex>(&I));
    case NodeClass::MatchReplace: return encode(*cast<InstMatchReplace>(&I));
    case NodeClass::Matmult: return encode(*cast<InstMatmult>(&I));
    case NodeClass::DMA: return encode(*cast<InstDMA>(&I));
    case NodeClass::DevicePrint: return encode(*cast<InstDevicePrint>(&I));
    default:  // ReadActivationAccumulator, NoOp, TensorCopyDynamic, Select, Unmodeled, kernels
      return std::nullopt;
  }
}

std::unique_ptr<Instruction> decodeOperator(const Item& item, std::optional<Opcode> opcode,
                                            TensorTable& tensors, const std::string& what) {
  using D = const Decoding&;
  using DecodeFn = std::unique_ptr<Instruction> (*)(D);
  struct Entry {
    std::string_view name;  // the Core.Operator constructor
    uint8_t payload;        // the type tag of its argument
    DecodeFn decode;
  };
  static const Entry kEntries[] = {
      {"ncActivate", tags::NcActivate, decodeNcActivate},
      {"activationReduce", tags::NcActivate, decodeNcActivate},
      {"memSet", tags::MemSet, decodeMemSet},
      {"reciprocal", tags::Reciprocal,
       [](D d) { return decodeUnary<InstReciprocal>(d, InstructionType::Reciprocal, Engine::DVE); }},
      {"ncCopy", tags::NcCopy, [](D d) { return decodeCopy(d, true); }},
      {"copy", tags::Copy, [](D d) { return decodeCopy(d, false); }},
      {"tensorReduce", tags::TensorReduce, decodeTensorReduce},
      {"tensorScalar", tags::TensorScalar, decodeTensorScalar},
      {"tensorTensor", tags::TensorTensor, decodeTensorTensor},
      {"tensorTensorScan", tags::TensorTensorScan, decodeTensorTensorScan},
      {"batchNormStats", tags::BatchNormStats,
       [](D d) { return decodeUnary<InstBNStats>(d, InstructionType::BNStats, Engine::DVE); }},
      {"batchNormAggregate", tags::BatchNormAggregate,
       [](D d) {
         return decodeUnary<InstBNStatsAggregate>(d, InstructionType::BNStatsAggregate, Engine::DVE);
       }},
      {"shuffle", tags::Shuffle, decodeShuffle},
      {"transpose", tags::Transpose, decodeTranspose},
      {"iota", tags::Iota, decodeIota},
      {"ncAffineSelect", tags::NcAffineSelect, decodeNcAffineSelect},
      {"ncRangeSelect", tags::NcRangeSelect, decodeNcRangeSelect},
      {"selectReduce", tags::SelectReduce, decodeSelectReduce},
      {"copyPredicated", tags::CopyPredicated, decodeCopyPredicated},
      {"dropout", tags::Dropout, decodeDropout},
      {"max8", tags::Max8, [](D d) { return decodeUnary<InstMax>(d, InstructionType::Max, Engine::DVE); }},
      {"findIndex8", tags::FindIndex8, decodeFindIndex8},
      {"matchReplace8", tags::MatchReplace8, decodeMatchReplace8},
      {"ncMatMul", tags::NcMatMul, decodeNcMatMul},
      {"ncDmaCopy", tags::NcDmaCopy, [](D d) { return decodeDma(d, true); }},
      {"dmaCopy", tags::DmaCopy, [](D d) { return decodeDma(d, false); }},
      {"devicePrint", tags::DevicePrint, decodeDevicePrint},
  };
  Record op(item, tags::Operator, what);
  op.expectFields(1);
  const auto names = operatorCtorNames();
  if (op.ctor() >= names.size())
    fail(item, what, "Operator has no constructor " + std::to_string(op.ctor()));
  const std::string_view name = names[op.ctor()];
  for (const Entry& e : kEntries)
    if (e.name == name) {
      const Record payload(op[0], e.payload, what + "." + std::string(name));
      return e.decode(Decoding{payload, tensors, opcode});
    }
  fail(item, what, "KLR operator '" + std::string(name) + "' has no BIR equivalent in neuronxsim");
}

}  // namespace klr

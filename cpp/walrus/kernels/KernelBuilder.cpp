#include "walrus/kernels/KernelBuilder.h"

#include <algorithm>

#include "bir/Error.h"
#include "bir/Legality.h"
#include "bir/Verifier.h"
#include "walrus/NodeBuffers.h"

namespace walrus::kernels {

using namespace bir;

namespace {

constexpr int64_t kSbufAlign = 64;

std::vector<int64_t> squeezed(std::vector<int64_t> s) {
  s.erase(std::remove(s.begin(), s.end(), int64_t{1}), s.end());
  return s;
}

std::vector<int64_t> tileShape(const Tile& t) {
  std::vector<int64_t> s{t.partitions()};
  for (int64_t d : t.freeShape()) s.push_back(d);
  return s;
}

bool isFp32(DType t) { return t == DType::float32 || t == DType::float32r; }

// A Matmult as the legality rules see it.
legality::Matmul matmulFacts(const InstMatmult& I) {
  legality::Matmul mm;
  mm.stationary = legality::operandOf(I.ins[0]);
  mm.moving = legality::operandOf(I.ins[1]);
  mm.out = legality::operandOf(I.outs[0]);
  mm.is_transpose = I.is_transpose;
  mm.start = I.start_tensor_calc;
  mm.perf_mode = I.perf_mode;
  mm.tile_size = I.tile_size;
  mm.tile_position = I.tile_position;
  return mm;
}

// A transfer as the legality rules see it.
legality::Dma dmaFacts(const InstDMA& I) {
  legality::Dma d;
  d.opcode = I.opcode();
  d.engine = I.engine;
  d.src = legality::operandOf(I.ins[0]);
  d.dst = legality::operandOf(I.outs[0]);
  if (I.ins.size() == 2) d.index = legality::operandOf(I.ins[1]);
  d.mode = I.mode;
  d.dst_rmw_op = I.dst_rmw_op;
  d.dge_type = I.dge_type;
  d.indirect_dim = I.indirect_dim;
  const auto& pattern = I.ins[0].pattern;
  d.src_2d = std::count_if(pattern.begin(), pattern.end(), [](const auto& pair) { return pair.num > 1; }) <= 2;
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

KernelBuilder::KernelBuilder(const InstBIRKernel& node, const Function& function, bool verify,
                             size_t maxInstructions)
    : node_(node),
      function_(function),
      verify_(verify),
      maxInstructions_(maxInstructions),
      arch_(function.parent() ? function.parent()->arch : kDefaultBirArch),
      attrs_(node),
      sbuf_("SBUF", 0, kSbufAlign),
      psum_("PSUM", 0, 1),
      psumBankBytes_(moduleMachine(arch_).psum_bank_bytes) {
  const NodeBuffers buffers = nodeBuffers(node.sb_buf_shape, node.psum_buf_shape, moduleMachine(arch_));
  sbuf_ = Arena("SBUF", buffers.sbuf_bytes, kSbufAlign);
  psum_ = Arena("PSUM", buffers.psumBytes(), psumBankBytes_);
}

KernelBuilder::~KernelBuilder() = default;

void KernelBuilder::require(bool ok, const std::string& what) {
  if (!ok) throw KernelError(what);
}

// ---- operands ----

DramView KernelBuilder::input(const std::string& role, size_t rank) { return operand(false, role, rank); }

DramView KernelBuilder::output(const std::string& role, size_t rank) { return operand(true, role, rank); }

bool KernelBuilder::hasInput(const std::string& role) {
  const std::vector<std::string>& roles = binding().ins;
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

const OperandBinding& KernelBuilder::binding() {
  if (!binding_) {
    require(attrs_.signature() != nullptr, "kernel '" + node_.kernel_name + "' has no leaf signature");
    binding_ = bindOperands(node_.kernel_name, *attrs_.signature(), attrs_, node_.ins.size(), node_.outs.size());
  }
  return *binding_;
}

DramView KernelBuilder::operand(bool isOutput, const std::string& role, size_t rank) {
  const std::vector<std::string>& roles = isOutput ? binding().outs : binding().ins;
  const auto it = std::find(roles.begin(), roles.end(), role);
  const std::string side = isOutput ? "outs" : "ins";
  require(it != roles.end(), "operand '" + role + "' is not among the node's " + side + " for its attrs");
  const size_t i = static_cast<size_t>(it - roles.begin());
  const std::string what = side + "[" + std::to_string(i) + "] '" + role + "'";
  DramView v = DramView::ofOperand(isOutput ? node_.outs[i] : node_.ins[i], what);
  require(rank == 0 || v.rank() == rank, what + " has shape " + shapeText(v.shape()) + "; expected rank " +
                                             std::to_string(rank));
  return v;
}

// ---- dtypes ----

DType KernelBuilder::matmulDtype(DType t) const {
  if (!isFp32(t) || (node_.auto_cast != "matmult" && node_.auto_cast != "all")) return t;
  const std::string& to = node_.auto_cast_type;
  if (to == "bf16") return DType::bfloat16;
  if (to == "fp16") return DType::float16;
  if (to == "tf32") return DType::float32r;
  if (to == "fp8_e4m3") return DType::float8e4;
  throw KernelError("auto_cast_type '" + to + "'; expected bf16, fp16, tf32 or fp8_e4m3");
}

// ---- on-chip memory ----

KernelBuilder::Scope::Scope(KernelBuilder& kb) : kb_(kb), sbuf_(kb.sbuf_.mark()), psum_(kb.psum_.mark()) {}
KernelBuilder::Scope::~Scope() {
  kb_.sbuf_.release(sbuf_);
  kb_.psum_.release(psum_);
}

MemoryLocation* KernelBuilder::newOnChipTensor(const std::string& name, MemoryType type, DType dtype, int64_t bytes,
                                               int64_t addr) {
  std::string base = node_.name + "/" + name;
  std::string n = base;
  for (int i = 1; function_.findLocation(n) || function_.findAllocation(n + "_set") || stagedNames_.count(n); ++i)
    n = base + "." + std::to_string(i);
  stagedNames_.insert(n);
  auto set = makeOnChipTensor(n, type, dtype, kPartitions, bytes, 0, addr);
  MemoryLocation* raw = set->location();
  tensors_.push_back(std::move(set));
  return raw;
}

TilePool KernelBuilder::sbufPool(const std::string& name, DType dtype, const std::vector<int64_t>& free, int bufs) {
  require(bufs >= 1, "SBUF pool '" + name + "' with " + std::to_string(bufs) + " buffers");
  int64_t elems = 1;
  for (int64_t d : free) elems *= d;
  const int64_t bytes = std::max<int64_t>(elems * dtypeSize(dtype), 4);
  std::vector<Tile> buffers;
  for (int b = 0; b < bufs; ++b) {
    const std::string what = "SBUF pool '" + name + "' buffer " + std::to_string(b) + " of " + std::to_string(bufs);
    const int64_t addr = sbuf_.allocate(bytes, what);
    buffers.emplace_back(newOnChipTensor(name + "." + std::to_string(b), MemoryType::SB, dtype, bytes, addr), dtype,
                         kPartitions, free);
  }
  return TilePool(name, std::move(buffers));
}

Tile KernelBuilder::sbufTile(const std::string& name, DType dtype, const std::vector<int64_t>& free) {
  return sbufPool(name, dtype, free, 1).next();
}

PsumPool KernelBuilder::psumPool(const std::string& name, int bufs, int banksPerBuf) {
  require(bufs >= 1 && banksPerBuf >= 1, "PSUM pool '" + name + "' with " + std::to_string(bufs) + " buffers of " +
                                             std::to_string(banksPerBuf) + " banks");
  const int64_t bytes = banksPerBuf * psumBankBytes_;
  std::vector<MemoryLocation*> buffers;
  for (int b = 0; b < bufs; ++b) {
    const std::string what = "PSUM pool '" + name + "' bank " + std::to_string(b) + " of " + std::to_string(bufs);
    const int64_t addr = psum_.allocate(bytes, what);
    buffers.push_back(newOnChipTensor(name + "." + std::to_string(b), MemoryType::PSUM, DType::float32, bytes, addr));
  }
  return PsumPool(name, std::move(buffers), bytes);
}

Tile KernelBuilder::identity(DType dtype) {
  auto it = identities_.find(dtype);
  if (it != identities_.end()) return it->second;
  // Identities outlive every scope: they take bytes off the top of SBUF for the whole kernel.
  const int64_t bytes = kPartitions * dtypeSize(dtype);
  const int64_t addr = (sbuf_.capacity() - bytes) / kSbufAlign * kSbufAlign;
  sbuf_.shrink(addr, "the " + std::string(enumName(dtype)) + " identity tile");
  Tile id(newOnChipTensor(std::string("identity_") + std::string(enumName(dtype)), MemoryType::SB, dtype, bytes, addr),
          dtype, kPartitions, {kPartitions});
  Section s(*this, "identity");
  memset(id, 1.0);
  // Keep 1 where p - j == 0 (the diagonal), 0 elsewhere.
  affineSelect(id, id, 0, {{-1, kPartitions}}, 1, AluOp::is_equal, 0.0);
  identities_.emplace(dtype, id);
  return id;
}

// ---- sections ----

KernelBuilder::Section::Section(KernelBuilder& kb, const std::string& label) : kb_(kb), saved_(kb.section_) {
  kb.section_ = saved_.empty() ? label : saved_ + "/" + label;
}
KernelBuilder::Section::~Section() { kb_.section_ = saved_; }

// ---- emission ----

template <class T>
T& KernelBuilder::emit(Engine engine, const char* what) {
  if (code_.size() >= maxInstructions_)
    throw KernelError("its expansion has more than " + std::to_string(maxInstructions_) +
                      " instructions, the cap on one kernel node's expansion (raise it with "
                      "NEURONXSIM_MAX_INSTRUCTIONS or --max-instructions, or use smaller shapes)");
  std::unique_ptr<T> inst;
  if constexpr (std::is_same_v<T, InstDMA>)
    inst = std::make_unique<InstDMA>(InstructionType::DMACopy);
  else
    inst = std::make_unique<T>();
  inst->name = node_.name + "/" + what + std::to_string(seq_++);
  inst->engine = engine;
  inst->source = node_.kernel_name + (section_.empty() ? "" : ":" + section_);
  T& ref = *inst;
  code_.push_back(std::move(inst));
  return ref;
}

void KernelBuilder::fail(const Instruction& I, const std::string& msg) const {
  throw KernelError(I.opcodeName() + " '" + I.name + "' (" + I.source + "): " + msg);
}

void KernelBuilder::check(const Instruction& I) const {
  if (const auto* transfer = dyn_cast<InstDMA>(&I)) legal(I, legality::dma(dmaFacts(*transfer), config()));
  for (size_t k = 0; k < I.ins.size() + I.outs.size(); ++k) {
    const bool out = k >= I.ins.size();
    legal(I, legality::engineOperand(I.opcode(), I.engine, legality::operandOf(out ? I.outs[k - I.ins.size()] : I.ins[k]),
                                     out, config()));
  }
  if (!verify_) return;
  const bool compute = I.nodeClass() != NodeClass::DMA;
  try {
    for (size_t k = 0; k < I.ins.size(); ++k) verifyAccessPattern(I.ins[k], compute, "ins[" + std::to_string(k) + "]");
    for (size_t k = 0; k < I.outs.size(); ++k) verifyAccessPattern(I.outs[k], compute, "outs[" + std::to_string(k) + "]");
  } catch (const BIRError& e) {
    fail(I, e.what());
  }
}

InstDMA& KernelBuilder::dma(Engine issuer, const AccessPattern& dst, const AccessPattern& src) {
  auto& I = emit<InstDMA>(issuer, "dma");
  I.queue = nextQueue_;
  nextQueue_ = (nextQueue_ + 1) % kDmaQueues;
  I.ins = {src};
  I.outs = {dst};
  return I;
}

void KernelBuilder::load(const Tile& dst, const DramView& src, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  if (squeezed(tileShape(dst)) != squeezed(src.shape()))
    fail(I, "loads " + src.str() + " into " + dst.str() + " of another shape");
  check(I);
}

void KernelBuilder::loadTransposed(const Tile& dst, const DramView& src, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  I.mode = DmaMode::Transpose;
  if (src.rank() != 2 || dst.partitions() != src.dim(1) || dst.freeSize() != src.dim(0))
    fail(I, "transposes " + src.str() + " into " + dst.str() + ", which is not its [b, a] transpose");
  check(I);
}

void KernelBuilder::transposeOnChip(const Tile& dst, const Tile& src, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  I.mode = DmaMode::Transpose;
  if (src.rank() != 1 || dst.partitions() != src.freeSize() || dst.freeSize() != src.partitions())
    fail(I, "transposes " + src.str() + " into " + dst.str() + ", which is not its [b, a] transpose");
  check(I);
}

void KernelBuilder::store(const DramView& dst, const Tile& src, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  if (squeezed(tileShape(src)) != squeezed(dst.shape()))
    fail(I, "stores " + src.str() + " into " + dst.str() + " of another shape");
  check(I);
}

void KernelBuilder::storeTransposed(const DramView& dst, const Tile& src, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  I.mode = DmaMode::Transpose;
  if (src.rank() != 1 || dst.rank() != 2 || dst.dim(0) != src.freeSize() || dst.dim(1) != src.partitions())
    fail(I, "stores " + src.str() + " transposed into " + dst.str() + ", which is not its [b, a] transpose");
  check(I);
}

void KernelBuilder::gather(const Tile& dst, const DramView& src, const Tile& index, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  I.ins.push_back(index.ap());
  I.indirect_dim = 0;
  check(I);
}

void KernelBuilder::copyDram(const DramView& dst, const DramView& src, Engine issuer) {
  auto& I = dma(issuer, dst.ap(), src.ap());
  if (squeezed(src.shape()) != squeezed(dst.shape())) fail(I, "copies " + src.str() + " into " + dst.str());
  check(I);
}

void KernelBuilder::matmul(const Tile& out, const Tile& stationary, const Tile& moving, bool start, bool stop) {
  auto& I = emit<InstMatmult>(Engine::PE, "mm");
  I.ins = {stationary.ap(), moving.ap()};
  I.outs = {out.ap()};
  I.start_tensor_calc = start;
  I.stop_tensor_calc = stop;
  legal(I, legality::matmul(matmulFacts(I), config()));
  check(I);
}

void KernelBuilder::transpose(const Tile& out, const Tile& in) {
  const int64_t k = in.partitions();
  const Tile id = identity(in.dtype()).rows(0, k).cols(0, k);
  auto& I = emit<InstMatmult>(Engine::PE, "tp");
  I.ins = {in.ap(), id.ap()};
  I.outs = {out.ap()};
  I.is_transpose = true;
  legal(I, legality::matmul(matmulFacts(I), config()));
  check(I);
}

namespace {
// Why `in` cannot feed an elementwise instruction writing `out` (same lanes, same elements per
// lane), or empty.
std::string laneMismatch(const Tile& out, const Tile& in) {
  if (out.partitions() == in.partitions() && out.freeSize() == in.freeSize()) return {};
  return "operand " + in.str() + " does not match out " + out.str();
}
// Why `t` is not a [partitions, 1] per-partition scalar, or empty.
std::string notColumn(const Tile& t, int64_t partitions, const char* what) {
  if (t.partitions() == partitions && t.freeSize() == 1) return {};
  return std::string(what) + " " + t.str() + " is not a [" + std::to_string(partitions) + ", 1] column";
}
}  // namespace

void KernelBuilder::activation(const Tile& out, const Tile& in, ActivationFunc func, const Act& args) {
  auto& I = emit<InstActivation>(Engine::Activation, "act");
  I.func = func;
  I.scale = args.scale_;
  I.alpha = args.alpha_;
  I.acc = args.acc_;
  I.acc_op = args.accOp_;
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  if (args.bias_) {
    I.has_bias = true;
    I.ins.push_back(args.bias_->ap());
    if (auto why = notColumn(*args.bias_, out.partitions(), "bias"); !why.empty()) fail(I, why);
  }
  if (args.scaleTile_) {
    I.has_scale_tensor = true;
    I.ins.push_back(args.scaleTile_->ap());
    if (auto why = notColumn(*args.scaleTile_, out.partitions(), "scale"); !why.empty()) fail(I, why);
  }
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  if (I.acc != AccumCmd::Idle) legal(I, legality::reduceOp(I.opcode(), I.acc_op));
  legal(I, legality::activationReduce(I.acc, I.acc_op, config()));
  check(I);
}

void KernelBuilder::readAccumulator(const Tile& out) {
  auto& I = emit<InstReadActivationAccumulator>(Engine::Activation, "racc");
  I.outs = {out.ap()};
  if (out.freeSize() != 1) fail(I, "reads one accumulator per partition into " + out.str());
  check(I);
}

void KernelBuilder::copy(const Tile& out, const Tile& in, Engine e) {
  auto& I = emit<InstTensorCopy>(e, "copy");
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  check(I);
}

void KernelBuilder::memset(const Tile& out, double value, Engine e) {
  auto& I = emit<InstMemset>(e, "memset");
  I.constant = value;
  I.outs = {out.ap()};
  check(I);
}

void KernelBuilder::tensorTensor(const Tile& out, const Tile& a, const Tile& b, AluOp op, Engine e) {
  auto& I = emit<InstTensorTensor>(e, "tt");
  I.op = op;
  I.ins = {a.ap(), b.ap()};
  I.outs = {out.ap()};
  if (auto why = laneMismatch(out, a); !why.empty()) fail(I, why);
  if (auto why = laneMismatch(out, b); !why.empty()) fail(I, why);
  legal(I, legality::psumInputs(I.opcode(), legality::operandOf(I.ins[0]), legality::operandOf(I.ins[1])));
  legal(I, legality::aluOps(I.opcode(), e, op, AluOp::bypass));
  legal(I, legality::bitvecDtypes(I.opcode(), op, AluOp::bypass, {I.ins[0].dtype, I.ins[1].dtype}, {I.outs[0].dtype}));
  check(I);
}

void KernelBuilder::tensorScalar(const Tile& out, const Tile& in, AluOp op0, double c0, AluOp op1, double c1, Engine e) {
  auto& I = emit<InstTensorScalar>(e, "ts");
  I.op0 = op0;
  I.const0 = c0;
  I.op1 = op1;
  I.const1 = c1;
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  legal(I, legality::aluOps(I.opcode(), e, op0, op1));
  legal(I, legality::bitvecDtypes(I.opcode(), op0, op1, {I.ins[0].dtype}, {I.outs[0].dtype}));
  check(I);
}

void KernelBuilder::tensorScalarPtr(const Tile& out, const Tile& in, AluOp op0, const Tile& s0, AluOp op1,
                                    std::optional<Tile> s1, double c1, Engine e) {
  auto& I = emit<InstTensorScalarPtr>(e, "tsp");
  I.op0 = op0;
  I.op1 = op1;
  I.const1 = c1;
  I.ins = {in.ap(), s0.ap()};
  if (s1) I.ins.push_back(s1->ap());
  I.outs = {out.ap()};
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  if (auto why = notColumn(s0, out.partitions(), "scalar0"); !why.empty()) fail(I, why);
  if (s1) if (auto why = notColumn(*s1, out.partitions(), "scalar1"); !why.empty()) fail(I, why);
  legal(I, legality::aluOps(I.opcode(), e, op0, op1));
  legal(I, legality::bitvecDtypes(I.opcode(), op0, op1, {I.ins[0].dtype}, {I.outs[0].dtype}));
  check(I);
}

void KernelBuilder::reduce(const Tile& out, const Tile& in, AluOp op, ReduceAxis axis, bool negate) {
  auto& I = emit<InstTensorReduce>(Engine::DVE, "reduce");
  I.op = op;
  I.axis = axis;
  I.negate = negate;
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  legal(I, legality::reduceOp(I.opcode(), op));
  legal(I, legality::bitvecDtypes(I.opcode(), op, AluOp::bypass, {I.ins[0].dtype}, {I.outs[0].dtype}));
  const size_t folded = axis == ReduceAxis::X ? 1 : axis == ReduceAxis::XY ? 2 : axis == ReduceAxis::XYZ ? 3 : 4;
  if (folded > in.rank()) fail(I, "folds " + std::to_string(folded) + " free dims of " + in.str());
  int64_t kept = 1;
  for (size_t d = 0; d + folded < in.rank(); ++d) kept *= in.dim(d);
  if (out.partitions() != in.partitions() || out.freeSize() != kept)
    fail(I, "out " + out.str() + " does not hold the reduction of " + in.str());
  check(I);
}

void KernelBuilder::reciprocal(const Tile& out, const Tile& in) {
  auto& I = emit<InstReciprocal>(Engine::DVE, "recip");
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  check(I);
}

void KernelBuilder::bnStats(const Tile& out, const Tile& in) {
  auto& I = emit<InstBNStats>(Engine::DVE, "bnstats");
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  legal(I, legality::bnStats(legality::operandOf(I.ins[0]), config()));
  if (out.freeSize() != 6 || out.partitions() != in.partitions()) fail(I, "out " + out.str() + " is not [P, 6]");
  check(I);
}

void KernelBuilder::bnAggregate(const Tile& out, const Tile& in) {
  auto& I = emit<InstBNStatsAggregate>(Engine::DVE, "bnaggr");
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  if (in.freeSize() % 6 != 0) fail(I, "bn_aggr takes whole bn_stats records, not " + in.str());
  if (out.freeSize() != 2 || out.partitions() != in.partitions()) fail(I, "out " + out.str() + " is not [P, 2]");
  check(I);
}

void KernelBuilder::max8(const Tile& out, const Tile& in) {
  auto& I = emit<InstMax>(Engine::DVE, "max8");
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  legal(I, legality::max8Family(I.opcode(), legality::operandOf(I.ins[0]), config()));
  if (out.freeSize() != 8 || out.partitions() != in.partitions()) fail(I, "max8 of " + in.str() + " into " + out.str());
  check(I);
}

void KernelBuilder::findIndex8(const Tile& out, const Tile& in, const Tile& values) {
  auto& I = emit<InstMaxIndex>(Engine::DVE, "findidx");
  I.ins = {in.ap(), values.ap()};
  I.outs = {out.ap()};
  legal(I, legality::max8Family(I.opcode(), legality::operandOf(I.ins[0]), config()));
  if (values.freeSize() != 8 || out.freeSize() != 8 || out.partitions() != in.partitions())
    fail(I, "find_index8 of " + values.str() + " in " + in.str() + " into " + out.str());
  check(I);
}

void KernelBuilder::matchReplace8(const Tile& out, const Tile& in, const Tile& values, double imm,
                                  std::optional<Tile> indices) {
  auto& I = emit<InstMatchReplace>(Engine::DVE, "matchrep");
  I.imm_value = imm;
  I.ins = {in.ap(), values.ap()};
  I.outs = {out.ap()};
  if (indices) {
    I.outs.push_back(indices->ap());
    if (indices->freeSize() != 8 || isFloat(indices->dtype())) fail(I, "indices " + indices->str() + " is not [P, 8] integers");
  }
  legal(I, legality::max8Family(I.opcode(), legality::operandOf(I.ins[0]), config()));
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  if (values.freeSize() != 8) fail(I, "match_replace8 takes 8 values per partition, not " + values.str());
  check(I);
}

void KernelBuilder::iota(const Tile& out, int64_t base, const std::vector<APPair>& pattern, int64_t channelMultiplier) {
  auto& I = emit<InstIota>(Engine::Pool, "iota");
  I.base = base;
  I.pattern = pattern;
  I.channel_multiplier = channelMultiplier;
  I.outs = {out.ap()};
  int64_t n = 1;
  for (const auto& p : pattern) n *= p.num;
  if (n != out.freeSize()) fail(I, "the pattern has " + std::to_string(n) + " elements per partition, out " + out.str());
  check(I);
}

void KernelBuilder::affineSelect(const Tile& out, const Tile& in, int64_t base, const std::vector<APPair>& pattern,
                                 int64_t channelMultiplier, AluOp cmp, double fill) {
  auto& I = emit<InstAffineSelect>(Engine::Pool, "asel");
  I.base = base;
  I.pattern = pattern;
  I.channel_multiplier = channelMultiplier;
  I.compare_op = cmp;
  I.fill_value = fill;
  I.ins = {in.ap()};
  I.outs = {out.ap()};
  if (auto why = laneMismatch(out, in); !why.empty()) fail(I, why);
  int64_t n = 1;
  for (const auto& p : pattern) n *= p.num;
  if (n != out.freeSize()) fail(I, "the pattern has " + std::to_string(n) + " elements per partition, out " + out.str());
  check(I);
}

}  // namespace walrus::kernels

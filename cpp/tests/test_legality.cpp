// The legality rules (bir/Legality.h) as the IT54 kernel builder applies them: each violation the
// builder can be asked for is refused with the rule's own message (tests/bir/test_legality.py checks
// the same wording through the simulator's decoder and both NKI tracers).
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "bir/Legality.h"
#include "bir/Module.h"
#include "walrus/BIRKernelWrapper.h"
#include "walrus/kernels/KernelBuilder.h"

namespace {

using namespace bir;
namespace lg = bir::legality;
using walrus::kernels::KernelBuilder;
using walrus::kernels::Tile;

struct Fixture {
  std::unique_ptr<Module> m = std::make_unique<Module>();
  Function* f = m->addFunction();
  InstBIRKernel* node =
      cast<InstBIRKernel>(f->addBlock("main")->addInstruction(InstructionType::BIRKernel, "node0"));
  KernelBuilder kb{*node, *f, true, walrus::kDefaultMaxInstructions};
};

lg::Operand operand(lg::Space s, DType t, int64_t p, int64_t f) {
  lg::Operand o;
  o.space = s;
  o.dtype = t;
  o.partitions = p;
  o.free_elements = f;
  return o;
}
lg::Operand sb(DType t, int64_t p, int64_t f) { return operand(lg::Space::SBUF, t, p, f); }
lg::Operand ps(DType t, int64_t p, int64_t f) { return operand(lg::Space::PSUM, t, p, f); }

// `emit` breaks `rule`; the builder's message carries the rule's message for `facts`.
void expectRefused(const std::function<void(KernelBuilder&)>& emit, lg::Verdict facts, lg::Rule rule) {
  ASSERT_TRUE(facts.has_value());
  ASSERT_EQ(facts->rule, rule) << facts->message;
  Fixture fx;
  try {
    emit(fx.kb);
    FAIL() << "not refused: " << facts->message;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(facts->message), std::string::npos) << e.what() << "\nwanted: " << facts->message;
  }
}

lg::Matmul pe(lg::Operand st, lg::Operand mv, lg::Operand out, bool transpose = false) {
  lg::Matmul mm;
  mm.stationary = st;
  mm.moving = mv;
  mm.out = out;
  mm.is_transpose = transpose;
  return mm;
}

const MachineConfig& trn1() { return machineConfig("trn1"); }

TEST(Legality, EveryRuleHasAnIdAndARequirement) {
  std::set<std::string_view> ids;
  for (const auto& r : lg::rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.requires_.empty()) << r.id;
    EXPECT_EQ(&lg::info(r.rule), &r);
  }
}

TEST(Legality, KernelBuilderRefusesWithTheRulesWording) {
  const DType bf = DType::bfloat16, f32 = DType::float32;
  lg::Matmul mm = pe(sb(bf, 128, 128), sb(bf, 128, 513), ps(f32, 128, 513));
  expectRefused(
      [](KernelBuilder& kb) {
        kb.matmul(kb.psumPool("p", 1, 2).next(DType::float32, {513}), kb.sbufTile("st", DType::bfloat16, {128}),
                  kb.sbufTile("mv", DType::bfloat16, {513}), true, true);
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulMovingSize);

  mm = pe(sb(f32, 128, 128), sb(bf, 128, 512), ps(f32, 128, 512));
  expectRefused(
      [](KernelBuilder& kb) {
        kb.matmul(kb.psumPool("p", 1).next(DType::float32, {512}), kb.sbufTile("st", DType::float32, {128}),
                  kb.sbufTile("mv", DType::bfloat16, {512}), true, true);
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulFp32Pair);

  mm = pe(sb(bf, 128, 128), sb(bf, 64, 512), ps(f32, 128, 512));
  expectRefused(
      [](KernelBuilder& kb) {
        kb.matmul(kb.psumPool("p", 1).next(DType::float32, {512}), kb.sbufTile("st", DType::bfloat16, {128}),
                  kb.sbufTile("mv", DType::bfloat16, {512}).rows(0, 64), true, true);
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulContraction);

  mm = pe(sb(bf, 128, 128), sb(bf, 128, 512), sb(f32, 128, 512));
  expectRefused(
      [](KernelBuilder& kb) {
        kb.matmul(kb.sbufTile("out", DType::float32, {512}), kb.sbufTile("st", DType::bfloat16, {128}),
                  kb.sbufTile("mv", DType::bfloat16, {512}), true, true);
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulResultSpace);

  mm = pe(sb(bf, 128, 128), sb(bf, 128, 512), ps(bf, 128, 512));
  expectRefused(
      [](KernelBuilder& kb) {
        kb.matmul(kb.psumPool("p", 1).next(DType::bfloat16, {512}), kb.sbufTile("st", DType::bfloat16, {128}),
                  kb.sbufTile("mv", DType::bfloat16, {512}), true, true);
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulResultDtype);

  // The result [128, 512] fp32 from byte 1024 of a two-bank buffer crosses the first bank's end.
  lg::Operand out = ps(f32, 128, 512);
  out.placed = true;
  out.start_byte = out.byte_lo = 1024;
  out.byte_hi = 3072;
  mm = pe(sb(bf, 128, 128), sb(bf, 128, 512), out);
  expectRefused(
      [](KernelBuilder& kb) {
        kb.matmul(kb.psumPool("p", 1, 2).next(DType::float32, {1024}).cols(256, 512),
                  kb.sbufTile("st", DType::bfloat16, {128}), kb.sbufTile("mv", DType::bfloat16, {512}), true, true);
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulPsumBank);

  mm = pe(sb(bf, 128, 64), sb(bf, 128, 128), ps(DType::int32, 64, 128), true);
  expectRefused(
      [](KernelBuilder& kb) {
        kb.transpose(kb.psumPool("p", 1).next(DType::int32, {128}).rows(0, 64), kb.sbufTile("in", DType::bfloat16, {64}));
      },
      lg::matmul(mm, trn1()), lg::Rule::MatmulResultDtype);

  expectRefused(
      [](KernelBuilder& kb) {
        kb.bnStats(kb.sbufTile("out", DType::float32, {6}), kb.sbufTile("in", DType::float32, {513}));
      },
      lg::bnStats(sb(f32, 128, 513), trn1()), lg::Rule::BnStatsSize);

  expectRefused(
      [](KernelBuilder& kb) { kb.max8(kb.sbufTile("out", DType::float32, {8}), kb.sbufTile("in", DType::float32, {4})); },
      lg::max8Family(InstructionType::Max, sb(f32, 128, 4), trn1()), lg::Rule::Max8Size);

  expectRefused(
      [](KernelBuilder& kb) {
        kb.copy(kb.sbufTile("out", DType::float32, {64}), kb.psumPool("p", 1).next(DType::float32, {64}), Engine::Pool);
      },
      lg::engineOperand(InstructionType::TensorCopy, Engine::Pool, ps(f32, 128, 64), false, trn1()), lg::Rule::PoolPsum);

  // ALU operators by engine.
  expectRefused(
      [](KernelBuilder& kb) {
        kb.tensorScalar(kb.sbufTile("out", DType::float32, {64}), kb.sbufTile("in", DType::float32, {64}), AluOp::add, 1.0,
                        AluOp::mult, 2.0, Engine::Activation);
      },
      lg::aluOps(InstructionType::TensorScalar, Engine::Activation, AluOp::add, AluOp::mult), lg::Rule::ActTensorScalarOps);
  expectRefused(
      [](KernelBuilder& kb) {
        kb.tensorTensor(kb.sbufTile("out", DType::int32, {64}), kb.sbufTile("a", DType::int32, {64}),
                        kb.sbufTile("b", DType::int32, {64}), AluOp::bitwise_xor, Engine::Pool);
      },
      lg::aluOps(InstructionType::TensorTensor, Engine::Pool, AluOp::bitwise_xor, AluOp::bypass), lg::Rule::AluBitvecEngine);
  expectRefused(
      [](KernelBuilder& kb) {
        kb.tensorTensor(kb.sbufTile("out", DType::int32, {64}), kb.sbufTile("a", DType::float32, {64}),
                        kb.sbufTile("b", DType::int32, {64}), AluOp::bitwise_and, Engine::DVE);
      },
      lg::bitvecDtypes(InstructionType::TensorTensor, AluOp::bitwise_and, AluOp::bypass, {DType::float32}, {}),
      lg::Rule::AluBitvecDtype);
  expectRefused(
      [](KernelBuilder& kb) {
        kb.tensorScalar(kb.sbufTile("out", DType::int32, {64}), kb.sbufTile("in", DType::int32, {64}), AluOp::add, 1.0,
                        AluOp::bitwise_and, 2.0, Engine::DVE);
      },
      lg::aluOps(InstructionType::TensorScalar, Engine::DVE, AluOp::add, AluOp::bitwise_and), lg::Rule::TensorScalarOpKinds);
  expectRefused(
      [](KernelBuilder& kb) {
        kb.reduce(kb.sbufTile("out", DType::float32, {1}), kb.sbufTile("in", DType::float32, {64}), AluOp::pow);
      },
      lg::reduceOp(InstructionType::TensorReduce, AluOp::pow), lg::Rule::ReduceOp);

  expectRefused(
      [](KernelBuilder& kb) {
        kb.activation(kb.sbufTile("out", DType::float32, {64}), kb.sbufTile("in", DType::float32, {64}), ActivationFunc::Copy,
                      walrus::kernels::Act().accumulate(AccumCmd::ZeroAccumulate, AluOp::max));
      },
      lg::activationReduce(AccumCmd::ZeroAccumulate, AluOp::max, trn1()), lg::Rule::ActReduceOp);

  // DMA does not reach PSUM: a store from, a load into, and an on-chip transpose out of a PSUM tile.
  const auto dram = [](KernelBuilder& kb, std::vector<APPair> dims) {
    return walrus::kernels::DramView(
        kb.node().parent()->parent()->createDramTensor("d", MemoryType::DRAM, DType::float32, {128, 64}), DType::float32,
        0, std::move(dims));
  };
  lg::Dma save;
  save.opcode = InstructionType::DMACopy;
  save.src = ps(f32, 128, 64);
  save.dst = operand(lg::Space::DRAM, f32, 128, 64);
  expectRefused(
      [&](KernelBuilder& kb) { kb.store(dram(kb, {{64, 128}, {1, 64}}), kb.psumPool("p", 1).next(DType::float32, {64})); },
      lg::dma(save, trn1()), lg::Rule::DmaPsum);
  lg::Dma in = save;
  std::swap(in.src, in.dst);
  expectRefused(
      [&](KernelBuilder& kb) { kb.load(kb.psumPool("p", 1).next(DType::float32, {64}), dram(kb, {{64, 128}, {1, 64}})); },
      lg::dma(in, trn1()), lg::Rule::DmaPsum);
  lg::Dma transpose = save;
  transpose.dst = sb(f32, 64, 128);
  transpose.mode = DmaMode::Transpose;
  expectRefused(
      [](KernelBuilder& kb) {
        kb.transposeOnChip(kb.sbufTile("t", DType::float32, {128}).rows(0, 64), kb.psumPool("p", 1).next(DType::float32, {64}));
      },
      lg::dma(transpose, trn1()), lg::Rule::DmaPsum);
}

// plainDmaPasses is the decoder's shortcut past dma() for a plain copy: wherever it says yes, dma()
// must find nothing, on every generation, or the simulator would accept a transfer the rules refuse.
TEST(Legality, PlainDmaPassesOnlyWhatDmaPasses) {
  const Opcode opcodes[] = {InstructionType::DMA, InstructionType::Load, InstructionType::Save,
                            InstructionType::DMACopy, InstructionType::IndirectSave};
#define NXS_VALUE(x) x,
  const DmaMode modes[] = {BIR_ENUM_DmaMode(DmaMode::NXS_VALUE)};
  const DgeType dges[] = {BIR_ENUM_DgeType(DgeType::NXS_VALUE)};
  const AluOp rmws[] = {BIR_ENUM_AluOp(AluOp::NXS_VALUE)};
  const Engine engines[] = {BIR_ENUM_Engine(Engine::NXS_VALUE)};
#undef NXS_VALUE
  const lg::Space spaces[] = {lg::Space::SBUF, lg::Space::PSUM, lg::Space::DRAM, lg::Space::Immediate};
  const std::pair<DType, int64_t> dsts[] = {{DType::float32, 64}, {DType::bfloat16, 64}, {DType::float32, 65}};
  int accepted = 0;
  for (const char* arch : {"trn1", "trn2"})
    for (Opcode op : opcodes)
      for (DmaMode mode : modes)
        for (DgeType dge : dges)
          for (AluOp rmw : rmws)
            for (lg::Space s : spaces)
              for (lg::Space t : spaces)
                for (const auto& [dtype, free] : dsts)
                  for (Engine engine : engines) {
                    lg::Dma d;
                    d.opcode = op;
                    d.engine = engine;
                    d.src = operand(s, DType::float32, 128, 64);
                    d.dst = operand(t, dtype, 128, free);
                    d.mode = mode;
                    d.dst_rmw_op = rmw;
                    d.dge_type = dge;
                    if (!lg::plainDmaPasses(op, d.src, d.dst, mode, rmw, dge)) continue;
                    ++accepted;
                    const lg::Verdict v = lg::dma(d, machineConfig(arch));
                    ASSERT_FALSE(v.has_value()) << arch << " " << InstructionType::string(op) << ": " << v->message;
                  }
  EXPECT_GT(accepted, 0);  // (the shortcut is taken at all)
}

}  // namespace

// Every executable node class runs once in full mode (so the sanitizer build covers every exec
// path), and randomly built modules never crash: they run or are refused with an nxs::Error.
#include <random>
#include <typeinfo>

#include "test_sim_kit.h"

using namespace sim_test;

namespace {

// A module holding one instance of each executable node class on small tiles.
Kit everyNodeModule() {
  Kit k;
  const int64_t P = 32, N = 16;
  auto* x = k.dram("x", MemoryType::Input, {P, N}, DType::float32);
  auto* y = k.dram("y", MemoryType::Output, {P, N}, DType::float32);
  auto* idx = k.dram("idx", MemoryType::Input, {4, 1}, DType::int32);
  auto* a = k.sbuf("a", P, N);
  auto* b = k.sbuf("b", P, N);
  auto* c = k.sbuf("c", P, N);
  auto* s = k.sbuf("s", P, 8);
  auto* bf = k.sbuf("bf", P, N, DType::bfloat16);
  auto* u32 = k.sbuf("u32", P, 8, DType::uint32);
  auto* wide = k.sbuf("wide", P, P);
  auto* ident = k.sbuf("ident", P, P, DType::bfloat16);
  auto* ps = k.psum("ps", N, P);
  auto* id = k.sbuf("id", 4, 1, DType::int32);
  auto t = [](MemoryLocation* l, int64_t e = -1) { return Kit::tile(l, -1, e); };
  k.dma(t(a), Kit::full(x));
  k.add(InstructionType::TensorCopy, {t(a)}, {t(b)});
  k.add(InstructionType::Memset, {}, {t(c)});
  // (sets the accumulation registers the read below reads: reading unset ones is refused)
  k.add<InstActivation>(InstructionType::Activation, {t(a)}, {t(c)})->acc = AccumCmd::ZeroAccumulate;
  k.add(InstructionType::ReadActivationAccumulator, {}, {t(s, 1)});
  k.add(InstructionType::Reciprocal, {t(a)}, {t(c)});
  k.add(InstructionType::TensorScalar, {t(a)}, {t(c)});
  k.add(InstructionType::TensorScalarPtr, {t(a), t(s, 1)}, {t(c)});
  k.add(InstructionType::TensorTensor, {t(a), t(b)}, {t(c)});
  k.add(InstructionType::TensorTensorScan, {t(a), t(b)}, {t(c)});
  k.add(InstructionType::TensorReduce, {t(a)}, {t(s, 1)});
  k.add(InstructionType::BNStats, {t(a)}, {t(s, 6)});
  k.add(InstructionType::BNStatsAggregate, {t(s, 6)}, {t(s, 2)});
  k.add<InstStreamShuffle>(InstructionType::StreamShuffle, {t(a)}, {t(c)})->shuffle_mask.assign(32, 3);
  k.add(InstructionType::StreamTranspose, {t(b)}, {Kit::tile(wide, N, P)});
  k.add<InstIota>(InstructionType::Iota, {}, {t(c)})->pattern = {{1, N}};
  k.add<InstAffineSelect>(InstructionType::TensorScalarAffineSelect, {t(a)}, {t(c)})->pattern = {{-1, N}};
  k.add(InstructionType::Select, {t(a), t(b), t(c)}, {t(c)});
  {  // keeps a[p, i] where 2 <= i < 9, else -1
    auto* r = k.add<InstRangeSelect>(InstructionType::RangeSelect, {t(a), t(s, 1), Kit::tile(s, -1, 1, 0, 1)}, {t(c)});
    r->comp_op0 = AluOp::is_ge;
    r->comp_op1 = AluOp::is_lt;
    r->fill_value = -1;
  }
  k.add(InstructionType::SelectReduce, {t(a), t(b)}, {t(c), t(s, 1)});
  k.add(InstructionType::CopyPredicated, {t(a), t(b)}, {t(c)});
  k.add<InstDropout>(InstructionType::Dropout, {t(a)}, {t(c)})->prob = 0.5;
  k.add(InstructionType::Max, {t(a)}, {t(s)});
  k.add(InstructionType::MaxIndex, {t(a), t(s)}, {t(u32)});
  k.add(InstructionType::MatchReplace, {t(a), t(s)}, {t(c), t(u32)});
  k.add(InstructionType::TensorCopy, {t(a)}, {t(bf)});
  k.add(InstructionType::Matmult, {t(bf), t(bf)}, {t(ps, N)});
  k.add(InstructionType::Memset, {}, {t(ident)});  // the transpose's moving operand (not read)
  auto* tr = k.add<InstMatmult>(InstructionType::Matmult, {t(bf), t(ident)}, {Kit::tile(ps, N, P)});
  tr->is_transpose = true;
  k.add(InstructionType::TensorCopy, {t(ps, N)}, {Kit::tile(c, N)});
  k.dma(Kit::tile(id), Kit::full(idx));
  k.add(InstructionType::TensorCopyDynamicSrc, {t(a, 8), Kit::tile(id, 1)}, {t(c, 8)});
  k.add(InstructionType::TensorCopyDynamicDst, {t(a, 8), Kit::tile(id, 1)}, {t(c, 8)});
  k.add(InstructionType::ScalarTensorTensor, {t(a), t(b), t(s, 1)}, {t(c)});
  k.add(InstructionType::TensorScalarReduce, {t(a)}, {t(c), t(s, 1)});
  k.add(InstructionType::TensorPartitionReduce, {t(a)}, {Kit::tile(c, 1, N)});
  auto* u16 = k.sbuf("u16", P, 1, DType::uint16);
  auto* gi = k.sbuf("gi", P, 4, DType::uint32);
  auto* seg = k.sbuf("seg", 1, 8, DType::int32);
  auto* bounds = k.sbuf("bounds", 1, 16, DType::int32);
  auto* nz = k.sbuf("nz", P, N + 1, DType::int32);
  k.add<InstMemset>(InstructionType::Memset, {}, {t(u16)})->constant = 3;
  k.add<InstMemset>(InstructionType::Memset, {}, {t(gi)})->constant = 5;
  k.add<InstMemset>(InstructionType::Memset, {}, {t(seg)})->constant = 2;
  {
    auto* g = k.add<InstLocalGather>(InstructionType::LocalGather, {t(a), t(u16)}, {t(c)});
    g->num_valid_indices = 8;
    g->num_elem_per_idx = 2;
  }
  k.add(InstructionType::Gather, {t(a), t(gi)}, {Kit::tile(s, -1, 4)});
  k.add(InstructionType::SequenceBounds, {t(seg)}, {t(bounds)});
  k.add(InstructionType::NonzeroWithCount, {t(a)}, {t(nz)});
  auto* st = k.sbuf("st", P, 6, DType::uint32);
  k.add<InstMemset>(InstructionType::Memset, {}, {t(st)})->constant = 9;
  k.add(InstructionType::SetRandState, {t(st)}, {})->engine = Engine::Pool;
  k.add(InstructionType::SetRandState, {Kit::tile(st, 1, 1)}, {})->engine = Engine::DVE;
  k.add(InstructionType::Rand, {}, {t(gi)})->engine = Engine::Pool;
  k.add(InstructionType::GetRandState, {}, {t(st)})->engine = Engine::Pool;
  k.add(InstructionType::DevicePrint, {t(s, 2)}, {});
  k.add(InstructionType::NoOp, {}, {});
  k.add(InstructionType::DMA, {Kit::full(x), Kit::tile(id)}, {Kit::tile(b, 4)});
  k.dma(Kit::full(y), t(c));
  std::vector<float> xv(P * N);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 13) - 6;
  k.fill("x", xv);
  k.fill("idx", std::vector<int32_t>{1, 0, 3, 2});
  return k;
}

}  // namespace

TEST(SimEveryNode, EveryExecutableNodeClassRuns) {
  Kit k = everyNodeModule();
  bir::forEachNodeClass([&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if constexpr (!std::is_same_v<T, InstUnmodeled> && !std::is_same_v<T, InstBIRKernel> &&
                  !std::is_same_v<T, InstNKIKernel> && !std::is_same_v<T, InstNKIKLIRKernel>) {
      bool found = false;
      for (const auto& I : k.bb->instructions()) found = found || T::classof(I.get());
      EXPECT_TRUE(found) << "no instance of " << typeid(T).name();
    }
  });
  const sim::SimResult r = k.run(sim::Mode::Full, "trn2");  // range_select is NeuronCore-v3
  EXPECT_EQ(r.records.size(), k.bb->size());
  EXPECT_EQ(r.prints.size(), 1u);
}

// Random instructions over random patterns of a few small tensors: every run ends normally or
// with an nxs::Error (SimulationError / BIRError); the sanitizer build checks nothing else breaks.
TEST(SimEveryNode, RandomModulesRunOrAreRefused) {
  std::mt19937 gen(2024);
  auto pick = [&](int n) { return static_cast<int>(gen() % static_cast<unsigned>(n)); };
  const std::vector<Opcode> ops = {
      InstructionType::TensorCopy, InstructionType::TensorTensor, InstructionType::Activation,
      InstructionType::TensorScalar, InstructionType::TensorReduce, InstructionType::Matmult,
      InstructionType::DMA, InstructionType::Memset, InstructionType::Select, InstructionType::StreamShuffle,
      InstructionType::Max, InstructionType::BNStats, InstructionType::CopyPredicated, InstructionType::Iota,
      InstructionType::TensorCopyDynamicSrc, InstructionType::MatchReplace, InstructionType::StreamTranspose};
  const DType dtypes[] = {DType::float32, DType::bfloat16, DType::float8e4, DType::int32, DType::uint8};
  int ran = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Kit k;
    std::vector<MemoryLocation*> locs = {k.sbuf("s0", 128, 64, dtypes[pick(5)]), k.sbuf("s1", 64, 32, dtypes[pick(5)]),
                                         k.psum("p0", 128, 512), k.dram("d0", MemoryType::Input, {16, 16}, DType::float32),
                                         k.dram("d1", MemoryType::Output, {8, 64}, dtypes[pick(5)])};
    auto randomAp = [&]() {
      MemoryLocation* l = locs[static_cast<size_t>(pick(static_cast<int>(locs.size())))];
      const int64_t row = l->isOnChip() ? l->bytes_per_partition / dtypeSize(l->set->dtype) : 16;
      const int64_t parts = 1 + pick(static_cast<int>(std::min<int64_t>(l->partitions, 16)));
      const int64_t n = 1 + pick(16);
      AccessPattern ap = Instruction::createAP(l, pick(4) * (l->isOnChip() ? row : 1) + pick(8),
                                               {{l->isOnChip() ? row : 16, parts}, {1 + pick(2), n}}, {}, -1);
      if (pick(4) == 0) ap.dtype = dtypes[pick(5)];
      return ap;
    };
    for (int i = 0; i < 4; ++i) {
      const Opcode op = ops[static_cast<size_t>(pick(static_cast<int>(ops.size())))];
      const OperandRule rule = operandRuleOf(nodeClassOf(op));
      std::vector<AccessPattern> ins, outs;
      for (int j = 0; j < rule.min_ins; ++j) ins.push_back(randomAp());
      for (int j = 0; j < rule.min_outs; ++j) outs.push_back(randomAp());
      k.add(op, ins, outs);
    }
    for (sim::Mode mode : {sim::Mode::Timing, sim::Mode::Full}) {
      try {
        k.run(mode);
        ++ran;
      } catch (const nxs::Error&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(ran + refused, 0);
}

// ExpertMLPs: the MoE experts, every expert over blocks of tokens, scaled by the affinities.
//
//   out[t] = sum_e a[t, e] * (act(x_t @ Wg[e]) * (x_t @ Wu[e])) @ Wd[e]
//
//   Operands and attrs: the signature at the bottom of this file (tokens = the leading dims of
//   hidden; expert_affinities is zero for the experts a token is not routed to: RouterTopK's).
//
// NxD's all-experts schedule: the work does not depend on the routing data, so every expert runs
// over every token block and the affinities select. Per block of up to 512 tokens:
//   xT                          TokenPrologue (H on partitions)
//   hT_e = gated(xT; Wg[e], Wu[e])   weights stationary (GatedMlp.h), I on partitions
//   hT_e *= a[:, e]             the affinity row broadcast to every partition by a K = 1 matmul
//                               (ones^T @ row) and multiplied in on DVE (multiply on I: the down
//                               projection is linear, so this is the post-scale)
//   out = sum_e Wd[e]^T hT_e    one PSUM accumulation group per 128 output columns over all
//                               experts and I tiles, transposed back and stored
// Every expert's hT stays resident for the block; blocks shrink to fit SBUF.
#include <algorithm>

#include "walrus/kernels/GatedMlp.h"
#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/TokenPrologue.h"
#include "walrus/kernels/leaves/ActivationFunctions.h"

namespace walrus::kernels {
namespace {

using namespace bir;

void expandExpertMLPs(KernelBuilder& kb) {
  const ActivationFunc act = mlpActivation(kb.attrs().choice("act_fn"));
  const DramView x = kb.input("hidden").rows(), aff = kb.input("expert_affinities").rows();
  const DramView gate = kb.input("gate_w", 3), up = kb.input("up_w", 3), down = kb.input("down_w", 3);
  const DramView out = kb.output("out").rows();
  const int64_t T = x.dim(0), H = x.dim(1), E = gate.dim(0), I = gate.dim(2);
  KernelBuilder::require(aff.shape() == std::vector<int64_t>{T, E}, "expert_affinities must be [tokens, E] = [" +
                                                                        std::to_string(T) + ", " + std::to_string(E) + "]");
  KernelBuilder::require(gate.shape() == std::vector<int64_t>{E, H, I} && up.shape() == gate.shape(),
                         "gate_w and up_w must be [E, H, I]");
  KernelBuilder::require(down.shape() == std::vector<int64_t>{E, I, H}, "down_w must be [E, I, H]");
  KernelBuilder::require(out.shape() == x.shape(), "out must have hidden's shape");
  KernelBuilder::require(gate.dtype() == up.dtype() && down.dtype() == up.dtype(), "the expert weights must share one dtype");
  const DType mm = kb.matmulDtype(up.dtype());
  const int64_t KT = ceilDiv(H, kPartitions), IT = ceilDiv(I, kPartitions);

  TokenPrologue::Config pc;
  pc.H = H;
  pc.hiddenDtype = x.dtype();
  pc.xTdtype = mm;
  TokenPrologue prologue(kb, pc);
  const Tile ones = kb.sbufTile("ones", DType::float32, {kPartitions});
  kb.memset(ones.rows(0, 1), 1.0);
  GatedMlpWeights w;
  w.act = act;
  w.mm = mm;
  w.gate = gate.at(0, 0);
  w.up = up.at(0, 0);
  const int64_t phase = std::max({prologue.stagingBytes(), gatedActivationsBytes(w, kMaxMoving),
                                  downProjectBytes(mm, out.dtype(), kMaxMoving)}) + 4 * kMaxMoving;
  const int64_t tb = tokenBlock(kb, T, (KT + E * IT) * dtypeSize(mm), phase);

  for (int64_t t0 = 0; t0 < T; t0 += tb) {
    const int64_t tn = std::min(tb, T - t0);
    auto block = kb.scope();
    const Tile xT = kb.sbufTile("xT", mm, {KT, tb});
    TilePool hTs = kb.sbufPool("hT", mm, {IT, tb}, static_cast<int>(E));
    prologue.transposedTokens({x, {}, std::nullopt}, xT, 0, t0, tn);
    TilePool rows = kb.sbufPool("affinity_row", DType::float32, {tb}, 2);
    PsumPool bcast = kb.psumPool("affinity_bcast", 1);
    std::vector<DownTerm> terms;
    for (int64_t e = 0; e < E; ++e) {
      auto sec = kb.section("expert" + std::to_string(e));
      const Tile hT = hTs.next();
      w.gate = gate.at(0, e);
      w.up = up.at(0, e);
      gatedActivationsT(kb, w, xT, hT, tn);
      // a[:, e] on partition 0, then on every partition: out[p, t] = sum_{k<1} ones[k, p] row[k, t].
      const Tile row = rows.next().rows(0, 1).cols(0, tn);
      kb.load(row, aff.slice(0, t0, tn).at(1, e));
      const Tile a = bcast.next(DType::float32, {tn});
      kb.matmul(a, ones.rows(0, 1), row, true, true);
      for (int64_t it = 0; it < IT; ++it) {
        const int64_t iw = std::min(kPartitions, I - it * kPartitions);
        const Tile h = hT.at(0, it).rows(0, iw).cols(0, tn);
        kb.tensorTensor(h, h, a.rows(0, iw), AluOp::mult);
      }
      terms.push_back({down.at(0, e), hT});
    }
    downProjectAndStore(kb, terms, Tile(), out, t0, tn, mm);
  }
}

}  // namespace

const LeafSignature kExpertMLPsSignature{
    {enumAttr("act_fn", "ActFnType", mlpActivationNames(), "0", "the gate activation, as the MLP's")},
    {{"hidden", {"...", "H"}},
     {"expert_affinities", {"...", "E"}},
     {"gate_w", {"E", "H", "I"}},
     {"up_w", {"E", "H", "I"}},
     {"down_w", {"E", "I", "H"}}},
    {{"out", {"...", "H"}}}};

WALRUS_REGISTER_LEAF("ExpertMLPs", expandExpertMLPs,
                     "MoE experts: out = sum_e affinity[:, e] * MLP_e(hidden), all experts over token blocks",
                     kExpertMLPsSignature);

}  // namespace walrus::kernels

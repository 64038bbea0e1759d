#include "walrus/kernels/OnlineSoftmax.h"

namespace walrus::kernels {

using namespace bir;

OnlineSoftmax::OnlineSoftmax(KernelBuilder& kb, const Tile& state, int64_t rows, int64_t d) : kb_(kb) {
  const Tile s = state.rows(0, rows);
  nm_[0] = s.cols(0, 1);
  nm_[1] = s.cols(1, 1);
  nmBlk_ = s.cols(2, 1);
  l_ = s.cols(4, 1);
  lBlk_ = s.cols(5, 1);
  alpha_[0] = s.cols(6, 1);
  alpha_[1] = s.cols(7, 1);
  o_ = s.cols(8, d);
}

void OnlineSoftmax::block(const Tile& S, const Tile& p) {
  auto sec = kb_.section("softmax");
  const Tile& nmOld = nm_[blocks_ % 2];
  const Tile& nmNew = nm_[(blocks_ + 1) % 2];
  const Tile& alpha = alpha_[blocks_ % 2];
  if (blocks_ == 0) {
    kb_.reduce(nmNew, S, AluOp::max, ReduceAxis::X, /*negate=*/true);
  } else {
    kb_.reduce(nmBlk_, S, AluOp::max, ReduceAxis::X, /*negate=*/true);
    kb_.tensorTensor(nmNew, nmOld, nmBlk_, AluOp::min);
  }
  kb_.activation(p, S, ActivationFunc::Exp, Act().bias(nmNew).accumulate(AccumCmd::ZeroAccumulate));
  if (blocks_ == 0) {
    kb_.readAccumulator(l_);
  } else {
    kb_.readAccumulator(lBlk_);
    kb_.activation(alpha, nmOld, ActivationFunc::Exp, Act().scale(-1.0).bias(nmNew));
    kb_.tensorScalarPtr(l_, l_, AluOp::mult, alpha, AluOp::add, lBlk_, 0.0, Engine::Activation);
  }
  ++blocks_;
}

void OnlineSoftmax::accumulate(const Tile& oBlk) {
  auto sec = kb_.section("softmax");
  KernelBuilder::require(accumulated_ < blocks_, "OnlineSoftmax: accumulate before its block");
  if (accumulated_++ == 0) {
    kb_.copy(o_, oBlk);
    return;
  }
  kb_.tensorScalarPtr(o_, o_, AluOp::mult, alpha_[(accumulated_ - 1) % 2]);
  kb_.tensorTensor(o_, o_, oBlk, AluOp::add);
}

void OnlineSoftmax::finish(const Tile& out) {
  auto sec = kb_.section("softmax");
  KernelBuilder::require(accumulated_ == blocks_, "OnlineSoftmax: finish before every block is accumulated");
  kb_.tensorScalarPtr(out, o_, AluOp::divide, l_);
}

}  // namespace walrus::kernels

#include "walrus/kernels/OnlineSoftmax.h"

namespace walrus::kernels {

using namespace bir;

OnlineSoftmax::OnlineSoftmax(KernelBuilder& kb, const Tile& state, int64_t rows, int64_t d, double scale)
    : kb_(kb), rows_(rows), d_(d), scale_(scale) {
  KernelBuilder::require(scale > 0, "softmax scale " + std::to_string(scale) + "; expected a positive scale");
  const Tile s = state.rows(0, rows);
  m_[0] = s.cols(0, 1);
  m_[1] = s.cols(1, 1);
  mBlk_ = s.cols(2, 1);
  negM_ = s.cols(3, 1);
  l_ = s.cols(4, 1);
  lBlk_ = s.cols(5, 1);
  alpha_ = s.cols(6, 1);
  o_ = s.cols(8, d);
}

void OnlineSoftmax::block(const Tile& S, const Tile& p) {
  auto sec = kb_.section("softmax");
  const Tile& mOld = m_[cur_];
  const Tile& mNew = m_[1 - cur_];
  if (blocks_ == 0) {
    kb_.reduce(mNew, S, AluOp::max);
  } else {
    kb_.reduce(mBlk_, S, AluOp::max);
    kb_.tensorTensor(mNew, mOld, mBlk_, AluOp::max);
  }
  kb_.tensorScalar(negM_, mNew, AluOp::mult, -scale_);
  kb_.activation(p, S, ActivationFunc::Exp, Act().scale(scale_).bias(negM_).accumulate(AccumCmd::ZeroAccumulate));
  if (blocks_ == 0) {
    kb_.readAccumulator(l_);
  } else {
    kb_.readAccumulator(lBlk_);
    kb_.activation(alpha_, mOld, ActivationFunc::Exp, Act().scale(scale_).bias(negM_));
    kb_.tensorScalarPtr(l_, l_, AluOp::mult, alpha_, AluOp::add, lBlk_);
  }
  cur_ = 1 - cur_;
}

void OnlineSoftmax::accumulate(const Tile& oBlk) {
  auto sec = kb_.section("softmax");
  if (blocks_++ == 0) {
    kb_.copy(o_, oBlk);
    return;
  }
  kb_.tensorScalarPtr(o_, o_, AluOp::mult, alpha_);
  kb_.tensorTensor(o_, o_, oBlk, AluOp::add);
}

void OnlineSoftmax::finish(const Tile& out) {
  auto sec = kb_.section("softmax");
  kb_.tensorScalarPtr(out, o_, AluOp::divide, l_);
}

void OnlineSoftmax::logSumExp(const Tile& lse) {
  auto sec = kb_.section("softmax");
  kb_.activation(lse, l_, ActivationFunc::Ln);
  kb_.tensorScalarPtr(lse, lse, AluOp::subtract, negM_);
}

}  // namespace walrus::kernels

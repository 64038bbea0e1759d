#include "walrus/kernels/FlashAttention.h"

#include <deque>

namespace walrus::kernels {

using namespace bir;

struct FlashAttention::Lane {
  PsumPool scores;
  TilePool q, p, pT;  // q: this item's tile and the next one's, loaded ahead
  // The softmax state (running max, sum and O) lives as long as the lane's item, however many
  // blocks that is, so every lane owns its own: lanes run items of different lengths (causal
  // items grow with their query tile) and drift apart, so a pool shared by all lanes in turn
  // would hand a starting lane the state another lane is still using. Two, so an item's first
  // block need not wait for the previous item's final O / l.
  TilePool state;
  std::deque<const FlashItem*> queue;  // this lane's items, in order
  std::optional<Tile> nextQ;           // the queue front's q, prepared
  Tile pv;  // this lane's [128, d] PV accumulator
  const FlashItem* item = nullptr;
  size_t block = 0;
  Tile qT, S, P, PT;
  bool pvPending = false;  // lane.pv holds a block's P V not yet accumulated
  std::optional<OnlineSoftmax> softmax;
};

int FlashAttention::lanesFor(const KernelBuilder& kb, int64_t d, int most) {
  // Banks: two for scores per lane, and the lanes' PV accumulators packed.
  const int64_t perBank = std::max<int64_t>(1, kb.psumBankBytes() / (d * 4));
  for (int lanes = most; lanes > 1; --lanes)
    if (2 * lanes + ceilDiv(lanes, perBank) <= kb.psumBanks()) return lanes;
  return 1;
}

FlashAttention::FlashAttention(KernelBuilder& kb, DType mm, DType out, int64_t d, double scale, int lanes)
    : kb_(kb), mm_(mm), d_(d), DT_(ceilDiv(d, kPartitions)), scale_(scale), lanes_(static_cast<size_t>(lanes)) {
  const int64_t perBank = std::max<int64_t>(1, kb.psumBankBytes() / (d * 4));
  os_ = kb.sbufPool("o", out, {d}, 2);
  pvBanks_ = kb.psumPool("pv", static_cast<int>(ceilDiv(lanes, perBank)));
  std::vector<Tile> banks;
  for (int b = 0; b < pvBanks_.bufs(); ++b) banks.push_back(pvBanks_.next(DType::float32, {perBank * d}));
  for (int i = 0; i < lanes; ++i) {
    Lane& l = lanes_[static_cast<size_t>(i)];
    const std::string n = std::to_string(i);
    l.scores = kb.psumPool("scores" + n, 1, 2);
    l.q = kb.sbufPool("q" + n, mm, {DT_, kPartitions}, 2);
    l.state = kb.sbufPool("softmax_state" + n, DType::float32, {8 + d}, 2);
    l.p = kb.sbufPool("p" + n, mm, {kFlashBlockKeys}, 2);
    l.pT = kb.sbufPool("pT" + n, mm, {kFlashBlockKeys / kPartitions, kPartitions}, 2);
    l.pv = banks[static_cast<size_t>(i / perBank)].cols((i % perBank) * d, d);
  }
}

FlashAttention::~FlashAttention() = default;

Tile FlashAttention::prepare(Lane& lane, const FlashItem& item) {
  auto sec = kb_.section("load_q");
  const Tile qT = lane.q.next();
  item.loadQ(qT);
  for (int64_t dc = 0; dc < DT_; ++dc) {
    const Tile q = qT.at(0, dc).rows(0, std::min(kPartitions, d_ - dc * kPartitions)).cols(0, item.rows);
    kb_.tensorScalar(q, q, AluOp::mult, scale_, AluOp::bypass, 0.0, Engine::Pool);
  }
  return qT;
}

void FlashAttention::start(Lane& lane, const FlashItem& item, const Tile& qT) {
  lane.item = &item;
  lane.block = 0;
  lane.qT = qT;
  lane.softmax.emplace(kb_, lane.state.next(), item.rows, d_);
}

void FlashAttention::scores(Lane& lane, size_t block) {
  auto sec = kb_.section("qk");
  const FlashBlock& b = lane.item->blocks[block];
  const int64_t rows = lane.item->rows;
  lane.S = lane.scores.next(DType::float32, {b.kw}).rows(0, rows);
  // One accumulation group per 512 keys (a bank each); the mask goes into the group it falls in.
  for (int64_t c0 = 0; c0 < b.kw; c0 += kMaxMoving) {
    const int64_t cw = std::min(kMaxMoving, b.kw - c0);
    const bool masked = b.mask && b.mask->col0 >= c0 && b.mask->col0 < c0 + cw;
    for (int64_t dc = 0; dc < DT_; ++dc) {
      const int64_t dr = std::min(kPartitions, d_ - dc * kPartitions);
      kb_.matmul(lane.S.cols(c0, cw), lane.qT.at(0, dc).rows(0, dr).cols(0, rows),
                 b.kT.at(0, dc).rows(0, dr).cols(b.k0 + c0, cw), dc == 0, dc == DT_ - 1 && !masked);
    }
    if (masked) {
      KernelBuilder::require(b.mask->col0 + b.mask->width <= c0 + cw, "a mask must lie in one 512-key group");
      const Tile id = kb_.identity(kFlashMaskDtype).rows(0, rows).cols(0, rows);
      kb_.matmul(lane.S.cols(b.mask->col0, b.mask->width), id, b.mask->mask.rows(0, rows).cols(0, b.mask->width),
                 false, true);
    }
  }
}

void FlashAttention::softmax(Lane& lane) {
  const FlashBlock& b = lane.item->blocks[lane.block];
  lane.P = lane.p.next().rows(0, lane.item->rows).cols(0, b.kw);
  lane.softmax->block(lane.S, lane.P);
}

void FlashAttention::transposeP(Lane& lane) {
  auto sec = kb_.section("pT");
  const FlashBlock& b = lane.item->blocks[lane.block];
  lane.PT = lane.pT.next();
  // Issued from Pool: the SP queue keeps loading q, k and v ahead.
  for (int64_t c = 0; c * kPartitions < b.kw; ++c) {
    const int64_t kr = std::min(kPartitions, b.kw - c * kPartitions);
    kb_.transposeOnChip(lane.PT.at(0, c).rows(0, kr).cols(0, lane.item->rows), lane.P.cols(c * kPartitions, kr),
                        Engine::Pool);
  }
}

void FlashAttention::pv(Lane& lane) {
  auto sec = kb_.section("pv");
  const FlashBlock& b = lane.item->blocks[lane.block];
  const int64_t rows = lane.item->rows, chunks = ceilDiv(b.kw, kPartitions);
  const Tile O = lane.pv.rows(0, rows);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t kr = std::min(kPartitions, b.kw - c * kPartitions), kt = b.k0 / kPartitions + c;
    kb_.matmul(O, lane.PT.at(0, c).rows(0, kr).cols(0, rows), b.v.at(0, kt).rows(0, kr), c == 0, c == chunks - 1);
  }
  lane.pvPending = true;
}

void FlashAttention::accumulate(Lane& lane) {
  if (!lane.pvPending) return;
  auto sec = kb_.section("pv");
  lane.softmax->accumulate(lane.pv.rows(0, lane.item->rows));
  lane.pvPending = false;
}

void FlashAttention::finish(Lane& lane) {
  accumulate(lane);
  auto sec = kb_.section("store");
  const Tile o = os_.next().rows(0, lane.item->rows);
  lane.softmax->finish(o);
  lane.item->store(o);
  lane.item = nullptr;
  lane.softmax.reset();
}

void FlashAttention::run(const std::vector<FlashItem>& items) {
  for (const auto& it : items) {
    KernelBuilder::require(!it.blocks.empty() && it.rows >= 1 && it.rows <= kPartitions,
                           "a flash-attention item needs 1..128 query rows and at least one key block");
    for (const auto& b : it.blocks)
      KernelBuilder::require(b.kw >= 1 && b.kw <= kFlashBlockKeys && b.k0 % kPartitions == 0,
                             "flash-attention blocks hold 1..1024 keys from a multiple of 128");
  }
  // Items go to the lanes in turn. Each lane loads (and scales) the q of its next item while it
  // works on the current one, so it starts the next at once.
  for (size_t i = 0; i < items.size(); ++i) lanes_[i % lanes_.size()].queue.push_back(&items[i]);
  auto startNext = [&](Lane& l) {
    if (l.queue.empty()) return false;
    const FlashItem& item = *l.queue.front();
    l.queue.pop_front();
    const Tile qT = l.nextQ ? *l.nextQ : prepare(l, item);
    l.nextQ.reset();
    start(l, item, qT);
    if (!l.queue.empty()) l.nextQ = prepare(l, *l.queue.front());
    return true;
  };
  // Each stage is emitted for every lane in flight before the next stage.
  auto active = [&](auto&& stage) {
    for (Lane& l : lanes_)
      if (l.item) stage(l);
  };
  for (Lane& l : lanes_)
    if (startNext(l)) scores(l, 0);
  // Software-pipelined by one block: a lane's next scores are computed as soon as its softmax has
  // read the current ones, so the PE works on them while the lanes' P^T transposes are in flight;
  // and the previous block's P V is accumulated after this block's softmax, so neither ACT nor
  // DVE stalls on the PE in its in-order stream.
  while (std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& l) { return l.item != nullptr; })) {
    active([&](Lane& l) {
      softmax(l);
      if (l.block + 1 < l.item->blocks.size()) scores(l, l.block + 1);
    });
    active([&](Lane& l) { accumulate(l); });
    active([&](Lane& l) { transposeP(l); });
    active([&](Lane& l) { pv(l); });
    active([&](Lane& l) {
      if (++l.block < l.item->blocks.size()) return;
      finish(l);
      if (startNext(l)) scores(l, 0);
    });
  }
}

}  // namespace walrus::kernels

#include "walrus/kernels/Projection.h"

#include "bir/Error.h"

namespace walrus::kernels {

namespace {
// SBUF bytes per partition a leaf's plan leaves unused (alignment, small tiles).
constexpr int64_t kSbufMargin = 4096;
}  // namespace

void WeightStream::plan(const std::vector<DramView>& ws, int64_t c0, int64_t cols, int64_t step) {
  const Tile& shape = pool_.shape();
  const int64_t perLoad = shape.dim(0), width = shape.dim(1) / step * step;
  KernelBuilder::require(step >= 1 && step <= shape.dim(1),
                         "WeightStream: " + std::to_string(step) + " columns do not fit " + shape.str());
  for (int64_t g0 = c0; g0 < c0 + cols; g0 += width) {
    const int64_t gw = std::min(width, c0 + cols - g0);
    std::vector<std::vector<int64_t>> groupLoads(ws.size());  // per weight, its loads of this column group
    for (size_t i = 0; i < ws.size(); ++i) {
      const int64_t K = ws[i].dim(0), kTiles = ceilDiv(K, kPartitions);
      for (int64_t k0 = 0; k0 < kTiles; k0 += perLoad) {
        const int64_t n = std::min(perLoad, kTiles - k0);
        const int64_t rows = std::min(n * kPartitions, K - k0 * kPartitions);
        groupLoads[i].push_back(firstLoad_ + static_cast<int64_t>(loads_.size()));
        loads_.push_back(Load{ws[i].slice(0, k0 * kPartitions, rows).slice(1, g0, gw), Piece{Tile(), k0, n, kTiles, K}, 0});
      }
    }
    for (int64_t s0 = g0; s0 < g0 + gw; s0 += step)
      for (const auto& wLoads : groupLoads)
        for (int64_t load : wLoads) {
          uses_.push_back(Use{load, s0 - g0, std::min(step, g0 + gw - s0)});
          ++loads_[load - firstLoad_].uses;
        }
  }
}

void WeightStream::fill() {
  while (emitted_ < loads_.size() && emitted_ < static_cast<size_t>(pool_.bufs())) {
    Load& load = loads_[emitted_++];
    load.piece.tile = pool_.next();
    loadRowTiles(kb_, load.piece.tile, load.rows);
  }
}

WeightStream::Piece WeightStream::take() {
  fill();
  KernelBuilder::require(!uses_.empty(), "WeightStream: a projection was not planned");
  const Use use = uses_.front();
  uses_.pop_front();
  const size_t at = static_cast<size_t>(use.load - firstLoad_);
  KernelBuilder::require(at < emitted_, "WeightStream: a column group needs more loads at once than the " +
                                            std::to_string(pool_.bufs()) + " buffers of its pool");
  Load& load = loads_[at];
  Piece p = load.piece;
  p.tile = load.piece.tile.cols(use.col0, use.cols);
  --load.uses;
  while (!loads_.empty() && loads_.front().uses == 0) {
    loads_.pop_front();
    ++firstLoad_;
    --emitted_;
  }
  return p;
}

int64_t weightBudget(const KernelBuilder& kb, int64_t reserved) { return kb.sbufFree() - reserved - kSbufMargin; }

int weightBufs(const WeightLoads& loads, int64_t columns, int narrowBufs) {
  return columns > loads.step ? static_cast<int>(2 * loads.loads) : narrowBufs;
}

int64_t weightColumns(const KernelBuilder& kb, bir::DType dtype, const WeightLoads& loads, int streams, int64_t bytes) {
  const bir::MachineConfig& target = bir::machineConfig(kb.arch());
  // Rows of this many bytes take as long to move as the per-descriptor floor: wider gains nothing.
  const auto fullRateBytes = static_cast<int64_t>(target.dma_descriptor_ns * target.dma_engine_bandwidth_gbps);
  const int64_t step = loads.step;
  const int64_t most = std::min(ceilDiv(loads.columns, step), ceilDiv(fullRateBytes, step * dtypeSize(dtype))) * step;
  for (int64_t cols = most; cols > step; cols -= step)
    if (streams * weightBufs(loads, cols, 0) * loads.tiles * cols * dtypeSize(dtype) <= bytes) return cols;
  return step;
}

namespace {
template <class Multiply>
void project(WeightStream& w, Multiply&& multiply) {
  for (;;) {
    const WeightStream::Piece p = w.take();
    for (int64_t j = 0; j < p.tiles; ++j) {
      const int64_t kt = p.kt0 + j, kr = std::min(kPartitions, p.K - kt * kPartitions);
      multiply(kt, kr, p.tile.at(0, j).rows(0, kr), kt == 0, kt == p.kTiles - 1);
    }
    if (p.kt0 + p.tiles == p.kTiles) return;
  }
}
}  // namespace

void projectWeightsStationary(KernelBuilder& kb, const Tile& acc, WeightStream& w, const Tile& xT, int64_t tn,
                              bool open, bool close) {
  project(w, [&](int64_t kt, int64_t kr, const Tile& wt, bool start, bool stop) {
    kb.matmul(acc, wt.cols(0, acc.partitions()), xT.at(0, kt).rows(0, kr).cols(0, tn), start && open, stop && close);
  });
}

void projectWeightsMoving(KernelBuilder& kb, const Tile& acc, WeightStream& w, const Tile& xT, int64_t tn) {
  project(w, [&](int64_t kt, int64_t kr, const Tile& wt, bool start, bool stop) {
    kb.matmul(acc, xT.at(0, kt).rows(0, kr).cols(0, tn), wt.cols(0, acc.freeSize()), start, stop);
  });
}

int64_t tokenBlock(const KernelBuilder& kb, int64_t tokens, int64_t residentPerToken, int64_t phaseBytes) {
  const int64_t most = std::min(kMaxMoving, ceilDiv(tokens, kPartitions) * kPartitions);
  for (int64_t tb = most; tb >= kPartitions; tb -= kPartitions)
    if (residentPerToken * tb + phaseBytes <= kb.sbufBytes() - kSbufMargin) return tb;
  throw KernelError("no room for even a 128-token block: " + std::to_string(residentPerToken) +
                    " bytes per partition per token plus " + std::to_string(phaseBytes) + " exceed the " +
                    std::to_string(kb.sbufBytes()) + " bytes of SBUF per partition");
}

}  // namespace walrus::kernels

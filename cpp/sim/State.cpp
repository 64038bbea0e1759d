#include "State.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

namespace sim {

BitSet::BitSet(int64_t bits)
    : buf_(((bits + 63) / 64) * 8), nwords_((bits + 63) / 64),
      dirty_(static_cast<size_t>((bits >> kChunkBits) + 1)) {
  words_ = reinterpret_cast<uint64_t*>(buf_.data());
}

void BitSet::reset() {
  constexpr int64_t kWords = int64_t{1} << (kChunkBits - 6);
  for (size_t c = 0; c < dirty_.size(); ++c) {
    if (!dirty_[c].load(std::memory_order_relaxed)) continue;
    const int64_t w0 = static_cast<int64_t>(c) * kWords;
    std::memset(words_ + w0, 0, static_cast<size_t>(std::min(kWords, nwords_ - w0)) * 8);
    dirty_[c].store(0, std::memory_order_relaxed);
  }
}

const char* spaceName(Space s) {
  switch (s) {
    case Space::SBUF: return "SBUF";
    case Space::PSUM: return "PSUM";
    case Space::DRAM: return "DRAM";
    case Space::Imm: return "immediate";
  }
  return "?";
}

std::string Memory::describe(int64_t offset, int64_t n) const {
  if (pitch > 0) {
    const int64_t p = offset / pitch, b = offset % pitch;
    return std::string(spaceName(space)) + " partition " + std::to_string(p) + " bytes [" +
           std::to_string(b) + ", " + std::to_string(b + n) + ")";
  }
  return "tensor '" + name + "' bytes [" + std::to_string(offset) + ", " +
         std::to_string(offset + n) + ")";
}

CoreState::CoreState(int64_t partitions, int64_t sbufBpp, int64_t psumBpp)
    : psumGroup(partitions * psumPitch(psumBpp) / 4),
      psumHoles(partitions * psumPitch(psumBpp) / 4),
      actAccumulator(static_cast<size_t>(partitions), 0.0f),
      actAccumulatorSet(static_cast<size_t>(partitions), 0),
      dveAccumulator(static_cast<size_t>(partitions), 0.0f),
      dveAccumulatorSet(static_cast<size_t>(partitions), 0),
      partitions_(partitions),
      sbufBpp_(sbufBpp),
      psumBpp_(psumBpp) {
  sbufData_ = LargeBuffer(partitions * sbufBpp);
  psumData_ = LargeBuffer(partitions * psumPitch(psumBpp));
  auto init = [&](Memory& m, const char* name, Space s, uint8_t* data, int64_t pitch) {
    m.name = name;
    m.space = s;
    m.data = data;
    m.pitch = pitch;
    m.bytes = partitions * pitch;
    m.tracked = true;
    m.written = BitSet(m.bytes);
  };
  init(sbuf, "SBUF", Space::SBUF, sbufData_.data(), sbufBpp);
  init(psum, "PSUM", Space::PSUM, psumData_.data(), psumPitch(psumBpp));
  for (auto& g : rng) g.resize(static_cast<size_t>(partitions));
  resetRng();
}

void CoreState::resetRng() {
  for (int g = 0; g < 2; ++g)
    for (size_t p = 0; p < rng[static_cast<size_t>(g)].size(); ++p)
      rng[static_cast<size_t>(g)][p] = initialRng(g, static_cast<int64_t>(p));
}

void CoreState::reset() {
  sbuf.written.reset();
  psum.written.reset();
  psumGroup.reset();
  psumHoles.reset();
  anyPsumHoles = false;
  sbufWrittenTiles.clear();
  psumGroupTiles.clear();
  std::fill(actAccumulator.begin(), actAccumulator.end(), 0.0f);
  std::fill(actAccumulatorSet.begin(), actAccumulatorSet.end(), 0);
  std::fill(dveAccumulatorSet.begin(), dveAccumulatorSet.end(), 0);
  dveAccumulatorAnySet = false;
  dveAccumulatorChangedBy = {};
  resetRng();
}

}  // namespace sim

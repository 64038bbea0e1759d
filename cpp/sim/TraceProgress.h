// How far a trace file is written (SimResult::writeTrace): `done` of `total` slices, set by the
// writer and read from another thread for a progress bar (neuronxsim.sim.SimResult.write_trace).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace sim {

struct SimResult;

struct TraceProgress {
  std::atomic<uint64_t> done{0}, total{0};
};

// SimResult::writeTrace(path), reporting into `progress` (if given) as it goes.
void writeTrace(const SimResult& result, const std::string& path, TraceProgress* progress);

}  // namespace sim

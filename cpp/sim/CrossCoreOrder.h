// Refuses a multi-core module whose result depends on the order the simulator runs its cores in.
// The simulator runs the functions one after the other in function order; the hardware runs the
// cores in parallel, and the only order between cores the model has is the launch of a multi-core
// kernel (cpp/sim/README.md, "Multi-core"). So DRAM bytes that core B writes and another core A
// reads or writes are refused unless A > B and every such write of B comes, in B's program order,
// before the first instruction on B of the kernel (same `kernel` name) A's access belongs to: that
// kernel then launches on A no earlier than it did on B, after the write.
#pragma once

#include <vector>

#include "Program.h"

namespace sim {

class CrossCoreOrder {
 public:
  // The decoded cores (their DRAM footprints, cp.accesses with mem >= kMemFirstDram) and the
  // module's DRAM tensors.
  CrossCoreOrder(const std::vector<CoreProgram>& cores, const std::vector<TensorSpec>& tensors)
      : cores_(cores), tensors_(tensors) {}
  // Throws SimulationError naming both instructions, the tensor and a byte range for the first
  // conflict (by tensor, then the accessing core and its program order). Sorts the footprints
  // (per lane where lanes leave gaps); nothing per byte. Nothing to do for one core.
  void run() const;

 private:
  const std::vector<CoreProgram>& cores_;
  const std::vector<TensorSpec>& tensors_;
};

}  // namespace sim

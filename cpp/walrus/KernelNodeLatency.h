// The latency of a kernel node (IT54 / IT55 / IT56) from its real expansion.
//
// The node is copied into a scratch module, over scratch DRAM tensors with the shapes, dtypes and
// access patterns of its operands, and expanded there by the real builder: BIRKernelWrapper (the
// IT54 library leaf, as InlineBIRKernel does), resolveNKIKernel (the IT55 compiled kernel) or
// TranslateNKIASTToBIR (the IT56 carrier). The expansion is then scheduled by the simulator's
// Scheduler in timing mode, priced by `hwm`, the model that asked (a kernel node inside the
// expansion is priced the same way). The node's latency is that schedule's span on the node's
// NeuronCore; it occupies the whole core for it (bir::Latency::whole_core), with the expansion's
// PE flops and DMA bytes.
//
// Results are cached per process by the scratch module (kernel, shapes, attrs, patterns, the carried
// kernel) and the model's MachineConfig, so each distinct kernel instance is expanded once.
#pragma once

#include "bir/Hwm.h"

namespace walrus {

// Throws walrus::KernelError (naming the node) when it cannot be expanded, sim::SimulationError
// when its expansion cannot run, as resolving and simulating it would.
bir::Latency kernelNodeLatency(const bir::Hwm& hwm, const bir::Instruction& node);

// How many kernel-node latencies were computed (cache misses) and served from the cache (hits).
struct KernelNodeLatencyStats {
  size_t computed = 0, cached = 0;
};
KernelNodeLatencyStats kernelNodeLatencyStats();

}  // namespace walrus

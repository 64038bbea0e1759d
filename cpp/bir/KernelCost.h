// The analytic cost of an unexpanded IT54 kernel node (InstBIRKernel), per leaf family.
//
// A module whose kernel nodes are not expanded is still timed: Hwm::getLatency(InstBIRKernel)
// asks kernelNodeNs for the node's duration. Each estimator follows its leaf's schedule
// (cpp/walrus/kernels/leaves/*.cpp): it counts the instructions the expansion would issue on each
// engine from the node's operand shapes and attrs, prices each with the per-instruction formula
// Hwm charges the expanded instruction (same public sources, ../shared/reference/nki-isa-and-hw.md),
// and combines the engines as they overlap in that schedule: the busiest engine when the leaf
// pipelines them, a sum over the stages of a chain where its engines wait for each other.
#pragma once

#include <optional>

#include "KernelInstructions.h"

namespace bir {

struct MachineConfig;

// The node's duration in ns (without the launch/drain term kernel_fixed_ns), or nullopt when
// there is no estimator for its kernel_name or its operands are not the leaf's.
std::optional<double> kernelNodeNs(const InstBIRKernel& I, const MachineConfig& c);

}  // namespace bir

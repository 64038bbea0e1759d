// The Trainium latency models the simulator uses (bir::makeHwm builds them): a NeuronCore
// generation's ISA model (bir::Hwm for NeuronCore-v2, bir::NeuronCoreV3Hwm for v3) plus the price
// of IT54 library kernel nodes, which only libwalrus can expand (its leaves). As in the shipped
// compiler, TrainiumHwm is a global-namespace class of libwalrus (seed 000:
// TrainiumHwm::getLatency(bir::InstBIRKernel const&)); IT55 / IT56 nodes are priced by
// bir::Hwm::getLatency itself, through the bir::HwmExtension this library registers when it is
// loaded. All three go through walrus::kernelNodeLatency (KernelNodeLatency.h).
#pragma once

#include "bir/Hwm.h"

// NeuronCore-v2 (trn1).
class TrainiumHwm : public bir::Hwm {
 public:
  explicit TrainiumHwm(bir::MachineConfig config = bir::machineConfig("trn1")) : bir::Hwm(std::move(config)) {}
  using bir::Hwm::getLatency;
  bir::Latency getLatency(const bir::InstBIRKernel& I) const override;
};

// NeuronCore-v3 (trn2).
class Trainium2Hwm : public bir::NeuronCoreV3Hwm {
 public:
  explicit Trainium2Hwm(bir::MachineConfig config = bir::machineConfig("trn2"))
      : bir::NeuronCoreV3Hwm(std::move(config)) {}
  using bir::NeuronCoreV3Hwm::getLatency;
  bir::Latency getLatency(const bir::InstBIRKernel& I) const override;
};

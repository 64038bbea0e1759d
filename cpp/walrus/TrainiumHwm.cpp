#include "walrus/TrainiumHwm.h"

#include "bir/Error.h"
#include "walrus/KernelNodeLatency.h"

bir::Latency TrainiumHwm::getLatency(const bir::InstBIRKernel& I) const { return walrus::kernelNodeLatency(*this, I); }

bir::Latency Trainium2Hwm::getLatency(const bir::InstBIRKernel& I) const { return walrus::kernelNodeLatency(*this, I); }

namespace {

std::unique_ptr<bir::Hwm> makeTrainiumHwm(const bir::MachineConfig& config) {
  switch (config.neuron_core_version) {
    case 2: return std::make_unique<TrainiumHwm>(config);
    case 3: return std::make_unique<Trainium2Hwm>(config);
  }
  throw sim::SimulationError("no Trainium latency model for " + config.neuron_core);
}

// libBIR cannot depend on libwalrus: this library fills libBIR's hook when it is loaded.
[[maybe_unused]] const bool kRegistered = [] {
  bir::registerHwmExtension({&walrus::kernelNodeLatency, &makeTrainiumHwm});
  return true;
}();

}  // namespace

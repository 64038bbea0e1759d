// nkilib's ActFnType (the MLP family's act_fn) as ACT engine functions.
#pragma once

#include <string>
#include <vector>

#include "bir/Enums.h"

namespace walrus::kernels {

inline const std::vector<std::string>& mlpActivationNames() {
  static const std::vector<std::string> names = {"SiLU", "GELU", "GELU_Tanh_Approx", "Swish"};
  return names;
}

// SiLU -> Silu, GELU -> Gelu (erf), GELU_Tanh_Approx -> Gelu_apprx_tanh, Swish -> x * sigmoid(1.702 x)
// (Gelu_apprx_sigmoid; nkilib's reference maps ActFnType.Swish to it).
inline bir::ActivationFunc mlpActivation(int64_t actFn) {
  switch (actFn) {
    case 1: return bir::ActivationFunc::Gelu;
    case 2: return bir::ActivationFunc::Gelu_apprx_tanh;
    case 3: return bir::ActivationFunc::Gelu_apprx_sigmoid;
    default: return bir::ActivationFunc::Silu;
  }
}

}  // namespace walrus::kernels

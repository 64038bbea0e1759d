// The one exception hierarchy of neuronxsim's C++ core. Every error a user can cause (bad JSON,
// a module the hardware cannot run, a bad KLR file, an unknown kernel) is one of these, carries
// the location of the problem in its message, and is translated to a Python exception of the same
// name by the bindings (neuronxsim.errors). Nothing in the core aborts on bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace nxs {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nxs

namespace bir {

// A malformed or invalid BIR module: JSON syntax or schema, an unknown opcode or enum name, a
// verifier failure. The message starts with the JSON path of the offending element.
class BIRError : public nxs::Error {
 public:
  using nxs::Error::Error;
};

// Builds "path: message" (or just message when there is no path).
inline std::string located(const std::string& path, const std::string& msg) {
  return path.empty() ? msg : path + ": " + msg;
}

}  // namespace bir

namespace sim {
// The simulator refuses something the hardware cannot do, or its inputs do not fit the module.
class SimulationError : public nxs::Error {
 public:
  using nxs::Error::Error;
};
}  // namespace sim

namespace walrus {
// A kernel node cannot be resolved: unknown kernel name, attrs or shapes the leaf cannot take.
class KernelError : public nxs::Error {
 public:
  using nxs::Error::Error;
};
}  // namespace walrus

namespace klr {
// A KLR file is truncated, corrupt or of a kind that cannot be lowered.
class KLRError : public nxs::Error {
 public:
  using nxs::Error::Error;
};
}  // namespace klr

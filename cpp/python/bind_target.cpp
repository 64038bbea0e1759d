// Bindings of the target description (bir/MachineConfig.h) into `_core.bir`;
// neuronxsim.bir.target is the facade.
#include "bindings.h"
#include "bir/MachineConfig.h"

namespace nxs::py_bind {
namespace {

void bindTarget(py::module_& m) {
  m.def(
      "machine_config",
      [](const std::string& arch) {
        py::dict d;
        bir::machineConfig(arch).fields([&](const char* name, const auto& v) { d[name] = v; });
        return d;
      },
      py::arg("arch"), "Every field of bir::MachineConfig of the generation `arch`, by name.");
  m.def("canonical_arch", &bir::canonicalArch, py::arg("arch"),
        "The canonical name ('trn1', 'trn2') of any accepted name of a generation; '' when unknown.");
  m.def("known_archs", &bir::knownArchs, "The canonical names of the known generations, oldest first.");
  m.def("arch_aliases", &bir::archAliases, py::arg("arch"),
        "Every name accepted for the generation `arch`, canonical name first ([] when unknown).");
}

}  // namespace
NXS_REGISTER_SUBMODULE(bir, 12, "libBIR: opcodes, node classes, modules, BIR JSON", bindTarget);
}  // namespace nxs::py_bind

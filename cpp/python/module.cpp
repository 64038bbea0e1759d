// neuronxsim.starfish.lib._core: the compiled core. Thin by design; the readable API is the set
// of Python facades (neuronxsim.bir, neuronxsim.sim, ...) that import it.
#include "bindings.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "neuronxsim compiled core (use the neuronxsim.* facades)";
  nxs::py_bind::bindErrors(m);
  auto bir = m.def_submodule("bir", "libBIR: opcodes, node classes, modules, BIR JSON");
  nxs::py_bind::bindBir(bir);
}

// neuronxsim.starfish.lib._core: the compiled core. Thin by design; the readable API is the set
// of Python facades (neuronxsim.bir, neuronxsim.sim, ...) that import it.
#include <algorithm>

#include "bindings.h"

namespace nxs::py_bind {
std::vector<SubmoduleBinder>& submoduleBinders() {
  static std::vector<SubmoduleBinder> binders;
  return binders;
}
}  // namespace nxs::py_bind

PYBIND11_MODULE(_core, m) {
  using namespace nxs::py_bind;
  m.doc() = "neuronxsim compiled core (use the neuronxsim.* facades)";
  bindErrors(m);
  auto binders = submoduleBinders();
  std::stable_sort(binders.begin(), binders.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  // Several binders may fill one submodule (e.g. walrus: the resolvers and the IT54 leaves).
  for (const auto& b : binders) {
    py::module_ sub = py::hasattr(m, b.name) ? py::module_(m.attr(b.name)) : m.def_submodule(b.name, b.doc);
    b.bind(sub);
  }
}

#include "walrus/kernels/LeafRegistry.h"

#include <algorithm>
#include <map>

namespace walrus::kernels {

namespace {
std::map<std::string, Leaf>& registry() {
  static std::map<std::string, Leaf> leaves;
  return leaves;
}
}  // namespace

bool registerLeaf(const Leaf& leaf) { return registry().emplace(leaf.name, leaf).second; }

const Leaf* findLeaf(const std::string& kernel_name) {
  auto it = registry().find(kernel_name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<Leaf> leaves() {
  std::vector<Leaf> out;
  for (const auto& [name, leaf] : registry()) out.push_back(leaf);
  return out;
}

std::string knownLeafNames() {
  std::string s;
  for (const auto& [name, leaf] : registry()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

}  // namespace walrus::kernels

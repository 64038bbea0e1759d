// The byte layout of the node classes, as pinned by seed 000 and checked by static_assert in
// Layout.cpp: name -> offset ("Class.field") plus "sizeof(Class)" entries.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bir {
std::vector<std::pair<std::string, int64_t>> fieldOffsets();
}

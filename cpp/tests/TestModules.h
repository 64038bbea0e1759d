// Modules the C++ tests share.
#pragma once

#include "bir/Module.h"

namespace nxs_test {

// One node of every opcode, each with operands its node class accepts and with non-default
// field values where the class has fields, plus one tensor of each memory kind.
std::unique_ptr<bir::Module> buildEveryNodeModule();

}  // namespace nxs_test

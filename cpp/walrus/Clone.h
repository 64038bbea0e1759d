// Copies of BIR objects for splicing one function's code into another.
#pragma once

#include <memory>

#include "bir/Module.h"

namespace walrus {

// A deep copy of an instruction: same opcode, node fields, operands (pointing at the same memory
// locations), engine, source, kernel and extra fields; no parent; name unchanged.
std::unique_ptr<bir::Instruction> cloneInstruction(const bir::Instruction& I);

// A new allocation with the fields of `set` but no name and no locations.
std::unique_ptr<bir::MemoryLocationSet> cloneAllocationFields(const bir::MemoryLocationSet& set);

}  // namespace walrus

// Copies of BIR objects: instructions and allocations for splicing one function's code into
// another, and whole modules (the copy every pipeline stage makes before it changes a module).
#pragma once

#include <memory>

#include "bir/Module.h"

namespace walrus {

// A deep copy of an instruction: same opcode, node fields, operands (pointing at the same memory
// locations), engine, source, kernel and extra fields; no parent; name unchanged.
std::unique_ptr<bir::Instruction> cloneInstruction(const bir::Instruction& I);

// A new allocation with the fields of `set` but no name and no locations.
std::unique_ptr<bir::MemoryLocationSet> cloneAllocationFields(const bir::MemoryLocationSet& set);

// A deep copy of a module: every function with its attributes, allocations (new locations),
// blocks and instructions, in order, names and ids kept, operands rebound to the copy's own
// locations. The copy shares nothing with `m`; its JSON is byte-identical to `m`'s.
std::unique_ptr<bir::Module> cloneModule(const bir::Module& m);

}  // namespace walrus

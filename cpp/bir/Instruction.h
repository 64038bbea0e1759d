// bir::Instruction, the base of every BIR node, and LLVM-style isa<> / cast<> / dyn_cast<>.
//
// The base is exactly 0xF0 bytes (seed 000: InstBIRKernel::kernel_name and
// InstNKIKLIRKernel::klir_binary sit at +0xF0, the first bytes after the base), so the layout of
// the base is spelled out and static_asserted in Instruction.cpp. Node classes derive directly
// from Instruction, pass their ordinal to the base constructor as a literal, answer classof, and
// list their own fields once in a static `fields(visitor)` that the JSON serde and the Python
// bindings both walk.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "AccessPattern.h"
#include "Enums.h"
#include "InstructionType.h"

namespace bir {

class BasicBlock;

// The node class an opcode is built as (the NodeClass column of InstructionType.def).
enum class NodeClass : uint8_t {
#define BIR_NODE_CLASS(C) C,
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
};
NodeClass nodeClassOf(Opcode op);  // throws for an out-of-range ordinal
const char* nodeClassName(NodeClass c);
// nodeClassOf by ordinal: Instruction::nodeClass() is asked several times per instruction on the
// simulator's preparation path, an out-of-line switch each time cost about 100 machine
// instructions per BIR instruction.
inline constexpr NodeClass kNodeClassOfOpcode[] = {
#define BIR_OPCODE(Name, NC, Cat, Src) NodeClass::NC,
#include "InstructionType.def"
#undef BIR_OPCODE
};
static_assert(std::size(kNodeClassOfOpcode) == InstructionType::kCount);

// How many ins/outs a node class takes; checked by the verifier (operandRuleOf,
// KernelInstructions.h, where every node class is complete).
struct OperandRule {
  int min_ins, max_ins, min_outs, max_outs;
};

class Instruction {
 public:
  virtual ~Instruction();
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return type_; }
  const std::string& opcodeName() const { return InstructionType::string(type_); }
  NodeClass nodeClass() const { return kNodeClassOfOpcode[type_]; }  // type_ is valid (constructor)

  BasicBlock* parent() const { return parent_; }
  void setParent(BasicBlock* bb) { parent_ = bb; }

  // Kernel-node operand API (seed 000 section 6). Each appends one operand to ins (isOutput false)
  // or outs (isOutput true) and records how it was marshalled.
  AccessPattern& addSeqAccess(MemoryLocation* tensor, bool isOutput);
  AccessPattern& addOpaqueAP(MemoryLocation* tensor, bool isOutput);
  AccessPattern& addAP(const AccessPattern& tile, bool isOutput);
  // `reduce`: the kernel may reduce this output along its partition dim (seed 000: "reduce flag =
  // may reduce along partition dim"); outputs only.
  AccessPattern& addArgumentOrOutput(const AccessPattern& ap, bool isOutput, bool reduce = false);
  // A pattern over `tensor`: `offset` elements in, one [step, num] pair per accessed dim with the
  // partition dim's pair first (what the tile and sub-tensor builders compute), for an operand
  // shared by `lnc_size` NeuronCores of a logical core (LncSize(operand)).
  static AccessPattern createAP(MemoryLocation* tensor, int64_t offset,
                                const std::vector<APPair>& pattern,
                                const std::vector<int64_t>& access_shape, int64_t partition_dim,
                                int64_t lnc_size = 1);

  // ---- layout: +0x00 is the vtable pointer ----
  Opcode type_;                    // +0x08  ordinal, set once by the constructor
  Engine engine = Engine::Unassigned;  // +0x0A
  uint8_t reserved_flags_ = 0;     // +0x0B
  uint32_t reserved_u32_ = 0;      // +0x0C
  uint64_t id = 0;                 // +0x10  position-independent id, unique within a module
  std::string name;                // +0x18  unique within a function
  BasicBlock* parent_ = nullptr;   // +0x38
  std::vector<AccessPattern> ins;  // +0x40
  std::vector<AccessPattern> outs; // +0x58
  std::string source;              // +0x70  "file.py:LINE" of the kernel source that made it
  std::string kernel;              // +0x90  the kernel instance it was expanded from
  std::string extra_json;          // +0xB0  unknown JSON fields, kept verbatim ("{...}" or "")
  // +0xD0: reserved so that sizeof stays at the pinned 0xF0 and subclass fields start at 0xF0;
  // new base fields take these bytes first.
  std::array<uint64_t, 4> reserved_{};

 protected:
  Instruction(std::string name, BasicBlock* bb, Opcode type);
};

// Builds the node class InstructionType.def names for `op`.
std::unique_ptr<Instruction> createInstruction(Opcode op, std::string name = {},
                                               BasicBlock* bb = nullptr);

template <class T>
bool isa(const Instruction* I) {
  return I && T::classof(I);
}
template <class T>
T* dyn_cast(Instruction* I) {
  return isa<T>(I) ? static_cast<T*>(I) : nullptr;
}
template <class T>
const T* dyn_cast(const Instruction* I) {
  return isa<T>(I) ? static_cast<const T*>(I) : nullptr;
}
template <class T>
T* cast(Instruction* I) {
  return static_cast<T*>(I);
}
template <class T>
const T* cast(const Instruction* I) {
  return static_cast<const T*>(I);
}

}  // namespace bir

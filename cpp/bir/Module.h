// Module -> Function -> BasicBlock -> Instruction, the BIR containers.
//
// A module holds one function per NeuronCore (functions[NeuronCoreId], seed 000); a function owns
// its allocations (the tensors its instructions address) and its blocks; a block owns its
// instructions in program order. Names of tensors and instructions are unique per function.
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "KernelInstructions.h"
#include "MachineConfig.h"
#include "Memory.h"
#include "NameTable.h"

namespace bir {

class Function;

class BasicBlock {
 public:
  BasicBlock(std::string name, Function* parent) : name(std::move(name)), parent_(parent) {}
  BasicBlock(const BasicBlock&) = delete;
  BasicBlock& operator=(const BasicBlock&) = delete;

  std::string name;
  Function* parent() const { return parent_; }

  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return insts_; }
  size_t size() const { return insts_.size(); }
  Instruction* at(size_t i) const { return insts_.at(i).get(); }

  // Appends a new node of the class the opcode table names; an empty name gets a unique one.
  Instruction* addInstruction(Opcode op, std::string name = {});
  // Appends an already built node (takes ownership; renames it if its name is taken).
  Instruction* append(std::unique_ptr<Instruction> inst);
  // Room for `n` instructions in all (a builder that knows its count appends without regrowing).
  void reserve(size_t n) { insts_.reserve(n); }
  // Replaces the instruction at `index` with `replacement` (in order); returns the count inserted.
  size_t replace(size_t index, std::vector<std::unique_ptr<Instruction>> replacement);
  // Index of `inst` in this block, or -1.
  int64_t indexOf(const Instruction* inst) const;
  // The index `inst` had before this block's replace calls (the resolvers' expansions, each of
  // which shifts the instructions after its node, pass after pass): its index in the module as
  // it was given, which errors name. -1 when absent or made by a replacement.
  int64_t inputIndexOf(const Instruction* inst) const;
  // Puts the instructions in the order `order` names: order[k] is the current index of the k-th
  // (a permutation of 0..size()-1; anything else throws BIRError). Indices before it are not kept.
  void permute(const std::vector<uint32_t>& order);

 private:
  Function* parent_;
  std::vector<std::unique_ptr<Instruction>> insts_;
  // (index, count) of each replace call, in order, so that inputIndexOf can undo their shifts.
  std::vector<std::pair<size_t, size_t>> replacements_;
};

class Module;

class Function {
 public:
  Function(std::string name, Module* parent) : name(std::move(name)), parent_(parent) {}
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  std::string name;
  std::vector<std::string> attributes;
  std::string extra_json;
  Module* parent() const { return parent_; }

  const std::vector<std::unique_ptr<MemoryLocationSet>>& allocations() const { return allocs_; }
  const std::vector<std::unique_ptr<BasicBlock>>& blocks() const { return blocks_; }
  BasicBlock* addBlock(std::string name = {});

  // A tensor in DRAM (type Input, Output or DRAM) of the given shape.
  MemoryLocation* createDramTensor(const std::string& name, MemoryType type, DType dtype,
                                   const std::vector<int64_t>& shape,
                                   TensorKind kind = TensorKind::Internal);
  // An on-chip tensor (SB or PSUM): `partitions` rows of `bytes_per_partition` bytes placed at
  // partition `base_partition`, byte `addr`.
  // (`name` and `shape` by value: a caller that builds them for the call moves them in.)
  MemoryLocation* createOnChipTensor(std::string name, MemoryType type, DType dtype,
                                     int64_t partitions, int64_t bytes_per_partition,
                                     int64_t base_partition, int64_t addr,
                                     std::vector<int64_t> shape = {});
  // Takes ownership of a fully built allocation (the JSON reader's path, and makeOnChipTensor's).
  MemoryLocationSet* addAllocation(std::unique_ptr<MemoryLocationSet> set);

  MemoryLocation* findLocation(const std::string& name) const;
  MemoryLocationSet* findAllocation(const std::string& name) const;
  // A name not yet used by any tensor, from `base`.
  std::string uniqueTensorName(const std::string& base) const;
  // A name not yet used by any instruction, from `base`; reserves it.
  std::string uniqueInstructionName(const std::string& base);
  // The same from the opcode's name (an unnamed node's): once that name is known taken, straight
  // to the numbered names, without asking the table for it again (it fails for every node of
  // the opcode but the first).
  std::string uniqueInstructionName(Opcode op);
  void registerInstructionName(const std::string& name);
  bool hasInstructionName(const std::string& name) const;
  void forgetInstructionName(const std::string& name);

  uint64_t nextInstructionId();
  size_t instructionCount() const;
  // Room for `tensors` tensors and `instructions` instruction names in all: the name tables
  // then take a whole trace's names without rebuilding, which moved every name again each time
  // they doubled (a trace's emission builds thousands at once).
  void reserve(size_t tensors, size_t instructions);

 private:
  Module* parent_;
  std::vector<std::unique_ptr<MemoryLocationSet>> allocs_;
  std::vector<std::unique_ptr<BasicBlock>> blocks_;
  NameTable<MemoryLocation*> locByName_;
  NameTable<MemoryLocationSet*> setByName_;
  NameTable<char> instNames_;  // the instruction names in use (the value is unused)
  // Per opcode: its name is in instNames_ (set when asked for it; all cleared when any name is
  // forgotten, as that name may be an opcode's).
  std::bitset<InstructionType::kCount> opcodeNameTaken_;
  uint64_t nameCounter_ = 0;
  std::string numberedInstructionName(const std::string& base);
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The BIR JSON "version" this build reads and writes, and our own format revision for the
  // fields the public schema lacks (IT56 carrier, operand flavours, source lines).
  static constexpr int64_t kBirVersion = 2;
  static constexpr int64_t kFormatVersion = 1;

  int64_t neuron_core_id = 0;
  std::string arch = kDefaultBirArch;  // a BIR name of the target description ("gen2", "gen3")
  std::string extra_json;             // unknown top-level fields, verbatim
  std::string attributes_extra_json;  // unknown fields of "attributes", verbatim
  // Where the module's file references (IT55 compiled kernels, IT56 KLR / BIR JSON files) resolve:
  // the folder it was loaded from or lowered into; empty = the working directory. Not part of the
  // BIR JSON: it is where this copy of the module lives, not what the module says.
  std::string files_dir;

  Function* addFunction(std::string name = {});
  const std::vector<std::unique_ptr<Function>>& functions() const { return funcs_; }
  // functions[NeuronCoreId]; throws BIRError when absent.
  Function* function(int64_t neuron_core_id) const;

  uint64_t nextInstructionId() { return nextId_++; }
  void reserveInstructionId(uint64_t id) {
    if (id >= nextId_) nextId_ = id + 1;
  }

 private:
  std::vector<std::unique_ptr<Function>> funcs_;
  uint64_t nextId_ = 0;
};

// The allocation createOnChipTensor adds, built without adding it (so a pass can stage tensors
// and commit them later with Function::addAllocation): one location named `name` in the set
// `name + "_set"`; an empty `shape` means [partitions, bytes_per_partition / dtype size].
std::unique_ptr<MemoryLocationSet> makeOnChipTensor(std::string name, MemoryType type, DType dtype,
                                                    int64_t partitions, int64_t bytes_per_partition,
                                                    int64_t base_partition, int64_t addr,
                                                    std::vector<int64_t> shape = {});

}  // namespace bir

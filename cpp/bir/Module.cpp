#include "Module.h"

#include <charconv>
#include <cstdio>

#include "Error.h"
#include "MachineConfig.h"

namespace bir {

// ---- BasicBlock ----

Instruction* BasicBlock::addInstruction(Opcode op, std::string n) {
  return append(createInstruction(op, std::move(n), this));
}

Instruction* BasicBlock::append(std::unique_ptr<Instruction> inst) {
  if (!inst) throw BIRError("BasicBlock::append: null instruction");
  if (parent_) {
    // (the base is the node's own name, read in place: no copy of it, or its opcode's)
    inst->name = inst->name.empty() ? parent_->uniqueInstructionName(inst->opcode())
                                    : parent_->uniqueInstructionName(inst->name);
    inst->id = parent_->nextInstructionId();
  }
  inst->setParent(this);
  insts_.push_back(std::move(inst));
  return insts_.back().get();
}

size_t BasicBlock::replace(size_t index, std::vector<std::unique_ptr<Instruction>> replacement) {
  if (index >= insts_.size()) throw BIRError("BasicBlock::replace: index out of range");
  if (parent_) parent_->forgetInstructionName(insts_[index]->name);
  for (auto& inst : replacement) {
    if (parent_) {
      const std::string base = inst->name.empty() ? inst->opcodeName() : inst->name;
      inst->name = parent_->uniqueInstructionName(base);
      inst->id = parent_->nextInstructionId();
    }
    inst->setParent(this);
  }
  const size_t n = replacement.size();
  insts_.erase(insts_.begin() + static_cast<std::ptrdiff_t>(index));
  insts_.insert(insts_.begin() + static_cast<std::ptrdiff_t>(index),
                std::make_move_iterator(replacement.begin()),
                std::make_move_iterator(replacement.end()));
  replacements_.emplace_back(index, n);
  return n;
}

void BasicBlock::permute(const std::vector<uint32_t>& order) {
  if (order.size() != insts_.size()) throw BIRError("BasicBlock::permute: not a permutation of the block");
  std::vector<char> seen(insts_.size(), 0);
  std::vector<std::unique_ptr<Instruction>> next;
  next.reserve(insts_.size());
  for (uint32_t k : order) {
    if (k >= insts_.size() || seen[k]) throw BIRError("BasicBlock::permute: not a permutation of the block");
    seen[k] = 1;
    next.push_back(std::move(insts_[k]));
  }
  insts_ = std::move(next);
  replacements_.clear();
}

int64_t BasicBlock::indexOf(const Instruction* inst) const {
  for (size_t i = 0; i < insts_.size(); ++i)
    if (insts_[i].get() == inst) return static_cast<int64_t>(i);
  return -1;
}

int64_t BasicBlock::inputIndexOf(const Instruction* inst) const {
  int64_t at = indexOf(inst);
  for (auto r = replacements_.rbegin(); at >= 0 && r != replacements_.rend(); ++r) {
    const auto [index, count] = *r;
    if (static_cast<size_t>(at) >= index + count)
      at -= static_cast<int64_t>(count) - 1;  // after the replaced node: back by what it became
    else if (static_cast<size_t>(at) >= index)
      at = -1;  // one of the replacement's own
  }
  return at;
}

// ---- Function ----

BasicBlock* Function::addBlock(std::string n) {
  if (n.empty()) n = "bb" + std::to_string(blocks_.size());
  blocks_.push_back(std::make_unique<BasicBlock>(std::move(n), this));
  return blocks_.back().get();
}

MemoryLocationSet* Function::addAllocation(std::unique_ptr<MemoryLocationSet> set) {
  // Each name is hashed once: inserted if new, and the insertions taken back on a clash (the
  // checks come in the same order as the messages say: the set first, then its locations).
  if (!setByName_.tryEmplace(set->name, set.get()).second)
    throw BIRError("allocation '" + set->name + "' is defined twice");
  for (size_t i = 0; i < set->locations.size(); ++i) {
    MemoryLocation* loc = set->locations[i].get();
    auto [at, added] = locByName_.tryEmplace(loc->name, loc);
    if (added) continue;
    bool ours = false;  // a name twice in this set: the later location is the one found by name
    for (size_t k = 0; k < i; ++k) ours = ours || *at == set->locations[k].get();
    if (ours) {
      *at = loc;
    } else {
      for (size_t k = 0; k < i; ++k) {
        MemoryLocation** mine = locByName_.find(set->locations[k]->name);
        if (mine && *mine == set->locations[k].get()) locByName_.erase(set->locations[k]->name);
      }
      setByName_.erase(set->name);
      throw BIRError("memory location '" + loc->name + "' is defined twice");
    }
  }
  for (auto& loc : set->locations) loc->set = set.get();
  allocs_.push_back(std::move(set));
  return allocs_.back().get();
}

MemoryLocation* Function::createDramTensor(const std::string& n, MemoryType type, DType dtype,
                                           const std::vector<int64_t>& shape, TensorKind kind) {
  if (type != MemoryType::Input && type != MemoryType::Output && type != MemoryType::DRAM)
    throw BIRError("createDramTensor '" + n + "': memory type must be Input, Output or DRAM");
  int64_t elems = 1;
  for (int64_t d : shape) {
    if (d < 0) throw BIRError("createDramTensor '" + n + "': negative dimension");
    elems *= d;
  }
  auto set = std::make_unique<MemoryLocationSet>();
  set->name = n + "_set";
  set->dtype = dtype;
  set->tensor_shape = shape;
  set->kind = kind;
  set->addr_space = AddrSpace::Shared;
  auto loc = std::make_unique<MemoryLocation>();
  loc->name = n;
  loc->type = type;
  loc->partitions = 1;
  loc->bytes_per_partition = elems * dtypeSize(dtype);
  set->locations.push_back(std::move(loc));
  return addAllocation(std::move(set))->location();
}

std::unique_ptr<MemoryLocationSet> makeOnChipTensor(std::string n, MemoryType type, DType dtype,
                                                    int64_t partitions, int64_t bytes_per_partition,
                                                    int64_t base_partition, int64_t addr,
                                                    std::vector<int64_t> shape) {
  if (type != MemoryType::SB && type != MemoryType::PSUM)
    throw BIRError("createOnChipTensor '" + n + "': memory type must be SB or PSUM");
  auto set = std::make_unique<MemoryLocationSet>();
  set->name.reserve(n.size() + 4);  // (built in place: no temporary)
  set->name.append(n).append("_set");
  set->dtype = dtype;
  set->tensor_shape =
      shape.empty() ? std::vector<int64_t>{partitions, bytes_per_partition / dtypeSize(dtype)}
                    : std::move(shape);
  auto loc = std::make_unique<MemoryLocation>();
  loc->name = std::move(n);
  loc->type = type;
  loc->partitions = partitions;
  loc->bytes_per_partition = bytes_per_partition;
  loc->base_partition = base_partition;
  loc->addr = addr;
  if (type == MemoryType::PSUM) loc->bank = addr / UniformConfig::kPsumBankBytes;
  loc->set = set.get();
  set->locations.push_back(std::move(loc));
  return set;
}

MemoryLocation* Function::createOnChipTensor(std::string n, MemoryType type, DType dtype,
                                             int64_t partitions, int64_t bytes_per_partition,
                                             int64_t base_partition, int64_t addr,
                                             std::vector<int64_t> shape) {
  return addAllocation(
             makeOnChipTensor(std::move(n), type, dtype, partitions, bytes_per_partition, base_partition, addr, std::move(shape)))
      ->location();
}

MemoryLocation* Function::findLocation(const std::string& n) const {
  MemoryLocation* const* at = locByName_.find(n);
  return at ? *at : nullptr;
}

MemoryLocationSet* Function::findAllocation(const std::string& n) const {
  MemoryLocationSet* const* at = setByName_.find(n);
  return at ? *at : nullptr;
}

std::string Function::uniqueTensorName(const std::string& base) const {
  if (!locByName_.contains(base) && !setByName_.contains(base + "_set")) return base;
  for (uint64_t i = 1;; ++i) {
    std::string n = base + "." + std::to_string(i);
    if (!locByName_.contains(n) && !setByName_.contains(n + "_set")) return n;
  }
}

std::string Function::uniqueInstructionName(const std::string& base) {
  // (one hash per name tried: tryEmplace both asks and reserves)
  if (instNames_.tryEmplace(base, 0).second) return base;
  return numberedInstructionName(base);
}

std::string Function::uniqueInstructionName(Opcode op) {
  const std::string& base = InstructionType::string(op);
  const auto taken = static_cast<size_t>(op);
  if (opcodeNameTaken_[taken]) return numberedInstructionName(base);
  std::string name = uniqueInstructionName(base);
  opcodeNameTaken_[taken] = true;  // (by this node, or by an earlier one)
  return name;
}

// "base.N" for the first N of the function's counter that makes an unused name; reserves it.
std::string Function::numberedInstructionName(const std::string& base) {
  for (;;) {
    char digits[24];  // "base.N" built in one string (an emitter names thousands of nodes so)
    const auto length = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, ++nameCounter_).ptr - digits);
    std::string n;
    n.reserve(base.size() + 1 + length);
    n.append(base).append(1, '.').append(digits, length);
    if (instNames_.tryEmplace(n, 0).second) return n;
  }
}

void Function::registerInstructionName(const std::string& n) {
  if (!instNames_.tryEmplace(n, 0).second) throw BIRError("instruction name '" + n + "' is used twice");
}

bool Function::hasInstructionName(const std::string& n) const { return instNames_.contains(n); }

void Function::forgetInstructionName(const std::string& n) {
  instNames_.erase(n);
  opcodeNameTaken_.reset();
}

uint64_t Function::nextInstructionId() { return parent_ ? parent_->nextInstructionId() : 0; }

void Function::reserve(size_t tensors, size_t instructions) {
  locByName_.reserve(tensors);
  setByName_.reserve(tensors);
  allocs_.reserve(tensors);
  instNames_.reserve(instructions);
}

size_t Function::instructionCount() const {
  size_t n = 0;
  for (const auto& b : blocks_) n += b->size();
  return n;
}

// ---- Module ----

Function* Module::addFunction(std::string n) {
  if (n.empty()) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "sg%04zu", funcs_.size());
    n = buf;
  }
  funcs_.push_back(std::make_unique<Function>(std::move(n), this));
  return funcs_.back().get();
}

Function* Module::function(int64_t core) const {
  if (core < 0 || core >= static_cast<int64_t>(funcs_.size()))
    throw BIRError("functions[" + std::to_string(core) + "]: the module has " +
                   std::to_string(funcs_.size()) + " function(s)");
  return funcs_[static_cast<size_t>(core)].get();
}

}  // namespace bir

#include "walrus/Clone.h"

#include <unordered_map>

#include "bir/Error.h"
#include "bir/VisitNode.h"

namespace walrus {

std::unique_ptr<bir::Instruction> cloneInstruction(const bir::Instruction& I) {
  std::unique_ptr<bir::Instruction> copy = bir::createInstruction(I.opcode(), I.name);
  copy->engine = I.engine;
  copy->reserved_flags_ = I.reserved_flags_;
  copy->reserved_u32_ = I.reserved_u32_;
  copy->ins = I.ins;
  copy->outs = I.outs;
  copy->source = I.source;
  copy->kernel = I.kernel;
  copy->extra_json = I.extra_json;
  visitNode(I, [&](const auto& src) {
    using T = std::remove_cvref_t<decltype(src)>;
    auto& dst = static_cast<T&>(*copy);
    T::fields([&](const char*, auto member) { dst.*member = src.*member; });
  });
  return copy;
}

std::unique_ptr<bir::MemoryLocationSet> cloneAllocationFields(const bir::MemoryLocationSet& set) {
  auto copy = std::make_unique<bir::MemoryLocationSet>();
  copy->addr_space = set.addr_space;
  copy->dtype = set.dtype;
  copy->partition_dim = set.partition_dim;
  copy->tensor_shape = set.tensor_shape;
  copy->file = set.file;
  copy->no_spill = set.no_spill;
  copy->is_volatile = set.is_volatile;
  copy->is_virtual = set.is_virtual;
  copy->kind = set.kind;
  copy->tensor_class = set.tensor_class;
  copy->extra_json = set.extra_json;
  return copy;
}

namespace {

using LocationMap = std::unordered_map<const bir::MemoryLocation*, bir::MemoryLocation*>;

void rebind(std::vector<bir::AccessPattern>& operands, const LocationMap& locations) {
  for (bir::AccessPattern& ap : operands) {
    if (!ap.loc) continue;
    auto it = locations.find(ap.loc);
    if (it == locations.end())  // the verifier refuses such modules; a clone must not alias them
      throw bir::BIRError("clone: an operand addresses memory location '" + ap.loc->name +
                          "', which is not an allocation of its function");
    ap.loc = it->second;
  }
}

}  // namespace

std::unique_ptr<bir::Module> cloneModule(const bir::Module& m) {
  auto copy = std::make_unique<bir::Module>();
  copy->neuron_core_id = m.neuron_core_id;
  copy->arch = m.arch;
  copy->extra_json = m.extra_json;
  copy->attributes_extra_json = m.attributes_extra_json;
  copy->files_dir = m.files_dir;
  uint64_t maxId = 0;
  bool anyInstruction = false;
  for (const auto& f : m.functions()) {
    bir::Function& g = *copy->addFunction(f->name);
    g.attributes = f->attributes;
    g.extra_json = f->extra_json;
    LocationMap locations;
    for (const auto& set : f->allocations()) {
      auto s = cloneAllocationFields(*set);
      s->name = set->name;
      for (const auto& loc : set->locations) {
        s->locations.push_back(std::make_unique<bir::MemoryLocation>(*loc));
        locations[loc.get()] = s->locations.back().get();
      }
      g.addAllocation(std::move(s));
    }
    for (const auto& block : f->blocks()) {
      bir::BasicBlock& b = *g.addBlock(block->name);
      for (const auto& inst : block->instructions()) {
        auto c = cloneInstruction(*inst);
        rebind(c->ins, locations);
        rebind(c->outs, locations);
        bir::Instruction* added = b.append(std::move(c));  // registers the (free) name
        added->id = inst->id;
        maxId = std::max(maxId, inst->id);
        anyInstruction = true;
      }
    }
  }
  if (anyInstruction) copy->reserveInstructionId(maxId);
  return copy;
}

}  // namespace walrus

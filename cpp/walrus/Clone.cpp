#include "walrus/Clone.h"

#include "walrus/VisitNode.h"

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

}  // namespace walrus

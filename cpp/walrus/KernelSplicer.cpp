#include "walrus/KernelSplicer.h"

#include <unordered_set>

#include "bir/Error.h"
#include "bir/View.h"
#include "walrus/Clone.h"
#include "walrus/OperandLayout.h"

namespace walrus {
namespace {

using bir::AccessPattern;
using bir::MemoryLocation;

// "bfloat16[128, 512]"
std::string typedShapeText(bir::DType dtype, const std::vector<int64_t>& shape) {
  return std::string(bir::enumName(dtype)) + bir::shapeText(shape);
}

std::vector<int64_t> withoutOnes(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1) out.push_back(d);
  return out;
}

// The shape an operand gives the kernel tensor: the accessed region a tile or sub-tensor builder
// recorded, else the pattern's nums.
std::vector<int64_t> operandShape(const AccessPattern& op) {
  if (!op.accessShape().empty()) return op.accessShape();
  std::vector<int64_t> s;
  for (const auto& p : op.pattern) s.push_back(p.num);
  return s;
}

}  // namespace

struct KernelSplicer::Binding {
  const MemoryLocation* kernel_tensor;
  AccessPattern operand;
  OperandLayout layout;
  std::string operand_name;  // "ins[0]" ...
};

KernelSplicer::KernelSplicer(bir::Function& host, SpliceRequest request)
    : host_(host), r_(std::move(request)) {}

KernelSplicer::~KernelSplicer() = default;

void KernelSplicer::bind(const std::string& name, const AccessPattern& operand,
                         const std::string& side) {
  const bir::Function& k = *r_.kernel;
  const MemoryLocation* t = k.findLocation(name);
  if (!t || !t->isDram())
    throw KernelError(r_.where + ": the kernel has no DRAM tensor '" + name + "' to bind " + side +
                      " to");
  for (const auto& b : bindings_)
    if (b->kernel_tensor == t)
      throw KernelError(r_.where + ": kernel tensor '" + name + "' is bound twice (" +
                        b->operand_name + " and " + side + ")");
  if (operand.isImmediate() || !operand.loc || !operand.loc->isDram())
    throw KernelError(r_.where + ": " + side + " must be a DRAM tensor to bind kernel tensor '" +
                      name + "'");
  const auto& kshape = t->set->tensor_shape;
  const std::vector<int64_t> oshape = operandShape(operand);
  if (operand.dtype != t->set->dtype || withoutOnes(oshape) != withoutOnes(kshape))
    throw KernelError(r_.where + ": kernel tensor '" + name + "' is " +
                      typedShapeText(t->set->dtype, kshape) + " but " + side + " ('" +
                      operand.loc->name + "') is " + typedShapeText(operand.dtype, oshape));
  auto b = std::make_unique<Binding>(Binding{t, operand, OperandLayout(operand), side});
  const int64_t kernelElements = t->sizeBytes() / bir::dtypeSize(t->set->dtype);
  if (b->layout.elements() != kernelElements)
    throw KernelError(r_.where + ": kernel tensor '" + name + "' holds " +
                      std::to_string(kernelElements) + " elements but " + side + " addresses " +
                      std::to_string(b->layout.elements()));
  bindings_.push_back(std::move(b));
}

void KernelSplicer::checkAllInterfaceTensorsBound() const {
  for (const auto& set : r_.kernel->allocations())
    for (const auto& loc : set->locations) {
      if (loc->type != bir::MemoryType::Input && loc->type != bir::MemoryType::Output) continue;
      bool bound = false;
      for (const auto& b : bindings_) bound = bound || b->kernel_tensor == loc.get();
      if (!bound)
        throw KernelError(r_.where + ": kernel " +
                          (loc->type == bir::MemoryType::Input ? "input" : "output") + " '" +
                          loc->name + "' is not bound by the node's " +
                          (loc->type == bir::MemoryType::Input ? "func_args" : "func_outs"));
    }
}

void KernelSplicer::checkOnChipTensorsInsideNodeBuffers() const {
  for (const auto& set : r_.kernel->allocations())
    for (const auto& loc : set->locations) {
      if (!loc->isOnChip()) continue;
      const bool sbuf = loc->type == bir::MemoryType::SB;
      requireInsideNodeBuffer(sbuf ? "SBUF" : "PSUM", loc->addr, loc->bytes_per_partition,
                              sbuf ? r_.buffers.sbuf_bytes : r_.buffers.psumBytes(),
                              r_.where + ": kernel tensor '" + loc->name + "'");
    }
}

AccessPattern KernelSplicer::rewrite(const AccessPattern& ap, const bir::Instruction& I,
                                     const std::string& operand) const {
  if (ap.isImmediate()) return ap;
  for (const auto& b : bindings_) {
    if (b->kernel_tensor != ap.loc) continue;
    if (bir::dtypeSize(ap.dtype) != bir::dtypeSize(b->kernel_tensor->set->dtype))
      throw KernelError(r_.where + ": kernel instruction '" + I.name + "' " + operand +
                        " reads bound tensor '" + ap.loc->name + "' as " +
                        std::string(bir::enumName(ap.dtype)) + ", another element size");
    std::string why;
    std::optional<AccessPattern> out = b->layout.rebase(ap, &why);
    if (!out)
      throw KernelError(r_.where + ": kernel instruction '" + I.name + "' " + operand +
                        " cannot be rebased onto " + b->operand_name + " ('" +
                        b->operand.loc->name + "'): " + why +
                        "; bind a contiguous tensor instead");
    return *out;
  }
  return ap;  // a kernel-internal tensor: repointed to its host copy once that exists
}

void KernelSplicer::copyInternalTensors() {
  std::unordered_set<std::string> taken;  // names given to locations of one new set
  for (const auto& set : r_.kernel->allocations()) {
    bool bound = false;
    for (const auto& loc : set->locations)
      for (const auto& b : bindings_) bound = bound || b->kernel_tensor == loc.get();
    if (bound) continue;
    auto copy = cloneAllocationFields(*set);
    taken.clear();
    for (const auto& loc : set->locations) {
      auto l = std::make_unique<MemoryLocation>(*loc);
      std::string name = host_.uniqueTensorName(r_.node_name + "/" + loc->name);
      for (int i = 1; taken.count(name); ++i)
        name = host_.uniqueTensorName(r_.node_name + "/" + loc->name + "." + std::to_string(i));
      taken.insert(name);
      l->name = name;
      l->set = nullptr;
      copies_[loc.get()] = l.get();
      copy->locations.push_back(std::move(l));
    }
    copy->name = copy->locations.empty() ? host_.uniqueTensorName(r_.node_name + "/" + set->name)
                                         : copy->locations.front()->name + "_set";
    host_.addAllocation(std::move(copy));
  }
}

std::vector<std::unique_ptr<bir::Instruction>> KernelSplicer::run() {
  if (r_.func_args.size() != r_.ins.size() || r_.func_outs.size() != r_.outs.size())
    throw KernelError(r_.where + ": the node has " + std::to_string(r_.ins.size()) + " input(s) and " +
                      std::to_string(r_.outs.size()) + " output(s) but func_args names " +
                      std::to_string(r_.func_args.size()) + " and func_outs " +
                      std::to_string(r_.func_outs.size()) + " kernel tensor(s)");
  for (size_t i = 0; i < r_.ins.size(); ++i) bind(r_.func_args[i], r_.ins[i], "ins[" + std::to_string(i) + "]");
  for (size_t j = 0; j < r_.outs.size(); ++j)
    bind(r_.func_outs[j], r_.outs[j], "outs[" + std::to_string(j) + "]");
  checkAllInterfaceTensorsBound();
  checkOnChipTensorsInsideNodeBuffers();

  // Rewrite everything that can fail before the host changes.
  std::vector<std::unique_ptr<bir::Instruction>> out;
  for (const auto& bb : r_.kernel->blocks())
    for (const auto& I : bb->instructions()) {
      auto copy = cloneInstruction(*I);
      for (size_t k = 0; k < copy->ins.size(); ++k)
        copy->ins[k] = rewrite(copy->ins[k], *I, "ins[" + std::to_string(k) + "]");
      for (size_t k = 0; k < copy->outs.size(); ++k)
        copy->outs[k] = rewrite(copy->outs[k], *I, "outs[" + std::to_string(k) + "]");
      copy->name = r_.node_name + "/" + I->name;
      copy->kernel = r_.node_name;
      out.push_back(std::move(copy));
    }

  copyInternalTensors();
  for (auto& I : out)
    for (auto* list : {&I->ins, &I->outs})
      for (AccessPattern& ap : *list)
        if (auto it = copies_.find(ap.loc); it != copies_.end()) ap.loc = it->second;
  return out;
}

}  // namespace walrus

#include "walrus/BIRKernelWrapper.h"

#include <ostream>

#include "bir/Error.h"
#include "walrus/SpliceKernelNode.h"
#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"

namespace walrus {

using namespace bir;

void Logger::log(Level level, std::string message) {
  if (sink_ && level >= threshold_) *sink_ << "walrus: " << message << "\n";
  entries_.push_back({level, std::move(message)});
}

namespace {

// The node's srcs_shape / dsts_shape, when given, must be what its operands address.
void checkOperandShapes(const InstBIRKernel& node) {
  auto side = [](const std::vector<AccessPattern>& aps, const ShapeList& shapes, const char* name, const char* field) {
    if (shapes.empty()) return;
    if (shapes.size() != aps.size())
      throw KernelError(std::string(field) + " lists " + std::to_string(shapes.size()) + " shapes for " +
                        std::to_string(aps.size()) + " " + name);
    for (size_t i = 0; i < aps.size(); ++i) {
      const std::string what = std::string(name) + "[" + std::to_string(i) + "]";
      const auto shape = kernels::DramView::ofOperand(aps[i], what).shape();
      if (shape != shapes[i])
        throw KernelError(what + " addresses " + shapeText(shape) + " but " + field + "[" + std::to_string(i) +
                          "] says " + shapeText(shapes[i]));
    }
  };
  side(node.ins, node.srcs_shape, "ins", "srcs_shape");
  side(node.outs, node.dsts_shape, "outs", "dsts_shape");
}

}  // namespace

std::string BIRKernelWrapper::describe(const InstBIRKernel& node, const BasicBlock* bb) {
  std::string where;
  const Function* f = bb ? bb->parent() : nullptr;
  const Module* m = f ? f->parent() : nullptr;
  if (f && m) {
    for (size_t fi = 0; fi < m->functions().size(); ++fi)
      if (m->functions()[fi].get() == f) where = "functions[" + std::to_string(fi) + "]";
    const int64_t given = bb->inputIndexOf(&node);  // (a node an expansion made: where it is now)
    for (size_t bi = 0; bi < f->blocks().size(); ++bi)
      if (f->blocks()[bi].get() == bb)
        where += ".blocks[" + std::to_string(bi) + "].instructions[" +
                 std::to_string(given >= 0 ? given : bb->indexOf(&node)) + "] ";
  }
  return where + "InstBIRKernel '" + node.name + "' (kernel '" + node.kernel_name + "')";
}

std::unique_ptr<BIRKernelWrapper> BIRKernelWrapper::createInstance(Logger& logger, InstBIRKernel* node,
                                                                    BasicBlock* bb, bool verify,
                                                                    size_t maxInstructions) {
  if (!node) throw KernelError("BIRKernelWrapper::createInstance: no node");
  if (!bb || bb->indexOf(node) < 0 || !bb->parent())
    throw KernelError(describe(*node, nullptr) + ": not an instruction of the given block of a function");
  const std::string where = describe(*node, bb);
  const kernels::Leaf* leaf = kernels::findLeaf(node->kernel_name);
  if (!leaf)
    throw KernelError(where + ": unknown kernel_name '" + node->kernel_name + "'; known: " + kernels::knownLeafNames());
  std::unique_ptr<BIRKernelWrapper> w(new BIRKernelWrapper());
  w->node_ = node;
  w->bb_ = bb;
  requireOneCoreOperands(*node, where);
  try {
    checkOperandShapes(*node);
    kernels::KernelBuilder kb(*node, *bb->parent(), verify, maxInstructions);
    leaf->expand(kb);
    kb.attrs().finish();
    w->stats_.sbuf_bytes = kb.sbufHighWater();
    w->stats_.psum_banks = kb.psumBanksUsed();
    w->code_ = kb.takeCode();
    w->tensors_ = kb.takeTensors();
  } catch (const KernelError& e) {
    throw KernelError(where + ": " + e.what());
  } catch (const BIRError& e) {
    throw KernelError(where + ": " + e.what());
  }
  ExpansionStats& s = w->stats_;
  s.node = node->name;
  s.kernel_name = node->kernel_name;
  s.instructions = w->code_.size();
  s.tensors = w->tensors_.size();
  for (const auto& I : w->code_) {
    if (I->nodeClass() == NodeClass::DMA)
      ++s.dmas;
    else
      ++s.per_engine[static_cast<size_t>(I->engine)];
  }
  logger.info(where + ": " + std::to_string(s.instructions) + " instructions (PE " +
              std::to_string(s.per_engine[static_cast<size_t>(Engine::PE)]) + ", ACT " +
              std::to_string(s.per_engine[static_cast<size_t>(Engine::Activation)]) + ", DVE " +
              std::to_string(s.per_engine[static_cast<size_t>(Engine::DVE)]) + ", Pool " +
              std::to_string(s.per_engine[static_cast<size_t>(Engine::Pool)]) + ", DMA " +
              std::to_string(s.dmas) + "), SBUF " +
              std::to_string(s.sbuf_bytes) + " B/partition, PSUM " + std::to_string(s.psum_banks) + " banks");
  return w;
}

BIRKernelWrapper::~BIRKernelWrapper() = default;

size_t BIRKernelWrapper::inlineInPlace() {
  if (inlined_) throw KernelError("InstBIRKernel '" + stats_.node + "' is already inlined");
  const int64_t index = bb_->indexOf(node_);
  if (index < 0) throw KernelError("InstBIRKernel '" + node_->name + "' is no longer in its block");
  Function& f = *bb_->parent();
  for (auto& set : tensors_) f.addAllocation(std::move(set));
  tensors_.clear();
  const std::string kernel = node_->name;
  for (auto& I : code_) I->kernel = kernel;
  inlined_ = true;
  node_ = nullptr;  // replace() destroys it
  return bb_->replace(static_cast<size_t>(index), std::move(code_));
}

}  // namespace walrus

#include "walrus/SpliceKernelNode.h"

#include "bir/Error.h"
#include "walrus/Clone.h"
#include "walrus/KernelSplicer.h"
#include "walrus/NodeBuffers.h"

namespace walrus {
namespace {

using bir::AccessPattern;
using bir::Function;
using bir::Module;

int64_t functionIndex(const Function& f) {
  const auto& fs = f.parent()->functions();
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i].get() == &f) return static_cast<int64_t>(i);
  return -1;
}

bool hasKernelNodeNamed(const Function& f, const std::string& name) {
  for (const auto& bb : f.blocks())
    for (const auto& I : bb->instructions())
      if (I->name == name && bir::isa<bir::InstNKIKLIRKernel>(I.get())) return true;
  return false;
}

// The host tensor of `into` named like `loc` (a DRAM tensor of another core's function),
// declared with the same allocation when missing.
bir::MemoryLocation* sameTensorIn(Function& into, const bir::MemoryLocation& loc,
                                  const std::string& where) {
  if (bir::MemoryLocation* l = into.findLocation(loc.name)) {
    if (!l->isDram() || l->set->dtype != loc.set->dtype || l->sizeBytes() != loc.sizeBytes())
      throw KernelError(where + ": function '" + into.name + "' has a tensor '" + loc.name +
                        "' that differs from the node's");
    return l;
  }
  auto set = cloneAllocationFields(*loc.set);
  set->name = into.findAllocation(loc.set->name) ? loc.name + "_set" : loc.set->name;
  auto copy = std::make_unique<bir::MemoryLocation>(loc);
  copy->set = nullptr;
  set->locations.push_back(std::move(copy));
  return into.addAllocation(std::move(set))->location();
}

}  // namespace

std::string describeNode(const bir::Instruction& node) {
  std::string where;
  const bir::BasicBlock* bb = node.parent();
  if (bb && bb->parent() && bb->parent()->parent()) {
    const Function& f = *bb->parent();
    int64_t bi = -1;
    for (size_t i = 0; i < f.blocks().size(); ++i)
      if (f.blocks()[i].get() == bb) bi = static_cast<int64_t>(i);
    const int64_t given = bb->inputIndexOf(&node);  // (a node an expansion made: where it is now)
    where = "functions[" + std::to_string(functionIndex(f)) + "].blocks[" + std::to_string(bi) +
            "].instructions[" + std::to_string(given >= 0 ? given : bb->indexOf(&node)) + "] ";
  }
  return where + "(" + node.opcodeName() + " '" + node.name + "')";
}

void requireOneCoreOperands(const bir::Instruction& node, const std::string& where) {
  for (const char* side : {"ins", "outs"}) {
    const auto& list = side[0] == 'i' ? node.ins : node.outs;
    for (size_t k = 0; k < list.size(); ++k) {
      const std::string what = where + ": " + side + "[" + std::to_string(k) + "]";
      if (list[k].lnc_size != 1)
        throw KernelError(what + " is shared by " + std::to_string(list[k].lnc_size) +
                          " NeuronCores (lnc_size): the expanders take operands of one NeuronCore");
      if (list[k].reduce)
        throw KernelError(what + " may be reduced along its partition dim (reduce): the expanders write outputs "
                          "whole, they do not reduce them");
    }
  }
}

size_t spliceKernelNode(bir::Instruction& node, const Module& kernel,
                        const KernelNodeInterface& interface) {
  const std::string where = describeNode(node);
  requireOneCoreOperands(node, where);
  bir::BasicBlock* bb = node.parent();
  if (!bb || !bb->parent() || !bb->parent()->parent())
    throw KernelError(where + ": the node is not in a module's function");
  Function& host = *bb->parent();
  Module& m = *host.parent();
  const int64_t core = functionIndex(host);
  const auto nk = static_cast<int64_t>(kernel.functions().size());
  const int64_t grid = interface.grid.value_or(1);
  if (nk == 0) throw KernelError(where + ": the kernel has no function");
  if (grid < 1) throw KernelError(where + ": grid " + std::to_string(grid) + " is not positive");
  if (interface.grid && nk != grid)
    throw KernelError(where + ": grid " + std::to_string(grid) + " but the kernel has " +
                      std::to_string(nk) + " function(s), one per logical core expected");
  if (nk > 1 && core >= nk)
    throw KernelError(where + ": NeuronCoreId " + std::to_string(core) +
                      " has no function in the kernel's " + std::to_string(nk));
  NodeBuffers buffers;
  try {
    buffers = nodeBuffers(interface.sb_buf_shape, interface.psum_buf_shape, moduleMachine(m.arch));
  } catch (const KernelError& e) {
    throw KernelError(where + ": " + e.what());
  }
  auto request = [&](int64_t k, std::vector<AccessPattern> ins, std::vector<AccessPattern> outs,
                     const std::string& at) {
    return SpliceRequest{kernel.functions()[static_cast<size_t>(k)].get(), interface.func_args,
                         interface.func_outs, std::move(ins), std::move(outs), node.name, at, buffers};
  };
  auto code = KernelSplicer(host, request(nk == 1 ? 0 : core, node.ins, node.outs, where)).run();

  for (int64_t i = 0; grid > 1 && i < grid; ++i) {
    if (i == core) continue;
    if (i < static_cast<int64_t>(m.functions().size()) &&
        hasKernelNodeNamed(*m.functions()[static_cast<size_t>(i)], node.name))
      continue;
    while (static_cast<int64_t>(m.functions().size()) <= i) m.addFunction();
    Function& other = *m.functions()[static_cast<size_t>(i)];
    const std::string at = where + " for core " + std::to_string(i);
    auto rebind = [&](std::vector<AccessPattern> list) {
      for (AccessPattern& ap : list)
        if (!ap.isImmediate()) ap.loc = sameTensorIn(other, *ap.loc, at);
      return list;
    };
    auto spilled = KernelSplicer(other, request(i, rebind(node.ins), rebind(node.outs), at)).run();
    bir::BasicBlock* target = other.blocks().empty() ? other.addBlock() : other.blocks().back().get();
    for (auto& I : spilled) target->append(std::move(I));
  }
  return bb->replace(static_cast<size_t>(bb->indexOf(&node)), std::move(code));
}

}  // namespace walrus

// Splices a traced kernel (one ISA function) into a host function in place of a kernel node: the
// code path IT55 (InstNKIKernel, body = BIR JSON) and IT56 (InstNKIKLIRKernel, KLR file or BIR
// JSON) share.
//
//  * Binding. The kernel DRAM tensor named func_args[i] is the node's ins[i], func_outs[j] its
//    outs[j]. Every Input/Output tensor of the kernel must be bound, each at most once; dtypes
//    must match, and shapes must match up to dims of size 1 (walrus::KernelError names both).
//  * Rebasing. Kernel access patterns on a bound tensor are rewritten onto the host tensor
//    through the node's operand pattern (OperandLayout): whole-tensor and contiguous
//    sub-tensor operands always work, strided operands when the kernel's pairs stay inside the
//    operand's dims; anything else is a KernelError naming the instruction and the pattern.
//  * Copies. The kernel's SBUF/PSUM tensors and internal DRAM tensors are added to the host with
//    unique names "<node>/<tensor>", at the kernel's addresses (the node's sb_buf_shape /
//    psum_buf_shape reserve that space, so an on-chip tensor outside it is a KernelError; the
//    simulator orders accesses by address).
//  * Instructions. Every kernel instruction, in program order across its blocks, is copied with
//    the name "<node>/<name>" (made unique), its source kept and `kernel` set to the node's name.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bir/Module.h"
#include "walrus/NodeBuffers.h"

namespace walrus {

struct SpliceRequest {
  const bir::Function* kernel = nullptr;   // the kernel function to splice
  std::vector<std::string> func_args;      // kernel tensors bound to `ins`, in order
  std::vector<std::string> func_outs;      // kernel tensors bound to `outs`, in order
  std::vector<bir::AccessPattern> ins;     // the node's operands, over tensors of the host
  std::vector<bir::AccessPattern> outs;
  std::string node_name;                   // prefix of new names; each instruction's `kernel`
  std::string where;                       // the node's position, for messages
  NodeBuffers buffers;                     // the on-chip memory the node reserves
};

class KernelSplicer {
 public:
  KernelSplicer(bir::Function& host, SpliceRequest request);
  ~KernelSplicer();

  // The kernel's instructions rewritten for the host, its tensors added to the host. Throws
  // walrus::KernelError (leaving the host's tensors untouched) when the kernel does not fit.
  std::vector<std::unique_ptr<bir::Instruction>> run();

 private:
  struct Binding;
  void bind(const std::string& tensor, const bir::AccessPattern& operand, const std::string& side);
  void checkAllInterfaceTensorsBound() const;
  void checkOnChipTensorsInsideNodeBuffers() const;
  void copyInternalTensors();
  bir::AccessPattern rewrite(const bir::AccessPattern& ap, const bir::Instruction& I,
                             const std::string& operand) const;

  bir::Function& host_;
  SpliceRequest r_;
  std::vector<std::unique_ptr<Binding>> bindings_;
  std::unordered_map<const bir::MemoryLocation*, bir::MemoryLocation*> copies_;  // kernel -> host
};

}  // namespace walrus

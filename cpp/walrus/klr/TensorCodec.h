// Tensors and operands between BIR and KLR Core (KLR/Core/Tensor.lean, Operators.lean):
//   bir::MemoryLocation   <-> TensorName {name, dtype, shape, address, freeElements, addressRotation}
//   bir::AccessPattern    <-> TensorRef.abstract (Access.birPattern (BirAccessPattern ...))
//   immediate operands    <-> Immediate (in KLR operator fields) or NxsImmediate (our extension)
//
// A BirAccessPattern is BIR's own form of an access pattern (offset and [step, num] pairs over the
// tensor's elements, partition pair first), so BIR operands map onto it one to one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "bir/Module.h"
#include "walrus/klr/KlrValue.h"

namespace klr {

// Thrown by the encoders when a BIR value lies outside what the KLR field can hold (a negative
// Nat, an integer beyond Int32, an immediate where KLR wants a tensor). The kernel writer then
// uses neuronxsim's generic extension for that instruction; nothing is clamped.
struct NotRepresentable {
  std::string why;
};

// ---- writing ----
Item dtypeItem(bir::DType t);
Item engineItem(bir::Engine e);
Item tensorNameItem(const bir::MemoryLocation& loc);
// `index`: the int32 index tensor of an indirect DMA (BirAccessPattern.vectorOffset).
Item tensorRefItem(const bir::AccessPattern& ap, const bir::AccessPattern* index = nullptr,
                   int64_t indirectDim = 0);
Item immediateFloat(double v);  // Immediate.float (float32)
Item immediateInt(int64_t v);   // Immediate.int (Int32)
Item operandTile(const bir::AccessPattern& ap);
Item operandImmediate(Item immediate);
Item apPairItem(const bir::APPair& p);
// An operand of neuronxsim's generic instruction form: Operand.tile, or NxsImmediate for an
// immediate (its dtype and full float64 value).
Item isaOperandItem(const bir::AccessPattern& ap);

// ---- reading ----

// Resolves TensorNames to the tensors of one function. With declared tensors (a neuronxsim file,
// whose module record declares every allocation) a TensorName must name one of them and agree with
// it. Without (a KLR-written kernel), the first TensorName of each name creates the tensor: HBM
// tensors become Input/Output/DRAM tensors by the kernel's input and output lists, SBUF/PSUM tensors
// need an allocated address.
class TensorTable {
 public:
  static TensorTable declared(const bir::Function& f);
  static TensorTable deriving(bir::Function& f, std::unordered_set<std::string> inputs,
                              std::unordered_set<std::string> outputs);

  bir::MemoryLocation* resolve(const Item& tensorName, const std::string& what);

 private:
  TensorTable(const bir::Function* f, bir::Function* mutableF) : f_(f), mutable_(mutableF) {}
  bir::MemoryLocation* create(const Item& at, const std::string& what, const std::string& name,
                              bir::DType dtype, const std::vector<int64_t>& shape, int memory,
                              int64_t parSize, int64_t freeSize, const Item* parOffset,
                              const Item* freeOffset);
  const bir::Function* f_;
  bir::Function* mutable_;  // set when deriving
  std::unordered_set<std::string> inputs_, outputs_;
};

bir::DType readDtype(const Item& it, const std::string& what);
bir::Engine readEngine(const Item& it, const std::string& what);
// A Nat that must fit int64 (sizes, offsets, counts).
int64_t readSize(const Item& it, const std::string& what);
bir::APPair readApPair(const Item& it, const std::string& what);

// A TensorRef as a BIR access pattern. `index`/`indirectDim` receive an indirect DMA's index
// tensor; when null, a vectorOffset is refused.
bir::AccessPattern readTensorRef(const Item& it, TensorTable& tensors, const std::string& what,
                                 std::optional<bir::AccessPattern>* index = nullptr,
                                 int64_t* indirectDim = nullptr);
// An Immediate as a double (Int32 and Float32 are exact in double).
double readImmediate(const Item& it, const std::string& what);
// An Operand: either an immediate (returned in *value) or a tile (returned in *tile).
void readOperand(const Item& it, TensorTable& tensors, const std::string& what, double* value,
                 std::optional<bir::AccessPattern>* tile);
// An operand of the generic instruction form (Operand or NxsImmediate).
bir::AccessPattern readIsaOperand(const Item& it, TensorTable& tensors, const std::string& what);

}  // namespace klr

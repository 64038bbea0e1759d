#include "Instruction.h"

#include <iterator>

#include "Error.h"
#include "KernelInstructions.h"

namespace bir {

Instruction::Instruction(std::string n, BasicBlock* bb, Opcode type)
    : type_(type), name(std::move(n)), parent_(bb) {
  if (!isValidOpcode(type)) InstructionType::string(type);  // throws with the range message
}

Instruction::~Instruction() = default;

#define BIR_DEFINE_MANY_OPCODE_CTOR(Class, NC)                                              \
  Class::Class(Opcode op, std::string n, BasicBlock* bb) : Instruction(std::move(n), bb, op) { \
    if (nodeClassOf(op) != NodeClass::NC)                                                   \
      throw BIRError("opcode " + InstructionType::string(op) + " is not built as " #Class);   \
  }
BIR_DEFINE_MANY_OPCODE_CTOR(InstTensorCopyDynamic, TensorCopyDynamic)
BIR_DEFINE_MANY_OPCODE_CTOR(InstDMA, DMA)
BIR_DEFINE_MANY_OPCODE_CTOR(InstUnmodeled, Unmodeled)
#undef BIR_DEFINE_MANY_OPCODE_CTOR

NodeClass nodeClassOf(Opcode op) {
  if (!isValidOpcode(op)) InstructionType::string(op);  // throws for an out-of-range ordinal
  return kNodeClassOfOpcode[op];
}

const char* nodeClassName(NodeClass c) {
  switch (c) {
#define BIR_NODE_CLASS(C) \
  case NodeClass::C:      \
    return "Inst" #C;
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
  }
  return "?";
}

namespace {
template <class T>
std::unique_ptr<Instruction> makeNode(Opcode op, std::string name, BasicBlock* bb) {
  if constexpr (std::is_constructible_v<T, Opcode, std::string, BasicBlock*>)
    return std::make_unique<T>(op, std::move(name), bb);
  else
    return std::make_unique<T>(std::move(name), bb);
}
}  // namespace

std::unique_ptr<Instruction> createInstruction(Opcode op, std::string name, BasicBlock* bb) {
  switch (op) {
#define BIR_OPCODE(Name, NC, Cat, Src) \
  case InstructionType::Name:     \
    return makeNode<Inst##NC>(op, std::move(name), bb);
#include "InstructionType.def"
#undef BIR_OPCODE
  }
  InstructionType::string(op);  // throws for an out-of-range ordinal
  return nullptr;
}

// ---- kernel-node operand API ----

AccessPattern& Instruction::addArgumentOrOutput(const AccessPattern& ap, bool isOutput, bool reduce) {
  if (reduce && !isOutput) throw BIRError("addArgumentOrOutput: reduce applies to outputs (it may reduce along the partition dim)");
  auto& list = isOutput ? outs : ins;
  list.push_back(ap);
  list.back().reduce = reduce;
  return list.back();
}

AccessPattern& Instruction::addSeqAccess(MemoryLocation* tensor, bool isOutput) {
  if (!tensor) throw BIRError("addSeqAccess: no tensor");
  AccessPattern ap = sequentialPattern(tensor);
  ap.flavour = AccessFlavour::Seq;
  return addArgumentOrOutput(ap, isOutput);
}

AccessPattern& Instruction::addOpaqueAP(MemoryLocation* tensor, bool isOutput) {
  if (!tensor) throw BIRError("addOpaqueAP: no tensor");
  AccessPattern ap = sequentialPattern(tensor);
  ap.flavour = AccessFlavour::Opaque;
  return addArgumentOrOutput(ap, isOutput);
}

AccessPattern& Instruction::addAP(const AccessPattern& tile, bool isOutput) {
  AccessPattern ap = tile;
  ap.flavour = AccessFlavour::AP;
  return addArgumentOrOutput(ap, isOutput);
}

AccessPattern Instruction::createAP(MemoryLocation* tensor, int64_t offset,
                                    const std::vector<APPair>& pattern,
                                    const std::vector<int64_t>& access_shape,
                                    int64_t partition_dim, int64_t lnc_size) {
  if (!tensor || !tensor->set) throw BIRError("createAP: no tensor");
  if (lnc_size < 1) throw BIRError("createAP: lnc_size " + std::to_string(lnc_size) + " is not positive");
  AccessPattern ap;
  ap.flavour = AccessFlavour::AP;
  ap.dtype = tensor->set->dtype;
  ap.loc = tensor;
  ap.offset = offset;
  ap.pattern = pattern;
  ap.setAccessShape(access_shape);
  ap.setPartitionDim(partition_dim);
  ap.lnc_size = narrowLncSize(lnc_size, [] { return std::string("createAP"); });
  return ap;
}

const std::string* InstBIRKernel::attr(const std::string& key) const {
  for (const auto& [k, v] : kernel_attrs)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace bir

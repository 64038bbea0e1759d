// BIR ISA instructions <-> KLR Core.Operator values (KLR/Core/Operators.lean).
//
// Each node class that has a KLR operator is mapped field by field onto it, in KLR's field order;
// docs/klr-format.md has the table. The mapping is as close as KLR allows and no closer: fields
// KLR lacks (a matmul's accumulation flags, a DMA queue, an activation's alpha, an ActivationFunc
// KLR does not name ...) are left at their defaults by the decoder, and the kernel writer carries
// their exact values in an extension attribute list (see KernelEncoder.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "bir/Module.h"
#include "walrus/klr/TensorCodec.h"

namespace klr {

// The Core.Operator for `I`, or nullopt when KLR has no operator for its node class. Throws
// NotRepresentable when a value is outside the KLR field that would hold it.
std::optional<Item> encodeOperator(const bir::Instruction& I);

// The instruction a Core.Operator describes. `opcode`, when set, replaces the operator's natural
// opcode (it must build the same node class: DMA vs DMACopy ...). The engine is the operator's own
// engine field or the engine KLR implies for it (Operator.engine).
std::unique_ptr<bir::Instruction> decodeOperator(const Item& op, std::optional<bir::Opcode> opcode,
                                                 TensorTable& tensors, const std::string& what);

}  // namespace klr

// Instruction fields as attributes: the part of neuronxsim's KLR extension that carries what a KLR
// operator cannot. An attribute list is a CBOR array of [name, value] pairs; names are the fields'
// BIR JSON names (the node classes' fields() lists) plus those of the instruction itself: "opcode",
// "engine", "kernel", "extra_json", and "access" (how operands were marshalled: flavour,
// access_shape, partition_dim, for operands that are not plain). Values are CBOR in the field's own type: bool, integer,
// float64, text (strings, enum names, raw JSON), arrays (lists, [step, num] pairs, [key, value]
// pairs) and KLR Options. Because the codec walks fields(), a field added to a node class is
// carried without touching this file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bir/Module.h"
#include "walrus/klr/KlrValue.h"

namespace klr {

// The attributes of `want` that `got` (the same instruction read back from its KLR operator)
// does not reproduce: opcode, engine and fields that differ, plus kernel/extra_json/access when
// set.
std::vector<Item> differingAttrs(const bir::Instruction& want, const bir::Instruction& got);

// Every field of `I`, plus kernel/extra_json when set (the generic instruction form).
std::vector<Item> allAttrs(const bir::Instruction& I);

// The "opcode" attribute, if the list has one.
std::optional<bir::Opcode> readOpcodeAttr(const Item& attrs, const std::string& what);

// Sets the attributes on `I` (the opcode attribute is read by readOpcodeAttr before `I` is
// built). Unknown names, repeated names and values of the wrong type are KLRErrors.
void applyAttrs(bir::Instruction& I, const Item& attrs, const std::string& what);

// True when both instructions have the same operands (tensors, patterns, dtypes, values; how they
// were marshalled is compared by differingAttrs).
bool sameOperands(const bir::Instruction& a, const bir::Instruction& b);

}  // namespace klr

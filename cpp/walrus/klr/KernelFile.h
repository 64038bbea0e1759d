// Traced kernels as KLR files: the beta2 carrier of IT56 (Form A) and what `klr_info` reports.
//
// writeKernelFile encodes an ISA-level bir::Module (one function per logical NeuronCore) as
//   KLRFile 0.0.12 | KLRMetaData "neuronxsim-klr/1" | Contents.kernel (one function) or
//   Contents.lnc (several, one body each) | module record
// in KLR Core's data model: Kernel/LncKernel, Block, Stmt.oper, Pos, TensorName, Address,
// BirAccessPattern and Core.Operator, each with KLR's tags and field order. What KLR cannot hold
// travels in neuronxsim's extensions (tags 0xf0..0xfe): an operator KLR lacks, or the fields a KLR
// operator lacks, inside the statement; and, after Contents, the module record (tag 0xf800) holding
// the BIR that is not instructions -- allocations, function names and attributes, arch -- as BIR
// JSON with the blocks removed. readKernelFile inverts it exactly: the module read back writes the
// same BIR JSON as the module written. docs/klr-format.md is the full specification.
//
// readKernelFile also reads Core kernels written by KLR itself (no module record): tensors are then
// created from their TensorNames, and KLR's Prop-counting TensorName header is accepted.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bir/Module.h"
#include "walrus/klr/KlrContainer.h"

namespace klr {

struct KernelFileOptions {
  std::string kernel_name = "kernel";  // Kernel.name / LncKernel.name
};

// How a written kernel's statements were encoded.
struct EncodingStats {
  size_t klr_operators = 0;         // a Core.Operator holding the whole instruction
  size_t extended_operators = 0;    // a Core.Operator plus the fields it lacks (NxsOperator.ext)
  size_t generic_instructions = 0;  // no KLR operator: neuronxsim's generic form (NxsOperator.isa)
};

// The file's bytes. The module must verify (BIRError otherwise) and hold ISA code only: kernel
// nodes and kernel-node operand marshalling are refused with KLRError.
std::string encodeKernel(const bir::Module& m, const KernelFileOptions& options = {},
                         EncodingStats* stats = nullptr);
// Writes atomically (a temporary file renamed into place).
void writeKernelFile(const bir::Module& m, const std::string& path,
                     const KernelFileOptions& options = {});

// The kernel a file holds. KLRError ("byte N: ...", prefixed with the path for files) for anything
// truncated, corrupt, hostile, or not a traced kernel (source-level Contents are refused with a
// message saying what they hold). The module returned verifies.
std::unique_ptr<bir::Module> decodeKernel(std::string_view bytes);
std::unique_ptr<bir::Module> readKernelFile(const std::string& path);
// The same with the name the file gives the kernel (Kernel.name / LncKernel.name), which the IT56
// resolver checks against the node's func_name.
struct NamedKernel {
  std::unique_ptr<bir::Module> module;
  std::string kernel_name;
};
NamedKernel readNamedKernelFile(const std::string& path);

// What any KLR file holds, without lowering it.
struct KlrTensorInfo {
  std::string name, dtype, memory;
  std::vector<int64_t> shape;
};
struct KlrInfo {
  KLRFileHeader header;
  std::string format;
  ContentsKind kind = ContentsKind::Kernel;
  int contents_ctor = 0;
  std::string numbering;            // which Contents numbering the constructor was read with
  std::string entry;                // python / nki: the kernel's entry function
  std::string callsite;             // hlo: the file the call-site record names
  std::string kernel_name;          // kernel / lnc
  std::vector<KlrTensorInfo> inputs, outputs;
  size_t bodies = 0, statements = 0;
  int neuronxsim_revision = 0;      // 0 when KLR (not neuronxsim) wrote the file
  std::string lowering_refusal;     // why lowering refuses the file; empty when it can be lowered
};
KlrInfo inspectKlr(std::string_view bytes);
KlrInfo readKlrInfo(const std::string& path);

// A whole file's bytes; KLRError naming the path when it cannot be read (or exceeds 1 GiB).
std::string readFileBytes(const std::string& path);

}  // namespace klr

#include "Layout.h"

#include <cstddef>

#include "KernelInstructions.h"

// offsetof on classes with a vtable is "conditionally supported"; GCC and Clang support it for
// classes without virtual bases, which is all we need to pin the layout the seed documents.
#pragma GCC diagnostic ignored "-Winvalid-offsetof"

namespace bir {

static_assert(sizeof(Instruction) == 0xF0, "seed 000: bir::Instruction is 0xF0 bytes");
static_assert(offsetof(Instruction, type_) == 0x08);
static_assert(offsetof(Instruction, id) == 0x10);
static_assert(offsetof(Instruction, name) == 0x18);
static_assert(offsetof(Instruction, parent_) == 0x38);
static_assert(offsetof(Instruction, ins) == 0x40);
static_assert(offsetof(Instruction, outs) == 0x58);
static_assert(offsetof(Instruction, source) == 0x70);
static_assert(offsetof(Instruction, kernel) == 0x90);
static_assert(offsetof(Instruction, extra_json) == 0xB0);
static_assert(offsetof(InstBIRKernel, kernel_name) == 0xF0,
              "seed 000: InlineBIRKernel reads the kernel name at node+0xF0");
static_assert(offsetof(InstNKIKLIRKernel, klir_binary) == 0xF0, "seed 000: klir_binary@+0xF0");
static_assert(offsetof(InstNKIKLIRKernel, kernel_format) == 0x110, "seed 000: kernel_format@+0x110");
static_assert(offsetof(InstNKIKLIRKernel, nki_binary_version_identifier) == 0x130,
              "seed 000: nki_binary_version_identifier@+0x130");

std::vector<std::pair<std::string, int64_t>> fieldOffsets() {
  return {
      {"sizeof(Instruction)", sizeof(Instruction)},
      {"sizeof(InstBIRKernel)", sizeof(InstBIRKernel)},
      {"sizeof(InstNKIKernel)", sizeof(InstNKIKernel)},
      {"sizeof(InstNKIKLIRKernel)", sizeof(InstNKIKLIRKernel)},
      {"Instruction.type", offsetof(Instruction, type_)},
      {"Instruction.engine", offsetof(Instruction, engine)},
      {"Instruction.id", offsetof(Instruction, id)},
      {"Instruction.name", offsetof(Instruction, name)},
      {"Instruction.parent", offsetof(Instruction, parent_)},
      {"Instruction.ins", offsetof(Instruction, ins)},
      {"Instruction.outs", offsetof(Instruction, outs)},
      {"Instruction.source", offsetof(Instruction, source)},
      {"Instruction.kernel", offsetof(Instruction, kernel)},
      {"Instruction.extra_json", offsetof(Instruction, extra_json)},
      {"InstBIRKernel.kernel_name", offsetof(InstBIRKernel, kernel_name)},
      {"InstNKIKernel.func", offsetof(InstNKIKernel, func)},
      {"InstNKIKLIRKernel.klir_binary", offsetof(InstNKIKLIRKernel, klir_binary)},
      {"InstNKIKLIRKernel.kernel_format", offsetof(InstNKIKLIRKernel, kernel_format)},
      {"InstNKIKLIRKernel.nki_binary_version_identifier",
       offsetof(InstNKIKLIRKernel, nki_binary_version_identifier)},
  };
}

}  // namespace bir

#include "walrus/NodeBuffers.h"

#include "bir/Error.h"
#include "bir/View.h"

namespace walrus {

const bir::MachineConfig& moduleMachine(const std::string& arch) {
  if (bir::canonicalArch(arch).empty()) throw KernelError("module arch '" + arch + "' is not a known generation");
  return bir::machineConfig(arch);
}

NodeBuffers nodeBuffers(const std::vector<int64_t>& sb, const std::vector<int64_t>& psum,
                        const bir::MachineConfig& config) {
  NodeBuffers b{config.sbuf_bytes_per_partition, config.psum_banks, config.psum_bank_bytes};
  const std::string machine = " (a " + config.arch + " has " + std::to_string(config.sbuf_bytes_per_partition) +
                              " bytes per SBUF partition and " + std::to_string(config.psum_banks) + " PSUM banks)";
  if (!sb.empty()) {
    if (sb.size() != 2 || sb[0] != config.num_partitions || sb[1] <= 0 || sb[1] > config.sbuf_bytes_per_partition)
      throw KernelError("sb_buf_shape " + bir::shapeText(sb) + "; expected [" + std::to_string(config.num_partitions) +
                        ", bytes per partition]" + machine);
    b.sbuf_bytes = sb[1];
  }
  if (!psum.empty()) {
    if (psum.size() != 3 || psum[0] != config.num_partitions || psum[1] <= 0 || psum[1] > config.psum_banks ||
        psum[2] != config.psum_bank_bytes)
      throw KernelError("psum_buf_shape " + bir::shapeText(psum) + "; expected [" +
                        std::to_string(config.num_partitions) + ", banks, " + std::to_string(config.psum_bank_bytes) +
                        "]" + machine);
    b.psum_banks = psum[1];
  }
  return b;
}

void requireInsideNodeBuffer(const std::string& memory, int64_t addr, int64_t bytes, int64_t capacity,
                             const std::string& what) {
  // (Compared without addr + bytes, which hostile JSON can push past int64.)
  if (addr < 0 || bytes < 0 || bytes > capacity || addr > capacity - bytes)
    throw KernelError(what + " needs " + std::to_string(bytes) + " bytes per partition of " + memory + " at byte " +
                      std::to_string(addr) + ", beyond the " + std::to_string(capacity) +
                      " bytes per partition the node may use");
}

}  // namespace walrus

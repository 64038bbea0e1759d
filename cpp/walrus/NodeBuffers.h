// The on-chip memory a kernel node may use, and the one rule about it.
//
// A kernel node (IT54, IT55, IT56) reserves bytes [0, sb_buf_shape[1]) of every SBUF partition
// (sb_buf_shape = [128, bytes per partition]) and psum_buf_shape[1] banks of PSUM, bytes
// [0, banks * bank bytes) of every partition (psum_buf_shape = [128, banks, bank bytes]); the host
// keeps whatever lives across the node elsewhere. An empty shape reserves the arch's whole memory.
// Everything the kernel places on chip must lie inside the reservation, or it would overwrite the
// host's tiles: the IT54 leaves' allocator (kernels/OnChipMemory) and the IT55/IT56 splice
// (KernelSplicer) both refuse what does not fit, through requireInsideNodeBuffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bir/MachineConfig.h"

namespace walrus {

struct NodeBuffers {
  int64_t sbuf_bytes = 0;  // per partition
  int64_t psum_banks = 0;
  int64_t psum_bank_bytes = 0;
  int64_t psumBytes() const { return psum_banks * psum_bank_bytes; }
};

// The target description of a module's arch; KernelError when it is not a known generation.
const bir::MachineConfig& moduleMachine(const std::string& arch);

// What a node with these shapes reserves on `config`'s machine. KernelError (unprefixed) for a
// malformed shape: not [128, bytes] / [128, banks, bank bytes], not positive, or more than the
// machine has.
NodeBuffers nodeBuffers(const std::vector<int64_t>& sb_buf_shape, const std::vector<int64_t>& psum_buf_shape,
                        const bir::MachineConfig& config);

// KernelError "<what> needs <bytes> bytes per partition of <memory> at byte <addr>, beyond the
// <capacity> bytes per partition the node may use" unless [addr, addr + bytes) lies in [0, capacity).
void requireInsideNodeBuffer(const std::string& memory, int64_t addr, int64_t bytes, int64_t capacity,
                             const std::string& what);

}  // namespace walrus

#include "walrus/kernels/OnChipMemory.h"

#include "bir/Error.h"
#include "bir/MachineConfig.h"
#include "walrus/NodeBuffers.h"

namespace walrus::kernels {

int64_t Arena::allocate(int64_t bytes, const std::string& what) {
  if (bytes < 1) throw KernelError(what + ": a buffer of " + std::to_string(bytes) + " bytes per partition");
  const int64_t addr = (top_ + align_ - 1) / align_ * align_;
  requireInsideNodeBuffer(memory_, addr, bytes, capacity_, what);
  top_ = addr + bytes;
  if (top_ > high_) high_ = top_;
  return addr;
}

void Arena::shrink(int64_t newCapacity, const std::string& what) {
  if (newCapacity < top_)
    throw KernelError("no " + memory_ + " left for " + what + ": bytes [" + std::to_string(newCapacity) + ", " +
                      std::to_string(capacity_) + ") per partition are in use");
  capacity_ = newCapacity;
}

Tile TilePool::next() {
  if (buffers_.empty()) throw KernelError("TilePool '" + name_ + "' has no buffers");
  return buffers_[turn_++ % buffers_.size()];
}

Tile PsumPool::next(bir::DType dtype, const std::vector<int64_t>& free) {
  if (banks_.empty()) throw KernelError("PsumPool '" + name_ + "' has no banks");
  int64_t elems = 1;
  for (int64_t d : free) elems *= d;
  if (elems * bir::dtypeSize(dtype) > bankBytes_)
    throw KernelError("PsumPool '" + name_ + "': a [128, " + std::to_string(elems) + "] " +
                      std::string(bir::enumName(dtype)) + " tile does not fit its " + std::to_string(bankBytes_) +
                      " bytes of PSUM");
  return Tile(banks_[turn_++ % banks_.size()], dtype, bir::UniformConfig::kPartitions, free);
}

}  // namespace walrus::kernels

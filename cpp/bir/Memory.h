// Memory locations and allocations: where a BIR operand's bytes live.
//
// An allocation (JSON Skind "memory_location_set") describes one tensor: dtype, shape, kind; its
// memory location (Skind "memory_location") says where it is placed:
//   DRAM kinds (Input, Output, DRAM): a flat row-major array of tensor_shape elements;
//   SB / PSUM: `partitions` rows of `bytes_per_partition` bytes starting at partition
//   `base_partition` and at byte `addr` within every partition (PSUM: `bank` is informative;
//   the simulator derives banks from addr).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Enums.h"

namespace bir {

class MemoryLocationSet;

class MemoryLocation {
 public:
  std::string name;
  MemoryType type = MemoryType::DRAM;
  int64_t addr = 0;                  // byte offset within each partition (SB/PSUM)
  int64_t partitions = 1;            // dims[0]
  int64_t bytes_per_partition = 0;   // dims[1]
  int64_t bank = 0;
  int64_t base_partition = 0;        // "base" in JSON
  bool allocated = true;
  bool pinned = false;
  int64_t tensor_id = -1;
  std::string extra_json;            // unknown JSON fields, kept verbatim ("{...}" or empty)
  MemoryLocationSet* set = nullptr;  // owning allocation

  bool isDram() const {
    return type == MemoryType::Input || type == MemoryType::Output || type == MemoryType::DRAM;
  }
  bool isOnChip() const { return type == MemoryType::SB || type == MemoryType::PSUM; }
  int64_t sizeBytes() const { return partitions * bytes_per_partition; }
};

class MemoryLocationSet {
 public:
  MemoryLocationSet() = default;
  MemoryLocationSet(const MemoryLocationSet&) = delete;
  MemoryLocationSet& operator=(const MemoryLocationSet&) = delete;

  std::string name;  // "<tensor>_set"
  AddrSpace addr_space = AddrSpace::Local;
  DType dtype = DType::float32;
  int64_t partition_dim = 0;
  std::vector<int64_t> tensor_shape;
  std::string file;
  bool no_spill = false;
  bool is_volatile = false;  // "volatile" in JSON
  bool is_virtual = false;   // "virtual" in JSON
  TensorKind kind = TensorKind::Internal;
  std::string tensor_class;
  std::vector<std::unique_ptr<MemoryLocation>> locations;
  std::string extra_json;  // unknown JSON fields (tensorId2MemLocSize etc.), verbatim

  int64_t numElements() const;
  MemoryLocation* location() const { return locations.empty() ? nullptr : locations.front().get(); }
};

}  // namespace bir

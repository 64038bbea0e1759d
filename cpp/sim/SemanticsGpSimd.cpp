// GpSimd instructions that move data between partitions or compact it: tensor_partition_reduce,
// local_gather, nc_n_gather (Gather), sequence_bounds and nonzero_with_count.
// docs/isa-semantics.md §5.
//
// GpSimd has eight cores, core i wired to partitions [16i, 16i + 16) [ref §1]; local_gather and
// nonzero_with_count work per core, so their operands start on a core's first partition.
#include <cmath>
#include <cstring>
#include <vector>

#include "Alu.h"
#include "Numerics.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

namespace {

void onCoreBoundary(Checker& c, const Operand& op, const char* what) {
  const int64_t core = c.cfg.gpsimd_core_partitions;
  if (op.p0 % core != 0)
    c.fail(c.name(op) + " (" + what + ") starts at partition " + std::to_string(op.p0) + "; GpSimd cores own partitions in groups of " +
           std::to_string(core) + ", so it must start on a multiple of " + std::to_string(core));
}

void sameDtype(Checker& c, const Operand& a, const Operand& b, const char* why) {
  if (a.dtype != b.dtype)
    c.fail(c.name(b) + " is " + std::string(enumName(b.dtype)) + " but " + c.name(a) + " is " +
           std::string(enumName(a.dtype)) + " (" + why + ")");
}

bool isInteger(DType t) { return !isFloat(t); }

// Copies one element's bytes (the gathers move data without conversion).
void copyElement(Exec& x, const Operand& src, int64_t lane, int64_t k, const Operand& dst, int64_t dlane, int64_t dk) {
  const uint8_t* s = x.readElement(src, lane, k);
  uint8_t* d = x.lanePtr(dst, dlane) + dst.freeOffset(dk);
  std::memcpy(d, s, dst.esize);
  x.markWritten(x.memory(dst), d, 1, dst.esize, dst.esize);
}

}  // namespace

// ---- TensorPartitionReduce: out[0, i] = op over partitions of in[p, i] ----

void check(const InstTensorPartitionReduce& I, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::partitionReduceOp(I.op));
  c.require(legality::bitvecDtypes(I.opcode(), I.op, AluOp::bypass, {c.in(0).dtype}, {c.out(0).dtype}));
  // NKI 0.6's page adds "average", whose result over partitions it does not define.
  if (I.op == AluOp::average)
    c.fail("op average is not modelled: the documentation does not say what an average over partitions computes");
  c.lanes(c.out(0), 1, "the reduction");
  c.elems(c.out(0), c.in(0).freeElems, "the reduction");
}

// Folded in partition order, from the first partition: the bit-vector operators on 32-bit
// patterns (docs/isa-semantics.md §3), add and max on int32 / uint32 data and result by GpSimd's
// native integer arithmetic (as TensorTensor on Pool: add wraps modulo 2^32), the rest in fp32.
void exec(const InstTensorPartitionReduce& I, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t n = in.freeElems;
  const bool bitvec = legality::isBitvecOp(I.op);
  if (bitvec || (hasIntForm(I.op) && isWord(in.dtype) && isWord(out.dtype))) {
    const bool sign = in.dtype == DType::int32;
    auto value = [&](uint32_t v) { return sign ? int64_t{static_cast<int32_t>(v)} : int64_t{v}; };
    std::vector<uint32_t> acc(static_cast<size_t>(n)), row(static_cast<size_t>(n));
    x.gatherBitsLane(in, 0, acc.data());
    for (int64_t l = 1; l < in.lanes; ++l) {
      x.gatherBitsLane(in, l, row.data());
      for (size_t i = 0; i < acc.size(); ++i)
        acc[i] = bitvec ? bitvecAlu(I.op, acc[i], row[i]) : intAlu(I.op, value(acc[i]), value(row[i]));
    }
    x.scatterBitsLane(out, 0, acc.data());
    return;
  }
  float* acc = x.slot(0, n);
  float* row = x.slot(1, n);
  x.gatherLane(in, 0, acc);
  withAluOp(I.op, [&]<AluOp Op>() {
    for (int64_t l = 1; l < in.lanes; ++l) {
      x.gatherLane(in, l, row);
      for (int64_t i = 0; i < n; ++i) acc[i] = alu<Op>(acc[i], row[i]);
    }
  });
  x.scatterLane(out, 0, acc);
}

// ---- LocalGather: per GpSimd core, gather by partition-first indices ----

void check(const InstLocalGather& I, Checker& c) {
  const Operand &src = c.in(0), &index = c.in(1), &dst = c.out(0);
  c.notImmediate(src, "source");
  c.notImmediate(index, "index");
  // The constraints of [I local_gather]: the rules local-gather.*, then where the operands sit.
  const int64_t e = I.num_elem_per_idx;
  c.require(legality::localGather(c.facts(src), c.facts(index), e, I.num_valid_indices, c.cfg));
  onCoreBoundary(c, src, "source");
  onCoreBoundary(c, index, "index");
  onCoreBoundary(c, dst, "destination");
  c.lanes(dst, src.lanes, "destination");
  sameDtype(c, src, dst, "local_gather does not convert");
  c.elems(dst, I.num_valid_indices * e, "num_valid_indices x num_elem_per_idx");
  c.pairsByPattern = false;  // elements are read where the indices say
}

// dst[p, k*E + j] = src[p, idx[k] + j], idx = the core's 16 index partitions read partition
// first; an index whose E elements leave the source lane is refused (undefined on hardware).
void exec(const InstLocalGather& I, Exec& x) {
  const Operand &src = x.in(0), &index = x.in(1), &dst = x.out(0);
  const int64_t e = I.num_elem_per_idx, nvi = I.num_valid_indices;
  const int64_t corePartitions = x.cfg.gpsimd_core_partitions;
  const int64_t cores = src.lanes / corePartitions;
  int64_t* idx = x.intSlot(nvi * cores);
  for (int64_t c = 0; c < cores; ++c)
    for (int64_t k = 0; k < nvi; ++k) {
      const int64_t lane = c * corePartitions + k % corePartitions, col = k / corePartitions;
      const int64_t v = loadIndexElement(index.dtype, x.readElement(index, lane, col));
      if (v + e > src.freeElems)
        x.fail("index " + std::to_string(v) + " (partition " + std::to_string(index.p0 + lane) + ", element " +
               std::to_string(col) + ") gathers elements [" + std::to_string(v) + ", " + std::to_string(v + e) +
               ") of a " + std::to_string(src.freeElems) + "-element source partition (out of bounds: undefined)");
      idx[c * nvi + k] = v;
    }
  // Where the destination overlaps the source or the indices, every element is read first.
  const int64_t es = dst.esize, perLane = nvi * e;
  uint8_t* staged = x.inst().stage ? x.byteSlot(src.lanes * perLane * es) : nullptr;
  Memory& m = x.memory(dst);
  for (int pass = staged ? 0 : 1; pass < 2; ++pass)
    for (int64_t p = 0; p < src.lanes; ++p)
      for (int64_t k = 0; k < nvi; ++k)
        for (int64_t j = 0; j < e; ++j) {
          uint8_t* buf = staged ? staged + (p * perLane + k * e + j) * es : nullptr;
          if (pass == 0) {
            std::memcpy(buf, x.readElement(src, p, idx[p / corePartitions * nvi + k] + j), es);
            continue;
          }
          uint8_t* d = x.lanePtr(dst, p) + dst.freeOffset(k * e + j);
          std::memcpy(d, buf ? buf : x.readElement(src, p, idx[p / corePartitions * nvi + k] + j), es);
          x.markWritten(m, d, 1, es, es);
        }
}

// ---- Gather (nc_n_gather): dst[p, j] = data[p, indices[p, j]] ----

void check(const InstGather&, Checker& c) {
  const Operand &data = c.in(0), &indices = c.in(1), &dst = c.out(0);
  c.notImmediate(data, "data");
  c.notImmediate(indices, "indices");
  c.lanes(indices, data.lanes, "indices");
  c.lanes(dst, data.lanes, "destination");
  c.elems(dst, indices.freeElems, "one element per index");
  if (!isInteger(indices.dtype))
    c.fail("ins[1] (indices) is " + std::string(enumName(indices.dtype)) + "; gather indices are integers");
  sameDtype(c, data, dst, "the gather does not convert");
  c.pairsByPattern = false;  // element j reads the data element its index names
}

void exec(const InstGather&, Exec& x) {
  const Operand &data = x.in(0), &indices = x.in(1), &dst = x.out(0);
  const int64_t n = dst.freeElems;
  int64_t* idx = x.intSlot(n * dst.lanes);
  for (int64_t l = 0; l < dst.lanes; ++l)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t v = loadIndexElement(indices.dtype, x.readElement(indices, l, j));
      if (v < 0 || v >= data.freeElems)
        x.fail("index " + std::to_string(v) + " (partition " + std::to_string(indices.p0 + l) + ", element " +
               std::to_string(j) + ") is outside the " + std::to_string(data.freeElems) + " elements of a data partition");
      idx[l * n + j] = v;
    }
  if (!x.inst().stage) {
    for (int64_t l = 0; l < dst.lanes; ++l)
      for (int64_t j = 0; j < n; ++j) copyElement(x, data, l, idx[l * n + j], dst, l, j);
    return;
  }
  // The destination overlaps the data or the indices: read every element first.
  const int64_t es = dst.esize;
  uint8_t* staged = x.byteSlot(n * dst.lanes * es);
  for (int64_t l = 0; l < dst.lanes; ++l)
    for (int64_t j = 0; j < n; ++j) std::memcpy(staged + (l * n + j) * es, x.readElement(data, l, idx[l * n + j]), es);
  Memory& m = x.memory(dst);
  for (int64_t l = 0; l < dst.lanes; ++l)
    for (int64_t j = 0; j < n; ++j) {
      uint8_t* d = x.lanePtr(dst, l) + dst.freeOffset(j);
      std::memcpy(d, staged + (l * n + j) * es, es);
      x.markWritten(m, d, 1, es, es);
    }
}

// ---- SequenceBounds: each element's segment [start, end) ----

void check(const InstSequenceBounds&, Checker& c) {
  const Operand &ids = c.in(0), &dst = c.out(0);
  c.notImmediate(ids, "segment ids");
  // "The partition dimension must always be 1"; "float32 or int32" [I sequence_bounds].
  c.lanes(ids, 1, "segment ids");
  c.lanes(dst, 1, "bounds");
  c.elems(dst, 2 * ids.freeElems, "a start and an end per segment id");
  for (const Operand* op : {&ids, &dst})
    if (op->dtype != DType::float32 && op->dtype != DType::int32)
      c.fail(c.name(*op) + " is " + std::string(enumName(op->dtype)) + "; sequence_bounds takes float32 or int32");
  c.pairsByPattern = false;  // every output element depends on its neighbours' ids
}

// Segments are runs of equal non-zero ids; element i gets the index of its run's first element
// and one past its last; id 0 (padding) gets n and -1.
void exec(const InstSequenceBounds&, Exec& x) {
  const Operand &ids = x.in(0), &dst = x.out(0);
  const int64_t n = ids.freeElems;
  int64_t* id = x.intSlot(3 * n);
  int64_t* bounds = id + n;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = x.readElement(ids, 0, i);
    const double v = ids.dtype == DType::int32 ? static_cast<double>(loadIndexElement(ids.dtype, p))
                                               : static_cast<double>(loadElement(ids.dtype, p));
    if (!(v >= 0) || v != std::floor(v))
      x.fail("segment id " + std::to_string(v) + " at element " + std::to_string(i) +
             " (segment ids are non-negative integers)");
    id[i] = static_cast<int64_t>(v);
  }
  int64_t* start = bounds;
  int64_t* end = bounds + n;
  for (int64_t i = 0; i < n; ++i)
    start[i] = id[i] == 0 ? n : (i > 0 && id[i] == id[i - 1] ? start[i - 1] : i);
  for (int64_t i = n; i-- > 0;)
    end[i] = id[i] == 0 ? -1 : (i + 1 < n && id[i] == id[i + 1] ? end[i + 1] : i + 1);
  x.scatterIntLane(dst, 0, bounds);
}

// ---- NonzeroWithCount: indices of the nonzero elements, padding, count ----

void check(const InstNonzeroWithCount& I, Checker& c) {
  const Operand &src = c.in(0), &dst = c.out(0);
  c.notImmediate(src, "source");
  // "Available only on NeuronCore-v3 and newer" (rule instruction.generation); src float32 or
  // int32, dst int32; one more element than src per partition [I nonzero_with_count].
  c.require(legality::generation(I.opcode(), c.engine, c.cfg));
  if (src.dtype != DType::float32 && src.dtype != DType::int32)
    c.fail("ins[0] is " + std::string(enumName(src.dtype)) + "; nonzero_with_count reads float32 or int32");
  if (dst.dtype != DType::int32)
    c.fail("outs[0] is " + std::string(enumName(dst.dtype)) + "; nonzero_with_count writes int32");
  c.lanes(dst, src.lanes, "destination");
  c.elems(dst, src.freeElems + 1, "one more than the source");
  onCoreBoundary(c, src, "source");
  onCoreBoundary(c, dst, "destination");
}

// Only the first partition of each GpSimd core (lanes 0, 16, 32, ...) is read and written; every
// such lane is read before any is written.
void exec(const InstNonzeroWithCount& I, Exec& x) {
  const Operand &src = x.in(0), &dst = x.out(0);
  const int64_t corePartitions = x.cfg.gpsimd_core_partitions;
  const int64_t n = src.freeElems, lanes = (src.lanes + corePartitions - 1) / corePartitions;
  float* v = x.slot(0, n);
  int64_t* out = x.intSlot(lanes * (n + 1));
  for (int64_t c = 0; c < lanes; ++c) {
    const int64_t l = c * corePartitions;
    int64_t* o = out + c * (n + 1);
    int64_t count = 0;
    if (src.dtype == DType::int32) {
      for (int64_t i = 0; i < n; ++i)
        if (loadIndexElement(src.dtype, x.readElement(src, l, i)) != 0) o[count++] = i + I.index_offset;
    } else {
      x.gatherLane(src, l, v);
      for (int64_t i = 0; i < n; ++i)
        if (v[i] != 0.0f) o[count++] = i + I.index_offset;  // NaN is nonzero
    }
    for (int64_t i = count; i < n; ++i) o[i] = I.padding_val;
    o[n] = count;
  }
  for (int64_t c = 0; c < lanes; ++c) x.scatterIntLane(dst, c * corePartitions, out + c * (n + 1));
}

}  // namespace sim

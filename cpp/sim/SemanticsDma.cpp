// DMA / Load / Save / DMACopy / IndirectSave: element-for-element copies between DRAM and SBUF (not
// PSUM: rule dma.psum), with casts, the add read-modify-write, 2-D transpose, and indirect rows
// (gathered, or scattered by IndirectSave). docs/isa-semantics.md §5.
#include <algorithm>
#include <cstring>

#include "Numerics.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

namespace {
// A transposing DMA's source as [a, b]: its pattern's dims other than unit ones (at most two;
// fewer are padded with 1 in front). False when more than two remain.
bool transposeDims(const bir::AccessPattern& ap, int64_t& a, int64_t& b) {
  int64_t dims[2] = {1, 1};
  int n = 0;
  for (const auto& pair : ap.pattern) {
    if (pair.num == 1) continue;
    if (n == 2) return false;
    dims[n++] = pair.num;
  }
  a = n == 2 ? dims[0] : 1;
  b = n == 2 ? dims[1] : dims[0];
  return true;
}

}  // namespace

void check(const InstDMA& I, Checker& c) {
  if (c.nIns == 1 && legality::plainDmaPasses(I.opcode(), c.facts(c.in(0)), c.facts(c.out(0)), I.mode,
                                              I.dst_rmw_op, I.dge_type)) {
    if (I.dst_rmw_op == AluOp::add) c.outAlsoRead = true;
    return;
  }
  legality::Dma d;
  d.opcode = I.opcode();
  d.engine = c.engine;
  d.src = c.facts(c.in(0));
  d.dst = c.facts(c.out(0));
  if (c.nIns == 2) {
    d.index = c.facts(c.in(1));
    c.pairsByPattern = false;  // the indexed side's rows follow the indices
  }
  d.mode = I.mode;
  d.dst_rmw_op = I.dst_rmw_op;
  d.dge_type = I.dge_type;
  d.indirect_dim = I.indirect_dim;
  // Only a transpose's source is held to two dims (dma.transpose-source).
  int64_t a, b;
  d.src_2d = I.mode != DmaMode::Transpose || transposeDims(I.ins[0], a, b);
  c.require(legality::dma(d, c.cfg));
  if (I.dst_rmw_op == AluOp::add) c.outAlsoRead = true;
}

void exec(const InstDMA& I, Exec& x) {
  const Operand &src = x.in(0), &dst = x.out(0);
  const bool add = I.dst_rmw_op == AluOp::add;

  if (x.nIns() == 2) {
    // Indirect. A gather: destination row r <- source row index[r]; a scatter (IndirectSave):
    // destination row index[r] <- source row r, in row order (a repeated index: the last row
    // wins, or every row adds); mode Dynamic: index[r] = the one offset + r. Rows are the
    // outermost pairs. Every index is read (and checked) before anything is written; where the
    // source or the index overlaps the destination (stage), so is every source row.
    const bool scatter = I.opcode() == InstructionType::IndirectSave;
    const Operand& idx = x.in(1);
    const Operand& indexed = scatter ? dst : src;
    const int64_t n = scatter ? src.lanes : dst.lanes;
    Memory& im = x.memory(idx);
    int64_t* rows = x.intSlot(n);
    const bool dynamic = I.mode == DmaMode::Dynamic;  // row r: the offset's value + r
    for (int64_t r = 0; r < n; ++r) {
      const int64_t k = dynamic ? 0 : r;
      const uint8_t* ip = x.lanePtr(idx, k / idx.freeElems) + idx.freeOffset(k % idx.freeElems);
      x.checkWritten(im, ip, 1, idx.esize, idx.esize, idx);
      const int64_t row = loadIndexElement(idx.dtype, ip) + (dynamic ? r : 0);
      if ((row < 0 || row >= indexed.lanes) && I.oob_is_err)
        x.fail("index " + std::to_string(row) + " for " + (scatter ? "source" : "destination") + " row " +
               std::to_string(r) + " is outside the " + std::to_string(indexed.lanes) +
               (scatter ? " destination" : " source") + " rows (oob_is_err)");
      rows[r] = row >= 0 && row < indexed.lanes ? row : -1;  // skipped
    }
    auto from = [&](int64_t r) { return scatter ? r : rows[r]; };
    auto to = [&](int64_t r) { return scatter ? rows[r] : r; };
    const int64_t rowBytes = src.freeElems * src.esize;
    uint8_t* staged = x.inst().stage ? x.byteSlot(n * rowBytes) : nullptr;
    if (staged)
      for (int64_t r = 0; r < n; ++r)
        if (rows[r] >= 0)
          x.copyStream(x.lane(src, from(r)), Exec::buffered(staged + r * rowBytes, src.dtype, src.freeElems, src), false);
    for (int64_t r = 0; r < n; ++r)
      if (rows[r] >= 0)
        x.copyStream(staged ? Exec::buffered(staged + r * rowBytes, src.dtype, src.freeElems, src) : x.lane(src, from(r)),
                     x.lane(dst, to(r)), add);
    return;
  }

  if (I.mode == DmaMode::Transpose) {
    // Source [a, b] lands as [b, a]: destination element j * a + i <- source (i, j), the source's
    // element i * b + j in enumeration order.
    int64_t a = 1, b = 1;
    transposeDims(I.ins[0], a, b);
    float* t = x.slot(2, a * b);
    const bool bytes = src.dtype == dst.dtype && !add;
    const int64_t es = src.esize;
    uint8_t* raw = x.byteSlot(a * b * es);
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j) {
        const int64_t k = i * b + j;
        const uint8_t* e = x.lanePtr(src, k / src.freeElems) + src.freeOffset(k % src.freeElems);
        x.checkWritten(x.memory(src), e, 1, es, static_cast<int>(es), src);
        std::memcpy(raw + (j * a + i) * es, e, static_cast<size_t>(es));
      }
    if (!bytes)
      for (int64_t e = 0; e < a * b; ++e) t[e] = loadElement(src.dtype, raw + e * es);
    // The staged elements, in destination order.
    const Operand flat = contiguousOperand(bytes ? src.dtype : DType::float32, a * b);
    uint8_t* staged = bytes ? raw : reinterpret_cast<uint8_t*>(t);
    x.copyStream(Exec::Stream{RunCursor(flat, staged), nullptr, flat.dtype, &src}, x.whole(dst), add);
    return;
  }

  if (!x.inst().stage) {
    x.copyWhole(src, dst, add);
    return;
  }
  // Source and destination overlap: copy the source out first.
  const int64_t n = src.numElements();
  uint8_t* buf = x.byteSlot(n * src.esize);
  x.copyStream(x.whole(src), Exec::buffered(buf, src.dtype, n, src), false);
  x.copyStream(Exec::buffered(buf, src.dtype, n, src), x.whole(dst), add);
}

}  // namespace sim

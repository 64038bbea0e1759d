// InstMatmult: the PE array, with PSUM accumulation groups and transpose mode.
// docs/isa-semantics.md §5; what the PE may be asked is bir::legality::matmul (bir/Legality.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "Numerics.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

void check(const InstMatmult& I, Checker& c) {
  legality::Matmul mm;
  mm.stationary = c.facts(c.in(0));
  mm.moving = c.facts(c.in(1));
  mm.out = c.facts(c.out(0));
  mm.is_transpose = I.is_transpose;
  mm.start = I.start_tensor_calc;
  mm.perf_mode = I.perf_mode;
  mm.tile_size = I.tile_size;
  mm.tile_position = I.tile_position;
  c.require(legality::matmul(mm, c.cfg));
}

namespace {

// The lane's elements contiguous in memory (one run)?
bool laneContiguous(const Operand& op) { return op.nfree <= 1 && op.innerContiguous(); }

std::string accumulatesOutsideGroup(const Memory& ps, int64_t word) {
  return "accumulates (start_tensor_calc false) into " + ps.describe(word * 4, 4) +
         ", where no matmul started an accumulation group";
}

// The initialisation check of the SBUF operand rows the kernel reads in place. The kernel runs it
// on its worker threads, ahead of any arithmetic, so it only answers yes or no; refuse() then
// repeats it on the caller to raise the error that names the byte. Tiles found written are
// remembered (CoreState::sbufWrittenTiles) and not checked again.
struct OperandRowsCheck {
  struct Tile {
    const Operand* op;
    int64_t width;  // elements per row
    bool check;
  };
  Exec* x;
  Tile tiles[2];

  OperandRowsCheck(Exec& exec, const Operand& st, int64_t m, const Operand& mv, int64_t n)
      : x(&exec), tiles{{&st, m, needed(st, m)}, {&mv, n, needed(mv, n)}} {}
  bool any() const { return tiles[0].check || tiles[1].check; }

  // In place (else gatherLane checks), tracked, and not known written.
  bool needed(const Operand& op, int64_t width) const {
    const Memory& sb = x->core.sbuf;
    return laneContiguous(op) && sb.tracked &&
           !x->core.sbufWrittenTiles.contains(x->lanePtr(op, 0) - sb.data, op.lanes, width * op.esize);
  }

  static bool rowsWritten(void* self, int k0, int k1) {
    const auto& c = *static_cast<const OperandRowsCheck*>(self);
    const Memory& sb = c.x->core.sbuf;
    for (const Tile& t : c.tiles) {
      if (!t.check) continue;
      for (int r = k0; r < k1; ++r) {
        if (r + 8 < k1) sb.written.prefetch(c.x->lanePtr(*t.op, r + 8) - sb.data);
        if (!sb.written.all(c.x->lanePtr(*t.op, r) - sb.data, t.width * t.op->esize)) return false;
      }
    }
    return true;
  }

  void remember() const {
    const Memory& sb = x->core.sbuf;
    for (const Tile& t : tiles)
      if (t.check) x->core.sbufWrittenTiles.insert(x->lanePtr(*t.op, 0) - sb.data, t.op->lanes, t.width * t.op->esize);
  }

  // The moving's columns no row of which any instruction has written (one flag per column), when
  // the unwritten bytes in it are exactly those columns; empty otherwise (some column written in
  // part: unwritten rows, say, a load for fewer partitions, are refused as before).
  std::vector<uint8_t> movingHoles() const {
    const Tile& t = tiles[1];
    if (!t.check) return {};
    const Memory& sb = x->core.sbuf;
    const int esize = t.op->esize;
    std::vector<uint8_t> holes(static_cast<size_t>(t.width), 0);
    bool any = false;
    for (int64_t r = 0; r < t.op->lanes; ++r) {
      const int64_t row = x->lanePtr(*t.op, r) - sb.data;
      for (int64_t j = 0; j < t.width; ++j) {
        const bool unwritten = !sb.written.all(row + j * esize, esize);
        if (r == 0)
          holes[static_cast<size_t>(j)] = unwritten, any |= unwritten;
        else if (unwritten != static_cast<bool>(holes[static_cast<size_t>(j)]))
          return {};
      }
    }
    return any ? holes : std::vector<uint8_t>{};
  }

  [[noreturn]] void refuse() const {
    for (const Tile& t : tiles)
      if (t.check)
        for (int64_t r = 0; r < t.op->lanes; ++r)
          x->checkWritten(x->core.sbuf, x->lanePtr(*t.op, r), t.width, t.op->esize, t.op->esize, *t.op);
    x->fail("reads unwritten SBUF");  // unreachable: rowsWritten and checkWritten agree
  }
};

}  // namespace

void exec(const InstMatmult& I, Exec& x) {
  const Operand &st = x.in(0), &mv = x.in(1), &out = x.out(0);
  const int64_t k = st.lanes, m = st.freeElems, n = mv.freeElems;
  CoreState& core = x.core;
  Memory& sb = core.sbuf;
  Memory& ps = core.psum;

  const bool direct = laneContiguous(out);
  // Only a product into PSUM in place, from SBUF rows in place, may be left in progress (run's
  // `deferrable`); other forms read or write PSUM here, after the parts still in progress.
  const bool deferrable = !I.is_transpose && direct && laneContiguous(st) && laneContiguous(mv);
  if (!deferrable) x.gemm.drain();
  if (I.is_transpose) {
    // out[j, i] = stationary[i, j], exactly (the identity is not read).
    const bool bytes = out.dtype == st.dtype;
    for (int64_t i = 0; i < k; ++i) {
      const uint8_t* src = x.lanePtr(st, i);
      for (int64_t j = 0; j < m; ++j) {
        const uint8_t* e = src + st.freeOffset(j);
        x.checkWritten(sb, e, 1, st.esize, st.esize, st);
        uint8_t* d = x.lanePtr(out, j) + out.freeOffset(i);
        if (bytes)
          std::memcpy(d, e, st.esize);
        else
          storeElement(out.dtype, d, loadElement(st.dtype, e));
        ps.written.set(d - ps.data, out.esize);
        core.psumGroup.set((d - ps.data) / 4, (out.esize + 3) / 4);
      }
    }
    return;
  }

  // Operand rows as the kernel wants them: contiguous rows in their own dtype (the kernel checks
  // they were written, see below), or gathered into fp32 (gatherLane checks).
  auto rows = [&](const Operand& op, int slot, int64_t width) {
    if (laneContiguous(op)) return MatrixRows{x.lanePtr(op, 0), sb.pitch, op.dtype};
    float* buf = x.slot(slot, op.lanes * width);
    for (int64_t r = 0; r < op.lanes; ++r) x.gatherLane(op, r, buf + r * width);
    return MatrixRows{reinterpret_cast<const uint8_t*>(buf), width * 4, DType::float32};
  };
  const MatrixRows a = rows(st, 0, m), b = rows(mv, 1, n);
  OperandRowsCheck check(x, st, m, mv, n);

  // Accumulating needs an open group on every output word [ref §2: accumulate=True on PSUM no
  // matmul started is UB, so the simulator refuses it].
  const bool acc = !I.start_tensor_calc;
  const int64_t outOffset = x.lanePtr(out, 0) - ps.data;
  if (acc) {
    if (direct) {
      if (!core.psumGroupTiles.contains(outOffset, m, n * 4)) {
        // Each row's marks are a 64-byte bitmap line a partition away from the next row's, cold
        // after the last product: all are requested before any is read.
        auto firstWord = [&](int64_t r) { return (outOffset + r * ps.pitch) / 4; };
        for (int64_t r = 0; r < m; ++r) core.psumGroup.prefetch(firstWord(r));
        for (int64_t r = 0; r < m; ++r)
          if (const int64_t bad = core.psumGroup.firstClear(firstWord(r), n); bad >= 0)
            x.fail(accumulatesOutsideGroup(ps, bad));
        core.psumGroupTiles.insert(outOffset, m, n * 4);
      }
    } else {
      for (int64_t r = 0; r < m; ++r) {
        RunCursor cur(out, x.lanePtr(out, r));
        while (!cur.done()) {
          const int64_t len = cur.remaining(), off = cur.ptr() - ps.data;
          for (int64_t i = 0; i < len; i += (cur.step() == 4 ? len : 1)) {
            const int64_t bad = core.psumGroup.firstClear((off + i * cur.step()) / 4, cur.step() == 4 ? len : 1);
            if (bad >= 0) x.fail(accumulatesOutsideGroup(ps, bad));
          }
          cur.advance(len);
        }
      }
    }
  }

  float* c = direct ? reinterpret_cast<float*>(x.lanePtr(out, 0)) : x.slot(2, m * n);
  const int64_t ldc = direct ? ps.pitch / 4 : n;
  if (!direct && acc)
    for (int64_t r = 0; r < m; ++r) x.gatherLane(out, r, c + r * n);
  // A stationary read in place may have its packed panels kept for the next matmul (PanelCache).
  const SbufTile aTile{quadrantsOf(st.p0, st.lanes), st.lo, st.hi};
  auto product = [&] {
    return x.gemm.run(static_cast<int>(k), static_cast<int>(m), static_cast<int>(n), a, b, c, ldc, acc,
                      check.any() ? &OperandRowsCheck::rowsWritten : nullptr, &check,
                      laneContiguous(st) ? &aTile : nullptr, deferrable);
  };
  // Moving columns no instruction has written in any row (a weight tile loaded for fewer columns
  // than the matmul reads) make only the PSUM columns they meet garbage: out[i, j] is a sum over
  // moving column j alone. Those output columns are left unwritten, so that whatever reads them later
  // is refused as this matmul was (a store that masks them reads none). Only for the forms that
  // track it exactly: a moving read in place from SBUF and a PSUM destination in place; anything
  // else (an unwritten stationary row reaches every output column) is refused here.
  std::vector<uint8_t> holes;
  if (!product()) {
    holes = check.movingHoles();
    if (holes.empty() || !direct) check.refuse();  // throws, naming the first unwritten byte
    check.tiles[1].check = false;
    if (!product()) check.refuse();  // (the stationary's)
  }
  check.remember();
  for (int64_t r = 0; r < m; ++r) {
    if (!direct) {
      // scatterLane would end the group; store and mark by hand.
      RunCursor cur(out, x.lanePtr(out, r));
      int64_t e = 0;
      while (!cur.done()) {
        const int64_t len = cur.remaining();
        storeRun(DType::float32, cur.ptr(), cur.step(), len, c + r * n + e);
        for (int64_t i = 0; i < len; ++i) {
          const int64_t off = cur.ptr() + i * cur.step() - ps.data;
          ps.written.set(off, 4);
          core.psumGroup.set(off / 4, 1);
        }
        e += len;
        cur.advance(len);
      }
    } else if (!acc) {  // an accumulating matmul found the group (and so the writes) in place
      const int64_t off = x.lanePtr(out, r) - ps.data;
      ps.written.set(off, n * 4);
      core.psumGroup.set(off / 4, n);
    }
  }
  if (direct && !acc) core.psumGroupTiles.insert(outOffset, m, n * 4);
  if (!holes.empty())
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j)
        if (holes[static_cast<size_t>(j)]) {
          const int64_t off = x.lanePtr(out, r) - ps.data + j * 4;
          ps.written.clear(off, 4);
          core.psumHoles.set(off / 4, 1);
          core.anyPsumHoles = true;
        }
}

}  // namespace sim

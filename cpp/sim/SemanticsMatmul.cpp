// InstMatmult: the PE array, with PSUM accumulation groups and transpose mode.
// docs/isa-semantics.md §5; limits and dtypes from nc_matmul [ref §2, §4].
#include <algorithm>
#include <cstring>

#include "Numerics.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

namespace {

bool isPeInputDtype(DType t, const MachineConfig& cfg) {
  switch (t) {
    case DType::float8e4:
    case DType::float8e5:
    case DType::bfloat16:
    case DType::float16:
    case DType::float32r:
    case DType::float32:
      return true;
    case DType::float8e3:  // "FP8_E3 runs at BF16 speed" is a v3 statement [A2]
      return cfg.pe_fp8_double_row;
    default:
      return false;
  }
}
bool isFp32(DType t) { return t == DType::float32 || t == DType::float32r; }
bool isFp8(DType t) { return t == DType::float8e4 || t == DType::float8e5 || t == DType::float8e3; }

}  // namespace

void check(const InstMatmult& I, Checker& c) {
  const Operand &st = c.in(0), &mv = c.in(1), &out = c.out(0);
  const MachineConfig& cfg = c.cfg;
  for (const Operand* op : {&st, &mv}) {
    c.notImmediate(*op, "matmul operand");
    if (op->space != Space::SBUF)
      c.fail(c.name(*op) + " is in " + spaceName(op->space) + "; the PE reads its operands from SBUF");
    if (!isPeInputDtype(op->dtype, cfg))
      c.fail(c.name(*op) + " has dtype " + std::string(enumName(op->dtype)) + ", which the PE does not take on " + cfg.arch);
  }
  if (isFp32(st.dtype) != isFp32(mv.dtype))
    c.fail("if one matmul operand is fp32 both must be (stationary " + std::string(enumName(st.dtype)) +
           ", moving " + std::string(enumName(mv.dtype)) + ")");
  if (out.space != Space::PSUM) c.fail("outs[0] is in " + std::string(spaceName(out.space)) + "; the PE writes PSUM");
  const int64_t k = st.lanes, m = st.freeElems, n = mv.freeElems;
  if (mv.lanes != k)
    c.fail("stationary has K = " + std::to_string(k) + " partitions but moving has " + std::to_string(mv.lanes));
  if (k > cfg.pe_rows) c.fail("K = " + std::to_string(k) + " exceeds the " + std::to_string(cfg.pe_rows) + " PE rows");
  if (m > cfg.pe_cols) c.fail("M = " + std::to_string(m) + " (stationary free size) exceeds the " + std::to_string(cfg.pe_cols) + " PE columns");
  if (n > cfg.pe_max_moving_free_elements)
    c.fail("N = " + std::to_string(n) + " (moving free size) exceeds " + std::to_string(cfg.pe_max_moving_free_elements));
  c.lanes(out, m, "result: M partitions");
  if (I.is_transpose) {
    if (n != k) c.fail("transpose mode takes the [K, K] identity as moving; it has " + std::to_string(n) + " columns");
    c.elems(out, k, "transposed: K elements");
    if (out.dtype != st.dtype && !isFp32(out.dtype))
      c.fail("a PE transpose writes the stationary's dtype or fp32, not " + std::string(enumName(out.dtype)));
    if (!I.start_tensor_calc) c.fail("a PE transpose cannot accumulate (start_tensor_calc is false)");
  } else {
    c.elems(out, n, "result: N elements");
    if (out.dtype != DType::float32) c.fail("the PE accumulates in fp32 PSUM; outs[0] is " + std::string(enumName(out.dtype)));
  }
  if (out.base % 4 != 0) c.fail("outs[0] starts at PSUM byte " + std::to_string(out.base) + ", not on a 4-byte word");
  // One accumulation group lives in one 2 KiB bank per partition [ref §2].
  const int64_t bank = cfg.psum_bank_bytes;
  if (out.lo / bank != (out.hi - 1) / bank)
    c.fail("outs[0] covers PSUM bytes [" + std::to_string(out.lo) + ", " + std::to_string(out.hi) +
           ") of each partition, crossing the bank boundary at " + std::to_string((out.lo / bank + 1) * bank) +
           ": an accumulation group must fit one " + std::to_string(bank) + "-byte PSUM bank");
  switch (I.perf_mode) {
    case PerfMode::None: break;
    case PerfMode::DoubleRow:
      if (!cfg.pe_fp8_double_row) c.fail("perf_mode DoubleRow needs NeuronCore-v3 or later");
      if (!isFp8(st.dtype) || !isFp8(mv.dtype)) c.fail("perf_mode DoubleRow takes fp8 operands");
      break;
    default: c.fail(std::string("perf_mode ") + std::string(enumName(I.perf_mode)) + " is not modelled");
  }
  // PE tiling: the array splits into 2x64 (v2) or 4x32 (v3) tiles [I].
  if (!I.tile_size.empty() || !I.tile_position.empty()) {
    if (I.tile_size.size() != 2 || I.tile_position.size() != 2)
      c.fail("tile_size and tile_position take [rows, cols] and [row, col]");
    const int64_t g = cfg.pe_fp8_double_row ? 32 : 64;
    const int64_t rows = I.tile_size[0], cols = I.tile_size[1], r0 = I.tile_position[0], c0 = I.tile_position[1];
    for (int64_t v : {rows, cols, r0, c0})
      if (v < 0 || v % g != 0) c.fail("PE tile sizes and positions are multiples of " + std::to_string(g) + " on " + cfg.arch);
    if (rows == 0 || cols == 0 || r0 + rows > cfg.pe_rows || c0 + cols > cfg.pe_cols)
      c.fail("PE tile [" + std::to_string(r0) + "+" + std::to_string(rows) + ", " + std::to_string(c0) + "+" +
             std::to_string(cols) + "] does not fit the array");
    if (k > rows || m > cols)
      c.fail("K x M = " + std::to_string(k) + " x " + std::to_string(m) + " does not fit the " +
             std::to_string(rows) + " x " + std::to_string(cols) + " PE tile");
  }
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
  if (!x.gemm.run(static_cast<int>(k), static_cast<int>(m), static_cast<int>(n), a, b, c, ldc, acc,
                  check.any() ? &OperandRowsCheck::rowsWritten : nullptr, &check,
                  laneContiguous(st) ? &aTile : nullptr, deferrable))
    check.refuse();  // throws, naming the first unwritten byte
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
}

}  // namespace sim

"""Numerics of reductions, statistics, searches, cross-lane moves, index instructions, the PE and
DMA, against NumPy (docs/isa-semantics.md §5). Sums are sequential fp32 folds on the simulator and
pairwise in NumPy, hence rtol 1e-5 on them; everything else is exact."""

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import SimulationError, bir, sim
from neuronxsim.bir import AluOp, DType, DmaMode, Engine, ReduceAxis

from simkit import Kit, f32, to_dtype

P = 128


@pytest.mark.parametrize("op,ref", [("add", np.sum), ("max", np.max), ("min", np.min), ("mult", np.prod)])
@pytest.mark.parametrize("axis", ["X", "XY"])
def test_tensor_reduce(kit, rng, op, ref, axis):
    x = f32(rng.uniform(0.9, 1.1, (P, 4, 8, 16)))
    src = kit.load(x)
    groups = 4 * 8 if axis == "X" else 4
    out = kit.sbuf(P, groups)
    kit.add("TensorReduce", [kit.tile(src, free=[(128, 4), (16, 8), (1, 16)])], [kit.tile(out)],
            op=getattr(AluOp, op), axis=getattr(ReduceAxis, axis), negate=True)
    got = kit.fetch(out)
    want = -ref(x.reshape(P, groups, -1).astype(np.float64), axis=2)
    np.testing.assert_allclose(got, f32(want), rtol=1e-5)


@pytest.mark.parametrize("op,ref", [("add", np.sum), ("max", np.max), ("min", np.min), ("mult", np.prod)])
@pytest.mark.parametrize("axis,dims", [("XYZ", 3), ("XYZ", 4), ("XYZW", 4)])
def test_tensor_reduce_three_and_four_free_axes(kit, rng, op, ref, axis, dims):
    """Patterns whose free dims do not merge (no dim is contiguous with the next), so the folded groups
    follow the pattern as written: the last 3 (XYZ) or 4 (XYZW) dims fold, the ones before stay."""
    x = f32(rng.uniform(0.9, 1.1, (P, 2, 3, 4, 5)))  # element strides 60, 20, 5, 1
    src = kit.load(x)
    if dims == 4:  # dims in the order 4, 2, 5, 3
        free, col, view = [(5, 4), (60, 2), (1, 5), (20, 3)], 0, x.transpose(0, 3, 1, 4, 2)
    else:  # x[:, :, 1] with its dims in the order 5, 2, 4
        free, col, view = [(1, 5), (60, 2), (5, 4)], 20, x[:, :, 1].transpose(0, 3, 1, 2)
    folded = {"XYZ": 3, "XYZW": 4}[axis]
    groups = int(np.prod(view.shape[1:1 + dims - folded]))
    out = kit.sbuf(P, groups)
    kit.add("TensorReduce", [kit.tile(src, col=col, free=free)], [kit.tile(out)],
            op=getattr(AluOp, op), axis=getattr(ReduceAxis, axis), negate=True)
    got = kit.fetch(out)
    want = -ref(view.reshape(P, groups, -1).astype(np.float64), axis=2)
    np.testing.assert_allclose(got, f32(want), rtol=1e-5)


def test_tensor_reduce_subtract_folds_left_to_right(kit, rng):
    x = f32(rng.normal(size=(P, 16)))
    src, out = kit.load(x), kit.sbuf(P, 1)
    kit.add("TensorReduce", [kit.tile(src)], [kit.tile(out)], op=AluOp.subtract, axis=ReduceAxis.X)
    got = kit.fetch(out)
    ref = x[:, 0].copy()
    for i in range(1, 16):
        ref = ref - x[:, i]
    np.testing.assert_array_equal(got[:, 0], ref)


def test_bn_stats_and_aggregate(kit, rng):
    x = f32(rng.normal(2.0, 3.0, (P, 2, 100)))
    src = kit.load(x)
    stats = kit.sbuf(P, 12)
    mv = kit.sbuf(P, 2)
    for i in range(2):
        kit.add("BNStats", [kit.tile(src, col=100 * i, elems=100)], [kit.tile(stats, col=6 * i, elems=6)])
    kit.add("BNStatsAggregate", [kit.tile(stats)], [kit.tile(mv)])
    s_name = kit.store(stats)
    got = kit.fetch(mv)
    st = kit.result.outputs[s_name]
    x64 = x.astype(np.float64)
    even, odd = x64[:, 0, 0::2], x64[:, 0, 1::2]
    np.testing.assert_array_equal(st[:, 0], 50)
    np.testing.assert_allclose(st[:, 1], even.mean(1), rtol=1e-5)
    np.testing.assert_allclose(st[:, 2], even.var(1) * 50, rtol=1e-4)
    np.testing.assert_allclose(st[:, 4], odd.mean(1), rtol=1e-5)
    np.testing.assert_allclose(got[:, 0], x64.reshape(P, -1).mean(1), rtol=1e-5)
    np.testing.assert_allclose(got[:, 1], x64.reshape(P, -1).var(1), rtol=1e-4)


def test_max8_find_index8_match_replace8(kit, rng):
    x = f32(rng.permutation(np.arange(P * 64)).reshape(P, 64) % 97)  # repeated values
    src = kit.load(x)
    top, idx, rep, ridx = kit.sbuf(P, 8), kit.sbuf(P, 8, DType.uint32), kit.sbuf(P, 64), kit.sbuf(P, 8, DType.uint32)
    kit.add("Max", [kit.tile(src)], [kit.tile(top)])
    kit.add("MaxIndex", [kit.tile(src), kit.tile(top)], [kit.tile(idx)])
    kit.add("MatchReplace", [kit.tile(src), kit.tile(top)], [kit.tile(rep), kit.tile(ridx)], imm_value=-1.0)
    names = [kit.store(t) for t in (top, idx, rep, ridx)]
    out = kit.run()
    ref_top = -np.sort(-x, axis=1)[:, :8]
    np.testing.assert_array_equal(out[names[0]], ref_top)

    def paired(order):  # each value at the first position no value before it (in `order`) took
        idx, taken = np.zeros((P, 8), np.int64), np.zeros((P, 64), bool)
        for p, k in ((p, k) for p in range(P) for k in order):
            idx[p, k] = i = np.flatnonzero((x[p] == ref_top[p, k]) & ~taken[p])[0]
            taken[p, i] = True
        return idx, taken
    np.testing.assert_array_equal(out[names[1]], paired(range(8))[0])  # equal values: ascending
    ref_idx, taken = paired(range(7, -1, -1))  # descending (SDK 2.32 nc_match_replace8 page)
    np.testing.assert_array_equal(out[names[2]], np.where(taken, np.float32(-1), x))
    np.testing.assert_array_equal(out[names[3]], ref_idx)


def test_find_index8_missing_value(kit):
    x = f32(np.tile(np.arange(16), (P, 1)))
    vals = f32(np.tile([3, 99, 0, 15, -1, 7, 7, 1], (P, 1)))
    src, v, idx = kit.load(x), kit.load(vals), kit.sbuf(P, 8, DType.uint32)
    kit.add("MaxIndex", [kit.tile(src), kit.tile(v)], [kit.tile(idx)])
    got = kit.fetch(idx)
    np.testing.assert_array_equal(got[0], [3, 0xFFFFFFFF, 0, 15, 0xFFFFFFFF, 7, 0xFFFFFFFF, 1])  # one 7 to take


def test_stream_shuffle_and_transpose(kit, rng):
    x = f32(rng.normal(size=(P, 16)))
    mask = [(7 * i + 3) % 32 for i in range(32)]
    mask[5] = 255
    src, out = kit.load(x), kit.load(np.zeros((P, 16), np.float32))
    kit.add("StreamShuffle", [kit.tile(src)], [kit.tile(out)], shuffle_mask=mask)
    t_in = kit.load(f32(rng.normal(size=(32, 24))))
    t_out = kit.sbuf(24, 32)
    kit.add("StreamTranspose", [kit.tile(t_in)], [kit.tile(t_out)])
    n_sh = kit.store(out)
    got_t = kit.fetch(t_out)
    got = kit.result.outputs[n_sh]
    ref = np.zeros_like(x)
    for i in range(P):
        if mask[i % 32] != 255:
            ref[i] = x[32 * (i // 32) + mask[i % 32]]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got_t, kit.inputs[next(n for n in kit.inputs if kit.inputs[n].shape == (32, 24))].T)


def test_iota_and_affine_select_causal_mask(kit, rng):
    io, io_f = kit.sbuf(P, 64, DType.int32), kit.sbuf(P, 64, DType.float32)
    pattern = [bir.APPair(8, 4), bir.APPair(-1, 16)]
    kit.add("Iota", [], [kit.tile(io)], base=5, pattern=pattern, channel_multiplier=3)
    kit.add("Iota", [], [kit.tile(io_f)], base=-2, pattern=[bir.APPair(1, 64)], channel_multiplier=0)
    x = f32(rng.normal(size=(P, P)))
    src, masked = kit.load(x), kit.sbuf(P, P)
    # keep x[p, j] where p - j >= 0 (causal), else -9984
    kit.add("TensorScalarAffineSelect", [kit.tile(src)], [kit.tile(masked)], base=0,
            pattern=[bir.APPair(-1, P)], channel_multiplier=1, compare_op=AluOp.is_ge, fill_value=-9984.0)
    names = [kit.store(t) for t in (io, io_f, masked)]
    out = kit.run()
    p = np.arange(P)[:, None]
    i, j = np.meshgrid(np.arange(4), np.arange(16), indexing="ij")
    ref = 5 + 3 * p + (8 * i - j).reshape(1, -1)
    np.testing.assert_array_equal(out[names[0]], ref.astype(np.int32))
    np.testing.assert_array_equal(out[names[1]], np.tile(np.arange(64) - 2, (P, 1)).astype(np.float32))
    np.testing.assert_array_equal(out[names[2]], np.where(p - np.arange(P)[None, :] >= 0, x, np.float32(-9984)))


def test_range_select_on_trn2(kit2, rng):
    kit = kit2
    x = f32(rng.normal(size=(P, 64)))
    lo, hi = f32(rng.integers(0, 30, (P, 1))), f32(rng.integers(30, 64, (P, 1)))
    src, b0, b1, out, mx = kit.load(x), kit.load(lo), kit.load(hi), kit.sbuf(P, 64), kit.sbuf(P, 1)
    kit.add("RangeSelect", [kit.tile(src), kit.tile(b0), kit.tile(b1)], [kit.tile(out), kit.tile(mx)],
            comp_op0=AluOp.is_ge, comp_op1=AluOp.is_lt, range_start=2, fill_value=-1e30)
    n_mx = kit.store(mx)
    got = kit.fetch(out)
    j = np.arange(64)[None, :] + 2
    ref = np.where((j >= lo) & (j < hi), x, np.float32(-1e30))
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(kit.result.outputs[n_mx][:, 0], ref.max(1))


def test_tensor_copy_dynamic_src_and_dst(kit, rng):
    x = f32(rng.normal(size=(P, 64)))
    off = np.full((1, 1), 3, np.int32)
    src, o = kit.load(x), kit.load(off, DType.int32)
    a, b = kit.sbuf(P, 8), kit.load(np.zeros((P, 64), np.float32))
    kit.add("TensorCopyDynamicSrc", [kit.tile(src, elems=8), kit.tile(o)], [kit.tile(a)], dynamic_step=8)
    kit.add("TensorCopyDynamicDst", [kit.tile(a), kit.tile(o)], [kit.tile(b, elems=8)], dynamic_step=2)
    n_a = kit.store(a)
    got_b = kit.fetch(b)
    np.testing.assert_array_equal(kit.result.outputs[n_a], x[:, 24:32])
    ref = np.zeros((P, 64), np.float32)
    ref[:, 6:14] = x[:, 24:32]
    np.testing.assert_array_equal(got_b, ref)


# ---- PE ----

@pytest.mark.parametrize("dtype", [DType.bfloat16, DType.float16, DType.float32, DType.float8e4, DType.float8e5])
def test_matmul_accumulation_group(kit, rng, dtype):
    k, m, n = 128, 96, 320
    st = [to_dtype(rng.normal(size=(k, m)), dtype) for _ in range(3)]
    mv = [to_dtype(rng.normal(size=(k, n)), dtype) for _ in range(3)]
    ts = [kit.load(f32(a), dtype) for a in st]
    tm = [kit.load(f32(b), dtype) for b in mv]
    acc = kit.psum(m, n)
    for i in range(3):
        kit.b.matmul(kit.tile(acc), kit.tile(ts[i]), kit.tile(tm[i]), start=i == 0, stop=i == 2)
    got = kit.fetch(acc)
    ref = sum(f32(a).T.astype(np.float64) @ f32(b).astype(np.float64) for a, b in zip(st, mv))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


def test_matmul_restart_overwrites(kit, rng):
    a, b = f32(rng.normal(size=(64, 32))), f32(rng.normal(size=(64, 16)))
    ta, tb, acc = kit.load(a, DType.bfloat16), kit.load(b, DType.bfloat16), kit.psum(32, 16)
    kit.b.matmul(kit.tile(acc), kit.tile(ta), kit.tile(tb))
    kit.b.matmul(kit.tile(acc), kit.tile(ta), kit.tile(tb), start=True)
    got = kit.fetch(acc)
    a16, b16 = f32(to_dtype(a, DType.bfloat16)), f32(to_dtype(b, DType.bfloat16))
    np.testing.assert_allclose(got, a16.T @ b16, rtol=1e-5, atol=1e-5)


def test_matmul_sees_writes_to_operands_it_read_before(kit, rng):
    """The kernel keeps packed operands from one matmul to the next (cpp/sim/PanelCache.h). A DMA
    into a corner of the stationary and an engine's write into a few columns of the moving must
    reach the next matmul that reads them, and a second run with other inputs must not see the
    first run's operands."""
    k, m, n, bf16 = 128, 128, 256, DType.bfloat16
    ta, tb, tp = kit.load(np.zeros((k, m)), bf16), kit.load(np.zeros((k, n)), bf16), kit.load(np.zeros((k, 4)), bf16)
    names = list(kit.inputs)  # stationary, moving, the moving's patch
    kit.inputs["corner"] = np.zeros((32, 16), ml_dtypes.bfloat16)
    corner = kit.b.input("corner", [32, 16], bf16)
    accs = [kit.psum(m, n) for _ in range(3)]
    for _ in range(4):  # seen again and again: kept
        kit.b.matmul(kit.tile(accs[0]), kit.tile(ta), kit.tile(tb))
    kit.b.dma(kit.tile(ta, partitions=32, start_partition=32, col=10, elems=16), kit.b.full(corner))
    kit.b.matmul(kit.tile(accs[1]), kit.tile(ta), kit.tile(tb))
    kit.add("TensorCopy", [kit.tile(tp)], [kit.tile(tb, col=100, elems=4)], engine=Engine.DVE)
    kit.b.matmul(kit.tile(accs[2]), kit.tile(ta), kit.tile(tb))
    outs = [kit.store(acc) for acc in accs]
    for _ in range(2):
        for name in names + ["corner"]:
            kit.inputs[name] = to_dtype(rng.normal(size=kit.inputs[name].shape), bf16)
        a, b = f32(kit.inputs[names[0]]).astype(np.float64), f32(kit.inputs[names[1]]).astype(np.float64)
        a1, b1 = a.copy(), b.copy()
        a1[32:64, 10:26] = f32(kit.inputs["corner"])
        b1[:, 100:104] = f32(kit.inputs[names[2]])
        got = kit.run()
        for out, ref in zip(outs, [a.T @ b, a1.T @ b, a1.T @ b1]):
            np.testing.assert_allclose(got[out], ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_matmuls_left_in_progress_give_the_one_thread_bits(kit, rng):
    """With two threads, a matmul's helper columns may still be in progress when the next
    instruction starts (GemmEngine::run, deferrable). The next matmul of the same group, one that
    restarts an overlapping PSUM region in another shape, an evacuation, and an SBUF write to the
    moving operand must all see the finished product: the result is bit-identical to one thread's
    and matches float64 NumPy."""
    k, m, n, bf16 = 128, 128, 512, DType.bfloat16
    st = [to_dtype(rng.normal(size=(k, m)), bf16) for _ in range(3)]
    mv = [to_dtype(rng.normal(size=(k, n)), bf16) for _ in range(3)]
    ts, tm = [kit.load(f32(a), bf16) for a in st], [kit.load(f32(b), bf16) for b in mv]
    patch = to_dtype(rng.normal(size=(k, 64)), bf16)
    tp = kit.load(f32(patch), bf16)
    acc, ys, edge = kit.psum(m, n), kit.sbuf(m, n), kit.sbuf(m, 32)
    for i in range(3):
        kit.b.matmul(kit.tile(acc), kit.tile(ts[i]), kit.tile(tm[i]), start=i == 0)
    for i in range(2):  # restarts columns [128, 384) of the same bank, 256 wide
        kit.b.matmul(kit.tile(acc, col=128, elems=256), kit.tile(ts[i]), kit.tile(tm[2], col=64, elems=256),
                     start=i == 0)
    kit.b.matmul(kit.tile(acc), kit.tile(ts[2]), kit.tile(tm[0]), start=False)
    kit.add("TensorCopy", [kit.tile(acc, col=480, elems=32)], [kit.tile(edge)])  # small: no worker threads
    kit.add("TensorCopy", [kit.tile(acc)], [kit.tile(ys)])
    kit.add("TensorCopy", [kit.tile(tp)], [kit.tile(tm[0], col=0, elems=64)])  # the moving just read
    kit.b.matmul(kit.tile(acc), kit.tile(ts[0]), kit.tile(tm[0]), start=True)
    outs = [kit.store(ys), kit.store(acc), kit.store(edge)]
    two, one = kit.run(), kit.run(threads=1)
    for name in outs:
        np.testing.assert_array_equal(two[name], one[name])
    a = [f32(x).astype(np.float64) for x in st]
    b = [f32(x).astype(np.float64) for x in mv]
    ref = a[0].T @ b[0] + a[1].T @ b[1] + a[2].T @ b[2]
    ref[:, 128:384] = a[0].T @ b[2][:, 64:320] + a[1].T @ b[2][:, 64:320]
    ref += a[2].T @ b[0]
    b0 = b[0].copy()
    b0[:, :64] = f32(patch)
    for got, want in zip([two[name] for name in outs], [ref, a[0].T @ b0, ref[:, 480:]]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_pe_transpose_is_bit_exact(kit, rng):
    x = to_dtype(rng.normal(size=(64, 96)), DType.bfloat16)
    x.view(np.uint16)[0, :3] = [0x7FC1, 0xFF80, 0x0001]  # NaN payload, -inf, subnormal
    name = "xt"
    kit.inputs[name] = x
    d = kit.b.input(name, [64, 96], DType.bfloat16)
    t = kit.sbuf(64, 96, DType.bfloat16)
    kit.b.dma(kit.tile(t), kit.b.full(d))
    ident = kit.load(np.eye(64, dtype=np.float32), DType.bfloat16)
    out = kit.psum(96, 64, DType.bfloat16)
    kit.b.matmul(kit.tile(out), kit.tile(t), kit.tile(ident), is_transpose=True)
    got = kit.fetch(out)
    np.testing.assert_array_equal(got.view(np.uint16), x.T.view(np.uint16))


# ---- DMA ----

def test_dma_casts_strides_and_accumulate(kit, rng):
    x = f32(rng.normal(size=(64, 32)))
    kit.inputs["x"] = x
    d = kit.b.input("x", [64, 32], DType.float32)
    y = kit.b.output("y", [32, 64], DType.bfloat16)
    z = kit.b.output("z", [64, 32], DType.float32)
    t = kit.sbuf(32, 64, DType.bfloat16)
    # strided DRAM read: t[p, j] = x[j, p] (a transposing access pattern), cast to bf16
    kit.b.dma(kit.tile(t), kit.b.ap(d, 0, [(1, 32), (32, 64)]))
    kit.b.dma(kit.b.full(y), kit.tile(t), queue=3)
    kit.b.dma(kit.b.full(z), kit.b.full(d))
    kit.b.dma(kit.b.full(z), kit.b.full(d), queue=1, dst_rmw_op=AluOp.add)
    out = kit.run()
    np.testing.assert_array_equal(out["y"], to_dtype(x.T, DType.bfloat16))
    np.testing.assert_array_equal(out["z"], x + x)


def test_dma_transpose_mode(kit, rng):
    x = f32(rng.normal(size=(16, 48)))
    kit.inputs["x"] = x
    d = kit.b.input("x", [16, 48], DType.float32)
    y = kit.b.output("y", [48, 16], DType.float32)
    kit.b.dma(kit.b.full(y), kit.b.full(d), mode=DmaMode.Transpose)
    np.testing.assert_array_equal(kit.run()["y"], x.T)


def test_dma_transpose_drops_unit_dims(kit, rng):
    """[16, 1, 48] (unit dims aside, 2-D) lands as [48, 16]; a pattern with three dims over one is
    refused."""
    x = f32(rng.normal(size=(16, 48)))
    kit.inputs["x"] = x
    d = kit.b.input("x", [16, 48], DType.float32)
    y = kit.b.output("y", [48, 16], DType.float32)
    kit.b.dma(kit.b.full(y), kit.b.ap(d, 0, [(48, 16), (0, 1), (1, 48)]), mode=DmaMode.Transpose)
    np.testing.assert_array_equal(kit.run()["y"], x.T)
    kit.b.dma(kit.b.full(y), kit.b.ap(d, 0, [(48, 16), (24, 2), (1, 24)]), mode=DmaMode.Transpose, name="three")
    with pytest.raises(SimulationError, match=r"DMA 'three'.*a DMA transpose takes a 2-D source"):
        kit.run()


def test_dma_indirect_gather(kit, rng):
    table = f32(rng.normal(size=(100, 24)))
    idx = np.array([[5], [99], [0], [150], [7], [-1], [42], [5]], np.int32)
    kit.inputs.update(table=table, idx=idx)
    dt = kit.b.input("table", [100, 24], DType.float32)
    di = kit.b.input("idx", [8, 1], DType.int32)
    out = kit.b.output("rows", [8, 24], DType.float32)
    i_sb = kit.sbuf(8, 1, DType.int32)
    kit.b.dma(kit.tile(i_sb), kit.b.full(di))
    kit.b.add("DMA", [kit.b.full(dt), kit.tile(i_sb)], [kit.b.full(out)], oob_is_err=False)
    got = kit.run()["rows"]
    for r, i in enumerate(idx[:, 0]):
        if 0 <= i < 100:
            np.testing.assert_array_equal(got[r], table[i])
        else:
            assert np.isnan(got[r]).all(), "skipped rows stay unwritten"


def test_in_place_gathers_and_dynamic_copies_read_their_source_first(kit):
    """Sources that overlap their destinations in an order only known at run time (an indirect
    DMA's rows, a dynamic copy's moved pattern) are read in full before anything is written."""
    t = kit.load(f32([[1, 2], [3, 4]]))
    idx = kit.load(np.array([[1], [0]], np.int32), DType.int32)
    col0 = kit.tile(t, elems=1)
    kit.b.add("DMA", [col0, kit.tile(idx)], [col0])  # rows of column 0 swapped, in place
    np.testing.assert_array_equal(kit.fetch(t), [[3, 2], [1, 4]])

    kit = Kit()
    u = kit.load(f32(np.arange(8)[None, :]))
    four = kit.load(np.array([[4]], np.int32), DType.int32)
    # u[7], u[6], u[5], u[4] onto u[0..3] moved by 4 elements: onto u[4..7] themselves, reversed
    kit.add("TensorCopyDynamicDst", [kit.tile(u, col=7, free=[(-1, 4)]), kit.tile(four)], [kit.tile(u, elems=4)],
            dynamic_step=1)
    np.testing.assert_array_equal(kit.fetch(u), [[0, 1, 2, 3, 7, 6, 5, 4]])


@pytest.mark.parametrize("dtype", [DType.float32, DType.bfloat16])
def test_second_output_is_written_last(rng, dtype):
    """An instruction writes outs[0], then outs[1] (docs/isa-semantics.md §1): a SelectReduce whose
    [P, 1] sum lands on column 3 of its own selection leaves the sum there, in every dtype path."""
    kit = Kit()
    pred = f32(rng.integers(0, 2, (P, 8)))
    data = f32(rng.integers(-8, 8, (P, 8)))
    p, d = kit.load(pred, dtype), kit.load(data, dtype)
    out = kit.sbuf(P, 8, dtype)
    kit.add("SelectReduce", [kit.tile(p), kit.tile(d)], [kit.tile(out), kit.tile(out, col=3, elems=1)],
            on_false_value=-1.0, reduce_op=AluOp.add)
    want = np.where(pred != 0, data, -1)
    want[:, 3] = want.sum(axis=1)
    np.testing.assert_array_equal(kit.fetch(out), want)


def test_internal_dram_round_trip(kit, rng):
    x = f32(rng.normal(size=(P, 32)))
    src = kit.load(x)
    scratch = kit.b.dram("scratch", [P, 32], DType.float16)
    kit.b.dma(kit.b.full(scratch), kit.tile(src))
    back = kit.sbuf(P, 32)
    kit.b.dma(kit.tile(back), kit.b.full(scratch))
    np.testing.assert_array_equal(kit.fetch(back), f32(to_dtype(x, DType.float16)))


def test_device_print(kit, rng):
    x = f32(rng.normal(size=(4, 8)))
    src = kit.load(x)
    kit.add("DevicePrint", [kit.tile(src)], [], prefix="x =")
    kit.run()
    (inst, prefix, values), = kit.result.prints
    assert prefix == "x =" and inst.startswith("DevicePrint")
    np.testing.assert_array_equal(values, x)


def test_output_dtype_fp8_inputs_view(kit, rng):
    """Inputs are bound without copies: the simulator sees exactly the caller's fp8 bytes."""
    x = to_dtype(rng.normal(size=(P, 16)) * 100, DType.float8e5)
    kit.inputs["x8"] = x
    d = kit.b.input("x8", [P, 16], DType.float8e5)
    t = kit.sbuf(P, 16, DType.float32)
    kit.b.dma(kit.tile(t), kit.b.full(d))
    np.testing.assert_array_equal(kit.fetch(t), x.astype(np.float32))
    assert x.dtype == ml_dtypes.float8_e5m2


def _stage_bits(kit, name, array, dtype):
    """``array`` (of dtype's NumPy type) in a new SBUF tensor, bit for bit (Kit.load goes through fp32)."""
    kit.inputs[name] = array
    loc = kit.sbuf(array.shape[0], array.shape[1], dtype)
    kit.b.dma(kit.tile(loc), kit.b.full(kit.b.input(name, list(array.shape), dtype)))
    return loc


def _transpose_by_blocks(kit, src, dst, lanes, per_lane):
    """dst = src.T by StreamTransposes of at most 32 x 32 (so the blocks of a [70, 45] tile)."""
    for p0 in range(0, lanes, 32):
        for c0 in range(0, per_lane, 32):
            n_p, n_c = min(32, lanes - p0), min(32, per_lane - c0)
            kit.add("StreamTranspose", [kit.tile(src, n_p, n_c, start_partition=p0, col=c0)],
                    [kit.tile(dst, n_c, n_p, start_partition=c0, col=p0)])


@pytest.mark.parametrize("dtype", [DType.int32, DType.uint32, DType.float32, DType.bfloat16, DType.float16,
                                   DType.int8])
def test_stream_transpose_of_one_dtype_moves_every_bit(kit, rng, dtype):
    """Of one dtype, StreamTranspose copies elements exactly (docs/isa-semantics.md §2): random bit
    patterns (NaN payloads among them) and the int32 values fp32 cannot hold (2^24 + 1, 2^31 - 1,
    large negative ones) arrive unchanged; through fp32 they were rounded."""
    nd = sim.dtype_to_numpy(dtype)
    x = rng.integers(0, 256, size=(70, 45 * np.dtype(nd).itemsize), dtype=np.uint8).view(nd)
    if dtype == DType.int32:
        x[0, :6] = [2**24 + 1, 2**31 - 1, -2**31, -123456789, 2**30 + 1, -(2**24) - 3]
    src, dst = _stage_bits(kit, "x", x, dtype), kit.sbuf(45, 70, dtype)
    _transpose_by_blocks(kit, src, dst, 70, 45)
    got = kit.fetch(dst)
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(x.T).view(np.uint8))


@pytest.mark.parametrize("src_dtype,dst_dtype", [(DType.int32, DType.float32), (DType.float32, DType.bfloat16),
                                                 (DType.float32, DType.int32)])
def test_stream_transpose_into_another_dtype_converts(kit, rng, src_dtype, dst_dtype):
    """Into another dtype each element converts as every engine's store does (read as fp32, stored
    by §2's rules): 2^24 + 1 becomes 2^24 in fp32, fp32 rounds to nearest-even bf16."""
    if src_dtype == DType.int32:
        x = rng.integers(-2**31, 2**31, size=(70, 45), dtype=np.int64).astype(np.int32)
        x[0, :3] = [2**24 + 1, 2**31 - 1, -123456789]
    else:
        x = f32(rng.normal(scale=1e4, size=(70, 45)))
    src, dst = _stage_bits(kit, "x", x, src_dtype), kit.sbuf(45, 70, dst_dtype)
    _transpose_by_blocks(kit, src, dst, 70, 45)
    got = kit.fetch(dst)
    np.testing.assert_array_equal(got, to_dtype(x.T.astype(np.float32), dst_dtype))

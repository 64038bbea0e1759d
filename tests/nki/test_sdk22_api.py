"""The rest of the 2.2x SDK's API, each name checked against NumPy: the device decorators
(baremetal, benchmark, profile), load_transpose2d, broadcasts, spmd_dim, shared constants, the
Vector Engine's fused instructions, cross-partition reductions, loop_reduce, floor / ceil,
constant masks, and the constants of nl."""

import json
import os

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from nki_testing import close, run_on

T = nki.typing.tensor
bf16 = np.dtype(ml_dtypes.bfloat16)


def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a) + nl.load(b))
    return out


# ---- the device decorators ----

def test_baremetal_runs_the_kernel_and_saves_its_module_and_trace(tmp_path, rng, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kernel = nki.baremetal(save_neff_name="file.neff", save_trace_name="profile.ntff")(add_kernel)
    a, b = rng.random((64, 32), np.float32), rng.random((64, 32), np.float32)
    close(kernel(a, b), a + b, atol=0, rtol=1e-7)
    assert json.loads((tmp_path / "file.bir.json").read_text())["functions"]
    assert (tmp_path / "profile.json").exists()


def test_benchmark_reports_the_simulated_latency_and_takes_tensor_types(rng):
    kernel = nki.benchmark(warmup=2, iters=3)(add_kernel)
    a, b = rng.random((128, 512), np.float32), rng.random((128, 512), np.float32)
    close(kernel(a, b), a + b, atol=0, rtol=1e-7)
    latency = kernel.benchmark_result.nc_latency
    assert latency.get_latency_percentile(50) == latency.get_latency_percentile(99) > 0
    with pytest.raises(nki.NKIError, match="percentile 42"):
        latency.get_latency_percentile(42)
    spec = T[[128, 512], nl.float32]
    timed = nki.benchmark(add_kernel)
    assert timed(spec, spec) is None  # no arrays: the timing alone
    assert timed.benchmark_result.nc_latency.get_latency_percentile(50) == pytest.approx(
        latency.get_latency_percentile(50))
    with pytest.raises(nki.NKIError, match="iters must be a positive integer"):
        nki.benchmark(iters=0)


def test_profile_writes_into_its_working_directory_and_returns_none(tmp_path, rng):
    kernel = nki.profile(working_directory=str(tmp_path), save_trace_name="t.ntff",
                         profile_nth=2, num_execs=3)(add_kernel)
    a = rng.random((32, 32), np.float32)
    assert kernel(a, a) is None
    events = json.loads((tmp_path / "t.json").read_text())
    assert events
    with pytest.raises(nki.NKIError, match="exists"):
        nki.profile(working_directory=str(tmp_path), save_trace_name="t.ntff")(add_kernel)
    with pytest.raises(nki.NKIError, match="absolute path"):
        nki.profile(working_directory="relative/dir")
    prof = nki.profile_kernel(nki.jit(add_kernel), a, a)
    assert prof.total_ns > 0 and prof.traced.instruction_count == 4
    typed = tmp_path / "typed"  # tensor types stand in for the arrays (timing only)
    kernel = nki.profile(working_directory=str(typed), save_trace_name="t.ntff")(add_kernel)
    assert kernel(nki.typing.tensor[[32, 32], nl.float32],
                  nki.typing.tensor[[32, 32], nl.float32]) is None
    assert json.loads((typed / "t.json").read_text())


def test_profile_in_timing_mode_draws_the_full_modes_timeline(tmp_path, rng):
    a = rng.random((128, 512), np.float32)
    slices = {}
    for mode in ("full", "timing"):
        kernel = nki.profile(working_directory=str(tmp_path / mode), save_trace_name="t.ntff",
                             mode=mode)(add_kernel)
        assert kernel(a, a) is None
        assert bool(kernel.benchmark_result.profile.outputs) == (mode == "full")  # numerics or not
        events = json.loads((tmp_path / mode / "t.json").read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        slices[mode] = sorted((e["name"], e["ts"], e["dur"]) for e in events if e.get("ph") == "X")
    assert slices["full"] and slices["timing"] == slices["full"]
    with pytest.raises(nki.NKIError, match="mode must be 'full' or 'timing'"):
        nki.profile(working_directory=str(tmp_path), mode="fast")


def test_a_grid_launch_of_a_decorated_kernel(rng):
    @nki.baremetal
    def rows(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        nl.store(out[i * 32:(i + 1) * 32], nl.load(a[i * 32:(i + 1) * 32]) * (i + 1))
        return out

    a = rng.random((64, 16), np.float32)
    close(rows[2](a), a * np.repeat([1.0, 2.0], 32)[:, None], atol=0, rtol=1e-7)


# ---- launch grids over NeuronCores ----

@nki.jit
def blockwise(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    nl.store(out[i * 16:(i + 1) * 16], nl.load(a[i * 16:(i + 1) * 16]) + 100.0 * i)
    return out


@pytest.mark.parametrize("grid,cores", [
    (lambda: nl.spmd_dim(nl.nc(2), 2), [[0, 1], [2, 3]]),
    (lambda: nl.nc(2) * 2, [[0, 1], [2, 3]]),
    (lambda: nl.spmd_dim(2, nl.nc(2)), [[0, 2], [1, 3]]),
    (lambda: 2 * nl.nc(2), [[0, 2], [1, 3]]),
])
def test_spmd_dim_spreads_a_grid_dimension_over_cores(grid, cores, rng):
    a = rng.random((64, 8), np.float32)
    launch = blockwise[grid()]
    traced = nki.trace_kernel(launch, a)
    assert traced.num_cores == 2
    for core, ids in enumerate(cores):
        loads = [i for i in traced.module.functions[core].blocks[0].instructions
                 if i.opcode_name == "Load"]
        assert [ld.ins[0].offset // (16 * 8) for ld in loads] == ids
    close(nki.simulate_kernel(launch, a), a + 100.0 * np.repeat(np.arange(4), 16)[:, None],
          atol=0, rtol=1e-7)


# ---- data movement and broadcasts ----

def test_load_transpose2d(executor, rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[1], a.shape[0]), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nl.store(out, nl.load_transpose2d(a, dtype=nl.bfloat16))
        return out

    a = rng.standard_normal((96, 48)).astype(np.float32)
    close(run_on(executor, kernel, a).astype(np.float32), a.T.astype(bf16).astype(np.float32),
          atol=0)
    with pytest.raises(nki.NKIError, match="second dimension \\(256\\)"):
        nki.trace(kernel, T[[4, 256], nl.float32])


@pytest.mark.parametrize("src_shape", [(128, 1), (128,), (1, 64), (1, 1)])
def test_broadcast_to_from_columns_rows_and_scalars(src_shape, executor, rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(out, nl.copy(nl.broadcast_to(t, shape=(128, 64))))
        return out

    a = rng.standard_normal(src_shape).astype(np.float32)
    expected = np.broadcast_to(a.reshape(-1, 1) if len(src_shape) == 1 else a, (128, 64))
    close(run_on(executor, kernel, a), expected, atol=0)


def test_a_one_partition_operand_reaches_all_partitions(executor, rng):
    @nki.jit
    def kernel(x, row):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(x) * nl.load(row))  # [128, 64] * [1, 64]
        return out

    x = rng.standard_normal((128, 64)).astype(np.float32)
    row = rng.standard_normal((1, 64)).astype(np.float32)
    close(run_on(executor, kernel, x, row), x * row, atol=0, rtol=1e-7)


def test_affine_select_reads_psum_through_a_copy(executor, rng):
    @nki.jit
    def kernel(q, k):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        scores = nisa.nc_matmul(nl.load(q), nl.load(k))
        i_p, i_f = nl.mgrid[0:128, 0:128]
        nl.store(out, nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=scores,
                                         on_false_value=nl.fp32.min, dtype=nl.float32))
        return out

    q = rng.standard_normal((64, 128)).astype(np.float32)
    k = rng.standard_normal((64, 128)).astype(np.float32)
    expected = np.where(np.tril(np.ones((128, 128), bool)), q.T @ k, nl.fp32.min)
    close(run_on(executor, kernel, q, k), expected, atol=1e-4, rtol=1e-5)


def test_shared_constants(executor, rng):
    table = rng.standard_normal((64, 16)).astype(np.float32)

    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        c = nl.load(nl.shared_constant(table))
        ident = nl.load(nl.shared_identity_matrix(16, dtype=nl.float32))
        nl.store(out, nl.load(a) * c + nisa.tensor_copy(ident[0:1, :]).broadcast_to((64, 16)))
        return out

    a = rng.standard_normal((64, 16)).astype(np.float32)
    traced = nki.trace_kernel(kernel, a)
    assert sorted(traced.constants) == ["shared_constant", "shared_constant.1"]
    assert [t.name for t in traced.inputs] == ["a"]
    expected = a * table + np.eye(16, dtype=np.float32)[0]
    close(run_on(executor, kernel, a), expected, atol=1e-6, rtol=1e-6)


# ---- the Vector Engine's fused instructions and cross-partition reductions ----

def test_tensor_scalar_reduce(executor, rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        res = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
        r = nl.ndarray((a.shape[0], 1), dtype=nl.float32)
        t = nisa.tensor_scalar_reduce(data=nl.load(a), op0=nl.multiply, operand0=2.0,
                                      reduce_op=nl.max, reduce_res=r)
        nl.store(out, t)
        nl.store(res, r)
        return out, res

    a = rng.standard_normal((128, 300)).astype(np.float32)
    out, res = run_on(executor, kernel, a)
    close(out, 2 * a, atol=0)
    close(res, (2 * a).max(axis=1, keepdims=True), atol=0)
    with pytest.raises(nki.NKIError, match="reverse0 is not supported"):
        nki.trace(nki.jit(lambda a: nisa.tensor_scalar_reduce(
            data=nl.load(a), op0=nl.add, operand0=1.0, reduce_op=nl.add,
            reduce_res=nl.ndarray((8, 1), nl.float32), reverse0=True)), T[[8, 8], nl.float32])


def test_scalar_tensor_tensor(executor, rng):
    @nki.jit
    def kernel(a, b, col):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.scalar_tensor_tensor(data=nl.load(a), op0=nl.subtract,
                                                operand0=nl.load(col), op1=nl.multiply,
                                                operand1=nl.load(b), reverse1=True))
        return out

    a, b = (rng.standard_normal((128, 96)).astype(np.float32) for _ in range(2))
    col = rng.standard_normal((128, 1)).astype(np.float32)
    close(run_on(executor, kernel, a, b, col), b * (a - col), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("op,fold", [(np.add, np.sum), (np.maximum, np.max),
                                     (np.minimum, np.min)])
def test_tensor_partition_reduce(op, fold, executor, rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((1,) + a.shape[1:], dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_partition_reduce(op, nl.load(a)))
        return out

    a = rng.standard_normal((128, 20, 30)).astype(np.float32)
    close(run_on(executor, kernel, a), fold(a, axis=0, keepdims=True), atol=1e-4, rtol=1e-5)
    with pytest.raises(nki.NKIError, match="bitwise_or is not modelled"):
        nki.trace(nki.jit(lambda a: nisa.tensor_partition_reduce(np.bitwise_or, nl.load(a))),
                  T[[8, 8], nl.float32])


def test_loop_reduce_reduces_into_the_assigned_tile(executor, rng):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        acc = nl.full((128, 64), -1e30, dtype=nl.float32)
        for k in nl.affine_range(4):
            acc[...] = nl.loop_reduce(nl.load(a[k]), op=np.maximum, loop_indices=[k])
        nl.store(out, acc)
        return out

    a = rng.standard_normal((4, 128, 64)).astype(np.float32)
    close(run_on(executor, kernel, a), a.max(axis=0), atol=0)

    @nki.jit
    def dropped(a):
        nl.loop_reduce(nl.load(a), op=np.add, loop_indices=0)  # never assigned
        return a

    with pytest.raises(nki.NKIError, match="never assigned"):
        nki.trace(dropped, T[[8, 8], nl.float32])


def test_floor_and_ceil(executor, rng):
    @nki.jit
    def kernel(a):
        lo = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        hi = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(lo, nl.floor(t))
        nl.store(hi, nl.ceil(t))
        return lo, hi

    a = (rng.standard_normal((128, 64)) * 50).astype(np.float32)
    a[0, :6] = [-2.0, -1.5, -0.0, 0.5, 3.0, 1e7 + 0.5]
    lo, hi = run_on(executor, kernel, a)
    close(lo, np.floor(a), atol=0)
    close(hi, np.ceil(a), atol=0)


# ---- masks of loop indices ----

def test_a_mask_of_loop_indices_keeps_all_or_nothing(executor, rng):
    @nki.jit
    def kernel(a, n):
        out = nl.ndarray((128, 4 * 32), dtype=a.dtype, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 32), dtype=nl.float32, buffer=nl.psum)
        x = nl.load(a)
        for k in nl.affine_range(4):
            t = nl.zeros((128, 32), dtype=a.dtype)
            t[...] = nl.exp(x[:, 0:32], mask=(k < n))
            acc += nisa.nc_matmul(x[:, 32:160], x[:, 0:32], mask=(k < n))
            nl.store(out[:, k * 32:(k + 1) * 32], t)
        nl.store(out[:, 0:32], nl.copy(acc))
        return out

    a = (rng.standard_normal((128, 160)) / 4).astype(np.float32)
    out = run_on(executor, kernel, a, 2)
    e = np.exp(a[:, 0:32])
    close(out[:, 32:64], e, atol=1e-6, rtol=1e-6)
    close(out[:, 64:128], np.zeros((128, 64)), atol=0)  # masked out: the zeros stay
    close(out[:, 0:32], 2 * (a[:, 32:160].T @ a[:, 0:32]), atol=1e-4, rtol=1e-5)


# ---- constants and types ----

def test_constants_of_the_language():
    assert nl.tile_size.psum_fmax == 512 and nl.tile_size.pmax == 128
    assert np.float32(nl.fp32.min) == -np.finfo(np.float32).max
    assert nl.bfp16.min == -np.inf  # the bit pattern 0xff80
    assert nl.finfo(nl.bfloat16).max == ml_dtypes.finfo(ml_dtypes.bfloat16).max
    assert nl.finfo(np.float16).eps == np.finfo(np.float16).eps
    with pytest.raises(nki.NKIError, match="not a floating-point type"):
        nl.finfo(nl.int32)
    cast = nl.static_cast(np.array([1.5, -2.25]), nl.bfloat16)
    assert cast.dtype == bf16 and cast.tolist() == [1.5, -2.25]
    assert nl.static_cast(3.7, np.int32) == 3


# ---- more elementwise functions, reductions and views ----

def test_trunc_cos_tan(executor, rng):
    @nki.jit
    def kernel(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        c = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        s = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(t, nl.trunc(x))
        nl.store(c, nl.cos(x))
        nl.store(s, nl.tan(x))
        return t, c, s

    a = (rng.standard_normal((128, 64)) * 5).astype(np.float32)
    a[0, :4] = [-2.5, 2.5, -0.0, 7.0]
    t, c, s = run_on(executor, kernel, a)
    close(t, np.trunc(a), atol=0)
    close(c, np.cos(a), atol=2e-5)  # the Scalar Engine's sine of a range-reduced fp32 argument
    away = np.abs(np.cos(a)) > 0.05  # (near its poles tan magnifies cos's error without bound)
    close(s[away], np.tan(a)[away], atol=2e-5, rtol=2e-3)


def test_var_and_rms_norm(executor, rng):
    @nki.jit
    def kernel(a, w):
        v = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
        r = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(v, nl.expand_dims(nl.var(x, axis=1), 1))
        nl.store(r, nl.rms_norm(x, nl.load(w).broadcast_to(a.shape), axis=1, n=a.shape[1]))
        return v, r

    a = rng.standard_normal((128, 200)).astype(np.float32)
    w = rng.standard_normal((1, 200)).astype(np.float32)
    v, r = run_on(executor, kernel, a, w)
    close(v, a.var(axis=1, keepdims=True), atol=1e-5, rtol=1e-5)
    rms = np.sqrt((a * a).sum(axis=1, keepdims=True) / 200 + 1e-6)
    close(r, a / rms * w, atol=1e-5, rtol=1e-5)
    with pytest.raises(nki.NKIError, match="must follow the tile's last dimension"):
        nki.trace(nki.jit(lambda a: nl.expand_dims(nl.load(a), 0)), T[[8, 8], nl.float32])


def test_rand_and_dropout_statistics():
    @nki.jit
    def kernel(a):
        r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        d = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(r, nl.rand(a.shape))
        nl.random_seed(seed=7)
        nl.store(d, nl.dropout(nl.load(a), rate=0.25))
        return r, d

    a = np.ones((128, 1024), np.float32)
    r, d = nki.simulate_kernel(kernel, a)
    assert 0 <= r.min() and r.max() < 1 and abs(r.mean() - 0.5) < 0.01
    kept = d != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_array_equal(d[kept], 1.0)  # survivors keep their values
    instructions = nki.trace(kernel, a).functions[0].blocks[0].instructions
    at = {i.opcode_name: k for k, i in enumerate(instructions)}  # the seed (written, then set), then the draws
    assert at["Iota"] < at["SetRandState"] < at["Dropout"] and instructions[at["Dropout"]].prob == 0.25
    with pytest.raises(nki.NKIError, match="a seed held in a tile"):
        nki.trace(nki.jit(lambda a: nl.random_seed(nl.load(a))), T[[1, 1], nl.int32])


def test_tensor_copy_predicated_and_stream_shuffle(executor, rng):
    perm = list(rng.permutation(32))

    @nki.jit
    def kernel(a, b, p):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        sh = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        dst = nl.load(a)
        nisa.tensor_copy_predicated(src=nl.load(b), dst=dst, predicate=nl.load(p))
        nl.store(out, dst)
        moved = nl.ndarray(a.shape, dtype=a.dtype)
        nisa.nc_stream_shuffle(src=nl.load(a), dst=moved, shuffle_mask=perm)
        nl.store(sh, moved)
        return out, sh

    a, b = (rng.standard_normal((64, 48)).astype(np.float32) for _ in range(2))
    p = (rng.random((64, 48)) < 0.5).astype(np.uint8)
    out, sh = run_on(executor, kernel, a, b, p)
    close(out, np.where(p != 0, b, a), atol=0)
    rows = np.array([32 * (i // 32) + perm[i % 32] for i in range(64)])
    close(sh, a[rows], atol=0)


def test_dma_transpose_and_indirect_loads(executor, rng):
    @nki.jit
    def kernel(data, idx):
        t = nl.ndarray((data.shape[1], 64), dtype=data.dtype, buffer=nl.shared_hbm)
        g = nl.ndarray((64, data.shape[1]), dtype=data.dtype, buffer=nl.shared_hbm)
        nl.store(t, nisa.dma_transpose(data[0:64, :]))
        i_p = nl.arange(64)[:, None]
        i_f = nl.arange(data.shape[1])[None, :]
        rows = nl.load(idx[i_p])
        nl.store(g, nl.load(data[rows[i_p, 0], i_f]))
        return t, g

    data = rng.standard_normal((128, 96)).astype(np.float32)
    idx = rng.integers(0, 128, 64).astype(np.int32)
    t, g = run_on(executor, kernel, data, idx)
    close(t, data[0:64].T, atol=0)
    close(g, data[idx], atol=0)

    @nki.jit
    def scatter(data, idx):
        rows = nl.load(idx)
        nl.store(data[rows, :], nl.load(data[0:8, :]))
        return data

    with pytest.raises(nki.NKIError, match="writes to kernel input 'data'"):
        nki.trace(scatter, T[[16, 8], nl.float32], T[[8, 1], nl.int32])


@pytest.mark.parametrize("call,what", [
    (lambda a: nisa.tensor_copy_dynamic_src(nl.load(a)), "tensor_copy_dynamic_src"),
    (lambda a: nisa.local_gather(nl.load(a), nl.load(a), mask=(nl.arange(8)[:, None] < 4)), "local_gather"),
    (lambda a: nl.gather_flattened(nl.load(a), nl.load(a), mask=(nl.arange(8)[:, None] < 4)), "gather_flattened"),
    (lambda a: nl.all_reduce(nl.load(a), np.add, 0), "all_reduce"),
    (lambda a: nl.atomic_rmw(a, nl.load(a), np.add), "atomic_rmw"),
    (lambda a: nisa.tensor_copy_dynamic_dst(dst=nl.load(a), src=nl.load(a)), "tensor_copy_dynamic_dst"),
])
def test_what_the_simulator_does_not_model_is_refused_by_name(call, what):
    with pytest.raises(nki.NKIError, match=f"{what}: .* not modelled") as info:
        nki.trace(nki.jit(call), T[[8, 8], nl.float32])
    assert info.value.location.path == __file__


def test_dense_mgrid_lazy_fills_bool_masks_and_gathers_at_a_leading_index(executor, rng):
    @nki.jit
    def kernel(data, idx):
        grid = nl.mgrid[0:8, 0:16]                      # dense, as NumPy's mgrid
        iota = nl.ndarray((8, 16), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(iota, nisa.iota(grid.p * 16 + grid.x, dtype=nl.int32))
        z = nl.zeros((8, 16), dtype=nl.float32, lazy_initialization=True)
        f = nl.full((8, 16), 2.0, dtype=nl.float32, lazy_initialization=True)
        masked = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(masked, nl.add(z, f))
        i_p = nl.arange(8)[:, None]
        # "& True" keeps the mask, "& False" masks everything out
        nl.store(masked[i_p, 0:4], nl.zeros((8, 4), dtype=nl.float32),
                 mask=(i_p < 4) & True)
        nl.store(masked[i_p, 4:8], nl.ones((8, 4), dtype=nl.float32), mask=(i_p < 8) & False)
        gathered = nl.ndarray((8, data.shape[2]), dtype=data.dtype, buffer=nl.shared_hbm)
        rows = nl.load(idx)
        i_f = nl.arange(data.shape[2])[None, :]
        nl.store(gathered, nl.load(data[1, rows[i_p, 0], i_f]))
        return iota, masked, gathered

    data = rng.standard_normal((2, 32, 24)).astype(np.float32)
    idx = rng.integers(0, 32, (8, 1)).astype(np.int32)
    iota, masked, gathered = run_on(executor, kernel, data, idx)
    close(iota, np.arange(128, dtype=np.int32).reshape(8, 16), atol=0)
    want = np.full((8, 16), 2.0, np.float32)
    want[:4, 0:4] = 0.0
    close(masked, want, atol=0)
    close(gathered, data[1, idx[:, 0]], atol=0)
    with pytest.raises(nki.NKIError, match="lazy_initialization"):
        nki.trace(nki.jit(lambda: nl.zeros((2, 2), nl.float32, lazy_initialization="yes")))


def test_loop_indices_keep_a_tiles_free_axis_and_integers_divide_to_floats(executor, rng):
    @nki.jit
    def kernel(a):
        cols = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        quot = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)                                     # [128, 8]
        acc = nl.zeros((128, 4), dtype=nl.float32)
        for i0 in nl.affine_range(2):
            for i1 in nl.sequential_range(2):
                i = i0 * 2 + i1                            # still a loop index
                col = x[:, i]                              # [128, 1], as in NKI
                assert col.shape == (128, 1)
                acc[:, i] = nl.add(col[:, 0], 1.0)         # (col[:, 0]: an integer drops it)
        assert x[:, 3].shape == (128,)
        nl.store(cols, acc)
        iota = nisa.iota(nl.arange(4)[None, :] + 7 * nl.arange(128)[:, None], dtype=nl.int32)
        q = iota / 3                                       # int32 / int: a float32 quotient
        assert q.dtype == nl.float32
        nl.store(quot, nl.floor(q))
        return cols, quot

    a = rng.standard_normal((128, 8)).astype(np.float32)
    cols, quot = run_on(executor, kernel, a)
    close(cols, a[:, :4] + 1.0, atol=0)
    close(quot, np.floor((np.arange(4)[None, :] + 7 * np.arange(128)[:, None]) / 3), atol=0)


def test_par_dim_in_hbm_marks_nothing(executor, rng):
    @nki.jit
    def kernel(a):
        scratch = nl.ndarray((2, nl.par_dim(128), 16), dtype=a.dtype, buffer=nl.private_hbm)
        out = nl.ndarray((2, 128, 16), dtype=a.dtype, buffer=nl.shared_hbm)
        assert scratch.shape == (2, 128, 16)
        for i in nl.affine_range(2):
            nl.store(scratch[i], nl.load(a[i]))
            nl.store(out[i], nl.load(scratch[i]))
        return out

    a = rng.standard_normal((2, 128, 16)).astype(np.float32)
    close(run_on(executor, kernel, a), a, atol=0)


def test_double_row_matmul_contracts_both_rows_on_trn2(rng):
    f8 = np.dtype(ml_dtypes.float8_e4m3)

    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((64, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((64, 256), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(2):
            acc += nisa.nc_matmul(nl.load(a[k]), nl.load(b[k]), perf_mode="double_row_gen3")
        nl.store(out, nl.copy(acc))
        return out

    a = rng.uniform(-2, 2, (2, 128, 2, 64)).astype(f8)
    b = rng.uniform(-2, 2, (2, 128, 2, 256)).astype(f8)
    want = np.einsum("jkrm,jkrn->mn", a.astype(np.float32), b.astype(np.float32))
    close(nki.simulate_kernel(kernel, a, b, arch="trn2"), want, atol=1e-3, rtol=1e-5)
    traced = nki.trace_kernel(kernel, a, b, arch="trn2")
    mms = [i for i in traced.module.functions[0].blocks[0].instructions
           if i.opcode_name == "Matmult"]
    assert [(m.start_tensor_calc, m.stop_tensor_calc) for m in mms] == [
        (True, False), (False, False), (False, False), (False, True)]
    with pytest.raises(nki.NKIError, match="Matmult: perf_mode DoubleRow needs NeuronCore-v3 or later; trn1 is "):
        nki.trace(kernel, a, b)
    with pytest.raises(nki.NKIError, match="Matmult: perf_mode DoubleRow takes fp8 operands"):
        nki.trace(kernel, a.astype(bf16), b.astype(bf16), arch="trn2")


def test_a_matmul_operand_in_psum_is_copied_to_sbuf_first(executor, rng):
    """As NKI's compiler does: a PE transpose's PSUM result feeds a matmul through a copy."""
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nisa.nc_transpose(nl.load(a))                # [128, 128] in PSUM
        nl.store(out, nisa.nc_matmul(t, nl.load(b)))     # stationary t: copied to SBUF
        return out

    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    close(run_on(executor, kernel, a, b), a @ b, atol=1e-3, rtol=1e-4)
    ops = [i.opcode_name for i in nki.trace(kernel, a, b).functions[0].blocks[0].instructions]
    last = len(ops) - 1 - ops[::-1].index("Matmult")
    assert ops[last - 1] == "TensorCopy"


def test_benchmark_result_of_a_kernel_launched_on_a_grid(rng):
    # bench[b](...) then bench[b].benchmark_result: what the nki-samples unit tests read.
    bench = nki.benchmark(warmup=1, iters=2)(add_kernel)
    launched = bench[1]
    a, b = (rng.standard_normal((64, 32)).astype(np.float32) for _ in range(2))
    close(launched(a, b), a + b, atol=0)
    latency = launched.benchmark_result.nc_latency.get_latency_percentile(50)
    assert latency > 0 and latency == bench.benchmark_result.nc_latency.get_latency_percentile(99)
    with pytest.raises(AttributeError):
        nki.jit(add_kernel)[1].benchmark_result  # (a plain kernel has none)


def test_profile_makes_its_working_directory_when_called(tmp_path, rng):
    # nki-samples' test_neuron_profile removes the folder between decorating and calling.
    folder = tmp_path / "profiles"
    kernel = nki.profile(working_directory=str(folder), save_neff_name="k.neff")(add_kernel)
    folder.mkdir(exist_ok=True)
    folder.rmdir()
    a = rng.random((32, 32), np.float32)
    assert kernel(a, a) is None
    assert (folder / "profile.json").exists() and (folder / "k.bir.json").exists()


def test_stream_shuffle_broadcasts_one_partition_to_a_quadrant(executor, rng):
    # The ISA page's example 2: src and dst may have different partition counts (its
    # num_active_partitions is the larger); a mask of zeros copies src's only partition to all 32.
    @nki.jit
    def kernel(a):
        out = nl.ndarray((32, a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
        src = nl.load(a)
        dst = nl.ndarray((32, a.shape[1]), dtype=a.dtype)
        nisa.nc_stream_shuffle(src=src[0:1, :], dst=dst[0:32, :], shuffle_mask=[0] * 32)
        nl.store(out, dst)
        return out

    a = rng.standard_normal((1, 40)).astype(np.float32)
    close(run_on(executor, kernel, a), np.broadcast_to(a, (32, 40)), atol=0)


def test_indirect_load_with_a_dense_grid_free_index(executor, rng):
    # t[idx_tile, iy] with iy from nl.mgrid[0:P, 0:F] (a dense [P, F] grid that does not depend
    # on the row): the same gather as with nl.arange(F)[None, :] (the nisa.dma_copy API page's
    # indirect-load example), not a grid that fails to broadcast with the tensor's rows.
    @nki.jit
    def kernel(data, idx):
        ix, iy = nl.mgrid[0:48, 0:data.shape[1]]
        rows = nl.load(idx)
        g = nl.ndarray((48, data.shape[1]), dtype=data.dtype)
        nisa.dma_copy(src=data[rows, iy], dst=g[ix, iy])
        out = nl.ndarray((48, data.shape[1]), dtype=data.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(data[rows, iy]))
        out2 = nl.ndarray((48, data.shape[1]), dtype=data.dtype, buffer=nl.shared_hbm)
        nl.store(out2, g)
        return out, out2

    data = rng.standard_normal((100, 24)).astype(np.float32)
    idx = rng.integers(0, 100, (48, 1)).astype(np.int32)
    out, out2 = run_on(executor, kernel, data, idx)
    close(out, data[idx[:, 0]], atol=0)
    close(out2, data[idx[:, 0]], atol=0)


def test_store_of_a_number_fills_the_destination(executor):
    # nl.store(dst, 100): the nl.store API page's example ("effectively a memset").
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, 100)
        half = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(half, np.float32(0.5))
        return out, half

    out, half = run_on(executor, kernel, np.zeros((64, 24), np.int32))
    np.testing.assert_array_equal(out, np.full((64, 24), 100, np.int32))
    np.testing.assert_array_equal(half, np.full((64, 24), 0.5, np.float32))

    @nki.jit
    def tall(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, 1)
        return out

    with pytest.raises(nki.NKIError, match="at most 128 partitions"):
        run_on(executor, tall, np.zeros((256, 8), np.float32))


# ---- session 28: gaps the public API examples of aws-neuron-sdk nki/test found ----

def test_a_number_written_into_one_element_of_a_tile(executor):
    """`t[i, j] = x`: a memset of the [1, 1] tile where a compute engine may start (partition
    0, 32, 64, 96), else a memset at partition 0 moved into place by DMA."""
    @nki.jit
    def elements():
        t = nl.zeros((64, 10), dtype=nl.float32)
        for i in nl.static_range(0, 64, 3):
            for j in nl.static_range(0, 10, 4):
                t[i, j] = i * 10 + j
        out = nl.ndarray((64, 10), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out

    expected = np.zeros((64, 10), np.float32)
    for i in range(0, 64, 3):
        for j in range(0, 10, 4):
            expected[i, j] = i * 10 + j
    close(run_on(executor, elements), expected, atol=0)
    insts = nki.trace(elements, schedule="source").functions[0].blocks[0].instructions
    # partitions 0 and 33 ... : rows 0 (aligned) and the 21 others, three columns each
    assert sum(i.opcode_name == "Memset" for i in insts) == 1 + 22 * 3
    assert sum(i.opcode_name == "DMACopy" for i in insts) == 21 * 3


def test_gather_flattened_against_take_along_axis(executor, rng):
    data = rng.standard_normal((32, 64)).astype(np.float32)
    idx = rng.integers(0, 64, (32, 10)).astype(np.uint32)

    @nki.jit
    def gather(x, i):
        r = nl.gather_flattened(nl.load(x), nl.load(i), dtype=nl.bfloat16)
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    close(run_on(executor, gather, data, idx),
          np.take_along_axis(data, idx, axis=1).astype(bf16), atol=0)


def test_local_gather_and_sequence_bounds_against_numpy(rng):
    src = rng.standard_normal((32, 256)).astype(np.float32)
    index = rng.integers(0, 256 - 2, (32, 2)).astype(np.uint16)

    @nki.jit
    def local(s, i):
        r = nisa.local_gather(nl.load(s), nl.load(i), num_elem_per_idx=2, num_valid_indices=20)
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    expected = np.empty((32, 40), np.float32)
    for core in range(2):  # a core's 16 partitions share its indices, read partition first
        rows = slice(16 * core, 16 * core + 16)
        cols = (index[rows].flatten(order="F")[:20].astype(np.int64)[:, None] + [0, 1]).ravel()
        expected[rows] = src[rows][:, cols]
    np.testing.assert_array_equal(local(src, index), expected)

    ids = np.array([[1, 1, 0, 2, 2, 2, 0, 5]], np.float32)

    @nki.jit
    def bounds(s):
        r = nisa.sequence_bounds(segment_ids=nl.load(s), dtype=nl.int32)
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    # per element, its segment's first index and one past its last; padding (id 0): n and -1
    np.testing.assert_array_equal(bounds(ids), [[[0, 0, 8, 3, 3, 3, 8, 7],
                                                 [2, 2, -1, 6, 6, 6, -1, 8]]])


@pytest.mark.parametrize("op1,fold,start", [(np.add, np.add, 0.0), (np.maximum, np.maximum, -np.inf),
                                            (np.multiply, np.multiply, 1.0)])
def test_tensor_scalar_cumulative_reset_reduce_and_load(op1, fold, start, executor, rng):
    """reg = op1(src[i] + imm0, reg), written at each i: reset_reduce from op1's identity, load_reduce
    from imm1 (a number or a column), reduce going on from the last instruction's registers."""
    x = rng.uniform(0.5, 1.5, (32, 24)).astype(np.float32)
    col = rng.uniform(0.5, 1.5, (32, 1)).astype(np.float32)

    @nki.jit
    def cumulative(a, c):
        src = nl.load(a)
        imm = nl.load(c)
        outs = []
        for cmd, init in ((nisa.reduce_cmd.reset_reduce, None), (nisa.reduce_cmd.load_reduce, imm),
                          (nisa.reduce_cmd.reduce, 2.0), (nisa.reduce_cmd.load_reduce, 0.5)):
            d = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_scalar_cumulative(dst=d, src=src, op0=np.add, op1=op1, imm0=imm,
                                          imm1=init, reduce_cmd=cmd)
            out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            nl.store(out, d)
            outs.append(out)
        return tuple(outs)

    shifted = x + col
    first = fold.accumulate(np.concatenate([np.full_like(col, start), shifted], 1), axis=1)[:, 1:]
    loaded = fold.accumulate(np.concatenate([col, shifted], 1), axis=1)[:, 1:]
    # (reduce ignores imm1 and starts from the registers the load_reduce left)
    going_on = fold.accumulate(np.concatenate([loaded[:, -1:], shifted], 1), axis=1)[:, 1:]
    from_half = fold.accumulate(np.concatenate([np.full_like(col, 0.5), shifted], 1), axis=1)[:, 1:]
    for got, want in zip(run_on(executor, cumulative, x, col), (first, loaded, going_on, from_half)):
        close(got, want, atol=0, rtol=1e-5)


def test_tensor_scalar_cumulative_refusals():
    def kernel_of(body):
        @nki.jit
        def kernel(a):
            t = nl.load(a)
            d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
            body(t, d)
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, d)
            return out
        return kernel

    cases = [
        (lambda t, d: nisa.tensor_scalar_cumulative(dst=d, src=t, op0=np.add, op1=np.add, imm0=0.0,
                                                    reduce_cmd=nisa.reduce_cmd.load_reduce),
         nl.float32, "load_reduce starts from imm1"),
        (lambda t, d: nisa.tensor_scalar_cumulative(dst=d, src=t, op0=np.add, op1=np.add, imm0=0.0,
                                                    reduce_cmd=nisa.reduce_cmd.idle),
         nl.float32, "reduce_cmd must be reset_reduce, reduce or load_reduce"),
        (lambda t, d: nisa.tensor_scalar_cumulative(dst=d, src=t, op0=np.add, op1=np.add, imm0=0),
         nl.int32, "int32/uint32 tiles are not supported"),
        (lambda t, d: nisa.activation(np.exp, t, reduce_cmd=nisa.reduce_cmd.load_reduce),
         nl.float32, "activation: reduce_cmd=load_reduce"),
    ]
    for body, dtype, message in cases:
        with pytest.raises(nki.NKIError, match=message) as info:
            nki.trace(kernel_of(body), T[[8, 16], dtype])
        assert info.value.location.path == __file__


def test_nki_trace_decorates_a_function_given_alone(rng):
    """NKI's nki.trace is a decorator (as nki.jit); neuronxsim's nki.trace(kernel, *args) traces."""
    def double(a, b):
        nl.store(b, nl.load(a) * 2.0)

    kernel = nki.trace(add_kernel)
    assert isinstance(kernel, nki.Kernel) and kernel.mode == "trace"
    a = rng.random((16, 8), np.float32)
    close(kernel(a, a), a + a, atol=0)
    close(nki.simulate_kernel(kernel, a, a), a + a, atol=0)
    assert nki.trace(kernel, a, a).to_json() == nki.trace(add_kernel, a, a).to_json()
    with pytest.raises(nki.NKIError, match="writes to kernel input 'b'"):
        nki.trace(double, a, a)  # with arguments, a function is traced (and this one refused)
    with pytest.raises(nki.NKIError, match="decorates a kernel function, not int"):
        nki.trace(3)


def test_the_constants_module_of_isa():
    from neuronxsim.importer import installed
    from neuronxsim.nki.isa import constants
    assert (constants.dge_mode, constants.engine, constants.reduce_cmd, constants.oob_mode,
            constants.nc_version) == (nisa.dge_mode, nisa.engine, nisa.reduce_cmd,
                                      nisa.oob_mode, nisa.nc_version)
    with installed(allow_shadowing=True):
        from neuronxcc.nki.isa.constants import dge_mode
        assert dge_mode is nisa.dge_mode


def test_view_as_its_own_dtype_and_refused_as_another(rng):
    @nki.jit
    def same(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a.view(nl.float32)))
        return out

    a = rng.random((8, 8), np.float32)
    close(same(a), a, atol=0)

    @nki.jit
    def other(a):
        return nl.load(a.view(nl.int32))

    with pytest.raises(nki.NKIError, match="view\\(dtype\\) to a different data type is not supported"):
        nki.trace(other, a)
    with pytest.raises(nki.NKIError, match="view: dtype 'nope' is not an NKI data type"):
        nki.trace(nki.jit(lambda a: a.view("nope")), a)


def test_dma_transpose_takes_a_dge_mode(rng):
    from neuronxsim import bir

    @nki.jit
    def transpose(a):
        t = nisa.dma_transpose(a, dge_mode=nisa.dge_mode.hwdge)
        out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out

    a = rng.random((16, 32)).astype(np.float16)
    close(nki.simulate_kernel(transpose, a, arch="trn2"), a.T, atol=0)
    dma = [i for i in nki.trace(transpose, a, arch="trn2").functions[0].blocks[0].instructions
           if i.opcode_name == "DMACopy" and i.mode == bir.DmaMode.Transpose]
    assert len(dma) == 1 and dma[0].dge_type == bir.DgeType.HWDGE
    with pytest.raises(nki.NKIError, match="dma_transpose: .*(hardware|DGE)"):
        nki.trace(transpose, a, arch="trn1")


@pytest.mark.parametrize("data, operand1", [(bf16, np.float32), (np.float32, bf16), (np.int32, np.float32)])
def test_scalar_tensor_tensor_without_dtype_takes_datas(executor, data, operand1):
    # "dtype: nki_dtype=data.dtype" (2.2x), not the promotion of data's and operand1's dtypes;
    # the one-instruction form (fused_instructions, NKI 0.6's) defaults the same way.
    from neuronxsim.nki import fused_instructions
    from neuronxsim.nki.tracer import current

    @nki.jit
    def kernel(a, b):
        x, y = nl.load(a), nl.load(b)
        r = nisa.scalar_tensor_tensor(data=x, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=y)
        fused = fused_instructions.scalar_tensor_tensor(current(), x, nl.multiply.alu_op, 2.0, False,
                                                        nl.add.alu_op, y, False, None, None)
        assert r.dtype == fused.dtype == x.dtype
        out = nl.ndarray(a.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    a, b = np.full((8, 4), 3, data), np.full((8, 4), 1, operand1)
    got = run_on(executor, kernel, a, b)
    assert got.dtype == np.dtype(data)
    close(got, np.full((8, 4), 7.0), atol=0)


def _scatter_kernel(store, **dma_args):
    """A kernel that fills an HBM output [R, F] with ``base`` and scatters ``data``'s rows to it,
    tile by tile (128 rows each), at the rows ``idx`` names: by nl.store, or nisa.dma_copy with
    ``dma_args``."""
    @nki.jit
    def kernel(base, data, idx):
        out = nl.ndarray(base.shape, dtype=base.dtype, buffer=nl.shared_hbm)
        n, f = data.shape
        for r in nl.affine_range(base.shape[0] // 128):
            nl.store(out[r * 128:(r + 1) * 128, :], nl.load(base[r * 128:(r + 1) * 128, :]))
        for t in nl.affine_range((n + 127) // 128):
            p = min(128, n - t * 128)
            rows = nl.load(idx[t * 128:t * 128 + p, :])
            tile = nl.load(data[t * 128:t * 128 + p, :])
            if store:
                nl.store(out[rows, nl.arange(f)[None, :]], tile)
            else:
                nisa.dma_copy(dst=out[rows, :], src=tile, **dma_args)
        return out
    return kernel


@pytest.mark.parametrize("store", [True, False], ids=["nl.store", "dma_copy"])
def test_indirect_stores_scatter_rows(executor, rng, store):
    # t[idx_tile, ...] as a store's destination (the nl.load_store_indirect and dma_copy API
    # examples): row r of the tile lands in row idx[r]; 172 rows (a whole tile and 44) into 384.
    base = rng.standard_normal((384, 96)).astype(np.float32)
    data = rng.standard_normal((172, 96)).astype(np.float32)
    idx = rng.permutation(384)[:172].astype(np.int32).reshape(-1, 1)
    want = base.copy()
    want[idx[:, 0]] = data
    close(run_on(executor, _scatter_kernel(store), base, data, idx), want, atol=0)


def test_dma_copy_scatter_adds_and_skips(executor, rng):
    base = rng.standard_normal((256, 40)).astype(np.float32)
    data = rng.standard_normal((150, 40)).astype(np.float32)
    idx = rng.integers(0, 256, (150, 1)).astype(np.int32)  # repeated rows: each adds
    want = base.astype(np.float64)
    np.add.at(want, idx[:, 0], data)
    close(run_on(executor, _scatter_kernel(False, dst_rmw_op=np.add), base, data, idx), want, atol=1e-5)

    far = idx.copy()
    far[::3] += 256  # every third row out of range: skipped
    kept = far[:, 0] < 256
    want = base.copy()
    want[far[kept, 0]] = data[kept]  # (rows in order: a repeated index keeps the last)
    got = run_on(executor, _scatter_kernel(False, oob_mode=nisa.oob_mode.skip), base, data, far)
    close(got, want, atol=0)


def test_dma_copy_scatter_out_of_range_fails_when_run():
    from neuronxsim.errors import SimulationError

    kernel = _scatter_kernel(False)
    base, data = np.zeros((128, 8), np.float32), np.ones((4, 8), np.float32)
    idx = np.array([[0], [5], [128], [2]], np.int32)
    with pytest.raises(SimulationError, match="IndirectSave.*index 128 for source row 2 is outside the 128"):
        nki.simulate_kernel(kernel, base, data, idx)


def test_masked_store_scatters_the_rows_its_mask_keeps(executor, rng):
    @nki.jit
    def kernel(base, data, idx):
        out = nl.ndarray(base.shape, dtype=base.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(base))
        ix, iy = nl.mgrid[0:data.shape[0], 0:data.shape[1]]
        nl.store(out[nl.load(idx), iy], nl.load(data), mask=(ix < 5))
        return out

    base = rng.standard_normal((64, 24)).astype(np.float32)
    data = rng.standard_normal((9, 24)).astype(np.float32)
    idx = rng.permutation(64)[:9].astype(np.int32).reshape(-1, 1)
    want = base.copy()
    want[idx[:5, 0]] = data[:5]
    close(run_on(executor, kernel, base, data, idx), want, atol=0)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("dtype,bits", [(nl.float32, 24), (nl.bfloat16, 8), (nl.float16, 11)])
def test_rand_in_a_narrow_float_stays_below_one(executor, dtype, bits):
    # (Drawn in fp32 and rounded into bf16, about one value in 500 was 1.0: NKI 0.6's draw now.)
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 2048), dtype=dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.rand((128, 2048), dtype=dtype))
        return out

    v = run_on(executor, kernel, np.zeros((1, 1), np.float32)).astype(np.float64)
    assert v.min() >= 0 and v.max() < 1 and abs(v.mean() - 0.5) < 0.01
    scaled = v * 2.0**bits
    np.testing.assert_array_equal(scaled, np.floor(scaled))  # k / 2^bits: exact in the dtype
    assert len(np.unique(scaled)) > 2 ** min(bits, 16) // 2  # and spread over them


@pytest.mark.parametrize("dtype", [nl.int32, nl.uint8])
def test_rand_of_an_integer_dtype_is_refused(dtype):
    # (nl.rand's page: values "between 0 and 1"; int32 gave a coin flip of 0 and 1)
    @nki.jit
    def kernel(a):
        out = nl.ndarray((4, 8), dtype=dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.rand((4, 8), dtype=dtype))
        return out

    with pytest.raises(nki.NKIError, match=r"test_sdk22_api\.py:\d+: nl\.rand: draws values "
                                           r"between 0 and 1, which u?int\d+ cannot hold"):
        nki.trace(kernel, np.zeros((1, 1), np.float32))


def test_dropouts_draw_new_masks_and_a_seed_repeats_them():
    # nki.language.dropout / nki.isa.dropout (2.2x pages): dropped elements become zeros, "If the
    # probability is 0.0, all elements are kept with their original values": no scaling. The
    # draws advance the Vector Engine's generators, so two dropouts, or the tiles of a loop, drop
    # different elements; nl.random_seed makes the sequence repeat.
    @nki.jit
    def kernel(a):
        outs = [nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm) for _ in range(3)]
        for k, seed in enumerate((5, None, 5)):
            if seed is not None:
                nl.random_seed(seed=seed)
            for i in nl.affine_range(a.shape[1] // 512):
                cols = slice(i * 512, (i + 1) * 512)
                x = nl.load(a[:, cols])
                nl.store(outs[k][:, cols], nisa.dropout(x, 0.5) if k != 1 else nl.dropout(x, rate=0.5))
        return tuple(outs)

    a = np.arange(1, 128 * 1536 + 1, dtype=np.float32).reshape(128, 1536)
    d0, d1, d2 = nki.simulate_kernel(kernel, a)
    for d in (d0, d1):
        assert abs(np.mean(d == 0) - 0.5) < 0.01
        np.testing.assert_array_equal(d[d != 0], a[d != 0])
    assert abs(np.mean((d0 == 0) & (d1 == 0)) - 0.25) < 0.01  # independent masks
    tiles = (d0 == 0).reshape(128, 3, 512)
    assert not np.array_equal(tiles[:, 0], tiles[:, 1]) and not np.array_equal(tiles[:, 1], tiles[:, 2])
    np.testing.assert_array_equal(d2, d0)  # the same seed, the same drops


# ---- the Vector Engine's accumulation registers, shared by tensor_scalar_cumulative,
# select_reduce and range_select (docs/isa-semantics.md §5) ----

REGISTER_SHAPES = [(p, n) for p in (1, 31, 128) for n in (1, 513, 2049)]


def _grid(rng, shape):
    """Multiples of 1/4 in [-2, 2]: their sums here are exact in fp32."""
    return (rng.integers(-8, 9, size=shape) / 4).astype(np.float32)


def _register_chain(middle):
    """tensor_scalar_cumulative(reset_reduce) of x, ``middle(x, y, p, *columns)`` (tiles),
    tensor_scalar_cumulative(reduce) of x: its running sums."""
    @nki.jit
    def kernel(x, y, pred, *columns):
        t, u, p = nl.load(x), nl.load(y), nl.load(pred)
        first = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_cumulative(dst=first, src=t, op0=np.add, op1=np.add, imm0=0.0)
        middle(t, u, p, *[nl.load(c) for c in columns])
        d = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_cumulative(dst=d, src=t, op0=np.add, op1=np.add, imm0=0.0,
                                      reduce_cmd=nisa.reduce_cmd.reduce)
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, d)
        return out
    return kernel


def _running_sums(register, x):
    """tensor_scalar_cumulative's pseudo-code with reduce: reg = add(x[i], reg), out[i] = reg."""
    return np.cumsum(np.concatenate([register, x], axis=1), axis=1, dtype=np.float32)[:, 1:]


@pytest.mark.parametrize("shape", REGISTER_SHAPES)
def test_select_reduce_leaves_its_maximum_in_the_shared_registers(shape, executor, rng):
    """A reducing select_reduce resets the registers tensor_scalar_cumulative continues ("The
    accumulator registers are shared across Vector Engine accumulation instructions", NKI
    nki.isa.select_reduce): reduce continues from its per-partition maximum."""
    x, y = _grid(rng, shape), _grid(rng, shape)
    pred = rng.integers(0, 2, shape).astype(np.uint8)

    def middle(t, u, p):
        s = nl.ndarray(u.shape, dtype=nl.float32, buffer=nl.sbuf)
        m = nl.ndarray((u.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.select_reduce(dst=s, predicate=p, on_true=u, on_false=-3.0, reduce_res=m,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce)

    register = np.where(pred != 0, y, np.float32(-3.0)).max(axis=1, keepdims=True)
    got = run_on(executor, _register_chain(middle), x, y, pred)
    np.testing.assert_array_equal(got, _running_sums(register, x))


@pytest.mark.parametrize("shape", REGISTER_SHAPES)
def test_range_select_leaves_its_maximum_in_the_shared_registers(shape, executor, rng):
    """range_select with reduce_res leaves the maximum it writes there in the shared registers."""
    x, y = _grid(rng, shape), _grid(rng, shape)
    lo = rng.integers(0, shape[1], (shape[0], 1)).astype(np.float32)
    hi = lo + rng.integers(1, 40, (shape[0], 1)).astype(np.float32)

    def middle(t, u, p, bound0, bound1):
        m = nl.ndarray((u.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.range_select(on_true_tile=u, comp_op0=np.greater_equal, comp_op1=np.less,
                          bound0=bound0, bound1=bound1, reduce_res=m)

    j = np.arange(shape[1], dtype=np.float32)[None, :]
    register = np.where((j >= lo) & (j < hi), y, np.finfo(np.float32).min).max(axis=1, keepdims=True)
    got = run_on(executor, _register_chain(middle), x, y, np.zeros(shape, np.uint8), lo, hi,
                 arch="trn2")
    np.testing.assert_array_equal(got, _running_sums(register, x))


def test_instructions_that_do_not_accumulate_leave_the_registers(executor, rng):
    """Only accumulation instructions may change the registers ("Even when reduce_cmd is set to
    idle, the accumulator state may still be modified"); a tensor_tensor on the Vector Engine
    (as the nl.add the public range_select example chains its reductions across) or an
    activation leaves them: the reduce continues the first sum."""
    x = _grid(rng, (31, 513))
    pred = np.ones(x.shape, np.uint8)

    def vector(t, u, p):
        nisa.tensor_tensor(t, u, op=np.add)

    def scalar(t, u, p):
        nisa.activation(np.exp, u)

    for middle in (vector, scalar):
        got = run_on(executor, _register_chain(middle), x, x, pred)
        np.testing.assert_array_equal(got, _running_sums(x.sum(axis=1, keepdims=True), x))


@pytest.mark.parametrize("command", ["reduce", "reset"])
@pytest.mark.parametrize("op", ["select_reduce", "range_select"])
def test_select_reduce_and_range_select_refuse_reduce_and_reset(op, command):
    """As in NKI 0.6: reduce would continue the registers across instructions and reset resets
    them without the current results, neither of which the recorded instruction can say."""
    @nki.jit
    def kernel(a, b0, b1):
        t = nl.load(a)
        s = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        m = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        cmd = getattr(nisa.reduce_cmd, command)
        if op == "select_reduce":
            nisa.select_reduce(dst=s, predicate=nl.load(b0) > 0, on_true=t, on_false=0.0,
                               reduce_res=m, reduce_cmd=cmd)
        else:
            s = nisa.range_select(on_true_tile=t, comp_op0=np.greater_equal, comp_op1=np.less,
                                  bound0=nl.load(b1), bound1=nl.load(b1), reduce_res=m,
                                  reduce_cmd=cmd)
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, s)
        return out

    a = np.zeros((8, 16), np.float32)
    with pytest.raises(nki.NKIError, match=f"{op}: reduce_cmd={command}") as info:
        nki.trace(kernel, a, a, a[:, :1], arch="trn2")
    assert info.value.location.path == __file__

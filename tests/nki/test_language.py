"""nki.language semantics against NumPy (on the reference executor), and the engines the
instructions land on."""

import itertools

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim import bir
from nki_testing import close, run_on, run_on_reference as run

bf16 = ml_dtypes.bfloat16


def instructions(kernel, *args, **kwargs):
    module = nki.trace(kernel, *args, schedule="source", **kwargs)
    return list(module.functions[0].blocks[0].instructions)


# ---- elementwise arithmetic and broadcasting ----

@nki.jit
def arith(a, b, col):
    out = nl.ndarray((6,) + a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x, y, c = nl.load(a), nl.load(b), nl.load(col)
    nl.store(out[0], x + y)
    nl.store(out[1], x - 2.5)
    nl.store(out[2], 3.0 / x)
    nl.store(out[3], nl.maximum(x, y) * c)  # c is [P, 1]: one value per partition
    nl.store(out[4], c - x)
    nl.store(out[5], (x > y) + (x <= 0.5))
    return out


def test_arithmetic_scalars_and_partition_columns(rng):
    a = rng.random((128, 64)).astype(np.float32) + 0.1
    b = rng.random((128, 64)).astype(np.float32)
    col = rng.random((128, 1)).astype(np.float32)
    out = run(arith, a, b, col)
    for got, want in zip(out, [a + b, a - 2.5, 3.0 / a, np.maximum(a, b) * col, col - a,
                               (a > b) * 1.0 + (a <= 0.5) * 1.0]):
        close(got, want, atol=0, rtol=1e-7)


def test_partition_columns_become_tensor_scalar_pointers(rng):
    a = np.zeros((128, 64), np.float32)
    ops = [i.opcode_name for i in instructions(arith, a, a, a[:, :1].copy())]
    assert ops.count("TensorScalarPtr") == 2  # `* c` and `c - x`
    assert ops.count("TensorScalar") == 3  # x - 2.5, 3.0 / x, x <= 0.5


@nki.jit
def free_broadcast(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)  # [P, 4, 8]
    y = nl.load(b)  # [P, 1, 8]: repeated along the middle axis
    nl.store(out, x * y)
    return out


def test_free_dimensions_broadcast_by_step_zero(rng):
    a = rng.random((32, 4, 8)).astype(np.float32)
    b = rng.random((32, 1, 8)).astype(np.float32)
    close(run(free_broadcast, a, b), a * b, atol=0, rtol=1e-7)


@nki.jit
def promote(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.load(a) + nl.load(b)
    assert s.dtype == nl.float32  # bf16 + fp16 -> fp32
    nl.store(out, s)
    return out


def test_bf16_plus_fp16_promotes_to_fp32(rng):
    a = rng.random((16, 16)).astype(bf16)
    b = rng.random((16, 16)).astype(np.float16)
    close(run(promote, a, b), a.astype(np.float32) + b.astype(np.float32), atol=0, rtol=1e-7)


@nki.jit
def where_and_compare(a):
    out = nl.ndarray((2,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out[0], nl.where(x > 0, x, 0.0))
    nl.store(out[1], nl.where(nl.less(x, -0.5), nl.negative(x), x))
    return out


def test_where(rng):
    a = rng.standard_normal((64, 32)).astype(np.float32)
    out = run(where_and_compare, a)
    np.testing.assert_array_equal(out[0], np.where(a > 0, a, 0))
    np.testing.assert_array_equal(out[1], np.where(a < -0.5, -a, a))


@nki.jit
def integer_ops(a, b):
    out = nl.ndarray((3,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    nl.store(out[0], x & y)
    nl.store(out[1], nl.bitwise_xor(x, y))
    nl.store(out[2], x * 3 + y)
    return out


def test_integer_bitwise_and_arithmetic(rng):
    a = rng.integers(0, 1000, (8, 16)).astype(np.int32)
    b = rng.integers(0, 1000, (8, 16)).astype(np.int32)
    out = run(integer_ops, a, b)
    np.testing.assert_array_equal(out, np.stack([a & b, a ^ b, a * 3 + b]))


# ---- activation functions (Scalar Engine) ----

ACTIVATIONS = {
    "exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0), "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt,
    "square": np.square, "reciprocal": lambda x: 1 / x, "abs": np.abs,
    "silu": lambda x: x / (1 + np.exp(-x)),
    "gelu_apprx_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) *
                                                        (x + 0.044715 * x ** 3))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_functions_run_on_the_scalar_engine(name, rng):
    fn = getattr(nl, name)

    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, fn(nl.load(a)))
        return out

    a = (rng.random((128, 256)) + 0.25).astype(np.float32)
    close(run(kernel, a), ACTIVATIONS[name](a.astype(np.float64)), atol=1e-6, rtol=1e-5)
    act = [i for i in instructions(kernel, a) if i.opcode_name == "Activation"]
    assert len(act) == 1 and act[0].engine == bir.Engine.Activation


# ---- reductions ----

@nki.jit
def reductions(a):
    P, A, B = a.shape
    out_sum = nl.ndarray((P, A), dtype=a.dtype, buffer=nl.shared_hbm)
    out_max = nl.ndarray((P, 1, B), dtype=a.dtype, buffer=nl.shared_hbm)
    out_mean = nl.ndarray((P,), dtype=a.dtype, buffer=nl.shared_hbm)
    out_min = nl.ndarray((P, 1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out_sum, nl.sum(x, axis=2))
    nl.store(out_max, nl.max(x, axis=1, keepdims=True))  # not the innermost axis
    nl.store(out_mean, nl.mean(x, axis=[1, 2]))
    nl.store(out_min, nl.min(x, axis=(-2, -1), keepdims=True))
    return out_sum, out_max, out_mean, out_min


def test_reductions_along_any_free_axes(rng):
    a = rng.standard_normal((64, 6, 10)).astype(np.float32)
    s, mx, mean, mn = run(reductions, a)
    close(s, a.sum(2), atol=1e-5, rtol=1e-6)
    np.testing.assert_array_equal(mx, a.max(1, keepdims=True))
    close(mean, a.mean((1, 2)), atol=1e-6, rtol=1e-6)
    np.testing.assert_array_equal(mn, a.min((1, 2), keepdims=True))


def test_reduction_fields(rng):
    a = np.zeros((64, 6, 10), np.float32)
    red = [i for i in instructions(reductions, a) if i.opcode_name == "TensorReduce"]
    # contiguous reduced axes merge into one access-pattern dimension (X)
    assert [(i.op.name, i.axis.name) for i in red] == [("add", "X"), ("max", "X"),
                                                        ("add", "X"), ("min", "X")]
    assert all(i.engine == bir.Engine.DVE for i in red)
    # max over axis 1 of [P, 6, 10]: the reduced axis walks last, with the row stride 10
    assert [(p.step, p.num) for p in red[1].ins[0].pattern] == [(60, 64), (1, 10), (10, 6)]


# ---- masks ----

@nki.jit
def masked_tail(a):
    rows, cols = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        rows_left = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=rows_left)
        y = nl.exp(x)  # computes only the partitions the load wrote
        nl.store(out[t * 128 + ip, ic], value=y, mask=rows_left & (ic < cols - 3))
    return out


def test_masks_limit_partitions_and_free_ranges(rng):
    a = rng.random((200, 16)).astype(np.float32)
    out = run(masked_tail, a)
    close(out[:, :13], np.exp(a[:, :13]), atol=0, rtol=1e-6)
    assert np.isnan(out[:, 13:]).all()  # never written: the reference executor's fill


def test_instructions_after_a_masked_load_skip_the_unwritten_partitions():
    a = np.zeros((200, 16), np.float32)
    act = [i for i in instructions(masked_tail, a) if i.opcode_name == "Activation"]
    assert [i.ins[0].partitions for i in act] == [128, 72]


# ---- tiles: creation, copies, assignment ----

@nki.jit
def fills(a):
    out = nl.ndarray((4, 32, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    z = nl.zeros((32, 8), dtype=nl.float32)
    z += nl.load(a)
    nl.store(out[0], z)
    nl.store(out[1], nl.ones((32, 8), dtype=nl.float32))
    nl.store(out[2], nl.full((32, 8), 7.5, dtype=nl.float32))
    t = nl.ndarray((32, 8), dtype=nl.float32)
    t[...] = 2.0
    t[:, 0:4] = nl.copy(nl.load(a)[:, 4:8])
    nl.store(out[3], t)
    return out


def test_zeros_ones_full_and_partial_assignment(rng):
    a = rng.random((32, 8)).astype(np.float32)
    out = run(fills, a)
    np.testing.assert_array_equal(out[0], a)
    np.testing.assert_array_equal(out[1], 1.0)
    np.testing.assert_array_equal(out[2], 7.5)
    np.testing.assert_array_equal(out[3], np.concatenate([a[:, 4:8], np.full((32, 4), 2.0)], 1))


@nki.jit
def casts(a):
    out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(out, nl.copy(nl.load(a), dtype=nl.bfloat16))
    return out


def test_copy_casts_with_round_to_nearest_even(rng):
    a = rng.standard_normal((16, 64)).astype(np.float32)
    np.testing.assert_array_equal(run(casts, a), a.astype(bf16))


@nki.jit
def assign_into_blocks(a):
    P, F = a.shape
    out = nl.ndarray((2, P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    blocks = nl.ndarray((2, nl.par_dim(P), F), dtype=a.dtype)
    blocks[0] = nl.load(a)
    blocks[1] = nl.exp(blocks[0])
    nl.store(out[0], blocks[0])
    nl.store(out[1], blocks[1])
    return out


def test_assignments_write_in_place(rng):
    a = rng.random((64, 32)).astype(np.float32)
    out = run(assign_into_blocks, a)
    np.testing.assert_array_equal(out[0], a)
    close(out[1], np.exp(a), atol=0, rtol=1e-6)
    ops = [i.opcode_name for i in instructions(assign_into_blocks, a)]
    assert ops == ["Load", "Activation", "Save", "Save"]  # no copies: results land in place


# ---- the Tensor Engine ----

@nki.jit
def matmuls(x, y):
    M, K = x.shape
    _, N = y.shape
    out = nl.ndarray((2, M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    xs, ys = nl.load(x), nl.load(y)
    nl.store(out[0], nl.matmul(xs, ys))  # x is [M, K]: transposed on the PE first
    xt = nl.transpose(xs)
    nl.store(out[1], nl.copy(nl.matmul(xt, ys, transpose_x=True)))
    return out


def test_matmul_and_transpose(rng):
    x = rng.standard_normal((96, 64)).astype(np.float32)
    y = rng.standard_normal((64, 200)).astype(np.float32)
    out = run(matmuls, x, y)
    close(out[0], x.astype(np.float64) @ y, atol=1e-4, rtol=1e-5)
    close(out[1], x.astype(np.float64) @ y, atol=1e-4, rtol=1e-5)
    pe = [i for i in instructions(matmuls, x, y) if i.engine == bir.Engine.PE]
    assert [(i.opcode_name, i.is_transpose) for i in pe] == [
        ("Matmult", True), ("Matmult", False), ("Matmult", True), ("Matmult", False)]


@nki.jit
def psum_accumulation(lhsT, rhs):
    K, M = lhsT.shape
    out = nl.ndarray((M, rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, rhs.shape[1]), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        acc += nl.matmul(nl.load(lhsT[k * 128:(k + 1) * 128]), nl.load(rhs[k * 128:(k + 1) * 128]),
                         transpose_x=True)
    nl.store(out, acc)
    return out


def test_psum_accumulation_group_flags(rng):
    lhsT = rng.standard_normal((384, 64)).astype(np.float32)
    rhs = rng.standard_normal((384, 32)).astype(np.float32)
    close(run(psum_accumulation, lhsT, rhs), lhsT.astype(np.float64).T @ rhs, atol=1e-4,
          rtol=1e-5)
    mm = [i for i in instructions(psum_accumulation, lhsT, rhs) if i.opcode_name == "Matmult"]
    assert [(i.start_tensor_calc, i.stop_tensor_calc) for i in mm] == [
        (True, False), (False, False), (False, True)]
    ops = [i.opcode_name for i in instructions(psum_accumulation, lhsT, rhs)]
    assert "Memset" not in ops  # the zeros are replaced by the group's first matmul


# ---- SPMD programs ----

@nki.jit
def program_ids(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    assert nl.num_programs() == 6 and nl.num_programs(1) == 3 and nl.program_ndim() == 2
    tile = nl.load(a[i * 16:(i + 1) * 16, j * 8:(j + 1) * 8])
    nl.store(out[i * 16:(i + 1) * 16, j * 8:(j + 1) * 8], tile + (10 * i + j))
    return out


def test_spmd_grid_instances_share_their_output(rng):
    a = rng.random((32, 24)).astype(np.float32)
    out = run(program_ids[2, 3], a)
    bias = 10 * np.repeat(np.arange(2), 16)[:, None] + np.repeat(np.arange(3), 8)[None, :]
    close(out, a + bias, atol=0, rtol=1e-7)


def test_device_print_is_an_instruction(capsys):
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.device_print("tile t:", t)
        nl.store(out, t)
        return out

    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    insts = instructions(kernel, a)
    assert insts[1].opcode_name == "DevicePrint" and insts[1].prefix == "tile t:"
    run(kernel, a)
    assert "tile t:" in capsys.readouterr().out


@nki.jit
def halves_written_out_of_order(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype)
    t[64:128] = nl.load(a[64:128])
    t[0:64] = nl.load(a[0:64])
    nl.store(out, nl.exp(t))  # all 128 partitions are written, in two steps
    return out


def test_partitions_written_in_any_order_count_as_written(rng):
    a = rng.random((128, 16)).astype(np.float32)
    close(run(halves_written_out_of_order, a), np.exp(a), atol=0, rtol=1e-6)
    act = [i for i in instructions(halves_written_out_of_order, a) if i.opcode_name == "Activation"]
    assert act[0].ins[0].partitions == 128


def blocks_written_in(order):
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(a.shape, dtype=a.dtype)
        for lo in order:
            t[lo:lo + 32] = nl.load(a[lo:lo + 32])
        nl.store(out, nl.exp(t))
        return out
    return kernel


@pytest.mark.parametrize("order", list(itertools.permutations((0, 32, 64, 96))))
def test_partitions_written_in_any_order_of_four_blocks_count_as_written(order, rng):
    # Blocks beyond the written prefix wait until it reaches them; one reaching the next block
    # and the block after that (96, 64, 32 then 0) once left the last two out.
    a = rng.random((128, 8)).astype(np.float32)
    close(run(blocks_written_in(order), a), np.exp(a), atol=0, rtol=1e-6)


@nki.jit
def int32_and_uint32(a, b):
    s = nl.load(a) + nl.load(b)
    assert s.dtype == nl.float32  # "(np.int32, np.uint32) -> np.float32" (NKI Type Promotion)
    out = nl.ndarray(a.shape, dtype=s.dtype, buffer=nl.shared_hbm)
    nl.store(out, s)
    return out


def test_int32_plus_uint32_promotes_to_fp32(rng):
    a = rng.integers(-2**31, 2**31, (16, 16), dtype=np.int64).astype(np.int32)
    b = rng.integers(2**31, 2**32, (16, 16), dtype=np.int64).astype(np.uint32)  # beyond int32
    # (each operand and the sum rounded to fp32: within 1024 of the exact sum below 2^33)
    close(run(int32_and_uint32, a, b), a.astype(np.float64) + b, atol=1024)


@nki.jit
def fmods(a, b):
    out = nl.ndarray((3,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    nl.store(out[0], nl.fmod(x, y))
    nl.store(out[1], nl.fmod(x, -2.5))
    nl.store(out[2], nl.fmod(7.0, y))
    return out


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_fmod_takes_the_dividends_sign(executor, rng):
    """nl.fmod: "The remainder has the same sign as the dividend x" (numpy.fmod), unlike nl.mod."""
    a = rng.uniform(-10, 10, (32, 48)).astype(np.float32)
    b = (rng.uniform(0.5, 3, (32, 48)) * rng.choice([-1, 1], (32, 48))).astype(np.float32)
    out = run_on(executor, fmods, a, b)
    for got, want in zip(out, (np.fmod(a, b), np.fmod(a, np.float32(-2.5)), np.fmod(np.float32(7), b))):
        close(got, want, atol=2e-6)


@nki.jit
def flat_offset_mask(a, b, n):
    # The nki-samples tutorial add kernel's bound check: one offset over both dimensions of
    # whole tiles, which holds on the whole grid (or on none of it).
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ix = nl.arange(32)[:, None]
    iy = nl.arange(16)[None, :]
    for i in nl.affine_range(a.shape[0]):
        offset = i * 32 * 16 + 16 * ix + iy
        x = nl.load(a[i, ix, iy], mask=offset < n)
        y = nl.load(b[i, ix, iy], mask=offset < n)
        nl.store(out[i, ix, iy], value=nl.add(x, y, mask=offset < n), mask=offset < n)
    return out


def test_a_mask_of_several_dimensions_that_keeps_whole_tiles(rng):
    a, b = (rng.random((3, 32, 16)).astype(np.float32) for _ in range(2))
    close(run(flat_offset_mask, a, b, a.size), a + b, atol=0)
    out = run(flat_offset_mask, a, b, 2 * 32 * 16)  # the last tile kept by none of the grid
    close(out[:2], a[:2] + b[:2], atol=0)
    assert np.isnan(out[2]).all()  # never written: the reference executor's fill
    out = run(flat_offset_mask, a, b, a.size - 21)  # cuts the last tile's row 30: two boxes
    close(out.reshape(-1)[:-21], (a + b).reshape(-1)[:-21], atol=0)


@pytest.mark.parametrize("op", [nl.fmod, np.fmod], ids=["nl.fmod", "np.fmod"])
@pytest.mark.parametrize("form", ["tensor_tensor", "tensor_scalar"])
def test_fmod_as_an_instructions_op_is_refused_not_taken_as_mod(form, op):
    # No ALU operation computes fmod (the ALU's mod takes the divisor's sign; NKI's operator table
    # lists no fmod): op=nl.fmod computed mod before, a different answer for a negative operand.
    import neuronxsim.nki.isa as nisa
    from neuronxsim.nki.errors import NKIError

    @nki.jit
    def kernel(a, b):
        x, y = nl.load(a), nl.load(b)
        r = nisa.tensor_tensor(x, y, op=op) if form == "tensor_tensor" else nisa.tensor_scalar(x, op, 3.0)
        out = nl.ndarray(a.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    a = np.linspace(-7, 7, 32, dtype=np.float32).reshape(8, 4)
    with pytest.raises(NKIError, match=r"test_language.py:\d+: tensor_(tensor: op|scalar: op0): fmod is not "
                                       r"an ALU operation: .*the ALU's mod, op=nl.mod, takes the divisor's\); "
                                       r"call nl.fmod\(x, y\)"):
        run(kernel, a, np.full_like(a, 3))


# ---- masks bounding a flattened offset that cuts a tile inside a row ----

@nki.jit
def flat_offset_ops(a, n):
    # NKI 2.2x's tutorial add kernel's bound check over a [16, 4, 8] tile: whole partitions, then
    # one cut further (whole rows of 8, then one cut further), each element-wise op masked alike
    out = nl.ndarray((4,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(16)[:, None, None]
    ix = nl.arange(4)[None, :, None]
    iy = nl.arange(8)[None, None, :]
    for t in nl.affine_range(a.shape[0]):
        m = t * 512 + 32 * ip + 8 * ix + iy < n
        x = nl.load(a[t, ip, ix, iy], mask=m)
        nl.store(out[0, t, ip, ix, iy], value=nl.exp(x, mask=m), mask=m)
        nl.store(out[1, t, ip, ix, iy], value=nl.multiply(x, 3.0, mask=m), mask=m)
        nl.store(out[2, t, ip, ix, iy], value=nl.where(nl.greater(x, 0.5, mask=m), x, 0.0, mask=m),
                 mask=m)
        nl.store(out[3, t, ip, ix, iy], value=nl.copy(nl.add(x, x, mask=m), mask=m), mask=m)
    return out


@pytest.mark.parametrize("n", [1536, 1000, 1024 + 37, 512 + 31, 512 + 32 * 5 + 8 * 2, 7, 32 * 9])
def test_a_flattened_offset_mask_that_cuts_a_tile_keeps_exactly_the_prefix(executor, rng, n):
    a = rng.random((3, 16, 4, 8)).astype(np.float32)
    out = run_on(executor, flat_offset_ops, a, n)
    want = np.stack([np.exp(a), a * 3, np.where(a > 0.5, a, 0), a + a])
    for got, ref in zip(out, want):
        close(got.reshape(-1)[:n], ref.reshape(-1)[:n], rtol=1e-6, atol=1e-6)


def test_a_flattened_offset_mask_is_a_few_instructions_from_partition_0():
    # 5 whole partitions, then 3 rows of 8 and 3 elements of the sixth: three pieces, each
    # starting at partition 0 (an engine's instruction cannot start at partition 5): rows 0-2
    # and the first 3 elements of row 3 over partitions 0-5, the rest of row 3 over 0-4
    a = np.ones((1, 16, 4, 8), np.float32)
    adds = [i for i in instructions(flat_offset_ops, a, 5 * 32 + 3 * 8 + 3)
            if i.opcode == bir.InstructionType.TensorTensor]
    assert [(i.ins[0].offset, i.ins[0].partitions, list(i.ins[0].free_shape)) for i in adds] == \
        [(0, 6, [24]), (24, 6, [3]), (27, 5, [5])]


@nki.jit
def flat_offset_sum(a, n):
    out = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(a.shape[0])[:, None]
    iy = nl.arange(a.shape[1])[None, :]
    x = nl.load(a[ip, iy], mask=a.shape[1] * ip + iy < n)
    nl.store(out, nl.sum(x, axis=1, mask=a.shape[1] * ip + iy < n))
    return out


@nki.jit
def triangle_load(a):
    ip = nl.arange(a.shape[0])[:, None]
    iy = nl.arange(a.shape[1])[None, :]
    x = nl.load(a[ip, iy], mask=ip - iy < 0)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, x)
    return out


def test_a_mask_of_several_boxes_is_refused_where_a_row_is_reduced_and_triangles_still_are():
    a = np.ones((8, 16), np.float32)
    # a sum along the row of a cut row would be two instructions, each one part of the sum
    with pytest.raises(nki.NKIError, match=r"keeps 2 boxes of the tile .*only element-wise"):
        run(flat_offset_sum, a, 16 * 3 + 5)
    with pytest.raises(nki.NKIError, match=r"relates index dimensions \[0, 1\]"):
        run(triangle_load, a)


@nki.jit
def fills_with_bf16_scalars(a):
    # nl.finfo(bf16).min is an ml_dtypes bfloat16 scalar, which NumPy does not count as a number
    # (the public select_and_scatter kernel fills its padded tile with it)
    low = nl.full((a.shape[0], a.shape[1]), dtype=a.dtype, buffer=nl.sbuf,
                  fill_value=nl.finfo(a.dtype).min)
    x = nl.load(a)
    y = nl.maximum(x, low)
    z = nl.multiply(y, ml_dtypes.bfloat16(0.5))
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, z)
    floor = nl.ndarray((a.shape[0], 4), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(floor, ml_dtypes.bfloat16(-3.0))
    return out, floor


@pytest.mark.parametrize("partitions", [1, 127, 128])
def test_bf16_scalars_are_numbers_as_nki_finfo_gives_them(partitions):
    a = (np.arange(partitions * 513).reshape(partitions, 513) % 7 - 3).astype(ml_dtypes.bfloat16)
    out, floor = run(fills_with_bf16_scalars, a)
    np.testing.assert_array_equal(out.astype(np.float32), a.astype(np.float32) * 0.5)
    np.testing.assert_array_equal(floor.astype(np.float32), np.full((partitions, 4), -3.0, np.float32))


def test_a_complex_number_is_not_an_immediate():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(a), np.complex64(1 + 2j)))
        return out

    # (NumPy would take its real part, dropping the imaginary one with a warning)
    with pytest.raises(nki.NKIError, match="cannot combine a tile with complex64"):
        run(k, np.ones((4, 4), np.float32))


# ---- nl.mean of an integer tile ----

@nki.jit
def row_means(a):
    out = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range((a.shape[0] + 127) // 128):
        ip = t * 128 + nl.arange(128)[:, None]
        iy = nl.arange(a.shape[1])[None, :]
        m = nl.mean(nl.load(a[ip, iy], mask=ip < a.shape[0]), axis=1, keepdims=True,
                    mask=ip < a.shape[0])
        assert m.dtype == nl.float32
        nl.store(out[ip, nl.arange(1)[None, :]], m, mask=ip < a.shape[0])
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.int8, np.uint8])
def test_mean_of_an_integer_tile_is_float32(rng, dtype):
    # nki.language.mean (Neuron 2.x): "float32 intermediate and return values are used for
    # integer inputs" (the mean is not rounded back to the integer type)
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -100), min(info.max, 100), (300, 7)).astype(dtype)
    close(run(row_means, a), a.mean(1, keepdims=True), rtol=1e-6, atol=1e-6)

"""The single-instruction forms of nki.isa (NKI 0.6) that fuse a scalar stage into a Vector
Engine instruction (scalar_tensor_tensor, tensor_scalar_reduce, tensor_scalar_cumulative, with the
engine's accumulation registers) and the GpSimd gathers and reductions (tensor_partition_reduce,
local_gather, nc_n_gather / nl.gather_flattened, sequence_bounds, nonzero_with_count), against
NumPy over shapes that cross the partition and free-size boundaries. Each records one BIR
instruction. Tolerances: exact for data movement, integer results, max/min and fp32 arithmetic
on small multiples of powers of two; sums of random values within fp32 accumulation error
(|a - b| <= 1e-5 * n * max|x|)."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from nki06_testing import close, opcodes, run, tile_kernel

SHAPES = [(1, 1), (17, 7), (32, 64), (64, 513), (96, 130), (128, 1000)]


def grid(rng, shape, scale=8):
    """Small multiples of 1/4: sums and products of a few of them are exact in fp32."""
    return (rng.integers(-scale, scale + 1, size=shape) / 4).astype(np.float32)


def compute_opcodes(kernel, *args, arch=None):
    return [o for o in opcodes(kernel, *args, arch=arch) if o not in ("DMACopy", "DMA")]


@pytest.mark.parametrize("shape", SHAPES)
def test_scalar_tensor_tensor_is_one_instruction(shape, rng):
    a, b = grid(rng, shape), grid(rng, shape)
    col = grid(rng, (shape[0], 1))

    def immediate(d, x, y):
        nisa.scalar_tensor_tensor(dst=d, data=x, op0=nl.multiply, operand0=3.0, op1=nl.subtract,
                                  operand1=y, reverse1=True)
    np.testing.assert_array_equal(run(tile_kernel(immediate), a, b), b - 3 * a)
    assert compute_opcodes(tile_kernel(immediate), a, b) == ["ScalarTensorTensor"]

    def column(d, x, y, c):
        nisa.scalar_tensor_tensor(dst=d, data=x, op0=nl.subtract, operand0=c, reverse0=True,
                                  op1=nl.maximum, operand1=y)
    np.testing.assert_array_equal(run(tile_kernel(column), a, b, col), np.maximum(col - a, b))


def test_scalar_tensor_tensor_in_place_and_refusals(rng):
    a, b = grid(rng, (64, 300)), grid(rng, (64, 300))

    @nki.jit
    def accumulate(x, y):
        acc = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=acc, src=x)
        nisa.dma_copy(dst=t, src=y)
        for _ in range(3):  # acc = 0.5 * t + acc, in place
            nisa.scalar_tensor_tensor(dst=acc, data=t, op0=nl.multiply, operand0=0.5, op1=nl.add,
                                      operand1=acc)
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out

    np.testing.assert_array_equal(run(accumulate, a, b), a + 1.5 * b)

    def bitwise(d, x, y):
        nisa.scalar_tensor_tensor(dst=d, data=x, op0=nl.bitwise_and, operand0=1, op1=nl.add,
                                  operand1=y)
    ints = rng.integers(0, 9, (8, 8)).astype(np.int32)
    with pytest.raises(NKIError, match="arithmetic operators"):
        run(tile_kernel(bitwise), ints, ints)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op,np_fold", [(nl.add, np.sum), (nl.maximum, np.max),
                                        (nl.minimum, np.min)])
def test_tensor_scalar_reduce(shape, op, np_fold, rng):
    a = grid(rng, shape)

    @nki.jit
    def kernel(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        d = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.multiply, operand0=2.0, reduce_op=op,
                                  reduce_res=r, reduce_res_negate=True)
        o1 = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o1, src=d)
        nisa.dma_copy(dst=o2, src=r)
        return o1, o2

    d, r = run(kernel, a)
    np.testing.assert_array_equal(d, 2 * a)
    np.testing.assert_array_equal(r, -np_fold(2 * a, axis=1, keepdims=True))
    assert compute_opcodes(kernel, a) == ["TensorScalarReduce"]


def test_vector_accumulation_registers_across_instructions(rng):
    """reduce_cmd=reduce continues the registers an earlier instruction left; load_reduce starts
    from reduce_init; reduce_res=None keeps the result in the registers only."""
    a = grid(rng, (128, 700))
    init = grid(rng, (128, 1))

    @nki.jit
    def kernel(x, i):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        c = nl.ndarray(i.shape, dtype=i.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=c, src=i)
        d = nl.ndarray((128, 350), dtype=nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=d, data=t[:, :350], op0=nl.add, operand0=0.0,
                                  reduce_op=nl.add, reduce_cmd=nisa.reduce_cmd.load_reduce,
                                  reduce_init=c)
        nisa.tensor_scalar_reduce(dst=d, data=t[:, 350:], op0=nl.add, operand0=0.0,
                                  reduce_op=nl.add, reduce_res=r,
                                  reduce_cmd=nisa.reduce_cmd.reduce)
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    np.testing.assert_array_equal(run(kernel, a, init), a.sum(1, keepdims=True) + init)

    @nki.jit
    def unset(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=t, data=t, op0=nl.add, operand0=0.0, reduce_op=nl.add,
                                  reduce_res=r, reduce_cmd=nisa.reduce_cmd.reduce)
        out = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    from neuronxsim import SimulationError
    with pytest.raises(SimulationError, match="accumulation register of partition 0, which no "
                                              "instruction has set"):
        run(unset, a[:, :8])


@pytest.mark.parametrize("shape", SHAPES)
def test_tensor_scalar_cumulative(shape, rng):
    a = grid(rng, shape, scale=4)
    seed = grid(rng, (shape[0], 1))

    def cumsum(d, x):
        nisa.tensor_scalar_cumulative(dst=d, src=x, op0=nl.multiply, op1=nl.add, imm0=2.0)
    np.testing.assert_array_equal(run(tile_kernel(cumsum), a), np.cumsum(2 * a, axis=1))
    assert compute_opcodes(tile_kernel(cumsum), a) == ["TensorScalarReduce"]

    def running_max(d, x, s):
        nisa.tensor_scalar_cumulative(dst=d, src=x, op0=nl.add, op1=nl.maximum, imm0=0.0,
                                      imm1=s, reduce_cmd=nisa.reduce_cmd.load_reduce)
    np.testing.assert_array_equal(run(tile_kernel(running_max), a, seed),
                                  np.maximum.accumulate(np.maximum(a, np.where(
                                      np.arange(shape[1]) == 0, seed, -np.inf)), axis=1))

    def alternating(d, x):  # reg = y - reg: the documented operand order
        nisa.tensor_scalar_cumulative(dst=d, src=x, op0=nl.add, op1=nl.subtract, imm0=0.0)
    want = np.empty_like(a)
    reg = np.zeros(shape[0], np.float32)
    for i in range(shape[1]):
        reg = a[:, i] - reg
        want[:, i] = reg
    np.testing.assert_array_equal(run(tile_kernel(alternating), a), want)


@pytest.mark.parametrize("partitions", [1, 16, 33, 64, 128])
@pytest.mark.parametrize("op,np_fold", [(nl.add, np.sum), (nl.maximum, np.max)])
def test_tensor_partition_reduce(partitions, op, np_fold, rng):
    a = rng.standard_normal((partitions, 3, 50)).astype(np.float32)

    @nki.jit
    def kernel(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        d = nl.ndarray((1, 3, 50), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_partition_reduce(dst=d, op=op, data=t)
        out = nl.ndarray((1, 3, 50), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=d)
        return out

    want = np_fold(a, axis=0, keepdims=True)
    close(run(kernel, a), want, atol=1e-5 * partitions * np.abs(a).max())
    assert compute_opcodes(kernel, a) == ["TensorPartitionReduce"]


def test_tensor_partition_reduce_bitwise_and_refusals(rng):
    ints = rng.integers(0, 1 << 12, (32, 20)).astype(np.int32)

    def bits(d, x):
        nisa.tensor_partition_reduce(dst=d, op=nl.bitwise_or, data=x)
    np.testing.assert_array_equal(run(tile_kernel(bits, out_shape=(1, 20)), ints),
                                  np.bitwise_or.reduce(ints, axis=0, keepdims=True))

    def average(d, x):
        nisa.tensor_partition_reduce(dst=d, op=nl.average, data=x)
    with pytest.raises(NKIError, match="average over partitions"):
        run(tile_kernel(average, out_shape=(1, 20)), ints.astype(np.float32))


def numpy_local_gather(src, index, e, valid):
    """The NumPy semantics of the local_gather page's example: each 16-partition group's indices,
    flattened partition first, are element offsets into every partition of the group."""
    p = src.shape[0]
    out = np.empty((p, valid * e), src.dtype)
    for core in range(p // 16):
        rows = slice(16 * core, 16 * core + 16)
        idx = index[rows].flatten(order="F")[:valid].astype(np.int64)
        cols = (idx[:, None] + np.arange(e)).reshape(-1)
        out[rows] = src[rows][:, cols]
    return out


@pytest.mark.parametrize("partitions,e,valid", [(16, 1, 16), (32, 4, 20), (128, 2, 64),
                                                 (64, 32, 3), (128, 8, 48)])
def test_local_gather(partitions, e, valid, rng):
    src = rng.standard_normal((partitions, 512)).astype(np.float32)
    index = rng.integers(0, 512 - e + 1, (partitions, 4)).astype(np.uint16)

    def gather(d, s, i):
        nisa.local_gather(dst=d, src_buffer=s, index=i, num_elem_per_idx=e,
                          num_valid_indices=valid)
    k = tile_kernel(gather, out_shape=(partitions, valid * e), out_dtype=np.float32)
    np.testing.assert_array_equal(run(k, src, index), numpy_local_gather(src, index, e, valid))
    assert compute_opcodes(k, src, index) == ["LocalGather"]


def test_local_gather_refusals(rng):
    src = rng.standard_normal((24, 64)).astype(np.float32)

    def gather(d, s, i):
        nisa.local_gather(dst=d, src_buffer=s, index=i)
    with pytest.raises(NKIError, match="multiple of 16"):
        run(tile_kernel(gather, out_shape=(24, 16)), src, np.zeros((24, 1), np.uint16))
    src = src[:16]
    with pytest.raises(NKIError, match="LocalGather: the index is int32; local_gather indices are uint16"):
        run(tile_kernel(gather, out_shape=(16, 16)), src, np.zeros((16, 1), np.int32))
    from neuronxsim import SimulationError
    with pytest.raises(SimulationError, match=r"index 64 .* \(out of bounds"):
        run(tile_kernel(gather, out_shape=(16, 16)), src, np.full((16, 1), 64, np.uint16))


@pytest.mark.parametrize("shape,n", [((1, 5), 3), ((32, 600), 700), ((128, 40), 1)])
def test_nc_n_gather_and_gather_flattened(shape, n, rng):
    data = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[1], (shape[0], n)).astype(np.uint32)

    def gather(d, x, i):
        nisa.nc_n_gather(dst=d, data=x, indices=i)
    k = tile_kernel(gather, out_shape=(shape[0], n), out_dtype=np.float32)
    np.testing.assert_array_equal(run(k, data, idx), np.take_along_axis(data, idx, axis=1))
    assert compute_opcodes(k, data, idx) == ["Gather"]

    @nki.jit
    def flattened(x, i):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        j = nl.ndarray(i.shape, dtype=i.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=j, src=i)
        r = nl.gather_flattened(t, j, dtype=nl.bfloat16)
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    np.testing.assert_array_equal(run(flattened, data, idx).astype(np.float32),
                                  np.take_along_axis(data, idx, axis=1).astype(
                                      nl.bfloat16).astype(np.float32))
    from neuronxsim import SimulationError
    with pytest.raises(SimulationError, match="outside the"):
        run(k, data, np.full((shape[0], n), shape[1], np.uint32))


def numpy_sequence_bounds(seq):
    n = len(seq)
    start, end = np.zeros(n), np.zeros(n)
    for i in range(n):
        start[i] = n if seq[i] == 0 else (start[i - 1] if i and seq[i] == seq[i - 1] else i)
    for i in reversed(range(n)):
        end[i] = -1 if seq[i] == 0 else (end[i + 1] if i + 1 < n and seq[i] == seq[i + 1] else i + 1)
    return np.stack([start, end])[None]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("n", [1, 9, 512, 3000])
def test_sequence_bounds(dtype, n, rng):
    seq = np.sort(rng.integers(0, max(2, n // 7), n)).astype(dtype)[None, :]
    seq[0, rng.integers(0, n)] = 0  # padding inside a segment too

    @nki.jit
    def kernel(ids):
        t = nl.ndarray(ids.shape, dtype=ids.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=ids)
        d = nl.ndarray((1, 2, ids.shape[1]), dtype=ids.dtype, buffer=nl.sbuf)
        nisa.sequence_bounds(dst=d, segment_ids=t)
        out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=d)
        return out

    np.testing.assert_array_equal(run(kernel, seq), numpy_sequence_bounds(seq[0]))
    assert compute_opcodes(kernel, seq) == ["SequenceBounds"]
    from neuronxsim import SimulationError
    with pytest.raises(SimulationError, match="non-negative integers"):
        run(kernel, np.full((1, n), -1, dtype))


@pytest.mark.parametrize("partitions", [1, 16, 64, 128])
def test_nonzero_with_count(partitions, rng):
    src = (rng.random((partitions, 300)) < 0.3).astype(np.float32) * rng.standard_normal(
        (partitions, 300)).astype(np.float32)

    @nki.jit
    def kernel(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        d = nl.ndarray((x.shape[0], x.shape[1] + 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=d, value=7)  # partitions nonzero_with_count leaves alone keep this
        nisa.nonzero_with_count(dst=d, src=t, index_offset=1000, padding_val=-1)
        out = nl.ndarray(d.shape, dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=d)
        return out

    want = np.full((partitions, 301), 7, np.int32)
    for p in range(0, partitions, 16):
        found = np.flatnonzero(src[p])
        want[p] = -1
        want[p, :found.size] = found + 1000
        want[p, 300] = found.size
    np.testing.assert_array_equal(run(kernel, src, arch="trn2"), want)
    with pytest.raises(NKIError, match="needs NeuronCore-v3"):
        run(kernel, src, arch="trn1")


def test_topk_is_refused_saying_what_is_unknown(rng):
    def topk(d, x):
        nisa.topk(val_dst=d, idx_dst=d, src=x, n=16)
    with pytest.raises(NKIError, match="which partitions of val_dst"):
        run(tile_kernel(topk), rng.standard_normal((16, 16)).astype(np.float32))


@pytest.mark.parametrize("command", ["idle", "reduce"])
def test_activation_registers_no_instruction_set_are_refused(rng, command):
    """nisa.activation with reduce_res reads the Scalar Engine's registers: with reduce_cmd idle or
    reduce and no instruction having reset them, what they hold is whatever ran before the kernel,
    so the read is refused (it gave 0); after a reset_reduce, reduce continues them."""
    a = grid(rng, (128, 64))

    def make(first):
        @nki.jit
        def kernel(x):
            t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
            r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
            if first:
                nisa.activation(dst=y, op=nl.copy, data=t, reduce_op=nl.add,
                                reduce_cmd=nisa.reduce_cmd.reset_reduce)
            nisa.activation(dst=y, op=nl.copy, data=t, reduce_op=nl.add, reduce_res=r,
                            reduce_cmd=getattr(nisa.reduce_cmd, command))
            out = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=r)
            return out
        return kernel

    from neuronxsim import SimulationError
    with pytest.raises(SimulationError, match="accumulation register of partition 0, which no "
                                              "instruction has set"):
        run(make(False), a)
    times = 2 if command == "reduce" else 1
    np.testing.assert_allclose(run(make(True), a), times * a.sum(1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("op,np_op", [(nl.bitwise_or, np.bitwise_or), (nl.bitwise_and, np.bitwise_and),
                                      (nl.add, np.add), (nl.maximum, np.maximum)])
def test_tensor_partition_reduce_of_32_bit_integers_is_exact(op, np_op, dtype, executor, rng):
    # Bit-vector ops keep every bit (docs/isa-semantics.md §3); add and max on int32 / uint32 are
    # GpSimd's native integer arithmetic, as tensor_tensor on GpSimd ("exact results for all
    # 32-bit integer values", NKI 0.6 nki.isa.tensor_tensor), add wrapping modulo 2^32. Values
    # past 2^24 and negative ones, which an fp32 fold rounds, over 128 partitions of 513.
    a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (128, 513), dtype=np.int64).astype(dtype)
    a[:2, :4] = np.array([[1, 0x40000001, -2, 5], [2, 2, 1, 16777217]]).astype(dtype)
    if op is nl.bitwise_and:  # high bits every partition shares, so that the result keeps them
        a |= np.array(0x7F00000F, np.int64).astype(dtype)

    def reduce(d, x):
        nisa.tensor_partition_reduce(dst=d, op=op, data=x)

    got = run(tile_kernel(reduce, out_shape=(1, 513)), a, executor=executor)
    with np.errstate(over="ignore"):
        want = np_op.reduce(a, axis=0, keepdims=True, dtype=dtype)  # (add wraps)
    np.testing.assert_array_equal(got, want)


# ---- the Vector Engine's accumulation registers, shared by tensor_scalar_reduce, _cumulative,
# select_reduce and range_select (docs/isa-semantics.md §5, "Vector Engine accumulation
# registers") ----

REGISTER_SHAPES = [(p, n) for p in (1, 31, 128) for n in (1, 513, 2049)]


def _register_chain(middle):
    """A kernel of (x, y, pred, *columns): tensor_scalar_reduce(reset_reduce) of x,
    ``middle(t, u, p, s, *columns)`` (the inputs in SBUF, s a float32 tile of y's shape),
    tensor_scalar_reduce(reduce) of x again; returns that last reduce_res."""
    @nki.jit
    def kernel(x, y, pred, *columns):
        tiles = []
        for a in (x, y, pred) + columns:
            tiles.append(nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf))
            nisa.dma_copy(dst=tiles[-1], src=a)
        t = tiles[0]
        d = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        s = nl.ndarray(y.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=0.0, reduce_op=nl.add,
                                  reduce_cmd=nisa.reduce_cmd.reset_reduce)
        middle(*tiles[:3], s, *tiles[3:])
        r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=0.0, reduce_op=nl.add,
                                  reduce_res=r, reduce_cmd=nisa.reduce_cmd.reduce)
        out = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out
    return kernel


def _continued_sum(register, x):
    """The tensor_scalar_reduce pseudo-code's reduce: reg = add(y[i], reg) along the lane from
    ``register``."""
    reg = register.astype(np.float32)
    for v in x.T:
        reg = reg + v[:, None]
    return reg


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("shape", REGISTER_SHAPES)
def test_select_reduce_leaves_its_maximum_in_the_shared_registers(shape, executor, rng):
    """select_reduce with reset_reduce resets the registers tensor_scalar_reduce accumulates in
    ("Reset accumulators to -inf, then accumulate the current results"; "The accumulator
    registers are shared across Vector Engine accumulation instructions", NKI 0.6
    nki.isa.select_reduce): a later reduce continues from its per-partition maximum, not from
    the earlier sum. Expected: the pages' pseudo-code in NumPy (exact on multiples of 1/4)."""
    x, y = grid(rng, shape), grid(rng, shape)
    pred = rng.integers(0, 2, shape).astype(np.uint8)

    def middle(t, u, p, s):
        m = nl.ndarray((t.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.select_reduce(dst=s, predicate=p, on_true=u, on_false=-3.0, reduce_res=m,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce)

    register = np.where(pred != 0, y, np.float32(-3.0)).max(axis=1, keepdims=True)
    got = run(_register_chain(middle), x, y, pred, executor=executor)
    np.testing.assert_array_equal(got, _continued_sum(register, x))


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("shape", REGISTER_SHAPES)
def test_range_select_leaves_its_maximum_in_the_shared_registers(shape, executor, rng):
    """range_select (reset_reduce, its default) sets the shared registers to the per-partition
    maximum it writes to reduce_res (NKI 0.6 nki.isa.range_select: reduce_cmd "controls the state
    of the Vector Engine accumulator registers"; reduce_res=None keeps "the reduction result in
    the Vector Engine's internal accumulator")."""
    x, y = grid(rng, shape), grid(rng, shape)
    pred = np.zeros(shape, np.uint8)
    lo = rng.integers(0, shape[1], (shape[0], 1)).astype(np.float32)
    hi = lo + rng.integers(1, 40, (shape[0], 1)).astype(np.float32)

    def middle(t, u, p, s, bound0, bound1):
        m = nl.ndarray((t.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.range_select(dst=s, on_true_tile=u, comp_op0=nl.greater_equal, comp_op1=nl.less,
                          bound0=bound0, bound1=bound1, reduce_res=m)

    j = np.arange(shape[1], dtype=np.float32)[None, :]
    register = np.where((j >= lo) & (j < hi), y, np.finfo(np.float32).min).max(axis=1, keepdims=True)
    got = run(_register_chain(middle), x, y, pred, lo, hi, arch="trn2", executor=executor)
    np.testing.assert_array_equal(got, _continued_sum(register, x))


def _vector_engine_between(t, u, p, s):
    nisa.tensor_tensor(dst=s, data1=u, data2=u, op=nl.add)


def _select_reduce_idle_between(t, u, p, s):
    nisa.select_reduce(dst=s, predicate=p, on_true=u, on_false=0.0)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_a_reduce_after_an_idle_accumulation_instruction_is_refused(executor, rng):
    """"Even when reduce_cmd is set to idle, the accumulator state may still be modified. Always
    use reset_reduce after any Vector Engine operation that ran with idle mode" (NKI 0.6
    nki.isa.exponential; nki.isa.select_reduce likewise): a reduce after an idle accumulation
    instruction reads registers of unknown value, and is refused naming that instruction."""
    from neuronxsim import SimulationError
    x = grid(rng, (31, 513))
    with pytest.raises(SimulationError, match=r"accumulation register of partition 0, which no "
                       r"instruction has set since .*SelectReduce.* \(which may have changed it\)"):
        run(_register_chain(_select_reduce_idle_between), x, x, np.ones(x.shape, np.uint8),
            executor=executor)


def _activation_between(t, u, p, s):
    nisa.activation(dst=s, op=nl.copy, data=u)


def _gpsimd_between(t, u, p, s):
    nisa.tensor_tensor(dst=s, data1=u, data2=u, op=nl.add, engine=nisa.gpsimd_engine)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("middle", [_activation_between, _gpsimd_between, _vector_engine_between])
def test_other_instructions_leave_the_vector_engine_registers(middle, executor, rng):
    """Instructions on other engines, and Vector Engine instructions that do not accumulate, do
    not touch the registers (the public range_select example chains its reductions across an
    nl.add): the reduce continues the first sum."""
    x = grid(rng, (128, 513))
    got = run(_register_chain(middle), x, x, np.ones(x.shape, np.uint8), executor=executor)
    np.testing.assert_array_equal(got, _continued_sum(x.sum(axis=1, keepdims=True), x))


@pytest.mark.parametrize("op", ["select_reduce", "range_select"])
def test_select_reduce_and_range_select_refuse_reset(op):
    """reduce_cmd=reset ("Resets the accumulator registers to its initial state", without the
    current results) is not one of select_reduce's commands, and the recorded instruction cannot
    say it: a reduce_res would get the maximum while the registers hold -inf."""
    def middle(t, u, p, s, *bounds):
        m = nl.ndarray((t.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        if op == "select_reduce":
            nisa.select_reduce(dst=s, predicate=p, on_true=u, on_false=0.0, reduce_res=m,
                               reduce_cmd=nisa.reduce_cmd.reset)
        else:
            nisa.range_select(dst=s, on_true_tile=u, comp_op0=nl.greater_equal, comp_op1=nl.less,
                              bound0=bounds[0], bound1=bounds[1], reduce_res=m,
                              reduce_cmd=nisa.reduce_cmd.reset)

    x = np.zeros((8, 16), np.float32)
    col = np.zeros((8, 1), np.float32)
    with pytest.raises(NKIError, match=f"nisa.{op}: reduce_cmd=reset") as info:
        run(_register_chain(middle), x, x, np.ones(x.shape, np.uint8), col, col, arch="trn2")
    assert info.value.location.path == __file__

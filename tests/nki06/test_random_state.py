"""The engines' random number generators in NKI 0.6: nisa.rng, set_rng_seed, rand_set_state,
rand_get_state, nl.random_seed and nl.rand. The bits are the simulator's XORWOW (the hardware's
seeding and word order are not published): the tests check what the documentation promises --
the same seed or state gives the same values, states round-trip, the low bits of the 32-bit draws
fill narrower types, values in [0, 1) -- and the bits against an independent NumPy XORWOW."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from nki06_testing import opcodes, run, stored


def xorwow(states: np.ndarray, n: int) -> np.ndarray:
    """n draws of each row's xorwow state [x0..x4, d] (Marsaglia 2003), uint32 [P, n]."""
    s = states.astype(np.uint64).copy()
    out = np.empty((len(s), n), np.uint64)
    m = np.uint64(0xFFFFFFFF)
    for i in range(n):
        t, x0 = s[:, 4].copy(), s[:, 0].copy()
        s[:, 1:5] = s[:, 0:4].copy()
        t ^= t >> np.uint64(2)
        t = (t ^ (t << np.uint64(1))) & m
        t ^= x0 ^ ((x0 << np.uint64(4)) & m)
        s[:, 0] = t
        s[:, 5] = (s[:, 5] + np.uint64(362437)) & m
        out[:, i] = (t + s[:, 5]) & m
    return out.astype(np.uint32)


@pytest.mark.parametrize("partitions", [1, 16, 128])
def test_gpsimd_states_set_draw_and_read_back(partitions, rng):
    states = rng.integers(0, 2**32, (partitions, 6), dtype=np.uint64).astype(np.uint32)

    @nki.jit
    def kernel(seeds):
        s = nl.ndarray(seeds.shape, dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=seeds)
        nisa.rand_set_state(src_seeds=s)
        bits = nl.ndarray((seeds.shape[0], 40), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.rng(dst=bits, engine=nisa.engine.gpsimd)
        low = nl.ndarray((seeds.shape[0], 5), dtype=nl.uint8, buffer=nl.sbuf)
        nisa.rng(dst=low, engine=nisa.engine.gpsimd)
        after = nl.ndarray(seeds.shape, dtype=nl.uint32, buffer=nl.sbuf)
        nisa.rand_get_state(dst=after)
        outs = []
        for t in (bits, low, after):
            o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=o, src=t)
            outs.append(o)
        return tuple(outs)

    bits, low, after = run(kernel, states, arch="trn2")
    draws = xorwow(states, 45)
    np.testing.assert_array_equal(bits, draws[:, :40])
    np.testing.assert_array_equal(low, (draws[:, 40:] & 0xFF).astype(np.uint8))
    np.testing.assert_array_equal(after[:, 5], states[:, 5] + np.uint32(45 * 362437))
    assert opcodes(kernel, states, arch="trn2").count("Rand") == 2
    with pytest.raises(NKIError, match="needs NeuronCore-v3"):
        run(kernel, states, arch="trn1")


def test_vector_seed_repeats_the_sequence_and_rand_is_in_unit_interval():
    @nki.jit
    def kernel(seed):
        s = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=seed)
        nl.random_seed(s)
        a = nl.rand((128, 300), dtype=nl.float32)
        nisa.set_rng_seed(src_seeds=s)
        b = nl.rand((128, 300), dtype=nl.float32)
        c = nl.rand((128, 300), dtype=nl.float32)
        bits = nl.ndarray((128, 4), dtype=nl.int16, buffer=nl.sbuf)
        nisa.rng(dst=bits)
        outs = []
        for t in (a, b, c, bits):
            o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=o, src=t)
            outs.append(o)
        return tuple(outs)

    a, b, c, bits = run(kernel, np.array([[42]], np.int32), arch="trn1")
    np.testing.assert_array_equal(a, b)  # the same seed, the same values
    assert not np.array_equal(b, c)  # the generator moved on
    for v in (a, c):
        assert v.min() >= 0 and v.max() < 1 and abs(v.mean() - 0.5) < 0.01
    a2 = run(kernel, np.array([[7]], np.int32), arch="trn1")[0]
    assert not np.array_equal(a, a2)
    assert bits.dtype == np.int16


@pytest.mark.parametrize("dtype,bits", [(nl.float32, 24), (nl.bfloat16, 8), (nl.float16, 11)])
def test_rand_in_a_narrow_float_stays_below_one(dtype, bits):
    # (Drawn with 24 bits and rounded into bf16 or fp16, about one value in 500 became 1.0.)
    @nki.jit
    def kernel():
        out = nl.ndarray((128, 2048), dtype=dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.rand((128, 2048), dtype=dtype))
        return out

    v = run(kernel).astype(np.float64)
    assert v.min() >= 0 and v.max() < 1 and abs(v.mean() - 0.5) < 0.01
    scaled = v * 2.0**bits
    np.testing.assert_array_equal(scaled, np.floor(scaled))  # k / 2^bits: exact in the dtype
    assert len(np.unique(scaled)) > 2 ** min(bits, 16) // 2  # and spread over them


def test_refusals():
    @nki.jit
    def vector_state(x):
        s = nl.ndarray((4, 24), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.rand_set_state(src_seeds=s, engine=nisa.engine.vector)
        return x

    with pytest.raises(NKIError, match="NeuronCore-v4"):
        run(vector_state, np.zeros((1, 1), np.float32), arch="trn2")

    @nki.jit
    def float_bits(x):
        d = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.rng(dst=d)
        return x

    with pytest.raises(NKIError, match="int8, int16, int32, uint8, uint16 or uint32"):
        run(float_bits, np.zeros((1, 1), np.float32))


def test_rand_of_an_integer_dtype_is_refused():
    # (nl.rand's page: values "between 0 and 1"; an int32 tensor was a coin flip of 0 and 1)
    @nki.jit
    def kernel():
        out = nl.ndarray((4, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, nl.rand((4, 8), dtype=nl.int32))
        return out

    with pytest.raises(NKIError, match=r"test_random_state\.py:\d+: nl\.rand: draws values "
                                       r"between 0 and 1, which int32 cannot hold"):
        run(kernel)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_dropout_draws_from_the_vector_generators_and_keeps_survivors(executor, rng):
    # nisa.dropout (NKI 0.6 page): "If the probability is 0.0, all elements are kept with their
    # original values" -- survivors are not scaled. Its drops are the Vector Engine generators'
    # draws (docs/isa-semantics.md §5, Dropout): the element goes when the draw's top 24 bits,
    # as a fraction of 2^24, are below prob. So after one seed, nisa.rng's bits foretell the
    # mask of the dropout that follows the same seed, and of the dropout after that.
    x = (rng.uniform(1, 2, (128, 513)) * rng.choice([-1, 1], (128, 513))).astype(np.float32)

    @nki.jit
    def kernel(seed, a):
        s = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=seed)
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nl.random_seed(s)
        bits = nl.ndarray((128, 2 * 513), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.rng(dst=bits)
        nl.random_seed(s)
        d1 = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dropout(dst=d1, data=t, prob=0.3)
        d2 = nl.dropout(t, rate=0.3)
        return stored(bits, d1, d2)

    bits, d1, d2 = run(kernel, np.array([[1234]], np.int32), x, executor=executor)
    u = (bits >> np.uint32(8)).astype(np.float64) * 2.0**-24
    np.testing.assert_array_equal(d1, np.where(u[:, :513] < 0.3, np.float32(0), x))
    np.testing.assert_array_equal(d2, np.where(u[:, 513:] < 0.3, np.float32(0), x))
    both = np.mean((d1 == 0) & (d2 == 0))
    assert abs(np.mean(d1 == 0) - 0.3) < 0.01 and abs(both - 0.09) < 0.01  # independent masks

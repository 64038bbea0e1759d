"""Matmult: products into PSUM, accumulation groups, transpose mode."""

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import SimulationError

RNG = np.random.default_rng(2)


def test_matmult_multiplies_stationary_transposed_by_moving(run_op):
    stationary = RNG.normal(size=(64, 32)).astype(ml_dtypes.bfloat16)  # [K, M]
    moving = RNG.normal(size=(64, 100)).astype(ml_dtypes.bfloat16)  # [K, N]
    got = run_op("Matmult", [stationary, moving], [((32, 100), "float32", "PSUM")])[0]
    want = stationary.astype(np.float64).T @ moving.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_matmult_accumulates_into_the_open_group(program):
    p = program
    k_tiles = 3
    a = p.sbuf("a", 16, [k_tiles, 8])  # K-tile t of the stationary is a[:, t, :]
    b = p.sbuf("b", 16, [k_tiles, 12])
    p.load(a, p.input("a_in", [16, k_tiles, 8]))
    p.load(b, p.input("b_in", [16, k_tiles, 12]))
    acc = p.psum("acc", 8, 12)
    for t in range(k_tiles):
        p.add("Matmult", ins=[p.ap(a, [[24, 16], [1, 8]], offset=8 * t), p.ap(b, [[36, 16], [1, 12]], offset=12 * t)],
              outs=[acc], start_tensor_calc=t == 0, stop_tensor_calc=t == k_tiles - 1)
    p.store(p.output("y", [8, 12]), acc)
    av = RNG.normal(size=(16, k_tiles, 8)).astype(np.float32)
    bv = RNG.normal(size=(16, k_tiles, 12)).astype(np.float32)
    got = p.run(a_in=av, b_in=bv)["y"]
    want = sum(av[:, t, :].astype(np.float64).T @ bv[:, t, :] for t in range(k_tiles))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_start_tensor_calc_overwrites_what_psum_held(program):
    p = program
    a = p.sbuf("a", 4, 4)
    p.load(a, p.input("a_in", [4, 4]))
    acc = p.psum("acc", 4, 4)
    p.add("Memset", outs=[acc], constant=1000.0)
    p.add("Matmult", ins=[a, a], outs=[acc], start_tensor_calc=True)
    p.add("Matmult", ins=[a, a], outs=[acc], start_tensor_calc=False)
    p.store(p.output("y", [4, 4]), acc)
    av = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_allclose(p.run(a_in=av)["y"], 2 * av.T @ av)


def test_transpose_mode_is_bit_exact_and_ignores_moving(run_op):
    stationary = RNG.normal(size=(16, 8)).astype(np.float32)
    stationary[0, 0] = np.nan
    not_identity = np.full((16, 16), 5.0, np.float32)  # not read
    got = run_op("Matmult", [stationary, not_identity], [((8, 16), "float32", "PSUM")], is_transpose=True)[0]
    np.testing.assert_array_equal(got.view(np.uint32), stationary.T.view(np.uint32))
    bf16 = stationary.astype(ml_dtypes.bfloat16)
    got = run_op("Matmult", [bf16, not_identity], [((8, 16), "bfloat16", "PSUM")], is_transpose=True)[0]
    np.testing.assert_array_equal(got.view(np.uint16), bf16.T.view(np.uint16))


@pytest.mark.parametrize("ins, outs, message", [
    ([(8, 4), (8, 6)], ((4, 6), "float32"), r"outs\[0\]: the PE array writes PSUM only; tensor 'out0_tile' is in SB"),
    ([(8, 4), (6, 6)], ((4, 6), "float32", "PSUM"), r"ins\[1\]: has 6 partitions, expected 8"),
    ([(8, 4), (8, 6)], ((5, 6), "float32", "PSUM"), r"outs\[0\]: has 5 partitions, expected 4"),
])
def test_matmult_shape_refusals(run_op, ins, outs, message):
    with pytest.raises(SimulationError, match=message):
        run_op("Matmult", [np.ones(shape, np.float32) for shape in ins], [outs])


def test_pe_output_must_start_on_a_psum_word(program):
    """The PE writes PSUM in 4-byte words: a 16-bit transpose output starting at an odd element is
    refused, as the simulator refuses it (docs/isa-semantics.md, Matmult)."""
    p = program
    st = p.sbuf("st", 8, 4, "bfloat16")
    p.load(st, p.input("st_in", [8, 4], "bfloat16"))
    ident = p.sbuf("ident", 8, 8, "bfloat16")
    p.load(ident, p.input("ident_in", [8, 8], "bfloat16"))
    out = p.psum("out", 4, 16, "bfloat16", addr=2048)
    p.add("Matmult", ins=[st, ident], outs=[p.ap(out, [[16, 4], [1, 8]], offset=1)], is_transpose=True)
    with pytest.raises(SimulationError, match=r"outs\[0\]: starts at PSUM byte 2050, not on a 4-byte word"):
        p.run(st_in=np.ones((8, 4), ml_dtypes.bfloat16), ident_in=np.eye(8, dtype=ml_dtypes.bfloat16))

"""RowTiledMM, ColumnTiledMM (out = a @ b [+ bias]) and CaymanPackedPETranspose, through the
generic BIRKernel macro, against NumPy (the NKI matmul tutorial's atol 1e-4, rtol 1e-2; transposes
exact)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.starfish.penguin import ir  # noqa: E402

RTOL, ATOL = 1e-2, 1e-4


@pytest.mark.parametrize("kernel", ["RowTiledMM", "ColumnTiledMM"])
@pytest.mark.parametrize("dtype, M, K, N, bias", [
    ("float32", 200, 300, 520, True),
    ("bfloat16", 256, 384, 640, False),
    ("bfloat16", 130, 128, 1100, True),
    ("float32", 1, 1000, 77, False),
])
def test_tiled_matmul(rng, kernel, dtype, M, K, N, bias):
    tiled_matmul_case(rng, kernel, dtype, M, K, N, bias)


def tiled_matmul_case(rng, kernel, dtype, M, K, N, bias, transpose_a=False, tol=(RTOL, ATOL)):
    """Runs RowTiledMM or ColumnTiledMM (a given as aT [K, M] under ``transpose_a``) and checks
    out = a @ b (+ bias) with (rtol, atol) ``tol``; returns the expansion stats."""
    b = kit.Builder(dtype, rng)
    a = b.t("aT", [K, M]) if transpose_a else b.t("a", [M, K])
    srcs = [a, b.t("b", [K, N], scale=K ** -0.5)] + ([b.t("bias", [1, N])] if bias else [])
    b.add(ir.BIRKernel(kernel, [kit.F(t) for t in srcs], [kit.F(b.out("out", [M, N]))],
                       {"transpose_a": True} if transpose_a else {}))
    outs, stats = b.run()
    expected = (b.f("aT").T if transpose_a else b.f("a")) @ b.f("b") + (b.f("bias") if bias else 0)
    kit.assert_close(outs["out"], expected, *tol, kernel)
    return stats


@pytest.mark.parametrize("kernel", ["RowTiledMM", "ColumnTiledMM"])
@pytest.mark.parametrize("dtype, M, K, N", [("bfloat16", 256, 2048, 640), ("float32", 130, 200, 300)])
def test_transpose_a_takes_a_given_as_its_transpose(rng, kernel, dtype, M, K, N):
    """transpose_a: a arrives as aT [K, M] (attention's [heads * d, S] output into the output
    projection) and is loaded as the PE's stationary operand with no transposes."""
    stats = tiled_matmul_case(rng, kernel, dtype, M, K, N, False, transpose_a=True)
    if kernel == "RowTiledMM":  # no PE transposes of a: the only matmuls are the products
        assert stats[0]["per_engine"]["PE"] == -(-M // 128) * -(-K // 128) * -(-N // 512)


def test_row_tiled_matmul_streams_b_when_it_does_not_fit(rng):
    """b of 2 x 64 KiB per partition (more than half of SBUF) streams through a pool instead of
    staying resident: same result."""
    b = kit.Builder("float32", rng)
    srcs = [b.t("a", [130, 256]), b.t("b", [256, 16384], scale=1 / 16)]
    b.add(ir.BIRKernel("RowTiledMM", [kit.F(t) for t in srcs], [kit.F(b.out("out", [130, 16384]))]))
    outs, stats = b.run()
    kit.assert_close(outs["out"], b.f("a") @ b.f("b"), RTOL, ATOL, "streamed b")
    assert stats[0]["sbuf_bytes"] < 96 * 1024


@pytest.mark.parametrize("dtype, shape", [
    ("bfloat16", (200, 300)),     # one matrix, 128-row tiles
    ("float32", (6, 40, 200)),    # 40-row matrices packed three to a transpose
    ("bfloat16", (3, 130, 70)),   # taller than a tile: not packed
    ("float32", (9, 64, 129)),    # two per transpose, a partial pack at the end
])
def test_packed_pe_transpose(rng, dtype, shape):
    packed_transpose_case(rng, dtype, shape)


def packed_transpose_case(rng, dtype, shape):
    """Runs CaymanPackedPETranspose on x of ``shape`` and checks out == swapaxes(x) exactly."""
    b = kit.Builder(dtype, rng)
    x = b.t("x", list(shape))
    b.add(ir.BIRKernel("CaymanPackedPETranspose", [kit.F(x)], [kit.F(b.out("out", list(shape[:-2]) + [shape[-1], shape[-2]]))]))
    outs, _ = b.run()
    np.testing.assert_array_equal(outs["out"], np.swapaxes(b.inputs["x"], -1, -2))


def test_packing_reduces_the_transposes(rng):
    def transposes(shape):
        b = kit.Builder("float32", rng)
        b.add(ir.BIRKernel("CaymanPackedPETranspose", [kit.F(b.t("x", list(shape)))],
                           [kit.F(b.out("out", [shape[0], shape[2], shape[1]]))]))
        return kit.lower_and_inline(b.program)[1][0]["per_engine"]["PE"]
    assert transposes((8, 32, 128)) * 4 == transposes((8, 128, 128))


@pytest.fixture
def rng():
    return np.random.default_rng(19)

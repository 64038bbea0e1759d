"""End-to-end programs against NumPy: a tiled matmul accumulating over K in PSUM, and a row
softmax built from the activation accumulator, a reciprocal and a per-partition scale."""

import ml_dtypes
import numpy as np


def test_tiled_matmul_accumulates_k_tiles_in_psum(program):
    M, K, N, TILE = 128, 384, 96, 128
    p = program
    a = p.input("a", [M, K], "bfloat16")
    b = p.input("b", [K, N], "bfloat16")
    c = p.output("c", [M, N])
    stationary = p.sbuf("a_t", TILE, M, "bfloat16")  # one K-tile of A, transposed: [k, m]
    moving = p.sbuf("b_k", TILE, N, "bfloat16")
    acc = p.psum("acc", M, N)
    k_tiles = K // TILE
    for kt in range(k_tiles):
        # A[:, kt*128 : kt*128+128] is a [M, 128] window; the transposing DMA lands it as [128, M]
        p.load(stationary, p.ap(a, [[K, M], [1, TILE]], offset=kt * TILE), mode="Transpose")
        p.load(moving, p.ap(b, [[N, TILE], [1, N]], offset=kt * TILE * N))
        p.add("Matmult", ins=[stationary, moving], outs=[acc],
              start_tensor_calc=kt == 0, stop_tensor_calc=kt == k_tiles - 1)
    result = p.sbuf("c_sb", M, N)
    p.add("TensorCopy", ins=[acc], outs=[result])
    p.store(c, result)

    rng = np.random.default_rng(42)
    av = rng.normal(size=(M, K)).astype(ml_dtypes.bfloat16)
    bv = rng.normal(size=(K, N)).astype(ml_dtypes.bfloat16)
    got = p.run(a=av, b=bv)["c"]
    want = av.astype(np.float64) @ bv.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_row_softmax(program):
    P, F = 128, 64
    p = program
    x = p.sbuf("x", P, F)
    p.load(x, p.input("x_in", [P, F]))
    neg_max = p.sbuf("neg_max", P, 1)
    p.add("TensorReduce", ins=[x], outs=[neg_max], op="max", axis="X", negate=True)
    e = p.sbuf("e", P, F)
    # e = exp(x - max), and the accumulator registers collect each row's sum of e
    p.add("Activation", ins=[x, neg_max], outs=[e], func="Exp", has_bias=True,
          acc="ZeroAccumulate", acc_op="add")
    total = p.sbuf("total", P, 1)
    p.add("ReadActivationAccumulator", outs=[total])
    inverse = p.sbuf("inverse", P, 1)
    p.add("Reciprocal", ins=[total], outs=[inverse])
    y = p.sbuf("y", P, F, "bfloat16")
    p.add("TensorScalarPtr", ins=[e, inverse], outs=[y], op0="mult")
    p.store(p.output("y_out", [P, F], "bfloat16"), y)

    xv = (np.random.default_rng(7).normal(size=(P, F)) * 5).astype(np.float32)
    got = p.run(x_in=xv)["y_out"].astype(np.float64)
    shifted = np.exp(xv - xv.max(axis=1, keepdims=True))
    want = shifted / shifted.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=2**-8, atol=1e-7)  # bf16 output: half an ulp
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-2)

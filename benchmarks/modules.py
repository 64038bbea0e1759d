"""The modules the benchmarks run, built with the Python BIR API (neuronxsim.sim.build), and the
NumPy math each stands for."""

from __future__ import annotations

import numpy as np

from neuronxsim.bir import ActivationFunc, AluOp, DType, Engine, AccumCmd
from neuronxsim.sim.build import ModuleBuilder

P = 128          # partitions = K tile = M tile
N_TILE = 512     # moving free size = one 2 KiB PSUM bank of fp32


def tiled_gemm(m: int, k: int, n: int, arch: str = "trn1") -> ModuleBuilder:
    """C[m, n] = lhsT[k, m]^T @ rhs[k, n]: bf16 operands resident in SBUF, fp32 accumulation in
    PSUM over k tiles, PSUM evacuated by ACT and DVE in turn, stores spread over the DMA queues
    (the NKI tiled-matmul tutorial's structure, with lhsT as the stationary)."""
    assert m % P == 0 and k % P == 0 and n % N_TILE == 0
    b = ModuleBuilder(arch)
    lhsT = b.input("lhsT", [k, m], DType.bfloat16)
    rhs = b.input("rhs", [k, n], DType.bfloat16)
    c = b.output("c", [m, n], DType.float32)
    kt_n = k // P
    a_sb = b.sbuf("a_sb", P, kt_n * m, DType.bfloat16)
    b_sb = b.sbuf("b_sb", P, kt_n * n, DType.bfloat16)
    c_sb = [b.sbuf(f"c_sb{i}", P, N_TILE, DType.float32) for i in range(2)]
    banks = [b.psum(f"acc{i}", P, N_TILE) for i in range(8)]
    for kt in range(kt_n):
        b.dma(b.tile(a_sb, col=kt * m, elems=m), b.ap(lhsT, kt * P * m, [(m, P), (1, m)]), queue=kt % 8)
        b.dma(b.tile(b_sb, col=kt * n, elems=n), b.ap(rhs, kt * P * n, [(n, P), (1, n)]), queue=8 + kt % 8)
    i = 0
    for mt in range(m // P):
        for nt in range(n // N_TILE):
            acc = banks[i % 8]
            for kt in range(kt_n):
                b.matmul(b.tile(acc), b.tile(a_sb, col=kt * m + mt * P, elems=P),
                         b.tile(b_sb, col=kt * n + nt * N_TILE, elems=N_TILE), start=kt == 0, stop=kt == kt_n - 1)
            stage = c_sb[i % 2]
            engine = Engine.Activation if i % 2 == 0 else Engine.DVE
            b.add("TensorCopy", [b.tile(acc)], [b.tile(stage)], engine=engine)
            b.dma(b.ap(c, mt * P * n + nt * N_TILE, [(n, P), (1, N_TILE)]), b.tile(stage), queue=i % 16)
            i += 1
    return b


def mlp_chain(tokens: int, d_model: int, d_ff: int, arch: str = "trn1") -> ModuleBuilder:
    """yT = (gelu(x @ W1) @ W2)^T for x [tokens, d_model], computed feature-major: xT [d_model,
    tokens] stays in SBUF, W1 / W2 column blocks stream in through double-buffered DMAs, h^T [d_ff,
    tokens] (bf16, from ACT's Gelu on PSUM) stays in SBUF, yT tiles leave through DVE copies."""
    assert tokens == N_TILE and d_model % P == 0 and d_ff % P == 0
    b = ModuleBuilder(arch)
    xT = b.input("xT", [d_model, tokens], DType.bfloat16)
    w1 = b.input("w1", [d_model, d_ff], DType.bfloat16)
    w2 = b.input("w2", [d_ff, d_model], DType.bfloat16)
    yT = b.output("yT", [d_model, tokens], DType.float32)
    kd, kf = d_model // P, d_ff // P
    x_sb = b.sbuf("x_sb", P, kd * tokens, DType.bfloat16)
    h_sb = b.sbuf("h_sb", P, kf * tokens, DType.bfloat16)
    w1_sb = [b.sbuf(f"w1_sb{i}", P, kd * P, DType.bfloat16) for i in range(2)]
    w2_sb = [b.sbuf(f"w2_sb{i}", P, kf * P, DType.bfloat16) for i in range(2)]
    y_sb = [b.sbuf(f"y_sb{i}", P, tokens, DType.float32) for i in range(2)]
    banks = [b.psum(f"acc{i}", P, N_TILE) for i in range(8)]
    for kt in range(kd):
        b.dma(b.tile(x_sb, col=kt * tokens, elems=tokens), b.ap(xT, kt * P * tokens, [(tokens, P), (1, tokens)]),
              queue=kt % 16)
    step = 0
    for mt in range(kf):  # h^T tile mt = gelu(W1[:, mt]^T @ xT)
        wbuf = w1_sb[mt % 2]
        b.dma(b.tile(wbuf), b.ap(w1, mt * P, [(d_ff, P), (P * d_ff, kd), (1, P)]), queue=mt % 16)
        acc = banks[step % 8]
        for kt in range(kd):
            b.matmul(b.tile(acc), b.tile(wbuf, col=kt * P, elems=P), b.tile(x_sb, col=kt * tokens, elems=tokens),
                     start=kt == 0, stop=kt == kd - 1)
        b.add("Activation", [b.tile(acc)], [b.tile(h_sb, col=mt * tokens, elems=tokens)], func=ActivationFunc.Gelu)
        step += 1
    for mt in range(kd):  # yT tile mt = W2[:, mt]^T @ h^T
        wbuf = w2_sb[mt % 2]
        b.dma(b.tile(wbuf), b.ap(w2, mt * P, [(d_model, P), (P * d_model, kf), (1, P)]), queue=mt % 16)
        acc = banks[step % 8]
        for kt in range(kf):
            b.matmul(b.tile(acc), b.tile(wbuf, col=kt * P, elems=P), b.tile(h_sb, col=kt * tokens, elems=tokens),
                     start=kt == 0, stop=kt == kf - 1)
        stage = y_sb[mt % 2]
        b.add("TensorCopy", [b.tile(acc)], [b.tile(stage)])
        b.dma(b.ap(yT, mt * P * tokens, [(tokens, P), (1, tokens)]), b.tile(stage), queue=(mt + 8) % 16)
        step += 1
    return b


def softmax_rows(rows: int, cols: int, arch: str = "trn1") -> ModuleBuilder:
    """Row softmax of x [rows, cols] fp32, 128 rows per tile: max (DVE reduce), exp(x - max) with
    the row sum accumulated on ACT, reciprocal, scale, store. Five compute instructions per tile."""
    b = ModuleBuilder(arch)
    x = b.input("x", [rows, cols], DType.float32)
    y = b.output("y", [rows, cols], DType.float32)
    xs = [b.sbuf(f"x{i}", P, cols, DType.float32) for i in range(2)]
    es = [b.sbuf(f"e{i}", P, cols, DType.float32) for i in range(2)]
    neg_max, ssum, rsum = (b.sbuf(n, P, 1, DType.float32) for n in ("neg_max", "sum", "rsum"))
    for t in range(rows // P):
        xt, et = xs[t % 2], es[t % 2]
        b.dma(b.tile(xt), b.ap(x, t * P * cols, [(cols, P), (1, cols)]), queue=t % 8)
        b.add("TensorReduce", [b.tile(xt)], [b.tile(neg_max)], op=AluOp.max, negate=True)
        b.add("Activation", [b.tile(xt), b.tile(neg_max)], [b.tile(et)], func=ActivationFunc.Exp, has_bias=True,
              acc=AccumCmd.ZeroAccumulate, acc_op=AluOp.add)
        b.add("ReadActivationAccumulator", [], [b.tile(ssum)])
        b.add("Reciprocal", [b.tile(ssum)], [b.tile(rsum)])
        b.add("TensorScalarPtr", [b.tile(et), b.tile(rsum)], [b.tile(et)], op0=AluOp.mult)
        b.dma(b.ap(y, t * P * cols, [(cols, P), (1, cols)]), b.tile(et), queue=8 + t % 8)
    return b


def softmax_numpy_per_op(x: np.ndarray) -> np.ndarray:
    """The softmax module's math, one NumPy call per compute instruction on the same tiles (the
    least a NumPy executor of the module does)."""
    y = np.empty_like(x)
    for t in range(x.shape[0] // P):
        xt = x[t * P:(t + 1) * P]
        neg_max = -xt.max(axis=1, keepdims=True)
        e = np.exp(xt + neg_max)
        s = e.sum(axis=1, keepdims=True)
        r = np.float32(1) / s
        y[t * P:(t + 1) * P] = e * r
    return y


def layernorm_rows(rows: int, cols: int, eps: float = 1e-5, arch: str = "trn1") -> ModuleBuilder:
    """LayerNorm of x [rows, cols] over cols (cols <= 512), gamma/beta [128, cols] pre-broadcast:
    bn_stats, bn_aggr, rstd = (var + eps)^-1/2, (x - mean) * rstd, * gamma, + beta."""
    assert cols <= 512
    b = ModuleBuilder(arch)
    x = b.input("x", [rows, cols], DType.float32)
    g = b.input("gamma", [P, cols], DType.float32)
    be = b.input("beta", [P, cols], DType.float32)
    y = b.output("y", [rows, cols], DType.float32)
    gs, bs = b.sbuf("g", P, cols, DType.float32), b.sbuf("b", P, cols, DType.float32)
    b.dma(b.tile(gs), b.full(g), queue=0)
    b.dma(b.tile(bs), b.full(be), queue=1)
    xs = [b.sbuf(f"x{i}", P, cols, DType.float32) for i in range(2)]
    stats, mv, rstd = b.sbuf("stats", P, 6, DType.float32), b.sbuf("mv", P, 2, DType.float32), b.sbuf("rstd", P, 1, DType.float32)
    for t in range(rows // P):
        xt = xs[t % 2]
        b.dma(b.tile(xt), b.ap(x, t * P * cols, [(cols, P), (1, cols)]), queue=2 + t % 6)
        b.add("BNStats", [b.tile(xt)], [b.tile(stats)])
        b.add("BNStatsAggregate", [b.tile(stats)], [b.tile(mv)])
        b.add("TensorScalar", [b.tile(mv, col=1, elems=1)], [b.tile(rstd)], op0=AluOp.add, const0=eps,
              op1=AluOp.pow, const1=-0.5)
        b.add("TensorScalarPtr", [b.tile(xt), b.tile(mv, elems=1), b.tile(rstd)], [b.tile(xt)], op0=AluOp.subtract,
              op1=AluOp.mult)
        b.add("TensorTensor", [b.tile(xt), b.tile(gs)], [b.tile(xt)], op=AluOp.mult)
        b.add("TensorTensor", [b.tile(xt), b.tile(bs)], [b.tile(xt)], op=AluOp.add)
        b.dma(b.ap(y, t * P * cols, [(cols, P), (1, cols)]), b.tile(xt), queue=8 + t % 8)
    return b


def layernorm_numpy_per_op(x, gamma, beta, eps=1e-5):
    y = np.empty_like(x)
    for t in range(x.shape[0] // P):
        xt = x[t * P:(t + 1) * P]
        mean = xt.mean(axis=1, keepdims=True)
        var = xt.var(axis=1, keepdims=True)
        rstd = (var + np.float32(eps)) ** np.float32(-0.5)
        z = (xt - mean) * rstd
        z = z * gamma
        y[t * P:(t + 1) * P] = z + beta
    return y


def mixed_stream(iterations: int, arch: str = "trn1") -> ModuleBuilder:
    """A long stream of ten mixed instructions per iteration (two loads on rotating queues, four
    accumulating matmuls, ACT on PSUM, a DVE and a Pool op, one store) over rotating SBUF buffers
    and PSUM banks, so that every engine and the hazard tracker are busy. For timing mode."""
    b = ModuleBuilder(arch)
    x = b.input("x", [P, 4 * N_TILE], DType.bfloat16)
    w = b.input("w", [P, P], DType.bfloat16)
    y = b.output("y", [P, 8 * N_TILE], DType.float32)
    xs = [b.tile(b.sbuf(f"x{i}", P, N_TILE, DType.bfloat16)) for i in range(4)]
    ws = [b.tile(b.sbuf(f"w{i}", P, P, DType.bfloat16)) for i in range(2)]
    hs = [b.tile(b.sbuf(f"h{i}", P, N_TILE, DType.float32)) for i in range(4)]
    banks = [b.tile(b.psum(f"acc{i}", P, N_TILE)) for i in range(8)]
    xsrc = [b.ap(x, i * N_TILE, [(4 * N_TILE, P), (1, N_TILE)]) for i in range(4)]
    wsrc = b.full(w)
    ydst = [b.ap(y, i * N_TILE, [(8 * N_TILE, P), (1, N_TILE)]) for i in range(8)]
    add = b.add
    for it in range(iterations):
        xt, wt, ht, acc = xs[it % 4], ws[it % 2], hs[it % 4], banks[it % 8]
        b.dma(xt, xsrc[it % 4], queue=it % 16)
        b.dma(wt, wsrc, queue=(it + 5) % 16)
        for j in range(4):
            b.matmul(acc, wt, xt, start=j == 0, stop=j == 3)
        add("Activation", [acc], [ht], func=ActivationFunc.Relu)
        add("TensorScalar", [ht], [ht], op0=AluOp.mult, const0=0.5)
        add("TensorScalar", [ht], [ht], engine=Engine.Pool, op0=AluOp.add, const0=1.0)
        b.dma(ydst[it % 8], ht, queue=(it + 9) % 16)
    return b

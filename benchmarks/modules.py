"""The modules the benchmarks run, built with the Python BIR API (neuronxsim.sim.build)."""

from __future__ import annotations

from neuronxsim.bir import ActivationFunc, AluOp, DType, Engine
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

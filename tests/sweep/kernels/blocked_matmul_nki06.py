"""The blocked matrix multiplication of ``blocked_matmul.py`` written for NKI 0.6 (``import
nki``: destination-first ``nisa``, the partition dim first): ``result[M, N] = lhsT.T @ rhs``
with the same three tuning knobs and the same limits."""

import nki
import nki.isa as nisa
import nki.language as nl

TILE_K = 128  # contraction rows per matmul: the partitions
TILE_M = 128  # stationary columns per matmul
TILE_N = 512  # moving columns per matmul: one PSUM bank of fp32


@nki.jit
def blocked_matmul(lhsT, rhs, TILES_IN_BLOCK_M=1, TILES_IN_BLOCK_N=1, TILES_IN_BLOCK_K=1):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2, f"lhsT has {K} rows but rhs {K2}"
    BM, BN, BK = TILE_M * TILES_IN_BLOCK_M, TILE_N * TILES_IN_BLOCK_N, TILE_K * TILES_IN_BLOCK_K
    assert M % BM == 0 and N % BN == 0 and K % BK == 0, \
        f"blocks of {BM}x{BN}x{BK} do not divide the {M}x{N}x{K} product"
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // BM):
        for nb in nl.affine_range(N // BN):
            acc = nl.ndarray((TILE_M, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, TILE_N), dtype=nl.float32,
                             buffer=nl.psum)
            for kb in nl.sequential_range(K // BK):
                a = nl.ndarray((TILE_K, TILES_IN_BLOCK_K, BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TILE_K, TILES_IN_BLOCK_K, BN), dtype=rhs.dtype, buffer=nl.sbuf)
                for t in nl.affine_range(TILES_IN_BLOCK_K):
                    k0 = (kb * TILES_IN_BLOCK_K + t) * TILE_K
                    nisa.dma_copy(dst=a[:, t, :], src=lhsT[k0:k0 + TILE_K, mb * BM:(mb + 1) * BM])
                    nisa.dma_copy(dst=b[:, t, :], src=rhs[k0:k0 + TILE_K, nb * BN:(nb + 1) * BN])
                for i in nl.affine_range(TILES_IN_BLOCK_M):
                    for j in nl.affine_range(TILES_IN_BLOCK_N):
                        for t in nl.affine_range(TILES_IN_BLOCK_K):
                            nisa.nc_matmul(dst=acc[:, i, j, :],
                                           stationary=a[:, t, i * TILE_M:(i + 1) * TILE_M],
                                           moving=b[:, t, j * TILE_N:(j + 1) * TILE_N],
                                           accumulate=kb > 0 or t > 0)
            for i in nl.affine_range(TILES_IN_BLOCK_M):
                for j in nl.affine_range(TILES_IN_BLOCK_N):
                    m0, n0 = mb * BM + i * TILE_M, nb * BN + j * TILE_N
                    out = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=out, src=acc[:, i, j, :])
                    nisa.dma_copy(dst=result[m0:m0 + TILE_M, n0:n0 + TILE_N], src=out)
    return result

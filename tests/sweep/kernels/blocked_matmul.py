"""A blocked matrix multiplication with three tuning knobs, written for the NKI 2.2x dialect
(``neuronxcc.nki``) as a user's kernel file: ``result[M, N] = lhsT.T @ rhs``.

The output is cut into blocks of ``TILES_IN_BLOCK_M`` x ``TILES_IN_BLOCK_N`` PSUM tiles
([128, 512] fp32 each, one 2 KiB bank per partition); each block accumulates the whole
contraction in PSUM, reading the operands ``TILES_IN_BLOCK_K`` tiles of 128 rows at a time.
Larger blocks load each operand fewer times but hold more SBUF and PSUM: more than eight PSUM
tiles fit only reordered (eight at a time through the whole contraction, as the compiler may);
sizes that do not divide the matrices fail (an assertion: the sweep records a failed row).
"""

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

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
            acc = nl.zeros((TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, nl.par_dim(TILE_M), TILE_N),
                           dtype=nl.float32, buffer=nl.psum)
            for kb in nl.sequential_range(K // BK):
                a = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BM), dtype=lhsT.dtype,
                               buffer=nl.sbuf)
                b = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BN), dtype=rhs.dtype,
                               buffer=nl.sbuf)
                for t in nl.affine_range(TILES_IN_BLOCK_K):
                    k0 = (kb * TILES_IN_BLOCK_K + t) * TILE_K
                    a[t] = nl.load(lhsT[k0:k0 + TILE_K, mb * BM:(mb + 1) * BM])
                    b[t] = nl.load(rhs[k0:k0 + TILE_K, nb * BN:(nb + 1) * BN])
                for i in nl.affine_range(TILES_IN_BLOCK_M):
                    for j in nl.affine_range(TILES_IN_BLOCK_N):
                        for t in nl.affine_range(TILES_IN_BLOCK_K):
                            acc[i, j] += nisa.nc_matmul(a[t, :, i * TILE_M:(i + 1) * TILE_M],
                                                        b[t, :, j * TILE_N:(j + 1) * TILE_N])
            for i in nl.affine_range(TILES_IN_BLOCK_M):
                for j in nl.affine_range(TILES_IN_BLOCK_N):
                    m0, n0 = mb * BM + i * TILE_M, nb * BN + j * TILE_N
                    nl.store(result[m0:m0 + TILE_M, n0:n0 + TILE_N],
                             value=nl.copy(acc[i, j], dtype=result.dtype))
    return result

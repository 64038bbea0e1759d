"""The matrix multiplication tutorial's four kernels (2.2x SDK docs, ``general/nki/tutorials/
matrix_multiplication.rst``; measured on trn1 for ``[4096, 8192] @ [8192, 8192]`` in BF16):
``result[M, N] = lhsT[K, M].T @ rhs[K, N]`` in 128 x 128 x 512 tiles, each version a step of the
tutorial's sequence of optimisations. Written for this repository in the 2.2x dialect of
``neuronxsim.nki``."""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl

TK, TM, TN = 128, 128, 512  # contraction rows, stationary columns, moving columns of one matmul


@nki.jit
def tiled(lhsT, rhs):
    """Step 0: for every output tile, load both operand tiles right before each matmul."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mi in nl.affine_range(M // TM):
        for ni in nl.affine_range(N // TN):
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for ki in nl.affine_range(K // TK):
                a = nl.load(lhsT[ki * TK:(ki + 1) * TK, mi * TM:(mi + 1) * TM])
                b = nl.load(rhs[ki * TK:(ki + 1) * TK, ni * TN:(ni + 1) * TN])
                acc += nisa.nc_matmul(a, b)
            nl.store(result[mi * TM:(mi + 1) * TM, ni * TN:(ni + 1) * TN],
                     nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def hoisted(lhsT, rhs):
    """Step 1: a row of lhsT tiles is loaded once per output row, a column of rhs tiles once
    per output tile (the loads hoisted out of the contraction loop)."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    nk = K // TK
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mi in nl.affine_range(M // TM):
        a = nl.ndarray((nk, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for ki in nl.affine_range(nk):
            a[ki] = nl.load(lhsT[ki * TK:(ki + 1) * TK, mi * TM:(mi + 1) * TM])
        for ni in nl.affine_range(N // TN):
            b = nl.ndarray((nk, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for ki in nl.affine_range(nk):
                b[ki] = nl.load(rhs[ki * TK:(ki + 1) * TK, ni * TN:(ni + 1) * TN])
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for ki in nl.affine_range(nk):
                acc += nisa.nc_matmul(a[ki], b[ki])
            nl.store(result[mi * TM:(mi + 1) * TM, ni * TN:(ni + 1) * TN],
                     nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def blocked_free(lhsT, rhs, bm=2, bn=2):
    """Step 2: as step 1, with ``bm`` stationary and ``bn`` moving tiles per block, so each
    loaded tile serves several output tiles."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    nk = K // TK
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // (TM * bm)):
        a = nl.ndarray((bm, nk, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for i in nl.affine_range(bm):
            m0 = (mb * bm + i) * TM
            for ki in nl.affine_range(nk):
                a[i, ki] = nl.load(lhsT[ki * TK:(ki + 1) * TK, m0:m0 + TM])
        for nb in nl.affine_range(N // (TN * bn)):
            b = nl.ndarray((bn, nk, nl.par_dim(TK), TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for j in nl.affine_range(bn):
                n0 = (nb * bn + j) * TN
                for ki in nl.affine_range(nk):
                    b[j, ki] = nl.load(rhs[ki * TK:(ki + 1) * TK, n0:n0 + TN])
            for i in nl.affine_range(bm):
                for j in nl.affine_range(bn):
                    acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
                    for ki in nl.affine_range(nk):
                        acc += nisa.nc_matmul(a[i, ki], b[j, ki])
                    m0, n0 = (mb * bm + i) * TM, (nb * bn + j) * TN
                    nl.store(result[m0:m0 + TM, n0:n0 + TN], nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def blocked_all(lhsT, rhs, bm=16, bn=2, bk=8):
    """Step 3: blocks in all three dimensions. For each column block of the output, the
    contraction runs block by block (``bk`` tiles each); each block's [bk*128, bn*512] slab of
    rhs is loaded with one DMA per 128 rows, each row block of lhsT likewise, and every output
    tile's partial sum is added into an SBUF accumulator of the whole column block; the column
    block is stored at the end, one [128, bn*512] DMA per output row tile."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    BM, BN, BK = TM * bm, TN * bn, TK * bk
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for nb in nl.affine_range(N // BN):
        out = nl.zeros((M // BM, bm, nl.par_dim(TM), BN), dtype=lhsT.dtype, buffer=nl.sbuf)
        for kb in nl.sequential_range(K // BK):
            b = nl.ndarray((bk, nl.par_dim(TK), BN), dtype=rhs.dtype, buffer=nl.sbuf)
            for t in nl.affine_range(bk):
                k0 = kb * BK + t * TK
                b[t] = nl.load(rhs[k0:k0 + TK, nb * BN:(nb + 1) * BN])
            for mb in nl.affine_range(M // BM):
                a = nl.ndarray((bk, nl.par_dim(TK), BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for t in nl.affine_range(bk):
                    k0 = kb * BK + t * TK
                    a[t] = nl.load(lhsT[k0:k0 + TK, mb * BM:(mb + 1) * BM])
                for j in nl.affine_range(bn):
                    for i in nl.affine_range(bm):
                        part = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
                        for t in nl.affine_range(bk):
                            part += nisa.nc_matmul(a[t, :, i * TM:(i + 1) * TM],
                                                   b[t, :, j * TN:(j + 1) * TN])
                        out[mb, i, :, j * TN:(j + 1) * TN] += part
        for mb in nl.affine_range(M // BM):
            for i in nl.affine_range(bm):
                m0 = mb * BM + i * TM
                nl.store(result[m0:m0 + TM, nb * BN:(nb + 1) * BN], out[mb, i])
    return result


@nki.jit
def blocked_all_packed(lhsT, rhs, bm=16, bn=2, bk=8):
    """Step 3 as the kernel optimization tutorial writes it (``nki/guides/tutorials/
    kernel-optimization.rst``, the trn2 profile): as :func:`blocked_all`, but every [128, 512]
    output tile has its own SBUF accumulator, zeroed by its own memset, and before the store the
    ``bn`` accumulators of an output row are copied side by side into one [128, bn*512] tile
    (a VectorE tensor_copy each), which one DMA then stores."""
    K, M = lhsT.shape
    N = rhs.shape[1]
    BM, BN, BK = TM * bm, TN * bn, TK * bk
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for nb in nl.affine_range(N // BN):
        out = nl.ndarray((M // BM, bm, bn, nl.par_dim(TM), TN), dtype=lhsT.dtype, buffer=nl.sbuf)
        for mb in nl.affine_range(M // BM):
            for i in nl.affine_range(bm):
                for j in nl.affine_range(bn):
                    out[mb, i, j] = nisa.memset((TM, TN), 0.0, dtype=lhsT.dtype)
        for kb in nl.sequential_range(K // BK):
            b = nl.ndarray((bk, nl.par_dim(TK), BN), dtype=rhs.dtype, buffer=nl.sbuf)
            for t in nl.affine_range(bk):
                k0 = kb * BK + t * TK
                b[t] = nl.load(rhs[k0:k0 + TK, nb * BN:(nb + 1) * BN])
            for mb in nl.affine_range(M // BM):
                a = nl.ndarray((bk, nl.par_dim(TK), BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for t in nl.affine_range(bk):
                    k0 = kb * BK + t * TK
                    a[t] = nl.load(lhsT[k0:k0 + TK, mb * BM:(mb + 1) * BM])
                for j in nl.affine_range(bn):
                    for i in nl.affine_range(bm):
                        part = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
                        for t in nl.affine_range(bk):
                            part += nisa.nc_matmul(a[t, :, i * TM:(i + 1) * TM],
                                                   b[t, :, j * TN:(j + 1) * TN])
                        out[mb, i, j] += part
        for mb in nl.affine_range(M // BM):
            for i in nl.affine_range(bm):
                packed = nl.ndarray((nl.par_dim(TM), BN), dtype=nl.float32, buffer=nl.sbuf)
                for j in nl.affine_range(bn):
                    packed[:, j * TN:(j + 1) * TN] = nisa.tensor_copy(out[mb, i, j])
                m0 = mb * BM + i * TM
                nl.store(result[m0:m0 + TM, nb * BN:(nb + 1) * BN], packed)
    return result

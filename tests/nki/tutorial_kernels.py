"""The public NKI tutorial kernels (aws-neuron/nki-samples, SDK 2.2x era), written the way NKI
users write them. Only the imports differ from a kernel for the real compiler:

    import neuronxcc.nki as nki               ->  import neuronxsim.nki as nki
    import neuronxcc.nki.language as nl       ->  import neuronxsim.nki.language as nl
    import neuronxcc.nki.isa as nisa          ->  import neuronxsim.nki.isa as nisa
"""

import math

import numpy as np

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl


# ---- tensor addition (SPMD: one [128, 512] tile per program) ----

@nki.jit
def tensor_add_kernel(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    row0 = nl.program_id(0) * 128
    col0 = nl.program_id(1) * 512
    ix = row0 + nl.arange(128)[:, None]
    iy = col0 + nl.arange(512)[None, :]
    a_tile = nl.load(a_input[ix, iy])
    b_tile = nl.load(b_input[ix, iy])
    nl.store(c_output[ix, iy], value=a_tile + b_tile)
    return c_output


def tensor_add_launch(a):
    """The kernel launched with one program per [128, 512] tile of ``a``."""
    return tensor_add_kernel[a.shape[0] // 128, a.shape[1] // 512]


# ---- matrix multiplication ----

@nki.jit
def matmul_tiled(lhsT, rhs):
    """result[M, N] = lhsT.T @ rhs, tiling M by 128 (stationary), N by 512 (moving) and
    accumulating the K tiles in PSUM."""
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TM = nl.tile_size.gemm_stationary_fmax
    TK = nl.tile_size.pmax
    TN = nl.tile_size.gemm_moving_fmax
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                lhsT_tile = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                lhsT_tile[...] = nl.load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                rhs_tile[...] = nl.load(rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                acc += nl.matmul(lhsT_tile[...], rhs_tile[...], transpose_x=True)
            out_tile = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], value=out_tile)
    return result


@nki.jit
def matmul_hoisted(lhsT, rhs):
    """The tiled matmul with the lhsT column of tiles loaded once per m (block tiles with
    nl.par_dim) and mgrid index patterns."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TM, TK, TN = 128, 128, 512
    i_l = nl.mgrid[0:TK, 0:TM]
    i_r = nl.mgrid[0:TK, 0:TN]
    i_o = nl.mgrid[0:TM, 0:TN]
    for m in nl.affine_range(M // TM):
        lhsT_tiles = nl.ndarray((K // TK, nl.par_dim(TK), TM), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(K // TK):
            lhsT_tiles[k, i_l.p, i_l.x] = nl.load(lhsT[k * TK + i_l.p, m * TM + i_l.x])
        for n in nl.affine_range(N // TN):
            rhs_tiles = nl.ndarray((K // TK, nl.par_dim(TK), TN), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for k in nl.affine_range(K // TK):
                rhs_tiles[k, i_r.p, i_r.x] = nl.load(rhs[k * TK + i_r.p, n * TN + i_r.x])
            acc = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                acc[...] += nl.matmul(lhsT_tiles[k, i_l.p, i_l.x], rhs_tiles[k, i_r.p, i_r.x],
                                      transpose_x=True)
            nl.store(result[m * TM + i_o.p, n * TN + i_o.x], value=nl.copy(acc, dtype=result.dtype))
    return result


@nki.jit
def matmul_blocked(lhsT, rhs, BLOCKS_M=2, BLOCKS_N=2, BLOCKS_K=2):
    """Blocks of tiles in all three dimensions with nisa.nc_matmul, PSUM results accumulated
    into an SBUF block, and the output rows stored in one DMA per block row."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TM, TK, TN = 128, 128, 512
    BM, BN, BK = TM * BLOCKS_M, TN * BLOCKS_N, TK * BLOCKS_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in nl.affine_range(N // BN):
        res_tiles = nl.zeros((M // BM, BLOCKS_M, BLOCKS_N, nl.par_dim(TM), TN), dtype=lhsT.dtype,
                             buffer=nl.sbuf)
        for k in nl.sequential_range(K // BK):
            rhs_tiles = nl.ndarray((BLOCKS_K, nl.par_dim(TK), BN), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for bk in nl.affine_range(BLOCKS_K):
                rhs_tiles[bk] = nl.load(rhs[(k * BLOCKS_K + bk) * TK:(k * BLOCKS_K + bk + 1) * TK,
                                            n * BN:(n + 1) * BN])
            for m in nl.affine_range(M // BM):
                lhsT_tiles = nl.ndarray((BLOCKS_K, nl.par_dim(TK), BM), dtype=lhsT.dtype,
                                        buffer=nl.sbuf)
                for bk in nl.affine_range(BLOCKS_K):
                    lhsT_tiles[bk] = nl.load(
                        lhsT[(k * BLOCKS_K + bk) * TK:(k * BLOCKS_K + bk + 1) * TK,
                             m * BM:(m + 1) * BM])
                for bn in nl.affine_range(BLOCKS_N):
                    for bm in nl.affine_range(BLOCKS_M):
                        ps = nl.zeros((TM, TN), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(BLOCKS_K):
                            ps[...] += nisa.nc_matmul(lhsT_tiles[bk, :, bm * TM:(bm + 1) * TM],
                                                      rhs_tiles[bk, :, bn * TN:(bn + 1) * TN])
                        res_tiles[m, bm, bn] += ps
        for m in nl.affine_range(M // BM):
            for bm in nl.affine_range(BLOCKS_M):
                row = nl.ndarray((TM, BN), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(BLOCKS_N):
                    row[:, bn * TN:(bn + 1) * TN] = nl.copy(res_tiles[m, bm, bn])
                nl.store(result[(m * BLOCKS_M + bm) * TM:(m * BLOCKS_M + bm + 1) * TM,
                                n * BN:(n + 1) * BN], value=row)
    return result


# ---- 2-D transpose inside each partition, by access patterns ----

@nki.jit
def transpose2d_kernel(in_tensor, shape2d):
    """Each row of in_tensor is a row-major [X, Y] matrix; the result holds it as [Y, X]."""
    out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    rows, _ = in_tensor.shape
    X, Y = shape2d
    tile = nl.load(in_tensor)
    ip = nl.arange(rows)[:, None, None]
    ix = nl.arange(X)[None, :, None]
    iy = nl.arange(Y)[None, None, :]
    swapped = nl.ndarray((rows, X * Y), dtype=in_tensor.dtype)
    swapped[ip, iy * X + ix] = nl.copy(tile[ip, ix * Y + iy])
    nl.store(out_tensor, value=swapped)
    return out_tensor


# ---- 2-D average pooling (channels on partitions) ----

@nki.jit
def avgpool_kernel(in_tensor, pool_size):
    C, H, W = in_tensor.shape
    HO, WO = H // pool_size, W // pool_size
    out_tensor = nl.ndarray((C, HO, WO), dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    ic, iho, iph, iwo, ipw = nl.mgrid[0:C, 0:HO, 0:pool_size, 0:WO, 0:pool_size]
    tile = nl.load(in_tensor)
    windows = tile[ic, pool_size * iho + iph, pool_size * iwo + ipw]
    pooled = nl.sum(windows, axis=[2, 4]) / (pool_size * pool_size)
    nl.store(out_tensor, value=pooled)
    return out_tensor


# ---- RMSNorm: rows over partitions, a masked last tile ----

@nki.jit
def rmsnorm_kernel(a_tensor, g_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = a_tensor.shape
    assert g_tensor.shape[0] == cols
    ip = nl.arange(128)[:, None]
    i1 = nl.arange(1)[:, None]
    ic = nl.arange(cols)[None, :]
    g_row = nl.load(g_tensor.reshape((1, cols))[i1, ic])
    g_all = g_row.broadcast_to((128, cols))
    for t in nl.affine_range(math.ceil(rows / 128)):
        in_rows = t * 128 + ip < rows
        a_tile = nl.load(a_tensor[t * 128 + ip, ic], mask=in_rows)
        mean_sq = nl.sum(nl.square(a_tile), axis=[1]) / cols
        inv_rms = nl.rsqrt(mean_sq)
        out_tile = nl.multiply(a_tile, inv_rms)
        out_tile[...] = nl.multiply(out_tile, g_all, mask=in_rows)
        nl.store(out_tensor[t * 128 + ip, ic], value=out_tile, mask=in_rows)
    return out_tensor


# ---- LayerNorm, with nl only (v1) and with bn_stats / bn_aggr (v2) ----

@nki.jit
def layernorm_v1(input_tensor, epsilon, gamma_vector, beta_vector):
    output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype,
                               buffer=nl.shared_hbm)
    rows, cols = input_tensor.shape
    P = nl.tile_size.pmax
    ip = nl.arange(P)[:, None]
    ic = nl.arange(cols)[None, :]
    i1 = nl.arange(1)[:, None]
    gamma = nl.load(gamma_vector.reshape((1, cols))[i1, ic]).broadcast_to((P, cols))
    beta = nl.load(beta_vector.reshape((1, cols))[i1, ic]).broadcast_to((P, cols))
    for t in nl.affine_range(math.ceil(rows / P)):
        valid = t * P + ip < rows
        x = nl.load(input_tensor[t * P + ip, ic], mask=valid)
        mean = nl.mean(x, axis=1)
        var = nl.mean(nl.square(x), axis=1) - mean * mean
        normed = (x - mean) * nl.rsqrt(var + epsilon)
        y = normed * gamma + beta
        nl.store(output_tensor[t * P + ip, ic], value=y, mask=valid)
    return output_tensor


@nki.jit
def layernorm_v2(input_tensor, epsilon, gamma_vector, beta_vector):
    output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype,
                               buffer=nl.shared_hbm)
    rows, cols = input_tensor.shape
    P = nl.tile_size.pmax
    FB = nl.tile_size.bn_stats_fmax
    ip = nl.arange(P)[:, None]
    ic = nl.arange(cols)[None, :]
    i1 = nl.arange(1)[:, None]
    gamma = nl.load(gamma_vector.reshape((1, cols))[i1, ic]).broadcast_to((P, cols))
    beta = nl.load(beta_vector.reshape((1, cols))[i1, ic]).broadcast_to((P, cols))
    chunks = math.ceil(cols / FB)
    i_fb = nl.arange(FB)[None, :]
    i6 = nl.arange(6)[None, :]
    for t in nl.affine_range(math.ceil(rows / P)):
        valid = t * P + ip < rows
        x = nl.load(input_tensor[t * P + ip, ic], mask=valid)
        stats = nl.ndarray((P, 6 * chunks), dtype=np.float32)
        for j in nl.affine_range(chunks):
            stats[ip, j * 6 + i6] = nisa.bn_stats(x[ip, j * FB + i_fb],
                                                  mask=(j * FB + i_fb < cols), dtype=np.float32)
        mean_var = nisa.bn_aggr(stats[ip, nl.arange(6 * chunks)[None, :]])
        mean = mean_var[ip, 0]
        inv_std = nl.rsqrt(mean_var[ip, 1] + epsilon)
        normed = nisa.tensor_scalar(data=x, op0=np.subtract, operand0=mean,
                                    op1=np.multiply, operand1=inv_std)
        y = normed * gamma + beta
        nl.store(output_tensor[t * P + ip, ic], value=y, mask=valid)
    return output_tensor


# ---- softmax over rows, and the attention forward tutorial ----

@nki.jit
def softmax_kernel(a_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    rows, cols = a_tensor.shape
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range(math.ceil(rows / 128)):
        valid = t * 128 + ip < rows
        a_tile = nl.load(a_tensor[t * 128 + ip, ic], mask=valid)
        row_max = nl.max(a_tile, axis=[1], keepdims=True, mask=valid)
        e = nl.exp(nl.subtract(a_tile, row_max, mask=valid))
        nl.store(out_tensor[t * 128 + ip, ic], value=e / nl.sum(e, axis=[1]), mask=valid)
    return out_tensor


@nki.jit
def attention_fwd_v1(q, k, v):
    """softmax(q.T @ k) @ v.T for q, k, v of shape [d_head=128, seq=128] (nl only)."""
    d_head, seq = q.shape
    out = nl.ndarray((seq, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb, k_sb, v_sb = nl.load(q), nl.load(k), nl.load(v)
    scores = nl.matmul(q_sb, k_sb, transpose_x=True)
    shifted = nl.subtract(scores, nl.max(scores, axis=1))
    e = nl.exp(shifted)
    probs = nl.divide(e, nl.sum(e, axis=1))
    v_t = nl.transpose(v_sb)
    nl.store(out, value=nl.matmul(probs, v_t, transpose_x=False))
    return out


@nki.jit
def attention_fwd_v2(q, k, v):
    """The same attention with explicit instructions (nisa)."""
    d_head, seq = q.shape
    out = nl.ndarray((seq, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb, k_sb, v_sb = nl.load(q), nl.load(k), nl.load(v)
    scores = nisa.nc_matmul(stationary=q_sb, moving=k_sb)
    row_max = nisa.tensor_reduce(op=nl.max, data=scores, axis=1)
    shifted = nisa.tensor_scalar(data=scores, op0=nl.subtract, operand0=row_max,
                                 engine=nisa.vector_engine)
    e = nisa.activation(op=nl.exp, data=shifted)
    row_sum = nisa.tensor_reduce(op=nl.add, data=e, axis=1)
    inv_sum = nisa.reciprocal(data=row_sum)
    probs = nisa.tensor_scalar(data=e, op0=nl.multiply, operand0=inv_sum,
                               engine=nisa.vector_engine, dtype=q.dtype)
    v_t = nisa.tensor_copy(nisa.nc_transpose(v_sb))
    probs_t = nisa.tensor_copy(nisa.nc_transpose(probs))
    result = nisa.nc_matmul(stationary=probs_t, moving=v_t)
    nl.store(out, value=result)
    return out


# ---- Mamba selective scan ----

@nki.jit
def mamba_v1(delta, u, A, B, C):
    """y[b, c, t] = sum_s C[b, s, t] * h_s[t] with h_s[t] = exp(delta A)[t] h_s[t-1] +
    (delta u B)[t]; channels on partitions, the scan along the free dimension."""
    batch, channels, seq = delta.shape
    _, states = A.shape
    output = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    n_tiles = channels // P
    for b in nl.affine_range(batch):
        acc = nl.zeros((n_tiles, nl.par_dim(P), seq), dtype=delta.dtype)
        for s in nl.affine_range(states):
            for t in nl.affine_range(n_tiles):
                c0 = t * P
                delta_t = nl.load(delta[b, c0:c0 + P, 0:seq])
                A_col = nl.load(A[c0:c0 + P, s])
                dA = nisa.activation(op=nl.exp, data=delta_t, scale=A_col)
                u_t = nl.load(u[b, c0:c0 + P, 0:seq])
                B_row = nl.load(B[b, s:s + 1, 0:seq])
                du = nisa.tensor_tensor(delta_t, u_t, op=nl.multiply)
                dBu = nisa.tensor_tensor(du, B_row.broadcast_to((P, seq)), op=nl.multiply)
                h = nisa.tensor_tensor_scan(dA, dBu, initial=0, op0=np.multiply, op1=np.add)
                C_row = nl.load(C[b, s:s + 1, 0:seq])
                acc[t, 0:P, 0:seq] += nisa.tensor_tensor(h, C_row.broadcast_to((P, seq)),
                                                         op=nl.multiply)
        for t in nl.affine_range(n_tiles):
            nl.store(output[b, t * P:(t + 1) * P, 0:seq], acc[t, 0:P, 0:seq])
    return output


@nki.jit
def mamba_v2(delta, u, A, B, C):
    """mamba_v1 with the channel tiles outermost, so delta and u are loaded once per tile."""
    batch, channels, seq = delta.shape
    _, states = A.shape
    output = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    for b in nl.affine_range(batch):
        for t in nl.affine_range(channels // P):
            c0 = t * P
            acc = nl.zeros((nl.par_dim(P), seq), dtype=delta.dtype)
            delta_t = nl.load(delta[b, c0:c0 + P, 0:seq])
            u_t = nl.load(u[b, c0:c0 + P, 0:seq])
            du = nisa.tensor_tensor(delta_t, u_t, op=nl.multiply)
            for s in nl.affine_range(states):
                A_col = nl.load(A[c0:c0 + P, s])
                dA = nisa.activation(op=nl.exp, data=delta_t, scale=A_col)
                B_row = nl.load(B[b, s:s + 1, 0:seq])
                dBu = nisa.tensor_tensor(du, B_row.broadcast_to((P, seq)), op=nl.multiply)
                h = nisa.tensor_tensor_scan(dA, dBu, initial=0, op0=np.multiply, op1=np.add)
                C_row = nl.load(C[b, s:s + 1, 0:seq])
                acc += nisa.tensor_tensor(h, C_row.broadcast_to((P, seq)), op=nl.multiply)
            nl.store(output[b, c0:c0 + P, 0:seq], acc)
    return output

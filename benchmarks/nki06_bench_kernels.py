"""NKI 0.6 kernels (destination-first ``nisa``) that ``bench_nki_trace.py`` traces beside the
2.2x tutorials: a blocked matmul with PSUM accumulation and an RMS norm, written for this
benchmark at realistic sizes."""

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl


@nki.jit
def matmul_blocked06(lhsT, rhs):
    """result[M, N] = lhsT.T @ rhs, in 128 x 512 tiles, K accumulated in PSUM 128 rows at a
    time, each operand block loaded once per output block."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        a = nl.ndarray((128, K // 128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(K // 128):
            nisa.dma_copy(dst=a[:, k, :], src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        for n in nl.affine_range(N // 512):
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(K // 128):
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(dst=acc, stationary=a[:, k, :], moving=b, accumulate=k > 0)
            out = nl.ndarray((128, 512), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=out, src=acc)
            nisa.dma_copy(dst=result[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=out)
    return result


@nki.jit
def rmsnorm06(x, gamma):
    """out = x / sqrt(mean(x^2, axis=1) + 1e-6) * gamma, 128 rows at a time."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.ndarray((128, cols), dtype=gamma.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=gamma.ap([[0, 128], [1, cols]]))
    for r in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[r * 128:(r + 1) * 128, :])
        sq = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
        inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=inv, data=ss, op0=nl.multiply, operand0=1.0 / cols,
                           op1=nl.add, operand1=1e-6)
        nisa.activation(dst=inv, op=nl.sqrt, data=inv)
        y = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=t, op0=nl.divide, operand0=inv)
        nisa.tensor_tensor(dst=y, data1=y, data2=g, op=nl.multiply)
        nisa.dma_copy(dst=out[r * 128:(r + 1) * 128, :], src=y)
    return out

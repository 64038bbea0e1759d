"""The LayerNorm tutorial's two kernels (2.2x SDK docs, ``general/nki/tutorials/layernorm.rst``,
fp32, measured on trn1 with ``nki.benchmark``): rows on partitions in tiles of 128, gamma and
beta broadcast to all partitions once. Written for this repository in the 2.2x dialect of
``neuronxsim.nki``."""

from __future__ import annotations

import math

import numpy as np

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl

P = 128
BN_STATS_FMAX = 512


def _params(gamma, beta, n):
    g = nl.load(gamma.reshape((1, n)))
    b = nl.load(beta.reshape((1, n)))
    return g.broadcast_to((P, n)), b.broadcast_to((P, n))


@nki.jit
def layernorm_v1(x, epsilon, gamma, beta):
    """Version 1, nki.language only: mean, then the mean of squares, then shift, scale and the
    affine transform as separate elementwise operations."""
    rows, n = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    g, b = _params(gamma, beta, n)
    for i in nl.affine_range(math.ceil(rows / P)):
        r0, r1 = i * P, min(rows, (i + 1) * P)
        p = r1 - r0
        t = nl.load(x[r0:r1, :])
        mean = nl.mean(t, axis=1)
        var = nl.mean(nl.square(t), axis=1) - mean * mean
        y = (t - mean) * nl.rsqrt(var + epsilon)
        nl.store(out[r0:r1, :], y * g[0:p, :] + b[0:p, :])
    return out


@nki.jit
def layernorm_v2(x, epsilon, gamma, beta):
    """Version 2: bn_stats over 512-element chunks and bn_aggr for mean and variance, one
    tensor_scalar for the shift and scale."""
    rows, n = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    g, b = _params(gamma, beta, n)
    chunks = math.ceil(n / BN_STATS_FMAX)
    for i in nl.affine_range(math.ceil(rows / P)):
        r0, r1 = i * P, min(rows, (i + 1) * P)
        p = r1 - r0
        t = nl.load(x[r0:r1, :])
        stats = nl.ndarray((nl.par_dim(p), 6 * chunks), dtype=nl.float32)
        for j in nl.affine_range(chunks):
            c0, c1 = j * BN_STATS_FMAX, min(n, (j + 1) * BN_STATS_FMAX)
            stats[:, 6 * j:6 * j + 6] = nisa.bn_stats(t[:, c0:c1], dtype=nl.float32)
        mv = nisa.bn_aggr(stats)
        rstd = nl.rsqrt(mv[:, 1:2] + epsilon)
        y = nisa.tensor_scalar(t, op0=np.subtract, operand0=mv[:, 0:1], op1=np.multiply,
                               operand1=rstd)
        nl.store(out[r0:r1, :], y * g[0:p, :] + b[0:p, :])
    return out

"""The fused_mamba tutorial's three kernels (``nki/guides/tutorials/fused_mamba.rst``, measured
on trn1 with the 2.2x SDK): the selective-scan SSM
``out[b, c, t] = sum_s C[b, s, t] h_s[c, t]``, ``h_s[c, t] = exp(delta A)[c, s, t] h_s[c, t-1] +
(delta u B)[c, s, t]``, channels on partitions and the sequence along the free dimension.
Written for this repository in the 2.2x dialect of ``neuronxsim.nki``.

Two things the tutorial's kernels leave to the compiler are written out here, as the published
figures imply the compiler did them:

* ``B_i.broadcast_to((128, seq))`` of a one-partition row is a TensorE matmul with a row of ones
  (the tutorial: "a separate instruction on TensorE"). When the row fits one PSUM bank
  (``seq * 4 <= 2 KiB``) VectorE reads the broadcast straight from PSUM (``tensor_tensor`` then
  costs N, not 2N); a longer row is copied to SBUF bank by bank. (Inferred: with 2N for every
  ``tensor_tensor`` the documented costs exceed the published VectorE busy time of mamba_v2.)
* ``scanC_accum += scanC`` (``nl.add``, the compiler picks the engine) runs on GpSimd, which
  adds fp32 tiles in SBUF while VectorE, the busiest engine, does the rest. (Inferred: the
  published VectorE busy time leaves room for four VectorE instructions per state, not five.)
"""

from __future__ import annotations

import numpy as np

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl

P = 128
PSUM_BANK_FP32 = 512  # fp32 elements of one 2 KiB PSUM bank per partition


def _partition_broadcast(row, ones):
    """``row`` ([1, n] fp32 in SBUF) on all 128 partitions: PSUM for n <= one bank, else SBUF."""
    n = row.shape[1]
    if n <= PSUM_BANK_FP32:
        return nisa.nc_matmul(ones, row)
    out = nl.ndarray((nl.par_dim(P), n), dtype=row.dtype, buffer=nl.sbuf)
    for j in nl.affine_range(n // PSUM_BANK_FP32):
        cols = slice(j * PSUM_BANK_FP32, (j + 1) * PSUM_BANK_FP32)
        out[:, cols] = nl.copy(nisa.nc_matmul(ones, row[:, cols]))
    return out


def _state_step(delta_t, u_t, A_col, B_row, C_slice, ones, acc, initial):
    """Steps 1-6 for one state on one [128, n] tile (C's row loaded where it is needed, as the
    tutorial's kernels do); returns the scan result."""
    dA = nisa.activation(op=nl.exp, data=delta_t, scale=A_col)
    du = nisa.tensor_tensor(delta_t, u_t, op=nl.multiply)
    dBu = nisa.tensor_tensor(du, _partition_broadcast(B_row, ones), op=nl.multiply)
    h = nisa.tensor_tensor_scan(dA, dBu, initial=initial, op0=np.multiply, op1=np.add)
    C_row = nl.load(C_slice)
    hC = nisa.tensor_tensor(h, _partition_broadcast(C_row, ones), op=nl.multiply)
    acc[...] = nisa.tensor_tensor(acc, hC, op=nl.add, engine=nisa.gpsimd_engine)
    return h


@nki.jit
def mamba_v1(delta, u, A, B, C):
    """Loops batch, state, channel tile: delta and u are loaded again for every state."""
    batch, channels, seq = delta.shape
    states = A.shape[1]
    out = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    tiles = channels // P
    ones = nl.ones((1, P), dtype=nl.float32)
    for b in nl.affine_range(batch):
        acc = nl.zeros((tiles, nl.par_dim(P), seq), dtype=delta.dtype)
        for s in nl.affine_range(states):
            for t in nl.affine_range(tiles):
                rows = slice(t * P, (t + 1) * P)
                delta_t = nl.load(delta[b, rows, :])
                A_col = nl.load(A[rows, s:s + 1])
                u_t = nl.load(u[b, rows, :])
                B_row = nl.load(B[b, s:s + 1, :])
                _state_step(delta_t, u_t, A_col, B_row, C[b, s:s + 1, :], ones, acc[t], 0.0)
        for t in nl.affine_range(tiles):
            nl.store(out[b, t * P:(t + 1) * P, :], acc[t])
    return out


@nki.jit
def mamba_v2(delta, u, A, B, C):
    """Loops batch, channel tile, state: delta and u are loaded once per channel tile and the
    accumulator is one [128, seq] tile."""
    batch, channels, seq = delta.shape
    states = A.shape[1]
    out = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    ones = nl.ones((1, P), dtype=nl.float32)
    for b in nl.affine_range(batch):
        for t in nl.affine_range(channels // P):
            rows = slice(t * P, (t + 1) * P)
            acc = nl.zeros((nl.par_dim(P), seq), dtype=delta.dtype)
            delta_t = nl.load(delta[b, rows, :])
            u_t = nl.load(u[b, rows, :])
            for s in nl.affine_range(states):
                A_col = nl.load(A[rows, s:s + 1])
                B_row = nl.load(B[b, s:s + 1, :])
                _state_step(delta_t, u_t, A_col, B_row, C[b, s:s + 1, :], ones, acc, 0.0)
            nl.store(out[b, rows, :], acc)
    return out


@nki.jit
def mamba_v3(delta, u, A, B, C, seq_tile=512):
    """mamba_v2 with the sequence in tiles of ``seq_tile``, the scan carried from one tile to
    the next through its ``initial`` column."""
    batch, channels, seq = delta.shape
    states = A.shape[1]
    out = nl.ndarray((batch, channels, seq), dtype=delta.dtype, buffer=nl.shared_hbm)
    ones = nl.ones((1, P), dtype=nl.float32)
    for b in nl.affine_range(batch):
        for t in nl.affine_range(channels // P):
            rows = slice(t * P, (t + 1) * P)
            acc = nl.zeros((nl.par_dim(P), seq), dtype=delta.dtype)
            delta_t = nl.load(delta[b, rows, :])
            u_t = nl.load(u[b, rows, :])
            for s in nl.affine_range(states):
                A_col = nl.load(A[rows, s:s + 1])
                carry = nl.zeros((nl.par_dim(P), 1), dtype=delta.dtype)
                for j in nl.sequential_range(seq // seq_tile):
                    cols = slice(j * seq_tile, (j + 1) * seq_tile)
                    B_row = nl.load(B[b, s:s + 1, cols])
                    h = _state_step(delta_t[:, cols], u_t[:, cols], A_col, B_row,
                                    C[b, s:s + 1, cols], ones, acc[:, cols], carry)
                    carry[...] = nl.copy(h[:, seq_tile - 1:seq_tile])
            nl.store(out[b, rows, :], acc)
    return out

"""Rotary position embedding as a user ``@nki.jit`` kernel (the decoder layer's IT55 node).

``rope(x, cos, sin)``: ``x [heads, S, d]`` token-major (a slice of the fused QKV projection's
NBSd output), ``cos``/``sin [S, d/2]`` the rotation of each position -> ``[heads, d, S]``, the
feature-major layout the attention kernel takes its q and k in. Rotate-half convention (Llama,
NxDI's ``apply_rotary_pos_emb``): with ``x1, x2`` the two halves of a head's features,

    out[:d/2] = x1 * cos - x2 * sin,    out[d/2:] = x2 * cos + x1 * sin.

Tokens sit on partitions while rotating (the halves are free-axis slices, no cross-partition
traffic); each rotated [128, d] tile is then turned feature-major by a PE transpose.
"""

from __future__ import annotations

import numpy as np

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl


@nki.jit
def rope(x, cos, sin):
    heads, seq, d = x.shape
    half = d // 2
    out = nl.ndarray((heads, d, seq), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.tile_size.pmax
    for t in nl.affine_range((seq + tile - 1) // tile):
        t0 = t * tile
        rows = min(tile, seq - t0)  # the last tile may be partial
        c = nl.load(cos[t0:t0 + rows, :])
        s = nl.load(sin[t0:t0 + rows, :])
        for h in nl.affine_range(heads):
            x1 = nl.load(x[h, t0:t0 + rows, 0:half])
            x2 = nl.load(x[h, t0:t0 + rows, half:d])
            rotated = nl.ndarray((rows, d), dtype=x.dtype, buffer=nl.sbuf)
            rotated[:, 0:half] = nl.subtract(nl.multiply(x1, c), nl.multiply(x2, s))
            rotated[:, half:d] = nl.add(nl.multiply(x2, c), nl.multiply(x1, s))
            nl.store(out[h, :, t0:t0 + rows], value=nisa.nc_transpose(rotated))
    return out


def rope_tables(seq: int, d: int, theta: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin ``[seq, d/2]`` (float32) of positions ``0..seq-1`` at frequencies
    ``theta^(-2i/d)``."""
    inv_freq = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = np.arange(seq, dtype=np.float64)[:, None] * inv_freq[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rope_reference(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """NumPy ``rope``: ``x [heads, S, d]`` -> ``[heads, d, S]`` (float32)."""
    x = x.astype(np.float32)
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    out = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return np.swapaxes(out, -1, -2)

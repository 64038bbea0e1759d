"""Nearest-neighbour resize of NHWC images, by DMA alone (the registry's ``ResizeNearest``).

Output pixel ``(i, j)`` copies input pixel ``(floor(i*h/oh), floor(j*w/ow))`` -- every channel
of it -- for ``data [b, h, w, c] -> out [b, oh, ow, c]``. The index maps are fixed at trace time,
so the kernel is a fixed list of DRAM-to-DRAM DMAs (hence *fixed_dma*) and moves bytes exactly:

* the two axes are resized one after the other, through an internal HBM tensor; the axis whose
  intermediate is smaller goes first, and an axis whose size does not change is skipped;
* along one axis, the output indices that copy the same source index form a run, and
  consecutive source indices whose runs have the same length form an affine group: one DMA
  copies a whole group, its source repeated along the run with a step-0 access pattern. An
  integer scale factor is one DMA per axis; ``30 -> 59`` rows take a few dozen.
"""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.errors import KernelError

from ._checks import check_rank, shape_of

KERNEL = "resize_nearest_fixed_dma_kernel"


def nearest_groups(size: int, out_size: int) -> list[tuple[int, int, int, int, int]]:
    """The affine groups of the nearest map ``o -> floor(o*size/out_size)``: ``(src0, step,
    count, out0, run)``, meaning sources ``src0 + k*step`` (``0 <= k < count``) each fill ``run``
    consecutive outputs from ``out0 + k*run``. Sources no output copies (downscaling) are absent."""
    runs = {}  # source index -> (first output, run length), in source order
    for o in range(out_size):
        s = o * size // out_size
        first, n = runs.get(s, (o, 0))
        runs[s] = (first, n + 1)
    groups = []
    for s, (first, n) in runs.items():
        if groups:
            src0, step, count, out0, run = groups[-1]
            if n == run and first == out0 + count * run and (s == src0 + count * step or count == 1):
                groups[-1] = (src0, s - src0 if count == 1 else step, count + 1, out0, run)
                continue
        groups.append((s, 1, 1, first, n))
    return groups


def _resize_axis(dst, src, axis: int):
    """``dst`` = ``src`` resized along ``axis`` (1 or 2 of an NHWC tensor) by nearest neighbour."""
    b, _, _, c = src.shape
    other = dst.shape[3 - axis]
    i_b = nl.arange(b)[:, None, None, None, None]
    i_o = nl.arange(other)[None, :, None, None, None]
    i_c = nl.arange(c)[None, None, None, None, :]
    for src0, step, count, out0, run in nearest_groups(src.shape[axis], dst.shape[axis]):
        # Grid [b, other axis, count, run, c]: the run repeats its source (step 0 along it).
        i_k = nl.arange(count)[None, None, :, None, None]
        i_r = nl.arange(run)[None, None, None, :, None]
        out_index, src_index = out0 + i_k * run + i_r, src0 + i_k * step + i_r * 0
        if axis == 1:
            nisa.dma_copy(dst=dst[i_b, out_index, i_o, i_c], src=src[i_b, src_index, i_o, i_c])
        else:
            nisa.dma_copy(dst=dst[i_b, i_o, out_index, i_c], src=src[i_b, i_o, src_index, i_c])


@nki.jit
def resize_nearest_fixed_dma_kernel(data_tensor, out_shape):
    """``data_tensor [b, h, w, c]`` (NHWC) resized to ``out_shape (b, oh, ow, c)`` by nearest
    neighbour: ``out[n, i, j, :] = data[n, floor(i*h/oh), floor(j*w/ow), :]``. Any dtype."""
    b, h, w, c = check_rank(KERNEL, "data_tensor", data_tensor, 4, "NHWC")
    ob, oh, ow, oc = shape_of(KERNEL, "out_shape", out_shape, 4)
    if (ob, oc) != (b, c):
        raise KernelError(f"{KERNEL}: out_shape is {list(out_shape)}; expected batch {b} and channels {c} of "
                          f"data_tensor {[b, h, w, c]} (only H and W are resized)")
    out = nl.ndarray((b, oh, ow, c), dtype=data_tensor.dtype, buffer=nl.shared_hbm)
    if (oh, ow) == (h, w):
        nisa.dma_copy(dst=out, src=data_tensor)
        return out
    if oh == h or ow == w:
        _resize_axis(out, data_tensor, 2 if oh == h else 1)
        return out
    rows_first = oh * w <= h * ow  # the smaller intermediate
    mid = nl.ndarray((b, oh, w, c) if rows_first else (b, h, ow, c), dtype=data_tensor.dtype, buffer=nl.hbm)
    _resize_axis(mid, data_tensor, 1 if rows_first else 2)
    _resize_axis(out, mid, 2 if rows_first else 1)
    return out

"""Select-and-scatter of a 3x3 / stride 2 / pad 1 max-pool: the pool's backward pass (the
registry's ``SelectAndScatter``; XLA ``SelectAndScatter`` with select = first maximum and
scatter = add, init 0).

For every window of ``operand [N, C, H, W]`` (NCHW), the first element in row-major window order
holding the window's maximum is selected, and the window's ``source [N, C, OH, OW]`` value is
added into ``out [N, C, H, W]`` at that position (windows overlap, so a position can gather
several values). Windows reach one element past each border; the padding is never selected.

Layout: the ``N*C`` images go on partitions, 128 at a time (the last tile may be partial); each
partition holds one image. Per tile the Vector Engine works on whole ``[P, OH, OW]`` views, one
per window tap ``(kh, kw)``: a strided view of the image (rows ``2*oy + kh - 1``), cut to the
output windows where that tap is inside the image. The maximum is folded over the taps, then, tap
by tap in window order, ``first = (tap == max) > taken`` marks the windows this tap wins and
``out_view += first * source`` scatters. Accumulation is fp32; the result is stored in the
operand's dtype.
"""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.errors import KernelError

from ._checks import ceil_div, check_rank

KERNEL = "select_and_scatter_kernel"
WINDOW, STRIDE, PAD = 3, 2, 1


def pooled_size(size: int) -> int:
    return (size + 2 * PAD - WINDOW) // STRIDE + 1


def tap_range(tap: int, size: int, out_size: int) -> tuple[int, int]:
    """The output windows ``[lo, hi)`` whose element ``tap`` (0..WINDOW-1) along one axis lies
    inside ``0 .. size-1`` (element ``o*STRIDE + tap - PAD``)."""
    offset = tap - PAD
    lo = ceil_div(-offset, STRIDE) if offset < 0 else 0
    hi = min(out_size, (size - 1 - offset) // STRIDE + 1)
    return lo, max(lo, hi)


def _taps(h, w, oh, ow):
    """``(rows, cols, image rows, image cols)`` slices of each tap, in window order."""
    for kh in range(WINDOW):
        y0, y1 = tap_range(kh, h, oh)
        for kw in range(WINDOW):
            x0, x1 = tap_range(kw, w, ow)
            if y0 < y1 and x0 < x1:
                iy, ix = y0 * STRIDE + kh - PAD, x0 * STRIDE + kw - PAD
                yield (slice(y0, y1), slice(x0, x1),
                       slice(iy, iy + (y1 - y0 - 1) * STRIDE + 1, STRIDE),
                       slice(ix, ix + (x1 - x0 - 1) * STRIDE + 1, STRIDE))


@nki.jit
def select_and_scatter_kernel(operand, source):
    """Max-pool backward: ``operand [N, C, H, W]``, ``source [N, C, OH, OW]`` with
    ``OH = (H - 1)//2 + 1`` and ``OW = (W - 1)//2 + 1``; returns ``out [N, C, H, W]`` in the
    operand's dtype."""
    n, c, h, w = check_rank(KERNEL, "operand", operand, 4, "NCHW")
    sn, sc, oh, ow = check_rank(KERNEL, "source", source, 4, "NCHW")
    if (sn, sc, oh, ow) != (n, c, pooled_size(h), pooled_size(w)):
        raise KernelError(f"{KERNEL}: source has shape {[sn, sc, oh, ow]}; expected "
                          f"{[n, c, pooled_size(h), pooled_size(w)]} (the {WINDOW}x{WINDOW}, stride {STRIDE}, "
                          f"pad {PAD} windows of operand {[n, c, h, w]})")
    out = nl.ndarray((n, c, h, w), dtype=operand.dtype, buffer=nl.shared_hbm)
    images = operand.reshape((n * c, h, w))
    grads = source.reshape((n * c, oh, ow))
    result = out.reshape((n * c, h, w))
    taps = list(_taps(h, w, oh, ow))
    pmax = nl.tile_size.pmax
    for t in nl.affine_range(ceil_div(n * c, pmax)):
        p0 = t * pmax
        p = min(pmax, n * c - p0)
        x = nl.load(images[p0:p0 + p])
        g = nl.load(grads[p0:p0 + p], dtype=nl.float32)
        # The centre tap is inside the image for every window: the fold starts from it.
        peak = nl.copy(x[:, 0:h:STRIDE, 0:w:STRIDE], dtype=nl.float32)
        for rows, cols, iy, ix in taps:
            peak[:, rows, cols] = nl.maximum(peak[:, rows, cols], x[:, iy, ix])
        taken = nl.zeros((p, oh, ow), dtype=nl.float32)
        acc = nl.zeros((p, h, w), dtype=nl.float32)
        for rows, cols, iy, ix in taps:
            hit = nl.equal(x[:, iy, ix], peak[:, rows, cols], dtype=nl.float32)
            first = nl.greater(hit, taken[:, rows, cols], dtype=nl.float32)
            taken[:, rows, cols] = nl.maximum(taken[:, rows, cols], hit)
            acc[:, iy, ix] += nl.multiply(first, g[:, rows, cols])
        nl.store(result[p0:p0 + p], acc)
    return out

"""The four ways the conv leaves schedule a convolution on a NeuronCore (see ``conv_geometry``
for the math and the layouts). Each takes the kernel's DRAM operands, its ``ConvGeometry`` and
the output tensor, and traces the whole convolution:

* ``conv_channel_contraction`` -- input channels on partitions: every (channel tile, filter tap)
  is one matmul whose moving operand is a strided window view of a zero-padded input block in
  SBUF; PSUM accumulates the taps of up to 512 output pixels per output-feature tile.
* ``conv_column_packing`` -- (filter column, input channel) pairs packed on partitions: the input
  block is replicated once per packed filter column, shifted by that column, so each matmul
  contracts a whole filter row of channels at once; fills the PE array when channels are few.
* ``conv_depthwise`` -- one filter per channel (``groups == channels``): channels on partitions,
  multiply-accumulate on the Vector Engine, one per-partition filter value per tap.
* ``conv_window_contraction`` -- filter-window positions on partitions: for each output pixel the
  contraction runs over ``(input feature, window position)``, the window's input pixels replicated
  into an NHWC-like tile (window pixels on partitions, lhs batch along the free dim). Suits small
  outputs with large windows, such as weight gradients.

Matmul operands are float32 if either input is, else the input's dtype; PSUM and the Vector
Engine accumulate in fp32; results are stored in the output's dtype. Shapes need not be
multiples of 128: channel, feature and position tiles are cut to what remains.
"""

from __future__ import annotations

import numpy as np

import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.bir import target
from neuronxsim.errors import KernelError

from ._checks import ceil_div
from .conv_geometry import ConvGeometry, along, compute_dtype, view

PMAX = nl.tile_size.pmax  # partitions, and the PE array's contraction and stationary sizes
PSUM_FREE = nl.tile_size.gemm_moving_fmax  # fp32 elements of one PSUM bank per partition: a matmul's moving size
DVE_BLOCK = 4096  # output pixels per partition a depthwise block accumulates in SBUF
# The window contraction keeps every (input feature, position tile) filter in SBUF while they
# take at most this many bytes per partition (a third of the smallest SBUF); beyond, each is
# loaded where it is used (a weight gradient over a large batch: 256 input features x 256 out
# features is 256 KiB).
RESIDENT_FILTER_BYTES = min(target.config(a).sbuf_bytes_per_partition for a in target.ARCHS) // 3


def tiles(size: int, tile: int = PMAX):
    """``(start, count)`` of the tiles of ``tile`` covering ``size``."""
    return [(t * tile, min(tile, size - t * tile)) for t in range(ceil_div(size, tile))]


def output_blocks(g: ConvGeometry, budget: int = PSUM_FREE):
    """``(y0, rows, x0, cols)`` of the output pixel blocks of at most ``budget`` pixels."""
    rows_out, cols_out = g.out_size
    cols = min(cols_out, budget)
    rows = max(1, min(rows_out, budget // cols))
    return [(y0, min(rows, rows_out - y0), x0, min(cols, cols_out - x0))
            for y0 in range(0, rows_out, rows) for x0 in range(0, cols_out, cols)]


def _inside(g: ConvGeometry, row0: int, rows: int, col0: int, cols: int):
    """The part ``(r_lo, r_hi, c_lo, c_hi)`` of the padded-coordinate box that is inside the image."""
    (low0, _), (low1, _) = g.padding
    s0, s1 = g.in_size
    r_lo, r_hi = max(0, low0 - row0), min(rows, s0 + low0 - row0)
    c_lo, c_hi = max(0, low1 - col0), min(cols, s1 + low1 - col0)
    return r_lo, max(r_lo, r_hi), c_lo, max(c_lo, c_hi)


def _fully_inside(g, row0, rows, col0, cols) -> bool:
    return _inside(g, row0, rows, col0, cols) == (0, rows, 0, cols)


def _load_image_box(lhs, g: ConvGeometry, dst, b: int, c0: int, row0: int, col0: int):
    """Copies the image part of the padded box ``dst`` covers (``[channels, rows, cols]`` from
    padded row ``row0`` and column ``col0``) of image ``b``, channels ``c0..``; the rest of
    ``dst`` is left as it is (zeroed by the caller)."""
    nch, rows, cols = dst.shape
    r_lo, r_hi, c_lo, c_hi = _inside(g, row0, rows, col0, cols)
    if r_lo == r_hi or c_lo == c_hi:
        return
    (low0, _), (low1, _) = g.padding
    src = view(lhs, g.lhs_layout, {"b": b, "f": along(nch, 0, 3, c0), "0": along(r_hi - r_lo, 1, 3, row0 + r_lo - low0),
                                   "1": along(c_hi - c_lo, 2, 3, col0 + c_lo - low1)})
    nisa.dma_copy(dst=dst[:, r_lo:r_hi, c_lo:c_hi], src=src)


def input_block(lhs, g: ConvGeometry, b: int, c0: int, nch: int, row0: int, rows: int, col0: int, cols: int, dtype):
    """A new ``[nch, rows, cols]`` SBUF tile of image ``b`` from padded ``(row0, col0)``, zero
    outside the image."""
    tile = nl.ndarray((nch, rows, cols), dtype=dtype, buffer=nl.sbuf)
    if not _fully_inside(g, row0, rows, col0, cols):
        tile[...] = 0.0
    _load_image_box(lhs, g, tile, b, c0, row0, col0)
    return tile


def _window(block, k0: int, k1: int, g: ConvGeometry, rows: int, cols: int, col_step=None):
    """The ``[channels, rows, cols]`` view of an input block that filter tap ``(k0, k1)`` reads."""
    (s0, s1), (d0, d1) = g.stride, g.dilation
    s1 = s1 if col_step is None else col_step
    r, c = k0 * d0, k1 * d1
    return block[:, r:r + (rows - 1) * s0 + 1:s0, c:c + (cols - 1) * s1 + 1:s1]


def _tap_reaches_image(g: ConvGeometry, k0: int, k1: int, y0: int, rows: int, x0: int, cols: int) -> bool:
    """Whether tap ``(k0, k1)`` reads the image (not only padding) for some pixel of the block."""
    lo0, hi0 = g.in_range(0, k0, y0, rows)
    lo1, hi1 = g.in_range(1, k1, x0, cols)
    return lo0 < hi0 and lo1 < hi1


def store_block(out, g: ConvGeometry, acc, b: int, f0: int, nf: int, y0: int, rows: int, x0: int, cols: int,
                f_step: int = 1):
    """Stores ``acc`` (``nf`` partitions of ``rows x cols`` pixels, PSUM or SBUF) as output
    features ``f0, f0 + f_step, ...`` of pixels ``(y0.., x0..)`` of image ``b``."""
    nl.store(view(out, g.out_layout, {"b": b, "f": along(nf, 0, 3, f0, f_step), "0": along(rows, 1, 3, y0),
                                      "1": along(cols, 2, 3, x0)}), nl.copy(acc, dtype=out.dtype))


def conv_channel_contraction(lhs, rhs, g: ConvGeometry, out):
    """Input channels on partitions, one matmul per (channel tile, tap); see the module doc."""
    dtype = compute_dtype(lhs, rhs)
    (k0s, k1s), (s0, s1), (d0, d1) = g.window, g.stride, g.dilation
    og = g.group_out
    for grp in range(g.groups):
        # The group's filters, per input-channel tile: [channels, K0, K1, O_g].
        filters = [(i0, it, nl.load(view(rhs, g.rhs_layout, {"o": along(og, 3, 4, grp * og), "i": along(it, 0, 4, i0),
                                                              "0": along(k0s, 1, 4), "1": along(k1s, 2, 4)}),
                                     dtype=dtype))
                   for i0, it in tiles(g.group_in)]
        for b in range(g.batch):
            for y0, rows, x0, cols in output_blocks(g):
                rows_in, cols_in = (rows - 1) * s0 + (k0s - 1) * d0 + 1, (cols - 1) * s1 + (k1s - 1) * d1 + 1
                blocks = [input_block(lhs, g, b, grp * g.group_in + i0, it, y0 * s0, rows_in, x0 * s1, cols_in, dtype)
                          for i0, it, _ in filters]
                taps = [(k0, k1) for k0 in range(k0s) for k1 in range(k1s)
                        if _tap_reaches_image(g, k0, k1, y0, rows, x0, cols)]
                for o0, mo in tiles(og):
                    acc = nl.zeros((mo, rows * cols), dtype=nl.float32, buffer=nl.psum)
                    for (_, _, w), block in zip(filters, blocks):
                        for k0, k1 in taps:
                            acc += nisa.nc_matmul(w[:, k0, k1, o0:o0 + mo], _window(block, k0, k1, g, rows, cols))
                    store_block(out, g, acc, b, grp * og + o0, mo, y0, rows, x0, cols)


def column_packs(g: ConvGeometry, channels: int) -> list[tuple[int, int]]:
    """``(first filter column, columns)`` of each pack of a ``channels``-channel tile: as many
    whole filter columns as fit 128 partitions, at least one."""
    per_pack = max(1, min(g.window[1], PMAX // channels))
    return tiles(g.window[1], per_pack)


def conv_column_packing(lhs, rhs, g: ConvGeometry, out):
    """(filter column, input channel) packed on partitions; see the module doc."""
    dtype = compute_dtype(lhs, rhs)
    (k0s, _), (s0, s1), (d0, d1) = g.window, g.stride, g.dilation
    og = g.group_out
    for grp in range(g.groups):
        # Per (channel tile, pack): the packed filters [(column, channel), K0, O_g].
        packs = []
        for i0, it in tiles(g.group_in):
            for k1a, nk in column_packs(g, it):
                w = nl.ndarray((nk * it, k0s, og), dtype=dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=w, src=view(rhs, g.rhs_layout, {"o": along(og, 3, 4, grp * og), "i": along(it, 1, 4, i0),
                                                                   "0": along(k0s, 2, 4), "1": along(nk, 0, 4, k1a)}))
                packs.append((i0, it, k1a, nk, w))
        for b in range(g.batch):
            for y0, rows, x0, cols in output_blocks(g):
                rows_in, cols_in = (rows - 1) * s0 + (k0s - 1) * d0 + 1, (cols - 1) * s1 + 1
                replicas = []
                for i0, it, k1a, nk, _ in packs:
                    # Partition kk*it + i holds channel i shifted by filter column k1a + kk.
                    rep = nl.ndarray((nk * it, rows_in, cols_in), dtype=dtype, buffer=nl.sbuf)
                    shifts = [x0 * s1 + (k1a + kk) * d1 for kk in range(nk)]
                    if not all(_fully_inside(g, y0 * s0, rows_in, c, cols_in) for c in shifts):
                        rep[...] = 0.0
                    for kk, col0 in enumerate(shifts):
                        _load_image_box(lhs, g, rep[kk * it:(kk + 1) * it], b, grp * g.group_in + i0, y0 * s0, col0)
                    replicas.append(rep)
                for o0, mo in tiles(og):
                    acc = nl.zeros((mo, rows * cols), dtype=nl.float32, buffer=nl.psum)
                    for (_, _, _, _, w), rep in zip(packs, replicas):
                        for k0 in range(k0s):
                            acc += nisa.nc_matmul(w[:, k0, o0:o0 + mo], _window(rep, k0, 0, g, rows, cols, col_step=s1))
                    store_block(out, g, acc, b, grp * og + o0, mo, y0, rows, x0, cols)


def conv_depthwise(lhs, rhs, g: ConvGeometry, out):
    """One filter per channel, Vector Engine multiply-accumulate; see the module doc."""
    if g.groups != g.channels or g.group_in != 1:
        raise KernelError(f"{g.kernel}: groups is {g.groups} for {g.channels} lhs features and {g.group_in} rhs input "
                          f"features; a depthwise convolution has groups = lhs features (rhs input features 1)")
    (k0s, k1s), (s0, s1), (d0, d1) = g.window, g.stride, g.dilation
    mult = g.group_out  # output features per channel: feature o = c*mult + j reads channel c
    for c0, ct in tiles(g.channels):
        w = nl.load(view(rhs, g.rhs_layout, {"o": along(ct, 0, 4, c0 * mult, mult) + along(mult, 1, 4), "i": 0,
                                              "0": along(k0s, 2, 4), "1": along(k1s, 3, 4)}), dtype=nl.float32)
        for b in range(g.batch):
            for y0, rows, x0, cols in output_blocks(g, DVE_BLOCK):
                rows_in, cols_in = (rows - 1) * s0 + (k0s - 1) * d0 + 1, (cols - 1) * s1 + (k1s - 1) * d1 + 1
                block = input_block(lhs, g, b, c0, ct, y0 * s0, rows_in, x0 * s1, cols_in, lhs.dtype)
                taps = [(k0, k1) for k0 in range(k0s) for k1 in range(k1s)
                        if _tap_reaches_image(g, k0, k1, y0, rows, x0, cols)]
                for j in range(mult):
                    acc = nl.zeros((ct, rows, cols), dtype=nl.float32)
                    for k0, k1 in taps:
                        acc += nisa.tensor_scalar(_window(block, k0, k1, g, rows, cols), np.multiply,
                                                  w[:, j, k0, k1:k1 + 1], dtype=nl.float32)
                    store_block(out, g, acc, b, c0 * mult + j, ct, y0, rows, x0, cols, f_step=mult)


def _window_range(g: ConvGeometry, axis: int, y: int, k_first: int, k_count: int) -> tuple[int, int]:
    """The window positions ``[lo, hi)`` among ``k_first..`` that output ``y`` reads inside the
    image along spatial ``axis`` (input index ``y*s + k*d - low``)."""
    d, size = g.dilation[axis], g.in_size[axis]
    base = y * g.stride[axis] - g.padding[axis][0]
    lo = max(k_first, -(base // d))
    hi = min(k_first + k_count, (size - 1 - base) // d + 1)
    return lo, max(lo, hi)


def conv_window_contraction(lhs, rhs, g: ConvGeometry, out):
    """Filter-window positions on partitions, one PSUM group per output pixel; see the module doc."""
    if g.groups != 1:
        raise KernelError(f"{g.kernel}: groups is {g.groups}; this kernel takes groups=1")
    dtype = compute_dtype(lhs, rhs)
    k0s, k1s = g.window
    kc = min(k1s, PMAX)  # window columns per position tile
    kr = max(1, PMAX // kc)  # window rows per position tile
    position_tiles = [(k0a, nr, k1a, nc) for k0a, nr in tiles(k0s, kr) for k1a, nc in tiles(k1s, kc)]
    o_all = g.out_features

    def load_filter(i, k0a, nr, k1a, nc):
        """The filter of input feature ``i`` over one position tile: [positions, O]."""
        w = nl.ndarray((nr * nc, o_all), dtype=dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=w, src=view(rhs, g.rhs_layout, {"o": along(o_all, 2, 3), "i": i, "0": along(nr, 0, 3, k0a),
                                                           "1": along(nc, 1, 3, k1a)}))
        return w

    resident = g.group_in * len(position_tiles) * o_all * 4 <= RESIDENT_FILTER_BYTES
    filters = {(i, t[0], t[2]): load_filter(i, *t) for i in range(g.group_in) for t in position_tiles} \
        if resident else {}
    (s0, s1), (d0, d1) = g.stride, g.dilation
    (low0, _), (low1, _) = g.padding
    for b0, mb in tiles(g.batch):
        for y0 in range(g.out_size[0]):
            for y1 in range(g.out_size[1]):
                for o0, no in tiles(o_all, PSUM_FREE):
                    acc = nl.zeros((mb, no), dtype=nl.float32, buffer=nl.psum)
                    for i in range(g.group_in):
                        for k0a, nr, k1a, nc in position_tiles:
                            r_lo, r_hi = _window_range(g, 0, y0, k0a, nr)
                            c_lo, c_hi = _window_range(g, 1, y1, k1a, nc)
                            if r_lo == r_hi or c_lo == c_hi:
                                continue  # this tile of the window reads padding only
                            # The window's input pixels: position (k0, k1) on partition (k0-k0a)*nc + k1-k1a.
                            pixels = nl.ndarray((nr * nc, mb), dtype=dtype, buffer=nl.sbuf)
                            whole = (r_lo, r_hi, c_lo, c_hi) == (k0a, k0a + nr, k1a, k1a + nc)
                            if not whole:
                                pixels[...] = 0.0
                            row_runs = [(r_lo, r_hi - r_lo)] if c_hi - c_lo == nc else [(r, 1) for r in range(r_lo, r_hi)]
                            for r, n_rows in row_runs:
                                p0 = (r - k0a) * nc + (c_lo - k1a)
                                src = view(lhs, g.lhs_layout, {
                                    "b": along(mb, 2, 3, b0), "f": i,
                                    "0": along(n_rows, 0, 3, y0 * s0 + r * d0 - low0, d0),
                                    "1": along(c_hi - c_lo, 1, 3, y1 * s1 + c_lo * d1 - low1, d1)})
                                nisa.dma_copy(dst=pixels[p0:p0 + n_rows * (c_hi - c_lo)], src=src)
                            w = filters[i, k0a, k1a] if resident else load_filter(i, k0a, nr, k1a, nc)
                            acc += nisa.nc_matmul(pixels, w[:, o0:o0 + no])
                    nl.store(view(out, g.out_layout, {"b": along(mb, 0, 2, b0), "f": along(no, 1, 2, o0), "0": y0,
                                                      "1": y1}), nl.copy(acc, dtype=out.dtype))

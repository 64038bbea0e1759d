"""2-D transposes split over two logical NeuronCores (the registry traces both with grid
``nl.nc(2)``; ``requires_multicore_grid``).

``x [R, C] -> out [C, R]``. NeuronCore ``k`` of ``n`` builds the output rows
``[k*C//n, (k+1)*C//n)``, or, when ``C < n`` (some core's share of rows would be empty, and every
core of the grid must write the shared output), every row's columns ``[k*R//n, (k+1)*R//n)``: no
two cores write the same element, which the simulator refuses (nothing orders the cores), so a
grid of more cores than both dims is a KernelError. The rows are built in blocks of up to 128 (column
blocks of ``x``): each block is one ``[<=128, <=R]`` SBUF tile, filled by transposing the
``[<=128, <=128]`` tiles of its column block, and stored with one DMA. Launched without a grid, one core does every block.
Shapes need not be multiples of 128 (or of 32): edge tiles are smaller.

* ``tiled_pf_transpose`` swaps partition and free dims ("pf") on the Tensor Engine: each tile is a
  PE transpose (a matmul against the identity, bit-exact) into PSUM, copied into the block.
* ``tiled_dve_transpose_10`` applies the permutation ``(1, 0)`` on the Vector Engine, whose
  transpose works on ``[<=32, <=32]`` tiles: each 128-tile is transposed as up to 16 32x32
  sub-tiles written straight into place in the block (copied exactly, integers too).
"""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.bir import target
from neuronxsim.errors import KernelError

from ._checks import ceil_div, check_rank

PE_TILE = nl.tile_size.pmax
DVE_TILE = target.uniform("dve_transpose_max")
PE_DTYPES = (nl.float32, nl.bfloat16, nl.float16, nl.float8_e4m3, nl.float8_e5m2)


def _core_share(kernel: str, rows: int, cols: int) -> tuple[int, int, int, int]:
    """This NeuronCore's share of ``out [cols, rows]``: rows ``[lo, hi)``, columns ``[c_lo, c_hi)``
    (see the module docstring)."""
    k, n = nl.program_id(0), nl.num_programs(0)
    if cols >= n:
        return k * cols // n, (k + 1) * cols // n, 0, rows
    if rows < n:
        raise KernelError(f"{kernel}: a {rows} x {cols} transpose leaves NeuronCore {k} of {n} nothing to write "
                          "(two cores may not write the same elements); launch it on fewer cores")
    return 0, cols, k * rows // n, (k + 1) * rows // n


def _transpose_2d(x, kernel: str, transpose_tile):
    """``x.T``: each output block is filled by ``transpose_tile(block view, x tile)``."""
    rows, cols = check_rank(kernel, "x", x, 2)
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    lo, hi, c_lo, c_hi = _core_share(kernel, rows, cols)
    for j in nl.affine_range(ceil_div(hi - lo, PE_TILE)):
        c0 = lo + j * PE_TILE
        q = min(PE_TILE, hi - c0)
        block = nl.ndarray((q, c_hi - c_lo), dtype=x.dtype, buffer=nl.sbuf)
        for i in nl.affine_range(ceil_div(c_hi - c_lo, PE_TILE)):
            r0 = i * PE_TILE
            p = min(PE_TILE, c_hi - c_lo - r0)
            transpose_tile(block[:, r0:r0 + p], nl.load(x[c_lo + r0:c_lo + r0 + p, c0:c0 + q]))
        nl.store(out[c0:c0 + q, c_lo:c_hi], block)
    return out


def _pe_transpose_tile(dst, tile):
    dst[...] = nisa.nc_transpose(tile, engine=nisa.tensor_engine)


def _dve_transpose_tile(dst, tile):
    p, q = tile.shape
    for a in nl.affine_range(ceil_div(p, DVE_TILE)):
        for b in nl.affine_range(ceil_div(q, DVE_TILE)):
            ra, rb = a * DVE_TILE, b * DVE_TILE
            pa, qb = min(DVE_TILE, p - ra), min(DVE_TILE, q - rb)
            dst[rb:rb + qb, ra:ra + pa] = nisa.nc_transpose(tile[ra:ra + pa, rb:rb + qb], engine=nisa.vector_engine)


@nki.jit
def tiled_pf_transpose(x):
    """``x [R, C]`` -> ``x.T [C, R]`` by PE transposes (float32, bfloat16, float16, fp8)."""
    if x.dtype not in PE_DTYPES:
        raise KernelError(f"tiled_pf_transpose: x is {x.dtype}; the Tensor Engine transposes float32, bfloat16, "
                          "float16 and fp8 tiles (tiled_dve_transpose_10 takes integers)")
    return _transpose_2d(x, "tiled_pf_transpose", _pe_transpose_tile)


@nki.jit
def tiled_dve_transpose_10(x):
    """``x [R, C]`` -> ``x.T [C, R]`` (permutation ``(1, 0)``) by Vector Engine 32x32 transposes."""
    return _transpose_2d(x, "tiled_dve_transpose_10", _dve_transpose_tile)

"""The pieces the three top-k methods share: input checks, the max8 / match-replace scan, the
pass that finds each winner's index, and the outputs.

Per partition the Vector Engine finds the 8 largest values of up to 16384 elements (``max8``)
and replaces their first not-yet-replaced occurrences by ``-inf``, returning their positions
(``nc_match_replace8``). ``ceil(k/8)`` such rounds give a row's top-k in descending order. Equal
values within a round get their first positions in the order ``nc_match_replace8`` gives them
(descending: it takes the eight values from the last, SDK 2.32 page), not a stable sort's:
like ``torch.topk``, the kernels promise the values, and of tied values some set of their
positions, no order among them. Rows may hold any finite values (an input ``-inf`` would tie
with the replaced elements).
"""

from __future__ import annotations

import numpy as np

import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.bir import target
from neuronxsim.errors import KernelError
from neuronxsim.private_nkl._checks import ceil_div

PMAX = nl.tile_size.pmax
GROUP = 8  # values per max8 / match-replace
MAX_ROW = target.uniform("max8_max_free_elements")  # elements per partition max8 and match-replace scan
REPLACED = float("-inf")
DTYPES = (nl.float32, nl.bfloat16, nl.float16)


def check_topk(kernel: str, inp, k, sorted_flag) -> tuple[int, int, int]:
    """(rows, vocab, rounds) of a top-k call, or KernelError."""
    if len(inp.shape) not in (2, 3):
        raise KernelError(f"{kernel}: inp has shape {list(inp.shape)}; expected [rows, vocab] or [B, S, vocab]")
    if inp.dtype not in DTYPES:
        raise KernelError(f"{kernel}: inp is {inp.dtype}; expected float32, bfloat16 or float16")
    vocab = inp.shape[-1]
    rows = int(np.prod(inp.shape[:-1]))
    if not GROUP <= vocab <= MAX_ROW:
        raise KernelError(f"{kernel}: vocab (the last dim of inp) is {vocab}; expected {GROUP} to {MAX_ROW} (the "
                          "elements the Vector Engine's max8 scans per partition)")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= vocab:
        raise KernelError(f"{kernel}: k is {k!r}; expected an int from 1 to vocab={vocab}")
    if not isinstance(sorted_flag, (bool, np.bool_)):
        raise KernelError(f"{kernel}: sorted_flag is {sorted_flag!r}; expected a bool (results are always sorted)")
    return rows, vocab, ceil_div(int(k), GROUP)


def row_tiles(rows: int, per_tile: int = PMAX):
    return [(r0, min(per_tile, rows - r0)) for r0 in range(0, rows, per_tile)]


def _replace(work, data, values, indices):
    """``nc_match_replace8`` of ``work``: into a new tile the first time (``work is data``, which
    the caller keeps), in place after that, so a long row needs two tiles, not one per round."""
    replaced = nisa.nc_match_replace8(data=work, vals=values, imm=REPLACED, dst_idx=indices)
    if work is data:
        return replaced
    work[...] = replaced
    return work


def scan(data, rounds: int, values, indices=None):
    """Writes the ``8 * rounds`` largest values of each partition of ``data`` into ``values``
    (and their positions into ``indices``), descending."""
    work = data
    for r in range(rounds):
        top = slice(r * GROUP, (r + 1) * GROUP)
        values[:, top] = nisa.max8(src=work)
        if indices is not None or r + 1 < rounds:
            work = _replace(work, data, values[:, top], None if indices is None else indices[:, top])


def find_indices(data, values, rounds: int, indices):
    """The positions in ``data`` of the descending ``values`` (``8 * rounds`` per partition),
    each value matched to its first occurrence not matched before."""
    work = data
    for r in range(rounds):
        top = slice(r * GROUP, (r + 1) * GROUP)
        work = _replace(work, data, values[:, top], indices[:, top])


def outputs(inp, k: int):
    """``(values, indices, rows view of inp, rows view of values, rows view of indices)``."""
    lead = tuple(inp.shape[:-1])
    values = nl.ndarray(lead + (k,), dtype=inp.dtype, buffer=nl.shared_hbm, name="values")
    indices = nl.ndarray(lead + (k,), dtype=nl.uint32, buffer=nl.shared_hbm, name="indices")
    rows = int(np.prod(lead))
    return (values, indices, inp.reshape((rows, inp.shape[-1])), values.reshape((rows, k)),
            indices.reshape((rows, k)))


def store(values_2d, indices_2d, r0: int, rt: int, k: int, top_values, top_indices):
    nl.store(values_2d[r0:r0 + rt, :], nl.copy(top_values[:, 0:k], dtype=values_2d.dtype))
    nl.store(indices_2d[r0:r0 + rt, :], top_indices[:, 0:k])


def fold_plan(rows: int, vocab: int, width: int, max_chunks: int = PMAX) -> tuple[int, int, int]:
    """(chunks per row, chunk length, rows per tile) for spreading rows over partitions in at
    most ``max_chunks`` chunks of at least ``width`` elements (the candidates a chunk yields)."""
    chunks = max(1, min(max_chunks, PMAX // min(rows, PMAX), vocab // max(width, GROUP)))
    length = ceil_div(vocab, chunks)
    chunks = ceil_div(vocab, length)
    return chunks, length, max(1, PMAX // chunks)


def load_folded(inp_2d, r0: int, rt: int, chunks: int, length: int, tile):
    """Row ``r0 + r``'s chunk ``c`` into partition ``c*rt + r`` of ``tile`` (``[chunks*rt, >=
    length]``), columns ``0..length-1``; the short last chunk is padded with ``-inf``."""
    vocab = inp_2d.shape[1]
    full = vocab // length
    last = vocab - full * length
    if last:  # a memset starts at a partition the start-partition rule allows: cover every chunk
        tile[0:chunks * rt, last:length] = REPLACED
    i_c = nl.arange(full)[:, None, None]
    i_r = nl.arange(rt)[None, :, None]
    i_l = nl.arange(length)[None, None, :]
    nisa.dma_copy(dst=tile[0:full * rt, 0:length], src=inp_2d[r0 + i_r, i_c * length + i_l])
    if last:
        nisa.dma_copy(dst=tile[full * rt:chunks * rt, 0:last], src=inp_2d[r0:r0 + rt, full * length:vocab])

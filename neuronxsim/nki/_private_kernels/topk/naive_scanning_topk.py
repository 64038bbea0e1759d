"""Top-k by scanning: one row per partition, ``ceil(k/8)`` max8 + match-replace rounds over the
whole row (``SupportedTopkMethods.SCANNING``). Simple; best when there are many rows."""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl

from ._topk_common import GROUP, check_topk, outputs, row_tiles, scan, store


@nki.jit
def naive_scanning_topk(inp, k, sorted_flag=True):
    """``(values, indices)``: the ``k`` largest of each row of ``inp`` (last dim, at most 16384)
    in descending order, and their positions (uint32)."""
    rows, vocab, rounds = check_topk("naive_scanning_topk", inp, k, sorted_flag)
    values, indices, inp_2d, values_2d, indices_2d = outputs(inp, k)
    for r0, rt in row_tiles(rows):
        data = nl.load(inp_2d[r0:r0 + rt, :], dtype=nl.float32)
        top_values = nl.ndarray((rt, rounds * GROUP), dtype=nl.float32, buffer=nl.sbuf)
        top_indices = nl.ndarray((rt, rounds * GROUP), dtype=nl.uint32, buffer=nl.sbuf)
        scan(data, rounds, top_values, top_indices)
        store(values_2d, indices_2d, r0, rt, k, top_values, top_indices)
    return values, indices

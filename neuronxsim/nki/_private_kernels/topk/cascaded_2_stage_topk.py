"""Top-k in two stages (``SupportedTopkMethods.CASCADED``): each row is cut into chunks spread
over partitions (row tile ``rt``, chunk ``c`` of row ``r`` on partition ``c*rt + r``), every
chunk yields its own top-k in parallel (stage 1); an HBM round trip gathers each row's chunk
winners onto one partition, whose top-k is the row's (stage 2); a final pass over the row finds
the winners' positions. Pays off for few, long rows; with one chunk per row it is a scan."""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl

from ._topk_common import GROUP, check_topk, find_indices, fold_plan, load_folded, outputs, row_tiles, scan, store


@nki.jit
def cascaded_2_stage_topk(inp, k, sorted_flag=True):
    """``(values, indices)``: the ``k`` largest of each row of ``inp`` (last dim, at most 16384)
    in descending order, and their positions (uint32)."""
    rows, vocab, rounds = check_topk("cascaded_2_stage_topk", inp, k, sorted_flag)
    width = rounds * GROUP
    values, indices, inp_2d, values_2d, indices_2d = outputs(inp, k)
    chunks, length, per_tile = fold_plan(rows, vocab, width)
    for r0, rt in row_tiles(rows, per_tile):
        folded = nl.ndarray((chunks * rt, length), dtype=nl.float32, buffer=nl.sbuf)
        load_folded(inp_2d, r0, rt, chunks, length, folded)
        winners = nl.ndarray((chunks * rt, width), dtype=nl.float32, buffer=nl.sbuf)
        scan(folded, rounds, winners)
        # Partition c*rt + r -> row r's candidates c*width .. (c+1)*width - 1, through HBM.
        staged = nl.ndarray((chunks * rt, width), dtype=nl.float32, buffer=nl.hbm)
        nisa.dma_copy(dst=staged, src=winners)
        i_r = nl.arange(rt)[:, None, None]
        i_c = nl.arange(chunks)[None, :, None]
        i_w = nl.arange(width)[None, None, :]
        candidates = nl.ndarray((rt, chunks * width), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=candidates, src=staged[i_c * rt + i_r, i_w])
        top_values = nl.ndarray((rt, width), dtype=nl.float32, buffer=nl.sbuf)
        scan(candidates, rounds, top_values)
        top_indices = nl.ndarray((rt, width), dtype=nl.uint32, buffer=nl.sbuf)
        find_indices(nl.load(inp_2d[r0:r0 + rt, :], dtype=nl.float32), top_values, rounds, top_indices)
        store(values_2d, indices_2d, r0, rt, k, top_values, top_indices)
    return values, indices

"""Top-k by rotation (``SupportedTopkMethods.ROTATIONAL``): each row is cut into ``S`` chunks
spread over partitions (chunk ``s`` of row ``r`` on partition ``s*rt + r``), each partition with
room after its chunk for one set of received candidates. Stage 0 takes every chunk's top-k;
then, ``S - 1`` times, every partition's running top-k moves by an SBUF-to-SBUF DMA to the next
chunk's partitions (``s -> s+1 mod S``), overwriting the candidates received before, and every
partition takes the top-k of its chunk and the new arrivals. Chunks are disjoint, so after stage
``t`` chunk ``s`` holds the top-k of chunks ``s-t .. s``: after the last, every chunk holds the
row's. A final pass over the row finds the positions. Every chunk works in parallel at every
stage; each stage also rescans the ``k`` arrivals, so rows are cut into at most ``MAX_STAGES``
chunks."""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl

from ._topk_common import GROUP, check_topk, find_indices, fold_plan, load_folded, outputs, row_tiles, scan, store

MAX_STAGES = 8


@nki.jit
def rotational_topk(inp, k, sorted_flag=True):
    """``(values, indices)``: the ``k`` largest of each row of ``inp`` (last dim, at most 16384)
    in descending order, and their positions (uint32)."""
    rows, vocab, rounds = check_topk("rotational_topk", inp, k, sorted_flag)
    width = rounds * GROUP
    values, indices, inp_2d, values_2d, indices_2d = outputs(inp, k)
    stages, length, per_tile = fold_plan(rows, vocab, width, MAX_STAGES)
    for r0, rt in row_tiles(rows, per_tile):
        parts = stages * rt
        buf = nl.ndarray((parts, length + width), dtype=nl.float32, buffer=nl.sbuf)
        load_folded(inp_2d, r0, rt, stages, length, buf)
        top = nl.ndarray((parts, width), dtype=nl.float32, buffer=nl.sbuf)
        scan(buf[:, 0:length], rounds, top)
        for _ in range(stages - 1):
            nisa.dma_copy(dst=buf[rt:parts, length:], src=top[0:parts - rt, :])
            nisa.dma_copy(dst=buf[0:rt, length:], src=top[parts - rt:parts, :])
            top = nl.ndarray((parts, width), dtype=nl.float32, buffer=nl.sbuf)
            scan(buf, rounds, top)
        top_indices = nl.ndarray((rt, width), dtype=nl.uint32, buffer=nl.sbuf)
        find_indices(nl.load(inp_2d[r0:r0 + rt, :], dtype=nl.float32), top[0:rt, :], rounds, top_indices)
        store(values_2d, indices_2d, r0, rt, k, top[0:rt, :], top_indices)
    return values, indices

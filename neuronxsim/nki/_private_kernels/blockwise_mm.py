"""Blockwise matrix multiplication of a Mixture-of-Experts layer (the registry's
``blockwise_mm``), after the public ``blockwise_mm_baseline`` / nkilib ``moe_cte`` math.

Tokens have already been routed and laid out in blocks of ``B = block_size`` token positions;
block ``n`` is served by expert ``block_to_expert[n]``::

    output = 0
    for n in range(N):
        ids = token_position_to_id[n*B:(n+1)*B]; e = block_to_expert[n]
        h = hidden_states[ids]                               # [B, H]   (PRE_SCALE: * affinity)
        gate, up = h @ gate_up_proj_weight[e, :, 0], h @ gate_up_proj_weight[e, :, 1]
        y = (silu(gate) * up) @ down_proj_weight[e]          # [B, H]
        y *= expert_affinities_masked[ids * E + e]           # POST_SCALE (the default)
        output[ids] += y

``hidden_states [T, H]`` holds the tokens and, by the public convention, a padding token in its
last row (padding positions carry its id, ``T - 1``, and an affinity of 0).
``expert_affinities_masked [T*E, 1]``, ``gate_up_proj_weight [E, H, 2, I]``,
``down_proj_weight [E, I, H]``, ``token_position_to_id [N*B]`` and ``block_to_expert [N, 1]``
(both int32). Returns ``output [T, H]`` in the hidden states' dtype.

The public kernel gathers and scatters token rows with indirect DMA and loads the block's expert
weights by a dynamic index. The NKI front end here has neither (a tile cannot index an HBM
tensor), so the data-dependent choices become arithmetic on one-hot matrices, still exact:

* gather: ``S[t, b] = (ids[b] == t)``, built with iota and a compare per 128-token tile;
  ``h.T = hidden.T @ S`` on the PE array (token tiles accumulate in PSUM), already in the
  ``[H, B]`` layout the projections contract over;
* expert: the block's weights are ``sum_e (e == block_to_expert[n]) * W[e]`` on the Vector Engine
  (one term is not zero); the affinity column the same way from the ``[T, E]`` affinities;
* scatter: ``output += S.T-scaled y``, one matmul per token tile, accumulated in an fp32 HBM
  buffer by DMA read-modify-write (the first block writes it).

So every block costs a pass over all tokens and all experts' weights, and an inf or NaN in any
token's hidden state or any expert's weights reaches every result (0 * inf). Token ids outside
``[0, T)`` select no row (the public kernel's skip mode).

Operands come first, then keywords: the registry passes the macro's operands positionally and
its attrs as keywords, so ``block_size`` is a keyword here (it sits between the weights and the
token ids in the public signature).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.errors import KernelError
from neuronxsim.private_nkl._checks import ceil_div, check_rank

KERNEL = "blockwise_mm"
PMAX = 128
PSUM_FREE = 512


class ExpertAffinityScaleMode(IntEnum):
    """Where the expert affinity multiplies (the public enum's values)."""

    NO_SCALE = 0
    POST_SCALE = 1
    PRE_SCALE = 2


def _tiles(size: int, tile: int = PMAX):
    return [(t * tile, min(tile, size - t * tile)) for t in range(ceil_div(size, tile))]


def _shapes(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight, token_position_to_id,
            block_to_expert, block_size):
    """(T, H, E, I, N) after checking every operand against the others."""
    T, H = check_rank(KERNEL, "hidden_states", hidden_states, 2, "[T, H]")
    E, H2, two, I = check_rank(KERNEL, "gate_up_proj_weight", gate_up_proj_weight, 4, "[E, H, 2, I]")
    E2, I2, H3 = check_rank(KERNEL, "down_proj_weight", down_proj_weight, 3, "[E, I, H]")
    N, one = check_rank(KERNEL, "block_to_expert", block_to_expert, 2, "[N, 1]")
    (positions,) = check_rank(KERNEL, "token_position_to_id", token_position_to_id, 1, "[N*B]")
    aff = check_rank(KERNEL, "expert_affinities_masked", expert_affinities_masked, 2, "[T*E, 1]")
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise KernelError(f"{KERNEL}: block_size is {block_size!r}; expected a positive int")
    expected = {"gate_up_proj_weight": ((E, H, 2, I), (E, H2, two, I)),
                "down_proj_weight": ((E, I, H), (E2, I2, H3)),
                "block_to_expert": ((N, 1), (N, one)),
                "token_position_to_id": ((N * block_size,), (positions,)),
                "expert_affinities_masked": ((T * E, 1), aff)}
    for name, (want, got) in expected.items():
        if tuple(want) != tuple(got):
            raise KernelError(f"{KERNEL}: {name} has shape {list(got)}; expected {list(want)} (T={T} tokens, H={H}, "
                              f"E={E} experts, I={I}, N={N} blocks of block_size={block_size})")
    for name, t in (("token_position_to_id", token_position_to_id), ("block_to_expert", block_to_expert)):
        if t.dtype != nl.int32:
            raise KernelError(f"{KERNEL}: {name} is {t.dtype}; expected int32")
    return T, H, E, I, N


@nki.jit
def blockwise_mm(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight,
                 token_position_to_id, block_to_expert, block_size,
                 expert_affinities_scaling_mode=ExpertAffinityScaleMode.POST_SCALE):
    """MoE blockwise matmul (see the module docstring). ``block_size``: tokens per block;
    ``expert_affinities_scaling_mode``: an ``ExpertAffinityScaleMode`` or its int value."""
    T, H, E, I, N = _shapes(hidden_states, expert_affinities_masked, gate_up_proj_weight, down_proj_weight,
                            token_position_to_id, block_to_expert, block_size)
    B = int(block_size)
    try:
        mode = ExpertAffinityScaleMode(expert_affinities_scaling_mode)
    except ValueError:
        raise KernelError(f"{KERNEL}: expert_affinities_scaling_mode is {expert_affinities_scaling_mode!r}; expected "
                          f"one of {', '.join(f'{m.value} ({m.name})' for m in ExpertAffinityScaleMode)}") from None
    cdt = hidden_states.dtype if hidden_states.dtype in (nl.bfloat16, nl.float16) else nl.float32
    output = nl.ndarray((T, H), dtype=hidden_states.dtype, buffer=nl.shared_hbm)
    acc_hbm = output if output.dtype == nl.float32 else nl.ndarray((T, H), dtype=nl.float32, buffer=nl.hbm)

    token_tiles = _tiles(T)
    h_tiles, i_tiles, b_tiles = _tiles(H), _tiles(I), _tiles(B)
    b_chunks, h_chunks = _tiles(B, PSUM_FREE), _tiles(H, PSUM_FREE)
    i_p = nl.arange(PMAX)[:, None]
    # Constants: every block's expert on every partition; expert numbers along the free dim;
    # per token tile, the token index of each partition and (for the scatter) along the free dim.
    experts = nl.load(block_to_expert[nl.arange(N)[None, :] + 0 * i_p, 0], dtype=nl.float32)
    expert_iota = nisa.iota(nl.arange(E)[None, :] + 0 * i_p, dtype=nl.float32)
    token_col = [nisa.iota(t0 + nl.arange(tp)[:, None], dtype=nl.float32) for t0, tp in token_tiles]
    token_row = [nisa.iota(t0 + nl.arange(tp)[None, :] + 0 * i_p, dtype=nl.float32) for t0, tp in token_tiles]
    affinities = expert_affinities_masked.reshape((T, E))

    for n in nl.sequential_range(N):
        pos0 = n * B
        is_expert = nisa.tensor_scalar(expert_iota, np.equal, experts[:, n:n + 1], dtype=nl.float32)  # [128, E]
        ids_row = nl.load(token_position_to_id[pos0 + nl.arange(B)[None, :] + 0 * i_p], dtype=nl.float32)
        # Per token tile: the one-hot gather matrix S [tokens, B] and the block expert's affinity.
        onehot, onehot_c, affinity = [], [], []
        for (t0, tp), tcol in zip(token_tiles, token_col):
            s = nisa.tensor_scalar(ids_row[:tp], np.equal, tcol, dtype=nl.float32)
            a = nl.load(affinities[t0:t0 + tp, :], dtype=nl.float32)
            a_e = nl.sum(nl.multiply(a, is_expert[:tp]), axis=1, keepdims=True, dtype=nl.float32)
            onehot.append(s)
            affinity.append(a_e)
            gather = nisa.tensor_scalar(s, np.multiply, a_e, dtype=cdt) if mode == ExpertAffinityScaleMode.PRE_SCALE \
                else nl.copy(s, dtype=cdt)
            onehot_c.append(gather)

        # h.T [H, B], per H tile: hidden.T @ S over the token tiles.
        h_t = []
        for h0, hp in h_tiles:
            tile = nl.ndarray((hp, B), dtype=cdt, buffer=nl.sbuf)
            for c0, cn in b_chunks:
                ps = nl.zeros((hp, cn), dtype=nl.float32, buffer=nl.psum)
                for (t0, tp), s in zip(token_tiles, onehot_c):
                    rows = nl.load(hidden_states[t0:t0 + tp, h0:h0 + hp], dtype=cdt)
                    ps += nisa.nc_matmul(rows, s[:, c0:c0 + cn])
                tile[:, c0:c0 + cn] = nl.copy(ps, dtype=cdt)
            h_t.append(tile)

        # The block expert's weights: sum_e is_expert[e] * W[e].
        def select(load_tile, shape):
            acc = nl.zeros(shape, dtype=nl.float32)
            for e in nl.sequential_range(E):
                acc += nisa.tensor_scalar(load_tile(e), np.multiply, is_expert[:shape[0], e:e + 1], dtype=nl.float32)
            return nl.copy(acc, dtype=cdt)

        w_gu = [select(lambda e, h0=h0, hp=hp: nl.load(gate_up_proj_weight[e, h0:h0 + hp]), (hp, 2, I))
                for h0, hp in h_tiles]
        w_down = [select(lambda e, i0=i0, ip=ip: nl.load(down_proj_weight[e, i0:i0 + ip]), (ip, H))
                  for i0, ip in i_tiles]

        # act [I, B] = silu(gate) * up, per I tile.
        act = []
        for i0, ip in i_tiles:
            tile = nl.ndarray((ip, B), dtype=cdt, buffer=nl.sbuf)
            for c0, cn in b_chunks:
                proj = []
                for which in (0, 1):
                    ps = nl.zeros((ip, cn), dtype=nl.float32, buffer=nl.psum)
                    for w, x in zip(w_gu, h_t):
                        ps += nisa.nc_matmul(w[:, which, i0:i0 + ip], x[:, c0:c0 + cn])
                    proj.append(ps)
                gate = nisa.activation(nl.silu, proj[0], dtype=nl.float32)
                tile[:, c0:c0 + cn] = nl.multiply(gate, proj[1], dtype=cdt)
            act.append(tile)

        # y [B, H] = act.T @ W_down, per B tile; POST_SCALE multiplies each token's row.
        y = []
        for b0, bt in b_tiles:
            scale = None
            if mode == ExpertAffinityScaleMode.POST_SCALE:
                ps = nl.zeros((bt, 1), dtype=nl.float32, buffer=nl.psum)
                for s, a_e in zip(onehot, affinity):
                    ps += nisa.nc_matmul(s[:, b0:b0 + bt], a_e)
                scale = nl.copy(ps, dtype=nl.float32)
            tile = nl.ndarray((bt, H), dtype=cdt, buffer=nl.sbuf)
            for c0, cn in h_chunks:
                ps = nl.zeros((bt, cn), dtype=nl.float32, buffer=nl.psum)
                for a, w in zip(act, w_down):
                    ps += nisa.nc_matmul(a[:, b0:b0 + bt], w[:, c0:c0 + cn])
                if scale is None:
                    tile[:, c0:c0 + cn] = nl.copy(ps, dtype=cdt)
                else:
                    tile[:, c0:c0 + cn] = nisa.tensor_scalar(ps, np.multiply, scale, dtype=cdt)
            y.append(tile)

        # output[ids] += y: per token tile, S.T-weighted rows of y, accumulated in HBM.
        ids_col = [nl.load(token_position_to_id[pos0 + b0:pos0 + b0 + bt].reshape((bt, 1)), dtype=nl.float32)
                   for b0, bt in b_tiles]
        for (t0, tp), trow in zip(token_tiles, token_row):
            scatter = [nisa.tensor_scalar(trow[:bt], np.equal, ids, dtype=cdt) for (b0, bt), ids in zip(b_tiles, ids_col)]
            for c0, cn in h_chunks:
                ps = nl.zeros((tp, cn), dtype=nl.float32, buffer=nl.psum)
                for st, yt in zip(scatter, y):
                    ps += nisa.nc_matmul(st, yt[:, c0:c0 + cn])
                contribution = nl.copy(ps, dtype=nl.float32)
                nisa.dma_copy(dst=acc_hbm[t0:t0 + tp, c0:c0 + cn], src=contribution,
                              dst_rmw_op=np.add if n > 0 else None)
    if acc_hbm is not output:
        nisa.dma_copy(dst=output, src=acc_hbm)
    return output

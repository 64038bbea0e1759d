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
PMAX = nl.tile_size.pmax
PSUM_FREE = nl.tile_size.gemm_moving_fmax


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


def _expert_tile(weights, r0: int, rows: int, is_expert, dtype):
    """Rows ``r0 .. r0+rows-1`` of the block expert's ``weights[e]``, as ``sum_e is_expert[:, e] *
    weights[e]`` (exact: one term is not zero)."""
    acc = nl.zeros((rows,) + tuple(weights.shape[2:]), dtype=nl.float32)
    for e in nl.sequential_range(weights.shape[0]):
        acc += nisa.tensor_scalar(nl.load(weights[e, r0:r0 + rows]), np.multiply, is_expert[:rows, e:e + 1],
                                  dtype=nl.float32)
    return nl.copy(acc, dtype=dtype)


def _gather_transposed(hidden_states, gather, token_tiles, h_tiles, b_chunks, dtype):
    """``h.T [H, B]`` per H tile: ``hidden.T @ S`` over the token tiles (``gather`` holds S per
    token tile, scaled by the affinity for PRE_SCALE)."""
    block = gather[0].shape[1]
    h_t = []
    for h0, hp in h_tiles:
        tile = nl.ndarray((hp, block), dtype=dtype, buffer=nl.sbuf)
        for c0, cn in b_chunks:
            ps = nl.zeros((hp, cn), dtype=nl.float32, buffer=nl.psum)
            for (t0, tp), s in zip(token_tiles, gather):
                ps += nisa.nc_matmul(nl.load(hidden_states[t0:t0 + tp, h0:h0 + hp], dtype=dtype), s[:, c0:c0 + cn])
            tile[:, c0:c0 + cn] = nl.copy(ps, dtype=dtype)
        h_t.append(tile)
    return h_t


def _activations(w_gu, h_t, i_tiles, b_chunks, dtype):
    """``silu(gate) * up`` as ``[I, B]``, per I tile."""
    block = h_t[0].shape[1]
    act = []
    for i0, ip in i_tiles:
        tile = nl.ndarray((ip, block), dtype=dtype, buffer=nl.sbuf)
        for c0, cn in b_chunks:
            proj = []
            for which in (0, 1):  # gate, up
                ps = nl.zeros((ip, cn), dtype=nl.float32, buffer=nl.psum)
                for w, x in zip(w_gu, h_t):
                    ps += nisa.nc_matmul(w[:, which, i0:i0 + ip], x[:, c0:c0 + cn])
                proj.append(ps)
            tile[:, c0:c0 + cn] = nl.multiply(nisa.activation(nl.silu, proj[0], dtype=nl.float32), proj[1],
                                              dtype=dtype)
        act.append(tile)
    return act


def _down_projection(act, w_down, scales, b_tiles, h_chunks, dtype):
    """``y [B, H] = act.T @ W_down`` per B tile, each token's row times its ``scales`` entry
    (POST_SCALE) when given."""
    hidden = w_down[0].shape[1]
    y = []
    for (b0, bt), scale in zip(b_tiles, scales or [None] * len(b_tiles)):
        tile = nl.ndarray((bt, hidden), dtype=dtype, buffer=nl.sbuf)
        for c0, cn in h_chunks:
            ps = nl.zeros((bt, cn), dtype=nl.float32, buffer=nl.psum)
            for a, w in zip(act, w_down):
                ps += nisa.nc_matmul(a[:, b0:b0 + bt], w[:, c0:c0 + cn])
            tile[:, c0:c0 + cn] = nl.copy(ps, dtype=dtype) if scale is None else \
                nisa.tensor_scalar(ps, np.multiply, scale, dtype=dtype)
        y.append(tile)
    return y


def _token_affinities(onehot, affinity, b_tiles):
    """Per B tile, each position's token's affinity to the block expert: ``S.T @ a`` ``[bt, 1]``."""
    scales = []
    for b0, bt in b_tiles:
        ps = nl.zeros((bt, 1), dtype=nl.float32, buffer=nl.psum)
        for s, a_e in zip(onehot, affinity):
            ps += nisa.nc_matmul(s[:, b0:b0 + bt], a_e)
        scales.append(nl.copy(ps, dtype=nl.float32))
    return scales


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
        # Per token tile: the one-hot gather matrix S [tokens, B] and each token's affinity to the
        # block's expert.
        onehot = [nisa.tensor_scalar(ids_row[:tp], np.equal, tcol, dtype=nl.float32)
                  for (_, tp), tcol in zip(token_tiles, token_col)]
        affinity = [nl.sum(nl.multiply(nl.load(affinities[t0:t0 + tp, :], dtype=nl.float32), is_expert[:tp]),
                           axis=1, keepdims=True, dtype=nl.float32) for t0, tp in token_tiles]
        if mode == ExpertAffinityScaleMode.PRE_SCALE:
            gather = [nisa.tensor_scalar(s, np.multiply, a_e, dtype=cdt) for s, a_e in zip(onehot, affinity)]
        else:
            gather = [nl.copy(s, dtype=cdt) for s in onehot]

        h_t = _gather_transposed(hidden_states, gather, token_tiles, h_tiles, b_chunks, cdt)
        w_gu = [_expert_tile(gate_up_proj_weight, h0, hp, is_expert, cdt) for h0, hp in h_tiles]
        w_down = [_expert_tile(down_proj_weight, i0, ip, is_expert, cdt) for i0, ip in i_tiles]
        act = _activations(w_gu, h_t, i_tiles, b_chunks, cdt)
        scales = _token_affinities(onehot, affinity, b_tiles) if mode == ExpertAffinityScaleMode.POST_SCALE else None
        y = _down_projection(act, w_down, scales, b_tiles, h_chunks, cdt)

        # output[ids] += y: per token tile, the rows of y its one-hot (transposed) selects,
        # accumulated in HBM (the first block writes).
        ids_col = [nl.load(token_position_to_id[pos0 + b0:pos0 + b0 + bt].reshape((bt, 1)), dtype=nl.float32)
                   for b0, bt in b_tiles]
        for (t0, tp), trow in zip(token_tiles, token_row):
            scatter = [nisa.tensor_scalar(trow[:bt], np.equal, ids, dtype=cdt) for (_, bt), ids in zip(b_tiles, ids_col)]
            for c0, cn in h_chunks:
                ps = nl.zeros((tp, cn), dtype=nl.float32, buffer=nl.psum)
                for st, yt in zip(scatter, y):
                    ps += nisa.nc_matmul(st, yt[:, c0:c0 + cn])
                nisa.dma_copy(dst=acc_hbm[t0:t0 + tp, c0:c0 + cn], src=nl.copy(ps, dtype=nl.float32),
                              dst_rmw_op=np.add if n > 0 else None)
    if acc_hbm is not output:
        nisa.dma_copy(dst=output, src=acc_hbm)
    return output

"""A Llama-style decoder layer as a Penguin macro program, its inputs and its NumPy reference.

The layer (pre-norm, grouped-query attention, SwiGLU MLP), over ``S`` tokens of one sequence::

    qkv  = rmsnorm(x) @ Wqkv                      IT54 NormQKV (fused RMSNorm, NBSd heads)
    q, k = rope(qkv[:nq]), rope(qkv[nq:nq+nkv])   IT55 user @nki.jit kernel, twice
    k_cache = k^T                                 IT56 registry kernel tiled_pf_transpose
    attn = softmax(q^T k / sqrt(d) + causal) v    IT54 CausalAttentionMMSoftmaxMMWithoutSwap
    o    = attn^T @ Wo                            IT54 RowTiledMM (transpose_a)
    h1   = x + o                                  \\ IT54 MLP with the fused residual add
    mlp  = (silu(n @ Wg) * (n @ Wu)) @ Wd,  n = rmsnorm(h1)   /

The layer's outputs follow NxDI's fused-residual convention: ``h1`` (the residual stream) and
``mlp_out``, whose sum the next layer's fused QKV adds (``residual_adds``); ``k_cache`` holds the
rotated keys token-major ``[S, nkv*d]`` and the values stay in ``qkv`` for the decode steps.
Every intermediate tensor is a program output, so each kernel's result is checked on its own.
"""

from __future__ import annotations

import dataclasses
import math

import ml_dtypes
import numpy as np

from neuronxsim.bir import target
from neuronxsim.errors import CodegenError
from neuronxsim.models.rope import rope, rope_reference, rope_tables
from neuronxsim.starfish.penguin import ir


@dataclasses.dataclass(frozen=True)
class DecoderConfig:
    tokens: int = 256
    hidden: int = 2048
    q_heads: int = 16
    kv_heads: int = 4
    head_dim: int = 128
    intermediate: int = 5632
    eps: float = 1e-6
    seed: int = 0

    def check(self) -> None:
        """CodegenError for a size the layer cannot take."""
        for name in ("tokens", "hidden", "q_heads", "kv_heads", "head_dim", "intermediate"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise CodegenError(f"--{name.replace('_', '-')} is {value!r}; expected a positive integer")
        if self.q_heads % self.kv_heads:
            raise CodegenError(f"--kv-heads {self.kv_heads} does not divide --q-heads {self.q_heads} "
                               "(grouped-query attention)")
        pe = target.uniform("pe_rows")
        if self.head_dim % 2 or self.head_dim > pe:
            raise CodegenError(f"--head-dim is {self.head_dim}; expected an even number up to {pe} (one head per "
                               "PE transpose in the RoPE kernel)")

    @property
    def qkv_heads(self) -> int:
        return self.q_heads + 2 * self.kv_heads


#: Per checked tensor: the macro that writes it (its name in the program).
PRODUCER = {"qkv": "qkv_proj", "q_rot": "rope_q", "k_rot": "rope_k", "k_cache": "k_cache",
            "attn": "attention", "attn_out": "o_proj", "mlp_out": "mlp", "h1": "mlp"}


def build_program(cfg: DecoderConfig, tensors_only: bool = False) -> ir.Program:
    """The layer as a Penguin program; ``tensors_only``: its tensors without its instructions
    (adding them compiles the user kernels, which sizing the layer must not do)."""
    cfg.check()
    S, H, d, F = cfg.tokens, cfg.hidden, cfg.head_dim, cfg.intermediate
    nq, nkv, N = cfg.q_heads, cfg.kv_heads, cfg.qkv_heads
    p = ir.Program("llama_decoder_layer")
    bf16 = "bfloat16"

    def t(name, shape, dtype=bf16, kind="input"):
        return p.tensor(name, list(shape), dtype, kind)

    x, norm1, wqkv = t("x", (1, S, H)), t("attn_norm_w", (1, H)), t("qkv_w", (H, N * d))
    cos, sin = t("rope_cos", (S, d // 2), "float32"), t("rope_sin", (S, d // 2), "float32")
    wo, norm2 = t("o_w", (nq * d, H)), t("mlp_norm_w", (1, H))
    wg, wu, wd = t("gate_w", (H, F)), t("up_w", (H, F)), t("down_w", (F, H))
    qkv = t("qkv", (N, 1, S, d), kind="output")
    q_rot, k_rot = t("q_rot", (nq, d, S), kind="output"), t("k_rot", (nkv * d, S), kind="output")
    k_cache = t("k_cache", (S, nkv * d), kind="output")
    attn = t("attn", (nq * d, S), kind="output")
    attn_out = t("attn_out", (1, S, H), kind="output")
    mlp_out, h1 = t("mlp_out", (1, S, H), kind="output"), t("h1", (1, S, H), kind="output")

    if tensors_only:
        return p
    full = ir.FullTensorAccess

    def heads(tensor, view, first, count):
        """Heads ``first .. first+count-1`` of ``tensor`` seen as ``view`` (heads leading)."""
        return ir.NDimSubTensorAccess(tensor, (first,) + (0,) * (len(view) - 1), (count,) + tuple(view[1:]),
                                      view_shape=tuple(view))

    qkv_heads = (N, S, d)  # NBSd with B = 1
    p.add(ir.NormQKV([full(x), full(wqkv), full(norm1)], [full(qkv)], name="qkv_proj", num_q_heads=nq,
                     num_kv_heads=nkv, d_head=d, fused_rmsnorm=True, norm_type="RMS_NORM", output_layout="NBSd",
                     eps=cfg.eps))
    p.add(ir.ExternalNativeNkiKernel(rope, [heads(qkv, qkv_heads, 0, nq), full(cos), full(sin)], [full(q_rot)],
                                     name="rope_q"))
    p.add(ir.ExternalNativeNkiKernel(rope, [heads(qkv, qkv_heads, nq, nkv), full(cos), full(sin)],
                                     [heads(k_rot, (nkv, d, S), 0, nkv)], name="rope_k"))
    p.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.OpaqueAccess(k_rot)], [ir.OpaqueAccess(k_cache)],
                                     name="k_cache"))
    p.add(ir.AttentionMMSoftmaxMM([full(q_rot), heads(k_rot, (nkv, d, S), 0, nkv),
                                   heads(qkv, qkv_heads, nq + nkv, nkv)],
                                  [heads(attn, (nq, d, S), 0, nq)], name="attention", is_causal=True,
                                  scale=1.0 / math.sqrt(d)))
    p.add(ir.BIRKernel("RowTiledMM", [full(attn), full(wo)], [heads(attn_out, (S, H), 0, S)],
                       {"transpose_a": True}, name="o_proj"))
    p.add(ir.MLPKernel([full(attn_out), full(x), full(norm2), full(wg), full(wu), full(wd)], [full(mlp_out), full(h1)],
                       name="mlp", fused_rmsnorm=True, norm_type="RMS_NORM", store_add=True, act_fn="SiLU",
                       eps=cfg.eps))
    return p


def host_bytes(cfg: DecoderConfig, mode: str) -> int:
    """About what ``make_inputs`` and ``reference`` hold at their peak, in bytes (0 in timing mode,
    which needs neither): every program tensor about four times (the bfloat16 inputs and outputs,
    their float32 copies in the reference), and the reference attention's score matrices, three
    [q_heads, tokens, tokens] float32 arrays alive at once plus two [tokens, tokens] masks."""
    if mode != "full":
        return 0
    tensors = build_program(cfg, tensors_only=True).tensors.values()
    elements = sum(math.prod(t.shape) for t in tensors)
    S = cfg.tokens
    return 4 * 4 * elements + 3 * 4 * cfg.q_heads * S * S + 2 * S * S


def make_inputs(cfg: DecoderConfig) -> dict:
    """Seeded random activations and weights (scaled by 1/sqrt(fan_in), so activations stay O(1)),
    and the RoPE tables of positions 0..S-1."""
    rng = np.random.default_rng(cfg.seed)
    S, H, d, F = cfg.tokens, cfg.hidden, cfg.head_dim, cfg.intermediate
    bf16 = ml_dtypes.bfloat16

    def rand(shape, scale=1.0, offset=0.0):
        return (rng.standard_normal(shape, dtype=np.float32) * scale + offset).astype(bf16)

    cos, sin = rope_tables(S, d)
    return {
        "x": rand((1, S, H)), "attn_norm_w": rand((1, H), 0.1, 1.0), "qkv_w": rand((H, cfg.qkv_heads * d), H ** -0.5),
        "rope_cos": cos, "rope_sin": sin, "o_w": rand((cfg.q_heads * d, H), (cfg.q_heads * d) ** -0.5),
        "mlp_norm_w": rand((1, H), 0.1, 1.0), "gate_w": rand((H, F), H ** -0.5), "up_w": rand((H, F), H ** -0.5),
        "down_w": rand((F, H), F ** -0.5),
    }


def reference(cfg: DecoderConfig, inputs: dict) -> dict:
    """The layer in float32 NumPy, every tensor the program stores rounded to its bfloat16 as the
    program stores it (so each kernel is compared with the same inputs it was given, up to that
    rounding)."""
    S, d = cfg.tokens, cfg.head_dim
    nq, nkv, N = cfg.q_heads, cfg.kv_heads, cfg.qkv_heads
    f = {k: np.asarray(v, np.float32) for k, v in inputs.items()}

    def stored(a):
        return a.astype(ml_dtypes.bfloat16).astype(np.float32)

    def rmsnorm(h, g):
        return h / np.sqrt(np.mean(h * h, -1, keepdims=True) + cfg.eps) * g

    x = f["x"][0]
    qkv = stored(rmsnorm(x, f["attn_norm_w"]) @ f["qkv_w"]).reshape(S, N, d).transpose(1, 0, 2)  # [N, S, d]
    q = stored(rope_reference(qkv[:nq], f["rope_cos"], f["rope_sin"]))  # [nq, d, S]
    k = stored(rope_reference(qkv[nq:nq + nkv], f["rope_cos"], f["rope_sin"]))  # [nkv, d, S]
    v = qkv[nq + nkv:]  # [nkv, S, d]
    group = nq // nkv
    scores = np.einsum("hdq,hdk->hqk", q, np.repeat(k, group, axis=0)) / math.sqrt(d)
    scores = np.where(np.triu(np.ones((S, S), bool), 1)[None], -np.inf, scores)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    attn = stored(np.einsum("hqk,hkd->hdq", probs, np.repeat(v, group, axis=0)))  # [nq, d, S]
    attn_out = stored(attn.reshape(nq * d, S).T @ f["o_w"])  # [S, H]
    h1 = stored(x + attn_out)
    n = rmsnorm(h1, f["mlp_norm_w"])
    gate, up = n @ f["gate_w"], n @ f["up_w"]
    mlp = stored((gate / (1 + np.exp(-gate)) * up) @ f["down_w"])
    return {"qkv": qkv[:, None], "q_rot": q, "k_rot": k.reshape(nkv * d, S), "k_cache": k.reshape(nkv * d, S).T,
            "attn": attn.reshape(nq * d, S), "attn_out": attn_out[None], "h1": h1[None], "mlp_out": mlp[None]}


#: The public comparator's tolerances for bfloat16 kernels (nkilib's tests: rtol 2e-2, atol 1e-2):
#: an output passes when max |a - b| <= ATOL + RTOL * max |b|.
RTOL, ATOL = 2e-2, 1e-2

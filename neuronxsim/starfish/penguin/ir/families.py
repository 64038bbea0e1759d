"""The bespoke macro families: fixed, named attrs and a fixed operand roster each.

Each lowers to one IT54 ``InstBIRKernel`` through its own ``codegen<Family>`` method. Operand
order and layouts follow the BIR library kernels' public call sites (NxDI's ``mlp_isa_kernel``,
``rmsnorm_qkv_isa_kernel``, ``rmsnorm_quant_isa_kernel``, ``attention_isa_kernel``; reference
section 3), attr defaults the nki-library kernels (reference section 2.2).
"""

from __future__ import annotations

from neuronxsim.bir import target
from neuronxsim.errors import CodegenError

from .attrs import AttrSpec
from .enums import ActFnType, NormType, QKVOutputLayout, QuantizationType
from .macro import MacroInst
from .operands import Operand

_PARTITIONS = target.uniform("num_partitions")  # a per-partition scale is one row per partition


class MLPKernel(MacroInst):
    """Fused (norm +) gated MLP: ``out = (act(h @ Wg [+bg]) * (h @ Wu [+bu])) @ Wd [+bd]``.

    srcs: ``hidden [B, S, H]``, ``residual [B, S, H]`` (store_add), ``ln_w [1, H]``,
    ``gate_w [H, I]`` (not skip_gate), ``up_w [H, I]``, ``down_w [I, H]``, each weight followed by
    its row scale ``[128, I]`` / ``[128, H]`` when quant_kernel, then ``gate_b [1, I]``
    (gate_bias), ``up_b [1, I]`` (up_bias) and ``down_b [1, H]`` (down_bias). dsts: ``out [B, S, H]``, ``add_out [B, S, H]`` (store_add:
    the residual sum ``hidden + residual`` is stored too).
    """

    ATTRS = (
        AttrSpec("fused_rmsnorm", bool, False),
        AttrSpec("norm_type", NormType, NormType.NO_NORM),
        AttrSpec("store_add", bool, False),
        AttrSpec("quant_kernel", bool, False),
        AttrSpec("lower_bound", float, 0.0),
        AttrSpec("skip_gate", bool, False),
        AttrSpec("act_fn", ActFnType, ActFnType.SiLU),
        AttrSpec("gate_bias", bool, False),
        AttrSpec("up_bias", bool, False),
        AttrSpec("down_bias", bool, False),
        AttrSpec("eps", float, 1e-6),
    )

    def check_attrs(self):
        if self.gate_bias and self.skip_gate:
            raise CodegenError(f"{self.label}: attr 'gate_bias' is True with skip_gate; expected no gate bias "
                               "without a gate projection")

    def operand_roster(self):
        srcs = [Operand("hidden", ("B", "S", "H"))]
        if self.store_add:
            srcs.append(Operand("residual", ("B", "S", "H")))
        srcs.append(Operand("ln_w", (1, "H")))
        weights = [("gate_w", ("H", "I"), "I"), ("up_w", ("H", "I"), "I"), ("down_w", ("I", "H"), "H")]
        for name, dims, out_dim in weights[1:] if self.skip_gate else weights:
            srcs.append(Operand(name, dims))
            if self.quant_kernel:
                srcs.append(Operand(name + "_scale", (_PARTITIONS, out_dim)))
        if self.gate_bias:
            srcs.append(Operand("gate_b", (1, "I")))
        if self.up_bias:
            srcs.append(Operand("up_b", (1, "I")))
        if self.down_bias:
            srcs.append(Operand("down_b", (1, "H")))
        dsts = [Operand("out", ("B", "S", "H"))]
        if self.store_add:
            dsts.append(Operand("add_out", ("B", "S", "H")))
        return srcs, dsts


class NormQKV(MacroInst):
    """Fused (norm +) QKV projection: ``qkv = norm(x) @ Wqkv [+ b]``, ``I = (nq + 2*nkv) * d``.

    srcs: ``hidden [B, S, H]``, ``residual0 [B, S, H]`` ... (``residual_adds`` of them, added to
    ``hidden`` before the norm, as nkilib's ``mlp_prev`` / ``attention_prev``), ``qkv_w [H, I]``,
    ``norm_w [1, H]``, ``bias [1, I]`` (bias).
    dsts: ``out`` in ``output_layout``: BSD ``[B, S, I]``, NBSd ``[N, B, S, d]``, NBdS
    ``[N, B, d, S]`` with ``N = nq + 2*nkv`` heads.
    """

    ATTRS = (
        AttrSpec("num_q_heads", int, minimum=1),
        AttrSpec("num_kv_heads", int, minimum=1),
        AttrSpec("d_head", int, minimum=1),
        AttrSpec("fused_rmsnorm", bool, True),
        AttrSpec("norm_type", NormType, NormType.RMS_NORM),
        AttrSpec("output_layout", QKVOutputLayout, QKVOutputLayout.BSD),
        AttrSpec("bias", bool, False),
        AttrSpec("eps", float, 1e-6),
        AttrSpec("residual_adds", int, 0, minimum=0),
    )

    _OUTPUT_DIMS = {
        QKVOutputLayout.BSD: ("B", "S", "I"),
        QKVOutputLayout.NBSd: ("N", "B", "S", "d"),
        QKVOutputLayout.NBdS: ("N", "B", "d", "S"),
    }

    def check_attrs(self):
        if self.num_q_heads % self.num_kv_heads:
            raise CodegenError(f"{self.label}: attr 'num_kv_heads' is {self.num_kv_heads}; expected a divisor "
                               f"of num_q_heads ({self.num_q_heads}) (grouped-query attention)")
        if self.residual_adds > 2:
            raise CodegenError(f"{self.label}: attr 'residual_adds' is {self.residual_adds}; expected 0, 1 or 2")

    def bound_symbols(self):
        heads = self.num_q_heads + 2 * self.num_kv_heads
        why = "attrs num_q_heads + 2*num_kv_heads"
        return {"N": (heads, why), "d": (self.d_head, "attr d_head"),
                "I": (heads * self.d_head, f"({why}) * d_head")}

    def operand_roster(self):
        srcs = [Operand("hidden", ("B", "S", "H"))]
        srcs += [Operand(f"residual{i}", ("B", "S", "H")) for i in range(self.residual_adds)]
        srcs += [Operand("qkv_w", ("H", "I")), Operand("norm_w", (1, "H"))]
        if self.bias:
            srcs.append(Operand("bias", (1, "I")))
        return srcs, [Operand("out", self._OUTPUT_DIMS[self.output_layout])]


class RMSNormQuantKernel(MacroInst):
    """(RMS norm +) fp8 quantization of ``hidden``.

    srcs: ``hidden [B, S, H]``, ``ln_w [1, H]``, ``in_scale [128, 1]`` (STATIC). dsts: ROW:
    ``out [B, S, H+4]`` (each row's last 4 bytes hold its fp32 dequant scale); STATIC:
    ``out [B, S, H]``. ``lower_bound`` clips the row scale when > 0.
    """

    ATTRS = (
        AttrSpec("norm_type", NormType, NormType.RMS_NORM, choices=(NormType.NO_NORM, NormType.RMS_NORM)),
        AttrSpec("quantization_type", QuantizationType, QuantizationType.ROW,
                 choices=(QuantizationType.ROW, QuantizationType.STATIC)),
        AttrSpec("lower_bound", float, 0.0),
        AttrSpec("eps", float, 1e-6),
    )

    def operand_roster(self):
        srcs = [Operand("hidden", ("B", "S", "H")), Operand("ln_w", (1, "H"))]
        if self.quantization_type == QuantizationType.STATIC:
            srcs.append(Operand("in_scale", (_PARTITIONS, 1)))
            return srcs, [Operand("out", ("B", "S", "H"))]
        return srcs, [Operand("out", ("B", "S", ("H", 4)))]


def _check_kv_heads(macro, q_heads: int, kv_heads: int) -> None:
    """Grouped-query attention: the kv heads must divide the query heads."""
    if q_heads % kv_heads:
        raise CodegenError(f"{macro.label}: k and v have {kv_heads} heads (BKV); expected a divisor of q's "
                           f"{q_heads} (BH), each kv head serving BH / BKV query heads")


class AttentionMMSoftmaxMM(MacroInst):
    """Attention forward, ``out = softmax(scale * Q^T K [+ causal mask]) V``, heads folded into
    the batch dim: srcs ``q [BH, d, Sq]``, ``k [BKV, d, Sk]``, ``v [BKV, Sk, d]``; dsts
    ``out [BH, d, Sq]``. ``BKV`` divides ``BH`` (grouped-query attention: query head ``h`` reads
    kv head ``h // (BH // BKV)``)."""

    ATTRS = (
        AttrSpec("is_causal", bool),
        AttrSpec("scale", float, 1.0),
    )

    def operand_roster(self):
        srcs = [Operand("q", ("BH", "d", "Sq")), Operand("k", ("BKV", "d", "Sk")), Operand("v", ("BKV", "Sk", "d"))]
        return srcs, [Operand("out", ("BH", "d", "Sq"))]

    def validate(self) -> None:
        super().validate()
        _check_kv_heads(self, self.srcs[0].access_shape[0], self.srcs[1].access_shape[0])


class BackwardsAttention(MacroInst):
    """Attention backward (flash-attention style), heads folded into the batch dim: srcs
    ``q [BH, d, S]``, ``k, v [BKV, d, S]``, ``o, dy [BH, d, S]`` and ``lse [BH, S]`` (the
    forward's softmax log-sum-exp per query); dsts ``dq [BH, d, S]``, ``dk, dv [BKV, d, S]``
    (summed over each kv head's ``BH // BKV`` query heads)."""

    ATTRS = (
        AttrSpec("is_causal", bool),
        AttrSpec("scale", float, 1.0),
    )

    def operand_roster(self):
        q, kv = ("BH", "d", "S"), ("BKV", "d", "S")
        srcs = [Operand("q", q), Operand("k", kv), Operand("v", kv), Operand("o", q), Operand("dy", q),
                Operand("lse", ("BH", "S"))]
        return srcs, [Operand("dq", q), Operand("dk", kv), Operand("dv", kv)]

    def validate(self) -> None:
        super().validate()
        _check_kv_heads(self, self.srcs[0].access_shape[0], self.srcs[1].access_shape[0])


__all__ = ["MLPKernel", "NormQKV", "RMSNormQuantKernel", "AttentionMMSoftmaxMM", "BackwardsAttention"]

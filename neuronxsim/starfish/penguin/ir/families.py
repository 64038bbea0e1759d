"""The bespoke macro families: fixed, named attrs and a fixed operand roster each.

Each lowers to one IT54 ``InstBIRKernel`` through its own ``codegen<Family>`` method. A family's
attrs and operand roster are its leaf's signature (``neuronxsim.walrus.leaf_signature``, declared
beside the C++ leaf): operand order and layouts follow the BIR library kernels' public call sites
(NxDI's ``mlp_isa_kernel``, ``rmsnorm_qkv_isa_kernel``, ``rmsnorm_quant_isa_kernel``,
``attention_isa_kernel``; reference section 3), attr defaults the nki-library kernels (reference
section 2.2). What stays here are the rules between attrs and symbols fixed by attrs.
"""

from __future__ import annotations

from neuronxsim.errors import CodegenError

from .attrs import AttrSpec
from .enums import NormType
from .leaf_interface import family_attrs, family_roster
from .macro import MacroInst


#: The two attrs that say the norm of an MLP or QKV: NxDI's fused_rmsnorm flag and nkilib's
#: norm_type (the leaf resolves them, walrus/kernels/RowNorm.h fusedNormType).
NORM_ATTRS = ("fused_rmsnorm", "norm_type")


def check_norm_attrs(inst):
    """Both norm attrs set must agree on whether there is a norm: fused_rmsnorm=True with
    norm_type NO_NORM, or False with a norm, contradict each other. Only one set, or both left at
    the family's defaults, is the leaf's to resolve."""
    if all(inst.is_set(a) for a in NORM_ATTRS) and inst.fused_rmsnorm != (inst.norm_type != NormType.NO_NORM):
        raise CodegenError(f"{inst.label}: attrs fused_rmsnorm={inst.fused_rmsnorm} and norm_type="
                           f"{inst.norm_type.name} contradict each other (fused_rmsnorm=True asks for a norm, "
                           "False for none); set only one of them, or both alike")


class MLPKernel(MacroInst):
    """Fused (norm +) gated MLP: ``out = (act(h @ Wg [+bg]) * (h @ Wu [+bu])) @ Wd [+bd]``, leaf
    ``MLP`` (``walrus.leaf_signature("MLP")`` lists the operands: hidden, residual when store_add,
    ln_w, the weights each followed by its row scale when quant_kernel, the biases; out and, with
    store_add, add_out = hidden + residual)."""

    KERNEL_NAME = "MLP"
    ATTRS = family_attrs(KERNEL_NAME)
    UNSET_MATTERS = NORM_ATTRS

    def check_attrs(self):
        check_norm_attrs(self)
        if self.gate_bias and self.skip_gate:
            raise CodegenError(f"{self.label}: attr 'gate_bias' is True with skip_gate; expected no gate bias "
                               "without a gate projection")

    def operand_roster(self):
        return family_roster(self, self.KERNEL_NAME)


class NormQKV(MacroInst):
    """Fused (norm +) QKV projection: ``qkv = norm(x) @ Wqkv [+ b]``, ``I = (nq + 2*nkv) * d``,
    leaf ``QKV`` (``walrus.leaf_signature("QKV")``: hidden, the residuals added to it before the
    norm, qkv_w, norm_w, bias; out in ``output_layout`` with ``N = nq + 2*nkv`` heads).

    ``residual_adds`` is the family's own attr: how many of the leaf's variadic ``residual``
    operands it passes (the node carries the count as its operands; the seed's QKV attr roster
    has no such attr).
    """

    KERNEL_NAME = "QKV"
    ATTRS = family_attrs(KERNEL_NAME) + (AttrSpec("residual_adds", int, 0, minimum=0),)
    UNSET_MATTERS = NORM_ATTRS

    def check_attrs(self):
        check_norm_attrs(self)
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
        return family_roster(self, self.KERNEL_NAME, counts={"residual": self.residual_adds})


class RMSNormQuantKernel(MacroInst):
    """(RMS norm +) fp8 quantization of ``hidden``, leaf ``QuantOnly``
    (``walrus.leaf_signature("QuantOnly")``: ROW stores each row's fp32 dequant scale in its last 4
    bytes, ``out [B, S, H+4]``; STATIC takes ``in_scale``). ``lower_bound`` clips the row scale
    when > 0."""

    KERNEL_NAME = "QuantOnly"
    ATTRS = family_attrs(KERNEL_NAME)

    def operand_roster(self):
        return family_roster(self, self.KERNEL_NAME)


def _check_kv_heads(macro, q_heads: int, kv_heads: int) -> None:
    """Grouped-query attention: the kv heads must divide the query heads."""
    if q_heads % kv_heads:
        raise CodegenError(f"{macro.label}: k and v have {kv_heads} heads (BKV); expected a divisor of q's "
                           f"{q_heads} (BH), each kv head serving BH / BKV query heads")


class AttentionMMSoftmaxMM(MacroInst):
    """Attention forward, ``out = softmax(scale * Q^T K [+ causal mask]) V``, heads folded into
    the batch dim (``walrus.leaf_signature("AttentionMMSoftmaxMMWithoutSwap")``: q, k, v; out).
    ``BKV`` divides ``BH`` (grouped-query attention: query head ``h`` reads kv head
    ``h // (BH // BKV)``). ``is_causal`` is required: it selects the leaf (the causal twin's
    signature differs only in that attr's default)."""

    KERNEL_NAME = "AttentionMMSoftmaxMMWithoutSwap"
    ATTRS = family_attrs(KERNEL_NAME, required=("is_causal",))

    def operand_roster(self):
        return family_roster(self, self.KERNEL_NAME)

    def validate(self) -> None:
        super().validate()
        _check_kv_heads(self, self.srcs[0].access_shape[0], self.srcs[1].access_shape[0])


class BackwardsAttention(MacroInst):
    """Attention backward (flash-attention style), heads folded into the batch dim
    (``walrus.leaf_signature("BackwardsAttention")``: q, k, v, o, dy and lse, the forward's softmax
    log-sum-exp per query; dq, and dk, dv summed over each kv head's ``BH // BKV`` query heads).
    ``is_causal`` is required of the family."""

    KERNEL_NAME = "BackwardsAttention"
    ATTRS = family_attrs(KERNEL_NAME, required=("is_causal",))

    def operand_roster(self):
        return family_roster(self, self.KERNEL_NAME)

    def validate(self) -> None:
        super().validate()
        _check_kv_heads(self, self.srcs[0].access_shape[0], self.srcs[1].access_shape[0])


__all__ = ["MLPKernel", "NormQKV", "RMSNormQuantKernel", "AttentionMMSoftmaxMM", "BackwardsAttention"]

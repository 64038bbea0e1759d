"""The bespoke IT54 families: node kind, every attr and shape, operand flavours, the TKG
threshold, and the tiled twins."""

import json

import pytest

from neuronxsim import bir
from neuronxsim.bir import AccessFlavour
from neuronxsim.errors import CodegenError
from neuronxsim.nki._private_kernels import mlp as mlp_leaf
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop, NAMED_ATTR_FIELDS
from neuronxsim.starfish.penguin.targets.codegen.KernelBuilder import KernelBuilder

F = ir.FullTensorAccess
COMMON = {"sb_buf_shape": [128, 192 * 1024], "psum_buf_shape": [128, 8, 2048], "auto_cast": "matmult",
          "auto_cast_type": "bf16"}


def named_fields(node):
    return {f: getattr(node, f) for f in NAMED_ATTR_FIELDS if getattr(node, f) is not None}


def check_common(node, inst, kernel_name, flavour):
    assert node.opcode == 54 and type(node) is bir.InstBIRKernel
    assert node.kernel_name == kernel_name
    assert node.srcs_shape == inst.srcs_shapes and node.dsts_shape == inst.dsts_shapes
    assert {k: getattr(node, k) for k in COMMON} == COMMON
    assert [a.flavour for a in node.ins] == [flavour] * len(inst.srcs)
    assert [a.flavour for a in node.outs] == [flavour] * len(inst.dsts)
    assert [a.memref for a in node.ins + node.outs] == [a.tensor.name for a in inst.srcs + inst.dsts]


def test_mlp_sets_every_named_attr(build):
    p = ir.Program()
    B, S, H, I = 2, 64, 256, 512
    t = lambda n, s, kind="input", dt="bfloat16": F(p.tensor(n, s, dt, kind))  # noqa: E731
    srcs = [t("attn", [B, S, H]), t("residual", [B, S, H]), t("ln_w", [1, H]), t("gate_w", [H, I], dt="float8e4"),
            t("gate_s", [128, I], dt="float32"), t("up_w", [H, I], dt="float8e4"), t("up_s", [128, I], dt="float32"),
            t("down_w", [I, H], dt="float8e4"), t("down_s", [128, H], dt="float32"), t("up_b", [1, I]), t("down_b", [1, H])]
    dsts = [t("out", [B, S, H], "output"), t("add_out", [B, S, H], "output")]
    inst = p.add(ir.MLPKernel(srcs, dsts, name="layer0.mlp", fused_rmsnorm=True, norm_type="LAYER_NORM", store_add=True,
                              quant_kernel=True, lower_bound=240.0, act_fn="Swish", up_bias=True, down_bias=True,
                              eps=1e-5))
    _, (node,) = build.lower(p)
    check_common(node, inst, "MLP", AccessFlavour.Seq)
    assert node.name == "layer0.mlp"
    assert node.kernel_attrs == [("fused_rmsnorm", "true"), ("norm_type", "2"), ("store_add", "true"),
                                 ("quant_kernel", "true"), ("lower_bound", "240.0"), ("skip_gate", "false"),
                                 ("act_fn", "3"), ("up_bias", "true"), ("down_bias", "true"), ("eps", "1e-05"),
                                 ("is_tkg", "false")]
    assert named_fields(node) == {"fused_rmsnorm": True, "norm_type": 2, "store_add": True, "quant_kernel": True,
                                  "lower_bound": 240.0, "skip_gate": False, "act_fn": 3, "up_bias": True,
                                  "down_bias": True, "is_tkg": False}


def test_qkv_sets_its_attrs_and_layout(build):
    p = build.family_program("qkv", output_layout="BSD", bias=False, eps=1e-5)
    cg, (node,) = build.lower(p)
    check_common(node, p.insts[0], "QKV", AccessFlavour.Seq)
    assert node.kernel_attrs == [("fused_rmsnorm", "true"), ("norm_type", "1"), ("output_layout", "0"),
                                 ("num_q_heads", "8"), ("num_kv_heads", "2"), ("d_head", "64"), ("bias", "false"),
                                 ("eps", "1e-05"), ("useTkgQKVKernel", "false")]
    assert named_fields(node) == {"fused_rmsnorm": True, "norm_type": 1, "output_layout": 0}


def test_rmsnorm_quant_sets_its_attrs(build):
    p = build.family_program("rmsnorm_quant", norm_type="NO_NORM", lower_bound=1e-3)
    _, (node,) = build.lower(p)
    check_common(node, p.insts[0], "QuantOnly", AccessFlavour.Seq)
    assert node.kernel_attrs == [("norm_type", "0"), ("quantization_type", "2"), ("lower_bound", "0.001"),
                                 ("eps", "1e-06")]
    assert named_fields(node) == {"norm_type": 0, "lower_bound": 0.001}


@pytest.mark.parametrize("is_causal, kernel_name", [(True, "CausalAttentionMMSoftmaxMMWithoutSwap"),
                                                    (False, "AttentionMMSoftmaxMMWithoutSwap")])
def test_attention_forward_names_its_kernel_by_causality(build, is_causal, kernel_name):
    p = build.family_program("attention", is_causal=is_causal, scale=0.125)
    _, (node,) = build.lower(p)
    check_common(node, p.insts[0], kernel_name, AccessFlavour.Seq)
    assert node.kernel_attrs == [("is_causal", "true" if is_causal else "false"), ("scale", "0.125")]
    assert named_fields(node) == {}  # the common attention builder names no field


def test_attention_forward_marshals_each_access_kind(build):
    p = ir.Program()
    q, k = p.tensor("q", [8, 64, 128]), p.tensor("k", [8, 64, 256])
    v, o = p.tensor("v", [2, 4, 256, 64]), p.tensor("o", [8, 64, 128], kind="output")
    v_tile = ir.TileAccess(v, ir.MemrefTile([8, 256, 64], [0, 0, 0]), view_shape=[8, 256, 64])
    p.add(ir.AttentionMMSoftmaxMM([ir.OpaqueAccess(q), ir.NDimSubTensorAccess(k, [0, 0, 0], [8, 64, 256]), v_tile],
                                  [F(o)], is_causal=False))
    assert KernelBuilder.codegen_method(p.insts[0]) == "codegenAttentionMMSoftmaxMM"
    _, (node,) = build.lower(p)
    assert [a.flavour for a in node.ins] == [AccessFlavour.Opaque, AccessFlavour.AP, AccessFlavour.AP]
    assert node.ins[2].access_shape == [8, 256, 64] and node.outs[0].flavour == AccessFlavour.Seq


def test_backwards_attention_carries_is_causal_as_a_field(build):
    p = build.family_program("backwards_attention", is_causal=False, scale=0.5)
    _, (node,) = build.lower(p)
    check_common(node, p.insts[0], "BackwardsAttention", AccessFlavour.Seq)
    assert node.kernel_attrs == [("is_causal", "false"), ("scale", "0.5")]
    assert named_fields(node) == {"is_causal": False}


def test_the_threshold_is_the_public_value():
    assert mlp_leaf.TKG_BS_SEQLEN_THRESHOLD == 96


#: The attr each family's node carries its routing decision in (seed 000: codegenMLPKernel's is_tkg,
#: codegenNormQKV's useTkgQKVKernel).
TKG_ATTR = {"mlp": "is_tkg", "qkv": "useTkgQKVKernel"}


@pytest.mark.parametrize("family", ["mlp", "qkv"])
@pytest.mark.parametrize("batch, seqlen, is_tkg", [(1, 95, True), (1, 96, False), (2, 47, True), (2, 48, False),
                                                   (95, 1, True), (96, 1, False)])
def test_tkg_iff_tokens_are_below_the_threshold(build, family, batch, seqlen, is_tkg):
    """Seed 000: ``is_tkg = (B*S < TKG_BS_SEQLEN_THRESHOLD)``: exactly the threshold is CTE."""
    _, (node,) = build.lower(build.family_program(family, batch=batch, seqlen=seqlen))
    assert dict(node.kernel_attrs)[TKG_ATTR[family]] == ("true" if is_tkg else "false")


def test_only_mlp_sets_the_is_tkg_field_qkv_names_its_decision_useTkgQKVKernel(build):
    _, (mlp,) = build.lower(build.family_program("mlp", seqlen=64))
    _, (qkv,) = build.lower(build.family_program("qkv", seqlen=64))
    assert mlp.is_tkg is True and "useTkgQKVKernel" not in dict(mlp.kernel_attrs)
    assert qkv.is_tkg is None and "is_tkg" not in dict(qkv.kernel_attrs)
    assert dict(qkv.kernel_attrs)["useTkgQKVKernel"] == "true"


@pytest.mark.parametrize("family", ["mlp", "qkv"])
@pytest.mark.parametrize("tiled", [False, True])
def test_the_threshold_is_read_from_the_leaf_module_at_lowering_time(build, monkeypatch, family, tiled):
    """The codegen imports the constant from the leaf module when it lowers, not when it is
    imported: a change to the leaf module's value decides the next lowering."""
    p = build.family_program(family, access=build.whole_tile if tiled else ir.FullTensorAccess, seqlen=128)
    _, (node,) = build.lower(p)
    assert dict(node.kernel_attrs)[TKG_ATTR[family]] == "false"
    monkeypatch.setattr(mlp_leaf, "TKG_BS_SEQLEN_THRESHOLD", 129)
    _, (node,) = build.lower(p)
    assert dict(node.kernel_attrs)[TKG_ATTR[family]] == "true"


TWINS = {"mlp": "codegenTiledNativeKernelMLP", "qkv": "codegenTiledNativeKernelNormQKV",
         "rmsnorm_quant": "codegenTiledNativeKernelRMSNormQuant",
         "attention": "codegenTiledNativeKernelAttentionMMSoftmaxMM"}


@pytest.mark.parametrize("family", sorted(TWINS))
def test_tiled_twins_differ_only_in_add_ap(build, family):
    untiled = build.family_program(family, batch=1, seqlen=64)
    tiled = build.family_program(family, access=build.whole_tile, batch=1, seqlen=64)
    assert KernelBuilder.codegen_method(tiled.insts[0]) == TWINS[family]
    assert KernelBuilder.codegen_method(untiled.insts[0]) != TWINS[family]
    (cg_a, _), (cg_b, _) = build.lower(untiled), build.lower(tiled)
    node_a, node_b = (json.loads(cg.module.to_json())["functions"][0]["blocks"][0]["instructions"][0]
                      for cg in (cg_a, cg_b))
    for arg in node_a["ins"] + node_a["outs"]:
        assert arg.pop("access") == "Seq"
    for arg in node_b["ins"] + node_b["outs"]:
        assert arg.pop("access") == "AP"
        assert arg.pop("access_shape") and arg.pop("partition_dim") == 0
    assert node_a == node_b


def test_a_partial_tile_addresses_its_tile(build):
    p = ir.Program()
    B, S, H, I = 1, 256, 256, 512
    t = lambda n, s, kind="input": p.tensor(n, s, "bfloat16", kind)  # noqa: E731
    hidden, out = t("hidden", [B, S, H]), t("out", [B, S, H], "output")
    weights = [t("ln_w", [1, H]), t("gate_w", [H, I]), t("up_w", [H, I]), t("down_w", [I, H])]
    rows = lambda x: ir.TileAccess(x, ir.MemrefTile([1, 64, H], [0, 2, 0]), partition_dim=1)  # noqa: E731
    p.add(ir.MLPKernel([rows(hidden)] + [build.whole_tile(w) for w in weights], [rows(out)]))
    _, (node,) = build.lower(p)
    assert node.srcs_shape[0] == [1, 64, 256] and node.is_tkg is True  # the tile's 64 tokens
    assert node.ins[0].offset == 2 * 64 * H
    assert [(x.step, x.num) for x in node.ins[0].pattern] == [(H, 64), (S * H, 1), (1, H)]
    assert node.ins[0].partition_dim == 1 and node.outs[0].offset == 2 * 64 * H


@pytest.mark.parametrize("family, method", [("mlp", "codegenMLPKernel"), ("qkv", "codegenNormQKV"),
                                            ("rmsnorm_quant", "codegenRMSNormQuantKernel"),
                                            ("backwards_attention", "codegenBackwardsAttention")])
def test_whole_tensor_families_refuse_other_access_kinds(build, family, method):
    p = build.family_program(family, access=ir.OpaqueAccess)
    cg = BirCodeGenLoop()
    with pytest.raises(CodegenError) as e:
        cg.lower(p)
    inst = p.insts[0]
    assert str(e.value) == (f"insts[0] {inst.label} srcs[0]: OpaqueAccess of '{inst.srcs[0].tensor.name}'; {method} "
                            "takes FullTensorAccess operands (whole tensors, addSeqAccess), or TileAccess for every "
                            "operand (the tiled form, addAP)")
    assert len(cg.block) == 0 and not cg.function.allocations  # nothing was emitted


def test_a_tiled_twin_called_on_whole_tensors_refuses(build):
    cg = BirCodeGenLoop()
    inst = build.family_program("mlp").insts[0]
    with pytest.raises(CodegenError, match=r"^MLPKernel srcs\[0\]: FullTensorAccess of 'hidden'; "
                                           r"codegenTiledNativeKernelMLP takes TileAccess for every operand"):
        cg.codegenTiledNativeKernelMLP(inst)
    assert len(cg.block) == 0


def test_a_macro_changed_after_it_was_added_is_refused_before_emitting(build):
    p = build.family_program("mlp")
    p.insts[0].act_fn = 7
    cg = BirCodeGenLoop()
    with pytest.raises(CodegenError, match="MLPKernel: attr 'act_fn' is 7; expected an ActFnType"):
        cg.lower(p)
    assert len(cg.block) == 0 and not cg.function.allocations


class RecordingNode:
    """Forwards to a real node and records which operand-API methods the codegen called."""

    OPERAND_API = {"addSeqAccess", "addAP", "addArgumentOrOutput", "addOpaqueAP", "createAP"}

    def __init__(self, node, calls):
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_calls", calls)

    def __getattr__(self, name):
        attr = getattr(self._node, name)
        if name in self.OPERAND_API:
            def record(*args, **kwargs):
                self._calls.append(name)
                return attr(*args, **kwargs)
            return record
        return attr


def operand_api_calls(program):
    cg = BirCodeGenLoop()
    calls = []
    real = cg.addInstruction
    cg.addInstruction = lambda opcode, name="": RecordingNode(real(opcode, name), calls)
    cg.lower(program)
    return calls


@pytest.mark.parametrize("family", sorted(TWINS))
def test_untiled_families_call_add_seq_access_and_twins_call_add_ap(build, family):
    untiled = build.family_program(family)
    n = len(untiled.insts[0].srcs) + len(untiled.insts[0].dsts)
    assert operand_api_calls(untiled) == ["addSeqAccess"] * n
    assert operand_api_calls(build.family_program(family, access=build.whole_tile)) == ["createAP", "addAP"] * n


def test_the_generic_path_calls_the_builder_of_each_access_kind(build):
    p = ir.Program()
    x = [p.tensor(f"x{i}", [4, 8]) for i in range(4)]
    y = p.tensor("y", [4, 8], kind="output")
    p.add(ir.BIRKernel("CaymanPackedPETranspose",
                       [F(x[0]), ir.NDimSubTensorAccess(x[1], [0, 0], [2, 8]),
                        ir.TileAccess(x[2], ir.MemrefTile([2, 8], [1, 0])), ir.OpaqueAccess(x[3])], [F(y)]))
    assert operand_api_calls(p) == ["addSeqAccess", "createAP", "addArgumentOrOutput", "createAP",
                                    "addArgumentOrOutput", "addOpaqueAP", "addSeqAccess"]


SHARED_BUILDER = {"mlp": "_commonNativeKernelCodegen", "qkv": "_commonNativeKernelCodegen",
                  "rmsnorm_quant": "_commonNativeKernelCodegen", "attention": "_commonAttentionKernelCodegen",
                  "backwards_attention": None}


@pytest.mark.parametrize("family", sorted(SHARED_BUILDER))
@pytest.mark.parametrize("tiled", [False, True])
def test_the_four_it54_sinks(build, monkeypatch, family, tiled):
    """Seed 000 section 2: the bespoke families and their tiled twins hand off to one of the two
    shared IT54 builders (_commonNativeKernelCodegen, _commonAttentionKernelCodegen), which perform
    addInstruction(Opcode.BIRKernel); codegenBackwardsAttention inlines its own (is_causal)."""
    if tiled and family == "backwards_attention":
        pytest.skip("backward attention has no tiled twin")
    calls = []
    for name in ("_commonNativeKernelCodegen", "_commonAttentionKernelCodegen"):
        original = getattr(BirCodeGenLoop, name)
        monkeypatch.setattr(BirCodeGenLoop, name, lambda self, *a, _n=name, _f=original: calls.append(_n) or _f(self, *a))
    opcodes = []
    original_add = BirCodeGenLoop.addInstruction
    monkeypatch.setattr(BirCodeGenLoop, "addInstruction",
                        lambda self, opcode, name="": opcodes.append(opcode) or original_add(self, opcode, name))
    p = build.family_program(family, access=build.whole_tile if tiled else ir.FullTensorAccess)
    build.lower(p)
    assert calls == ([SHARED_BUILDER[family]] if SHARED_BUILDER[family] else [])
    assert opcodes == [bir.InstructionType.BIRKernel]

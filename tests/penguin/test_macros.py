"""Macro instructions: named attrs (missing, mistyped, unknown), operand rosters, the generic
attr bag, the NKI kernel macros."""

import math

import pytest

from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir

F = ir.FullTensorAccess


def tensors(spec, kind="input", dtype="bfloat16"):
    return [F(ir.Tensor(name, shape, dtype, kind)) for name, shape in spec]


B, S, H, I = 2, 4, 256, 512
MLP_SRCS = [("hidden", [B, S, H]), ("ln_w", [1, H]), ("gate_w", [H, I]), ("up_w", [H, I]), ("down_w", [I, H])]
MLP_DSTS = [("out", [B, S, H])]


def mlp(srcs=MLP_SRCS, dsts=MLP_DSTS, **attrs):
    return ir.MLPKernel(tensors(srcs), tensors(dsts, "output"), name="mlp0", **attrs)


def test_mlp_defaults_follow_the_public_kernel():
    m = mlp()
    assert (m.fused_rmsnorm, m.norm_type, m.store_add, m.quant_kernel, m.lower_bound, m.skip_gate, m.act_fn,
            m.up_bias, m.down_bias, m.eps) == (False, ir.NormType.NO_NORM, False, False, 0.0, False,
                                               ir.ActFnType.SiLU, False, False, 1e-6)
    assert m.srcs_shapes == [list(s) for _, s in MLP_SRCS] and m.dsts_shapes == [[B, S, H]]
    assert m.operands is m.srcs and m.results is m.dsts


def test_attrs_are_coerced_when_built():
    m = mlp(norm_type="RMS_NORM", act_fn=ir.ActFnType.GELU, eps=0, lower_bound=2)
    assert m.norm_type is ir.NormType.RMS_NORM and m.act_fn is ir.ActFnType.GELU
    assert type(m.eps) is float and m.eps == 0.0 and m.lower_bound == 2.0


@pytest.mark.parametrize("attr, value, expected", [
    ("fused_rmsnorm", 1, "a bool"),
    ("norm_type", "RMS", "a NormType: one of NO_NORM, RMS_NORM, LAYER_NORM, RMS_NORM_SKIP_GAMMA"),
    ("norm_type", 1, "a NormType: one of NO_NORM, RMS_NORM, LAYER_NORM, RMS_NORM_SKIP_GAMMA"),
    ("eps", "1e-6", "a finite number"),
    ("eps", math.nan, "a finite number"),
    ("lower_bound", True, "a finite number"),
    ("act_fn", ir.NormType.RMS_NORM, "an ActFnType: one of SiLU, GELU, GELU_Tanh_Approx, Swish"),
])
def test_a_mistyped_attr_names_macro_attr_and_expected_form(attr, value, expected):
    with pytest.raises(CodegenError) as e:
        mlp(**{attr: value})
    assert str(e.value).startswith(f"MLPKernel 'mlp0': attr '{attr}' is {value!r}; expected ")
    assert str(e.value).endswith(expected)


def test_unknown_and_missing_attrs():
    with pytest.raises(CodegenError, match="MLPKernel 'mlp0': unknown attr 'fused_rms_norm'; expected attrs: act_fn,"):
        mlp(fused_rms_norm=True)
    with pytest.raises(CodegenError, match="AttentionMMSoftmaxMM: attr 'is_causal' is missing; expected a bool"):
        ir.AttentionMMSoftmaxMM(*_attention_operands())


def test_validate_catches_a_macro_changed_after_it_was_built():
    m = mlp()
    m.norm_type = "RMS_NORM"
    with pytest.raises(CodegenError, match="attr 'norm_type' is 'RMS_NORM'; expected a NormType"):
        m.validate()
    m = mlp()
    del m.eps
    with pytest.raises(CodegenError, match="attr 'eps' is missing; expected a finite number"):
        m.validate()
    m = mlp()
    m.srcs = m.srcs[:4]
    with pytest.raises(CodegenError, match="MLPKernel 'mlp0' srcs: 4 operands, expected 5"):
        m.validate()


def test_operand_shapes_that_disagree_name_the_operand_and_where_symbols_came_from():
    bad = list(MLP_SRCS)
    bad[3] = ("up_w", [H, I + 1])
    with pytest.raises(CodegenError) as e:
        mlp(srcs=bad)
    assert str(e.value) == ("MLPKernel 'mlp0' srcs[3] 'up_w': access shape [256, 513] does not match up_w [H, I] "
                            "(H = 256 from srcs[0] 'hidden', I = 512 from srcs[2] 'gate_w')")
    with pytest.raises(CodegenError, match=r"dsts\[0\] 'out': access shape \[2, 4, 255\] does not match out \[B, S, H\]"):
        mlp(dsts=[("out", [B, S, H - 1])])
    with pytest.raises(CodegenError, match=r"srcs\[1\] 'ln_w': access shape \[256\] has rank 1; expected ln_w \[1, H\]"):
        mlp(srcs=[MLP_SRCS[0], ("ln_w", [H])] + MLP_SRCS[2:])
    with pytest.raises(CodegenError, match=r"srcs: 5 operands, expected 6: \[hidden \[B, S, H\], residual \[B, S, H\], ln_w"):
        mlp(store_add=True)


def test_mlp_roster_follows_its_attrs():
    srcs = [("hidden", [B, S, H]), ("residual", [B, S, H]), ("ln_w", [1, H]),
            ("up_w", [H, I]), ("up_w_scale", [128, I]), ("down_w", [I, H]), ("down_w_scale", [128, H]),
            ("up_b", [1, I]), ("down_b", [1, H])]
    m = mlp(srcs=srcs, dsts=MLP_DSTS + [("add_out", [B, S, H])], store_add=True, skip_gate=True,
            quant_kernel=True, up_bias=True, down_bias=True)
    names = [op.name for op in m.operand_roster()[0]]
    assert names == [n for n, _ in srcs]


def test_dsts_may_not_write_program_inputs():
    with pytest.raises(CodegenError, match=r"dsts\[0\]: writes the program input 'out'; expected an output or internal"):
        ir.MLPKernel(tensors(MLP_SRCS), tensors(MLP_DSTS, "input"))


def _qkv(layout, out_shape, **attrs):
    srcs = tensors([("x", [B, S, H]), ("w", [H, (8 + 2 * 2) * 64]), ("g", [1, H])])
    return ir.NormQKV(srcs, tensors([("qkv", out_shape)], "output"), num_q_heads=8, num_kv_heads=2, d_head=64,
                      output_layout=layout, **attrs)


def test_qkv_output_layouts_and_heads():
    assert _qkv("BSD", [B, S, 768]).output_layout is ir.QKVOutputLayout.BSD
    assert _qkv("NBSd", [12, B, S, 64]).output_layout is ir.QKVOutputLayout.NBSd
    assert _qkv("NBdS", [12, B, 64, S]).output_layout is ir.QKVOutputLayout.NBdS
    with pytest.raises(CodegenError, match=r"^NormQKV dsts\[0\] 'out': access shape \[12, 2, 4, 64\] does not match out \[N, B, d, S\] "
                                           r"\(N = 12 from attrs num_q_heads \+ 2\*num_kv_heads, d = 64 from attr d_head"):
        _qkv("NBdS", [12, B, S, 64])
    with pytest.raises(CodegenError, match=r"srcs\[1\] 'qkv_w': access shape \[256, 768\] does not match qkv_w \[H, I\] "
                                           r"\(I = 896 from \(attrs num_q_heads \+ 2\*num_kv_heads\) \* d_head"):
        ir.NormQKV(tensors([("x", [B, S, H]), ("w", [H, 768]), ("g", [1, H])]),
                   tensors([("qkv", [B, S, 896])], "output"), num_q_heads=10, num_kv_heads=2, d_head=64)
    with pytest.raises(CodegenError, match="attr 'num_kv_heads' is 3; expected a divisor of num_q_heads"):
        ir.NormQKV(tensors([("x", [B, S, H]), ("w", [H, 896]), ("g", [1, H])]),
                   tensors([("qkv", [B, S, 896])], "output"), num_q_heads=8, num_kv_heads=3, d_head=64)
    with pytest.raises(CodegenError, match="NormQKV: attr 'num_q_heads' is 0; expected an int >= 1"):
        _qkv("BSD", [B, S, 768]).__class__(tensors([]), tensors([]), num_q_heads=0, num_kv_heads=1, d_head=1)


def test_rmsnorm_quant_row_output_carries_the_scale_bytes():
    srcs = tensors([("x", [B, S, H]), ("g", [1, H])])
    q = ir.RMSNormQuantKernel(srcs, tensors([("q", [B, S, H + 4])], "output", "float8e4"))
    assert q.quantization_type is ir.QuantizationType.ROW
    with pytest.raises(CodegenError, match=r"does not match out \[B, S, H\+4\]"):
        ir.RMSNormQuantKernel(srcs, tensors([("q", [B, S, H])], "output"))
    static = srcs + tensors([("s", [128, 1])], dtype="float32")
    ir.RMSNormQuantKernel(static, tensors([("q", [B, S, H])], "output"), quantization_type="STATIC")
    with pytest.raises(CodegenError, match="attr 'quantization_type' is 'MX'; expected a QuantizationType: one of ROW, STATIC"):
        ir.RMSNormQuantKernel(static, tensors([("q", [B, S, H])], "output"), quantization_type="MX")


def _attention_operands(bh=8, d=64, sq=128, sk=256):
    return (tensors([("q", [bh, d, sq]), ("k", [bh, d, sk]), ("v", [bh, sk, d])]),
            tensors([("o", [bh, d, sq])], "output"))


def test_attention_rosters():
    a = ir.AttentionMMSoftmaxMM(*_attention_operands(), is_causal=True)
    assert a.scale == 1.0
    srcs, dsts = _attention_operands()
    srcs[2] = tensors([("v", [8, 128, 64])])[0]
    with pytest.raises(CodegenError, match=r"srcs\[2\] 'v': access shape \[8, 128, 64\] does not match v \[BKV, Sk, d\] "
                                           r"\(d = 64 from srcs\[0\] 'q', BKV = 8 from srcs\[1\] 'k', Sk = 256 from srcs\[1\] 'k'\)"):
        ir.AttentionMMSoftmaxMM(srcs, dsts, is_causal=False)
    full = [("q", [8, 64, 128]), ("k", [8, 64, 128]), ("v", [8, 64, 128]), ("o", [8, 64, 128]), ("dy", [8, 64, 128]),
            ("lse", [8, 128])]
    bwd = ir.BackwardsAttention(tensors(full), tensors([("dq", [8, 64, 128]), ("dk", [8, 64, 128]),
                                                        ("dv", [8, 64, 128])], "output"), is_causal=True, scale=0.125)
    assert bwd.is_causal and bwd.scale == 0.125


def test_generic_kernel_attrs_become_bir_string_pairs_in_order():
    k = ir.BIRKernel("RouterTopK", tensors([("logits", [128, 64])]), tensors([("idx", [128, 2])], "output"),
                     kernel_attrs={"k": 2, "normalize": True, "eps": 1e-6, "act": ir.ActFnType.GELU,
                                   "tiles": [128, 512], "mode": "softmax"})
    assert k.kernel_attrs == (("k", "2"), ("normalize", "true"), ("eps", "1e-06"), ("act", "1"),
                              ("tiles", "[128, 512]"), ("mode", "softmax"))
    assert ir.BIRKernel("X", [], tensors([("o", [1])], "output"), kernel_attrs=[("b", "1"), ("a", "2")]).kernel_attrs \
        == (("b", "1"), ("a", "2"))


@pytest.mark.parametrize("kernel_attrs, fragment", [
    ({"k": None}, r"\[k\]': None \(NoneType\) has no BIR attr string form"),
    ({"k": math.inf}, r"\[k\]': inf is not finite"),
    ([("k", "1"), ("k", "2")], "has key 'k' twice"),
    ([("k",)], r"entry \('k',\); expected a \(key, value\) pair"),
    ({"": 1}, "key ''; expected a non-empty str"),
    ("k=1", "expected a dict or"),
])
def test_generic_kernel_attrs_reject_what_bir_cannot_hold(kernel_attrs, fragment):
    with pytest.raises(CodegenError, match=r"^BIRKernel 'g': attr 'kernel_attrs.*" + fragment):
        ir.BIRKernel("ExpertMLPs", [], tensors([("o", [4])], "output"), kernel_attrs=kernel_attrs, name="g")


def test_generic_kernel_needs_a_name_and_an_output():
    with pytest.raises(CodegenError, match="attr 'kernel_name' is ''; expected a non-empty str"):
        ir.BIRKernel("", [], tensors([("o", [4])], "output"))
    with pytest.raises(CodegenError, match="dsts: no operands; expected at least one output"):
        ir.BIRKernel("RowTiledMM", tensors([("a", [4])]), [])


def test_internal_kernel_exposes_what_the_registry_reads():
    k = ir.InternalNativeNkiKernel("tiled_pf_transpose", tensors([("x", [128, 256])]),
                                   tensors([("y", [256, 128])], "output"), attrs={"dtype": "bf16", "tile": [32, 32]})
    d = k.get_attrs_dict()
    assert d == {"dtype": "bf16", "tile": [32, 32]}
    d["out_shape"] = [1]
    assert "out_shape" not in k.get_attrs_dict()
    assert [r.access_shape for r in k.results] == [(256, 128)] and k.dsts_shapes == [[256, 128]]
    with pytest.raises(CodegenError, match="attr 'scale' is None; expected a str, bool, int, finite float"):
        ir.InternalNativeNkiKernel("blockwise_mm", [], tensors([("y", [4])], "output"), attrs={"scale": None})
    with pytest.raises(CodegenError, match="attr 'func_name' is 3; expected a non-empty str"):
        ir.InternalNativeNkiKernel(3, [], tensors([("y", [4])], "output"))


def test_external_kernel_needs_a_callable_kernel():
    with pytest.raises(CodegenError, match="ExternalNativeNkiKernel: attr 'kernel' is 'add'; expected an @nki.jit kernel"):
        ir.ExternalNativeNkiKernel("add", tensors([("a", [4])]), tensors([("o", [4])], "output"))


@pytest.mark.parametrize("dialect", ["nki", "nki06"])
def test_external_kernel_refuses_a_kernel_bound_to_a_launch_grid(dialect):
    """An IT55 node carries a one-core kernel: kernel[nl.nc(2)] (NKI 0.6: kernel[2]) is refused
    by name, not with an AttributeError from deep inside."""
    import importlib

    nki = importlib.import_module(f"neuronxsim.{dialect}")

    def twice(x):
        return x

    kernel = nki.jit(twice)
    launched = kernel[importlib.import_module("neuronxsim.nki.language").nc(2)] if dialect == "nki" else kernel[2]
    with pytest.raises(CodegenError, match=r"ExternalNativeNkiKernel 'k': attr 'kernel' is .*, a kernel bound to a "
                                           r"launch grid; an ExternalNativeNkiKernel calls a one-core kernel once"):
        ir.ExternalNativeNkiKernel(launched, tensors([("x", [4, 8])]), tensors([("y", [4, 8])], "output"), name="k")


@pytest.mark.parametrize("family, fused, norm", [
    ("mlp", True, "NO_NORM"),     # NO_NORM is MLP's default norm_type: set, it still says "no norm"
    ("qkv", False, "RMS_NORM"),   # RMS_NORM is QKV's default norm_type
    ("mlp", False, "LAYER_NORM"),
])
def test_norm_attrs_that_contradict_each_other_are_refused(family, fused, norm):
    """fused_rmsnorm and norm_type both set must agree on whether there is a norm; the leaf took
    an explicit default norm_type for an unset one and applied the other attr."""
    build = (lambda **a: mlp(**a)) if family == "mlp" else (lambda **a: _qkv("BSD", [B, S, 768], **a))
    with pytest.raises(CodegenError, match=rf"attrs fused_rmsnorm={fused} and norm_type={norm} contradict each "
                                           r"other \(fused_rmsnorm=True asks for a norm, False for none\)"):
        build(fused_rmsnorm=fused, norm_type=norm)
    # Either alone (the other left unset) is the family's usual meaning.
    build(fused_rmsnorm=fused)
    build(norm_type=norm)


def test_a_norm_attr_set_after_construction_counts_as_set():
    m = mlp(fused_rmsnorm=True)
    m.norm_type = ir.NormType.NO_NORM
    with pytest.raises(CodegenError, match="contradict each other"):
        m.validate()


def test_unset_norm_attrs_stay_unset_through_json():
    p = ir.Program("p")
    for name, shape in MLP_SRCS:
        p.tensor(name, shape, "bfloat16")
    p.tensor("out", [B, S, H], "bfloat16", kind="output")
    p.add(ir.MLPKernel([F(p.tensors[n]) for n, _ in MLP_SRCS], [F(p.tensors["out"])], fused_rmsnorm=True))
    assert "norm_type" not in p.to_json()["insts"][0]["attrs"]
    (m,) = ir.Program.loads(p.dumps()).insts
    assert m.is_set("fused_rmsnorm") and not m.is_set("norm_type") and m.norm_type is ir.NormType.NO_NORM

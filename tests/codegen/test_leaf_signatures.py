"""Every IT54 leaf declares one signature (C++, beside the leaf), and the Penguin families, the
codegen and the resolver all read it: nothing here restates an operand or an attr, each check
compares a consumer with the signature."""

import itertools

import pytest

from neuronxsim import walrus
from neuronxsim.errors import KernelError
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.ir import enums
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.walrus.inline import bir_kernel_leaves, inline_bir_kernels

SIGNATURES = walrus.leaf_signatures()

#: Each bespoke family and the leaf its codegen names (attention: by is_causal).
FAMILIES = {"mlp": ir.MLPKernel, "qkv": ir.NormQKV, "rmsnorm_quant": ir.RMSNormQuantKernel,
            "attention": ir.AttentionMMSoftmaxMM, "backwards_attention": ir.BackwardsAttention}


def test_every_registered_leaf_has_a_well_formed_signature():
    assert set(SIGNATURES) == set(bir_kernel_leaves())
    for sig in SIGNATURES.values():
        names = [a.name for a in sig.attrs]
        assert len(names) == len(set(names)), sig.name
        assert sig.outs, f"{sig.name}: no outputs"
        for a in sig.attrs:
            assert a.type in ("bool", "int", "float", "enum"), (sig.name, a.name)
            if a.type == "enum":
                assert a.members and set(a.allowed) <= set(a.members), (sig.name, a.name)
                assert a.default is None or 0 <= a.default < len(a.members), (sig.name, a.name)
            assert not (a.from_codegen and a.only_when_set), (sig.name, a.name)
        for side in (sig.ins, sig.outs):
            assert sum(1 for op in side if op.max_count) <= 1, f"{sig.name}: two variadic operands on one side"
            assert all(not op.optional for op in side[:-1]), f"{sig.name}: an optional operand that is not last"
            for op in side:
                assert op.dims, (sig.name, op.role)
                for condition in op.when:
                    name, eq, member = condition.lstrip("!").partition("=")
                    a = sig.attr(name)
                    assert (a.type == "enum" and member in a.members) if eq else a.type == "bool", (sig.name, condition)


def test_enum_attrs_name_the_python_enums_members_in_value_order():
    checked = 0
    for sig in SIGNATURES.values():
        for a in sig.attrs:
            kind = getattr(enums, a.enum_type, None) if a.type == "enum" else None
            if kind is not None:
                assert [m.name for m in kind] == list(a.members), (sig.name, a.name)
                assert [m.value for m in kind] == list(range(len(a.members))), (sig.name, a.name)
                checked += 1
    assert checked >= 6


def test_the_causal_and_plain_attention_leaves_differ_only_in_is_causals_default():
    causal, plain = SIGNATURES["CausalAttentionMMSoftmaxMMWithoutSwap"], SIGNATURES["AttentionMMSoftmaxMMWithoutSwap"]
    assert (causal.ins, causal.outs) == (plain.ins, plain.outs)
    assert [a.name for a in causal.attrs] == [a.name for a in plain.attrs]
    assert (causal.attr("is_causal").default, plain.attr("is_causal").default) == (True, False)


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_takes_its_leafs_attrs_with_their_types_and_defaults(family):
    cls = FAMILIES[family]
    sig = SIGNATURES[cls.KERNEL_NAME]
    family_only = {"residual_adds"} if cls is ir.NormQKV else set()
    specs = {s.name: s for s in cls.ATTRS}
    assert set(specs) - family_only == {a.name for a in sig.attrs if not a.from_codegen}
    for a in sig.attrs:
        if a.from_codegen:
            continue
        spec = specs[a.name]
        assert spec.type.__name__ == (a.enum_type if a.type == "enum" else a.type), a.name
        if not spec.required:
            assert spec.default == a.default, a.name
        assert spec.minimum == a.minimum, a.name
        assert [m.name for m in spec.choices or ()] == list(a.allowed), a.name


@pytest.mark.parametrize("family", FAMILIES)
def test_the_codegen_emits_the_signatures_attrs_in_its_order(build, family):
    _, (node,) = build.lower(build.family_program(family))
    sig = SIGNATURES[node.kernel_name]
    keys = [k for k, _ in node.kernel_attrs]
    emitted = [a.name for a in sig.attrs if a.name in keys]
    assert keys == emitted, "kernel_attrs out of the signature's order, or an attr the signature does not declare"
    assert {a.name for a in sig.attrs if not a.only_when_set} <= set(keys)


#: The attrs that gate operands, per family, and the values each takes in the sweep below.
GATES = {
    "mlp": {"store_add": (False, True), "skip_gate": (False, True), "gate_bias": (False, True),
            "up_bias": (False, True), "down_bias": (False, True)},
    "qkv": {"bias": (False, True), "residual_adds": (0, 1, 2), "output_layout": ("BSD", "NBSd", "NBdS")},
    "rmsnorm_quant": {"quantization_type": ("ROW", "STATIC")},
}
FIXED = {"qkv": {"num_q_heads": 2, "num_kv_heads": 1, "d_head": 4}}
SYMBOLS = {"B": 1, "S": 4, "H": 8, "I": 16, "N": 4, "d": 4}  # QKV: I = (2 + 2 * 1) * 4, N = 4 heads of d = 4


def macro_from_its_roster(cls, attrs):
    """A macro of ``cls`` over tensors shaped by its own (signature-derived) roster."""
    p = ir.Program()
    probe = object.__new__(cls)
    probe.name = None
    for spec in cls.ATTRS:
        setattr(probe, spec.name, spec.coerce(attrs[spec.name], cls.__name__) if spec.name in attrs else spec.default)
    srcs, dsts = probe.operand_roster()
    dim = lambda d: d if isinstance(d, int) else SYMBOLS[d[0]] + d[1] if isinstance(d, tuple) else SYMBOLS[d]  # noqa: E731
    fp8 = cls is ir.RMSNormQuantKernel
    make = lambda op, kind: ir.FullTensorAccess(p.tensor(f"{kind}_{op.name}", [dim(d) for d in op.dims],  # noqa: E731
                                                         "float8e4" if fp8 and kind == "output" else "float32", kind))
    p.add(cls([make(op, "input") for op in srcs], [make(op, "output") for op in dsts], **attrs))
    return p, [op.name for op in srcs], [op.name for op in dsts]


@pytest.mark.parametrize("family", GATES)
def test_every_roster_a_family_derives_is_the_one_its_leaf_binds(family):
    """For every combination of the gating attrs, the macro built on its family's roster lowers and
    the resolver binds and expands it (the C++ binding agrees with the Python one, role by role: a
    shifted operand would fail the leaf's shape checks or the count)."""
    cls = FAMILIES[family]
    names, choices = zip(*GATES[family].items())
    for values in itertools.product(*choices):
        attrs = {**FIXED.get(family, {}), **dict(zip(names, values))}
        if attrs.get("skip_gate") and attrs.get("gate_bias"):
            continue
        program, srcs, dsts = macro_from_its_roster(cls, attrs)
        module = BirCodeGenLoop().lower(program)
        node = module.functions[0].blocks[0].instructions[0]
        assert [a.memref for a in node.ins + node.outs] == [f"input_{r}" for r in srcs] + [f"output_{r}" for r in dsts]
        (stats,) = inline_bir_kernels(module)
        assert stats["kernel_name"] == cls.KERNEL_NAME, attrs


def test_gate_bias_reaches_the_mlp_leaf_as_an_attr(build):
    """The seed's MLP roster has no gate_bias; it is emitted (after act_fn) only when set, so the
    seed's list stays exactly as it is for every MLP without a gate bias."""
    p = ir.Program()
    B, S, H, I = 1, 8, 64, 128
    t = lambda n, s, kind="input": ir.FullTensorAccess(p.tensor(n, s, "float32", kind))  # noqa: E731
    srcs = [t("hidden", [B, S, H]), t("ln_w", [1, H]), t("gate_w", [H, I]), t("up_w", [H, I]), t("down_w", [I, H]),
            t("gate_b", [1, I])]
    p.add(ir.MLPKernel(srcs, [t("out", [B, S, H], "output")], gate_bias=True))
    _, (node,) = build.lower(p)
    keys = [k for k, _ in node.kernel_attrs]
    assert dict(node.kernel_attrs)["gate_bias"] == "true" and keys.index("gate_bias") == keys.index("act_fn") + 1
    _, (plain,) = build.lower(build.family_program("mlp"))
    assert "gate_bias" not in dict(plain.kernel_attrs)


def test_an_unknown_leaf_has_no_signature():
    with pytest.raises(KernelError, match=r"no IT54 leaf 'Fancy'; known: .*MLP"):
        walrus.leaf_signature("Fancy")

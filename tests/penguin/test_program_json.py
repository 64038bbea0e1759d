"""Programs: building, checking, and the JSON round trip of every macro and access kind."""

import json

import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir

F = ir.FullTensorAccess


@nki.jit
def user_add_kernel(a, b):
    """A user kernel: the program keeps a reference to it and compiles it when the macro is added."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for h in nl.affine_range(a.shape[0]):
        nl.store(out[h], nl.load(a[h]) + nl.load(b[h]))
    return out


def every_kind_program():
    p = ir.Program("every_kind")
    x = p.tensor("x", [1, 8, 256], "bfloat16")
    g = p.tensor("ln_w", [1, 256], "bfloat16")
    wg, wu = p.tensor("gate_w", [256, 512], "bfloat16"), p.tensor("up_w", [256, 512], "bfloat16")
    wd = p.tensor("down_w", [512, 256], "bfloat16")
    h = p.tensor("h", [1, 8, 256], "bfloat16", "internal")
    out = p.tensor("out", [1, 8, 256], "bfloat16", "output")
    q, k, v = (p.tensor(n, [4, 64, 128], "float32") for n in "qkv")
    att = p.tensor("att", [4, 64, 128], "float32", "output")
    p.add(ir.MLPKernel([F(x), F(g), F(wg), F(wu), F(wd)], [F(h)], name="mlp", fused_rmsnorm=True,
                       norm_type=ir.NormType.RMS_NORM, act_fn="GELU", eps=1e-5))
    p.add(ir.BIRKernel("RowTiledMM",
                       [ir.NDimSubTensorAccess(h, [0, 0, 0], [1, 8, 128], partition_dim=1, steps=[1, 1, 2]),
                        ir.OpaqueAccess(wu)],
                       [ir.TileAccess(out, ir.MemrefTile([8, 128], [0, 1]), partition_dim=0, view_shape=[8, 256])],
                       kernel_attrs={"tile_k": 128, "transpose": False}))
    p.add(ir.AttentionMMSoftmaxMM([F(q), F(k), ir.TileAccess(v, ir.MemrefTile([4, 128, 64], [0, 0, 0]),
                                                             view_shape=[4, 128, 64])],
                                  [F(att)], is_causal=True, scale=0.125))
    p.add(ir.ExternalNativeNkiKernel(user_add_kernel, [F(q), F(k)], [F(att)], name="user"))
    p.add(ir.InternalNativeNkiKernel("tiled_dve_transpose_10", [F(q)], [F(att)], attrs={"axes": [1, 0]}))
    return p


def test_a_program_round_trips_through_json(tmp_path):
    p = every_kind_program()
    text = p.dumps()
    again = ir.Program.loads(text)
    assert again.dumps() == text
    assert [type(i) for i in again.insts] == [type(i) for i in p.insts]
    assert again.insts[3].kernel is user_add_kernel
    assert again.insts[1].kernel_attrs == (("tile_k", "128"), ("transpose", "false"))
    j = json.loads(text)
    assert j["insts"][0]["attrs"]["norm_type"] == "RMS_NORM" and j["insts"][0]["attrs"]["act_fn"] == "GELU"
    assert j["insts"][1]["dsts"][0] == {"access": "TileAccess", "tensor": "out",
                                        "tile": {"shape": [8, 128], "index": [0, 1]}, "partition_dim": 0,
                                        "view_shape": [8, 256]}
    path = tmp_path / "prog.json"
    p.save(path)
    assert ir.Program.load(path).dumps() == text


def test_a_kernel_defined_in_a_function_cannot_be_saved():
    def local_kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a))
        return out

    p = ir.Program()
    a, o = p.tensor("a", [4, 8]), p.tensor("o", [4, 8], kind="output")
    p.add(ir.ExternalNativeNkiKernel(local_kernel, [F(a)], [F(o)], name="loc"))
    with pytest.raises(CodegenError, match="ExternalNativeNkiKernel 'loc': kernel '.*local_kernel': not importable"):
        p.dumps()


def _mutated(path, value):
    j = every_kind_program().to_json()
    node = j
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(j)


@pytest.mark.parametrize("path, value, message", [
    (("version",), 2, "version: 2; this build reads version 1"),
    (("format",), "bir", "not a Penguin program"),
    (("tensors", 0, "dtype"), "bf16", "tensors[0]: Tensor 'x' dtype: expected a BIR dtype name"),
    (("tensors", 1, "name"), "x", "tensors[1]: Program 'every_kind': tensor 'x' is added twice"),
    (("insts", 0, "op"), "MLP", "insts[0].op: 'MLP'; expected one of MLPKernel, NormQKV"),
    (("insts", 0, "srcs", 1, "tensor"), "nope", "insts[0].srcs[1].tensor: 'nope' is not a tensor of the program"),
    (("insts", 0, "srcs", 1, "access"), "Full", "insts[0].srcs[1].access: expected one of FullTensorAccess"),
    (("insts", 1, "srcs", 0, "offsets"), [0, 0, 200], "insts[1].srcs[0]: NDimSubTensorAccess of 'h': the last element"),
    (("insts", 1, "srcs", 0, "stride"), [1], "insts[1].srcs[0]: NDimSubTensorAccess fields:"),
    (("insts", 1, "dsts", 0, "tile"), {"shape": [8], "index": [0]}, "insts[1].dsts[0]: TileAccess of 'out' tile: shape [8] has rank 1"),
    (("insts", 0, "attrs", "norm_type"), "RMS", "insts[0]: MLPKernel 'mlp': attr 'norm_type' is 'RMS'; expected a NormType"),
    (("insts", 0, "attrs", "skip_gamma"), True, "insts[0]: MLPKernel 'mlp': unknown attr 'skip_gamma'"),
    (("insts", 2, "attrs"), {}, "insts[2]: AttentionMMSoftmaxMM: attr 'is_causal' is missing; expected a bool"),
    (("insts", 3, "attrs", "kernel"), "no_such_module:f", "insts[3].attrs.kernel: cannot import 'no_such_module:f'"),
    (("insts", 4, "attrs", "attrs"), {"x": None}, "insts[4]: InternalNativeNkiKernel: attr 'x' is None"),
])
def test_bad_json_names_the_path_and_the_expected_form(path, value, message):
    with pytest.raises(CodegenError) as e:
        ir.Program.loads(_mutated(path, value))
    assert str(e.value).startswith(message), str(e.value)


def test_not_json_and_a_foreign_tensor():
    with pytest.raises(CodegenError, match="not JSON"):
        ir.Program.loads("{")
    p = ir.Program("p")
    p.tensor("o", [4], kind="output")
    foreign = ir.Tensor("a", [4])
    with pytest.raises(CodegenError, match=r"insts\[0\] BIRKernel srcs\[0\]: tensor 'a' is not a tensor of program 'p'"):
        p.add(ir.BIRKernel("ExpertMLPs", [F(foreign)], [F(p.tensors["o"])]))


def test_the_package_example_runs():
    import doctest

    result = doctest.testmod(ir)
    assert result.attempted > 0 and result.failed == 0


def test_a_shape_whose_size_overflows_is_refused():
    # (found by scripts/fuzz.sh: each dim fitted 64 bits, their product did not, and compiling a
    # user kernel's proxies raised numpy's ValueError instead of a refusal)
    with pytest.raises(CodegenError, match=r"tensors\[0\]: Tensor 'x' shape: \[130, 3333333333333333332\]: "
                                           r"the tensor's size overflows"):
        ir.Program.loads(_mutated(("tensors", 0, "shape"), [130, 3333333333333333332]))
    with pytest.raises(CodegenError, match="the tensor's size overflows"):
        ir.Tensor("t", [2**32, 2**31])

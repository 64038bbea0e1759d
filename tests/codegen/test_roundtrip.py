"""A lowered program round-trips through BIR JSON: every kernel node, attr, shape and operand
flavour survives, and the module passes the verifier."""

import json

from neuronxsim import bir
from neuronxsim.bir import AccessFlavour
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop

F = ir.FullTensorAccess


def layer_program():
    """A decoder-layer-like program touching every IT54 family, the generic path, every access
    kind, a tiled twin and a user kernel."""
    p = ir.Program("layer")
    B, S, H, I, nq, nkv, d = 1, 64, 256, 512, 4, 2, 64
    t = lambda n, s, kind="input", dt="bfloat16": p.tensor(n, s, dt, kind)  # noqa: E731
    x, g = t("x", [B, S, H]), t("norm_w", [1, H])
    wqkv = t("wqkv", [H, (nq + 2 * nkv) * d])
    qkv = t("qkv", [nq + 2 * nkv, B, S, d], "internal")
    p.add(ir.NormQKV([F(x), F(wqkv), F(g)], [F(qkv)], num_q_heads=nq, num_kv_heads=nkv, d_head=d,
                     output_layout="NBSd", name="qkv"))
    q, k, v = t("q", [nq, d, S], dt="float32"), t("k", [nq, d, S], dt="float32"), t("v", [nq, S, d], dt="float32")
    att = t("att", [nq, d, S], "internal", "float32")
    p.add(ir.AttentionMMSoftmaxMM([F(q), ir.NDimSubTensorAccess(k, [0, 0, 0], [nq, d, S], partition_dim=1),
                                   ir.OpaqueAccess(v)], [F(att)], is_causal=True, scale=0.125, name="attn"))
    h = t("h", [B, S, H], "internal")
    p.add(ir.BIRKernel("ColumnTiledMM", [ir.TileAccess(att, ir.MemrefTile([nq, d, S], [0, 0, 0])), F(x)], [F(h)],
                       kernel_attrs={"n_tile": 512, "accumulate": True}, name="o_proj"))
    ws = [t("ln_w", [1, H]), t("gate_w", [H, I]), t("up_w", [H, I]), t("down_w", [I, H])]
    out = t("out", [B, S, H], "output")
    tile = lambda a: ir.TileAccess(a, ir.MemrefTile(a.shape, [0] * len(a.shape)))  # noqa: E731
    p.add(ir.MLPKernel([tile(h)] + [tile(w) for w in ws], [tile(out)], fused_rmsnorm=True, norm_type="RMS_NORM",
                       name="mlp"))
    quant = t("quant", [B, S, H + 4], "output", "float8e4")
    p.add(ir.RMSNormQuantKernel([F(out), F(ws[0])], [F(quant)], name="quant"))
    return p


def test_a_lowered_program_round_trips_through_bir_json(tmp_path):
    cg = BirCodeGenLoop()
    module = cg.lower(layer_program())
    text = module.to_json()
    again = bir.Module.from_json(text, verify=True)
    assert again.to_json() == text
    nodes = {n.name: n for n in again.functions[0].blocks[0].instructions}
    assert list(nodes) == ["qkv", "attn", "o_proj", "mlp", "quant"]
    assert all(n.opcode == 54 for n in nodes.values())
    assert (nodes["qkv"].kernel_name, nodes["qkv"].output_layout) == ("QKV", 1)
    assert dict(nodes["qkv"].kernel_attrs)["useTkgQKVKernel"] == "true"
    assert nodes["qkv"].dsts_shape == [[8, 1, 64, 64]]
    assert [a.flavour for a in nodes["attn"].ins] == [AccessFlavour.Seq, AccessFlavour.AP, AccessFlavour.Opaque]
    assert nodes["attn"].ins[1].partition_dim == 1
    assert nodes["o_proj"].kernel_attrs == [("n_tile", "512"), ("accumulate", "true")]
    assert {a.flavour for a in nodes["mlp"].ins + nodes["mlp"].outs} == {AccessFlavour.AP}
    assert (nodes["mlp"].fused_rmsnorm, nodes["mlp"].norm_type, nodes["mlp"].is_tkg) == (True, 1, True)
    assert nodes["quant"].dsts_shape == [[1, 64, 260]]
    # The saved file is the same module.
    cg.save(tmp_path / "layer.json")
    assert bir.load(tmp_path / "layer.json").to_json() == text
    tensors = {a["memorylocations"][0]["name"]: (a["kind"], a["memorylocations"][0]["type"])
               for a in json.loads(text)["functions"][0]["allocations"]}
    assert tensors["x"] == ("ExternalInput", "Input") and tensors["out"] == ("ExternalOutput", "Output")
    assert tensors["h"] == ("Internal", "DRAM")

"""The InlineBIRKernel pass: every IT54 node expanded in place into engine-assigned ISA code, all or
nothing; operands addressed through their access patterns; errors that name the node, the kernel
and what is wrong."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim import bir  # noqa: E402
from neuronxsim.bir import DType, Engine, InstructionType, MemoryType  # noqa: E402
from neuronxsim.errors import KernelError  # noqa: E402
from neuronxsim.starfish.penguin import ir  # noqa: E402
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop  # noqa: E402
from neuronxsim.walrus.inline import bir_kernel_leaves, inline_bir_kernels  # noqa: E402

LEAVES = {"MLP", "QKV", "QuantOnly", "CausalAttentionMMSoftmaxMMWithoutSwap", "AttentionMMSoftmaxMMWithoutSwap",
          "BackwardsAttention", "AttentionTkgFwd", "RouterTopK", "ExpertMLPs", "RowTiledMM", "ColumnTiledMM",
          "CaymanPackedPETranspose"}


def test_every_leaf_is_registered_by_the_name_the_codegen_emits():
    leaves = bir_kernel_leaves()
    assert set(leaves) == LEAVES
    assert all(isinstance(summary, str) and summary for summary in leaves.values())


def two_kernel_program():
    """A RowTiledMM feeding a CaymanPackedPETranspose through an internal DRAM tensor, then an
    IT55 node the pass must leave alone."""
    p = ir.Program()
    a, b = p.tensor("a", [64, 96]), p.tensor("b", [96, 80])
    mid = p.tensor("mid", [64, 80], kind="internal")
    out = p.tensor("out", [80, 64], kind="output")
    p.add(ir.BIRKernel("RowTiledMM", [kit.F(a), kit.F(b)], [kit.F(mid)], name="mm0"))
    p.add(ir.BIRKernel("CaymanPackedPETranspose", [kit.F(mid)], [kit.F(out)], name="tp0"))
    return p


def test_the_pass_expands_every_node_in_place_with_engines_sources_and_kernels():
    module = BirCodeGenLoop(auto_cast="none").lower(two_kernel_program())
    block = module.functions[0].blocks[0]
    user = block.addInstruction(InstructionType.NKIKernel, "user0")
    user.set_func("user_kernel")
    stats = inline_bir_kernels(module)
    assert [s["node"] for s in stats] == ["mm0", "tp0"]
    assert [s["kernel_name"] for s in stats] == ["RowTiledMM", "CaymanPackedPETranspose"]
    insts = block.instructions
    assert sum(s["instructions"] for s in stats) + 1 == len(insts)
    assert [i.name for i in insts if i.opcode == InstructionType.BIRKernel] == []
    assert insts[-1].name == "user0" and insts[-1].opcode == InstructionType.NKIKernel  # IT55: not this pass's
    mm = [i for i in insts if i.kernel == "mm0"]
    tp = [i for i in insts if i.kernel == "tp0"]
    assert len(mm) + len(tp) == len(insts) - 1 and insts.index(tp[0]) > insts.index(mm[-1])  # program order kept
    for i in insts[:-1]:
        assert i.engine != Engine.Unassigned, i.name
        assert i.source.startswith("RowTiledMM" if i.kernel == "mm0" else "CaymanPackedPETranspose"), i.source
        if i.opcode == InstructionType.Matmult:
            assert i.engine == Engine.PE
        if i.node_class == "InstDMA":
            assert i.engine in (Engine.SP, Engine.Pool) and 0 <= i.queue < 16
    module.verify()


def test_it54_and_it55_nodes_are_resolved_by_their_own_passes():
    """RowTiledMM (IT54) computes mid = a @ w; a user kernel (IT55, out = a + b) adds y to it.
    InlineBIRKernel expands the IT54 node only (seed 000: it scans IT54 nodes); the IT55 resolver
    splices the user kernel (one pass per node kind)."""
    from neuronxsim import walrus
    from walrus_kernels import add_kernel, compiled

    m = bir.Module()
    f = m.addFunction()
    t = {n: f.createDramTensor(n, k, DType.float32, s) for n, k, s in (
        ("x", MemoryType.Input, [128, 256]), ("w", MemoryType.Input, [256, 512]), ("y", MemoryType.Input, [128, 512]),
        ("mid", MemoryType.DRAM, [128, 512]), ("z", MemoryType.Output, [128, 512]))}
    block = f.addBlock()
    mm = block.addInstruction(InstructionType.BIRKernel, "mm0")
    mm.set_kernel_name("RowTiledMM")
    mm.set_auto_cast("none")
    for name, out in (("x", False), ("w", False), ("mid", True)):
        mm.addSeqAccess(t[name], out)
    user = block.addInstruction(InstructionType.NKIKernel, "add0")
    for name, out in (("mid", False), ("y", False), ("z", True)):
        user.addSeqAccess(t[name], out)
    user.func_args, user.func_outs = ["a", "b"], ["out"]
    user.func = compiled(add_kernel())
    stats = inline_bir_kernels(m)
    assert [s["node"] for s in stats] == ["mm0"]
    assert [i.name for i in block.instructions if i.opcode == InstructionType.NKIKernel] == ["add0"]
    m = walrus.resolve_nki_kernels(m)
    insts = m.functions[0].blocks[0].instructions
    assert {i.kernel for i in insts} == {"mm0", "add0"}
    assert not any(i.opcode in (InstructionType.BIRKernel, InstructionType.NKIKernel) for i in insts)
    rng = np.random.default_rng(3)
    x, w, y = (rng.standard_normal(s).astype(np.float32) for s in ([128, 256], [256, 512], [128, 512]))
    kit.assert_close(kit.execute(m, {"x": x, "w": w, "y": y})["z"], x @ w + y, 1e-5, 1e-4, "mm + user kernel")


def test_two_expanded_kernels_compute_through_an_internal_tensor():
    module, _ = kit.lower_and_inline(two_kernel_program())
    a = np.random.default_rng(0).standard_normal((64, 96)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((96, 80)).astype(np.float32)
    out = kit.execute(module, {"a": a, "b": b})["out"]
    kit.assert_close(out, (a @ b).T, 1e-5, 1e-5, "mm then transpose")


def test_dma_queues_are_spread_over_all_sixteen():
    p = ir.Program()
    a, b = p.tensor("a", [1024, 256]), p.tensor("b", [256, 1024])
    p.add(ir.BIRKernel("RowTiledMM", [kit.F(a), kit.F(b)], [kit.F(p.tensor("o", [1024, 1024], kind="output"))]))
    module, _ = kit.lower_and_inline(p)
    queues = {i.queue for i in module.functions[0].blocks[0].instructions if i.node_class == "InstDMA"}
    assert queues == set(range(16))


def test_an_unknown_kernel_is_refused_naming_the_known_ones_and_nothing_changes():
    p = two_kernel_program()
    p.add(ir.BIRKernel("FancyKernel", [kit.F(p.tensors["a"])], [kit.F(p.tensor("z", [64, 96], kind="output"))],
                       name="fancy"))
    module = BirCodeGenLoop().lower(p)
    before = module.to_json()
    with pytest.raises(KernelError) as e:
        inline_bir_kernels(module)
    msg = str(e.value)
    assert msg.startswith("functions[0].blocks[0].instructions[2] InstBIRKernel 'fancy' (kernel 'FancyKernel'): "
                          "unknown kernel_name 'FancyKernel'; known: ")
    assert all(name in msg for name in LEAVES)
    assert module.to_json() == before  # mm0 and tp0 were expandable, but nothing was committed


def test_an_expansion_past_the_instruction_cap_is_refused_before_it_is_made(monkeypatch):
    """The cap (max_instructions, else $NEURONXSIM_MAX_INSTRUCTIONS, else the tracer's default)
    stops a node's expansion at the first instruction past it: one line naming the node, and
    nothing changes. Exactly the expansion's own size passes."""
    module = BirCodeGenLoop().lower(two_kernel_program())
    before = module.to_json()
    sizes = [s["instructions"] for s in inline_bir_kernels(BirCodeGenLoop().lower(two_kernel_program()))]
    with pytest.raises(KernelError) as e:
        inline_bir_kernels(module, max_instructions=sizes[0] - 1)
    assert str(e.value) == (f"functions[0].blocks[0].instructions[0] InstBIRKernel 'mm0' (kernel 'RowTiledMM'): its "
                            f"expansion has more than {sizes[0] - 1} instructions, the cap on one kernel node's "
                            "expansion (raise it with NEURONXSIM_MAX_INSTRUCTIONS or --max-instructions, or use "
                            "smaller shapes)")
    assert module.to_json() == before
    monkeypatch.setenv("NEURONXSIM_MAX_INSTRUCTIONS", str(max(sizes) - 1))
    with pytest.raises(KernelError, match="more than"):
        inline_bir_kernels(module)
    monkeypatch.setenv("NEURONXSIM_MAX_INSTRUCTIONS", "many")
    with pytest.raises(KernelError, match="NEURONXSIM_MAX_INSTRUCTIONS='many'"):
        inline_bir_kernels(module)
    assert module.to_json() == before
    assert [s["instructions"] for s in inline_bir_kernels(module, max_instructions=max(sizes))] == sizes


def generic_module(kernel_name, ins, outs, attrs=(), **fields):
    """One IT54 node over fresh fp32 DRAM tensors ([name, shape] pairs), built with the bir API."""
    m = bir.Module()
    f = m.addFunction()
    node = f.addBlock().addInstruction(InstructionType.BIRKernel, "node0")
    node.set_kernel_name(kernel_name)
    node.set_kernel_attrs(list(attrs))
    for names, is_out in ((ins, False), (outs, True)):
        for name, shape in names:
            t = f.createDramTensor(name, MemoryType.Output if is_out else MemoryType.Input, DType.float32, shape)
            node.addSeqAccess(t, is_out)
    for key, value in fields.items():
        getattr(node, "set_" + key)(value)
    return m


@pytest.mark.parametrize("kernel, ins, outs, attrs, fields, message", [
    ("RowTiledMM", [("a", [4, 8]), ("b", [9, 4])], [("o", [4, 4])], [], {},
     r"a is \[4, 8\] but b has 9 rows"),
    ("RowTiledMM", [("a", [4, 8])], [("o", [4, 4])], [], {},
     r"leaf 'RowTiledMM': ins\[1\] 'b' is missing; the node has 1 inputs of a \[M, K\], b \[K, N\], bias"),
    ("RowTiledMM", [("a", [4, 8]), ("b", [8, 4])], [("o", [4, 4])], [("alpha", "2")], {},
     r"unknown attr\(s\) 'alpha' in kernel_attrs"),
    ("MLP", [("h", [1, 4, 8]), ("g", [1, 8]), ("wg", [8, 16]), ("wu", [8, 16]), ("wd", [16, 8])], [("o", [1, 4, 8])],
     [("quant_kernel", "true")], {}, r"quant_kernel: quantized MLPs .* are not implemented by the MLP leaf"),
    ("MLP", [("h", [1, 4, 8]), ("g", [1, 8]), ("wg", [8, 16]), ("wu", [8, 16]), ("wd", [16, 8])], [("o", [1, 4, 8])],
     [("act_fn", "ReLU")], {}, r"attr 'act_fn' is 'ReLU'; expected one of SiLU \(0\), GELU \(1\)"),
    ("MLP", [("h", [1, 4, 8]), ("g", [1, 8]), ("wg", [8, 16]), ("wu", [8, 16]), ("wd", [16, 8])], [("o", [1, 4, 8])],
     [("norm_type", "1")], {"norm_type": 2}, r"attr 'norm_type' is 1 in kernel_attrs but 2 in the node's norm_type field"),
    ("MLP", [("h", [1, 4, 8]), ("g", [1, 8]), ("wg", [8, 16]), ("wu", [8, 16]), ("wd", [16, 8]), ("bg", [1, 16])],
     [("o", [1, 4, 8])], [], {},
     r"leaf 'MLP': the node has 6 inputs; for its attrs the leaf takes 5 of hidden \[B, S, H\], residual "),
    ("MLP", [("h", [1, 4, 8]), ("g", [1, 8]), ("wg", [8, 16]), ("wu", [8, 16]), ("wd", [16, 8])], [("o", [1, 4, 8])],
     [("gate_bias", "true")], {}, r"leaf 'MLP': ins\[5\] 'gate_b' is missing; the node has 5 inputs of "),
    ("MLP", [("h", [1, 4, 8]), ("g", [1, 8]), ("wg", [8, 16]), ("wu", [8, 16]), ("wd", [16, 8])], [("o", [1, 4, 8])],
     [("gate_bais", "true")], {},
     r"leaf 'MLP': unknown attr\(s\) 'gate_bais' in kernel_attrs; its signature declares: fused_rmsnorm, norm_type"),
    ("QKV", [("h", [1, 4, 8]), ("w", [8, 48]), ("g", [1, 8])], [("o", [1, 4, 48])],
     [("num_kv_heads", "1"), ("d_head", "16")], {}, r"leaf 'QKV': attr 'num_q_heads' is missing; its signature requires it"),
    ("CausalAttentionMMSoftmaxMMWithoutSwap", [("q", [2, 16, 8]), ("k", [2, 16, 8]), ("v", [2, 8, 16])],
     [("o", [2, 16, 8])], [("is_causal", "false")], {}, r"is_causal is false but kernel .* is causal"),
    ("AttentionMMSoftmaxMMWithoutSwap", [("q", [3, 16, 8]), ("k", [2, 16, 8]), ("v", [2, 8, 16])],
     [("o", [3, 16, 8])], [], {}, r"k has 2 heads, which do not divide q's 3"),
    ("AttentionMMSoftmaxMMWithoutSwap", [("q", [2, 16, 8]), ("k", [2, 16, 8]), ("v", [2, 8, 16])],
     [("o", [2, 16, 8])], [("scale", "0.1x")], {}, r"attr 'scale' is '0.1x'; expected a finite number"),
    ("RowTiledMM", [("a", [4, 8]), ("b", [8, 4])], [("o", [4, 4])], [], {"srcs_shape": [[4, 8], [8, 5]]},
     r"ins\[1\] addresses \[8, 4\] but srcs_shape\[1\] says \[8, 5\]"),
    ("RowTiledMM", [("a", [4, 8]), ("b", [8, 4])], [("o", [4, 4])], [], {"sb_buf_shape": [128, 200]},
     r"SBUF pool '.*' .* beyond the 200 bytes per partition the node may use"),
    ("RowTiledMM", [("a", [4, 8]), ("b", [8, 4])], [("o", [4, 4])], [], {"psum_buf_shape": [128, 2, 2048]},
     r"PSUM pool 'acc' bank 0 of 6 needs 2048 bytes per partition of PSUM"),
])
def test_attrs_and_shapes_a_leaf_cannot_take_are_kernel_errors(kernel, ins, outs, attrs, fields, message):
    module = generic_module(kernel, ins, outs, attrs, **fields)
    before = module.to_json()
    with pytest.raises(KernelError, match=rf"^functions\[0\]\.blocks\[0\]\.instructions\[0\] InstBIRKernel 'node0' "
                                          rf"\(kernel '{kernel}'\): .*{message}"):
        inline_bir_kernels(module)
    assert module.to_json() == before


def test_operands_are_addressed_through_their_access_patterns(rng=np.random.default_rng(5)):
    """Sub-tensor, strided and tile operands (partition dims other than 0 included): the kernel reads
    and writes exactly the elements the operands name."""
    p = ir.Program()
    big_a = p.tensor("A", [300, 700])
    big_b = p.tensor("B", [2, 300, 520])
    big_o = p.tensor("O", [230, 600], kind="output")
    a = ir.NDimSubTensorAccess(big_a, offsets=[10, 20], access_shape=[200, 300], steps=[1, 2], partition_dim=1)
    b = ir.TileAccess(big_b, ir.MemrefTile([300, 520], [1, 0]), view_shape=[600, 520])
    o = ir.NDimSubTensorAccess(big_o, offsets=[5, 40], access_shape=[200, 520], partition_dim=0)
    p.add(ir.BIRKernel("ColumnTiledMM", [a, b], [o]))
    module, _ = kit.lower_and_inline(p)
    A = rng.standard_normal((300, 700)).astype(np.float32)
    B = rng.standard_normal((2, 300, 520)).astype(np.float32)
    out = kit.execute(module, {"A": A, "B": B})["O"]
    kit.assert_close(out[5:205, 40:560], A[10:210, 20:620:2] @ B[1], 1e-5, 1e-4, "addressed region")
    untouched = np.ones(out.shape, bool)
    untouched[5:205, 40:560] = False
    assert np.all(np.isnan(out[untouched])), "the kernel wrote outside its output operand"


def test_the_expanded_module_round_trips_through_bir_json():
    module, stats = kit.lower_and_inline(two_kernel_program())
    text = module.to_json()
    again = bir.Module.from_json(text)
    assert again.to_json() == text
    assert len(again.functions[0].blocks[0]) == sum(s["instructions"] for s in stats)


def test_gen3_modules_give_the_leaves_the_larger_sbuf():
    p = ir.Program()
    a, b = p.tensor("a", [128, 128]), p.tensor("b", [128, 50000])
    p.add(ir.BIRKernel("RowTiledMM", [kit.F(a), kit.F(b)], [kit.F(p.tensor("o", [128, 50000], kind="output"))]))
    m2, m3 = bir.Module(), bir.Module()
    m3.arch = "gen3"
    stats2 = inline_bir_kernels(BirCodeGenLoop(module=m2).lower(p))
    stats3 = inline_bir_kernels(BirCodeGenLoop(module=m3).lower(p))
    # b (100 KB per partition in bf16: auto-cast) stays resident only when half of SBUF holds it:
    # half of 224 KiB does, half of 192 KiB does not.
    assert stats2[0]["sbuf_bytes"] < 100000 < stats3[0]["sbuf_bytes"]


@pytest.mark.parametrize("fields, message", [
    ({"sb_buf_shape": [128, -16]}, r"sb_buf_shape \[128, -16\]; expected \[128, bytes per partition\]"),
    ({"sb_buf_shape": [128, 196608 + 64]},
     r"sb_buf_shape \[128, 196672\]; expected \[128, bytes per partition\] \(a trn1 has 196608 bytes per SBUF "
     r"partition and 8 PSUM banks\)"),
    ({"psum_buf_shape": [128, 9, 2048]}, r"psum_buf_shape \[128, 9, 2048\]; expected \[128, banks, 2048\]"),
])
def test_a_node_cannot_reserve_more_on_chip_memory_than_the_machine_has(fields, message):
    """The reservation is checked against the module arch's memory when the node is read, not only
    when an allocation happens to land beyond the machine."""
    module = generic_module("RowTiledMM", [("a", [4, 8]), ("b", [8, 4])], [("o", [4, 4])], **fields)
    with pytest.raises(KernelError, match=rf"InstBIRKernel 'node0' \(kernel 'RowTiledMM'\): {message}"):
        inline_bir_kernels(module)

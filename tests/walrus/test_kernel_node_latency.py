"""The latency of an unexpanded kernel node is that of its real expansion (issue 22 item 4).

bir::Hwm::getLatency of an IT54 / IT55 / IT56 node expands the node with the real builder (the IT54
leaf through BIRKernelWrapper, the IT55 / IT56 resolvers) into a scratch module and schedules the
expansion with the simulator's scheduler in timing mode on the same model
(walrus/KernelNodeLatency.h). So timing a module that holds only the node gives exactly the time of
the resolved module, for every leaf and sink, on both generations; and the node occupies the whole
core (its expansion's engines are not modelled separately).
"""

from __future__ import annotations

import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim import KernelError, SimulationError, bir, pipeline, sim, walrus
from neuronxsim.models.leaf_programs import F32, attention, attention_bwd, generic, mlp, qkv, quant
from neuronxsim.starfish.penguin import ir

# One moderate shape per leaf: large enough to exercise every phase, small enough to time fast.
IT54_CASES = {
    "MLP_CTE": lambda: mlp(1, 512, 1024, 2816),
    "MLP_TKG": lambda: mlp(8, 1, 1024, 2816),
    "QKV_CTE": lambda: qkv(1, 512, 1024, 16, 4, 64),
    "QKV_TKG": lambda: qkv(8, 1, 1024, 16, 4, 64),
    "QuantOnly": lambda: quant(1, 512, 2048),
    "CausalAttention": lambda: attention(4, 2, 128, 1024, True),
    "Attention": lambda: attention(4, 2, 64, 512, False),
    "BackwardsAttention": lambda: attention_bwd(2, 1, 128, 512),
    "AttentionTkgFwd": lambda: generic("AttentionTkgFwd", [("q", [8, 128, 1]), ("k_prior", [2, 128, 2048]),
                                                            ("v_prior", [2, 2048, 128]), ("k_active", [2, 128, 1]),
                                                            ("v_active", [2, 1, 128])], [("out", [8, 128, 1])],
                                        scale=128 ** -0.5),
    "RouterTopK": lambda: generic("RouterTopK", [("x", [512, 1024]), ("w", [1024, 16])],
                                   [("router_logits", [512, 16], F32), ("expert_index", [512, 4], "int32"),
                                    ("expert_affinities", [512, 16], F32)], k=4),
    "ExpertMLPs": lambda: generic("ExpertMLPs", [("hidden", [256, 1024]), ("expert_affinities", [256, 4], F32),
                                                  ("gate_w", [4, 1024, 512]), ("up_w", [4, 1024, 512]),
                                                  ("down_w", [4, 512, 1024])], [("out", [256, 1024])]),
    "RowTiledMM": lambda: generic("RowTiledMM", [("a", [512, 1024]), ("b", [1024, 2048])], [("out", [512, 2048])]),
    "ColumnTiledMM": lambda: generic("ColumnTiledMM", [("a", [1024, 1024]), ("b", [1024, 1024])],
                                      [("out", [1024, 1024])]),
    "CaymanPackedPETranspose": lambda: generic("CaymanPackedPETranspose", [("x", [16, 32, 2048])],
                                                [("out", [16, 2048, 32])]),
}


@nki.jit
def scale_add_kernel(a, b):
    """A user kernel: out = 2 * a + b, over row tiles."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        rows = slice(i * 128, (i + 1) * 128)
        nl.store(out[rows, :], nl.load(a[rows, :]) * 2.0 + nl.load(b[rows, :]))
    return out


def user_kernel_program(macro=ir.ExternalNativeNkiKernel):
    p = ir.Program("user")
    x, y = p.tensor("x", [512, 1024]), p.tensor("y", [512, 1024])
    p.add(macro(scale_add_kernel, [ir.FullTensorAccess(x), ir.FullTensorAccess(y)],
                [ir.FullTensorAccess(p.tensor("z", [512, 1024], kind="output"))], name="user"))
    return p


def registry_program(func_name="tiled_pf_transpose"):
    p = ir.Program("it56")
    x = p.tensor("x", [640, 384])
    p.add(ir.InternalNativeNkiKernel(func_name, [ir.OpaqueAccess(x)],
                                     [ir.OpaqueAccess(p.tensor("y", [384, 640], kind="output"))], name="reg"))
    return p


def node_and_expansion_times(program, arch, **lower_options):
    lowered = pipeline.lower(program, arch, **lower_options)
    (node,) = [i for f in lowered.module.functions for b in f.blocks for i in b.instructions]
    latency = sim.latency(node, arch)
    analytic = sim.simulate(lowered.module, arch=arch, mode="timing")
    resolved = pipeline.resolve(lowered).module
    expansion = sim.simulate(resolved, arch=arch, mode="timing", records=False)
    return latency, analytic, expansion


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
@pytest.mark.parametrize("leaf", sorted(IT54_CASES))
def test_an_it54_node_costs_exactly_its_leafs_expansion(leaf, arch):
    latency, analytic, expansion = node_and_expansion_times(IT54_CASES[leaf](), arch)
    assert latency["whole_core"] and latency["engine"] == bir.Engine.PE
    assert analytic.total_ns == pytest.approx(expansion.total_ns, rel=1e-12), leaf
    assert latency["busy_ns"] == pytest.approx(expansion.total_ns, rel=1e-12)
    assert latency["flops"] == expansion.pe_flops == analytic.pe_flops  # its matmuls count for the PE MFU
    assert analytic.engines["PE"].busy_ns == analytic.engines["DMA0"].busy_ns == analytic.total_ns  # every track


@pytest.mark.parametrize("macro", [ir.ExternalNativeNkiKernel, ir.ExternalNativeNkiKlirKernel])
def test_an_it55_node_costs_exactly_its_compiled_kernel(macro):
    latency, analytic, expansion = node_and_expansion_times(user_kernel_program(macro), "trn1")
    assert analytic.total_ns == pytest.approx(expansion.total_ns, rel=1e-12) and latency["whole_core"]
    assert expansion.total_ns > 0


@pytest.mark.parametrize("frontend", ["beta2", "beta3"])
def test_an_it56_node_costs_exactly_its_traced_kernel_on_its_core(monkeypatch, tmp_path, frontend):
    """A two-core registry transpose: the node on core 0 costs core 0's part of the kernel."""
    monkeypatch.setenv("NKI_FRONTEND", frontend)
    lowered = pipeline.lower(registry_program(), "trn1", out_dir=tmp_path)
    (node,) = lowered.module.functions[0].blocks[0].instructions
    resolved = pipeline.resolve(lowered).module
    assert len(resolved.functions) == 2
    expansion = sim.simulate(resolved, mode="timing")
    (core0,) = [c for c in expansion.cores if c["core"] == 0]
    assert sim.latency(node)["busy_ns"] == pytest.approx(core0["end_ns"], rel=1e-12)


def test_a_saved_module_prices_its_nodes_from_its_folder(tmp_path):
    """The IT55 compiled kernel and the IT56 KLR file are found in the module's folder
    (bir.load sets files_dir), as when resolving it in another process."""
    p = user_kernel_program()
    p.add(ir.InternalNativeNkiKernel("tiled_dve_transpose_10", [ir.OpaqueAccess(p.tensors["x"])],
                                     [ir.OpaqueAccess(p.tensor("xt", [1024, 512], kind="output"))], name="reg"))
    lowered = pipeline.lower(p, "trn1", out_dir=tmp_path)
    bir.save(lowered.module, tmp_path / "module.json")
    loaded = bir.load(tmp_path / "module.json")
    assert loaded.files_dir == str(tmp_path)
    analytic = sim.simulate(loaded, mode="timing").total_ns
    assert analytic == pytest.approx(sim.simulate(lowered.module, mode="timing").total_ns, rel=1e-12)


def test_identical_nodes_are_priced_once():
    before = walrus.kernel_node_latency_stats()
    lowered = pipeline.lower(generic("RowTiledMM", [("a", [256, 384]), ("b", [384, 640])], [("out", [256, 640])]))
    (node,) = lowered.module.functions[0].blocks[0].instructions
    first = sim.latency(node)
    mid = walrus.kernel_node_latency_stats()
    assert mid["computed"] == before["computed"] + 1
    assert sim.latency(node) == first
    after = walrus.kernel_node_latency_stats()
    assert after["computed"] == mid["computed"] and after["cached"] == mid["cached"] + 1


def test_a_node_its_leaf_refuses_is_an_error_naming_it():
    lowered = pipeline.lower(generic("RowTiledMM", [("a", [256, 384]), ("b", [384, 640])], [("out", [256, 640])]))
    (node,) = lowered.module.functions[0].blocks[0].instructions
    node.set_kernel_name("NoSuchLeaf")
    with pytest.raises(KernelError, match=r"\(BIRKernel 'RowTiledMM'\): pricing it by its expansion: .*unknown "
                                          r"kernel_name 'NoSuchLeaf'"):
        sim.latency(node)


# ---- the rest of the Custom / Extension band ----

def _band_module(opcode, arch="trn1"):
    m = bir.Module()
    m.arch = "gen2" if arch == "trn1" else "gen3"
    f = m.addFunction()
    t = f.createOnChipTensor("t", bir.MemoryType.SB, bir.DType.float32, 128, 4 * 1000, 0, 0)
    block = f.addBlock()
    node = block.addInstruction(opcode, "n")
    node.addArgumentOrOutput(bir.Instruction.createAP(t, 0, [(1000, 128), (1, 1000)], [], -1), False)
    return m, node


def test_custom_op_is_an_opaque_gpsimd_box_on_neuroncore_v2_only():
    """Neuron Custom C++ operators run on the GpSimd cores of NeuronCore-v2: priced as Pool work,
    GPSIMD_START + N cycles over its largest operand (ours); refused on v3."""
    _, node = _band_module(bir.InstructionType.CustomOp)
    got = sim.latency(node)
    cfg = sim.config("trn1")
    assert got["engine"] == bir.Engine.Pool and not got["whole_core"]
    assert got["cycles"] == cfg.gpsimd_start_cycles + 1000
    assert got["busy_ns"] == pytest.approx((cfg.gpsimd_start_cycles + 1000) / cfg.pool_clock_ghz)
    with pytest.raises(SimulationError, match="CustomOp 'n': Neuron Custom C\\+\\+ operators run on NeuronCore-v2 "
                                              "only, not NeuronCore-v3"):
        sim.latency(node, "trn2")
    _, other = _band_module(bir.InstructionType.Halt)
    with pytest.raises(SimulationError, match="Halt 'n': this opcode has no functional or latency model"):
        sim.latency(other)


def test_device_print_takes_no_device_time():
    """device_print works only in simulation: not an ordinary compute instruction (no MIN_II, no
    access overhead), zero cost on its engine."""
    _, node = _band_module(bir.InstructionType.DevicePrint)
    node.engine = bir.Engine.DVE
    got = sim.latency(node)
    assert (got["cycles"], got["busy_ns"], got["access_ns"], got["bytes"], got["flops"]) == (0, 0, 0, 0, 0)
    assert not got["whole_core"]

"""The cores of a multi-core kernel launch together: a registry transpose traced for two
NeuronCores (IT56, grid 2) after a single-core matmul starts on core 1 when it starts on core 0,
not at time zero, and both halves compute the right result."""

import numpy as np

from neuronxsim import sim
from neuronxsim import pipeline
from neuronxsim.starfish.penguin import ir


def test_the_second_core_of_a_two_core_kernel_launches_with_the_first(tmp_path):
    p = ir.Program("mm_then_transpose")
    a, b = p.tensor("a", [256, 384]), p.tensor("b", [384, 640])
    y = p.tensor("y", [256, 640], kind="output")
    yt = p.tensor("yt", [640, 256], kind="output")
    p.add(ir.BIRKernel("RowTiledMM", [ir.FullTensorAccess(a), ir.FullTensorAccess(b)], [ir.FullTensorAccess(y)],
                       name="mm"))
    p.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.OpaqueAccess(y)], [ir.OpaqueAccess(yt)], name="tp"))
    module = pipeline.resolve(pipeline.lower(p, "trn1", out_dir=tmp_path)).module
    assert len(module.functions) == 2
    rng = np.random.default_rng(0)
    inputs = {"a": rng.standard_normal((256, 384), dtype=np.float32),
              "b": rng.standard_normal((384, 640), dtype=np.float32) / 20}
    r = sim.simulate(module, inputs)
    rec = r.instructions
    tp0 = rec[(rec["kernel"] == "tp") & (rec["core"] == 0)]
    tp1 = rec[(rec["kernel"] == "tp") & (rec["core"] == 1)]
    mm = rec[rec["kernel"] == "mm"]
    assert len(tp0) and len(tp1)
    assert tp1["start_ns"].min() >= tp0["start_ns"].min() > mm["start_ns"].min()
    assert tp1["start_ns"].min() > 0
    expected = inputs["a"] @ inputs["b"]
    np.testing.assert_allclose(r.outputs["y"], expected, rtol=2e-2, atol=1e-2 * np.abs(expected).max())
    np.testing.assert_array_equal(r.outputs["yt"], r.outputs["y"].T)


def two_core_copy(kernel):
    """Each of two cores loads its half of x into SBUF, doubles it and stores it into y; every
    instruction labelled `kernel` ('' for none)."""
    from neuronxsim import bir
    from neuronxsim.bir import DType, Engine, InstructionType, MemoryType, TensorKind

    m = bir.Module()
    for core in range(2):
        f = m.addFunction()
        x = f.createDramTensor("x", MemoryType.Input, DType.float32, [256, 64], TensorKind.ExternalInput)
        y = f.createDramTensor("y", MemoryType.Output, DType.float32, [256, 64], TensorKind.ExternalOutput)
        t = f.createOnChipTensor("t", MemoryType.SB, DType.float32, 128, 256, 0, 0)
        u = f.createOnChipTensor("u", MemoryType.SB, DType.float32, 128, 256, 0, 256)
        bb = f.addBlock()

        def ap(loc, offset=0):
            return bir.Instruction.createAP(loc, offset, [(64, 128), (1, 64)], [], -1)

        for name, op, ins, out, engine in (("load", InstructionType.DMA, ap(x, core * 128 * 64), ap(t), Engine.SP),
                                           ("double", InstructionType.TensorTensor, ap(t), ap(u), Engine.DVE),
                                           ("store", InstructionType.DMA, ap(u), ap(y, core * 128 * 64), Engine.SP)):
            inst = bb.addInstruction(op, name)
            inst.ins = [ins, ins] if op == InstructionType.TensorTensor else [ins]
            inst.outs = [out]
            inst.engine = engine
            inst.kernel = kernel
    return m


def test_a_kernel_launches_on_later_cores_when_its_first_instruction_issues():
    """notBefore bounds an instruction's issue (a DMA's trigger), so the launch it records is the
    first instruction's issue: a kernel starting with a DMA used to launch on core 1 one DMA
    latency late (at core 0's transfer start), making the labelled kernel slower than the same
    code unlabelled."""
    unlabelled = sim.simulate(two_core_copy(""), None, mode="timing")
    labelled = sim.simulate(two_core_copy("k"), None, mode="timing")
    rec = labelled.instructions
    first = [rec[rec["core"] == c][0] for c in (0, 1)]
    assert first[0]["name"] == first[1]["name"] == "load"
    assert first[1]["issue_ns"] == first[0]["issue_ns"] == 0
    assert labelled.total_ns == unlabelled.total_ns
    assert [c["end_ns"] for c in labelled.cores] == [c["end_ns"] for c in unlabelled.cores]


def test_an_earlier_core_reading_what_a_later_core_wrote_is_refused_in_both_modes(tmp_path):
    """A two-core registry transpose writes xt, then RowTiledMM reads it on core 0 alone. The
    simulator runs core 0's function before core 1's, so core 0 would read the half core 1 writes
    before it is written (stale data, or a misleading "no instruction has written"); nothing in the
    module orders the two cores, so preparation refuses it, naming both instructions."""
    import pytest
    from neuronxsim.errors import SimulationError

    p = ir.Program("transpose_then_mm")
    x, w = p.tensor("x", [300, 200]), p.tensor("w", [300, 64])
    xt = p.tensor("xt", [200, 300], kind="internal")
    o = p.tensor("o", [200, 64], kind="output")
    p.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.FullTensorAccess(x)], [ir.FullTensorAccess(xt)], name="t"))
    p.add(ir.BIRKernel("RowTiledMM", [ir.FullTensorAccess(xt), ir.FullTensorAccess(w)], [ir.FullTensorAccess(o)], name="mm"))
    module = pipeline.resolve(pipeline.lower(p, "trn1", out_dir=tmp_path)).module
    assert len(module.functions) == 2
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal((300, 200), dtype=np.float32), "w": rng.standard_normal((300, 64), dtype=np.float32)}
    for mode in ("full", "timing"):
        with pytest.raises(SimulationError, match=r"DRAM tensor 'xt' bytes \[\d+, \d+\): core 1's functions\[1\]\S* "
                                                  r"Save 't/\S+' writes them and core 0's functions\[0\]\S* \w+ 'mm/\S+' "
                                                  r"reads them; nothing in the module orders them: the cores run in "
                                                  r"parallel \(the simulator runs core 0's function first\)"):
            sim.simulate(module, inputs if mode == "full" else None, mode=mode)

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

"""The report tests import trace_rules.py from this directory and the NKI tutorial kernels from
tests/nki."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "nki"))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def small_layer(tmp_path_factory):
    """A small decoder layer (with its 2-core K cache transpose), lowered and simulated in timing
    mode: (lowered module, resolved module, result)."""
    from neuronxsim import pipeline, sim
    from neuronxsim.models import llama_decoder as layer

    cfg = layer.DecoderConfig(tokens=130, hidden=256, q_heads=4, kv_heads=2, head_dim=64, intermediate=384)
    lowered = pipeline.lower(layer.build_program(cfg), "trn1", out_dir=tmp_path_factory.mktemp("layer"))
    module = pipeline.resolve(lowered).module
    return lowered.module, module, sim.simulate(module, mode="timing")

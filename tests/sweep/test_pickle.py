"""Modules, traced kernels and simulation results pickle (a module through its BIR JSON), so
they can be shipped to and from worker processes."""

import pickle

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim import sim
from neuronxsim.errors import SimulationError


@nki.jit
def double(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(a), 2.0))
    return out


def test_module_traced_kernel_and_result_round_trip():
    a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    traced = nki.trace_kernel(double, a)
    module = pickle.loads(pickle.dumps(traced.module))
    assert module.to_json() == traced.module.to_json()
    again = pickle.loads(pickle.dumps(traced))
    assert again.module.to_json() == traced.module.to_json()
    assert again.outputs == traced.outputs and again.instruction_count == traced.instruction_count

    result = sim.simulate(traced.module, {"a": a})
    restored = pickle.loads(pickle.dumps(result))
    assert restored.total_ns == result.total_ns and restored.pe_mfu == result.pe_mfu
    assert restored.engines == result.engines and restored.cores == result.cores
    np.testing.assert_array_equal(restored.outputs["out"], 2 * a)
    assert (restored.instructions == result.instructions).all()
    assert (restored.slices == result.slices).all() and len(restored.slices)
    with pytest.raises(SimulationError, match="unpickled"):
        restored.write_trace("unused.json")
    bare = sim.simulate(traced.module, mode="timing", records=False)
    again = pickle.loads(pickle.dumps(bare))
    assert again.total_ns == bare.total_ns and len(again.instructions) == len(bare.instructions) == 0


def test_an_unverified_module_pickles_as_it_is():
    from neuronxsim import bir
    m = bir.Module()
    m.addFunction().addBlock()
    assert pickle.loads(pickle.dumps(m)).to_json() == m.to_json()

"""nki.simulate_kernel, nki.simulate, calling jit kernels, and nki.profile_kernel: kernels run on the
C++ tile-engine simulator (neuronxsim.sim)."""

import json
import os

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
import tutorial_kernels as tk
from nki_testing import close

bf16 = ml_dtypes.bfloat16


@nki.jit
def scale_and_sum(a, b, factor=2.0):
    scaled = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    total = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a) * factor
    nl.store(scaled, x)
    nl.store(total, nl.sum(x + nl.load(b), axis=1, keepdims=True))
    return scaled, total


def test_simulate_kernel_returns_numpy_outputs_in_result_order(rng):
    a = rng.random((64, 32)).astype(np.float32)
    b = rng.random((64, 32)).astype(np.float32)
    scaled, total = nki.simulate_kernel(scale_and_sum, a, b, factor=3.0)
    assert isinstance(scaled, np.ndarray) and scaled.dtype == np.float32
    close(scaled, 3 * a, atol=0, rtol=1e-7)
    close(total, (3 * a + b).sum(1, keepdims=True), atol=1e-5, rtol=1e-6)


def test_simulate_and_calling_a_jit_kernel(rng):
    a = rng.random((256, 1024)).astype(np.float16)
    b = rng.random((256, 1024)).astype(np.float16)
    np.testing.assert_array_equal(nki.simulate(tk.tensor_add_kernel[2, 2])(a, b), a + b)
    np.testing.assert_array_equal(tk.tensor_add_kernel[2, 2](a, b), a + b)  # as NKI users call it
    scaled, _ = scale_and_sum(a[:8, :8].astype(np.float32), a[:8, :8].astype(np.float32))
    close(scaled, 2 * a[:8, :8].astype(np.float32), atol=0, rtol=1e-7)


def test_kernels_over_two_neuron_cores_share_their_outputs(rng):
    @nki.jit
    def halves(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        c = nl.program_id(0)
        rows = a.shape[0] // 2
        nl.store(out[c * rows:(c + 1) * rows], nl.exp(nl.load(a[c * rows:(c + 1) * rows])))
        return out

    a = rng.random((256, 64)).astype(np.float32)
    close(nki.simulate_kernel(halves[nl.nc(2)], a), np.exp(a), atol=0, rtol=1e-6)


def test_device_print_prints_during_simulation(capsys):
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.device_print("the tile:", t)
        nl.store(out, t)
        return out

    nki.simulate_kernel(kernel, np.arange(6, dtype=np.float32).reshape(2, 3))
    printed = capsys.readouterr().out
    assert "the tile:" in printed and "5." in printed


def test_simulator_inputs_must_be_arrays():
    with pytest.raises(nki.NKIError, match="without values"):
        nki.simulate_kernel(scale_and_sum, nki.typing.tensor[[8, 8], nl.float32],
                            np.zeros((8, 8), np.float32))


def test_profile_of_the_tiled_matmul_reports_pe_utilisation_and_a_trace(tmp_path, rng):
    K, M, N = 1024, 4096, 2048
    lhsT = rng.standard_normal((K, M)).astype(bf16)
    rhs = rng.standard_normal((K, N)).astype(bf16)
    trace_file = tmp_path / "matmul_tiled.json"
    prof = nki.profile_kernel(tk.matmul_tiled, lhsT, rhs, trace_file=trace_file)

    out = prof.outputs["result"].astype(np.float32)
    ref = lhsT.astype(np.float32).T @ rhs.astype(np.float32)
    close(out, ref, atol=1.0, rtol=2 ** -7)  # bf16 output: half an ulp of values up to ~200

    # 1024 matmuls of [128,128] x [128,512] bf16 keep the PE array busy
    # max(min(64, 128), 512) = 512 cycles each at 2.8 GHz: 187 us in all.
    pe = prof.engines["PE"]
    assert pe.instructions == 1024
    assert 0.9 * 187.2e3 <= pe.busy_ns <= 1.25 * 187.2e3, pe.busy_ns
    assert prof.pe_utilization == pytest.approx(pe.busy_ns / prof.total_ns)
    assert 0.05 < prof.pe_utilization <= 1.0
    assert f"PE utilisation {prof.pe_utilization:.1%}" in prof.summary()

    events = json.loads(trace_file.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    sources = {e.get("args", {}).get("source") for e in events if e.get("ph") == "X"}
    kernel_file = os.path.basename(tk.__file__)
    assert any(s and s.startswith(kernel_file + ":") for s in sources)
    named = {e["args"]["instruction"] for e in events if e.get("ph") == "X"}
    assert len(named) == prof.traced.instruction_count  # every instruction is on the timeline

"""The pinned Python interface: simulate(), its input checks, outputs, SimResult, MachineConfig,
dtype mapping, NeuronCore selection and multi-core modules."""

import dataclasses

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import SimulationError, bir, sim
from neuronxsim.bir import AluOp, DType
from neuronxsim.sim.build import ModuleBuilder

from simkit import f32


def _scale_module(arch="trn1", in_dtype=DType.float32):
    b = ModuleBuilder(arch)
    x = b.input("x", [128, 64], in_dtype)
    y = b.output("y", [128, 64], DType.float32)
    t = b.sbuf("t", 128, 64, DType.float32)
    b.dma(b.tile(t), b.full(x))
    b.add("TensorScalar", [b.tile(t)], [b.tile(t)], op0=AluOp.mult, const0=2.0)
    b.dma(b.full(y), b.tile(t))
    return b


def test_outputs_shapes_and_values(rng):
    x = f32(rng.normal(size=(128, 64)))
    r = sim.simulate(_scale_module().module, {"x": x})
    assert set(r.outputs) == {"y"} and r.outputs["y"].shape == (128, 64) and r.outputs["y"].dtype == np.float32
    np.testing.assert_array_equal(r.outputs["y"], 2 * x)
    assert r.total_ns > 0 and r.arch == "trn1" and r.mode == "full"
    assert set(r.engines) == set(sim.TRACKS)
    assert r.instructions.dtype.names == ("core", "start_ns", "end_ns", "engine", "queue", "issue_engine",
                                          "issue_ns", "opcode", "name", "cycles", "busy_ns", "bytes", "flops",
                                          "adjusted_flops", "source", "kernel")
    assert list(r.instructions["opcode"]) == ["DMA", "TensorScalar", "DMA"]
    assert list(r.instructions["queue"]) == [0, -1, 0]
    assert "SimResult trn1 full" in repr(r)


@pytest.mark.parametrize("bad,msg", [
    ({}, r"missing input tensor\(s\): 'x' \(\[128, 64\] float32\)"),
    ({"x": np.zeros((128, 64), np.float32), "z": np.zeros(3)}, r"unknown input tensor\(s\) \['z'\]"),
    ({"x": np.zeros((64, 128), np.float32)}, r"input 'x': expected \[128, 64\] float32, got \[64, 128\] float32"),
    ({"x": np.zeros((128, 64), np.float64)}, r"input 'x': expected \[128, 64\] float32, got \[128, 64\] float64"),
    ({"x": [[0.0] * 64] * 128}, r"input 'x': expected a NumPy array, got list"),
])
def test_input_checks(bad, msg):
    with pytest.raises(SimulationError, match=msg):
        sim.simulate(_scale_module().module, bad)


def test_inputs_are_bound_without_copy_and_never_modified(rng):
    b = ModuleBuilder()
    x = b.input("x", [128, 64], DType.float32)
    y = b.output("y", [128, 64], DType.float32)
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("Memset", [], [b.tile(t)], constant=7.0)
    b.dma(b.full(x), b.tile(t))  # the module writes its input ...
    b.dma(b.full(y), b.full(x))  # ... and reads it back
    xv = f32(rng.normal(size=(128, 64)))
    keep = xv.copy()
    r = sim.simulate(b.module, {"x": xv})
    np.testing.assert_array_equal(r.outputs["y"], 7)
    np.testing.assert_array_equal(xv, keep)  # the caller's array is untouched


def _aliasing_module(dtype, write_input=False):
    """Writes 7 to output y, then copies input x to output z (and, if asked, writes x last)."""
    b = ModuleBuilder()
    x = b.input("x", [128, 64], dtype)
    y, z = b.output("y", [128, 64], dtype), b.output("z", [128, 64], dtype)
    t, u = b.sbuf("t", 128, 64, dtype), b.sbuf("u", 128, 64, dtype)
    b.add("Memset", [], [b.tile(t)], constant=7.0)
    b.dma(b.full(y), b.tile(t), name="write_y")
    b.dma(b.tile(u), b.full(x), name="read_x")
    b.dma(b.full(z), b.tile(u), name="write_z")
    if write_input:
        b.dma(b.full(x), b.tile(t), name="write_x")
    return b


@pytest.mark.parametrize("case", ["in_place", "in_place_bf16", "written_by_module", "non_contiguous"])
def test_dram_tensors_bind_to_the_callers_arrays(monkeypatch, case):
    """Output y is made to share the memory of input x (simulate's output allocator is patched to
    return it): an input bound in place then reads the 7s written to y before it, while a copied input
    (the module writes it, or the array is not C-contiguous) still reads the caller's values."""
    dtype = DType.bfloat16 if case == "in_place_bf16" else DType.float32
    nd = sim.dtype_to_numpy(dtype)
    values = (np.arange(128 * 64) % 251).astype(nd)
    if case == "non_contiguous":
        memory = values.reshape(64, 128)
        x = memory.T  # a transposed view: bound as a contiguous copy
    else:
        memory = x = values.reshape(128, 64)
    keep = x.copy()
    new_output = sim._new_output
    monkeypatch.setattr(sim, "_new_output", lambda spec: memory.reshape(128, 64) if spec["name"] == "y"
                        else new_output(spec))
    r = sim.simulate(_aliasing_module(dtype, write_input=case == "written_by_module").module, {"x": x})
    assert np.shares_memory(r.outputs["y"], x)
    if case.startswith("in_place"):
        np.testing.assert_array_equal(r.outputs["z"], np.full((128, 64), 7, nd))  # x is the caller's memory
    else:
        np.testing.assert_array_equal(r.outputs["z"], keep)  # x was copied before y was written


def test_copied_inputs_never_modify_the_callers_array():
    base = (np.arange(128 * 64) % 251).astype(np.float32).reshape(64, 128)
    keep = base.copy()
    r = sim.simulate(_aliasing_module(DType.float32, write_input=True).module, {"x": base.T})
    np.testing.assert_array_equal(r.outputs["z"], keep.T)
    np.testing.assert_array_equal(base, keep)  # the module wrote x: its copy, not the caller's view


def test_non_contiguous_and_bf16_inputs(rng):
    x = rng.normal(size=(64, 128)).astype(ml_dtypes.bfloat16).T  # a transposed view
    r = sim.simulate(_scale_module(in_dtype=DType.bfloat16).module, {"x": x})
    np.testing.assert_array_equal(r.outputs["y"], 2 * x.astype(np.float32))


@pytest.mark.parametrize("dtype, unwritten", [(DType.bfloat16, "nan"), (DType.float32, "nan"),
                                               (DType.float8e4, "nan"), (DType.int32, 0),
                                               (DType.uint8, 0)])
def test_unwritten_output_elements_are_nan_or_zero(dtype, unwritten):
    # The outputs start uninitialised (np.empty) and the run fills what no instruction wrote:
    # run twice so that the second output may reuse the first one's memory, written all over.
    for written in (8, 4):
        b = ModuleBuilder()
        y = b.output("y", [4, 8], dtype)
        t = b.sbuf("t", 4, written, dtype)
        b.add("Memset", [], [b.tile(t)], constant=1.0)
        b.dma(b.ap(y, 0, [(8, 4), (1, written)]), b.tile(t))
        out = sim.simulate(b.module, {}).outputs["y"].astype(np.float32)
        assert (out[:, :written] == 1).all()
        rest = out[:, written:]
        assert (np.isnan(rest) if unwritten == "nan" else rest == 0).all()


def test_timing_mode_needs_no_inputs_but_checks_given_ones():
    b = _scale_module()
    r = sim.simulate(b.module, mode="timing")
    assert r.outputs == {} and r.total_ns > 0 and r.mode == "timing"
    with pytest.raises(SimulationError, match="input 'x'"):
        sim.simulate(b.module, {"x": np.zeros(3)}, mode="timing")
    with pytest.raises(SimulationError, match="mode 'fast'"):
        sim.simulate(b.module, mode="fast")
    with pytest.raises(SimulationError, match="unknown arch 'trn9'"):
        sim.simulate(b.module, mode="timing", arch="trn9")


def _two_core_module():
    """Two functions = two NeuronCores sharing the input by name, each writing its own output."""
    b = ModuleBuilder(functions=2)
    for core, (scale, repeats) in enumerate(((2.0, 1), (3.0, 10))):
        b.core(core)
        x = b.input("x", [128, 64], DType.float32)
        y = b.output(f"y{core}", [128, 64], DType.float32)
        t = b.sbuf("t", 128, 64, DType.float32)
        b.dma(b.tile(t), b.full(x))
        b.add("TensorScalar", [b.tile(t)], [b.tile(t)], op0=AluOp.mult, const0=scale)
        for _ in range(repeats - 1):  # core 1 works longer
            b.add("TensorScalar", [b.tile(t)], [b.tile(t)], op0=AluOp.mult, const0=1.0)
        b.dma(b.full(y), b.tile(t))
    return b


def test_multi_core_modules(rng):
    b = _two_core_module()
    x = f32(rng.normal(size=(128, 64)))
    both = sim.simulate(b.module, {"x": x})
    np.testing.assert_array_equal(both.outputs["y0"], 2 * x)
    np.testing.assert_array_equal(both.outputs["y1"], 3 * x)
    assert [c["core"] for c in both.cores] == [0, 1]
    assert both.total_ns == max(c["end_ns"] for c in both.cores) == both.cores[1]["end_ns"]
    assert set(both.instructions["core"]) == {0, 1}
    only1 = sim.simulate(b.module, {"x": x}, neuron_core_id=1)
    assert set(only1.outputs) == {"y1"} and only1.total_ns == both.cores[1]["end_ns"]
    with pytest.raises(SimulationError, match="neuron_core_id 2: the module has 2 function"):
        sim.simulate(b.module, {"x": x}, neuron_core_id=2)


def test_machine_config_mirror():
    c1, c2 = sim.config("trn1"), sim.config("gen3")
    assert isinstance(c1, sim.MachineConfig) and dataclasses.is_dataclass(c1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c1.pe_clock_ghz = 3.0
    assert (c1.sbuf_bytes_per_partition, c2.sbuf_bytes_per_partition) == (192 * 1024, 224 * 1024)
    assert (c1.psum_bytes_per_partition, c1.psum_banks, c1.psum_bank_bytes) == (16384, 8, 2048)
    assert (c1.pe_clock_ghz, c1.dve_clock_ghz, c1.act_clock_ghz, c1.pool_clock_ghz) == (2.8, 1.12, 1.4, 1.4)
    assert (c2.pe_clock_ghz, c2.dve_clock_ghz) == (2.4, 0.96)
    assert (c1.dma_queues, c1.dma_engines, c1.num_partitions, c1.pe_rows, c1.pe_cols) == (16, 16, 128, 128, 128)
    assert c1.pe_bf16_peak_flops_per_ns == pytest.approx(91.75e3, rel=1e-3)  # 92 TFLOPS [A1]
    for f in dataclasses.fields(c1):  # units in the names
        if isinstance(getattr(c1, f.name), float):
            assert any(u in f.name for u in ("_ghz", "_ns", "_gbps", "_factor")), f.name


def test_dtype_mapping_round_trips():
    for name, dt in DType.__members__.items():
        nd = sim.dtype_to_numpy(dt)
        back = sim.numpy_to_dtype(nd)
        assert back == (DType.float32 if name == "float32r" else dt)
    assert sim.dtype_to_numpy(DType.float8e4) == np.dtype(ml_dtypes.float8_e4m3)
    assert sim.dtype_to_numpy(DType.float8e5) == np.dtype(ml_dtypes.float8_e5m2)
    assert sim.dtype_to_numpy(DType.float8e3) == np.dtype(ml_dtypes.float8_e3m4)
    with pytest.raises(TypeError):
        sim.numpy_to_dtype(np.complex64)


def test_records_can_be_turned_off():
    r = sim.simulate(_scale_module().module, mode="timing", records=False)
    assert len(r.instructions) == 0 and r.instruction_count == 3 and r.total_ns > 0


def test_result_keeps_its_module_alive(rng):
    def run():
        return sim.simulate(_scale_module().module, {"x": f32(rng.normal(size=(128, 64)))})
    r = run()
    import gc
    gc.collect()
    assert list(r.instructions["name"])[1] == "TensorScalar"


def test_bir_json_round_trip_simulates_the_same(rng):
    b = _scale_module()
    m2 = bir.Module.from_json(b.module.to_json())
    x = f32(rng.normal(size=(128, 64)))
    r1, r2 = sim.simulate(b.module, {"x": x}), sim.simulate(m2, {"x": x})
    np.testing.assert_array_equal(r1.outputs["y"], r2.outputs["y"])
    assert r1.total_ns == r2.total_ns


def test_the_result_names_each_output_left_partly_unwritten():
    """Outputs with elements no instruction wrote are listed (count, first element) and still
    returned (NaN / 0 there): a kernel may leave part of an output alone, so it is no error."""
    b = ModuleBuilder()
    whole = b.output("whole", [4, 8], DType.float32)
    part = b.output("part", [4, 8], DType.int32)
    never = b.output("never", [2, 3, 4], DType.bfloat16)
    t = b.sbuf("t", 4, 8, DType.float32)
    i = b.sbuf("i", 4, 5, DType.int32)
    b.add("Memset", [], [b.tile(t)], constant=1.0)
    b.add("Memset", [], [b.tile(i)], constant=1.0)
    b.dma(b.full(whole), b.tile(t))
    b.dma(b.ap(part, 0, [(8, 4), (1, 5)]), b.tile(i))  # columns 0-4 of every row
    r = sim.simulate(b.module, {})
    assert r.unwritten_outputs == (
        sim.UnwrittenOutput("part", "int32", elements=4 * 3, size=32, first_index=(0, 5)),
        sim.UnwrittenOutput("never", "bfloat16", elements=24, size=24, first_index=(0, 0, 0)))
    assert str(r.unwritten_outputs[0]) == ("output 'part' (int32): 12 of 32 elements never written (the first at "
                                           "[0, 5]); they read as 0")
    assert str(r.unwritten_outputs[1]).endswith("they read as NaN")
    assert (r.outputs["part"][:, :5] == 1).all() and (r.outputs["part"][:, 5:] == 0).all()
    import pickle
    assert pickle.loads(pickle.dumps(r)).unwritten_outputs == r.unwritten_outputs
    # (timing mode keeps no data: it finds the same elements from the writes' access patterns)
    assert sim.simulate(b.module, mode="timing").unwritten_outputs == r.unwritten_outputs


def test_a_module_runs_on_its_own_arch(rng):
    # A trn2 module run without an arch ran as trn1; an arch of another generation than the
    # module's ran it there. The module's is the default, and a contradiction is refused.
    b = _scale_module("trn2")
    x = f32(rng.normal(size=(128, 64)))
    r = sim.simulate(b.module, {"x": x})
    assert r.arch == "trn2" and r.config.neuron_core == "NeuronCore-v3"
    assert sim.simulate(b.module, {"x": x}, arch="gen3").arch == "trn2"
    assert sim.input_tensors(b.module) == {"x": ((128, 64), np.dtype(np.float32))}
    with pytest.raises(SimulationError, match=r"^arch 'trn1' \(NeuronCore-v2\) contradicts the module's arch 'gen3' "
                                              r"\(NeuronCore-v3\)"):
        sim.simulate(b.module, {"x": x}, arch="trn1")


@pytest.mark.parametrize("threads", [-5, -1, 65, 10**6])
def test_threads_outside_what_the_matmul_kernel_takes_are_refused(threads):
    with pytest.raises(SimulationError, match=rf"^threads {threads} is outside 0\.\.64"):
        sim.simulate(_scale_module().module, mode="timing", threads=threads)


@pytest.mark.parametrize("mode", ["full", "timing"])
def test_an_instruction_field_the_simulator_does_not_model_is_refused(mode):
    # Unknown BIR JSON fields are kept for the round trip; run as if absent, a misspelled one
    # ("reverse_0" for reverse0) gave a silently different answer.
    m = _scale_module().module
    doc = m.to_json()
    scale = m.function(0).blocks[0].instructions[1]
    scale.extra_json = '{"reverse_0":true,"hint":1}'
    with pytest.raises(SimulationError, match=r"instructions\[1\] TensorScalar 'TensorScalar': the simulator does not "
                                              r"model fields 'reverse_0', 'hint' of TensorScalar"):
        sim.simulate(m, {"x": np.zeros((128, 64), np.float32)}, mode=mode)
    assert bir.Module.from_json(m.to_json()).to_json() != doc  # the fields are kept

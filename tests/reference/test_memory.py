"""The memory model and access-pattern addressing: byte-level SBUF/PSUM shared by all
locations, NaN-filled new memory, DRAM buffers, inputs and outputs."""

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import SimulationError


def test_dma_round_trip_is_bit_exact_for_every_dtype(new_program, bir_dtype_names):
    rng = np.random.default_rng(0)
    for dtype, name in bir_dtype_names.items():
        raw = rng.integers(0, 256, size=(4, 6 * dtype.itemsize), dtype=np.uint8)
        x = raw.view(dtype)  # random bytes: NaNs with payloads included
        p = new_program()
        t = p.sbuf("t", 4, 6, name)
        p.load(t, p.input("x", x.shape, name))
        p.store(p.output("y", x.shape, name), t)
        y = p.run(x=x)["y"]
        assert y.dtype == dtype and y.shape == x.shape
        assert y.view(np.uint8).tobytes() == raw.tobytes(), name


def test_strided_broadcast_and_reversed_patterns(program):
    p = program
    x = p.input("x", [4, 8])
    t = p.sbuf("t", 4, 8)
    p.load(t, x)
    every_other = p.output("every_other", [4, 4])
    p.store(every_other, p.ap(t, [[8, 4], [2, 4]]))
    column3 = p.output("column3", [4, 5])
    p.store(column3, p.ap(t, [[8, 4], [0, 5]], offset=3))  # step 0 repeats one element
    reversed_rows = p.output("reversed_rows", [4, 8])
    p.store(reversed_rows, p.ap(t, [[8, 4], [-1, 8]], offset=7))
    xv = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = p.run(x=xv)
    np.testing.assert_array_equal(out["every_other"], xv[:, ::2])
    np.testing.assert_array_equal(out["column3"], np.repeat(xv[:, 3:4], 5, axis=1))
    np.testing.assert_array_equal(out["reversed_rows"], xv[:, ::-1])


def test_partition_offsets_and_base_partitions_address_absolute_partitions(program):
    p = program
    x = p.input("x", [2, 4])
    # two views of the same SBUF bytes: `whole` from partition 0, `upper` from partition 32
    whole = p.sbuf("whole", 64, 4, addr=0)
    upper = p.sbuf("upper", 32, 4, base_partition=32, addr=0)
    p.add("Memset", outs=[whole], constant=0.0)
    p.load(p.ap(upper, [[4, 2], [1, 4]], offset=4 * 3), x)  # partitions 35, 36
    y = p.output("y", [64, 4])
    p.store(y, whole)
    xv = np.arange(8, dtype=np.float32).reshape(2, 4) + 1
    got = p.run(x=xv)["y"]
    expected = np.zeros((64, 4), np.float32)
    expected[35:37] = xv
    np.testing.assert_array_equal(got, expected)


def test_locations_alias_by_address_and_dtype_views_reinterpret_bytes(program):
    p = program
    x = p.input("x", [2, 4])
    as_float = p.sbuf("as_float", 2, 4, addr=128)
    as_bytes = p.sbuf("as_bytes", 2, 16, "uint8", addr=128)
    p.load(as_float, x)
    raw = p.output("raw", [2, 16], "uint8")
    p.store(raw, as_bytes)
    # an int16 view of the same location's bytes, at an address that is not 4-byte aligned
    halves = p.output("halves", [2, 3], "int16")
    p.store(halves, p.ap(as_float, [[8, 2], [1, 3]], offset=1, dtype="int16"))
    xv = np.array([[1.5, -2.0, 3.25, 1e-3], [7.0, 8.0, 9.0, 10.0]], np.float32)
    out = p.run(x=xv)
    np.testing.assert_array_equal(out["raw"], xv.view(np.uint8))
    np.testing.assert_array_equal(out["halves"], xv.view(np.int16)[:, 1:4])


def test_unwritten_memory_reads_as_nan(program):
    p = program
    t = p.sbuf("t", 2, 4)
    p.add("Memset", outs=[p.ap(t, [[4, 2], [1, 2]])], constant=5.0)  # the first two columns only
    y = p.output("y", [2, 4])
    p.add("TensorScalar", ins=[t], outs=[t], op0="add", const0=1.0)
    p.store(y, t)
    p.output("z", [2, 4])  # never written
    got = p.run()
    np.testing.assert_array_equal(got["y"][:, :2], 6.0)
    assert np.isnan(got["y"][:, 2:]).all() and np.isnan(got["z"]).all()


def test_outputs_have_the_tensor_shape_and_dtype_and_inputs_are_not_modified(program):
    p = program
    x = p.input("x", [2, 3, 4], "bfloat16")
    t = p.sbuf("t", 2, [3, 4], "bfloat16")
    p.load(t, x)
    p.add("TensorScalar", ins=[t], outs=[t], op0="mult", const0=2.0)
    p.store(x, t)  # write back into the Input tensor
    y = p.output("y", [2, 3, 4], "bfloat16")
    p.store(y, x)
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4).astype(ml_dtypes.bfloat16)
    before = xv.copy()
    out = p.run(x=xv)
    assert list(out) == ["y"]
    assert out["y"].dtype == ml_dtypes.bfloat16 and out["y"].shape == (2, 3, 4)
    np.testing.assert_array_equal(out["y"].astype(np.float32), before.astype(np.float32) * 2)
    np.testing.assert_array_equal(xv.astype(np.float32), before.astype(np.float32))


def test_dram_internal_tensors_hold_data_between_instructions(program):
    p = program
    x = p.input("x", [2, 4])
    scratch = p.dram("scratch", [8])
    p.add("DMA", ins=[x], outs=[p.ap(scratch, [[1, 8]])])
    y = p.output("y", [2, 4])
    p.add("DMA", ins=[p.ap(scratch, [[1, 8]])], outs=[y])
    xv = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(p.run(x=xv)["y"], xv)


@pytest.mark.parametrize("inputs, message", [
    ({}, r"missing inputs \['x'\]"),
    ({"x": np.zeros((2, 4), np.float32), "w": np.zeros(1)}, r"inputs \['w'\] are not Input tensors"),
    ({"x": np.zeros((2, 4), np.float64)}, r"input 'x' is float64\[2, 4\], the tensor is float32\[2, 4\]"),
    ({"x": np.zeros((4, 2), np.float32)}, r"input 'x' is float32\[4, 2\]"),
])
def test_inputs_must_match_the_input_tensors(program, inputs, message):
    p = program
    x = p.input("x", [2, 4])
    p.store(p.output("y", [2, 4]), x)
    with pytest.raises(SimulationError, match=message):
        p.run(**inputs)


def test_sbuf_locations_beyond_the_arch_capacity_are_refused(new_program):
    for arch, refused in (("gen2", True), ("gen3", False)):
        p = new_program()
        p.module.arch = arch
        t = p.sbuf("big", 1, 200 * 1024, "uint8")
        p.add("Memset", outs=[t], constant=1.0)
        if refused:
            with pytest.raises(SimulationError, match=r"tensor 'big' ends at byte 204800 .* 196608 bytes"):
                p.run()
        else:
            assert p.run() == {}


def test_compute_engines_cannot_address_dram(program):
    p = program
    x = p.input("x", [2, 4])
    t = p.sbuf("t", 2, 4)
    p.add("TensorCopy", ins=[x], outs=[t], name="copy")
    with pytest.raises(SimulationError, match=r"instructions\[0\] 'copy' TensorCopy: ins\[0\]: compute "
                                              r"engines address SBUF and PSUM only; tensor 'x' is in Input"):
        p.run(x=np.zeros((2, 4), np.float32))


def test_an_output_cannot_be_an_immediate(program):
    p = program
    t = p.sbuf("t", 2, 4)
    p.add("TensorCopy", ins=[t], outs=[p.imm(1.0)])
    with pytest.raises(SimulationError, match=r"outs\[0\]: must be an access pattern, not an immediate"):
        p.run()

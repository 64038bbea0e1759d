"""Memset, Reciprocal, TensorCopyDynamicSrc/Dst, Select, CopyPredicated, Dropout, NoOp and
DevicePrint."""

import numpy as np
import pytest

from neuronxsim import SimulationError


def test_memset_const_converts_like_any_result(run_op):
    got = run_op("Memset", [], [((3, 5), "float32"), ], constant=-2.5)[0]
    np.testing.assert_array_equal(got, np.full((3, 5), -2.5, np.float32))
    got = run_op("Memset", [], [((2, 2), "int8")], constant=1000.0)[0]
    np.testing.assert_array_equal(got, np.full((2, 2), 127, np.int8))


def test_memset_random_is_uniform_in_unit_interval_and_reproducible(run_op):
    first = run_op("Memset", [], [((64, 64), "float32")], mode="Random")[0]
    again = run_op("Memset", [], [((64, 64), "float32")], mode="Random")[0]
    assert ((first >= 0) & (first < 1)).all()
    assert abs(first.mean() - 0.5) < 0.02 and len(np.unique(first)) > 4000
    np.testing.assert_array_equal(first, again)


def test_reciprocal(run_op):
    x = np.array([[2.0, -4.0, 0.0, -0.0, 3.0, np.inf]], np.float32)
    got = run_op("Reciprocal", [x], [(x.shape, "float32")])[0]
    np.testing.assert_array_equal(got, [[0.5, -0.25, np.inf, -np.inf, np.float32(1) / np.float32(3), 0.0]])


def dynamic_copy_program(program, opcode, offset_value, dynamic_step):
    p = program
    src = p.sbuf("src", 2, 8)
    dst = p.sbuf("dst", 2, 8)
    p.load(src, p.input("x", [2, 8]))
    p.add("Memset", outs=[dst], constant=0.0)
    offset = p.sbuf("offset", 1, 1, "int32")
    p.add("Memset", outs=[offset], constant=float(offset_value))
    window = [[8, 2], [1, 3]]  # 3 columns of both partitions
    src_ap = p.ap(src, window) if opcode.endswith("Src") else p.ap(src, window, offset=1)
    dst_ap = p.ap(dst, window, offset=2) if opcode.endswith("Src") else p.ap(dst, window)
    p.add(opcode, ins=[src_ap, offset], outs=[dst_ap], name="dyn", dynamic_step=dynamic_step)
    p.store(p.output("y", [2, 8]), dst)
    return p


def test_tensor_copy_dynamic_src_moves_the_source_window(program):
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    got = dynamic_copy_program(program, "TensorCopyDynamicSrc", 2, 2).run(x=x)["y"]
    want = np.zeros((2, 8), np.float32)
    want[:, 2:5] = x[:, 4:7]  # offset 2 * dynamic_step 2
    np.testing.assert_array_equal(got, want)


def test_tensor_copy_dynamic_dst_moves_the_destination_window(program):
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    got = dynamic_copy_program(program, "TensorCopyDynamicDst", 5, 1).run(x=x)["y"]
    want = np.zeros((2, 8), np.float32)
    want[:, 5:8] = x[:, 1:4]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("opcode, value", [("TensorCopyDynamicSrc", 6), ("TensorCopyDynamicDst", -1)])
def test_a_dynamic_window_leaving_its_tensor_is_refused(program, opcode, value):
    p = dynamic_copy_program(program, opcode, value, 1)
    side = r"ins\[0\]" if opcode.endswith("Src") else r"outs\[0\]"
    with pytest.raises(SimulationError, match=rf"'dyn' {opcode}: {side}: the moved access pattern .* leaves tensor"):
        p.run(x=np.zeros((2, 8), np.float32))


def test_select(run_op):
    rng = np.random.default_rng(1)
    predicate = rng.integers(0, 2, size=(3, 16)).astype(np.float32)
    predicate[0, 0] = np.nan  # NaN != 0: selects on_true
    a, b = rng.normal(size=(2, 3, 16)).astype(np.float32)
    got = run_op("Select", [predicate, a, b], [(a.shape, "float32")])[0]
    np.testing.assert_array_equal(got, np.where(predicate != 0, a, b))


def test_copy_predicated_keeps_the_other_destination_elements_bit_exact(program):
    p = program
    dst = p.sbuf("dst", 2, 4, "int32")
    p.load(dst, p.input("old", [2, 4], "int32"))
    src = p.sbuf("src", 2, 4)
    p.load(src, p.input("new", [2, 4]))
    mask = p.sbuf("mask", 2, 4, "uint8")
    p.load(mask, p.input("mask_in", [2, 4], "uint8"))
    p.add("CopyPredicated", ins=[src, mask], outs=[dst])
    p.store(p.output("y", [2, 4], "int32"), dst)
    old = np.array([[16777217, 2, 3, 4], [5, 6, 7, -16777219]], np.int32)  # not exact in fp32
    new = np.arange(8, dtype=np.float32).reshape(2, 4) * -1.5
    mask_value = np.array([[0, 1, 0, 1], [1, 0, 1, 0]], np.uint8)
    got = p.run(old=old, new=new, mask_in=mask_value)["y"]
    np.testing.assert_array_equal(got, np.where(mask_value != 0, np.rint(new).astype(np.int32), old))


def test_dropout_zeroes_with_probability_and_keeps_survivors(run_op):
    x = np.full((128, 256), 3.0, np.float32)
    got = run_op("Dropout", [x], [(x.shape, "float32")], prob=0.25)[0]
    kept = got != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_array_equal(got[kept], np.float32(3.0))
    again = run_op("Dropout", [x], [(x.shape, "float32")], prob=0.25)[0]
    np.testing.assert_array_equal(got, again)
    assert (run_op("Dropout", [x], [(x.shape, "float32")], prob=1.0)[0] == 0).all()
    np.testing.assert_array_equal(run_op("Dropout", [x], [(x.shape, "float32")], prob=0.0)[0], x)
    with pytest.raises(SimulationError, match="dropout probability 1.5 is outside"):
        run_op("Dropout", [x], [(x.shape, "float32")], prob=1.5)


def test_no_op_changes_nothing(program):
    p = program
    t = p.sbuf("t", 2, 4)
    p.load(t, p.input("x", [2, 4]))
    p.add("NoOp", ins=[t], outs=[t])
    p.store(p.output("y", [2, 4]), t)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(p.run(x=x)["y"], x)


def test_device_print_prints_prefix_and_values(program, capsys):
    p = program
    t = p.sbuf("t", 2, [2, 2])
    p.load(t, p.input("x", [2, 2, 2]))
    p.add("DevicePrint", ins=[t], prefix="tile t = ")
    p.run(x=np.array([[[1.5, 2], [3, 4]], [[5, 6], [7, 8.25]]], np.float32))
    printed = capsys.readouterr().out
    assert printed.startswith("tile t = ") and "1.5" in printed and "8.25" in printed
    assert printed.count("[") == 7  # printed as [2, 2, 2]

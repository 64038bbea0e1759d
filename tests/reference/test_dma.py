"""DMA, Load, Save, DMACopy: element copies with casts, accumulate, transpose, indirect gather."""

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import SimulationError


@pytest.mark.parametrize("opcode", ["DMA", "Load", "Save", "DMACopy"])
def test_every_dma_opcode_copies_and_casts(program, opcode):
    p = program
    x = p.input("x", [4, 6])
    y = p.output("y", [4, 6], "bfloat16")
    t = p.sbuf("t", 4, 6)
    p.add(opcode, ins=[x], outs=[t])
    p.add(opcode, ins=[t], outs=[y])
    xv = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)
    got = p.run(x=xv)["y"]
    np.testing.assert_array_equal(got.view(np.uint16), xv.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_dma_flattens_both_sides_in_enumeration_order(program):
    p = program
    x = p.input("x", [2, 3, 4])
    t = p.sbuf("t", 4, 6)  # [2, 3, 4] -> [4, 6]: the same 24 elements in order
    p.load(t, x)
    p.store(p.output("y", [24]), t)
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(p.run(x=xv)["y"], xv.ravel())


def test_dst_rmw_add_accumulates_in_fp32(program):
    p = program
    x = p.input("x", [2, 4])
    acc = p.output("acc", [2, 4], "float16")
    init = p.input("init", [2, 4], "float16")
    p.add("DMA", ins=[init], outs=[acc])
    p.add("DMA", ins=[x], outs=[acc], dst_rmw_op="add")
    p.add("DMA", ins=[x], outs=[acc], dst_rmw_op="add")
    xv = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    iv = np.full((2, 4), 10.0, np.float16)
    got = p.run(x=xv, init=iv)["acc"]
    step1 = (iv.astype(np.float32) + xv).astype(np.float16)
    np.testing.assert_array_equal(got, (step1.astype(np.float32) + xv).astype(np.float16))


def test_transpose_mode_lands_a_b_source_as_b_a(program):
    p = program
    x = p.input("x", [3, 5])
    t = p.sbuf("t", 5, 3)
    p.load(t, x, mode="Transpose")
    p.store(p.output("y", [5, 3]), t)
    xv = np.arange(15, dtype=np.float32).reshape(3, 5)
    np.testing.assert_array_equal(p.run(x=xv)["y"], xv.T)


def gather_program(program, oob_is_err):
    p = program
    table = p.input("table", [6, 4])
    index = p.input("index", [3, 1], "int32")
    index_tile = p.sbuf("index_tile", 3, 1, "int32")
    p.load(index_tile, index)
    rows = p.sbuf("rows", 3, 4)
    p.add("Memset", outs=[rows], constant=-1.0)
    p.add("DMA", ins=[table, index_tile], outs=[rows], name="gather", oob_is_err=oob_is_err)
    p.store(p.output("y", [3, 4]), rows)
    return p


def test_indirect_dma_gathers_rows(program):
    table = np.arange(24, dtype=np.float32).reshape(6, 4)
    got = gather_program(program, True).run(table=table, index=np.array([[5], [0], [5]], np.int32))["y"]
    np.testing.assert_array_equal(got, table[[5, 0, 5]])


def test_indirect_dma_out_of_range_rows_are_refused_or_skipped(new_program):
    table = np.arange(24, dtype=np.float32).reshape(6, 4)
    index = np.array([[1], [6], [-1]], np.int32)
    with pytest.raises(SimulationError, match=r"'gather' DMA: index 6 for row 1 is outside the 6 rows of ins\[0\]"):
        gather_program(new_program(), True).run(table=table, index=index)
    got = gather_program(new_program(), False).run(table=table, index=index)["y"]
    np.testing.assert_array_equal(got, [table[1], [-1.0] * 4, [-1.0] * 4])


@pytest.mark.parametrize("fields, message", [
    (dict(mode="Replicate"), "DMA mode Replicate is not modelled"),
    (dict(dst_rmw_op="mult"), "dst_rmw_op mult is not modelled"),
])
def test_dma_refusals(program, fields, message):
    p = program
    x = p.input("x", [2, 4])
    p.add("DMA", ins=[x], outs=[p.output("y", [2, 4])], **fields)
    with pytest.raises(SimulationError, match=message):
        p.run(x=np.zeros((2, 4), np.float32))


def test_dma_element_counts_must_match(program):
    p = program
    x = p.input("x", [2, 4])
    p.add("DMA", ins=[x], outs=[p.output("y", [2, 3])])
    with pytest.raises(SimulationError, match=r"ins\[0\] has 8 elements, outs\[0\] has 6"):
        p.run(x=np.zeros((2, 4), np.float32))

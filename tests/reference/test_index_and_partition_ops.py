"""Iota, TensorScalarAffineSelect, RangeSelect, StreamShuffle and StreamTranspose."""

import numpy as np
import pytest

from neuronxsim import SimulationError


def test_iota_computes_the_affine_expression_exactly(run_op):
    got = run_op("Iota", [], [((4, 6), "int32")], base=-5, channel_multiplier=100, pattern=[(1, 2), (10, 3)])[0]
    p, i, j = np.meshgrid(np.arange(4), np.arange(2), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(got, (-5 + 100 * p + 1 * i + 10 * j).reshape(4, 6))
    # computed in int64: exact beyond 2^24 when stored as int32
    big = run_op("Iota", [], [((2, 2), "int32")], base=2**24 + 1, channel_multiplier=2, pattern=[(1, 2)])[0]
    np.testing.assert_array_equal(big, [[2**24 + 1, 2**24 + 2], [2**24 + 3, 2**24 + 4]])
    as_float = run_op("Iota", [], [((1, 3), "float32")], base=0, pattern=[(-3, 3)])[0]
    np.testing.assert_array_equal(as_float, [[0.0, -3.0, -6.0]])


def test_iota_pattern_must_span_the_output(run_op):
    with pytest.raises(SimulationError, match=r"pattern \[\[1, 2\], \[1, 2\]\] spans 4 elements, outs\[0\] has 6"):
        run_op("Iota", [], [((4, 6), "int32")], pattern=[(1, 2), (1, 2)])


def test_affine_select_builds_a_causal_mask(run_op):
    x = np.arange(16, dtype=np.float32).reshape(4, 4) + 1
    # keep where p - j >= 0 (on and below the diagonal)
    got = run_op("TensorScalarAffineSelect", [x], [(x.shape, "float32")], base=0, channel_multiplier=1,
                 pattern=[(-1, 4)], compare_op="is_ge", fill_value=-9984.0)[0]
    np.testing.assert_array_equal(got, np.where(np.tri(4, dtype=bool), x, np.float32(-9984.0)))


def test_range_select_keeps_a_per_partition_window_and_its_max(run_op):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 10)).astype(np.float32)
    low = np.array([[2.0], [0.0], [7.0]], np.float32)
    high = np.array([[6.0], [3.0], [20.0]], np.float32)
    out, peak = run_op("RangeSelect", [x, low, high], [((3, 10), "float32"), ((3, 1), "float32")],
                       comp_op0="is_ge", comp_op1="is_lt", range_start=1, fill_value=-100.0)
    position = np.arange(10) + 1
    keep = (position >= low) & (position < high)
    want = np.where(keep, x, np.float32(-100.0))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(peak[:, 0], want.max(axis=1))


def test_stream_shuffle_moves_lanes_within_quadrants(run_op):
    x = np.arange(64 * 3, dtype=np.float32).reshape(64, 3)
    mask = [(i * 7) % 32 for i in range(32)]
    mask[5] = 255  # lanes 5 and 37 are left unwritten
    got = run_op("StreamShuffle", [x], [(x.shape, "float32")], shuffle_mask=mask)[0]
    for lane in range(64):
        if lane % 32 == 5:
            assert np.isnan(got[lane]).all()  # never written, so still NaN
        else:
            np.testing.assert_array_equal(got[lane], x[32 * (lane // 32) + mask[lane % 32]])


def test_stream_shuffle_takes_fewer_input_lanes_than_it_writes(run_op):
    # One input lane broadcast to a quadrant (NKI's nc_stream_shuffle example 2); a lane the
    # input does not have is refused by its own count, not the output's.
    x = np.arange(5, dtype=np.float32).reshape(1, 5)
    got = run_op("StreamShuffle", [x], [((32, 5), "float32")], shuffle_mask=[0] * 32)[0]
    np.testing.assert_array_equal(got, np.broadcast_to(x, (32, 5)))
    with pytest.raises(SimulationError, match="output lane 0 takes input lane 3 of 2"):
        run_op("StreamShuffle", [np.zeros((2, 5), np.float32)], [((32, 5), "float32")],
               shuffle_mask=[3] * 32)


@pytest.mark.parametrize("mask, message", [
    ([0] * 31, "shuffle_mask has 31 entries, expected 32"),
    ([40] + [0] * 31, "shuffle_mask entry 40 is neither"),
    ([9] + [0] * 31, "output lane 0 takes input lane 9 of 8"),
])
def test_stream_shuffle_refusals(run_op, mask, message):
    x = np.zeros((8, 2), np.float32)
    with pytest.raises(SimulationError, match=message):
        run_op("StreamShuffle", [x], [(x.shape, "float32")], shuffle_mask=mask)


def test_stream_transpose(run_op):
    x = np.arange(32 * 5, dtype=np.float32).reshape(32, 5)
    got = run_op("StreamTranspose", [x], [((5, 32), "bfloat16")])[0]
    np.testing.assert_array_equal(got.astype(np.float32), x.T)
    with pytest.raises(SimulationError, match="StreamTranspose takes at most 32x32, ins.0. is 4x33"):
        run_op("StreamTranspose", [np.zeros((4, 33), np.float32)], [((33, 4), "float32")])
    with pytest.raises(SimulationError, match=r"outs\[0\]: has 4 partitions, expected 5"):
        run_op("StreamTranspose", [np.zeros((4, 5), np.float32)], [((4, 5), "float32")])


def test_stream_transpose_of_one_dtype_copies_exactly(run_op):
    """Of one dtype the elements are copied, not read as fp32 (docs/isa-semantics.md §2): int32
    values fp32 cannot hold arrive unchanged; into another dtype they convert through fp32."""
    x = np.array([[2**24 + 1, 2**31 - 1, -123456789], [-(2**31), 5, 2**25 + 3]], np.int32)
    same, fp32 = run_op("StreamTranspose", [x], [((3, 2), "int32")])[0], run_op("StreamTranspose", [x], [((3, 2), "float32")])[0]
    np.testing.assert_array_equal(same, x.T)
    np.testing.assert_array_equal(fp32, x.T.astype(np.float32))

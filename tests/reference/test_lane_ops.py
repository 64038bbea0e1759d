"""Per-lane instructions: TensorReduce, TensorTensorScan, BNStats, BNStatsAggregate, Max,
MaxIndex, MatchReplace, SelectReduce."""

import numpy as np
import pytest

from neuronxsim import SimulationError

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("axis", ["X", "XY", "XYZ", "XYZW"])
def test_tensor_reduce_folds_the_innermost_free_dims(run_op, axis):
    x = RNG.normal(size=(4, 2, 3, 5, 6)).astype(np.float32)  # free shape [2, 3, 5, 6]
    folded = tuple(range(5 - len(axis), 5))  # X folds the last free dim, XY the last two, ...
    want = x.astype(np.float64).sum(axis=folded).reshape(4, -1)
    got = run_op("TensorReduce", [x], [(want.shape, "float32")], op="add", axis=axis)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_tensor_reduce_ops_and_negate(run_op):
    x = RNG.uniform(0.5, 2.0, size=(3, 4, 6)).astype(np.float32)
    got = run_op("TensorReduce", [x], [((3, 4), "float32")], op="max", axis="X", negate=True)[0]
    np.testing.assert_array_equal(got, -x.max(axis=2))
    got = run_op("TensorReduce", [x], [((3, 4), "float32")], op="mult", axis="X")[0]
    np.testing.assert_allclose(got, x.astype(np.float64).prod(axis=2), rtol=1e-6)
    # subtract folds left to right from the first element: x0 - x1 - x2 - ...
    got = run_op("TensorReduce", [x], [((3, 4), "float32")], op="subtract", axis="X")[0]
    np.testing.assert_allclose(got, x[..., 0] - x[..., 1:].astype(np.float64).sum(axis=2), rtol=1e-5)
    ints = RNG.integers(0, 2**16, size=(3, 4, 6)).astype(np.float32)
    got = run_op("TensorReduce", [ints], [((3, 4), "float32")], op="bitwise_or", axis="X")[0]
    np.testing.assert_array_equal(got, np.bitwise_or.reduce(ints.astype(np.int32), axis=2))


@pytest.mark.parametrize("axis, message", [
    ("XYZ", r"reduce axis XYZ folds 3 free dims but ins\[0\] has 2 \(\[4, 6\]\)"),
    ("C", "reduce axis C folds the partition dim"),
    ("XYZWC", "reduce axis XYZWC folds the partition dim"),
])
def test_tensor_reduce_refusals(run_op, axis, message):
    x = np.ones((3, 4, 6), np.float32)
    with pytest.raises(SimulationError, match=message):
        run_op("TensorReduce", [x], [((3, 1), "float32")], op="add", axis=axis)


def test_tensor_reduce_output_size_must_match_the_kept_dims(run_op):
    with pytest.raises(SimulationError, match=r"outs\[0\]: has 6 elements per partition, expected 4"):
        run_op("TensorReduce", [np.ones((3, 4, 6), np.float32)], [((3, 6), "float32")], axis="X")


def test_tensor_tensor_scan(run_op):
    a = RNG.uniform(0.5, 1.0, size=(4, 10)).astype(np.float32)
    b = RNG.normal(size=(4, 10)).astype(np.float32)
    initial = np.array([[1.0], [2.0], [-1.0], [0.0]], np.float32)

    def scan(r0):
        out = np.empty_like(a)
        r = r0.astype(np.float32)
        for i in range(a.shape[1]):  # r = (a[i] * r) + b[i]
            r = a[:, i] * r + b[:, i]
            out[:, i] = r
        return out
    got = run_op("TensorTensorScan", [a, b], [(a.shape, "float32")], op0="mult", op1="add", initial=0.5)[0]
    np.testing.assert_allclose(got, scan(np.full(4, 0.5)), rtol=1e-6, atol=1e-6)
    got = run_op("TensorTensorScan", [a, b, initial], [(a.shape, "float32")], op0="mult", op1="add")[0]
    np.testing.assert_allclose(got, scan(initial[:, 0]), rtol=1e-6, atol=1e-6)
    # op0 receives (data0, r): subtract gives a[i] - r
    got = run_op("TensorTensorScan", [a, b], [(a.shape, "float32")], op0="subtract", op1="max")[0]
    r, want = np.zeros(4, np.float32), []
    for i in range(a.shape[1]):
        r = np.maximum(a[:, i] - r, b[:, i])
        want.append(r)
    np.testing.assert_allclose(got, np.stack(want, axis=1), rtol=1e-6)


def population_stats(values):
    if values.size == 0:
        return [0.0, 0.0, 0.0]
    return [values.size, values.mean(), values.var() * values.size]


@pytest.mark.parametrize("n", [1, 7, 512])
def test_bn_stats_of_even_and_odd_elements(run_op, n):
    x = RNG.normal(loc=3.0, size=(4, n)).astype(np.float32)
    got = run_op("BNStats", [x], [((4, 6), "float32")])[0]
    x64 = x.astype(np.float64)
    want = [population_stats(row[0::2]) + population_stats(row[1::2]) for row in x64]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bn_stats_takes_at_most_512_elements(run_op):
    with pytest.raises(SimulationError, match="BNStats takes at most 512 elements per partition, ins.0. has 513"):
        run_op("BNStats", [np.ones((2, 513), np.float32)], [((2, 6), "float32")])


def test_bn_stats_aggregate_combines_triples_skipping_empty_ones(run_op):
    chunks = [RNG.normal(loc=k, size=(3, n)) for k, n in enumerate((5, 8, 3))]
    triples = [np.stack([np.full(3, c.shape[1]), c.mean(axis=1), c.var(axis=1) * c.shape[1]], axis=1)
               for c in chunks]
    empty = np.tile([0.0, 1e30, 1e30], (3, 1))  # count 0: its mean and variance are ignored
    x = np.concatenate(triples[:2] + [empty] + triples[2:], axis=1).astype(np.float32)
    got = run_op("BNStatsAggregate", [x], [((3, 2), "float32")])[0]
    union = np.concatenate(chunks, axis=1)
    np.testing.assert_allclose(got, np.stack([union.mean(axis=1), union.var(axis=1)], axis=1), rtol=1e-5, atol=1e-6)
    nothing = run_op("BNStatsAggregate", [np.zeros((2, 6), np.float32)], [((2, 2), "float32")])[0]
    assert np.isnan(nothing).all()  # the mean and variance of no elements
    with pytest.raises(SimulationError, match="not a whole number of"):
        run_op("BNStatsAggregate", [np.zeros((2, 7), np.float32)], [((2, 2), "float32")])


def test_bn_stats_then_aggregate_gives_mean_and_variance(program):
    p = program
    x = RNG.normal(loc=-2.0, scale=3.0, size=(8, 200)).astype(np.float32)
    t = p.sbuf("t", 8, 200)
    p.load(t, p.input("x", [8, 200]))
    stats = p.sbuf("stats", 8, [2, 6])
    for half in range(2):  # two bn_stats records of 100 elements each
        p.add("BNStats", ins=[p.ap(t, [[200, 8], [1, 100]], offset=100 * half)],
              outs=[p.ap(stats, [[12, 8], [1, 6]], offset=6 * half)])
    aggregated = p.sbuf("aggregated", 8, 2)
    p.add("BNStatsAggregate", ins=[stats], outs=[aggregated])
    p.store(p.output("y", [8, 2]), aggregated)
    got = p.run(x=x)["y"]
    np.testing.assert_allclose(got[:, 0], x.astype(np.float64).mean(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[:, 1], x.astype(np.float64).var(axis=1), rtol=1e-5)


def test_max_gives_the_eight_largest_descending(run_op):
    x = RNG.permutation(np.arange(40, dtype=np.float32)).reshape(2, 20)
    got = run_op("Max", [x], [((2, 8), "float32")])[0]
    np.testing.assert_array_equal(got, -np.sort(-x, axis=1)[:, :8])
    with pytest.raises(SimulationError, match="Max needs at least 8 elements per partition"):
        run_op("Max", [np.ones((2, 7), np.float32)], [((2, 8), "float32")])


def test_max_index_finds_first_occurrences(run_op):
    data = np.array([[5, 3, 9, 3, 1, 9, 0, 2, 7, 4]], np.float32)
    values = np.array([[9, 3, 7, 0, 2, 5, 4, 42]], np.float32)
    got = run_op("MaxIndex", [data, values], [((1, 8), "uint32")])[0]
    np.testing.assert_array_equal(got, [[2, 1, 8, 6, 7, 0, 9, 0xFFFFFFFF]])


def test_match_replace_replaces_first_not_yet_replaced_occurrences(run_op):
    data = np.array([[5, 3, 9, 3, 1, 9, 0, 2, 7, 3]], np.float32)
    values = np.array([[3, 3, 9, -1, 3, 3, 0, 11]], np.float32)  # 3 three times, then not found
    replaced, indices = run_op("MatchReplace", [data, values], [((1, 10), "float32"), ((1, 8), "uint32")],
                               imm_value=-1.0)
    np.testing.assert_array_equal(replaced, [[5, -1, -1, -1, 1, 9, -1, 2, 7, -1]])
    # values visited 7..0: -1 equals imm_value but matches no original element; the last 3 visited (k = 0) finds none left
    np.testing.assert_array_equal(indices, [[0xFFFFFFFF, 9, 2, 0xFFFFFFFF, 3, 1, 6, 0xFFFFFFFF]])


def test_select_reduce(run_op):
    predicate = RNG.integers(0, 2, size=(4, 12)).astype(np.float32)
    on_true, on_false = RNG.normal(size=(2, 4, 12)).astype(np.float32)
    out, reduced = run_op("SelectReduce", [predicate, on_true, on_false], [((4, 12), "float32"), ((4, 1), "float32")],
                          reduce_op="add")
    want = np.where(predicate != 0, on_true, on_false)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(reduced[:, 0], want.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-6)
    out, reduced = run_op("SelectReduce", [predicate, on_true], [((4, 12), "float32"), ((4, 1), "float32")],
                          on_false_value=-7.0)
    want = np.where(predicate != 0, on_true, np.float32(-7.0))
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(reduced[:, 0], want.max(axis=1))  # reduce_op defaults to max

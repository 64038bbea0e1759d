"""The configurations of a sweep: grid values read as typed literals, shape sets, generations,
and every malformed grid refused with one line naming it."""

import pytest

from neuronxsim.sweep.space import (SweepError, configurations, parse_archs, parse_args,
                                    parse_grid, parse_shape, split_values)


def test_values_are_python_literals_else_text():
    grid = parse_grid(["A=1,2,4", "B=0.5,True,None", "C=(1, 2),[3,4]", "D=mnk,'n,m'"])
    assert grid == {"A": [1, 2, 4], "B": [0.5, True, None], "C": [(1, 2), [3, 4]],
                    "D": ["mnk", "n,m"]}
    assert [type(v) for v in grid["A"]] == [int, int, int]


def test_commas_inside_brackets_and_quotes_stay():
    assert split_values("(1,2), [3,(4,5)], 'a,b', x") == ["(1,2)", "[3,(4,5)]", "'a,b'", "x"]


@pytest.mark.parametrize("spec, message", [
    ("A=", "an empty value"),
    ("A=1,,2", "an empty value"),
    ("A", "expected NAME=v1,v2"),
    ("1A=2", "expected NAME=v1,v2"),
    ("A=1,2,1", "the value 1 is listed twice"),
    ("A={1: 2}", "dict values are not supported"),
])
def test_malformed_grids_are_refused(spec, message):
    with pytest.raises(SweepError, match=message):
        parse_grid([spec])


def test_a_parameter_given_twice_and_an_empty_grid_are_refused():
    with pytest.raises(SweepError, match="given twice"):
        parse_grid(["A=1", "A=2"])
    with pytest.raises(SweepError, match="an empty grid"):
        parse_grid([])


def test_one_and_1_0_are_different_values():
    assert parse_grid(["A=1,1.0,True"]) == {"A": [1, 1.0, True]}


def test_shapes_and_generations():
    s = parse_shape("1024x4096:bfloat16")
    assert (s.shape, s.dtype, s.text) == ((1024, 4096), "bfloat16", "1024x4096:bfloat16")
    assert parse_shape("128x512").dtype == "float32"
    for bad, message in (("128x0", "positive"), ("12a", "dims joined by 'x'"),
                         ("128:float128", "unknown dtype")):
        with pytest.raises(SweepError, match=message):
            parse_shape(bad)
    assert parse_archs("trn1,trn2") == ["trn1", "trn2"]
    assert parse_archs(None) == [None]
    with pytest.raises(SweepError, match="unknown generation 'trn9'"):
        parse_archs("trn1,trn9")
    assert parse_args(["scale=0.5", "name=x"]) == {"scale": 0.5, "name": "x"}


def test_the_cross_product_in_order():
    shapes = [[parse_shape("128x512")], [parse_shape("256x512")]]
    configs = configurations({"A": [1, 2], "B": ["x", "y", "z"]}, shapes, ["trn1", "trn2"])
    assert len(configs) == 2 * 2 * 2 * 3
    assert [c.param_dict for c in configs[:3]] == [{"A": 1, "B": "x"}, {"A": 1, "B": "y"},
                                                   {"A": 1, "B": "z"}]
    assert [c.arch for c in configs[:12:6]] == ["trn1", "trn2"]
    assert configs[12].shapes[0].shape == (256, 512)

"""A matmul accumulated into a PSUM region that partly overlaps the region of an earlier
accumulation group. Such a first matmul used to start a group of its own (start_tensor_calc),
which overwrote the overlap and silently lost the earlier group's results. It is refused now,
at the kernel's line, in both dialects; regions apart from each other, and a group's own region,
still accumulate."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
import neuronxsim.nki06 as nki06
import neuronxsim.nki06.isa as nisa06
import neuronxsim.nki06.language as nl06
from neuronxsim.nki.tracer import Tracer
from nki_testing import close, run_on

T = nki.typing.tensor
ARGS = (T[[128, 128], nl.float32], T[[128, 512], nl.float32], T[[128, 128], nl.float32])
SRC = open(__file__).read().splitlines()
OVERLAP = "partly overlap the region of an earlier accumulation group"


def line_of(tag: str) -> int:
    return next(i + 1 for i, text in enumerate(SRC) if text.rstrip().endswith(f"# AT:{tag}"))


@nki.jit
def whole_then_part(a, b, c):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    acc += nisa.nc_matmul(x, nl.load(b))
    acc[:, 0:128] += nisa.nc_matmul(x, nl.load(c))  # AT:whole_then_part
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def whole_then_part_through_a_name(a, b, c):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    for k in nl.affine_range(2):
        acc += nisa.nc_matmul(x, nl.load(b))
    t = nisa.nc_matmul(x, nl.load(c))
    acc[:, 0:128] += t  # AT:through_a_name
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def part_then_whole(a, b, c):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    acc[:, 0:128] += nisa.nc_matmul(x, nl.load(c))
    acc += nisa.nc_matmul(x, nl.load(b))  # AT:part_then_whole
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def assigned_then_part(a, b, c):
    """A tile written first by a copy, then by an assigned matmul (whose group covers it)."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    acc[...] = nl.copy(nl.load(b))
    acc[...] = nisa.nc_matmul(x, nl.load(b))
    acc[:, 0:128] += nisa.nc_matmul(x, nl.load(c))  # AT:assigned_then_part
    nl.store(out, value=nl.copy(acc))
    return out


@nki.jit
def apart_and_repeated(a, b, c):
    """Column blocks apart from each other, each accumulated twice: no refusal."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    y = nl.load(b)
    for k in nl.affine_range(2):
        for j in nl.affine_range(4):
            acc[:, j * 128:(j + 1) * 128] += nisa.nc_matmul(x, y[:, j * 128:(j + 1) * 128])
    acc[:, 0:128] += nisa.nc_matmul(x, nl.load(c))
    nl.store(out, value=nl.copy(acc))
    return out


@pytest.fixture(params=["C", "Python"])
def place_matmul(request, monkeypatch):
    """Both implementations of Tracer.place_matmul: the C one and ``_place_matmul_general``."""
    if request.param == "Python":
        monkeypatch.setattr(Tracer, "place_matmul", Tracer._place_matmul_general)
    else:
        assert isinstance(Tracer.place_matmul, type(Tracer.record)), "C place_matmul expected"
    return request.param


@pytest.mark.parametrize("kernel, tag, ours, theirs", [
    (whole_then_part, "whole_then_part", "columns 0..127", "columns 0..511"),
    (whole_then_part_through_a_name, "through_a_name", "columns 0..127", "columns 0..511"),
    (part_then_whole, "part_then_whole", "columns 0..511", "columns 0..127"),
    (assigned_then_part, "assigned_then_part", "columns 0..127", "columns 0..511"),
])
def test_an_overlapping_first_accumulation_is_refused_at_its_line(place_matmul, kernel, tag,
                                                                   ours, theirs):
    with pytest.raises(nki.NKIError) as info:
        nki.trace(kernel, *ARGS)
    err = info.value
    assert (err.location.path, err.location.line) == (__file__, line_of(tag)), str(err)
    text = str(err)
    assert OVERLAP in text and "is not modelled" in text, text
    assert f"partitions 0..127, {ours} of PSUM tile" in text, text
    assert f"(partitions 0..127, {theirs})" in text, text


@nki.jit
def group_then_add_then_group(a, b, c):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    acc += nisa.nc_matmul(x, nl.load(b))
    acc += nl.full((128, 512), 1.0, dtype=nl.float32)  # a non-matmul write ends the group
    acc += nisa.nc_matmul(x, nl.load(b))  # AT:group_add_group
    nl.store(out, value=nl.copy(acc))
    return out


def test_accumulating_onto_a_non_matmul_result_names_that_not_an_overlap(place_matmul):
    # (The group's own, closed region was taken for a partly overlapping one.)
    with pytest.raises(nki.NKIError) as info:
        nki.trace(group_then_add_then_group, *ARGS)
    err = info.value
    assert (err.location.path, err.location.line) == (__file__, line_of("group_add_group")), str(err)
    assert OVERLAP not in str(err) and "holds a result of a non-matmul instruction" in str(err), str(err)


def test_regions_apart_and_a_groups_own_region_still_accumulate(place_matmul):
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((128, 128), (128, 512),
                                                                   (128, 128)))
    got = run_on("simulator", apart_and_repeated, a, b, c)
    want = 2 * (a.T @ b)
    want[:, 0:128] += a.T @ c
    close(got, want, rtol=1e-4, atol=1e-3)


def test_nki06_accumulate_true_onto_an_overlapping_region_is_refused():
    @nki06.jit
    def kernel(a, b):
        t = nl06.ndarray(a.shape, dtype=a.dtype, buffer=nl06.sbuf)
        nisa06.dma_copy(dst=t, src=a)
        u = nl06.ndarray(b.shape, dtype=b.dtype, buffer=nl06.sbuf)
        nisa06.dma_copy(dst=u, src=b)
        p = nl06.ndarray((128, 512), dtype=nl06.float32, buffer=nl06.psum)
        nisa06.nc_matmul(dst=p, stationary=t, moving=u)
        nisa06.nc_matmul(dst=p[:, 0:128], stationary=t, moving=t, accumulate=True)  # AT:nki06
        r = nl06.ndarray((128, 512), dtype=nl06.float32, buffer=nl06.sbuf)
        nisa06.tensor_copy(dst=r, src=p)
        out = nl06.ndarray((128, 512), dtype=nl06.float32, buffer=nl06.shared_hbm)
        nisa06.dma_copy(dst=out, src=r)
        return out

    a = np.ones((128, 128), np.float32)
    b = np.ones((128, 512), np.float32)
    with pytest.raises(nki.NKIError, match=OVERLAP) as info:
        nki06.simulate(kernel)(a, b)
    assert f"test_psum_overlapping_groups.py:{line_of('nki06')}" in str(info.value)

"""Launching NKI 0.6 kernels: LNC=2 on two physical NeuronCores, the target generation from
NEURON_PLATFORM_TARGET_OVERRIDE, the outputs' buffer, argument dtypes."""

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki06.kernel import profile, trace_kernel
from nki06_testing import run


@nki.jit
def reciprocal_halves(x):
    """The LNC overview's kernel: one [128, F] half per core under LNC=2, both halves otherwise."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    halves = range(2) if nl.num_programs() == 1 else [nl.program_id(0)]
    for i in halves:
        t = nl.ndarray(x.shape[1:], dtype=x.dtype, buffer=nl.sbuf)
        r = nl.ndarray(x.shape[1:], dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i])
        nisa.reciprocal(dst=r, data=t)
        nisa.dma_copy(dst=out[i], src=r)
    return out


def test_lnc2_runs_one_function_per_core_on_shared_hbm(rng):
    x = rng.uniform(1, 2, (2, 128, 2048)).astype(np.float32)
    both = nki.simulate(reciprocal_halves[2])(x)
    np.testing.assert_allclose(both, 1 / x, rtol=1e-6)
    traced = trace_kernel(reciprocal_halves[2], x)
    assert traced.num_cores == 2 and len(traced.module.functions) == 2
    # each core moves half the data, side by side: faster than one core doing both halves
    one = profile(reciprocal_halves, x).total_ns
    two = profile(reciprocal_halves[2], x).total_ns
    assert two < 0.75 * one


def test_program_queries_under_lnc2():
    seen = []

    @nki.jit
    def k(x):
        seen.append((nl.program_id(), nl.num_programs(), nl.program_ndim()))
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        half = slice(2 * nl.program_id(), 2 * nl.program_id() + 2)  # two cores may not write the same rows
        nl.store(out[half], value=nl.load(x[half]))
        return out

    run(k[2], np.zeros((4, 4), np.float32))
    assert seen == [(0, 2, 1), (1, 2, 1)]


@pytest.mark.parametrize("launch,match", [
    (lambda k: k[2], r"LNC=2 .*trn1 \(NeuronCore-v2\) has 1"),
    (lambda k: k[3], "LNC=3"),
    (lambda k: k[2, 1], "one integer"),
    (lambda k: k[0], "at least 1"),
])
def test_bad_launches(launch, match, monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.raises(NKIError, match=match):
        launch(reciprocal_halves)(np.ones((2, 128, 8), np.float32))


@pytest.mark.parametrize("value,version", [("trn1", "gen2"), ("inf2", "gen2"), ("gen2", "gen2"),
                                           ("trn2", "gen3"), ("gen3", "gen3"), (None, "gen3")])
def test_target_from_the_environment(value, version, monkeypatch):
    if value is not None:
        monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", value)
    seen = []

    @nki.jit
    def k(x):
        seen.append(nisa.get_nc_version())
        return reciprocal_halves.func(x)

    k(np.ones((2, 128, 8), np.float32))
    assert seen == [getattr(nisa.nc_version, version)]


@pytest.mark.parametrize("value,match", [("trn3", "not modelled"), ("gen4", "not modelled"),
                                         ("tpu", "expected trn1")])
def test_unmodelled_or_unknown_targets_are_refused(value, match, monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", value)
    with pytest.raises(NKIError, match=match):
        reciprocal_halves(np.ones((2, 128, 8), np.float32))


@pytest.mark.parametrize("buffer", ["hbm", "private_hbm"])
def test_outputs_must_be_shared_hbm(buffer):
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=getattr(nl, buffer))
        nl.store(out, value=nl.load(x))
        return out

    with pytest.raises(NKIError, match="all kernel output \\(return\\) tensors must be allocated "
                                       "with buffer=nl.shared_hbm"):
        k(np.ones((4, 4), np.float32))


def test_a_kernel_returning_a_tile_is_refused():
    @nki.jit
    def k(x):
        return nl.load(x)

    with pytest.raises(NKIError, match="SBUF tile"):
        k(np.ones((4, 4), np.float32))


def test_trn3_data_types_in_arguments_are_refused_naming_the_generation():
    x = np.ones((4, 4), ml_dtypes.float8_e4m3fn)
    with pytest.raises(NKIError, match=r"float8_e4m3fn is a NeuronCore-v4 \(trn3\) data type; "
                                       r"trn2 \(NeuronCore-v3\) does not have it"):
        reciprocal_halves(x)


def test_kernels_call_helpers_and_other_kernels_inline(rng):
    x = rng.standard_normal((8, 8)).astype(np.float32)

    @nki.jit
    def inner(t):
        return nl.exp(t)

    @nki.jit
    def outer(a):
        r = inner(nl.load(a))
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=r)
        return out

    np.testing.assert_allclose(outer(x), np.exp(x), rtol=2e-6)
    assert trace_kernel(outer, x).outputs[0].name == "out"


def _refusal(kernel, *args) -> NKIError:
    with pytest.raises(NKIError) as info:
        trace_kernel(kernel, *args)
    return info.value


def _line(func, text: str) -> int:
    """The line of ``func``'s source holding ``text``."""
    import inspect
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_bad_loop_bounds_and_launch_axes_are_nki_errors_at_the_kernel_line():
    def kernel(x, expr):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        v = expr()  # the refused call
        nisa.dma_copy(dst=out, src=x)
        return out

    k = nki.jit(kernel)
    x = np.zeros((4, 4), np.float32)
    for expr, text in [
            (lambda: list(nl.affine_range(0, 4, 0)), "nl.affine_range(0, 4, step=0): the step "
                                                     "must not be zero"),
            (lambda: list(nl.static_range(2.0)), "nl.static_range(2.0): loop bounds are integers"),
            (lambda: nl.program_id("a"), "nl.program_id('a'): a launch axis is an integer, not "
                                         "str; an NKI 0.6 launch has the one axis 0"),
            # (the page: "axes – the axes of the launch grid"; a 0.6 launch has one, so a tuple of
            # axes is refused for what it is, not as a missing axis)
            (lambda: nl.num_programs((0,)), "nl.num_programs((0,)): takes the axis 0, not a tuple "
                                            "of axes"),
            (lambda: nl.num_programs(1), "nl.num_programs(1): there is no such axis")]:
        err = _refusal(k, x, expr)
        assert text in str(err), str(err)
        # the lambda's line: the one that calls into nl
        assert err.location.line == expr.__code__.co_firstlineno, str(err)


@nki.jit
def returns_nested(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x)
    return (out, (out,))


def test_a_nested_return_is_refused_at_the_return_line():
    err = _refusal(returns_nested, np.zeros((4, 4), np.float32))
    assert "returns tuple (output 1)" in str(err)
    assert (err.location.path, err.location.line) == \
        (__file__, _line(returns_nested.func, "return (out, (out,))"))

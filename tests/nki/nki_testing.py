"""Helpers of the NKI front-end tests."""

import dataclasses

import numpy as np
import pytest

import neuronxsim.nki as nki
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.execution import bound_arrays, run_traced
from neuronxsim.nki.schedule import Schedule


def run_on(executor, kernel, *args, arch="trn1", **kwargs):
    """Traces ``kernel`` and runs it on ``executor`` ("simulator": neuronxsim.sim, what
    nki.simulate_kernel uses; "reference": the NumPy reference executor); returns the outputs as
    ``simulate_kernel`` does (one array, or a tuple). On the simulator, also runs the kernel in
    source order and requires the same bits: the scheduling pass never changes numerics."""
    source = nki.trace_kernel(kernel, *args, arch=arch, schedule="source", **kwargs)
    arrays = bound_arrays(kernel, args, kwargs)
    traced = scheduled(source)
    _, outputs = run_traced(traced, arrays, executor=executor, arch=arch)
    if executor == "simulator":
        assert_same_bits(outputs, run_traced(source, arrays, arch=arch)[1])
    values = tuple(outputs[o.name] for o in traced.outputs)
    return values[0] if len(values) == 1 else values


def scheduled(source):
    """A kernel traced in source order, with the scheduling pass run on a copy of its module
    (what a trace with the default ``schedule="compiler"`` gives, without tracing twice)."""
    module = source.module.clone()
    Schedule().run(module, source.arch)
    return dataclasses.replace(source, module=module)


def assert_same_bits(outputs: dict, expected: dict) -> None:
    """Every output byte for byte (NaNs included)."""
    assert outputs.keys() == expected.keys()
    for name, value in outputs.items():
        a, b = np.ascontiguousarray(value), np.ascontiguousarray(expected[name])
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), f"output {name!r} differs from the source-order run"


def run_on_reference(kernel, *args, arch="trn1", **kwargs):
    return run_on("reference", kernel, *args, arch=arch, **kwargs)


def close(actual, expected, atol, rtol=0.0):
    """Asserts |actual - expected| <= atol + rtol * |expected| elementwise, in float64."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, atol=atol, rtol=rtol)



def trace_outcome(kernel, *args) -> str:
    """The traced module's JSON, or the refusal's type and message: what the tests comparing a C
    fast path with the Python definition it stands for compare."""
    try:
        return nki.trace_kernel(kernel, *args).module.to_json(-1)
    except (NKIError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


def same_outcome(monkeypatch, python_only, kernel, *args) -> str:
    """``trace_outcome`` of ``kernel`` with the C fast paths, asserted equal to its outcome with
    ``python_only(m)`` applied in a monkeypatch context (the Python definitions alone); returns it."""
    fast = trace_outcome(kernel, *args)
    with monkeypatch.context() as m:
        python_only(m)
        general = trace_outcome(kernel, *args)
    assert fast == general
    return fast


def raises_alike(monkeypatch, python_only, exception, kernel, *args) -> None:
    """Tracing ``kernel`` raises ``exception`` with the C fast paths and with ``python_only(m)``
    applied (for the exceptions ``trace_outcome`` does not compare, e.g. an OverflowError)."""
    with pytest.raises(exception):
        nki.trace_kernel(kernel, *args)
    with monkeypatch.context() as m:
        python_only(m)
        with pytest.raises(exception):
            nki.trace_kernel(kernel, *args)


def use_definitions(m, module, names) -> None:
    """Within monkeypatch context ``m``: ``module``'s FastCalls ``names`` are their Python
    definitions (``__wrapped__``)."""
    for name in names:
        m.setattr(module, name, getattr(module, name).__wrapped__)


class HashRaises:
    """An operator or dtype whose hash raises ValueError: a memo lookup's error that is not
    "unhashable" (TypeError), which the Python definitions raise and the C paths must too."""

    def __hash__(self):
        raise ValueError("this object refuses to be hashed")

    def __call__(self, *args):
        return args[0]

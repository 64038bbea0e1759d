"""Helpers of the NKI front-end tests."""

import numpy as np

import neuronxsim.nki as nki
from neuronxsim.nki.execution import bound_arrays, run_traced


def run_on(executor, kernel, *args, arch="trn1", **kwargs):
    """Traces ``kernel`` and runs it on ``executor`` ("simulator": neuronxsim.sim, what
    nki.simulate_kernel uses; "reference": the NumPy reference executor); returns the outputs as
    ``simulate_kernel`` does (one array, or a tuple)."""
    traced = nki.trace_kernel(kernel, *args, arch=arch, **kwargs)
    _, outputs = run_traced(traced, bound_arrays(kernel, args, kwargs), executor=executor,
                            arch=arch)
    values = tuple(outputs[o.name] for o in traced.outputs)
    return values[0] if len(values) == 1 else values


def run_on_reference(kernel, *args, arch="trn1", **kwargs):
    return run_on("reference", kernel, *args, arch=arch, **kwargs)


def close(actual, expected, atol, rtol=0.0):
    """Asserts |actual - expected| <= atol + rtol * |expected| elementwise, in float64."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, atol=atol, rtol=rtol)


"""Activation functions at -inf and +inf take their limits: the public table "Supported
Activation Functions for NKI ISA" gives gelu, silu, mish, the gelu approximations and the gelu /
silu derivatives the valid input range [-inf, inf], where their formulas (x * Phi(x), x *
sigmoid(x), ...) give inf * 0. On both executors, over a tile wide enough for the simulator's
vectorised Gelu path, against the mathematical limits."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from nki_testing import run_on

# name: (f(-inf), f(+inf))
LIMITS = {
    "gelu": (0.0, np.inf), "silu": (0.0, np.inf), "mish": (0.0, np.inf),
    "gelu_apprx_tanh": (0.0, np.inf), "gelu_apprx_sigmoid": (0.0, np.inf),
    "gelu_dx": (0.0, 1.0), "silu_dx": (0.0, 1.0),
}


def activation_kernel(name):
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.activation(op=getattr(nl, name), data=nl.load(a)))
        return out
    return kernel


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("name", sorted(LIMITS))
def test_activation_takes_its_limits_at_infinity(executor, name, rng):
    x = rng.standard_normal((128, 64)).astype(np.float32)
    minus, plus = rng.random(x.shape) < 0.1, rng.random(x.shape) < 0.1
    plus &= ~minus
    x[minus], x[plus] = -np.inf, np.inf
    got = run_on(executor, activation_kernel(name), x)
    at_minus, at_plus = LIMITS[name]
    np.testing.assert_array_equal(got[minus], np.float32(at_minus))
    np.testing.assert_array_equal(got[plus], np.float32(at_plus))
    assert np.isfinite(got[~(minus | plus)]).all()

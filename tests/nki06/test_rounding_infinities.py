"""NKI 0.6's nl.floor / nl.ceil / nl.trunc are NumPy's: +-inf and NaN stay as they are, every
finite float rounds exactly, on both executors (lowered as x - mod(x, 1), they gave NaN at
+-inf, where numpy.mod does)."""

import numpy as np
import pytest

import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from nki06_testing import run, tile_kernel

SPECIAL = [np.inf, -np.inf, np.nan, 2.5, -2.5, 3e38, -3e38, 1.0, -1.0, 1e-8, -1e-8, 0.5, -0.5,
           8388607.5, -8388607.5, 8388608.0, 16777216.0, -16777218.0, 0.0]


@pytest.mark.parametrize("executor", ["simulator", "reference"])
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc"])
def test_rounding_keeps_infinities(executor, name, rng):
    x = (rng.standard_normal((128, 40)) * 100).astype(np.float32)
    x.flat[:len(SPECIAL)] = SPECIAL
    kernel = tile_kernel(lambda d, a: nisa.tensor_copy(dst=d, src=getattr(nl, name)(a)))
    np.testing.assert_array_equal(run(kernel, x, executor=executor), getattr(np, name)(x))

"""nl.floor / nl.ceil / nl.trunc are NumPy's ("Floor of the input, element-wise", ...): +-inf
and NaN stay as they are, every finite float rounds exactly, on both executors. (Lowered as
x - mod(x, 1), they gave NaN at +-inf, where numpy.mod does.)"""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from nki_testing import run_on

SPECIAL = [np.inf, -np.inf, np.nan, 2.5, -2.5, 3e38, -3e38, 1.0, -1.0, 1e-8, -1e-8, 0.5, -0.5,
           8388607.5, -8388607.5, 8388608.0, 16777216.0, -16777218.0, 0.0]


def values(rng, shape=(128, 40)):
    x = (rng.standard_normal(shape) * 100).astype(np.float32)
    x.flat[:len(SPECIAL)] = SPECIAL
    return x


@nki.jit
def rounded(a):
    out = nl.ndarray((3,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out[0], nl.floor(x))
    nl.store(out[1], nl.ceil(x))
    nl.store(out[2], nl.trunc(x))
    return out


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_floor_ceil_trunc_keep_infinities(executor, rng):
    x = values(rng)
    got = run_on(executor, rounded, x)
    for i, ref in enumerate((np.floor, np.ceil, np.trunc)):
        np.testing.assert_array_equal(got[i], ref(x), err_msg=ref.__name__)

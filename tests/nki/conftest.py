"""The NKI front-end tests import their kernel modules and helpers from this directory."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(params=["simulator", "reference"])
def executor(request):
    """Both executors of ISA BIR: the C++ simulator and the NumPy reference."""
    return request.param

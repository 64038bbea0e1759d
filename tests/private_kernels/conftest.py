"""The registry leaves' tests import their NumPy references and helpers (kernel_refs.py) from
this directory."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng():
    return np.random.default_rng(20250)

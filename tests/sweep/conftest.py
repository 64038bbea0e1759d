"""The sweep tests import their helpers from this directory and share one reference sweep."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sweep_testing import GRID, MATMUL, SHAPES  # noqa: E402


@pytest.fixture(scope="session")
def reference_sweep(tmp_path_factory):
    """The blocked-matmul sweep run once, uninterrupted, on one worker: (rows, its folder)."""
    from neuronxsim.sweep import sweep
    out = tmp_path_factory.mktemp("reference")
    return sweep(MATMUL, GRID, SHAPES, output=str(out), jobs=1), out


@pytest.fixture(scope="session")
def reference_rows(reference_sweep):
    return reference_sweep[0]

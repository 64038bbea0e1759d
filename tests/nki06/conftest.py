"""The NKI 0.6 dialect's tests import their helpers from this directory."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def rng():
    return np.random.default_rng(2026)


@pytest.fixture(autouse=True)
def _default_target(monkeypatch):
    """Every test runs on the default target unless it sets one."""
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)

"""Fixtures of the simulator tests; the helpers live in simkit.py beside this file."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from simkit import Kit  # noqa: E402


@pytest.fixture
def kit():
    return Kit()


@pytest.fixture
def kit2():
    return Kit("trn2")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)

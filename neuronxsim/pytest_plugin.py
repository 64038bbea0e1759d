"""A pytest plugin that runs NKI test files unmodified on neuronxsim: with it, ``import nki``
resolves to the NKI 0.6 dialect and ``import neuronxcc.nki`` to the 2.2x one
(``neuronxsim.importer``) for the whole session, collection included.

It is opt-in, loaded by name::

    pytest -p neuronxsim.pytest_plugin tests/
    pytest -p neuronxsim.pytest_plugin --neuronxsim-allow-shadowing tests/  # SDK installed too

(``neuronxsim exec -m pytest tests/`` does the same.)
"""

from __future__ import annotations

import pytest

from neuronxsim.importer import install


def pytest_addoption(parser):
    parser.getgroup("neuronxsim").addoption(
        "--neuronxsim-allow-shadowing", action="store_true",
        help="resolve nki/neuronxcc to neuronxsim even when the Neuron SDK is importable")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    config._neuronxsim_importer = install(
        allow_shadowing=config.getoption("neuronxsim_allow_shadowing"))


def pytest_unconfigure(config):
    context = getattr(config, "_neuronxsim_importer", None)
    if context is not None:
        context.__exit__(None, None, None)
        config._neuronxsim_importer = None

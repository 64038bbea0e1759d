"""What the CLI tests' child processes need: to import the neuronxsim the tests import, and to take
Ctrl-C as a terminal gives it."""

import os
import signal
import sys

import neuronxsim


def pythonpath() -> str:
    """PYTHONPATH for a subprocess: the neuronxsim these tests import (an in-place build or the
    installed package) first, and no empty entry, which would put the working directory (a source
    tree without its compiled core, under CI) in front of it."""
    package_root = os.path.dirname(os.path.dirname(neuronxsim.__file__))
    return os.pathsep.join([package_root] + [p for p in sys.path if p])


def sigint_as_a_terminal_gives_it():
    """preexec_fn of a child a test interrupts: Ctrl-C acts as on a terminal even when the test
    run was started in the background, where the shell ignores SIGINT and children inherit that
    (Python then installs no KeyboardInterrupt handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

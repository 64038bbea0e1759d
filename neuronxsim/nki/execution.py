"""Running traced kernels: ``simulate_kernel``, ``simulate`` and ``profile`` on the C++
tile-engine simulator (``neuronxsim.sim``)."""

from __future__ import annotations

import numpy as np

from .errors import NKIError
from .kernel import TracedKernel, trace_kernel, user_facing


class Profile:
    """What ``nki.profile`` reports: the simulator's result (outputs, time, per-engine
    statistics, timeline) for each NeuronCore, with the outputs by name."""

    def __init__(self, traced: TracedKernel, results: list, outputs: dict, trace_file):
        self.traced = traced
        self.results = results
        self.outputs = outputs
        self.trace_file = trace_file

    def __getattr__(self, name):
        return getattr(self.results[0], name)


def _simulator():
    try:
        from neuronxsim import sim
    except ImportError:
        raise NKIError("the tile-engine simulator (neuronxsim.sim) is not part of this build") from None
    return sim


def _inputs(traced: TracedKernel, args, kwargs) -> dict:
    raise NotImplementedError


@user_facing
def simulate_kernel(kernel, *args, arch: str = "trn1", **kwargs):
    raise NotImplementedError


def simulate(kernel, arch: str = "trn1"):
    raise NotImplementedError


@user_facing
def profile(kernel, *args, arch: str = "trn1", trace_file=None, **kwargs) -> Profile:
    raise NotImplementedError


_ = np

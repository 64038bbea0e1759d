"""A small kernel whose ``fault`` parameter makes it fail in each way a sweep must survive:
an assertion in the kernel, more SBUF than the NeuronCore has, an instruction the simulator
refuses (one Vector Engine instruction over more than its 65536 elements per partition) and a
crash that takes the worker process down."""

import os
import signal

import numpy as np

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def scale(a, factor=2.0, fault="none"):
    assert fault != "assert", "the kernel refuses this configuration"
    if fault == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    tile = nl.load(a)
    if fault == "sbuf":
        big = nl.zeros((nl.par_dim(rows), 1 << 16), dtype=nl.float32, buffer=nl.sbuf)
        tile = nl.add(tile, big[:, 0:cols])
    if fault == "illegal":
        wide = nl.zeros((nl.par_dim(rows), 70000), dtype=nl.bfloat16, buffer=nl.sbuf)
        tile = nl.add(tile, nl.copy(wide)[:, 0:cols])
    nl.store(out, value=nl.multiply(tile, factor))
    return out


def scale_reference(a, factor=2.0):
    return (a.astype(np.float32) * factor).astype(a.dtype)


def wrong_reference(a, factor=2.0):
    return a  # right for factor 1.0 only

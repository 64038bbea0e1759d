"""A refused trace (the kernel raised while it was recorded, or its tiles do not fit) leaves no
reference cycle behind: its record is freed by reference counting as the exception goes, not by
a later pass of the cyclic garbage collector (which costs tens of ms on a large record, in the
next configuration of a sweep)."""

import gc

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki.errors import NKIError
import neuronxsim.nki06 as nki06
import neuronxsim.nki06.isa as nisa06
import neuronxsim.nki06.language as nl06
from neuronxsim.nki06.kernel import trace_kernel as trace06

import tutorial_kernels as tk

T = nki.typing.tensor


@nki.jit
def _psum_overflow(a):  # 9 PSUM tiles, each from the one before, all read at the end: no order fits
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    t, tiles = nl.load(a), []
    for _ in range(9):
        tiles.append(nisa.nc_matmul(t, t))
        t = nl.copy(tiles[-1], dtype=a.dtype)
    for r in tiles:
        nl.store(out, value=nl.add(r, t))
    return out


@nki06.jit
def _copies06(a):
    out = nl06.ndarray((128, 512), dtype=a.dtype, buffer=nl06.shared_hbm)
    for i in nl06.affine_range(64):
        t = nl06.ndarray((128, 512), dtype=a.dtype, buffer=nl06.sbuf)
        nisa06.dma_copy(dst=t, src=a)
        nisa06.dma_copy(dst=out, src=t)
    return out


def _garbage_after_refusal(trace, *args, **kwargs) -> tuple:
    """(the refusal's message, how many objects the cyclic collector frees after it)."""
    gc.collect()
    try:
        trace(*args, **kwargs)
    except NKIError as e:  # (not kept: the test's frame would make a cycle with its traceback)
        message = str(e)
    else:
        raise AssertionError("the trace was not refused")
    return message, gc.collect()


def test_refused_while_recording_frees_the_record():
    message, garbage = _garbage_after_refusal(
        nki.trace_kernel, tk.matmul_blocked, T[[512, 512], nl.bfloat16],
        T[[512, 1024], nl.bfloat16], max_instructions=20)
    assert "records more than" in message
    assert garbage == 0


def test_refused_allocation_frees_the_record():
    message, garbage = _garbage_after_refusal(nki.trace_kernel, _psum_overflow,
                                              T[[128, 128], nl.bfloat16])
    assert "PSUM" in message
    assert garbage == 0


def test_refused_nki06_trace_frees_the_record():
    message, garbage = _garbage_after_refusal(trace06, _copies06, T[[128, 512], nl.bfloat16],
                                              max_instructions=20)
    assert "records more than" in message
    assert garbage == 0

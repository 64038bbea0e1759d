"""The engines' pseudo-random generators: Rand, SetRandState, GetRandState, and Dropout, which
draws from the Vector Engine's (docs/isa-semantics.md §5: xorwow per partition, six-word states,
the seeding)."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step
from neuronxsim.reference.xorwow import STATE_WORDS, seeded

RAND_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def _generator(step: Step) -> np.ndarray:
    return step.machine.rng_states[1 if step.inst.engine.name == "Pool" else 0]


def _next(states: np.ndarray) -> np.ndarray:
    """One xorwow step of each row of ``states`` (uint32 [P, 6], updated in place): the outputs."""
    with np.errstate(over="ignore"):
        x0 = states[:, 0].copy()
        t = states[:, 4].copy()
        states[:, 4] = states[:, 3]
        states[:, 3] = states[:, 2]
        states[:, 2] = states[:, 1]
        states[:, 1] = x0
        t ^= t >> np.uint32(2)
        t ^= t << np.uint32(1)
        t ^= x0 ^ (x0 << np.uint32(4))
        states[:, 0] = t
        states[:, 5] += np.uint32(362437)
        return t + states[:, 5]


def _draws(states: np.ndarray, partitions: np.ndarray, per_lane: int) -> np.ndarray:
    """``per_lane`` outputs (uint32 [lanes, per_lane]) of the generators ``states[partitions]``,
    in enumeration order along each lane; advances them."""
    lane_states = states[partitions]
    bits = np.empty((len(partitions), per_lane), np.uint32)
    for i in range(per_lane):  # sequential along the lane, vectorised across lanes
        bits[:, i] = _next(lane_states)
    states[partitions] = lane_states
    return bits


def rand(step: Step) -> None:
    out = step.outs[0]
    if out.ap.dtype.name not in RAND_DTYPES:
        raise out.refuse(f"is {out.ap.dtype.name}; Rand writes 8-, 16- or 32-bit integers")
    bits = _draws(_generator(step), out.absolute_partitions(), out.shape[1])
    # the least significant bytes, as the destination's integers
    out.write_raw(bits.astype(np.dtype(f"u{out.dtype.itemsize}")).view(out.dtype))


def dropout(step: Step) -> None:
    """Each element dropped when its draw's top 24 bits, as a fraction of 2^24, are below
    ``prob``; survivors keep their values."""
    prob = step.inst.prob
    if not 0.0 <= prob <= 1.0:
        raise Refusal(f"dropout probability {prob} is outside [0, 1]")
    out = step.outs[0]
    x = step.ins[0].read(*out.shape)
    bits = _draws(step.machine.rng_states[0], out.absolute_partitions(), out.shape[1])
    u = (bits >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24)
    out.write(np.where(u < np.float32(prob), np.float32(0.0), x))


def set_rand_state(step: Step) -> None:
    src = step.ins[0]
    states = _generator(step)
    if step.inst.engine.name != "Pool":
        src.expect(1, 1)
        if src.dtype.itemsize != 4:
            raise src.refuse(f"is {src.dtype}; the seed is a 32-bit value")
        s = int(src.read_raw().view(np.uint32)[0, 0])
        for p in range(states.shape[0]):
            states[p] = seeded((s << 32) ^ (0x5EED << 16) ^ p)
        return
    src.expect(per_lane=STATE_WORDS)
    if src.dtype not in (np.uint32, np.int32):
        raise src.refuse(f"is {src.dtype}; generator states are uint32")
    states[src.absolute_partitions()] = src.read_raw().view(np.uint32)


def get_rand_state(step: Step) -> None:
    out = step.outs[0]
    if step.inst.engine.name != "Pool":
        raise Refusal("GetRandState reads the GpSimd generators only")
    out.expect(per_lane=STATE_WORDS)
    if out.dtype not in (np.uint32, np.int32):
        raise out.refuse(f"is {out.dtype}; generator states are uint32")
    out.write_raw(step.machine.rng_states[1][out.absolute_partitions()].view(out.dtype))


HANDLERS = {
    "Rand": rand,
    "SetRandState": set_rand_state,
    "GetRandState": get_rand_state,
    "Dropout": dropout,
}

"""The seeding of the engines' xorwow generators (docs/isa-semantics.md §5, Rand)."""

from __future__ import annotations

import functools

import numpy as np

STATE_WORDS = 6
_MASK64 = (1 << 64) - 1


def seeded(s: int) -> list[int]:
    """The six words a 64-bit seed gives (splitmix64 steps, the high halves)."""
    words, z = [], s & _MASK64
    for _ in range(STATE_WORDS):
        z = (z + 0x9E3779B97F4A7C15) & _MASK64
        m = z
        m = ((m ^ (m >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        m = ((m ^ (m >> 27)) * 0x94D049BB133111EB) & _MASK64
        m ^= m >> 31
        words.append(m >> 32)
    if not any(words[:5]):
        words[0] = 1
    return words


def initial_states(engine_index: int, partitions: int) -> np.ndarray:
    """Generator ``engine_index`` (Vector 0, GpSimd 1) of each partition at the start (a new
    array)."""
    return _initial(engine_index, partitions).copy()


@functools.lru_cache(maxsize=None)
def _initial(engine_index: int, partitions: int) -> np.ndarray:
    return np.array([seeded(((engine_index + 1) << 32) + p) for p in range(partitions)], np.uint32)

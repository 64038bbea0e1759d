"""The leaf shape sweeps' case design and tolerances (tests/walrus/test_sweep_leaves.py,
tests/private_kernels/test_sweep_registry.py).

A sweep names its factors and their levels (e.g. ``S: 1, 127, 128, 129, 1025, ...``; ``group: 1, 2,
4, 7``) and asks for a case list in which every pair of levels of any two factors (and every
triple among its ``core`` factors) appears in at least one case, instead of the full cross
product. Cases a leaf cannot take are left out by a ``valid`` predicate (a tuple no
valid case holds is not required), and each case has a ``cost`` (an estimate of its simulation
work): the design is the greedy weighted set cover, each step taking the case that covers the most
new tuples per unit of cost, so the big levels ride along with the cheapest partners. The greedy
is deterministic: the same factors give the same list on every machine.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

# NXS_LONG_SWEEP=1 (scripts/sweep-leaves.sh sets it): the sweeps take their long level lists.
LONG = os.environ.get("NXS_LONG_SWEEP", "") == "1"
# Beyond this many combinations (only in some long lists) the candidates are a fixed sample of
# them: a pair of levels held only by rare valid cases could then be missed.
MAX_CANDIDATES = 200_000

# Tolerances (rtol, atol) by dtype for the public comparator max|a - b| <= atol + rtol * max|ref|:
# bf16 as `neuronxsim run` checks a layer; fp32 tighter, since the leaves multiply fp32 operands
# in fp32 (their errors are accumulation-order rounding, ~1e-6 of the largest value). fp16 has 3
# more mantissa bits than bf16.
TOLERANCES = {"bfloat16": (2e-2, 1e-2), "float16": (5e-3, 1e-3), "float32": (1e-4, 1e-5)}


def design(factors, valid=lambda case: True, cost=lambda case: 1.0, strength=2, core=()):
    """A list of cases (dicts factor -> level) covering every ``strength``-wise combination of
    levels that some valid case holds, and every ``strength + 1``-wise combination among the
    ``core`` factors (those whose interplay decides a leaf's schedule: pairwise alone would let
    each pair ride with the cheapest level of a third factor, e.g. every long sequence with a
    single key)."""
    strength = min(strength, len(factors))
    names = list(factors)
    unknown = set(core) - set(names)
    if unknown:
        raise ValueError(f"core factors {sorted(unknown)} are not among {names}")
    levels = [list(factors[n]) for n in names]
    radix = [len(ls) for ls in levels]
    total = int(np.prod(radix))
    if total <= MAX_CANDIDATES:
        flat_index = np.arange(total)
    else:  # a fixed sample (the same on every machine) as the candidate pool
        flat_index = np.sort(np.random.default_rng(0).choice(total, MAX_CANDIDATES, replace=False))
    positions = np.stack(np.unravel_index(flat_index, radix), 1)  # candidates as level indices
    candidates = [dict(zip(names, (ls[i] for ls, i in zip(levels, row)))) for row in positions.tolist()]
    keep = np.array([bool(valid(c)) for c in candidates])
    if not keep.any():
        raise ValueError(f"no valid case among {factors}")
    positions = positions[keep]
    candidates = [c for c, k in zip(candidates, keep) if k]
    costs = np.array([float(cost(c)) for c in candidates])
    # Tuple ids: one range per group of `strength` factors, mixed-radix within it.
    groups = list(itertools.combinations(range(len(names)), strength))
    if len(core) > strength:
        groups += [g for g in itertools.combinations(sorted(names.index(n) for n in core), strength + 1)]
    ids = np.empty((len(candidates), len(groups)), np.int64)
    offset = 0
    for col, group in enumerate(groups):
        code = np.zeros(len(candidates), np.int64)
        for f in group:
            code = code * radix[f] + positions[:, f]
        ids[:, col] = offset + code
        offset += int(np.prod([radix[f] for f in group]))
    # Which candidates hold each tuple (an inverted index), so that covering a tuple lowers the
    # gain of just those. Only the tuples some valid case holds are required.
    flat = ids.ravel()
    order = np.argsort(flat, kind="stable")
    holders_start = np.searchsorted(flat[order], np.arange(offset + 1))
    uncovered = np.zeros(offset, bool)
    uncovered[flat] = True
    gain = np.full(len(candidates), len(groups), np.int64)
    chosen = []
    while gain.max() > 0:
        best = int(np.argmax(gain / costs))
        chosen.append(candidates[best])
        for t in ids[best]:
            if uncovered[t]:
                uncovered[t] = False
                gain[order[holders_start[t]:holders_start[t + 1]] // len(groups)] -= 1
    return chosen


def parametrize(cases):
    """The test's ``case`` argument over ``cases``, each with its readable id."""
    return pytest.mark.parametrize("case", cases, ids=[case_id(c) for c in cases])


def case_id(case):
    """A readable pytest id: ``S1153-group2-d64``."""
    def short(v):
        return {True: "T", False: "F", "bfloat16": "bf16", "float32": "fp32"}.get(v, v) if isinstance(v, (bool, str)) \
            else v
    return "-".join(f"{k}{short(v)}" for k, v in case.items())


def levels(ci, long_extra=()):
    """The CI levels, or under NXS_LONG_SWEEP those and the long sweep's extra ones."""
    return list(ci) + [v for v in long_extra if v not in ci] if LONG else list(ci)


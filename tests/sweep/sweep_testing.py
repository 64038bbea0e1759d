"""Shared pieces of the sweep tests: the kernel files and a small blocked-matmul sweep."""

import os

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
MATMUL = os.path.join(KERNELS, "blocked_matmul.py") + ":blocked_matmul"
MATMUL06 = os.path.join(KERNELS, "blocked_matmul_nki06.py") + ":blocked_matmul"
FAULTS = os.path.join(KERNELS, "faults.py")

#: [512, 2048] = lhsT.T @ rhs, K = 256: 18 configurations; TILES_IN_BLOCK_M=8 does not divide
#: M (an assertion); 4 x 4 PSUM tiles fit only accumulated eight at a time through the whole
#: contraction (reordered, neuronxsim/nki/pressure.py).
GRID = {"TILES_IN_BLOCK_M": [1, 4, 8], "TILES_IN_BLOCK_N": [1, 2, 4], "TILES_IN_BLOCK_K": [1, 2]}
SHAPES = [["256x512:bfloat16", "256x2048:bfloat16"]]


def statuses(rows):
    """(status, total_ns, instructions) per configuration key: what two runs must agree on."""
    return {r["key"]: (r["status"], r.get("total_ns"), r.get("instructions")) for r in rows}


def row(key, status):
    """A results.jsonl row with the fields every row has (and a failed one's error), for tests of
    the file's reading and writing."""
    made = {"params": {"A": 1}, "shapes": ["8x8:float32"], "arch": "trn1", "mode": "timing",
            "status": status, "kernel": "k.py:k", "key": key}
    if status == "ok":
        made.update(total_ns=1000.0, engine_busy={"PE": 0.5}, pe_mfu=0.25, instructions=3)
    else:
        made["error"] = "AssertionError: k.py:3: no"
    return made

"""One whole trace of a bench_nki_trace.py kernel (recording, passes, allocation, emission,
scheduling and freeing it), after two warm-up traces, for counting its instructions under
callgrind, which repeat under load where wall-clock does not:

  PYTHONHASHSEED=0 PYTHONPATH=.. valgrind --tool=callgrind --collect-atstart=no \
      --toggle-collect=qsort_r --callgrind-out-file=F python3.11 trace_ir.py rmsnorm
  callgrind_annotate F | head -30

(from benchmarks/, with the Python binary itself rather than a launcher script, which valgrind
would follow instead.) PROGRAM TOTALS divided by the instructions printed is the cost per traced
instruction. The case is the start of, or a part of, one of bench_nki_trace.CASES' names
("matmul_tiled", "mamba", "layernorm", "0.6 rmsnorm", ...).

Why qsort: the measured trace runs inside libc's qsort, as the comparator of a two-element array
(a ctypes callback), so that --toggle-collect=qsort_r collects that trace and nothing else.
"""

from __future__ import annotations

import argparse
import ctypes
import gc

import bench_nki_trace as bench


def trace_once(kernel, args) -> int:
    """Traces and frees one trace; its instruction count."""
    trace = bench.trace06 if kernel.__module__ == bench.k06.__name__ else bench.nki.trace_kernel
    traced = trace(kernel, *args)
    n = traced.instruction_count
    del traced
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", help="the start of, or a part of, a bench_nki_trace.py case name")
    name_part = ap.parse_args().case
    names = [k for k in bench.CASES if k.startswith(name_part)] or [k for k in bench.CASES if name_part in k]
    if len(names) != 1:
        ap.error(f"{name_part!r} names {len(names)} of the cases: " + "; ".join(bench.CASES))
    kernel, args = bench.CASES[names[0]]
    for _ in range(2):
        trace_once(kernel, args)
    gc.collect()
    counted = []

    def compare(a, b):  # (qsort's comparator: called once for two elements)
        if not counted:
            counted.append(trace_once(kernel, args))
        return 0

    pair = (ctypes.c_int * 2)(1, 2)
    comparator = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(compare)
    ctypes.CDLL(None).qsort(pair, 2, ctypes.sizeof(ctypes.c_int), comparator)
    print(f"{names[0]}: {counted[0]} instructions")


if __name__ == "__main__":
    main()

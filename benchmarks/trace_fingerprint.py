"""Fingerprints of every trace the NKI tests and the tracing benchmark make, to check that a
change to the tracer leaves its output bit-identical.

Runs ``tests/nki`` and ``tests/nki06`` (and the kernels of ``bench_nki_trace.py``) with the
tracer's ``_trace`` wrapped: each trace is recorded as the SHA-256 of its module's JSON (every
instruction, its order, fields, operands and addresses) and of the TracedKernel's other fields,
or, when the trace is refused, the error's type and message. Keys are the test's node id and the
trace's number within it.

    PYTHONPATH=$PWD python benchmarks/trace_fingerprint.py write before.json
    ... change the tracer ...
    PYTHONPATH=$PWD python benchmarks/trace_fingerprint.py write after.json
    python benchmarks/trace_fingerprint.py compare before.json after.json

``compare`` lists every trace whose fingerprint differs (or that only one side made) and exits
non-zero if any does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys

_TMP = re.compile(r"\S*/pytest-\d+/")
_SELF = re.compile(r"\S*trace_fingerprint\.py:\d+")  # (this script's wrapper calls the kernel)
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)


class Fingerprints:
    """A pytest plugin that wraps ``neuronxsim.nki.kernel._trace`` for every test."""

    def __init__(self):
        self.prints = {}
        self.current = "(outside a test)"
        self.count = 0

    def _wrap(self):
        from neuronxsim.nki import kernel
        original = kernel._trace

        def traced(*args, **kwargs):
            key = f"{self.current}#{self.count}"
            self.count += 1
            try:
                t = original(*args, **kwargs)
            except Exception as e:
                # (pytest's temporary folders differ from run to run)
                self.prints[key] = _SELF.sub("<here>", _TMP.sub("<tmp>/",
                                                                f"{type(e).__name__}: {e}"))
                raise
            h = hashlib.sha256(t.module.to_json(-1).encode())
            h.update(repr((t.inputs, t.outputs, t.num_cores, t.arch, t.instruction_counts,
                           t.sbuf_peak_bytes, t.psum_peak_bytes, t.written_regions,
                           sorted(t.constants), t.spills)).encode())
            self.prints[key] = h.hexdigest()
            return t
        kernel._trace = traced
        return original

    def pytest_sessionstart(self, session):
        self._wrap()

    def pytest_runtest_setup(self, item):
        self.current, self.count = item.nodeid, 0


def bench_kernels(plugin: Fingerprints) -> None:
    sys.path.insert(0, _HERE)
    import bench_nki_trace as b
    for name, (kernel, args) in b.CASES.items():
        plugin.current, plugin.count = f"bench {name}", 0
        trace = b.trace06 if kernel.__module__ == b.k06.__name__ else b.nki.trace_kernel
        trace(kernel, *args)


def write(path: str) -> int:
    import pytest
    plugin = Fingerprints()
    rc = pytest.main(["-q", "-x", "-p", "no:cacheprovider", os.path.join(_ROOT, "tests", "nki"),
                      os.path.join(_ROOT, "tests", "nki06")], plugins=[plugin])
    bench_kernels(plugin)
    with open(path, "w") as f:
        json.dump(plugin.prints, f, indent=0, sort_keys=True)
    print(f"{len(plugin.prints)} traces fingerprinted into {path}")
    return int(rc)


def compare(before: str, after: str) -> int:
    with open(before) as f:
        a = json.load(f)
    with open(after) as f:
        b = json.load(f)
    differ = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    for k in differ:
        print(f"{k}:\n  before {a.get(k)}\n  after  {b.get(k)}")
    print(f"{len(a)} / {len(b)} traces, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        sys.exit(write(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)

"""The benchmark scripts still run, each at a small size, as a user starts them: in a process of
their own, through the library the tests import (the benchmarks print figures and never judge
them, benchmarks/common.py; this only catches a library change that breaks one). And the
calibration table in docs/ is what the timing model gives today."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

# Every script of benchmarks/ with a command line, and the arguments of its small run. The run
# passes when the script exits 0 and prints this text.
SMALL_RUNS = {
    "bench_timing.py": (["--iterations", "200", "--repeat", "1"], "prepare M instr/s"),
    "bench_matmul.py": (["--small", "--repeat", "1"], "GEMM 2048x2048x2048"),
    "bench_memory.py": (["--n", "512"], "ratio:"),
    "bench_vector.py": (["--rows", "256", "--repeat", "1"], "softmax [256, 512]"),
    "bench_sweep.py": (["--repeat", "1", "--jobs", "2"], "binary, read (from_binary)"),
    "bench_nki_trace.py": (["--repeat", "1"], "0.6 rmsnorm"),
    "bench_leaves.py": (["--only", "MLP_CTE"], "MLP_CTE"),
    "bench_leaves_profile.py": (["MLP_CTE"], "MLP:store"),
    "prep_ir.py": (["--iterations", "20"], "prepared 200 instructions"),
    "trace_ir.py": (["rmsnorm"], "rmsnorm [4000,1024] fp32: 262 instructions"),
    "calibrate.py": (["--only", "perf.act-dependent-ii"], "perf.act-dependent-ii"),
}
# Scripts run here otherwise: trace_fingerprint.py's `write` runs the NKI test suites, which this
# suite runs anyway; its `compare` is run below.
OTHERWISE = {"trace_fingerprint.py"}


def run(script: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    # The script's own directory is its first import path (its helpers: common.py, modules.py);
    # the library is whichever this test imports (PYTHONPATH is passed on).
    return subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_every_script_has_a_small_run():
    scripts = {p.name for p in BENCHMARKS.glob("*.py") if "__main__" in p.read_text()}
    assert scripts == set(SMALL_RUNS) | OTHERWISE


@pytest.mark.parametrize("script", sorted(SMALL_RUNS))
def test_small_run(script, tmp_path):
    args, expect = SMALL_RUNS[script]
    out = run(script, *args, cwd=tmp_path)  # any file a script writes lands in tmp_path
    assert out.returncode == 0, out.stderr[-2000:]
    assert expect in out.stdout, out.stdout[-2000:]


def test_trace_fingerprint_compare(tmp_path):
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps({"t::a 0": "x", "t::b 0": "y"}))
    after.write_text(json.dumps({"t::a 0": "x", "t::b 0": "y"}))
    same = run("trace_fingerprint.py", "compare", str(before), str(after))
    assert same.returncode == 0 and "2 / 2 traces, 0 differ" in same.stdout
    after.write_text(json.dumps({"t::a 0": "x", "t::b 0": "z", "t::c 0": "w"}))
    differ = run("trace_fingerprint.py", "compare", str(before), str(after))
    assert differ.returncode == 1 and "2 / 3 traces, 2 differ" in differ.stdout


def test_calibration_table_is_current(tmp_path):
    """docs/calibration.md is calibrate.py's output for the model as it is: a change to the timing
    model regenerates it (`python benchmarks/calibrate.py`) in the same commit."""
    table = tmp_path / "calibration.md"
    out = run("calibrate.py", "--output", str(table))
    assert out.returncode == 0, out.stderr[-2000:]
    committed = BENCHMARKS.parent / "docs" / "calibration.md"
    assert table.read_text() == committed.read_text(), (
        "docs/calibration.md is stale: regenerate it with `python benchmarks/calibrate.py`")

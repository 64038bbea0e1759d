"""--resume after a killed sweep gives the rows of an uninterrupted one; full mode checks the
outputs against a reference; NKI 0.6 kernels sweep like 2.2x ones; the trace cache skips
tracing for a configuration seen before."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import neuronxsim
from neuronxsim.sweep import sweep
from neuronxsim.sweep.results import ResultsFile, read_rows
from neuronxsim.sweep.space import SweepError
from neuronxsim.sweep.trace_cache import TraceCache

from sweep_testing import FAULTS, GRID, MATMUL, MATMUL06, SHAPES, row, statuses


def _cli(out, *extra, kernel=MATMUL):
    grid = [f"--grid={k}={','.join(map(str, v))}" for k, v in GRID.items()]
    return [sys.executable, "-P", "-m", "neuronxsim", "sweep", kernel, *grid, "--shapes", *SHAPES[0],
            "--output", str(out), "--jobs", "2", *extra]


def _env():
    """The subprocess imports the neuronxsim these tests import (an in-place build or the installed
    package), not the source tree, which has no compiled core under CI."""
    package_root = os.path.dirname(os.path.dirname(neuronxsim.__file__))
    return dict(os.environ, PYTHONPATH=package_root + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _slow_matmul(tmp_path) -> str:
    """The matmul kernel file, each trace a quarter second longer: on an idle machine the whole
    sweep would otherwise finish between two looks at its results."""
    path, _, name = MATMUL.rpartition(":")
    with open(path) as f:
        text = f.read()
    signature = "def blocked_matmul(lhsT, rhs, TILES_IN_BLOCK_M=1, TILES_IN_BLOCK_N=1, TILES_IN_BLOCK_K=1):\n"
    assert signature in text
    slow = tmp_path / "slow_matmul.py"
    slow.write_text("import time\n" + text.replace(signature, signature + "    time.sleep(0.25)\n"))
    return f"{slow}:{name}"


def test_resume_after_a_kill_gives_the_rows_of_an_uninterrupted_run(reference_rows, tmp_path):
    out = tmp_path / "killed"
    kernel = _slow_matmul(tmp_path)
    proc = subprocess.Popen(_cli(out, "--quiet", kernel=kernel), env=_env(), stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    # Kill once three rows are written, however long a loaded machine takes to get there; the
    # bound only keeps a broken sweep from hanging the suite.
    deadline = time.monotonic() + 900
    while not (results.exists() and results.read_text().count("\n") >= 3):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the sweep wrote fewer than 3 rows before it ended (exit {proc.wait()}): "
                        + proc.stderr.read().decode(errors="replace"))
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first, _ = read_rows(str(results))
    assert 3 <= len(first) < 18
    with open(results, "a") as f:  # a write cut short by the crash
        f.write('{"params": {"TILES_IN_BLOCK_M": 1}, "sta')

    with pytest.raises(SweepError, match="--resume continues that sweep"):
        sweep(kernel, GRID, SHAPES, output=str(out))
    done = subprocess.run(_cli(out, "--resume", "--json", kernel=kernel), env=_env(), capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["resumed"] == len(first) and report["ran"] == 18 - len(first)
    rows = [json.loads(line) for line in results.read_text().splitlines()]  # all whole lines
    assert len(rows) == 18 and len({r["key"] for r in rows}) == 18
    assert statuses(rows) == statuses(reference_rows)


def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path):
    path = tmp_path / "results.jsonl"
    whole = [row("a", "ok"), row("b", "failed")]
    path.write_text("".join(json.dumps(r) + "\n" for r in whole) + '{"key": "c", "status": "o')
    rows, keep = read_rows(str(path))
    assert rows == whole
    with ResultsFile(str(path), keep=keep) as f:
        f.append(row("c", "ok"))
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == ["a", "b", "c"]
    path.write_text(json.dumps(row("a", "ok")) + "\nnot json\n" + json.dumps(row("b", "ok")) + "\n")
    with pytest.raises(SweepError, match=r"results.jsonl:2: not a sweep result line"):
        read_rows(str(path))


def test_full_mode_checks_the_outputs_against_the_reference(tmp_path):
    grid = {"fault": ["none", "assert"], "factor": [1.0, 3.0]}
    rows = sweep(FAULTS + ":scale", grid, [["128x512"], ["64x256:bfloat16"]], mode="full",
                 reference=FAULTS + ":scale_reference", output=str(tmp_path / "full"), jobs=2)
    ok = [r for r in rows if r["params"]["fault"] == "none"]
    assert len(rows) == 8 and len(ok) == 4
    for r in ok:
        assert r["status"] == "ok" and r["max_error"] == 0.0
        assert r["tolerance"] == {"rtol": 2e-2, "atol": 1e-2}
    wrong = sweep(FAULTS + ":scale", {"factor": [1.0, 3.0]}, [["128x512"]], mode="full",
                  reference=FAULTS + ":wrong_reference", output=str(tmp_path / "wrong"), jobs=1)
    assert [r["status"] for r in wrong] == ["ok", "mismatch"]
    assert wrong[1]["error"].startswith("out: max|out - ref| = ")


NON_FINITE_REFERENCES = """
import numpy as np


def right(a, factor=2.0):
    return (a.astype(np.float32) * factor).astype(a.dtype)


def wrong_but_one_infinity(a, factor=2.0):
    r = np.full(a.shape, 12345.0, a.dtype)
    r[0, 0] = np.inf
    return r


def right_but_one_infinity(a, factor=2.0):
    r = right(a, factor)
    r[1, 2] = -np.inf
    return r


def right_but_one_nan(a, factor=2.0):
    r = right(a, factor)
    r[3, 4] = np.nan
    return r
"""


def test_a_reference_s_infinities_and_nans_must_be_matched_exactly(tmp_path):
    # One infinity in the reference made the bound atol + rtol * max|ref| infinite: every
    # configuration passed, however wrong.
    refs = tmp_path / "refs.py"
    refs.write_text(NON_FINITE_REFERENCES)
    status = {}
    for name in ("right", "wrong_but_one_infinity", "right_but_one_infinity", "right_but_one_nan"):
        rows = sweep(FAULTS + ":scale", {"factor": [3.0]}, [["16x32"]], mode="full",
                     reference=f"{refs}:{name}", output=str(tmp_path / name), jobs=1)
        status[name] = rows[0]["status"], rows[0].get("error", "")
    assert status["right"] == ("ok", "")
    assert status["wrong_but_one_infinity"][0] == "mismatch"
    assert status["wrong_but_one_infinity"][1].startswith("out: max|out - ref| = ")
    for name in ("right_but_one_infinity", "right_but_one_nan"):
        assert status[name] == ("mismatch", "out: 1 of the reference's 1 infinite or NaN elements "
                                            "not matched exactly"), name


def test_resume_counts_only_this_sweep_s_rows(tmp_path, capsys):
    # Another sweep's rows in the folder were counted as this one's: "ran -2".
    from neuronxsim.cli import main

    out = str(tmp_path / "shared")
    sweep(FAULTS + ":scale", {"factor": [1.0, 2.0, 3.0, 4.0]}, [["16x32"]], output=out, jobs=1)
    argv = ["sweep", FAULTS + ":scale", "--grid", "factor=5.0,2.0", "--shapes", "16x32",
            "--output", out, "--jobs", "1", "--resume", "--json"]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["ran"], document["resumed"]) == (1, 1)
    assert document["counts"] == {"configurations": 2, "ok": 2}
    assert len(read_rows(os.path.join(out, "results.jsonl"))[0]) == 5  # the others' rows kept


def test_resume_runs_again_what_another_instruction_cap_refused(tmp_path):
    # --max-instructions was not in the row key: resuming without the cap that refused every
    # trace kept the refusals and ran nothing.
    out = str(tmp_path / "capped")
    capped = sweep(FAULTS + ":scale", {"factor": [1.0, 2.0]}, [["16x32"]], output=out, jobs=1,
                   max_instructions=2)
    assert [r["status"] for r in capped] == ["failed", "failed"]
    again = sweep(FAULTS + ":scale", {"factor": [1.0, 2.0]}, [["16x32"]], output=out, jobs=1,
                  resume=True)
    assert [r["status"] for r in again] == ["ok", "ok"]


def test_an_nki06_kernel_sweeps_to_the_times_of_the_same_2_2x_kernel(reference_rows, tmp_path):
    grid = {"TILES_IN_BLOCK_M": [1, 4], "TILES_IN_BLOCK_N": [2], "TILES_IN_BLOCK_K": [1, 2]}
    rows = sweep(MATMUL06, grid, SHAPES, arch=["trn1"], output=str(tmp_path / "nki06"), jobs=2)
    assert [r["status"] for r in rows] == ["ok"] * 4
    times22 = {tuple(r["params"].values()): r.get("total_ns") for r in reference_rows}
    for r in rows:
        assert r["total_ns"] == times22[tuple(r["params"].values())]


def test_the_trace_cache_skips_tracing_a_configuration_seen_before(tmp_path):
    cache = tmp_path / "traces"
    grid = {"TILES_IN_BLOCK_M": [1, 4, 8], "TILES_IN_BLOCK_N": [2]}
    first = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "a"), jobs=2, trace_cache=str(cache))
    again = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "b"), jobs=2, trace_cache=str(cache))
    assert [r.get("trace_cached") for r in first] == [False, False, None]  # 8 fails to trace
    assert [r.get("trace_cached") for r in again] == [True, True, None]
    assert statuses(first) == statuses(again)
    assert all("trace" not in r["host_seconds"] for r in again[:2])
    entries = [f for _, _, files in os.walk(cache) for f in files]
    assert len(entries) == 2 and all(f.endswith(".trace") for f in entries)


def test_concurrent_writers_of_one_cache_entry_leave_a_whole_entry(tmp_path):
    traced = _traced_copy()
    cache = TraceCache(str(tmp_path))
    threads = [threading.Thread(target=cache.put, args=("ab" * 32, traced, {})) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert os.listdir(tmp_path / "ab") == ["ab" * 32 + ".trace"]
    assert cache.get("ab" * 32).module.to_json() == traced.module.to_json()
    assert cache.get("cd" * 32) is None


def test_the_cache_key_holds_everything_a_trace_depends_on(monkeypatch):
    from neuronxsim.sweep import build
    from neuronxsim.sweep.trace_cache import cache_key

    base = dict(source_sha256="0" * 64, location="/a/k.py", kernel="k",
                shapes=[[[128, 512], "bfloat16"]], arguments={"B": 2}, arch="trn1", dialect="nki",
                max_instructions=1000)
    changed = [dict(base, source_sha256="1" * 64), dict(base, kernel="k2"),
               dict(base, location="/b/k.py"), dict(base, arguments={"B": (1, 2)}),
               dict(base, arguments={"B": [1, 2]}),
               dict(base, shapes=[[[128, 512], "float32"]]), dict(base, arguments={"B": 2.0}),
               dict(base, arch="trn2"), dict(base, dialect="nki06")]
    keys = {cache_key(**c) for c in [base] + changed}
    assert len(keys) == 1 + len(changed)
    assert cache_key(**base) == cache_key(**dict(base))
    # (another build of neuronxsim: __version__ is the same string in every commit)
    monkeypatch.setattr(build, "_fingerprint", "0123456789abcdef")
    assert cache_key(**base) not in keys


def test_one_sweep_writes_a_results_file_at_a_time(tmp_path):
    # A second sweep on a folder another sweep is writing (a --resume started twice, say) would
    # cut that sweep's rows back to what it read and append beside it: refused before any work.
    out = tmp_path / "twice"
    first = sweep(MATMUL, {"TILES_IN_BLOCK_M": [1]}, SHAPES, output=str(out), jobs=1)
    path = out / "results.jsonl"
    before = path.read_bytes()
    with ResultsFile(str(path), keep=len(before)):  # (the other sweep, still running)
        with pytest.raises(SweepError, match="another sweep is writing it"):
            sweep(MATMUL, {"TILES_IN_BLOCK_M": [1, 2]}, SHAPES, output=str(out), resume=True, jobs=1)
    assert path.read_bytes() == before
    assert [r["key"] for r in first] == [json.loads(line)["key"] for line in before.splitlines()]


def test_a_results_file_that_changed_after_it_was_read_is_not_cut(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(row("a", "ok")) + "\n")
    rows, keep = read_rows(str(path))
    with open(path, "a") as f:  # another sweep's row, appended after the read
        f.write(json.dumps(row("b", "ok")) + "\n")
    with pytest.raises(SweepError, match="changed after its rows were read"):
        ResultsFile(str(path), keep=keep, seen=keep)
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == ["a", "b"]


def test_a_trace_cache_entry_in_another_entrys_place_is_a_miss(tmp_path):
    # An entry names its key: one copied (or moved) into another configuration's place would
    # otherwise give that configuration the other's trace, marked as cached.
    import shutil

    traced = _traced_copy()
    cache = TraceCache(str(tmp_path))
    mine, other = "ab" * 32, "cd" * 32
    cache.put(mine, traced, {})
    os.makedirs(os.path.dirname(cache.path(other)))
    shutil.copy(cache.path(mine), cache.path(other))
    assert cache.get(other) is None
    assert cache.get(mine).module.to_json() == traced.module.to_json()


def _traced_copy():
    """A small traced kernel for the trace cache's tests."""
    import numpy as np
    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl

    @nki.jit
    def copy(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
        return out

    return nki.trace_kernel(copy, np.zeros((128, 64), np.float32))


def test_a_whole_last_row_without_its_newline_is_kept_and_the_newline_added(tmp_path):
    # Only the newline is missing (a file written by another tool, or edited): the row is whole,
    # so --resume keeps it rather than running its configuration again; a cut-short write of a
    # row is never valid JSON (it lacks the closing brace), so no torn line is taken for one.
    path = tmp_path / "results.jsonl"
    for whole in ([row("a", "ok")], [row("a", "ok"), row("b", "failed")]):
        text = "\n".join(json.dumps(r) for r in whole)
        path.write_text(text)
        rows, keep = read_rows(str(path))
        assert rows == whole and keep == len(text)
        with ResultsFile(str(path), keep=keep, seen=len(text)) as f:
            f.append(row("c", "ok"))
        assert [json.loads(line) for line in path.read_text().splitlines()] == whole + [row("c", "ok")]
        assert path.read_text().startswith(text + "\n")


def test_resume_keeps_a_one_row_file_without_its_newline(tmp_path):
    out = tmp_path / "one"
    first = sweep(MATMUL, {"TILES_IN_BLOCK_M": [1]}, SHAPES, output=str(out), jobs=1)
    path = out / "results.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    rows = sweep(MATMUL, {"TILES_IN_BLOCK_M": [1, 2]}, SHAPES, output=str(out), resume=True, jobs=1)
    assert rows[0] == first[0]  # read back, not run again
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0]) == first[0]
    assert path.read_text().endswith("\n")


@pytest.mark.parametrize("faults,status", [("assert", 1), ("'none',assert", 0)], ids=["none-ok", "one-ok"])
def test_a_sweep_exits_1_when_no_configuration_is_ok(tmp_path, faults, status):
    out = tmp_path / "out"
    cmd = [sys.executable, "-P", "-m", "neuronxsim", "sweep", f"{FAULTS}:scale", f"--grid=fault={faults}",
           "--grid=factor=1.0,2.0", "--shapes", "128x64", "--output", str(out), "--jobs", "1"]
    done = subprocess.run(cmd, env=_env(), capture_output=True, text=True)
    assert done.returncode == status, done.stderr
    assert "scale: " in done.stdout  # the summary is printed either way
    if status:
        assert done.stderr.strip().endswith(f"no configuration is ok (2 failed): see {out}/results.jsonl")
        again = subprocess.run(cmd + ["--resume", "--json"], env=_env(), capture_output=True, text=True)
        assert again.returncode == 1 and json.loads(again.stdout)["resumed"] == 2
    else:
        assert done.stderr == ""


def test_a_cached_trace_keeps_how_many_instructions_were_reordered_to_fit(tmp_path):
    import dataclasses

    traced = dataclasses.replace(_traced_copy(), reordered=[7])
    cache = TraceCache(str(tmp_path))
    cache.put("ef" * 32, traced, {})
    assert cache.get("ef" * 32).reordered == [7]
    assert _traced_copy().reordered == [0]


def test_the_cache_key_holds_the_cap_on_traced_instructions():
    # A trace that fits under one --max-instructions may not fit under a smaller one: a hit would
    # skip the tracer's refusal.
    from neuronxsim.sweep.trace_cache import cache_key

    base = dict(source_sha256="0" * 64, location="/a/k.py", kernel="k",
                shapes=[[[128, 512], "bfloat16"]], arguments={}, arch="trn1", dialect="nki")
    keys = {cache_key(**base, max_instructions=m) for m in (1000000, 10, 11)}
    assert len(keys) == 3


@pytest.mark.parametrize("where", ["description", "module"])
def test_a_damaged_trace_cache_entry_is_a_miss(tmp_path, where):
    # A changed digit still parses: taken as the entry, it would reach the simulator as another
    # kernel (a failed row, or another kernel's time).
    traced = _traced_copy()
    cache = TraceCache(str(tmp_path))
    key = "ab" * 32
    cache.put(key, traced, {})
    data = bytearray(open(cache.path(key), "rb").read())
    at = data.index(b'"num_cores":1') + len(b'"num_cores":') if where == "description" else len(data) - 9
    data[at] ^= 0x02
    open(cache.path(key), "wb").write(bytes(data))
    assert cache.get(key) is None
    cache.put(key, traced, {})
    assert cache.get(key).module.to_json() == traced.module.to_json()


def test_a_sweep_with_a_smaller_cap_does_not_take_a_cached_trace_over_it(tmp_path):
    cache = str(tmp_path / "traces")
    grid = {"TILES_IN_BLOCK_M": [1]}
    first = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "a"), jobs=1, trace_cache=cache)
    assert [r["status"] for r in first] == ["ok"]
    capped = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "b"), jobs=1, trace_cache=cache,
                   max_instructions=first[0]["instructions"] - 1)
    assert [r["status"] for r in capped] != ["ok"], "the cached trace skipped the cap"

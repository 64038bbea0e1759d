"""What a user's kernel, reference or files can do to a sweep: each is a row or one refusal that
says what and where, never a dead worker, a wrong message, a hang or a fork of one process per
--jobs."""

import json
import os
import textwrap
import threading

import pytest

from neuronxsim.sweep import sweep
from neuronxsim.sweep.driver import make_executor, plan
from neuronxsim.sweep.executors import LocalPool
from neuronxsim.sweep.results import read_rows
from neuronxsim.sweep.space import SweepError
from neuronxsim.sweep.trace_cache import TraceCache

from sweep_testing import FAULTS, row

EXITS = '''
import sys

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def copy(a, quit=False):
    if quit:
        sys.exit(3)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
'''


def test_a_reference_returning_more_arrays_than_the_kernel_is_said_so(tmp_path):
    ref = tmp_path / "ref.py"
    ref.write_text("def twice(a, factor=2.0):\n    return a, a\n")
    rows = sweep(f"{FAULTS}:scale", {"factor": [2.0]}, [["128x64"]], mode="full",
                 reference=f"{ref}:twice", output=str(tmp_path / "out"), jobs=1)
    assert rows[0]["status"] == "failed"
    assert "the reference twice returns 2 array(s); the kernel returns 1" in rows[0]["error"], rows[0]


def test_a_kernel_calling_sys_exit_fails_its_row_and_keeps_its_worker(tmp_path):
    kernel = tmp_path / "exits.py"
    kernel.write_text(EXITS)
    rows = sweep(f"{kernel}:copy", {"quit": [False, True]}, [["128x64"]],
                 output=str(tmp_path / "out"), jobs=1)
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert rows[1]["error"] == "SystemExit: exits.py:11: 3", rows[1]  # not "the worker process died"
    assert rows[0]["worker"] == rows[1]["worker"]


BROKEN_STR = '''
from neuronxcc import nki
import neuronxcc.nki.language as nl


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("this exception cannot be shown")


@nki.jit
def copy(a, fail=False):
    if fail:
        raise Unprintable()
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
'''


def test_an_exception_whose_str_fails_is_shown_by_its_type_and_keeps_its_worker(tmp_path):
    # str(e) raised in the worker as it described the failure: the worker died, twice, with
    # pages of tracebacks; at import, "internal error".
    kernel = tmp_path / "unprintable.py"
    kernel.write_text(BROKEN_STR)
    rows = sweep(f"{kernel}:copy", {"fail": [False, True]}, [["128x64"]],
                 output=str(tmp_path / "out"), jobs=1)
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert rows[1]["error"] == "Unprintable: unprintable.py:14: Unprintable", rows[1]
    assert rows[0]["worker"] == rows[1]["worker"]
    at_import = tmp_path / "at_import.py"
    at_import.write_text(BROKEN_STR + "\nraise Unprintable()\n")
    with pytest.raises(SweepError, match=r"at_import.py: line 19: Unprintable: Unprintable$"):
        plan(f"{at_import}:copy", grid={"fail": [False]}, shapes=[["128x64"]],
             output=str(tmp_path / "out2"))


@pytest.mark.parametrize("line", ['{"key": ["a"], "status": "ok"}', '{"key": {"a": 1}, "status": "ok"}',
                                  '{"key": "k", "status": "ok", "x": ' + "[" * 100000 + "]" * 100000 + "}"],
                         ids=["key-a-list", "key-an-object", "nested-too-deeply"])
def test_resume_refuses_a_row_that_is_not_a_sweep_row_naming_its_line(tmp_path, line):
    path = tmp_path / "results.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(SweepError, match=f"{path}:1: not a sweep result line"):
        read_rows(str(path))


@pytest.mark.parametrize("change, problem", [
    ({"status": None}, "its status is not one of ok, failed, mismatch"),
    ({"status": "done"}, "its status is not one of ok, failed, mismatch"),
    ({"params": [1]}, "its params are not an object"),
    ({"shapes": "8x8"}, "its shapes are not a list of texts"),
    ({"arch": None}, "its arch is not a text"),
    ({"total_ns": "abc"}, "its total_ns is not a number"),
    ({"pe_mfu": "x"}, "its pe_mfu is not a number"),
    ({"engine_busy": None}, "its engine_busy is not an object of numbers"),
    ({"instructions": True}, "its instructions are not a count"),
], ids=lambda v: "" if isinstance(v, str) else next(iter(v)) + "=" + repr(next(iter(v.values()))))
def test_resume_refuses_a_row_with_a_bad_field_naming_its_line(tmp_path, capsys, change, problem):
    # A hand-edited row with a bad field crashed the summary: "internal error".
    from neuronxsim.cli import main

    out = tmp_path / "out"
    argv = ["sweep", f"{FAULTS}:scale", "--grid", "factor=1.0,2.0", "--shapes", "16x32",
            "--output", str(out), "--jobs", "1", "--quiet"]
    assert main(argv) == 0
    path = out / "results.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = json.dumps(dict(json.loads(lines[1]), **change))
    path.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{path}:2: not a sweep result line ({problem})" in err, err


def test_resume_refuses_a_failed_row_without_its_error(tmp_path):
    path = tmp_path / "results.jsonl"
    failed = row("a", "failed")
    del failed["error"]
    path.write_text(json.dumps(row("b", "ok")) + "\n" + json.dumps(failed) + "\n")
    with pytest.raises(SweepError, match=rf"{path}:2: not a sweep result line \(its error is not a text\)"):
        read_rows(str(path))


def test_what_the_kernel_and_reference_files_print_at_import_keeps_off_stdout(tmp_path, capsys):
    # The files run in the sweep's own process first, as it checks them: their prints came
    # before the --json document on stdout.
    from neuronxsim.cli import main

    kernel = tmp_path / "chatty.py"
    kernel.write_text('print("the kernel file speaks")\n' + EXITS)
    ref = tmp_path / "chatty_ref.py"
    ref.write_text('print("the reference file speaks")\n\n\ndef same(a, quit=False):\n    return a\n')
    argv = ["sweep", f"{kernel}:copy", "--grid", "quit=False", "--shapes", "16x32", "--mode",
            "full", "--reference", f"{ref}:same", "--output", str(tmp_path / "out"), "--jobs", "1",
            "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["counts"] == {"configurations": 1, "ok": 1}
    assert "the kernel file speaks" in captured.err and "the reference file speaks" in captured.err


RETURNS_NOTHING = '''
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def copy(a, A=1):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
'''


def test_a_kernel_that_returns_nothing_is_said_so_at_its_own_line(tmp_path):
    # The error named the line of neuronxsim's sweep that called the kernel.
    kernel = tmp_path / "returns_nothing.py"
    kernel.write_text(RETURNS_NOTHING)
    rows = sweep(f"{kernel}:copy", {"A": [1]}, [["16x32"]], output=str(tmp_path / "out"), jobs=1)
    assert rows[0]["status"] == "failed"
    assert rows[0]["error"].startswith(f"NKIError: {kernel}:9: kernel copy returns nothing"), rows[0]


def test_a_named_pipe_in_place_of_a_trace_cache_entry_is_a_miss_not_a_wait(tmp_path):
    cache = TraceCache(str(tmp_path))
    key = "ab" + "0" * 62
    os.makedirs(os.path.dirname(cache.path(key)))
    os.mkfifo(cache.path(key))
    got = []
    reader = threading.Thread(target=lambda: got.append(cache.get(key)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "TraceCache.get waited on a named pipe"
    assert got == [None]


def test_more_jobs_than_configurations_start_one_worker_per_configuration(tmp_path):
    pool = make_executor(jobs=64, configurations=2)
    try:
        assert pool.worker_count() == 2
    finally:
        pool.close()
    # the pool itself forks no more workers than it has batches, whatever its size
    kernel = tmp_path / "exits.py"
    kernel.write_text(EXITS)
    p = plan(f"{kernel}:copy", grid={"quit": [False]}, shapes=[["128x64"], ["128x32"]],
             output=str(tmp_path / "out"))
    pool = LocalPool(64)
    started = [len(pool.pids()) for _job, _result in pool.run([[job] for job in p.jobs])]
    assert started == [2, 2]


@pytest.mark.parametrize("where", ["file", "file/cache"])
def test_a_trace_cache_that_cannot_be_a_folder_is_refused_before_any_configuration(tmp_path, where):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(SweepError, match="--trace-cache .*not a folder"):
        plan(f"{FAULTS}:scale", grid={"factor": [1.0]}, shapes=[["128x64"]], output=str(tmp_path / "out"),
             trace_cache=str(tmp_path / where))
    assert not (tmp_path / "out").exists()

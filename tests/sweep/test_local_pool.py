"""Sweeps on the local process pool: one row per configuration whatever fails, a killed worker's
configurations run again elsewhere, a configuration that kills its worker is a failed row."""

import json
import os
import signal

import pytest

from neuronxsim.sweep import driver, sweep
from neuronxsim.sweep.results import read_rows
from neuronxsim.sweep.space import SweepError

from sweep_testing import FAULTS, GRID, MATMUL, SHAPES, statuses


def test_every_configuration_has_one_row_and_failures_are_rows(reference_rows, tmp_path):
    rows = reference_rows
    assert len(rows) == 18 and len({r["key"] for r in rows}) == 18
    by_params = {tuple(r["params"].values()): r for r in rows}
    assert by_params[(8, 1, 1)]["status"] == "failed"
    assert by_params[(8, 1, 1)]["error"].startswith("AssertionError: blocked_matmul.py:")
    assert "do not divide" in by_params[(8, 1, 1)]["error"]
    # (4 x 4 PSUM tiles: they fit reordered, eight at a time through the whole contraction)
    assert by_params[(4, 4, 2)]["status"] == "ok" and by_params[(4, 4, 2)]["reordered"] > 0
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == 12
    for r in ok:
        assert r["total_ns"] > 0 and 0 < r["pe_mfu"] < 1 and r["instructions"] > 0
        assert set(r["engine_busy"]) == {"PE", "ACT", "DVE", "Pool", "SP", "DMA max"}
        assert r["host_seconds"]["total"] >= r["host_seconds"]["trace"] > 0
        assert "\n" not in r.get("error", "")
    # Bigger blocks load each operand fewer times: (4, 2, 2) beats (1, 1, 1).
    assert by_params[(4, 2, 2)]["total_ns"] < by_params[(1, 1, 1)]["total_ns"]
    assert by_params[(1, 1, 1)]["reordered"] == 0


def test_results_jsonl_holds_the_rows_and_the_picture_is_written(reference_sweep):
    rows, out = reference_sweep
    on_disk = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(on_disk, key=lambda r: r["key"]) == sorted(rows, key=lambda r: r["key"])
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_killed_worker_s_configurations_run_again(reference_rows, tmp_path):
    p = driver.plan(MATMUL, grid=GRID, shapes=SHAPES, output=str(tmp_path / "killed"))
    pool, killed, first = {}, [], []

    def kill_one(row, done, total):
        if done == 3:
            first.extend(pool["executor"].pids())
            victim = first[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    rows, _, _ = driver.run_sweep(p, jobs=2, on_row=kill_one,
                                  on_start=lambda e: pool.update(executor=e))
    assert killed
    on_disk, _ = read_rows(p.results_path)
    assert sorted(r["key"] for r in on_disk) == sorted(j["key"] for j in p.jobs)
    assert statuses(rows) == statuses(reference_rows)
    # The killed worker's configurations ran on the worker that replaced it.
    pids = {int(r["worker"].rpartition(":")[2]) for r in rows}
    assert pids - set(first) and killed[0] in first


def test_a_configuration_that_kills_its_worker_is_a_failed_row(tmp_path):
    rows = sweep(FAULTS + ":scale", {"fault": ["none", "crash", "assert"], "factor": [1.0, 2.0]},
                 [["128x512"]], output=str(tmp_path / "faults"), jobs=2)
    got = {(r["params"]["fault"], r["params"]["factor"]): r for r in rows}
    assert len(rows) == 6
    for factor in (1.0, 2.0):
        assert got[("none", factor)]["status"] == "ok"
        crash = got[("crash", factor)]
        assert crash["status"] == "failed"
        assert crash["error"] == ("the worker process died (signal 9) running this configuration, "
                                  "2 times")
        assert got[("assert", factor)]["error"] == ("AssertionError: faults.py:17: the kernel "
                                                    "refuses this configuration")


def test_a_killed_zygote_is_replaced_when_a_worker_is(tmp_path):
    grid = {"fault": ["none"], "factor": [float(i) for i in range(8)]}
    pool, killed, first = {}, [], []

    def kill(row, done, total):
        executor = pool["executor"]
        if done == 2:
            killed.append(executor._zygote.process.pid)
            os.kill(killed[0], signal.SIGKILL)
            executor._zygote.process.wait()
        if done == 3:
            first.extend(executor.pids())
            killed.append(first[0])
            os.kill(killed[1], signal.SIGKILL)

    p = driver.plan(FAULTS + ":scale", grid=grid, shapes=[["128x512"]], output=str(tmp_path / "z"))
    rows, _, _ = driver.run_sweep(p, jobs=2, on_row=kill, on_start=lambda e: pool.update(executor=e))
    assert len(killed) == 2 and len(rows) == 8 and all(r["status"] == "ok" for r in rows)
    # The killed worker's configurations ran on a worker forked from a new zygote.
    assert {int(r["worker"].rpartition(":")[2]) for r in rows} - set(first)


def test_a_worker_that_dies_as_it_is_fed_is_replaced_and_nothing_is_lost(tmp_path):
    # One worker holds two batches, then one each near the end: after the second row it holds
    # none. Killed then, and gone before the loop feeds it, its pipe refuses the third batch.
    grid = {"fault": ["none"], "factor": [1.0, 2.0, 3.0]}
    pool, killed = {}, []

    def kill_the_worker_before_it_is_fed(row, done, total):
        if done == 2:
            (w,) = pool["executor"]._pool
            assert not w.inflight
            os.kill(w.pid, signal.SIGKILL)
            killed.append(w.pid)
            assert w.conn.poll(30)  # (its end of the pipe is closed: the process is gone)

    p = driver.plan(FAULTS + ":scale", grid=grid, shapes=[["128x512"]], output=str(tmp_path / "f"))
    rows, _, _ = driver.run_sweep(p, jobs=1, on_row=kill_the_worker_before_it_is_fed,
                                  on_start=lambda e: pool.update(executor=e))
    assert killed and [r["status"] for r in rows] == ["ok"] * 3
    assert int(rows[2]["worker"].rpartition(":")[2]) != killed[0]


def test_an_executor_that_ends_without_every_answer_is_an_error(tmp_path):
    class Forgetful:
        def run(self, batches):
            for job, in batches[:-1]:
                yield job, {"status": "failed", "error": "x"}

    p = driver.plan(FAULTS + ":scale", grid={"fault": ["none"], "factor": [1.0, 2.0]},
                    shapes=[["128x512"]], output=str(tmp_path / "g"))
    with pytest.raises(SweepError, match=r"1 of 2 configurations got no result .*--resume"):
        driver.execute(p, Forgetful())
    assert len(read_rows(p.results_path)[0]) == 1


def test_a_worker_holds_a_second_batch_only_while_more_wait_than_there_are_workers():
    import collections

    from neuronxsim.sweep.executors import LocalPool

    class Sent:
        def __init__(self):
            self.inflight, self.conn = collections.deque(), self
            self.batches = []

        def send(self, batch):
            self.batches.append(batch)

    pool = LocalPool(2)
    pool._pool = [Sent(), Sent()]
    pending = collections.deque(([i], 1) for i in range(5))
    for w in pool._pool:
        pool._feed(w, pending)
    # 5 waiting: the first worker takes two (3 left > 2 workers), the second one (2 left).
    assert [w.batches for w in pool._pool] == [[[0], [1]], [[2]]] and len(pending) == 2
    first = pool._pool[0]
    first.inflight.popleft()  # it answered its first batch: it holds one, 2 wait for 2 workers
    pool._feed(first, pending)
    assert len(first.inflight) == 1 and len(pending) == 2
    first.inflight.popleft()  # idle: it takes one
    pool._feed(first, pending)
    assert first.batches[-1] == [3] and len(pending) == 1
    pool._pool = []


def test_the_table_marks_configurations_that_fit_only_reordered(reference_rows):
    from neuronxsim.sweep import summary

    names = list(GRID)
    ok = [r for r in reference_rows if r["status"] == "ok"]
    lines = summary.table(ok, names, len(ok)).splitlines()
    marked = [line.split()[0] for line in lines[2:-1] if line.split()[0].endswith("*")]
    assert len(marked) == sum(1 for r in ok if r["reordered"]) > 0
    assert lines[-1].startswith("* fits on chip only with instructions moved out of program order")
    plain = summary.table([r for r in ok if not r["reordered"]], names, len(ok))
    assert "*" not in plain


def test_a_worker_whose_sweep_has_gone_ends_quietly():
    # After a Ctrl-C the workers finished their configuration and printed a BrokenPipeError
    # traceback each, answering a sweep that was no longer there.
    import socket
    from multiprocessing.connection import Connection

    from neuronxsim.sweep.worker import serve

    worker_end, sweep_end = socket.socketpair()
    sweeps = Connection(sweep_end.detach())
    sweeps.send([])  # an (empty) batch, then the sweep is gone before its answer
    sweeps.close()
    serve(Connection(worker_end.detach()))  # returns, raising nothing

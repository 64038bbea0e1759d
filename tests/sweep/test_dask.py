"""The same sweep on a two-worker Dask LocalCluster: one row per configuration, the rows of the
process pool, also when a worker is killed midway; and on an existing scheduler by its address."""

import os
import signal

import pytest

from neuronxsim.sweep import driver
from neuronxsim.sweep.results import read_rows

from sweep_testing import GRID, MATMUL, SHAPES, statuses

pytest.importorskip("distributed")


def test_a_local_cluster_with_a_worker_killed_midway(reference_rows, tmp_path):
    p = driver.plan(MATMUL, grid=GRID, shapes=SHAPES, output=str(tmp_path / "dask"))
    pool, killed = {}, []

    def kill_one(row, done, total):
        if done == 3:
            pids = pool["executor"].client.run(os.getpid)
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    rows, _, description = driver.run_sweep(p, jobs=2, scheduler="local", on_row=kill_one,
                                            on_start=lambda e: pool.update(executor=e))
    assert killed and description == "a local Dask cluster (2 workers)"
    on_disk, _ = read_rows(p.results_path)
    assert sorted(r["key"] for r in on_disk) == sorted(j["key"] for j in p.jobs)
    assert statuses(rows) == statuses(reference_rows)


def test_an_existing_scheduler_by_its_address(reference_rows, tmp_path):
    import distributed

    grid = {"TILES_IN_BLOCK_M": [1, 8], "TILES_IN_BLOCK_N": [2], "TILES_IN_BLOCK_K": [1]}
    p = driver.plan(MATMUL, grid=grid, shapes=SHAPES, output=str(tmp_path / "address"))
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        rows, _, description = driver.run_sweep(p, scheduler=cluster.scheduler_address)
    assert description == f"Dask at {cluster.scheduler_address} (1 worker)"
    want = statuses(reference_rows)
    assert statuses(rows) == {k: want[k] for k in statuses(rows)} and len(rows) == 2


def test_a_local_cluster_starts_no_more_workers_than_configurations():
    # --scheduler local --jobs N started N Dask workers however few configurations there were.
    pool = driver.make_executor(jobs=3, scheduler="local", configurations=1)
    try:
        assert pool.worker_count() == 1
    finally:
        pool.close()


def test_a_configuration_that_kills_its_workers_fails_alone_not_its_whole_task(tmp_path):
    # Dask gives up on a task whose workers keep dying (KilledWorker); a task holding several
    # configurations failed them all, the innocent ones too. Each now runs again on its own.
    import dask

    from neuronxsim.sweep.executors import DaskPool
    from sweep_testing import FAULTS

    grid = {"factor": [1.0, 2.0, 3.0], "fault": ["none", "crash"]}
    p = driver.plan(FAULTS + ":scale", grid=grid, shapes=[["128x512"]], output=str(tmp_path / "k"))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        pool = DaskPool("local", 2, 30.0)
        try:
            rows = driver.execute(p, pool, batch=3)  # each task: both faults
        finally:
            pool.close()
    assert len(rows) == 6
    for r in rows:
        if r["params"]["fault"] == "none":
            assert r["status"] == "ok"
        else:
            assert r["error"] == "Dask workers died running this configuration (KilledWorker)"


def test_a_local_cluster_keeps_the_nannies_of_workers_that_keep_dying():
    # The LocalCluster closed the nanny of a worker gone for 15 s (lost-worker-timeout); with a
    # configuration killing its workers again and again, the cluster ran out of workers and the
    # sweep waited for ever. The setting holds while the pool is open, and is undone after.
    import dask

    from neuronxsim.sweep.executors import DaskPool

    before = dask.config.get("distributed.deploy.lost-worker-timeout")
    pool = DaskPool("local", 1, 30.0)
    try:
        assert dask.config.get("distributed.deploy.lost-worker-timeout") == "365 days"
    finally:
        pool.close()
    assert dask.config.get("distributed.deploy.lost-worker-timeout") == before

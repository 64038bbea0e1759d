"""What a sweep's results depend on besides the kernel file's text: the modules it imports, where
the file lies, the instruction cap however it is set, the neuronxsim build, and values' exact
types. Each is in the trace cache's and --resume's keys (or checked with the entry), and an
edited neighbour module is read again by the same process."""

import json
import os

import pytest

from neuronxsim.sweep import build, sweep
from neuronxsim.sweep.driver import plan
from neuronxsim.sweep.space import SweepError

from sweep_testing import MATMUL, SHAPES

_KERNEL = '''from neuronxsim import nki
import neuronxsim.nki.language as nl

import {helper}


@nki.jit
def scale(a, tiles=1):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for _ in range({helper}.REPEAT):
        t = nl.multiply(t, 1.0)
    nl.store(out, value=nl.multiply(t, {helper}.FACTOR))
    return out
'''

_REFERENCE = '''def scale_ref(a, tiles=1):
    return a * 2.0
'''


def _folder(path, helper, repeat, factor=2.0):
    """A kernel folder: kernel.py, which imports ``helper`` (a neighbour) for its repeat count and
    factor, and reference.py (a * 2)."""
    os.makedirs(path, exist_ok=True)
    (path / "kernel.py").write_text(_KERNEL.format(helper=helper))
    (path / "reference.py").write_text(_REFERENCE)
    _helper(path, helper, repeat, factor)
    return f"{path / 'kernel.py'}:scale"


def _helper(path, helper, repeat, factor=2.0):
    (path / f"{helper}.py").write_text(f"FACTOR = {factor}\nREPEAT = {repeat}\n")


def _one(kernel, out, **kw):
    return sweep(kernel, {"tiles": [1]}, [["128x512"]], output=str(out), jobs=1, **kw)[0]


def test_an_edited_neighbour_module_is_read_again_by_the_same_process(tmp_path):
    # (the Python API called twice, as from a notebook; the timing-mode workers are forks of it)
    kernel = _folder(tmp_path / "k", "helper_edit", repeat=1)
    first = _one(kernel, tmp_path / "o1")
    _helper(tmp_path / "k", "helper_edit", repeat=20)
    second = _one(kernel, tmp_path / "o2")
    assert first["status"] == second["status"] == "ok"
    assert second["instructions"] == first["instructions"] + 19


def test_a_cached_trace_is_not_reused_after_a_module_it_imported_changed(tmp_path):
    kernel = _folder(tmp_path / "k", "helper_cache", repeat=1)
    ref = f"{tmp_path / 'k' / 'reference.py'}:scale_ref"
    cache = str(tmp_path / "cache")
    first = _one(kernel, tmp_path / "o1", mode="full", reference=ref, trace_cache=cache)
    assert first["status"] == "ok" and not first["trace_cached"]
    again = _one(kernel, tmp_path / "o2", mode="full", reference=ref, trace_cache=cache)
    assert again["trace_cached"]  # (unchanged: a hit)
    _helper(tmp_path / "k", "helper_cache", repeat=3, factor=3.0)  # now wrong, and longer
    changed = _one(kernel, tmp_path / "o3", mode="full", reference=ref, trace_cache=cache)
    assert not changed["trace_cached"]
    assert changed["status"] == "mismatch"
    assert changed["instructions"] == first["instructions"] + 2


def test_the_same_kernel_text_in_two_folders_is_two_kernels(tmp_path):
    # Each folder's kernel.py imports its own helper_two.py: one cache, one process.
    a = _folder(tmp_path / "a", "helper_two", repeat=1)
    b = _folder(tmp_path / "b", "helper_two", repeat=10)
    cache = str(tmp_path / "cache")
    ra = _one(a, tmp_path / "oa", trace_cache=cache)
    rb = _one(b, tmp_path / "ob", trace_cache=cache)
    assert not rb["trace_cached"]
    assert rb["instructions"] == ra["instructions"] + 9
    assert _one(a, tmp_path / "oa2", trace_cache=cache)["instructions"] == ra["instructions"]


def test_the_environment_cap_on_instructions_keys_the_cache_and_resume(tmp_path, monkeypatch):
    grid = {"TILES_IN_BLOCK_M": [1]}
    cache = str(tmp_path / "cache")
    first = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "a"), jobs=1, trace_cache=cache)
    assert first[0]["status"] == "ok"
    monkeypatch.setenv("NEURONXSIM_MAX_INSTRUCTIONS", "10")
    capped = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "b"), jobs=1, trace_cache=cache)
    assert capped[0]["status"] == "failed" and "max_instructions=10" in capped[0]["error"]
    monkeypatch.delenv("NEURONXSIM_MAX_INSTRUCTIONS")
    resumed = sweep(MATMUL, grid, SHAPES, output=str(tmp_path / "b"), jobs=1, resume=True)
    assert resumed[0]["status"] == "ok"  # run again under the default cap, not the refusal kept


def test_a_malformed_environment_cap_is_one_line_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURONXSIM_MAX_INSTRUCTIONS", "ten")
    with pytest.raises(SweepError, match="NEURONXSIM_MAX_INSTRUCTIONS='ten'"):
        plan(MATMUL, grid={"TILES_IN_BLOCK_M": [1]}, shapes=SHAPES, output=str(tmp_path / "o"))


def test_rows_carry_the_build_and_resume_refuses_another_builds_rows(tmp_path, monkeypatch):
    out = tmp_path / "o"
    grid = {"TILES_IN_BLOCK_M": [1, 4]}
    rows = sweep(MATMUL, {"TILES_IN_BLOCK_M": [1]}, SHAPES, output=str(out), jobs=1)
    assert rows[0]["build"] == build.fingerprint()
    assert json.loads((out / "results.jsonl").read_text())["build"] == build.fingerprint()
    monkeypatch.setattr(build, "_fingerprint", "0123456789abcdef")  # (another build)
    with pytest.raises(SweepError, match="another neuronxsim build"):
        sweep(MATMUL, grid, SHAPES, output=str(out), jobs=1, resume=True)


def test_the_build_fingerprint_changes_with_a_file_of_the_package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("X = 1\n")
    before = build._compute(str(pkg))
    (pkg / "a.py").write_text("X = 2\n")
    assert build._compute(str(pkg)) != before
    # (a compiled module without a build ID counts by its bytes)
    (pkg / "m.so").write_bytes(b"not an ELF file")
    with_so = build._compute(str(pkg))
    (pkg / "m.so").write_bytes(b"not an ELF file either")
    assert build._compute(str(pkg)) != with_so


def test_a_worker_of_another_build_fails_its_rows_saying_so(tmp_path, monkeypatch):
    from neuronxsim.sweep import job
    p = plan(MATMUL, grid={"TILES_IN_BLOCK_M": [1]}, shapes=SHAPES, output=str(tmp_path / "o"))
    monkeypatch.setattr(build, "_fingerprint", "0123456789abcdef")
    result = job.run(p.jobs[0])
    assert result["status"] == "failed" and "install the same build" in result["error"]


def test_a_tuple_and_a_list_are_two_configurations(tmp_path):
    def key(value):
        return plan(MATMUL, grid={"TILES_IN_BLOCK_M": [1]}, args={"TILES_IN_BLOCK_N": value},
                    shapes=SHAPES, output=str(tmp_path / "o")).jobs[0]["key"]
    assert key((1, 2)) != key([1, 2])
    assert key(3) == key(3)


def test_false_and_true_in_lowercase_are_refused_not_taken_for_strings():
    from neuronxsim.sweep.space import parse_args, parse_grid
    for bad in ("false", "TRUE", "none", "null"):
        with pytest.raises(SweepError, match="or quote it"):
            parse_grid([f"TWICE={bad},True"])
        with pytest.raises(SweepError, match="or quote it"):
            parse_args([f"TWICE={bad}"])
    assert parse_grid(["TWICE=False,'false'"]) == {"TWICE": [False, "false"]}


def test_the_table_tells_a_string_from_the_value_it_spells():
    from neuronxsim.sweep.summary import table
    rows = [{"params": {"P": v}, "status": "ok", "total_ns": 1000.0 + i, "shapes": ["8x8:float32"],
             "arch": "trn1", "engine_busy": {}, "pe_mfu": 0.0, "instructions": 3}
            for i, v in enumerate([False, "false", 2, "2", None, "x"])]
    cells = [line.split()[1] for line in table(rows, ["P"], 10).splitlines()[2:]]
    assert cells == ["False", "'false'", "2", "'2'", "None", "x"]


def test_profile_refuses_a_lowercase_false_and_reads_odd_text_as_a_string():
    from neuronxsim.cli.profile import ProfileError, kernel_arguments

    def kernel(a, flag=True):
        pass
    with pytest.raises(ProfileError, match="write False"):
        kernel_arguments(kernel, 1, ["flag=false"])
    assert kernel_arguments(kernel, 1, ["flag={[]:1}"]) == {"flag": "{[]:1}"}  # (was a crash)


def test_a_trace_cache_that_cannot_be_written_warns_once_and_the_rows_stay_ok(tmp_path, capfd):
    # Every entry's folder (<cache>/<first two hex digits of its key>) is taken by a file: each
    # write fails, as on a full disk, after the configuration traced and ran.
    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(256):
        (cache / f"{i:02x}").write_text("")
    rows = sweep(MATMUL, {"TILES_IN_BLOCK_M": [1, 4]}, SHAPES, output=str(tmp_path / "o"), jobs=1,
                 trace_cache=str(cache))
    assert [r["status"] for r in rows] == ["ok", "ok"]
    warnings = [line for line in capfd.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and f"cannot write the trace cache entry {cache}" in warnings[0]


def test_a_results_file_that_cannot_be_written_is_named():
    from neuronxsim.sweep.results import ResultsFile
    from sweep_testing import row
    with pytest.raises(SweepError, match="^/dev/full: cannot write: No space left on device"):
        with ResultsFile("/dev/full") as f:
            f.append(row("a", "ok"))


_CHUNKED = '''from neuronxsim import nki
import neuronxsim.nki.language as nl


@nki.jit
def chunked_exp(a, CHUNK=128):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    for c in nl.affine_range(cols // CHUNK):  # (a CHUNK that does not divide cols leaves a tail)
        nl.store(out[:, c * CHUNK:(c + 1) * CHUNK], value=nl.exp(nl.load(a[:, c * CHUNK:(c + 1) * CHUNK])))
    return out
'''

_CHUNKED_REF = '''import numpy as np


def chunked_exp_ref(a, CHUNK=128):
    out = np.exp(a)
    out[:, a.shape[1] // CHUNK * CHUNK:] = np.nan  # (the tail the kernel leaves: NaN, as it reads)
    return out
'''


@pytest.mark.parametrize("mode", ["full", "timing"])
def test_a_configuration_that_leaves_an_output_partly_unwritten_is_not_ranked_best(tmp_path, mode):
    # (timing mode, the default, keeps no data: it finds the tail from the stores' access patterns)
    from neuronxsim.sweep import summary
    (tmp_path / "k.py").write_text(_CHUNKED)
    (tmp_path / "r.py").write_text(_CHUNKED_REF)
    check = {"reference": f"{tmp_path / 'r.py'}:chunked_exp_ref"} if mode == "full" else {}
    rows = sweep(f"{tmp_path / 'k.py'}:chunked_exp", {"CHUNK": [128, 1000]}, [["128x1024"]],
                 output=str(tmp_path / "o"), jobs=1, mode=mode, **check)
    by = {r["params"]["CHUNK"]: r for r in rows}
    assert by[128]["status"] == by[1000]["status"] == "ok"
    assert "unwritten_outputs" not in by[128]
    assert by[1000]["unwritten_outputs"] == [{"name": "out", "dtype": "float32", "elements": 128 * 24,
                                              "size": 128 * 1024, "first_index": [0, 1000]}]
    assert by[1000]["total_ns"] < by[128]["total_ns"]  # (why it must not rank: less work)
    assert [r["params"]["CHUNK"] for r in summary.best(rows, 10)] == [128]
    text = summary.table(rows, ["CHUNK"], 10)
    assert "not ranked: 1 configuration(s) that ran but left part of an output unwritten" in text
    assert summary.picture(rows, str(tmp_path / "o"), "CHUNK", "chunked_exp")  # (drawn without it)


def test_a_long_lived_worker_reads_an_edited_neighbour_module_again(tmp_path):
    # (a Dask worker of a cluster that stays up: it runs jobs of one sweep, then of the next)
    from neuronxsim.sweep import job
    kernel = _folder(tmp_path / "k", "helper_worker", repeat=1)
    j = plan(kernel, grid={"tiles": [1]}, shapes=[["128x512"]], output=str(tmp_path / "o")).jobs[0]
    first = job.run(j)
    _helper(tmp_path / "k", "helper_worker", repeat=5)
    second = job.run(j)
    assert first["status"] == second["status"] == "ok"
    assert second["instructions"] == first["instructions"] + 4


@pytest.mark.parametrize("given,says", [
    (dict(arch="trn2"), "arch: a list of generations"),
    (dict(arch=["trn3"]), "arch: unknown generation 'trn3'"),
    (dict(arch=["trn1", "trn1"]), "arch: a generation is listed twice"),
    (dict(args={"factor": float("nan")}), "not a finite number"),
    (dict(args={"factor": {1: 2}}), "dict values are not supported"),
    (dict(grid={"factor": range(1, 3)}), "--grid factor: a list of values, not a range"),
    (dict(mode="full", seed=-1), "--seed -1: a non-negative integer"),
    (dict(shapes=["128x64"]), "a list of shape sets"),
], ids=["arch-string", "arch-unknown", "arch-twice", "arg-nan", "arg-dict", "grid-range", "seed",
        "shapes-flat"])
def test_the_python_api_checks_what_the_command_line_checks(tmp_path, given, says):
    from sweep_testing import FAULTS
    kw = dict(dict(grid={"factor": [1.0]}, shapes=[["128x64"]], output=str(tmp_path / "o"),
                   reference=f"{FAULTS}:scale_reference" if given.get("mode") == "full" else None),
              **given)
    with pytest.raises(SweepError, match=says.replace("(", r"\(").replace("[", r"\[")):
        plan(f"{FAULTS}:scale", **kw)


def test_a_numpy_scalar_argument_is_one_line_not_a_json_crash(tmp_path):
    import numpy as np
    from sweep_testing import FAULTS
    with pytest.raises(SweepError, match="float32 values are not supported"):
        plan(f"{FAULTS}:scale", grid={"factor": [1.0]}, shapes=[["128x64"]], output=str(tmp_path),
             args={"fault": np.float32(3)})


_SPIN = '''import os
from neuronxsim import nki
import neuronxsim.nki.language as nl


@nki.jit
def spin(a, hang=False):
    if hang:
        with open(os.environ["SPIN_PID_FILE"] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(os.environ["SPIN_PID_FILE"] + ".tmp", os.environ["SPIN_PID_FILE"])
    while hang:
        pass
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
'''


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_worker_stuck_in_a_kernel_ends_when_the_sweep_is_killed(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    import neuronxsim
    (tmp_path / "k.py").write_text(_SPIN)
    pid_file = tmp_path / "worker.pid"
    root = os.path.dirname(os.path.dirname(neuronxsim.__file__))
    env = dict(os.environ, SPIN_PID_FILE=str(pid_file),
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sweep_process = subprocess.Popen(
        [sys.executable, "-P", "-m", "neuronxsim", "sweep", f"{tmp_path / 'k.py'}:spin",
         "--grid", "hang=True", "--shapes", "128x64", "--output", str(tmp_path / "o"), "--jobs", "1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        for _ in range(600):  # (until the worker is in the kernel's loop)
            if pid_file.exists():
                worker = int(pid_file.read_text())
                break
            time.sleep(0.1)
        assert worker is not None, "the kernel never ran"
        sweep_process.send_signal(signal.SIGKILL)
        sweep_process.wait()
        for _ in range(300):  # (the zygote sees its socket close, ends, and the kernel kills the worker)
            if not _alive(worker):
                break
            time.sleep(0.1)
        assert not _alive(worker), "the worker spins on without its sweep"
    finally:
        if sweep_process.poll() is None:
            sweep_process.kill()
        if worker is not None and _alive(worker):
            os.kill(worker, signal.SIGKILL)  # (what this test started, by its pid)


def test_an_escaped_backslash_before_a_closing_quote_closes_it():
    from neuronxsim.sweep.space import parse_grid
    assert parse_grid([r'mode="a\\",2']) == {"mode": ["a\\", 2]}
    assert parse_grid([r'mode="a\"b",3']) == {"mode": ['a"b', 3]}


def test_top_0_prints_no_table_rather_than_that_nothing_ran():
    from neuronxsim.sweep.summary import table
    rows = [{"params": {"P": 1}, "status": "ok", "total_ns": 1000.0, "shapes": ["8x8:float32"],
             "arch": "trn1", "engine_busy": {}, "pe_mfu": 0.0, "instructions": 3}]
    assert table(rows, ["P"], 0) == ""
    assert "no configuration" not in table(rows, ["P"], 1)


def test_sys_exit_in_a_kernel_from_an_imported_module_fails_its_row_not_its_worker(tmp_path):
    from neuronxsim.sweep import job
    (tmp_path / "exits_lib.py").write_text(
        "import sys\nfrom neuronxsim import nki\n\n\n@nki.jit\ndef k(a, n=1):\n"
        "    sys.exit(f'n={n} is not supported')\n")
    (tmp_path / "entry.py").write_text("from exits_lib import k\n")
    j = plan(f"{tmp_path / 'entry.py'}:k", grid={"n": [3]}, shapes=[["128x64"]],
             output=str(tmp_path / "o")).jobs[0]
    result = job.run(j)  # (a SystemExit escaping would end the worker: twice, then a failed row)
    assert result["status"] == "failed" and result["error"] == "SystemExit: n=3 is not supported"


def test_profile_reads_a_deeply_nested_value_as_text_not_an_internal_error():
    from neuronxsim.cli.profile import kernel_arguments

    def kernel(a, factor=1.0):
        pass
    deep = "-" * 50000 + "1"
    assert kernel_arguments(kernel, 1, [f"factor={deep}"]) == {"factor": deep}

"""OutputSet: an output folder is replaced as a whole. After an exception, an I/O error, Ctrl-C,
SIGTERM or SIGKILL at any moment of the write phase the folder holds the complete previous set or
the complete new one, and no staging folder is left (SIGKILL's is removed by the next writer)."""

import json
import os
import random
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

from neuronxsim.cli import output_set
from neuronxsim.cli.output_set import MANIFEST, OutputError, OutputSet

sys.path.insert(0, os.path.dirname(__file__))
from child_process import pythonpath, sigint_as_a_terminal_gives_it  # noqa: E402
from output_set_driver import FILES, payload  # noqa: E402

DRIVER = os.path.join(os.path.dirname(__file__), "output_set_driver.py")


def write_generation(folder, generation):
    with OutputSet(str(folder), "test") as out:
        for name, size in FILES:
            out.write_bytes(name, payload(generation, name, size))


def files_in(folder):
    found = {}
    for root, _, names in os.walk(folder):
        for n in names:
            full = os.path.join(root, n)
            found[os.path.relpath(full, folder)] = full
    return found


def whole_set(folder) -> int:
    """The generation of the complete set ``folder`` holds (fails on a mix or a partial set)."""
    manifest = json.loads((folder / MANIFEST).read_text())
    found = files_in(folder)
    assert set(found) == set(manifest["files"]) | {MANIFEST}
    generations = set()
    for name, size in manifest["files"].items():
        data = open(found[name], "rb").read()
        assert len(data) == size and data.endswith(b"END\n"), name
        gen, file_name, declared = data.split(b"\n", 1)[0].decode().split()
        assert file_name == name and int(declared) == size
        generations.add(int(gen.split("=")[1]))
    assert len(generations) == 1, f"a mix of generations {sorted(generations)}"
    return generations.pop()


def leftovers(folder):
    return sorted(e for e in os.listdir(folder.parent) if e.startswith(f".{folder.name}."))


def test_a_new_set_replaces_the_old_one_whole(tmp_path):
    out = tmp_path / "out"
    write_generation(out, 1)
    assert whole_set(out) == 1
    with OutputSet(str(out), "test") as s:
        s.write_text("report.json", "{}")
    assert sorted(files_in(out)) == [MANIFEST, "report.json"]  # nothing of the old set is left
    assert json.loads((out / MANIFEST).read_text())["command"] == "test"
    assert leftovers(out) == []


def test_an_exception_in_the_block_keeps_the_previous_set(tmp_path):
    out = tmp_path / "out"
    write_generation(out, 3)
    with pytest.raises(KeyboardInterrupt):
        with OutputSet(str(out), "test") as s:
            s.write_bytes("trace.json", b"half")
            raise KeyboardInterrupt
    assert whole_set(out) == 3 and leftovers(out) == []


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "--output is empty"),
    (lambda p: (p / "mine").mkdir() or (p / "mine" / "thesis.tex").write_text("x"),
     "mine: exists and is not a neuronxsim output folder (it holds thesis.tex)"),
    (lambda p: (p / "file").write_text("x"), "file: exists and is not a folder"),
])
def test_folders_it_must_not_replace_are_refused(tmp_path, monkeypatch, make, message):
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    target = message.split(":")[0] if message[0] != "-" else ""
    with pytest.raises(OutputError) as e:
        OutputSet(target, "test")
    assert str(e.value).startswith(message)


def test_the_working_directory_and_its_parents_are_refused(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for target in (".", str(work), "..", "/"):
        with pytest.raises(OutputError, match="is the working directory or one of its parents"):
            OutputSet(target, "test")


def test_a_folder_without_manifest_is_refused_even_if_it_holds_only_names_neuronxsim_writes(tmp_path):
    """The user's own module.json is not known to be neuronxsim's from its name."""
    old = tmp_path / "old"
    old.mkdir()
    for name in ("module.json", "report.json"):
        (old / name).write_text("mine")
    with pytest.raises(OutputError, match="old: exists and is not a neuronxsim output folder "
                                          r"\(it holds module.json, report.json\)"):
        OutputSet(str(old), "test")
    assert sorted(os.listdir(old)) == ["module.json", "report.json"]


@pytest.mark.parametrize("change, named", [
    (lambda out: (out / "notes.txt").write_text("my notes"), "notes.txt"),
    (lambda out: (out / "sub" / "mine.txt").write_text("mine"), "sub/mine.txt"),  # in a folder it wrote
    (lambda out: (out / "report.json").write_text("edited"), "report.json"),  # not as neuronxsim wrote it
    (lambda out: (out / "mine").mkdir(), "mine"),
    (lambda out: os.symlink("/etc", out / "link"), "link"),
])
def test_an_output_folder_holding_anything_its_manifest_does_not_list_is_refused(tmp_path, change, named):
    out = tmp_path / "out"
    with OutputSet(str(out), "test") as s:
        s.write_text("report.json", "{}")
        s.write_text("sub/kernel.klr", "klr")
    change(out)
    before = files_in(out)
    with pytest.raises(OutputError) as e:
        OutputSet(str(out), "test")
    assert str(e.value) == (f"{out}: holds files neuronxsim did not write or that changed since ({named}); "
                            "move them or name a new or empty folder")
    assert files_in(out) == before


def test_an_output_folder_holding_an_input_of_the_command_is_refused(tmp_path, monkeypatch):
    """Even one that holds only neuronxsim's files: a module simulated into the folder it was lowered to."""
    out = tmp_path / "out"
    with OutputSet(str(out), "test") as s:
        s.write_text("module.json", "{}")
    monkeypatch.chdir(tmp_path)
    for given in ("out/module.json", str(out / "module.json"), "out/../out/module.json", "out"):
        with pytest.raises(OutputError, match=f"^out: holds {given}, which this command reads; name another folder"):
            OutputSet("out", "test", inputs=(given,))
    OutputSet("out", "test", inputs=(None, "elsewhere.json"))  # (an option not given, a file outside)


def test_an_io_error_names_the_file_and_keeps_the_previous_set(tmp_path):
    """A real write error (the file-size limit: EFBIG, as ENOSPC would be), in a subprocess."""
    out = tmp_path / "out"
    write_generation(out, 5)
    code = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from output_set_driver import FILES, payload
        from neuronxsim.cli.output_set import OutputSet, OutputError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))
        try:
            with OutputSet({str(out)!r}, "test") as s:
                for name, size in FILES:
                    s.write_bytes(name, payload(6, name, size))
        except OutputError as e:
            print(e)
    """)
    r = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": pythonpath()})
    assert r.stdout.strip() == (f"{out}/trace.json: cannot write it (File too large); the folder keeps its "
                                "previous contents"), r.stderr
    assert whole_set(out) == 5 and leftovers(out) == []


def test_without_rename_exchange_two_renames_are_used_and_undone_when_interrupted(tmp_path, monkeypatch):
    monkeypatch.setattr(output_set, "_exchange", lambda a, b: False)
    out = tmp_path / "out"
    write_generation(out, 7)
    write_generation(out, 8)
    assert whole_set(out) == 8 and leftovers(out) == []
    # Killed between the two renames: the next writer puts the previous set back first.
    aside = tmp_path / f".out{output_set._ASIDE}x"
    os.rename(out, aside)
    (tmp_path / f".out{output_set._STAGING}y").mkdir()
    output_set.recover(str(out))
    assert whole_set(out) == 8 and leftovers(out) == []


def test_a_stale_staging_folder_is_removed_but_a_live_one_is_kept(tmp_path):
    out = tmp_path / "out"
    write_generation(out, 9)
    stale = tmp_path / f".out{output_set._STAGING}dead"
    stale.mkdir()
    (stale / "trace.json").write_text("half")
    live = tmp_path / f".out{output_set._STAGING}live"
    live.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, sys
        fd = os.open({str(live)!r}, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("locked", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        write_generation(out, 10)
        assert leftovers(out) == [live.name]
    finally:
        holder.communicate("")
    write_generation(out, 11)
    assert whole_set(out) == 11 and leftovers(out) == []



def test_a_signal_delivered_to_another_thread_waits_until_the_steps_are_done():
    """The kernel hands a signal to any thread that does not block it (the simulator's matmul
    helpers, a progress bar's ticker), and Python runs its handler in the main thread as soon as
    that thread hands it the GIL: a Ctrl-C arriving during the steps is handled after the last
    one, then as usual."""
    import threading
    import time

    stop = threading.Event()

    def busy():  # (a thread running Python: the two take turns at the GIL every 5 ms)
        while not stop.is_set():
            pass

    # Python's own Ctrl-C handler, also where the tests run with SIGINT ignored (a shell starts
    # a background job so, and Python then installs none)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    other = threading.Thread(target=busy)
    other.start()
    steps = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with output_set._signals_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < 0.2:  # (many turns at the GIL)
                    steps.append(None)
                steps.append("last")
        assert steps[-1] == "last"
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        stop.set()
        other.join()
        signal.signal(signal.SIGINT, inherited)


def test_signals_deferred_puts_back_every_handler_when_the_block_raises():
    before = {s: signal.getsignal(s) for s in output_set._DEFERRED}
    with pytest.raises(ValueError):
        with output_set._signals_deferred():
            assert all(signal.getsignal(s) is not before[s] for s in before)
            raise ValueError("a step failed")
    assert {s: signal.getsignal(s) for s in before} == before


SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)


@pytest.mark.parametrize("ending", ["sys.exit(1)", "raise KeyboardInterrupt"])
def test_a_set_whose_with_block_was_cut_is_discarded_as_the_process_exits(tmp_path, ending):
    """A signal's exception can land as ``__exit__`` begins, before it can discard the staging
    folder (Python runs handlers on entering a function): the process's exit removes it."""
    out = tmp_path / "out"
    write_generation(out, 0)
    script = textwrap.dedent(f"""
        import sys
        from neuronxsim.cli.output_set import OutputSet
        s = OutputSet(sys.argv[1], "test").__enter__()  # (its with block never ends)
        s.write_bytes("report.json", b"partial")
        {ending}
    """)
    p = subprocess.run([sys.executable, "-P", "-c", script, str(out)], capture_output=True,
                       env={**os.environ, "PYTHONPATH": pythonpath()})
    assert p.returncode != 0 and b"Error" not in p.stderr.replace(b"KeyboardInterrupt", b"")
    assert leftovers(out) == [] and whole_set(out) == 0


def test_killed_at_random_moments_the_folder_holds_one_whole_set(tmp_path):
    """Many trials: the driver rewrites the folder in a loop and gets SIGKILL, SIGTERM or SIGINT
    at a random moment; the folder must hold one complete generation every time."""
    rng = random.Random(21)
    out = tmp_path / "out"
    write_generation(out, 0)
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    generation, seen = 0, set()
    for trial in range(60):
        sig = SIGNALS[trial % 3]
        first = generation + 1000
        p = subprocess.Popen([sys.executable, "-P", DRIVER, str(out), str(first)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env,
                             preexec_fn=sigint_as_a_terminal_gives_it)
        assert p.stdout.readline() == b"ready\n"
        try:
            p.wait(timeout=rng.uniform(0.0, 0.25))
        except subprocess.TimeoutExpired:
            p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()
        generation = whole_set(out)
        seen.add(generation >= first)
        if sig != signal.SIGKILL:
            assert leftovers(out) == [], (trial, sig, leftovers(out))
        output_set.recover(str(out))
        assert leftovers(out) == []
    assert seen == {True, False}  # some trials got a new set in, some were killed before


def test_killed_simulate_commands_leave_one_whole_set(tmp_path):
    """The same with the real command: `simulate` rewriting one folder with a new seed each time."""
    import numpy as np

    from neuronxsim import bir, pipeline
    from neuronxsim.cli import main
    from neuronxsim.starfish.penguin import ir

    p = ir.Program("mm")
    a, b = p.tensor("a", [128, 256]), p.tensor("b", [256, 512])
    p.add(ir.BIRKernel("RowTiledMM", [ir.FullTensorAccess(a), ir.FullTensorAccess(b)],
                       [ir.FullTensorAccess(p.tensor("y", [128, 512], kind="output"))], name="mm"))
    module = tmp_path / "module.json"
    bir.save(pipeline.resolve(pipeline.lower(p, "trn1")).module, module)
    out = tmp_path / "out"
    expected = {}

    def outputs_of_seed(seed):
        if seed not in expected:
            assert main(["simulate", str(module), "--seed", str(seed), "--output", str(tmp_path / "ref"),
                         "--quiet"]) == 0
            expected[seed] = np.load(tmp_path / "ref" / "outputs.npz")["y"]
        return expected[seed]

    loop = (f"import sys\nfrom neuronxsim.cli import main\ng = {{}}\n"
            f"try:\n"
            f"    while True:\n"
            f"        if main(['simulate', {str(module)!r}, '--seed', str(g), '--output', {str(out)!r}, '--quiet']):\n"
            f"            sys.exit(1)  # stopped by the signal\n"
            f"        print('ready', flush=True)  # once a set is in, every moment of the loop is fair game\n"
            f"        g += 1\n"
            f"except KeyboardInterrupt:  # Ctrl-C between two commands, outside main\n"
            f"    sys.exit(1)\n")
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    rng = random.Random(7)
    seed = 0
    for trial in range(6):
        sig = SIGNALS[trial % 3]
        p = subprocess.Popen([sys.executable, "-P", "-c", loop.format(seed + 1)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env,
                             preexec_fn=sigint_as_a_terminal_gives_it)
        assert p.stdout.readline() == b"ready\n"
        try:
            p.wait(timeout=rng.uniform(0.0, 1.0))
        except subprocess.TimeoutExpired:
            p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()
        manifest = json.loads((out / MANIFEST).read_text())
        assert {n: os.path.getsize(out / n) for n in manifest["files"]} == manifest["files"]
        assert set(files_in(out)) == set(manifest["files"]) | {MANIFEST}
        seed = json.loads((out / "report.json").read_text())["seed"]
        np.testing.assert_array_equal(np.load(out / "outputs.npz")["y"], outputs_of_seed(seed))
        if sig != signal.SIGKILL:
            assert leftovers(out) == []


def test_replace_file_keeps_the_old_file_or_puts_the_whole_new_one(tmp_path):
    """A sweep's picture beside its append-only results: a failing writer leaves the previous
    file and no temporary; a killed writer's temporary is removed by the next write."""
    path = tmp_path / "sweep.png"
    output_set.replace_file(str(path), lambda p: open(p, "wb").write(b"old"))
    stale = tmp_path / ".neuronxsim-partial-99999-sweep.png"
    stale.write_bytes(b"half")

    def fails(p):
        open(p, "wb").write(b"ne")
        raise OSError(28, "No space left on device")

    with pytest.raises(output_set.OutputError, match=r"sweep.png: cannot write it \(No space left on device\); "
                                                     r"it keeps its previous contents"):
        output_set.replace_file(str(path), fails)
    assert sorted(os.listdir(tmp_path)) == ["sweep.png"] and path.read_bytes() == b"old"
    output_set.replace_file(str(path), lambda p: open(p, "wb").write(b"new"))
    assert sorted(os.listdir(tmp_path)) == ["sweep.png"] and path.read_bytes() == b"new"

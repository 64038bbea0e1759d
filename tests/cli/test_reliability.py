"""The reliability suite: malformed programs, modules, KLR files, input archives, arguments and
file kinds (tests/cli/corpus/ and a few made here) through every entry point. Each must end with
exactly one line on stderr, ``neuronxsim: error: ...`` naming what and where, the right exit
status, no traceback, and nothing written."""

import io
import json
import os
import re
import signal
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from neuronxsim import bir
from neuronxsim.cli import main
from neuronxsim.cli.inputs import InputError
from neuronxsim.cli.failures import MAX_LINE

sys.path.insert(0, os.path.dirname(__file__))
from child_process import pythonpath, sigint_as_a_terminal_gives_it  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


def c(name):
    return os.path.join(CORPUS, name)


def run_cli(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_error_line(err, needle, status, expected_status):
    assert status == expected_status, err
    assert err.startswith("neuronxsim: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and len(err) <= MAX_LINE + 40, err
    assert needle in err, err


CASES = [
    # Penguin programs (lower)
    (["lower", c("program_huge_dim.json")], "program_huge_dim.json: tensors[0]: Tensor 'a' shape"),
    (["lower", c("program_huge_int.json")], "program_huge_int.json: not a Penguin program: Exceeds the limit"),
    (["lower", c("program_not_utf8.json")], "program_not_utf8.json: not UTF-8 text (byte 42 is 0xff)"),
    (["lower", c("program_binary.py")], "program_binary.py: the program is not Python source"),
    (["lower", c("program_wrong_format.json")], "program_wrong_format.json: not a Penguin program"),
    (["lower", c("program_unknown_tensor.json")], "program_unknown_tensor.json: insts[0].srcs[0].access"),
    (["lower", c("program_syntax.py")], "program_syntax.py:1: SyntaxError: invalid syntax"),
    (["lower", c("program_raises.py")], "program_raises.py:2: ValueError: the user says no"),
    (["lower", c("program_assert.py")], "program_assert.py:2: AssertionError: sizes disagree"),
    (["lower", c("program_exit0.py")], "program_exit0.py:2: the code called sys.exit(0)"),
    (["lower", c("program_not_a_program.py")], "program_not_a_program.py: `program` is int"),
    (["lower", c("program_bad_shape.py")], "program_bad_shape.py:5: Tensor 'a' shape"),
    (["lower", CORPUS], "corpus: is a directory; the program must be a regular file"),
    (["lower", "/dev/null"], "/dev/null: is a character device"),
    (["lower", c("module_text.json"), "-o", "out.json"], "lower writes a folder"),
    # BIR modules (simulate, resolve, info)
    (["simulate", c("module_empty.json")], "module_empty.json: invalid JSON"),
    (["simulate", c("module_text.json")], "module_text.json: invalid JSON"),
    (["simulate", c("module_version1.json")], "module_version1.json: version: BIR JSON version 1 is not supported"),
    (["simulate", c("module_bad_blocks.json")], "module_bad_blocks.json: functions[0].blocks: expected an array"),
    (["simulate", c("module_not_utf8.json")], "module_not_utf8.json: the module is not UTF-8 text (byte 27"),
    (["simulate", c("module_huge_int.json")], "module_huge_int.json: invalid JSON"),
    (["simulate", c("module_shape_overflow.json"), "--mode", "timing"],
     "module_shape_overflow.json: functions[0].allocations[0].tensor_shape: the tensor's size overflows"),
    (["resolve", c("module_bad_blocks.json"), "-o", "r.json"], "functions[0].blocks: expected an array"),
    (["resolve", CORPUS, "-o", "r.json"], "corpus: is a directory; the module must be a regular file"),
    (["info", CORPUS], "corpus: is a directory; the file to summarise must be a regular file"),
    (["info", "/dev/null"], "/dev/null: is a character device"),
    (["info", c("module_empty.json")], "module_empty.json: the file is empty"),
    (["info", c("module_version1.json")], "module_version1.json: not a BIR module: version"),
    (["info", "missing.json"], "missing.json: no such file"),
    # kernel nodes naming files outside the module's folder (resolve, simulate)
    (["resolve", c("module_it56_parent.json"), "-o", "r.json"],
     "klir_binary '../../../../../../../../etc/passwd' is outside the files folder"),
    (["simulate", c("module_it56_absolute.json")], "klir_binary '/etc/passwd' is outside the files folder"),
    (["simulate", c("module_it56_missing.json")], "corpus/klr/missing.klr: cannot open the file (No such file"),
    # KLR files (info)
    (["info", c("klr_empty.klr")], "klr_empty.klr: the file is empty"),
    (["info", c("klr_text.klr")], "klr_text.klr: byte 0: not a KLR file"),
    (["info", c("klr_truncated.klr")], "klr_truncated.klr: byte 36: truncated text string"),
    (["info", c("klr_random.klr")], "klr_random.klr: byte 0: not a KLR file"),
    # input archives (simulate --inputs)
    (["simulate", c("module_add.json"), "--inputs", c("npz_bad_header.npz")], "array 'a': not a valid .npy array header"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_crc.npz")], "array 'a': its data cannot be read; the file is corrupt (Bad CRC-32"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_empty.npz")], "npz_empty.npz: not an .npz archive (numpy.savez): it is empty"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_object.npz")], "array 'a': holds Python objects (a pickle)"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_strings.npz")], "array 'a': holds strings (<U2)"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_text.npz")], "npz_text.npz: not an .npz archive (numpy.savez): it starts with text"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_truncated.npz")], "npz_truncated.npz: not a readable .npz archive"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_unknown.npz")], "array 'c' is not an input of the module; its inputs are ['a', 'b']"),
    (["simulate", c("module_add.json"), "--inputs", c("npz_wrong_shape.npz")], "array 'a': has shape [8, 128]; the module's input is [128, 8]"),
    (["simulate", c("module_add.json"), "--inputs", c("plain.npy")], "plain.npy: is a single .npy array"),
    (["simulate", c("module_add.json"), "--inputs", CORPUS], "corpus: is a directory; the inputs archive must be a regular file"),
    (["simulate", c("module_add.json"), "--inputs", "/proc/self/mem"],
     "/proc/self/mem: cannot read the inputs archive (Input/output error)"),
    # kernels (profile)
    (["profile", c("kernel.json") + ":k", "--shapes", "4x4"], "kernel.json: a kernel file is a Python file"),
    (["profile", c("program_binary.py") + ":k", "--shapes", "4x4"], "program_binary.py: the kernel file is not Python source"),
    (["profile", c("kernel_raises.py") + ":divides", "--shapes", "4x4"], "kernel_raises.py:8: ZeroDivisionError: division by zero"),
    (["profile", c("kernel_nki_error.py") + ":too_wide", "--shapes", "256x512"],
     "kernel_nki_error.py:8: nl.load: the source's first dimension (256) becomes the tile's partition dimension"),
    (["profile", c("kernel_raises.py") + ":divides", "--shapes", "4x4", "4x4"], "kernel_raises.py:5: kernel 'divides' takes 1 positional argument(s) (a); --shapes gives 2 arrays"),
    (["profile", c("kernel_raises.py") + ":missing", "--shapes", "4x4"], "kernel_raises.py defines no 'missing'"),
    (["profile", c("kernel_base_exception.py") + ":skips", "--shapes", "4x4"],
     "kernel_base_exception.py:11: Skipped: not on this host"),
    (["profile", c("kernel_raises.py") + ":divides", "--shapes", "128x512:sbuf"], "unknown dtype 'sbuf'; expected one of float32"),
    (["profile", c("kernel_raises.py") + ":divides", "--shapes", "-1x512"], "--shapes '-1x512': every dim must be a positive integer"),
    (["profile", c("kernel_raises.py") + ":divides", "--shapes", "128by512"], "expected dims joined by 'x'"),
    (["profile", c("kernel_raises.py") + ":divides", "--shapes", "100000x100000"], "needs about 111.8 GiB of memory"),
    # the layer (run): sizes whose NumPy check cannot fit are refused before any work
    (["run", "--tokens", "1000000"], "Use --mode timing (time only, no numerics) or fewer --tokens."),
]

ARGUMENT_CASES = [
    (["run", "--tokens", "99999999999999999999999"], "run: argument --tokens: 99999999999999999999999 is too large"),
    (["run", "--tokens", "-3"], "run: argument --tokens: -3 is not a positive integer"),
    (["run", "--seed", "-1"], "run: argument --seed: -1 is not a seed"),
    (["run", "--output", ""], "run: argument --output: an empty name"),
    (["demo", "--output", " "], "demo: argument --output: an empty name"),
    (["simulate", c("module_add.json"), "--seed", "1e3"], "simulate: argument --seed: '1e3' is not a seed"),
    (["profile", "k.py:k", "--shapes", "4x4", "--top", "x" * 100], "profile: argument --top: 'xxxxxxxxxxxxxxxxxxxxxxxx...' is not"),
    (["simulate", c("module_add.json"), "--inputs", ""], "simulate: argument --inputs: an empty name; name a file"),
    (["resolve", c("module_add.json"), "-o", "r.json", "--base-dir", ""],
     "resolve: argument --base-dir: an empty name; name a folder"),
    (["nonsense"], "argument command: invalid choice: 'nonsense'"),
    (["profile", "k.py:k", "--shapes", "4x4", "--max-instructions", "0"],
     "profile: argument --max-instructions: 0 is not a positive integer"),
    (["exec", "--max-instructions", "0", "script.py"], "exec: argument --max-instructions: 0 is not a positive integer"),
    (["sweep", "k.py:k", "--grid", "A=1", "--shapes", "4x4", "--max-instructions", "-1"],
     "sweep: argument --max-instructions: -1 is not a positive integer"),
]


@pytest.mark.parametrize("argv, needle", CASES, ids=[f"{a[0]}-{os.path.basename(a[1])}-{i}" for i, (a, _) in enumerate(CASES)])
def test_bad_input_is_one_line_and_exit_1(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if argv[0] in ("lower", "simulate", "profile", "run") and "-o" not in argv:
        argv = argv + (["-o", "out"] if argv[0] == "lower" else ["--output", "out"])
    status, out, err = run_cli(argv, capsys)
    assert_one_error_line(err, needle, status, 1)
    assert os.listdir(tmp_path) == []  # nothing written, no staging folder left


@pytest.mark.parametrize("argv, needle", ARGUMENT_CASES)
def test_bad_arguments_are_one_line_and_exit_2(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(argv, capsys)
    assert_one_error_line(err, needle, status, 2)


def test_errors_are_also_a_json_document_with_json(tmp_path, capsys, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(["info", "--json", CORPUS], capsys)
    assert status == 1 and err.count("\n") == 1
    doc = json.loads(out)
    assert doc["command"] == "info" and doc["exit_status"] == 1 and "is a directory" in doc["error"]


def test_an_input_archive_is_read_in_fortran_order(tmp_path, capsys):
    status, _, err = run_cli(["simulate", c("module_add.json"), "--inputs", c("npz_ok_fortran.npz"), "--output",
                              str(tmp_path / "o"), "--quiet"], capsys)
    assert status == 0, err
    with np.load(tmp_path / "o" / "outputs.npz") as out, np.load(c("npz_ok_fortran.npz")) as given:
        a = given["a"].astype(np.float32)
        report = __import__("json").loads((tmp_path / "o" / "report.json").read_text())
        assert report["generated_inputs"] == ["b"]
        b = out["out"] - a  # b was generated; a must have gone in element for element
        assert np.array_equal(a + b, out["out"]) and np.array_equal(a, np.arange(1024).reshape(128, 8))


def test_a_small_archive_that_inflates_to_hundreds_of_megabytes_is_refused_from_its_header(tmp_path, capsys,
                                                                                           monkeypatch):
    """320 MB of zeros compressed to about 300 KB, declared as a [20000, 2000] float64 array: the
    header is refused before its data is decompressed (the 3.2 GB case is the same with 10x)."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (20000, 2000)})
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, z.open("a.npy", "w", force_zip64=True) as m:
        m.write(header.getvalue())
        zeros = bytes(1 << 24)
        for _ in range(20000 * 2000 * 8 // len(zeros)):
            m.write(zeros)
    assert bomb.stat().st_size < 1 << 20
    inflated = []
    real_read = zipfile.ZipExtFile.read
    monkeypatch.setattr(zipfile.ZipExtFile, "read", lambda self, n=-1: inflated.append(n) or real_read(self, n))
    status, _, err = run_cli(["simulate", c("module_add.json"), "--inputs", str(bomb), "--output",
                              str(tmp_path / "o")], capsys)
    assert_one_error_line(err, "array 'a': has shape [20000, 2000]; the module's input is [128, 8]", status, 1)
    assert sum(n for n in inflated if n > 0) < 1 << 16  # the magic and the header only


def _cli(*argv, timeout=60, **kw):
    return subprocess.run([sys.executable, "-P", "-m", "neuronxsim", *argv], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": pythonpath()}, **kw)


def test_a_named_pipe_is_refused_without_waiting_on_it(tmp_path):
    """Every command that reads a module or program, on a FIFO, in one child process (a hang
    would time it out): one line each, naming the pipe."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    commands = [["simulate"], ["resolve", "-o", "r.json"], ["info"], ["lower", "-o", "o"]]
    code = ("import contextlib, io, json, sys\nfrom neuronxsim.cli import main\nresults = []\n"
            f"for argv in {[[c[0], str(fifo), *c[1:]] for c in commands]!r}:\n"
            "    err = io.StringIO()\n"
            "    with contextlib.redirect_stderr(err):\n"
            "        status = main(argv)\n"
            "    results.append([status, err.getvalue()])\n"
            "print(json.dumps(results))")
    r = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": pythonpath()})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    for command, (status, err) in zip(commands, json.loads(r.stdout)):
        assert status == 1 and err.count("\n") == 1, (command, err)
        assert "pipe.json: is a named pipe (FIFO)" in err, (command, err)


def test_a_closed_pipe_ends_the_command_quietly():
    p = subprocess.Popen(f"{sys.executable} -P -m neuronxsim registry | head -n 1", shell=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": pythonpath()})
    out, err = p.communicate(timeout=120)
    assert out.startswith("#") and err == ""


def test_ctrl_c_is_one_line_and_status_130(tmp_path):
    # "ready" comes from inside the command's first step, where the interrupt must land.
    p = subprocess.Popen([sys.executable, "-P", "-c", "import sys, time\nfrom neuronxsim.cli import main\n"
                          "import neuronxsim.cli.run as r\n"
                          "r.layer.build_program = lambda cfg, tensors_only=False: (print('ready', flush=True), "
                          "time.sleep(60))\nsys.exit(main(['run', '--output', 'o']))"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": pythonpath()},
                         preexec_fn=sigint_as_a_terminal_gives_it)
    assert p.stdout.readline() == "ready\n"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err == "neuronxsim: interrupted\n"
    assert os.listdir(tmp_path) == []


def test_every_subcommand_has_json_and_quiet():
    from neuronxsim.cli import COMMANDS, SCRIPT_COMMANDS, build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in set(COMMANDS) - set(SCRIPT_COMMANDS):  # exec's output is the script's own
        options = {o for a in sub.choices[name]._actions for o in a.option_strings}
        assert {"--json", "--quiet"} <= options, name


def test_an_error_line_is_capped():
    from neuronxsim.cli.failures import one_line

    line = one_line("x" * 200_000 + "\n  y\x1b[2J")
    assert len(line) <= MAX_LINE and line.endswith("--debug shows all)")
    assert one_line("a\n    b\x07") == "a | b\\x07"


def test_running_out_of_memory_is_one_line_and_leaves_nothing(tmp_path):
    """A data limit (ulimit -d) the layer's timing run outgrows while the C++ core builds its
    program: the std::bad_alloc ends as one line (not as glibc's abort when the C++ runtime's
    thread-local data or an unwinding destructor cannot be allocated, cpp/python/out_of_memory.cpp),
    and no output folder or staging folder is left."""
    code = ("import resource, sys\nfrom neuronxsim.cli import main, memory\n"
            "resource.setrlimit(resource.RLIMIT_DATA, (memory._data_bytes() + (200 << 20), resource.RLIM_INFINITY))\n"
            "sys.exit(main(['run', '--tokens', '8192', '--mode', 'timing', '--output', 'o', '--quiet']))")
    r = subprocess.run([sys.executable, "-P", "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": pythonpath()})
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("neuronxsim: error: out of memory") and "(std::bad_alloc)" in r.stderr
    assert "try smaller sizes" in r.stderr
    assert os.listdir(tmp_path) == []


def test_a_kernel_node_expanding_past_the_instruction_cap_is_one_line(tmp_path, capsys, monkeypatch):
    """The cap on one kernel node's expansion stops an enormous expansion before it exhausts
    memory (made small here, so that the layer's first node, QKV, exceeds it)."""
    monkeypatch.setenv("NEURONXSIM_MAX_INSTRUCTIONS", "200")
    status, _, err = run_cli(["run", "--tokens", "128", "--mode", "timing", "--output", str(tmp_path / "o"),
                              "--quiet"], capsys)
    assert_one_error_line(err, "(kernel 'QKV'): its expansion has more than 200 instructions, the cap", status, 1)
    assert os.listdir(tmp_path) == []


def test_a_file_a_node_names_is_never_quoted(tmp_path, capsys):
    """Even inside the module's own folder, a file that is not a kernel is refused without a
    word of its contents (the parse error's "last read" is dropped)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-FIRST-LINE: the parse error must not echo this\n")
    module = open(c("module_it56_absolute.json")).read().replace("/etc/passwd", str(secret))
    (tmp_path / "module.json").write_text(module)
    status, _, err = run_cli(["resolve", str(tmp_path / "module.json"), "-o", str(tmp_path / "r.json")], capsys)
    assert_one_error_line(err, "secret.txt: not a BIR JSON module: invalid JSON", status, 1)
    assert "SECRET" not in err


def test_a_module_is_never_simulated_into_the_folder_that_holds_it(tmp_path, capsys, monkeypatch):
    """The folder the demo wrote holds only files its manifest lists, but simulating its own
    module.json into it would delete the module: refused, the folder untouched."""
    monkeypatch.chdir(tmp_path)
    assert run_cli(["demo", "--output", "d", "--quiet"], capsys)[0] == 0
    before = sorted(os.listdir("d"))
    status, _, err = run_cli(["simulate", "d/module.json", "--output", "d", "--quiet"], capsys)
    assert_one_error_line(err, "d: holds d/module.json, which this command reads; name another folder", status, 1)
    assert sorted(os.listdir("d")) == before


def test_an_output_file_that_is_a_pipe_or_a_directory_is_refused_not_replaced(tmp_path, capsys, monkeypatch):
    """resolve -o (checked before any work) and bir.atomic_write_bytes, which every single-file
    writer uses: the rename would put a regular file in the FIFO's (or, as root, a device's) place."""
    from neuronxsim import bir

    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe.json")
    os.mkdir("folder.json")
    for target, kind in (("pipe.json", "a named pipe (FIFO)"), ("folder.json", "a directory")):
        status, _, err = run_cli(["resolve", c("module_add.json"), "-o", target], capsys)
        assert_one_error_line(err, f"{target}: is {kind}; -o names the file to write, a regular file or a new one",
                              status, 1)
        with pytest.raises(OSError, match=re.escape(f"is {kind}; only a regular file is replaced")):
            bir.atomic_write_bytes(target, b"{}")
    assert os.path.isdir("folder.json") and os.listdir("folder.json") == []
    assert __import__("stat").S_ISFIFO(os.lstat("pipe.json").st_mode) and sorted(os.listdir()) == ["folder.json",
                                                                                                  "pipe.json"]


@pytest.mark.parametrize("given, want, needle", [
    (np.full((2, 3), 2**40 + 7, np.int64), np.int32, "the int64 value 1099511627783 at [0, 0] would become 7 as int32"),
    (np.array([[1.0, np.nan]]), np.int32, "the float64 value nan at [0, 1] would become -2147483648 as int32"),
    (np.array([[2.5]]), np.int32, "the float64 value 2.5 at [0, 0] would become 2 as int32"),
    (np.array([[2**64 - 1]], np.uint64), np.int32, "the uint64 value 18446744073709551615 at [0, 0] would become -1"),
    (np.array([[-1]], np.int8), np.uint8, "the int8 value -1 at [0, 0] would become 255 as uint8"),
    (np.array([[0, 2]], np.int32), np.bool_, "the int32 value 2 at [0, 1] would become True as bool"),
    (np.array([[1.0, 1e300]]), np.float32, "the float64 value 1e+300 at [0, 1] would become inf as float32"),
    (np.array([[70000.0]], np.float32), np.float16, "the float32 value 70000.0 at [0, 0] would become inf as float16"),
])
def test_an_input_whose_values_its_dtype_cannot_hold_is_refused(given, want, needle):
    from neuronxsim.cli.npz import read_npz_bytes

    archive = io.BytesIO()
    np.savez(archive, x=given)
    with pytest.raises(InputError) as e:
        read_npz_bytes(archive.getvalue(), {"x": (given.shape, np.dtype(want))}, "in.npz")
    assert str(e.value).startswith(f"in.npz: array 'x': {needle}"), str(e.value)
    assert str(e.value).endswith(f"the input's dtype; give values {np.dtype(want)} holds")


@pytest.mark.parametrize("given, want", [
    (np.arange(6, dtype=np.int64).reshape(2, 3) - 3, np.int32),  # in range: exact
    (np.array([[0.1, -1e-300, np.nan, -np.inf]]), np.float32),  # rounded; NaN and inf stay
    (np.array([[1 / 3, 3e38]], np.float32), "bfloat16"),  # bfloat16 rounds, and holds 3e38
    (np.array([[3.0, -7.0]]), np.int32),
    (np.array([[True, False]]), np.float32),
])
def test_an_input_its_dtype_holds_is_converted(given, want):
    from neuronxsim.cli.npz import read_npz_bytes
    from neuronxsim.sim import dtype_to_numpy

    want = dtype_to_numpy(bir.DType.bfloat16) if want == "bfloat16" else np.dtype(want)
    archive = io.BytesIO()
    np.savez(archive, x=given)
    got = read_npz_bytes(archive.getvalue(), {"x": (given.shape, want)}, "in.npz")["x"]
    assert got.dtype == want
    np.testing.assert_allclose(got.astype(np.float64), given.astype(np.float64), rtol=1e-2, atol=1e-30)


def test_a_kernel_node_is_named_at_its_index_in_the_module_given(tmp_path, capsys, monkeypatch):
    """The demo's IT56 node is instructions[2]: the IT54 and IT55 nodes ahead of it are expanded
    first (the IT54 pass, then the IT55/IT56 one), which had the error name it further on."""
    monkeypatch.chdir(tmp_path)
    assert run_cli(["demo", "--output", "d", "--quiet"], capsys)[0] == 0
    module = json.loads(open("d/module.json").read())
    node = module["functions"][0]["blocks"][0]["instructions"][2]
    assert node["opcode"] == "NKIKLIRKernel"
    node["grid"] = 0
    open("d/bad.json", "w").write(json.dumps(module))
    for argv in (["resolve", "d/bad.json", "-o", "r.json"], ["simulate", "d/bad.json", "--output", "o"]):
        status, _, err = run_cli(argv, capsys)
        assert_one_error_line(err, "functions[0].blocks[0].instructions[2] (NKIKLIRKernel 'NKIKLIRKernel'): grid 0 "
                                   "is not positive", status, 1)


def test_info_reads_bir_json_after_a_byte_order_mark_as_resolve_does(tmp_path, capsys):
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + open(c("module_add.json"), "rb").read())
    status, out, err = run_cli(["info", str(bom)], capsys)
    assert status == 0 and err == "" and "(BIR JSON v" in out.splitlines()[0], err
    assert run_cli(["resolve", str(bom), "-o", str(tmp_path / "r.json"), "--quiet"], capsys)[0] == 0


def test_a_refusal_while_resolving_or_simulating_names_the_module_file(tmp_path, capsys, monkeypatch):
    # (a kernel node's or an instruction's place in the module was given, not the module's file)
    monkeypatch.chdir(tmp_path)
    assert run_cli(["demo", "--output", "d", "--quiet"], capsys)[0] == 0
    module = json.loads(open("d/module.json").read())
    node = module["functions"][0]["blocks"][0]["instructions"][2]
    node["grid"] = 0
    open("d/bad_node.json", "w").write(json.dumps(module))
    for argv in (["resolve", "d/bad_node.json", "-o", "r.json"], ["simulate", "d/bad_node.json", "--output", "o"]):
        status, _, err = run_cli(argv, capsys)
        assert_one_error_line(err, "error: d/bad_node.json: functions[0].blocks[0].instructions[2] ", status, 1)
    assert run_cli(["resolve", "d/module.json", "-o", "r.json"], capsys)[0] == 0
    resolved = json.loads(open("r.json").read())
    first = resolved["functions"][0]["blocks"][0]["instructions"][0]
    first["engine"] = "PE"  # (no instruction of the demo's runs on PE but matmuls)
    open("d/bad_engine.json", "w").write(json.dumps(resolved))
    status, _, err = run_cli(["simulate", "d/bad_engine.json", "--output", "o"], capsys)
    assert_one_error_line(err, "error: d/bad_engine.json: functions[0].blocks[0].instructions[0] ", status, 1)

"""Bad input to `neuronxsim sweep` is one line on stderr and exit status 1, before any
configuration runs (no results file is written)."""

import os
import sys

import pytest

from neuronxsim.cli import main

from sweep_testing import KERNELS, MATMUL, MATMUL06, SHAPES


def run(capsys, tmp_path, *argv):
    out = tmp_path / "out"
    code = main(["sweep", *argv, "--output", str(out)])
    err = capsys.readouterr().err
    assert not (out / "results.jsonl").exists()
    return code, err


def good(*extra):
    return [MATMUL, "--shapes", *SHAPES[0], *extra]


@pytest.mark.parametrize("argv, message", [
    (good("--grid", "TILES=1,2"), "--grid TILES: blocked_matmul has no parameter 'TILES' (its "
                                  "parameters: lhsT, rhs, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, "
                                  "TILES_IN_BLOCK_K)"),
    (good("--grid", "TILES_IN_BLOCK_M="), "--grid 'TILES_IN_BLOCK_M=': an empty value"),
    (good(), "an empty grid: give at least one --grid NAME=v1,v2,..."),
    (good("--grid", "lhsT=1,2"), "--grid lhsT: that parameter takes an array from --shapes"),
    (good("--grid", "TILES_IN_BLOCK_M=1", "--arg", "TILES_IN_BLOCK_M=2"),
     "TILES_IN_BLOCK_M: given both by --grid and --arg"),
    (good("--grid", "TILES_IN_BLOCK_M=1", "--arch", "trn1,trn7"), "unknown generation 'trn7'"),
    (good("--grid", "TILES_IN_BLOCK_M=1", "--mode", "full"),
     "--mode full checks the outputs against a reference"),
    (good("--grid", "TILES_IN_BLOCK_M=1", "--colour", "X"), "--colour X: not a --grid parameter"),
    (good("--grid", "TILES_IN_BLOCK_M=1", "--jobs", "0"), "--jobs 0: at least one worker"),
    # (JSON has no infinity: both were recorded as null, the same configuration twice)
    (good("--grid", "TILES_IN_BLOCK_M=1e999,-1e999"),
     "--grid TILES_IN_BLOCK_M=inf: inf is not a finite number"),
    (good("--grid", "TILES_IN_BLOCK_M=1", "--arg", "TILES_IN_BLOCK_N=(1, -1e999)"),
     "--arg TILES_IN_BLOCK_N=(1, -1e999): -inf is not a finite number"),
    ([MATMUL, "--grid", "TILES_IN_BLOCK_M=1", "--shapes", "256x512:bfloat16"],
     "blocked_matmul needs 'rhs'"),
    ([MATMUL.replace("blocked_matmul.py", "missing.py"), "--grid", "A=1", "--shapes", "8x8"],
     "missing.py: no such file"),
    ([MATMUL.rpartition(":")[0] + ":nothing", "--grid", "A=1", "--shapes", "8x8"],
     "blocked_matmul.py defines no 'nothing'"),
])
def test_bad_arguments(capsys, tmp_path, argv, message):
    code, err = run(capsys, tmp_path, *argv)
    assert code == 1
    assert err.count("\n") == 1 and message in err, err


def test_a_kernel_file_that_cannot_be_imported(capsys, tmp_path):
    for text, message in (("import nki.not_a_module\n", "No module named 'nki.not_a_module'"),
                          ("def broken(:\n", "broken.py:1: invalid syntax"),
                          ("x = 1\nraise RuntimeError('no device')\n",
                           "line 2: RuntimeError: no device")):
        path = tmp_path / "broken.py"
        path.write_text(text)
        code, err = run(capsys, tmp_path, f"{path}:kernel", "--grid", "A=1", "--shapes", "8x8")
        assert code == 1 and err.count("\n") == 1 and message in err, err


def test_a_file_that_exits_at_import_is_refused_naming_it(capsys, tmp_path):
    # sys.exit(0) at import ended the sweep with status 0, having run and said nothing.
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\n\nsys.exit(0)\n")
    code, err = run(capsys, tmp_path, f"{quits}:kernel", "--grid", "A=1", "--shapes", "8x8")
    assert code == 1 and err.count("\n") == 1
    assert f"{quits}: line 3: exits at import (sys.exit(0))" in err, err
    code, err = run(capsys, tmp_path, *good("--grid", "TILES_IN_BLOCK_M=1", "--mode", "full",
                                            "--reference", f"{quits}:reference"))
    assert code == 1 and err.count("\n") == 1
    assert f"{quits}: line 3: exits at import (sys.exit(0))" in err, err


NOT_KERNELS = """
import neuronxcc.nki.language as nl


def plain(a, A=1):
    return a
"""


def test_errors_name_the_user_s_file_not_neuronxsim_s(capsys, tmp_path, monkeypatch):
    not_kernels = tmp_path / "not_kernels.py"
    not_kernels.write_text(NOT_KERNELS)
    for ref, message in ((f"{not_kernels}:plain", f"{not_kernels}:plain: a function, not an NKI "
                                                  "kernel (decorate it with @nki.jit)"),
                         (f"{not_kernels}:nl", f"{not_kernels}:nl: a module, not an NKI kernel"),
                         (f"{tmp_path}:kernel", f"{tmp_path}: is a directory; the kernel file "
                                                "must be a regular file"),
                         ("/dev/null:kernel", "/dev/null: is a character device; the kernel file "
                                              "must be a regular file")):
        code, err = run(capsys, tmp_path, ref, "--grid", "A=1", "--shapes", "8x8")
        assert code == 1 and err.count("\n") == 1 and message in err, err
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn9")
    code, err = run(capsys, tmp_path, MATMUL06, "--grid", "TILES_IN_BLOCK_M=1", "--shapes", *SHAPES[0])
    assert code == 1 and err == ("neuronxsim: error: NEURON_PLATFORM_TARGET_OVERRIDE='trn9': "
                                 "expected trn1, inf2, gen2, trn2 or gen3\n"), err


def test_an_unreachable_scheduler(capsys, tmp_path):
    pytest.importorskip("distributed")
    code, err = run(capsys, tmp_path, *good("--grid", "TILES_IN_BLOCK_M=1", "--scheduler",
                                            "tcp://127.0.0.1:1", "--connect-timeout", "0.5"))
    assert code == 1 and err.count("\n") == 1
    assert "--scheduler tcp://127.0.0.1:1: cannot reach a Dask scheduler there" in err


def test_a_scheduler_that_accepts_and_goes_silent_is_given_up_on_after_the_timeout(capsys, tmp_path):
    # distributed.Client(timeout=) does not bound the handshake: the sweep waited as long as
    # the peer held the connection.
    pytest.importorskip("distributed")
    import socket
    import threading
    import time

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    held = []

    def accept_and_say_little():
        peer, _ = listener.accept()
        peer.sendall((3).to_bytes(8, "little"))  # a message of three frames, then nothing
        held.append(peer)
        time.sleep(15)  # (then let go: a sweep that still waits fails the test, not hangs it)
        peer.close()

    threading.Thread(target=accept_and_say_little, daemon=True).start()
    try:
        t0 = time.monotonic()
        code, err = run(capsys, tmp_path, *good("--grid", "TILES_IN_BLOCK_M=1", "--scheduler",
                                                f"tcp://127.0.0.1:{port}", "--connect-timeout", "1"))
        assert time.monotonic() - t0 < 10
    finally:
        for peer in held:
            peer.close()
        listener.close()
    assert code == 1 and err.count("\n") == 1
    assert (f"--scheduler tcp://127.0.0.1:{port}: no Dask scheduler answered there within "
            "--connect-timeout 1 s") in err, err


@pytest.mark.parametrize("seconds", ["inf", "nan", "1e308", "0", "-1"])
def test_a_connect_timeout_that_is_not_a_sane_number_of_seconds(capsys, tmp_path, seconds):
    code, err = run(capsys, tmp_path, *good("--grid", "TILES_IN_BLOCK_M=1", "--scheduler",
                                            "tcp://127.0.0.1:1", "--connect-timeout", seconds))
    assert code == 1 and err.count("\n") == 1
    assert "a positive number of seconds, at most a day (86400)" in err, err


def test_without_dask_the_scheduler_option_says_how_to_install_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    code, err = run(capsys, tmp_path, *good("--grid", "TILES_IN_BLOCK_M=1", "--scheduler", "local"))
    assert code == 1 and "pip install 'neuronxsim[dask]'" in err and err.count("\n") == 1

"""How the local pool's zygote starts: a fork of the sweep's own process when that process is
single-threaded (no imports paid again), else a fresh interpreter; either way the zygote holds
nothing of the sweep's process (descriptors, atexit handlers) and every configuration runs."""

import json
import os
import subprocess
import sys

import pytest

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zygote_probe.py")


def probe(state, tmp_path):
    """The probe's report on a sweep after setting up ``state``; what holds whatever the
    zygote is checked here."""
    done = subprocess.run([sys.executable, PROBE, state, str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["statuses"] == ["ok"] * 3
    # Only the sweep's process ran its atexit handlers (the zygote and workers end with _exit).
    assert (tmp_path / "atexit").read_text().split() == [str(report["pid"])]
    # The zygote, sent a signal the sweep's process handles, did not run that handler.
    assert not (tmp_path / "handled").exists()
    return report


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return probe("plain", tmp_path_factory.mktemp("plain"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads counted through /proc")
def test_a_single_threaded_sweep_forks_its_zygote_which_keeps_none_of_its_descriptors(plain):
    report = plain
    assert report["forked"]
    links = report["zygote_fds"]
    assert report["held_pipe"] not in links and report["results"] not in links
    # stdin, stdout, stderr, the control socket and its duplicate, the wakeup pipe's two ends
    assert len(links) == 7 and sum(link.startswith("socket:") for link in links) == 2


@pytest.mark.parametrize("state", ["thread", "native"])
def test_a_sweep_with_other_threads_starts_a_fresh_zygote(state, plain, tmp_path):
    report = probe(state, tmp_path)
    # The state the test is about is there: more threads than NumPy's OpenBLAS pool alone.
    assert report["threads_before"] > plain["threads_before"]
    assert not report["forked"]
    assert report["held_pipe"] not in report["zygote_fds"]

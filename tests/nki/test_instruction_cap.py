"""The cap on traced instructions (issue 21.3): a kernel whose loops unroll past it stops at
once with one line naming the kernel, the cap and how to raise it, in both dialects and through
every neuronxsim command that traces (profile, sweep, exec)."""

import json
import textwrap

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
import neuronxsim.nki06 as nki06
from neuronxsim.cli import main
from neuronxsim.nki.tracer import DEFAULT_MAX_INSTRUCTIONS, MAX_INSTRUCTIONS_ENV, instruction_cap
from neuronxsim.nki.typing import tensor as T

#: A 2.2x kernel whose loop of 10^7 iterations records 10^7 instructions (and an NKI 0.6 twin).
RUNAWAY_22 = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def runaway(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        for i in nl.affine_range(10 ** 7):
            t = nl.add(t, 1.0)
        nl.store(out, t)
        return out
"""
RUNAWAY_06 = """
    import nki
    import nki.isa as nisa
    import nki.language as nl

    @nki.jit
    def runaway(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        for i in range(10 ** 7):
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
"""


def kernel_file(tmp_path, text, name="runaway_kernel.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load(path):
    from neuronxsim.importer import installed
    import runpy
    with installed():
        return runpy.run_path(str(path))["runaway"]


def assert_refusal(text, cap):
    assert f"runaway records more than max_instructions={cap} instructions" in text
    assert "--max-instructions N" in text and MAX_INSTRUCTIONS_ENV in text
    assert "nl.add(t, 1.0)" in text or "nisa.tensor_scalar(" in text  # the kernel line


def test_the_default_is_documented_and_the_environment_overrides_it(monkeypatch):
    monkeypatch.delenv(MAX_INSTRUCTIONS_ENV, raising=False)
    assert instruction_cap() == DEFAULT_MAX_INSTRUCTIONS == 1_000_000
    assert instruction_cap(5) == 5
    monkeypatch.setenv(MAX_INSTRUCTIONS_ENV, "1234")
    assert instruction_cap() == 1234 and instruction_cap(7) == 7
    for bad in ("many", "0", "-3", "1.5"):
        monkeypatch.setenv(MAX_INSTRUCTIONS_ENV, bad)
        with pytest.raises(nki.NKIError, match=f"{MAX_INSTRUCTIONS_ENV}='{bad}': the cap on "
                                               "traced instructions is a positive integer"):
            instruction_cap()
    for bad in (0, -1, 2.0, "10", True):
        with pytest.raises(nki.NKIError, match="max_instructions must be a positive integer"):
            instruction_cap(bad)


@pytest.mark.parametrize("text", [RUNAWAY_22, RUNAWAY_06], ids=["2.2x", "0.6"])
def test_a_loop_of_ten_million_iterations_stops_at_the_cap(tmp_path, monkeypatch, text):
    kernel = load(kernel_file(tmp_path, text))
    a = np.zeros((128, 64), np.float32)
    trace = nki.trace_kernel if text is RUNAWAY_22 else nki06.kernel.trace_kernel
    simulate = nki.simulate_kernel if text is RUNAWAY_22 else nki06.kernel.simulate_kernel
    with pytest.raises(nki.NKIError) as info:
        trace(kernel, a, max_instructions=500)
    assert_refusal(str(info.value), 500)
    assert "runaway_kernel.py:" in str(info.value).splitlines()[0]
    with pytest.raises(nki.NKIError, match="max_instructions=300 instructions"):
        simulate(kernel, a, max_instructions=300)
    monkeypatch.setenv(MAX_INSTRUCTIONS_ENV, "200")  # what nki.simulate(kernel) and scripts use
    with pytest.raises(nki.NKIError, match="max_instructions=200 instructions"):
        trace(kernel, a)


def test_nki06_public_simulate_reads_the_environment(tmp_path, monkeypatch):
    kernel = load(kernel_file(tmp_path, RUNAWAY_06))
    monkeypatch.setenv(MAX_INSTRUCTIONS_ENV, "100")
    with pytest.raises(nki.NKIError, match="max_instructions=100 instructions"):
        nki06.simulate(kernel)(np.zeros((8, 8), np.float32))


def test_exactly_the_cap_is_allowed():
    @nki.jit
    def copies(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            nl.store(out, nl.load(a))
        return out

    assert nki.trace_kernel(copies, T[[8, 8], nl.float32], max_instructions=8).instruction_count == 8
    with pytest.raises(nki.NKIError, match="max_instructions=7 "):
        nki.trace(copies, T[[8, 8], nl.float32], max_instructions=7)


@pytest.mark.parametrize("text", [RUNAWAY_22, RUNAWAY_06], ids=["2.2x", "0.6"])
def test_profile_takes_max_instructions(tmp_path, capsys, text):
    path = kernel_file(tmp_path, text)
    code = main(["profile", f"{path}:runaway", "--shapes", "128x64", "--max-instructions", "400",
                 "--output", str(tmp_path / "p")])
    assert code == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) <= 2  # the refusal and the kernel line it quotes
    assert_refusal(err, 400)


def test_exec_sets_the_cap_for_the_script(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(MAX_INSTRUCTIONS_ENV, raising=False)
    kernel_file(tmp_path, RUNAWAY_22)
    script = kernel_file(tmp_path, """
        import os
        import numpy as np
        from neuronxcc import nki
        from runaway_kernel import runaway
        print("cap", os.environ["NEURONXSIM_MAX_INSTRUCTIONS"])
        try:
            nki.simulate_kernel(runaway, np.zeros((8, 8), np.float32))
        except Exception as e:
            print("refused:", str(e).splitlines()[0])
    """, "script.py")
    assert main(["exec", "--max-instructions", "250", str(script)]) == 0
    out = capsys.readouterr().out
    assert "cap 250" in out and "max_instructions=250 instructions" in out
    import os
    assert MAX_INSTRUCTIONS_ENV not in os.environ  # restored after the script
    assert main(["exec", "--max-instructions", "0", str(script)]) == 2  # a bad argument
    assert "argument --max-instructions: 0 is not a positive integer" in capsys.readouterr().err


def test_sweep_rows_fail_past_the_cap(tmp_path, capsys):
    path = kernel_file(tmp_path, RUNAWAY_22.replace("def runaway(a):", "def runaway(a, k=1):"))
    out = tmp_path / "out"
    assert main(["sweep", f"{path}:runaway", "--grid", "k=1", "--shapes", "128x64",
                 "--max-instructions", "300", "--jobs", "1", "--output", str(out),
                 "--quiet"]) == 1  # (no configuration is ok: docs/sweep.md's exit status)
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "failed"
    assert "max_instructions=300 instructions" in row["error"]
    assert main(["sweep", f"{path}:runaway", "--grid", "k=1", "--shapes", "128x64",
                 "--max-instructions", "0", "--output", str(tmp_path / "o2")]) == 2  # a bad argument
    assert "argument --max-instructions: 0 is not a positive integer" in capsys.readouterr().err

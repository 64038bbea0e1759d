"""`neuronxsim run` end to end on a small decoder layer (130 tokens: a partial tile), its files,
exit codes and error paths, and the subcommands that take its files further (resolve, simulate,
info) plus profile and registry."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from neuronxsim import bir
from neuronxsim.cli import main
from neuronxsim.errors import CodegenError
from neuronxsim.models import llama_decoder
from neuronxsim.starfish.penguin.ir import Program

SMALL = ["--tokens", "130", "--hidden", "256", "--q-heads", "4", "--kv-heads", "2", "--head-dim", "64",
         "--intermediate", "384"]
KERNELS = [("qkv_proj", "IT54", "QKV"), ("rope_q", "IT55", "rope"), ("rope_k", "IT55", "rope"),
           ("k_cache", "IT56", "tiled_pf_transpose"), ("attention", "IT54", "CausalAttentionMMSoftmaxMMWithoutSwap"),
           ("o_proj", "IT54", "RowTiledMM"), ("mlp", "IT54", "MLP")]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """One run of the small layer: (exit code, stdout, output folder)."""
    out = tmp_path_factory.mktemp("run")
    r = subprocess.run([sys.executable, "-P", "-m", "neuronxsim", "run", *SMALL, "--output", str(out)],
                       capture_output=True, text=True)
    return r, out


def test_run_checks_every_kernel_and_prints_one_table(small_run):
    r, _ = small_run
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(i for i, l in enumerate(lines) if l.startswith("kernel "))
    assert lines[header].split()[:6] == ["kernel", "sink", "kernel", "name", "instrs", "time"]
    rows = [l.split() for l in lines[header + 2:header + 2 + len(KERNELS)]]
    assert [tuple(row[:3]) for row in rows] == KERNELS
    assert all(row[-1] == "ok" for row in rows)
    assert "check: 8 of 8 outputs within" in r.stdout and "layer: " in r.stdout
    assert "Traceback" not in r.stderr


def test_run_writes_a_trace_a_timeline_and_a_report_that_parse(small_run):
    _, out = small_run
    trace = json.loads((out / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    slices = [e for e in events if e.get("ph") == "X"]
    assert slices and all({"name", "ts", "dur", "pid", "tid"} <= set(e) for e in slices)
    assert {e["args"]["kernel"] for e in slices if "args" in e} >= {k for k, _, _ in KERNELS}
    rope = next(e for e in slices if e["args"]["kernel"] == "rope_q" and not e["name"].startswith("trigger"))
    assert rope["name"] == f"{rope['args']['opcode']} rope_q {rope['args']['source']}" and "rope.py:" in rope["name"]
    assert (out / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((out / "report.json").read_text())
    assert [k["name"] for k in report["kernels"]] == [k for k, _, _ in KERNELS]
    assert report["total_ns"] > 0 and 0 < report["pe_mfu"] < 1
    assert sum(k["added_ns"] for k in report["kernels"]) == pytest.approx(report["total_ns"], rel=1e-6)
    assert set(report["checks"]) == set(llama_decoder.PRODUCER)
    assert all(c["ok"] and c["max_abs_error"] <= c["tolerance"] for c in report["checks"].values())
    assert report["layer"]["tokens"] == 130 and report["arch"] == "trn1"
    assert Program.load(out / "program.json").name == "llama_decoder_layer"
    lowered = bir.load(out / "lowered.json")
    assert [i.opcode for i in lowered.functions[0].blocks[0].instructions] == [54, 55, 55, 56, 54, 54, 54]
    assert sorted(os.listdir(out)) == [".neuronxsim-output.json", "klr", "lowered.json", "nki", "program.json", "report.json",
                                       "timeline.png", "trace.json"]
    assert report["files"] == {"trace": "trace.json", "timeline": "timeline.png", "report": "report.json",
                               "program": "program.json", "lowered": "lowered.json"}
    assert not [f for f in os.listdir(out.parent) if f.startswith(f".{out.name}.")]


def test_resolve_and_simulate_take_the_run_files_further(small_run, tmp_path, capsys):
    _, out = small_run
    assert main(["resolve", str(out / "lowered.json"), "-o", str(tmp_path / "resolved.json")]) == 0
    assert "resolved 7 kernel nodes (IT54 x4, IT55 x2, IT56 x1)" in capsys.readouterr().out
    resolved = bir.load(tmp_path / "resolved.json")
    assert len(resolved.functions) == 2  # the IT56 transpose runs on two NeuronCores
    cfg = llama_decoder.DecoderConfig(tokens=130, hidden=256, q_heads=4, kv_heads=2, head_dim=64, intermediate=384)
    inputs = llama_decoder.make_inputs(cfg)
    np.savez(tmp_path / "inputs.npz", **{k: np.asarray(v, np.float32) for k, v in inputs.items()})
    assert main(["simulate", str(tmp_path / "resolved.json"), "--inputs", str(tmp_path / "inputs.npz"),
                 "--output", str(tmp_path / "sim")]) == 0
    outputs = np.load(tmp_path / "sim" / "outputs.npz")
    expected = llama_decoder.reference(cfg, inputs)
    bound = llama_decoder.ATOL + llama_decoder.RTOL * np.abs(expected["mlp_out"]).max()
    assert np.abs(outputs["mlp_out"] - expected["mlp_out"]).max() <= bound
    report = json.loads((tmp_path / "sim" / "report.json").read_text())
    assert report["generated_inputs"] == [] and report["instructions"] > 0


def test_timing_mode_skips_the_numerics(tmp_path, capsys):
    assert main(["run", *SMALL, "--mode", "timing", "--output", str(tmp_path), "--quiet"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["mode"] == "timing" and report["checks"] == {} and report["total_ns"] > 0
    assert capsys.readouterr().out == ""


def test_json_prints_the_report(tmp_path, capsys):
    assert main(["run", *SMALL, "--mode", "timing", "--output", str(tmp_path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "report.json").read_text())


def test_an_output_outside_its_tolerance_exits_2_after_the_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(llama_decoder, "RTOL", 0.0)
    monkeypatch.setattr(llama_decoder, "ATOL", 0.0)
    assert main(["run", *SMALL, "--output", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "FAIL" in captured.out and captured.err.startswith("neuronxsim: error: outside tolerance: ")
    assert json.loads((tmp_path / "report.json").read_text())["checks"]["mlp_out"]["ok"] is False


@pytest.mark.parametrize("args, message, status", [
    (["--kv-heads", "3"], "--kv-heads 3 does not divide --q-heads 4", 1),
    (["--head-dim", "65"], "--head-dim is 65; expected an even number up to 128", 1),
    (["--tokens", "0"], "run: argument --tokens: 0 is not a positive integer", 2),
    (["--tokens", "99999999999999999999999"], "run: argument --tokens: 99999999999999999999999 is too large", 2),
    (["--seed", "-1"], "run: argument --seed: -1 is not a seed", 2),
])
def test_an_impossible_size_is_one_line(tmp_path, capsys, args, message, status):
    assert main(["run", *SMALL, *args, "--output", str(tmp_path)]) == status
    err = capsys.readouterr().err
    assert err == f"neuronxsim: error: {message}\n" or (err.count("\n") == 1 and message in err)
    assert not os.path.exists(tmp_path / "report.json")


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(CodegenError, match="does not divide"):
        main(["--debug", "run", *SMALL, "--kv-heads", "3", "--output", str(tmp_path)])


@pytest.mark.parametrize("argv, message", [
    (["simulate", "nope.json"], "nope.json"),
    (["resolve", "nope.json", "-o", "x.json"], "nope.json"),
    (["profile", "nope.py:k", "--shapes", "4x4"], "nope.py: no such file"),
    (["info", "nope.klr"], "nope.klr: no such file"),
])
def test_missing_files_are_one_line_without_a_traceback(tmp_path, argv, message):
    r = subprocess.run([sys.executable, "-P", "-m", "neuronxsim", *argv], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("neuronxsim: error:") and message in r.stderr and r.stderr.count("\n") == 1


def test_info_summarises_the_klr_file_of_the_registry_kernel(small_run, capsys):
    _, out = small_run
    (klr,) = os.listdir(out / "klr")
    assert main(["info", str(out / "klr" / klr)]) == 0
    text = capsys.readouterr().out
    assert "kernel_name: tiled_pf_transpose" in text and "bodies: 2" in text and "lowerable" in text


def test_profile_runs_an_nki_kernel_on_random_inputs(tmp_path, capsys):
    kernel_file = tmp_path / "k.py"
    kernel_file.write_text(
        "import neuronxsim.nki as nki\nimport neuronxsim.nki.language as nl\n\n"
        "@nki.jit\ndef double(a):\n    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
        "    t = nl.load(a)\n    nl.store(out, value=nl.multiply(t, 2.0))\n    return out\n")
    assert main(["profile", f"{kernel_file}:double", "--shapes", "128x512:bfloat16",
                 "--output", str(tmp_path / "p")]) == 0
    text = capsys.readouterr().out
    assert "PE utilisation" in text and "k.py:" in text
    assert json.loads((tmp_path / "p" / "trace.json").read_text())
    # --mode timing: the same timeline without numerics
    assert main(["profile", f"{kernel_file}:double", "--shapes", "128x512:bfloat16", "--mode", "timing",
                 "--output", str(tmp_path / "t")]) == 0
    timed = capsys.readouterr().out
    assert timed.splitlines()[0] == text.splitlines()[0]  # instructions and time
    assert json.loads((tmp_path / "t" / "trace.json").read_text())
    assert main(["profile", f"{kernel_file}:double", "--shapes", "128by512"]) == 1
    assert "expected dims joined by 'x'" in capsys.readouterr().err
    assert main(["profile", f"{kernel_file}:missing", "--shapes", "4x4"]) == 1
    assert "defines no 'missing'" in capsys.readouterr().err


def test_registry_lists_the_thirteen_kernels_in_seed_order(capsys):
    assert main(["registry"]) == 0
    lines = capsys.readouterr().out.splitlines()[2:]
    assert len(lines) == 13 and lines[0].split()[1] == "SelectAndScatter" and lines[11].split()[1] == "tiled_pf_transpose"


def test_version():
    r = subprocess.run([sys.executable, "-P", "-m", "neuronxsim", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("neuronxsim ")


def test_profile_warns_about_an_output_the_kernel_leaves_partly_unwritten(tmp_path, capsys):
    kernel_file = tmp_path / "half.py"
    kernel_file.write_text(
        "import neuronxsim.nki as nki\nimport neuronxsim.nki.language as nl\n\n"
        "@nki.jit\ndef first_half(a):\n    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
        "    nl.store(out[0:64, :], value=nl.load(a[0:64, :]))\n    return out\n")
    assert main(["profile", f"{kernel_file}:first_half", "--shapes", "128x32", "--json",
                 "--output", str(tmp_path / "p")]) == 0
    captured = capsys.readouterr()
    (unwritten,) = json.loads(captured.out)["unwritten_outputs"]
    assert unwritten["elements"] == 64 * 32 and unwritten["size"] == 128 * 32 and unwritten["first_index"] == [64, 0]
    assert captured.err.splitlines() == [
        f"neuronxsim: warning: output '{unwritten['name']}' (float32): 2048 of 4096 elements never written "
        "(the first at [64, 0]); they read as NaN"]


def test_profile_busiest_lines_sum_busy_time_and_engines_busy_names_every_engine(tmp_path, capsys):
    """The busiest source lines add each instruction's busy time (docs/trace.md's busy_ns: its cost, not the
    wait for its results): 64 ACT exps of [128, 64] fp32 take `max(MIN_II, N)` = 64 ScalarE cycles each at
    1.4 GHz (trn1) [ref §3-§4]. The summary's "engines busy" names the same engines as --json's
    engine_busy, SP (which only triggers DMAs) included."""
    kernel_file = tmp_path / "act.py"
    kernel_file.write_text(
        "import neuronxsim.nki06 as nki\nimport neuronxsim.nki06.language as nl\nimport neuronxsim.nki06.isa as nisa\n\n"
        "@nki.jit\ndef exps(a):\n    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)\n"
        "    x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)\n    nisa.dma_copy(dst=x, src=a)\n"
        "    for i in nl.sequential_range(64):\n        nisa.activation(dst=x, op=nl.exp, data=x)\n"
        "    nisa.dma_copy(dst=out, src=x)\n    return out\n")
    argv = ["profile", f"{kernel_file}:exps", "--shapes", "128x64", "--arch", "trn1", "--mode", "timing"]
    assert main([*argv, "--json", "--output", str(tmp_path / "j")]) == 0
    doc = json.loads(capsys.readouterr().out)
    lines = {line["source"].rsplit(":", 1)[1]: line for line in doc["busiest_source_lines"]}
    assert lines["11"]["instructions"] == 64
    assert lines["11"]["busy_ns"] == pytest.approx(64 * 64 / 1.4)
    assert lines["11"]["busy_ns"] == pytest.approx(doc["engine_busy"]["ACT"] * doc["total_ns"])
    assert main([*argv, "--output", str(tmp_path / "t")]) == 0
    text = capsys.readouterr().out
    (busy,) = [line for line in text.splitlines() if line.startswith("engines busy: ")]
    named = [part.split()[0] for part in busy[len("engines busy: "):].split(";")[0].split(", ")]
    assert named == [e for e in doc["engine_busy"] if not e.startswith("DMA")] == ["PE", "ACT", "DVE", "Pool", "SP"]
    assert f"{64 * 64 / 1.4 / 1e3:9.2f} us" in text

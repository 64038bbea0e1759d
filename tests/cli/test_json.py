"""``--json`` on every subcommand: stdout is one JSON document with the command's results."""

import json
import os
import textwrap

from neuronxsim.cli import main

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")

PROGRAM = textwrap.dedent("""
    from neuronxsim.starfish.penguin import ir

    def build_program():
        p = ir.Program("mm_then_transpose")
        a, b = p.tensor("a", [128, 256]), p.tensor("b", [256, 128])
        y, yt = p.tensor("y", [128, 128], kind="output"), p.tensor("yt", [128, 128], kind="output")
        p.add(ir.BIRKernel("RowTiledMM", [ir.FullTensorAccess(a), ir.FullTensorAccess(b)], [ir.FullTensorAccess(y)],
                           name="mm"))
        p.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.OpaqueAccess(y)], [ir.OpaqueAccess(yt)], name="tp"))
        return p
""")

KERNEL = textwrap.dedent("""
    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl

    @nki.jit
    def double(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(a), 2.0))
        return out
""")


def document(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == argv[0] and doc["neuronxsim"]
    return doc


def test_each_subcommand_prints_one_json_document(tmp_path, capsys):
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "k.py").write_text(KERNEL)

    lowered = document(capsys, "lower", str(tmp_path / "prog.py"), "-o", str(tmp_path / "lowered"))
    assert [(k["kernel_name"], k["count"]) for k in lowered["kernels"]] == [("RowTiledMM", 1), ("tiled_pf_transpose", 1)]
    module = lowered["module"]

    resolved = document(capsys, "resolve", module, "-o", str(tmp_path / "resolved.json"))
    assert [n["sink"] for n in resolved["kernel_nodes"]] == ["IT54", "IT56"] and resolved["functions"] == 2

    sim = document(capsys, "simulate", module, "--output", str(tmp_path / "sim"))
    assert sim["total_ns"] > 0 and [k["name"] for k in sim["kernels"]] == ["mm", "tp"]
    assert sim == {**json.loads((tmp_path / "sim" / "report.json").read_text()), "output": str(tmp_path / "sim"),
                   "neuronxsim": sim["neuronxsim"]}

    info = document(capsys, "info", module)
    assert info["kind"] == "bir" and [n["sink"] for n in info["kernel_nodes"]] == ["IT54", "IT56"]
    (klr,) = os.listdir(tmp_path / "lowered" / "klr")
    info = document(capsys, "info", str(tmp_path / "lowered" / "klr" / klr))
    assert info["kind"] == "klr" and info["klr"]["kernel_name"] == "tiled_pf_transpose"

    prof = document(capsys, "profile", f"{tmp_path / 'k.py'}:double", "--shapes", "128x64", "--output",
                    str(tmp_path / "prof"))
    assert prof["total_ns"] > 0 and prof["busiest_source_lines"][0]["source"].startswith("k.py:")

    registry = document(capsys, "registry")
    assert len(registry["kernels"]) == 13 and registry["kernels"][0]["key"] == "SelectAndScatter"

    demo = document(capsys, "demo", "--output", str(tmp_path / "demo"))
    assert [n["opcode"] for n in demo["nodes"]] == ["BIRKernel", "NKIKernel", "NKIKLIRKernel"]


def test_info_summarises_a_penguin_program(tmp_path, capsys):
    import runpy

    (tmp_path / "prog.py").write_text(PROGRAM)
    runpy.run_path(str(tmp_path / "prog.py"))["build_program"]().save(tmp_path / "program.json")
    info = document(capsys, "info", str(tmp_path / "program.json"))
    assert info["kind"] == "penguin-program" and info["name"] == "mm_then_transpose"
    assert [i["op"] for i in info["insts"]] == ["BIRKernel", "InternalNativeNkiKernel"]
    assert main(["info", str(tmp_path / "program.json")]) == 0
    assert "Penguin program 'mm_then_transpose': 4 tensors, 2 macro instructions" in capsys.readouterr().out


def test_sweep_and_exec_print_one_json_document(tmp_path, capsys):
    matmul = os.path.join(os.path.dirname(CORPUS), "..", "sweep", "kernels", "blocked_matmul.py") + ":blocked_matmul"
    out = tmp_path / "sweep"
    sweep = document(capsys, "sweep", matmul, "--grid", "TILES_IN_BLOCK_M=1", "--grid", "TILES_IN_BLOCK_N=1,2",
                     "--grid", "TILES_IN_BLOCK_K=1", "--shapes", "256x512:bfloat16", "256x2048:bfloat16",
                     "--jobs", "1", "--output", str(out))
    assert sweep["counts"]["ok"] == 2 and sweep["picture"] == str(out / "sweep.png")
    assert sorted(os.listdir(out)) == ["results.jsonl", "sweep.png"]  # the picture was swapped in whole

    (tmp_path / "script.py").write_text("import sys\nprint('hello from the script')\nsys.exit(3)\n")
    assert main(["exec", "--json", str(tmp_path / "script.py"), "a"]) == 3
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # the script's own output went to stderr
    assert doc["command"] == "exec" and doc["exit_status"] == 3 and doc["args"] == ["a"]
    assert "hello from the script" in captured.err


def test_simulate_warns_about_each_output_left_unwritten_and_lists_it(tmp_path, capsys):
    """Not a failure (exit 0): one warning line per such output on stderr, with --json and
    --quiet too, and ``unwritten_outputs`` in the report."""
    from neuronxsim import bir
    from neuronxsim.bir import DType
    from neuronxsim.sim.build import ModuleBuilder

    b = ModuleBuilder()
    x = b.input("x", [4, 8], DType.float32)
    y = b.output("y", [4, 8], DType.float32)
    b.output("never", [4, 8], DType.int32)
    t = b.sbuf("t", 4, 8, DType.float32)
    b.dma(b.tile(t), b.full(x))
    b.dma(b.ap(y, 0, [(8, 3), (1, 8)]), b.tile(t, partitions=3))  # rows 0-2 of y
    bir.save(b.module, tmp_path / "m.json")
    sim = document(capsys, "simulate", str(tmp_path / "m.json"), "--output", str(tmp_path / "sim"))
    assert sim["unwritten_outputs"] == [
        {"name": "y", "dtype": "float32", "elements": 8, "size": 32, "first_index": [3, 0]},
        {"name": "never", "dtype": "int32", "elements": 32, "size": 32, "first_index": [0, 0]}]
    assert json.loads((tmp_path / "sim" / "report.json").read_text())["unwritten_outputs"] == sim["unwritten_outputs"]
    assert main(["simulate", str(tmp_path / "m.json"), "--output", str(tmp_path / "sim"), "--quiet"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "neuronxsim: warning: output 'y' (float32): 8 of 32 elements never written (the first at [3, 0]); "
        "they read as NaN",
        "neuronxsim: warning: output 'never' (int32): 32 of 32 elements never written (the first at [0, 0]); "
        "they read as 0"]

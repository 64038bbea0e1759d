"""``neuronxsim lower``: Penguin programs in Python or JSON -> BIR JSON + metrics sidecar."""

import json
import subprocess
import sys
import textwrap

from neuronxsim import bir
from neuronxsim.cli import main

PROGRAM_PY = textwrap.dedent("""
    from neuronxsim.starfish.penguin import ir

    def build_program():
        p = ir.Program("mlp_block")
        t = lambda n, s, kind="input": p.tensor(n, s, "bfloat16", kind)
        srcs = [t("hidden", [1, 128, 256]), t("ln_w", [1, 256]), t("gate_w", [256, 512]),
                t("up_w", [256, 512]), t("down_w", [512, 256])]
        out = t("out", [1, 128, 256], "output")
        p.add(ir.MLPKernel([ir.FullTensorAccess(x) for x in srcs], [ir.FullTensorAccess(out)]))
        return p
""")


def test_lower_a_python_program_and_its_json_twin(tmp_path, capsys):
    src = tmp_path / "prog.py"
    src.write_text(PROGRAM_PY)
    out = tmp_path / "lowered"
    assert main(["lower", str(src), "-o", str(out), "--arch", "trn2"]) == 0
    assert "MLP x1" in capsys.readouterr().out
    module = bir.load(out / "module.json")
    assert module.arch == "gen3"
    (node,) = module.function(0).blocks[0].instructions
    assert isinstance(node, bir.InstBIRKernel) and node.kernel_name == "MLP"
    sidecar = json.loads((out / "module.kernel_metrics.json").read_text())
    assert "MLP" in json.dumps(sidecar)

    # The same program saved as JSON lowers to the same module.
    import runpy
    program = runpy.run_path(str(src))["build_program"]()
    program.save(tmp_path / "prog.json")
    out2 = tmp_path / "lowered2"
    assert main(["lower", str(tmp_path / "prog.json"), "-o", str(out2), "--arch", "trn2", "--quiet"]) == 0
    assert bir.load(out2 / "module.json").to_json() == module.to_json()


def test_lower_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n")
    cases = [
        ([str(tmp_path / "missing.py")], "no such file"),
        ([str(bad)], "defines neither `program` nor `build_program()`"),
        ([str(tmp_path / "prog.txt")], "no such file"),
    ]
    (tmp_path / "broken.json").write_text('{"format": "neuronxsim-penguin", "version": 1, "insts": 3}')
    cases.append(([str(tmp_path / "broken.json")], "broken.json"))
    for argv, needle in cases:
        r = subprocess.run([sys.executable, "-P", "-m", "neuronxsim", "lower", *argv, "-o", str(tmp_path / "o")],
                           capture_output=True, text=True)
        assert r.returncode == 1, (argv, r.stderr)
        assert "Traceback" not in r.stderr and needle in r.stderr, (argv, r.stderr)
        assert r.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

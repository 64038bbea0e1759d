"""``neuronxsim lower``: Penguin programs in Python or JSON -> BIR JSON + metrics sidecar."""

import json
import os
import re
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


def test_a_write_failure_names_the_file_in_the_output_folder_not_the_staging_folder(tmp_path):
    # A full disk (here the file-size limit: EFBIG, as ENOSPC would be) while lower writes its
    # KLR files (the KLR writer's error) or compiled kernels (an OSError): the message names the
    # file under -o, as it would be, not under the staging folder (gone once the command ends)
    # nor a temporary file.
    (tmp_path / "layer.py").write_text(textwrap.dedent("""
        from neuronxsim.models import llama_decoder as layer
        program = layer.build_program(layer.DecoderConfig(tokens=130, hidden=256, q_heads=4, kv_heads=2,
                                                          head_dim=64, intermediate=384))
    """))
    code = textwrap.dedent("""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2)
        from neuronxsim.cli import main
        sys.exit(main(sys.argv[2:]))
    """)
    for limit, message in ((100, r"klr/tiled_pf_transpose-[0-9a-f]+\.klr: write failed: File too large"),
                           (20000, r"nki/rope\.[0-9a-f]+\.json: cannot write it \(File too large\)")):
        r = subprocess.run([sys.executable, "-P", "-c", code, str(limit), "lower", "layer.py", "-o", "lowered"],
                           capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 1, r.stderr
        assert re.fullmatch(f"neuronxsim: error: lowered/{message}; the folder keeps its previous contents\n",
                            r.stderr), r.stderr
        assert sorted(os.listdir(tmp_path)) == ["layer.py"]

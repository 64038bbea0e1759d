"""The command line: demo output and error handling."""

import subprocess
import sys

from neuronxsim import bir
from neuronxsim.cli import main


def test_demo_writes_a_module_with_all_three_kernel_nodes(tmp_path, capsys):
    assert main(["demo", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "BIRKernel[54]" in out and "NKIKernel[55]" in out and "NKIKLIRKernel[56]" in out
    m = bir.load(tmp_path / "module.json")
    kinds = [inst.opcode for inst in m.function(0).blocks[0].instructions]
    assert kinds == [54, 55, 56]


def test_info_on_a_missing_file_is_one_line_and_exit_1(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nope.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("neuronxsim: error:") and err.count("\n") == 1


def test_info_on_malformed_json_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"functions": [{"blocks": 7}]}')
    r = subprocess.run([sys.executable, "-P", "-m", "neuronxsim", "info", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "functions[0].blocks: expected an array" in r.stderr


def test_the_demo_module_resolves(tmp_path, capsys):
    assert main(["demo", "--output", str(tmp_path / "demo"), "--quiet"]) == 0
    assert main(["resolve", str(tmp_path / "demo" / "module.json"), "-o", str(tmp_path / "resolved.json")]) == 0
    assert "resolved 3 kernel nodes (IT54 x1, IT55 x1, IT56 x1)" in capsys.readouterr().out


def test_info_on_a_json_file_that_is_not_an_object_says_what_it_is(tmp_path, capsys):
    # A JSON number, string, boolean or null is JSON, not a KLR file: it is refused as a BIR
    # module, as a JSON array is; text that is not JSON still falls to the KLR reader.
    for text, kind in (("42\n", "number"), (' "module"', "string"), ("true", "boolean"), ("null", "null"),
                       ("-1.5e3", "number"), ("[1]", "array")):
        path = tmp_path / "scalar.json"
        path.write_text(text)
        assert main(["info", str(path)]) == 1
        assert capsys.readouterr().err == (f"neuronxsim: error: {path}: not a BIR module: expected an "
                                           f"object, got {kind}\n")
    path.write_text("nonsense")
    assert main(["info", str(path)]) == 1
    assert "not a KLR file" in capsys.readouterr().err

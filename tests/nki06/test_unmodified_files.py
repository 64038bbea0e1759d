"""Kernel files and scripts written for the Neuron SDK run unmodified: `import nki` resolves to
the NKI 0.6 dialect and `import neuronxcc.nki` to the 2.2x one, through `neuronxsim exec`,
`neuronxsim profile` and the pytest plugin, and never by hiding a real installation silently."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neuronxsim.nki as nki22
import neuronxsim.nki06 as nki06
from neuronxsim.cli import main
from neuronxsim.importer import ShadowingError, installed

NKI06_SCRIPT = """
    import sys
    import numpy as np
    import nki
    import nki.isa as nisa
    import nki.language as nl
    from helper import scale_of  # a module beside the script

    @nki.jit
    def scaled(a, factor=1.0):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=factor)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    if __name__ == "__main__":
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        k = scale_of(sys.argv[1])
        assert np.array_equal(nki.simulate(scaled)(a, k), a * k)
        print("ok", sys.argv[1:])
        sys.exit(int(sys.argv[2]))
"""

NKI22_SCRIPT = """
    import numpy as np
    from neuronxcc import nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def negated(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.negative(nl.load(a)))
        return out

    if __name__ == "__main__":
        a = np.ones((2, 8), np.float32)
        assert np.array_equal(nki.simulate_kernel(negated, a), -a)
        print("2.2x ok")
"""


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def scripts(tmp_path):
    write(tmp_path / "helper.py", "def scale_of(text):\n    return float(text)\n")
    return (write(tmp_path / "scaled_kernel.py", NKI06_SCRIPT),
            write(tmp_path / "negated_kernel.py", NKI22_SCRIPT))


def test_the_finder_maps_both_dialects_only_inside_the_block():
    with installed():
        import neuronxcc.nki
        import neuronxcc.nki.language
        import nki
        import nki.isa
        import nki.language
        from neuronxcc import nki as from_import
        assert nki is nki06 and nki.language is nki06.language and nki.isa is nki06.isa
        assert neuronxcc.nki is nki22 and from_import is nki22
        assert neuronxcc.nki.language is nki22.language
        with pytest.raises(ModuleNotFoundError, match="'nki.compiler': neuronxsim's the NKI 0.6 "
                                                      "dialect"):
            import nki.compiler  # noqa: F401
        assert nki06.__spec__.name == "neuronxsim.nki06"  # the real module keeps its identity
    assert "nki" not in sys.modules and "neuronxcc" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        import nki  # noqa: F401, F811


def test_a_real_installation_is_not_hidden_silently(tmp_path, monkeypatch):
    fake = tmp_path / "site" / "nki"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ShadowingError, match=r"nki at .*site/nki/__init__\.py.*--allow-shadowing"):
        with installed():
            pass
    try:
        with installed(allow_shadowing=True):
            import nki
            assert nki is nki06
        import nki
        assert nki.REAL  # the real package again once the block ends
    finally:
        sys.modules.pop("nki", None)


def test_a_docs_folder_named_nki_is_no_installation(tmp_path, monkeypatch):
    (tmp_path / "nki" / "examples").mkdir(parents=True)  # e.g. an aws-neuron-sdk checkout
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with installed():
        import nki
        assert nki is nki06


def test_exec_runs_a_script_with_its_arguments_and_exit_status(scripts, capsys):
    nki06_script, nki22_script = scripts
    assert main(["exec", str(nki06_script), "2.5", "3"]) == 3
    assert "ok ['2.5', '3']" in capsys.readouterr().out
    assert main(["exec", str(nki22_script)]) == 0
    assert "2.2x ok" in capsys.readouterr().out
    assert main(["exec", str(nki06_script.parent / "missing.py")]) == 1
    assert "missing.py: no such file" in capsys.readouterr().err


def test_exec_runs_pytest_and_the_plugin_does_the_same(scripts, tmp_path, monkeypatch, capsys):
    write(tmp_path / "test_scaled.py", """
        import numpy as np
        import nki
        from scaled_kernel import scaled

        def test_scaled():
            a = np.ones((2, 4), np.float32)
            assert np.array_equal(nki.simulate(scaled)(a, 3.0), 3 * a)
    """)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    quiet = ["-q", "-p", "no:cacheprovider", "test_scaled.py"]
    assert main(["exec", "-m", "pytest", *quiet]) == 0
    assert "1 passed" in capsys.readouterr().out
    assert pytest.main(["-p", "neuronxsim.pytest_plugin", *quiet]) == 0
    assert "1 passed" in capsys.readouterr().out
    sys.modules.pop("test_scaled", None)
    assert pytest.main(quiet) != 0  # the plugin is opt-in
    assert "No module named 'nki'" in capsys.readouterr().out


def test_profile_imports_the_kernel_folder_and_takes_named_arguments(scripts, tmp_path, capsys):
    nki06_script, _ = scripts
    ref = f"{nki06_script}:scaled"
    out = str(tmp_path / "p")
    assert main(["profile", ref, "--shapes", "128x512", "--arg", "factor=0.5",
                 "--output", out]) == 0
    text = capsys.readouterr().out
    assert "1 NeuronCore(s)" in text and "scaled_kernel.py:" in text
    for args, message in ((["--arg", "scale=2"], "no parameter 'scale' (its parameters: a, "
                                                   "factor)"),
                          (["--arg", "a=2"], "already takes an array"),
                          (["--arg", "factor"], "expected NAME=VALUE"),
                          (["--arg", "factor=1", "--arg", "factor=2"], "given twice")):
        assert main(["profile", ref, "--shapes", "4x4", "--output", out, *args]) == 1
        assert message in capsys.readouterr().err


def test_profile_parses_literals_and_launches_on_the_right_target(tmp_path, capsys):
    write(tmp_path / "k.py", """
        import nki
        import nki.language as nl

        @nki.jit
        def pooled(a, pool, shape2d, label):
            assert isinstance(pool, int) and shape2d == (3, 4) and label == "avg"
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(a))
            return out
    """)
    args = ["profile", f"{tmp_path / 'k.py'}:pooled", "--shapes", "8x8", "--arg", "pool=2",
            "--arg", "shape2d=(3, 4)", "--arg", "label=avg", "--output", str(tmp_path / "p")]
    assert main(args) == 0
    assert main(args[:-6] + ["--output", str(tmp_path / "p")]) == 1
    assert "needs 'shape2d', 'label'" in capsys.readouterr().err


def test_kernel_errors_name_the_kernel_line_through_the_cli(tmp_path, capsys):
    write(tmp_path / "bad.py", """
        import nki
        import nki.isa as nisa
        import nki.language as nl

        @nki.jit
        def bad(a):
            t = nl.ndarray((256, 4), dtype=a.dtype, buffer=nl.sbuf)
            return a
    """)
    assert main(["profile", f"{tmp_path / 'bad.py'}:bad", "--shapes", "4x4",
                 "--output", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "bad.py:8: ndarray: shape [256, 4] puts 256 rows on the partition dimension" in err

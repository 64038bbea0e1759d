"""The target description (cpp/bir/MachineConfig.h, mirrored as neuronxsim.bir.target): one home
for every hardware number and generation name. The mirror equals the C++ fields, and no other source
file restates a hardware number or the arch-name map (the NumPy reference executor, the independent
oracle, is exempt by design; tests are exempt because they check the numbers)."""

from __future__ import annotations

import dataclasses
import io
import pathlib
import re
import tokenize

import pytest

from neuronxsim import sim
from neuronxsim.bir import target
from neuronxsim.errors import BIRError, SimulationError
from neuronxsim.starfish.lib import _core

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_mirror_has_every_cpp_field():
    for arch in target.ARCHS:
        assert dataclasses.asdict(target.config(arch)) == _core.bir.machine_config(arch)
    assert sim.config is target.config and sim.MachineConfig is target.MachineConfig


def test_names_of_each_generation():
    assert target.ARCHS == ("trn1", "trn2")
    assert target.aliases("gen3") == ("trn2", "gen3", "NeuronCore-v3")
    assert target.aliases("trn1")[:3] == ("trn1", "gen2", "NeuronCore-v2")
    for arch in target.ARCHS:
        for name in target.aliases(arch):
            assert target.canonical_arch(name) == arch and target.config(name) is target.config(arch)
        assert target.bir_arch(arch) == target.config(arch).bir_arch
    assert target.canonical_arch("trn9") == "" and target.aliases("trn9") == ()
    with pytest.raises(SimulationError, match=r"unknown arch 'trn9' \(known: trn1 = gen2 = NeuronCore-v2, "
                                              r"trn2 = gen3 = NeuronCore-v3\)"):
        target.config("trn9")


def test_uniform_refuses_a_number_the_generations_do_not_share():
    assert target.uniform("num_partitions") == target.config("trn1").num_partitions
    with pytest.raises(BIRError, match="sbuf_bytes_per_partition differs between generations"):
        target.uniform("sbuf_bytes_per_partition")


def test_layers_read_the_target_description():
    from neuronxsim import pipeline
    from neuronxsim.nki import language as nl
    from neuronxsim.nki import tracer
    from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as cg

    for arch in target.ARCHS:
        c = target.config(arch)
        assert cg.BUFFER_SHAPES[c.bir_arch] == ([c.num_partitions, c.sbuf_bytes_per_partition],
                                                [c.num_partitions, c.psum_banks, c.psum_bank_bytes])
        assert cg.TRACE_ARCHS[c.bir_arch] == arch and pipeline.ARCHS[arch] == c.bir_arch
        assert tracer.ARCHS[arch] == {"sbuf_bytes": c.sbuf_bytes_per_partition, "bir_arch": c.bir_arch}
    assert (nl.tile_size.pmax, nl.tile_size.gemm_moving_fmax) == (target.uniform("num_partitions"),
                                                                  target.uniform("pe_max_moving_free_elements"))


# ---- no hardware literal outside the target description ----

#: Where the numbers live (the C++ generations and their Python mirror), and the exempt trees.
HOME = {"cpp/bir/MachineConfig.h", "cpp/bir/MachineConfig.cpp", "neuronxsim/bir/target.py"}
EXEMPT_TREES = ("neuronxsim/reference/",  # the oracle keeps its own copies by design
                "cpp/third_party/", "cpp/tests/", "cpp/fuzz/")

#: Numbers that are hardware facts when they appear in code: partitions / PE size (128), the PE
#: moving size and bn_stats limit (512), the PSUM bank (2048), max8's limit (16384), the DVE/ACT
#: SBUF cap (65536), and the SBUF / PSUM sizes written as products of 1024.
HARDWARE_NUMBERS = {"128", "512", "2048", "16384", "65536", "196608", "229376"}
KIB_PRODUCT = re.compile(r"\b(16|64|192|224)\s*\*\s*1024\b")
ARCH_NAME = re.compile(r"""["'](gen[2-9]|NeuronCore-v[2-9]|inf2)["']""")

#: Places where one of those numbers is not a hardware fact: (path, text on the line, why).
ALLOWED = [
    ("neuronxsim/demo.py", "hidden: int = 2048", "a model dimension of the demo layer"),
    ("neuronxsim/demo.py", "rows, cols = 128, 512", "the shape of the demo's user-kernel operands"),
    ("neuronxsim/models/llama_decoder.py", "hidden: int = 2048", "the decoder layer's default model size"),
    ("neuronxsim/models/llama_decoder.py", "head_dim: int = 128", "the decoder layer's default model size"),
    ("cpp/sim/PanelCache.h", "kMaxEntries = 128", "entries of the simulator's host-side panel cache"),
    ("cpp/sim/Semantics.cpp", "kAheadBytes = 512", "host prefetch distance"),
    ("cpp/walrus/klr/KlrValue.h", "TensorRef = 128", "a KLR serialisation tag"),
    ("cpp/sim/Trace.cpp", "(1 << 16) - 512", "the trace writer's buffer"),
    ("neuronxsim/cli/kernel_report.py", "k // 65536, (k // 256) % 256 - 1, k % 256",
     "a picture row's (core, track, lane) packed into one sort key"),
    ("neuronxsim/cli/__init__.py", "128 + e.signum", "a shell's exit status for a process stopped by a signal"),
    ("neuronxsim/nki06/kernel.py", '_UNMODELLED_TARGETS = ("trn3", "gen4")', "generations it refuses by name"),
]


def _source_files():
    import subprocess

    out = subprocess.run(["git", "ls-files", "neuronxsim", "cpp", "benchmarks"], cwd=ROOT, capture_output=True,
                         text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    for rel in out.stdout.split():
        if rel in HOME or rel.startswith(EXEMPT_TREES):
            continue
        if rel.startswith("benchmarks/") and rel.endswith(".py"):
            continue  # workload sizes, not machine numbers (benchmarks read sim.config for those)
        if pathlib.Path(rel).suffix in (".py", ".pyx", ".pxi", ".cpp", ".h", ".def"):
            yield rel


def _python_code_lines(text: str):
    """(line number, code without comments and strings, the line) of each number in the code."""
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NUMBER:
            yield tok.start[0], tok.string, tok.line


def _cpp_code(text: str) -> str:
    """The text with comments removed and string literals emptied (line breaks kept)."""
    out = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    out = re.sub(r"//[^\n]*", "", out)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', out)


def _allowed(rel: str, line: str) -> bool:
    return any(rel == path and snippet in line for path, snippet, _ in ALLOWED)


def _hits(rel: str):
    text = (ROOT / rel).read_text()
    lines = text.splitlines()
    if rel.endswith((".py", ".pyx", ".pxi")):
        code_lines = {}
        for n, number, line in _python_code_lines(text):
            if number in HARDWARE_NUMBERS:
                code_lines.setdefault(n, line)
        for n, line in enumerate(lines, 1):
            stripped = line.split("#", 1)[0]
            if KIB_PRODUCT.search(stripped) or ARCH_NAME.search(stripped):
                code_lines.setdefault(n, line)
    else:
        code = _cpp_code(text).splitlines()
        code_lines = {}
        for n, line in enumerate(code, 1):
            if any(t in HARDWARE_NUMBERS for t in re.findall(r"\b\d+\b", line)) or KIB_PRODUCT.search(line):
                code_lines[n] = lines[n - 1]
        for n, line in enumerate(lines, 1):  # arch names are strings: look at the raw line
            if ARCH_NAME.search(line.split("//", 1)[0]):
                code_lines.setdefault(n, line)
    for n, line in sorted(code_lines.items()):
        if not _allowed(rel, line):
            yield f"{rel}:{n}: {line.strip()}"


def test_no_hardware_literal_outside_the_target_description():
    hits = [h for rel in _source_files() for h in _hits(rel)]
    assert not hits, ("hardware numbers or generation names restated outside cpp/bir/MachineConfig.* "
                      "(read them from bir::MachineConfig / neuronxsim.bir.target):\n" + "\n".join(hits))


def test_the_literal_scan_can_fail(tmp_path, monkeypatch):
    (tmp_path / "neuronxsim").mkdir()
    (tmp_path / "neuronxsim" / "x.py").write_text('SBUF = 192 * 1024\nP = 128  # fine in a comment: 512\n'
                                                  'ARCH = {"trn1": "gen2"}\ns = "128"\n')
    (tmp_path / "neuronxsim" / "y.cpp").write_text('// 128\nint p = 128;\nconst char* a = "gen3";\n'
                                                   'const char* s = "512";\n')
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert list(_hits("neuronxsim/x.py")) == ["neuronxsim/x.py:1: SBUF = 192 * 1024", "neuronxsim/x.py:2: P = 128  "
                                              "# fine in a comment: 512", 'neuronxsim/x.py:3: ARCH = {"trn1": "gen2"}']
    assert list(_hits("neuronxsim/y.cpp")) == ["neuronxsim/y.cpp:2: int p = 128;",
                                               'neuronxsim/y.cpp:3: const char* a = "gen3";']

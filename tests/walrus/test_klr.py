"""KLR files through neuronxsim.walrus: the three klr-lang 0.0.12 samples, traced kernels written and
read back exactly, and malformed files refused with the byte offset."""

import pathlib

import pytest

from neuronxsim import KLRError, bir, walrus
from neuronxsim.bir import InstructionType

from walrus_kernels import add_kernel

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "cpp" / "fuzz" / "corpus" / "klr"


def test_samples_report_header_metadata_and_kind():
    py = walrus.klr_info(SAMPLES / "add_kernel.py.klr")
    assert py["version"] == (0, 0, 12) and py["format"] == "KLR"
    assert py["kind"] == "python" and py["contents_ctor"] == 0 and py["entry"] == "kernels.add_kernel"
    assert not py["lowerable"] and "Python-source kernel (Contents.python)" in py["lowering_refusal"]

    nki = walrus.klr_info(SAMPLES / "add_kernel.nki.klr")
    assert nki["kind"] == "nki" and nki["contents_ctor"] == 1

    cs = walrus.read_klr(SAMPLES / "add_kernel.callsite.klr")
    assert cs["kind"] == "hlo" and cs["contents_ctor"] == 2 and cs["numbering"] == "0.0.12"
    assert cs["callsite"] == "add_kernel.nki.klr"
    assert "module" not in cs


@pytest.mark.parametrize("name, what", [
    ("add_kernel.py.klr", "contains a Python-source kernel (Contents.python); lowering needs a traced kernel"),
    ("add_kernel.nki.klr", "contains an NKI-source kernel (Contents.nki)"),
    ("add_kernel.callsite.klr", "HLO call-site record (Contents.hlo, 0.0.12 numbering) naming 'add_kernel.nki.klr'"),
])
def test_source_level_kinds_are_not_lowered(name, what):
    with pytest.raises(KLRError) as e:
        walrus.read_kernel(SAMPLES / name)
    assert str(e.value).startswith(str(SAMPLES / name) + ": byte 15: ")
    assert what in str(e.value)
    assert isinstance(e.value, ValueError)


def test_traced_kernel_round_trips(tmp_path):
    for cores in (1, 2):
        m = add_kernel(64, 32, cores)
        path = tmp_path / f"k{cores}.klr"
        walrus.write_klr(m, path, kernel_name="add")
        info = walrus.read_klr(path)
        assert info["kind"] == ("kernel" if cores == 1 else "lnc")
        assert info["kernel_name"] == "add" and info["format"] == walrus.NEURONXSIM_KLR_FORMAT
        assert [t["name"] for t in info["inputs"]] == ["a", "b"]
        assert info["outputs"] == [{"name": "out", "dtype": "float32", "shape": [64, 32], "memory": "hbm"}]
        assert info["bodies"] == cores and info["statements"] == 4 * cores
        assert info["module"].to_json() == m.to_json()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k1.klr", "k2.klr"]


def test_encoding_uses_klr_operators():
    data, stats = walrus.encode_klr(add_kernel(8, 8))
    # Operands built with createAP carry their marshalling in an extension attribute; the DMAs
    # also record their opcode (KLR's ncDmaCopy reads back as DMACopy).
    assert stats == {"klr_operators": 0, "extended_operators": 4, "generic_instructions": 0}
    assert data[:3] == b"\xd9\xd9\xf7"
    assert walrus.decode_klr(data).to_json() == add_kernel(8, 8).to_json()


def test_every_truncation_is_refused_with_an_offset():
    data, _ = walrus.encode_klr(add_kernel(4, 8))
    for n in range(len(data)):
        with pytest.raises(KLRError, match=r"^byte \d+: "):
            walrus.decode_klr(data[:n])


def test_kernel_nodes_are_not_written(tmp_path):
    m = add_kernel(4, 8)
    m.function(0).blocks[0].addInstruction(InstructionType.BIRKernel, "lib")
    with pytest.raises(KLRError, match="kernel node BIRKernel cannot be written"):
        walrus.write_klr(m, tmp_path / "k.klr")
    assert list(tmp_path.iterdir()) == []


def test_missing_and_garbage_files(tmp_path):
    with pytest.raises(KLRError, match="cannot open the file"):
        walrus.klr_info(tmp_path / "nope.klr")
    (tmp_path / "m.json").write_text(bir.Module().to_json())
    with pytest.raises(KLRError, match="byte 0: not a KLR file"):
        walrus.klr_info(tmp_path / "m.json")

"""BIR JSON through the bindings: round trips, load/save, and malformed input."""

import json

import pytest

from neuronxsim import BIRError, bir
from neuronxsim.bir import DType, InstructionType, MemoryType
from neuronxsim.demo import build_demo_module


def every_node_module():
    m = bir.Module()
    f = m.addFunction()
    dram = f.createDramTensor("d", MemoryType.Input, DType.float32, [4, 16])
    sb = f.createOnChipTensor("t", MemoryType.SB, DType.float32, 128, 1024)
    bb = f.addBlock()
    tile = bir.Instruction.createAP(sb, 0, [(256, 128), (1, 16)], [], -1)
    for op in InstructionType:
        node = bb.addInstruction(op)
        rule = type(node).operand_rule
        node.ins = [tile] * rule[0]
        node.outs = [tile] * rule[2]
        if op in (InstructionType.BIRKernel, InstructionType.NKIKernel, InstructionType.NKIKLIRKernel):
            node.addSeqAccess(dram, False)
        node.source = f"k.py:{int(op)}"
    return m


@pytest.mark.parametrize("indent", [1, -1])
def test_round_trip_is_byte_identical(indent):
    for m in (every_node_module(), build_demo_module(tokens=32, hidden=256, intermediate=512)):
        first = m.to_json(indent)
        second = bir.Module.from_json(first).to_json(indent)
        assert first == second


def test_save_and_load(tmp_path):
    m = build_demo_module(tokens=32, hidden=256, intermediate=512)
    path = tmp_path / "m.json"
    bir.save(m, path)
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # no temporary left behind
    again = bir.load(path)
    assert again.to_json() == m.to_json()
    node = again.function(0).blocks[0][0]
    assert isinstance(node, bir.InstBIRKernel) and node.kernel_name == "MLP"


@pytest.mark.parametrize("text, where", [
    ("", "invalid JSON"),
    ('{"functions": [], "x": 1e5000}', "number overflow"),
    ('{"functions": {}}', "functions: expected an array"),
    ('{"functions": [{"blocks": [{"instructions": [{"opcode": "Nope", "name": "a"}]}]}]}',
     "functions[0].blocks[0].instructions[0].opcode: unknown opcode 'Nope'"),
    ('{"functions": [{"blocks": [{"instructions": [{"opcode": "TensorTensor", "name": "a", "op": 3}]}]}]}',
     "functions[0].blocks[0].instructions[0].op: expected a AluOp name, got number"),
    ("[" * 5000, "nesting is deeper"),
])
def test_malformed_json_names_the_path(text, where):
    with pytest.raises(BIRError) as e:
        bir.Module.from_json(text)
    assert where in str(e.value)


def test_every_truncation_is_a_typed_error():
    text = every_node_module().to_json(-1)
    for cut in range(0, len(text), max(1, len(text) // 200)):
        with pytest.raises(BIRError):
            bir.Module.from_json(text[:cut])


def test_load_reports_non_utf8(tmp_path):
    p = tmp_path / "bad.json"
    p.write_bytes(b'{"functions": ["\xff"]}')
    with pytest.raises(BIRError, match="not UTF-8"):
        bir.load(p)


def test_verifier_error_carries_the_path():
    m = every_node_module()
    doc = json.loads(m.to_json())
    doc["functions"][0]["blocks"][0]["instructions"][21]["outs"][0]["offset"] = 256 * 70  # TensorTensor
    doc["functions"][0]["blocks"][0]["instructions"][21]["outs"][0]["ap"][0][1] = 32
    with pytest.raises(BIRError, match=r"instructions\[21\]\.outs\[0\]: partition start 70 breaks the "
                                       r"start-partition rule for 32 partitions"):
        bir.Module.from_json(json.dumps(doc))
    assert bir.Module.from_json(json.dumps(doc), verify=False).function(0).instruction_count == 110


def test_the_modules_arch_is_a_known_generation():
    doc = json.loads(every_node_module().to_json())
    doc["arch"] = "gen9"
    with pytest.raises(BIRError, match=r"^arch: unknown arch 'gen9' \(known: trn1 = gen2 = NeuronCore-v2, "):
        bir.Module.from_json(json.dumps(doc))
    m = bir.Module()
    with pytest.raises(ValueError, match=r"^Module.arch: unknown arch 'gen9' \(known: trn1 = gen2"):
        m.arch = "gen9"
    m.arch = "gen3"
    assert m.arch == "gen3"


def test_a_repeated_key_is_refused_by_its_path():
    text = every_node_module().to_json(-1)
    doc = json.loads(text)
    first = doc["functions"][0]["blocks"][0]["instructions"][21]
    assert first["op"] == "add"
    i = text.index('"op":"add"', text.index('"name":"%s"' % first["name"]))
    with pytest.raises(BIRError, match=r"^functions\[0\]\.blocks\[0\]\.instructions\[21\]\.op: the key 'op' appears twice"):
        bir.Module.from_json(text[:i] + '"op":"add","op":"mult"' + text[i + len('"op":"add"'):])

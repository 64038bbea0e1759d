"""_core.bir.append_isa, the bulk node appender the NKI emitter uses (cpp/python/bind_isa_emit.cpp):
what it builds, and that malformed records are refused with BIRError."""

import pytest

from neuronxsim import bir
from neuronxsim.errors import BIRError
from neuronxsim.starfish.lib import _core

IT = bir.InstructionType


@pytest.fixture
def block():
    module = bir.Module()
    fn = module.addFunction()
    fn.createOnChipTensor("t", bir.MemoryType.SB, bir.DType.bfloat16, 128, 1024, 0, 0)
    return module, fn, fn.addBlock()


def test_records_become_nodes_with_fields_operands_and_sources(block):
    module, fn, bb = block
    t = fn.findLocation("t")
    _core.bir.append_isa(bb, [
        (int(IT.TensorScalar), int(bir.Engine.DVE), "k.py:7",
         {"op0": bir.AluOp.mult, "const0": 2.0}, [(t, 0, ((512, 128), (1, 512)))],
         [(t, 0, ((512, 128), (1, 512)))]),
        (int(IT.Iota), int(bir.Engine.Pool), "k.py:8",
         {"base": 3, "channel_multiplier": 1, "pattern": [(2, 512)]}, [],
         [(t, 0, ((512, 128), (1, 512)))]),
        (int(IT.TensorTensor), int(bir.Engine.DVE), "", None, [(t, 0, ((512, 64), (1, 8))), 1.5],
         [(t, 8, ((512, 64), (1, 8)))]),
    ])
    a, b, c = bb.instructions
    assert (a.opcode_name, a.engine, a.source, a.op0, a.const0) == (
        "TensorScalar", bir.Engine.DVE, "k.py:7", bir.AluOp.mult, 2.0)
    assert (b.base, b.channel_multiplier, [(p.step, p.num) for p in b.pattern]) == (3, 1, [(2, 512)])
    ap = a.ins[0]
    assert (ap.memref, ap.offset, ap.dtype, ap.flavour) == ("t", 0, bir.DType.bfloat16,
                                                            bir.AccessFlavour.Plain)
    assert [(p.step, p.num) for p in ap.pattern] == [(512, 128), (1, 512)]
    assert c.ins[1].is_immediate and c.ins[1].imm == 1.5
    module.verify()


@pytest.mark.parametrize("record,message", [
    ((999, 0, "", None, [], []), "opcode 999"),
    ((int(IT.Memset), 99, "", None, [], []), "engine 99"),
    ((int(IT.Memset), 0, "", {"colour": 1}, [], []), "no field(s) colour"),
    ((int(IT.Memset), 0, "", None, [("t", 0)], []), "a number or (location, offset, pairs)"),
    ((int(IT.Memset), 0, "", None, [("t", 0, ())], []), "must be a MemoryLocation"),
    ((int(IT.Memset), 0, ""), "a record is"),
])
def test_malformed_records_are_refused(block, record, message):
    _, _, bb = block
    with pytest.raises(BIRError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _core.bir.append_isa(bb, [record])

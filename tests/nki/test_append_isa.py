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
    _core.bir.append_isa(bb, [t], [
        (int(IT.TensorScalar), int(bir.Engine.DVE), "k.py:7",
         {"op0": bir.AluOp.mult, "const0": 2.0}, [(0, 0, ((512, 128), (1, 512)))],
         [(0, 0, ((512, 128), (1, 512)))]),
        (int(IT.Iota), int(bir.Engine.Pool), "k.py:8",
         {"base": 3, "channel_multiplier": 1, "pattern": [(2, 512)]}, [],
         [(0, 0, ((512, 128), (1, 512)))]),
        (int(IT.TensorTensor), int(bir.Engine.DVE), "", None, [(0, 0, ((512, 64), (1, 8))), 1.5],
         [(0, 8, ((512, 64), (1, 8)))]),
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
    ((int(IT.Memset), 0, "", {"colour": 1}, [], []), "has no field colour"),
    ((int(IT.Memset), 0, "", None, [(0, 0)], []), "a number or (location index, offset, pairs)"),
    ((int(IT.Memset), 0, "", None, [(1, 0, ())], []), "location index 1 is out of range"),
    ((int(IT.Memset), 0, "", None, [(0, 0, ((1,),))], []), "an access-pattern pair is (step, num)"),
    ((int(IT.Memset), 0, ""), "a record is"),
])
def test_malformed_records_are_refused(block, record, message):
    _, fn, bb = block
    with pytest.raises(BIRError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _core.bir.append_isa(bb, [fn.findLocation("t")], [record])


# ---- emit_traced: the tensors and the enabled ops of an NKI trace in one call ----

class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _tensors():
    return [("a", int(bir.MemoryType.Input), int(bir.DType.float32), (128, 64),
             int(bir.TensorKind.ExternalInput), 0, 0, 0),
            ("t", int(bir.MemoryType.SB), int(bir.DType.float32), (128, 64),
             int(bir.TensorKind.Internal), 128, 256, 512)]


def test_emit_traced_creates_tensors_and_appends_the_enabled_ops():
    module = bir.Module()
    fn = module.addFunction()
    dram, sb = _Obj(location_index=0), _Obj(location_index=1)
    pairs = [(64, 128), (1, 64)]
    load = _Obj(enabled=True, opcode=IT.Load, engine=bir.Engine.DMA, loc=_Obj(short="k.py:3"),
                fields={"queue": 2}, ins=[_Obj(storage=dram, offset=0, pairs=pairs)],
                outs=[_Obj(storage=sb, offset=0, pairs=pairs)])
    skipped = _Obj(enabled=False, opcode=IT.Memset, engine=bir.Engine.DVE, loc=None, fields=None,
                   ins=[], outs=[])
    copy = _Obj(enabled=True, opcode=IT.TensorCopy, engine=bir.Engine.DVE, loc=None, fields=None,
                ins=[_Obj(storage=sb, offset=0, pairs=pairs)],
                outs=[_Obj(storage=sb, offset=0, pairs=pairs)])
    _core.bir.emit_traced(fn, _tensors(), [load, skipped, copy])
    t = fn.findLocation("t")
    assert (t.type, t.partitions, t.bytes_per_partition, t.addr) == (bir.MemoryType.SB, 128, 256,
                                                                     512)
    assert fn.findLocation("a").type == bir.MemoryType.Input
    (bb,) = fn.blocks
    a, b = bb.instructions
    assert (a.opcode_name, a.engine, a.source, a.queue) == ("Load", bir.Engine.DMA, "k.py:3", 2)
    assert (b.opcode_name, b.source, b.ins[0].memref, b.outs[0].memref) == ("TensorCopy", "", "t",
                                                                            "t")


@pytest.mark.parametrize("tensors,ops,message", [
    ([("a", 99, 0, (1,), 0, 0, 0, 0)], [], "a memory type 99 is out of range"),
    ([("a", int(bir.MemoryType.SB))], [], "emit_traced: a tensor is"),
    (_tensors(), [_Obj(enabled=True)], "without the attribute opcode"),
    (_tensors(), [_Obj(enabled=True, opcode=IT.TensorCopy, engine=bir.Engine.DVE, loc=None,
                       fields=None, ins=[_Obj(storage=_Obj(location_index=5), offset=0,
                                              pairs=[(1, 1)])], outs=[])],
     "location index 5 is out of range"),
])
def test_emit_traced_refuses_malformed_input(tensors, ops, message):
    fn = bir.Module().addFunction()
    with pytest.raises(BIRError, match=message):
        _core.bir.emit_traced(fn, tensors, ops)

"""_core.bir.emit_trace, the boundary between the NKI tracer's emission pass and libBIR
(cpp/python/bind_isa_emit.cpp): what it builds from plain records, and that every malformed
record is refused with a BIRError naming what is wrong. (Storage numbers 0 and 1 are the
tensors 0 and 1 here: TENSOR_OF.)"""

import pytest

from neuronxsim import bir
from neuronxsim.errors import BIRError
from neuronxsim.starfish.lib import _core

IT = bir.InstructionType
SB_PAIRS = ((64, 64), (1, 64))
TENSOR_OF = [0, 1, -1]  # storage 2 has no tensor


def _tensors():
    return [("a", int(bir.MemoryType.Input), int(bir.DType.float32), (128, 64),
             int(bir.TensorKind.ExternalInput), 0, 0, 0, 0),
            ("t", int(bir.MemoryType.SB), int(bir.DType.bfloat16), (64, 64),
             int(bir.TensorKind.Internal), 64, 128, 64, 512)]


def test_tensors_and_records_become_locations_and_nodes():
    module = bir.Module()
    fn = module.addFunction()
    _core.bir.emit_trace(fn, _tensors(), TENSOR_OF, [
        (int(IT.Load), int(bir.Engine.DMA), "k.py:3", {"queue": 2},
         [(0, 0, ((64, 64), (1, 64)))], [(1, 0, SB_PAIRS)]),
        (int(IT.TensorScalar), int(bir.Engine.DVE), "k.py:7",
         {"op0": bir.AluOp.mult, "const0": 2.0}, [(1, 0, SB_PAIRS)], [(1, 0, SB_PAIRS)]),
        (int(IT.Iota), int(bir.Engine.Pool), "k.py:8",
         {"base": 3, "channel_multiplier": 1, "pattern": [(2, 32)]}, [], [(1, 0, ((64, 64), (1, 32)))]),
        (int(IT.TensorTensor), int(bir.Engine.DVE), "", None,
         [(1, 0, ((64, 64), (1, 8)), "the tracer's own"), 1.5], [(1, 8, ((64, 64), (1, 8)))],
         "the tracer's own", 7),
    ])
    t = fn.findLocation("t")
    assert (t.type, t.partitions, t.bytes_per_partition, t.base_partition, t.addr) == (
        bir.MemoryType.SB, 64, 128, 64, 512)
    assert fn.findLocation("a").type == bir.MemoryType.Input
    (bb,) = fn.blocks
    load, scale, iota, add = bb.instructions
    assert (load.opcode_name, load.engine, load.source, load.queue) == ("Load", bir.Engine.DMA,
                                                                        "k.py:3", 2)
    assert (scale.op0, scale.const0, scale.source) == (bir.AluOp.mult, 2.0, "k.py:7")
    assert (iota.base, iota.channel_multiplier,
            [(p.step, p.num) for p in iota.pattern]) == (3, 1, [(2, 32)])
    ap = scale.ins[0]
    assert (ap.memref, ap.offset, ap.dtype, ap.flavour) == ("t", 0, bir.DType.bfloat16,
                                                            bir.AccessFlavour.Plain)
    assert [(p.step, p.num) for p in ap.pattern] == [(64, 64), (1, 64)]
    assert add.ins[1].is_immediate and add.ins[1].imm == 1.5 and add.source == ""
    module.verify()


MEMSET = (int(IT.Memset), int(bir.Engine.DVE), "")


@pytest.mark.parametrize("tensors,record,message", [
    (_tensors(), (999, 0, "", None, [], []), "opcode 999 is out of range"),
    (_tensors(), (int(IT.Memset), 99, "", None, [], []), "engine 99 is out of range"),
    (_tensors(), (int(IT.Memset), bir.Engine.DVE, "", None, [], []), "engine must be an integer"),
    (_tensors(), (int(IT.Memset), 0, 7, None, [], []), "a source must be a string"),
    (_tensors(), MEMSET + ([], [], []), "fields are None or a dict"),
    (_tensors(), MEMSET + ({"colour": 1}, [], []), "InstMemset has no field colour"),
    (_tensors(), MEMSET + ({"constant": "zero"}, [], []), "field constant of InstMemset cannot take a str"),
    (_tensors(), MEMSET + (None, [(0, 0)], []), "a number or (storage number, offset, pairs, ...)"),
    (_tensors(), MEMSET + (None, [(3, 0, ())], []), "storage number 3 is out of range"),
    (_tensors(), MEMSET + (None, [(2, 0, ())], []), "storage 2 has no tensor"),
    (_tensors(), MEMSET + (None, [(1, 0, ((1,),))], []), "an access-pattern pair is (step, num)"),
    (_tensors(), MEMSET + (None, [(1, 0.5, ())], []), "an offset must be an integer"),
    (_tensors(), MEMSET + (None, {}, []), "ins and outs must be a list or a tuple"),
    (_tensors(), MEMSET, "a record is"),
    ([("a", 99, 0, (1,), 0, 0, 0, 0, 0)], None, "a memory type 99 is out of range"),
    ([("a", int(bir.MemoryType.SB))], None, "a tensor is (name"),
    ([(b"a", 0, 0, (1,), 0, 0, 0, 0, 0)], None, "a tensor name must be a string"),
])
def test_malformed_records_are_refused(tensors, record, message):
    fn = bir.Module().addFunction()
    with pytest.raises(BIRError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _core.bir.emit_trace(fn, tensors, TENSOR_OF, [] if record is None else [record])

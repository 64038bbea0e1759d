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


def test_an_on_chip_tensors_numbers_are_checked_from_the_address_back():
    """(the order emit_trace always had: its call's arguments were read last to first)"""
    sb, bf16 = int(bir.MemoryType.SB), int(bir.DType.bfloat16)
    for items, message in [(("p", "b", "s", "a"), "an address"), (("p", "b", "s", 0), "a start partition"),
                           (("p", "b", 0, 0), "bytes per partition"), (("p", 128, 0, 0), "partitions")]:
        tensor = ("t", sb, bf16, (64, 64), 0) + items
        with pytest.raises(BIRError, match=f"emit_trace: {message} must be an integer"):
            _core.bir.emit_trace(bir.Module().addFunction(), [tensor], [0], [])


# emit_program (cpp/python/trace_emit_tensors.cpp): the emission pass in one call, against the two
# calls it joins (neuronxsim.nki.emit.emit_in_two_calls).

import neuronxsim.nki as nki  # noqa: E402
import neuronxsim.nki.language as nl  # noqa: E402
from neuronxsim.nki import emit  # noqa: E402

import tutorial_kernels as tk  # noqa: E402
from nki_testing import same_outcome  # noqa: E402

T = nki.typing.tensor


def _two_calls(m):
    m.setattr(emit.Emission, "run", lambda self, program: emit.emit_in_two_calls(program))


@nki.jit
def unused_and_returned(a):
    """An input, a returned output, an HBM tensor nothing touches, named and unnamed
    temporaries in SBUF and PSUM."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    spare = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.hbm)  # noqa: F841
    for i in nl.affine_range(2):
        t = nl.load(a[i * 64:(i + 1) * 64, :])
        nl.store(out[i * 64:(i + 1) * 64, :], nl.exp(t) * 2.0 + t)
    return out


@pytest.mark.parametrize("kernel,args", [
    (unused_and_returned, (T[[128, 32], nl.float32],)),
    (tk.matmul_blocked, (T[[1024, 1024], nl.bfloat16], T[[1024, 1024], nl.bfloat16])),
    (tk.layernorm_v2, (T[[256, 512], nl.float32], 1e-5, T[[512], nl.float32], T[[512], nl.float32])),
    (tk.mamba_v1, (T[[1, 128, 64], nl.float32], T[[1, 128, 64], nl.float32], T[[128, 4], nl.float32],
                   T[[1, 4, 64], nl.float32], T[[1, 4, 64], nl.float32])),
])
def test_emit_program_is_the_two_calls_it_joins(monkeypatch, kernel, args):
    assert same_outcome(monkeypatch, _two_calls, kernel, *args).startswith("{")


def test_emit_program_refuses_what_the_tensor_table_refuses():
    module = bir.Module()
    with pytest.raises(TypeError, match="has no slot sid"):
        _core.nki.emit_program(module, [object()], [0], [None], set(), set(), {}, emit._KINDS, [])
    with pytest.raises(TypeError, match=r"tensor_table\(storages: list"):
        _core.nki.emit_program(module, [], [], [], set(), set(), {}, emit._KINDS[:3], [])
    assert module.functions == []  # (no function added: the table failed first)

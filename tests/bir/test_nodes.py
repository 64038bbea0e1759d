"""Node classes through the bindings: layout report, factory, classof, setters, operand API."""

import os
import re

import pytest

from neuronxsim import BIRError, bir
from neuronxsim.bir import AccessFlavour, DType, InstructionType, MemoryType

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_field_offsets_report_the_pinned_layout():
    off = bir.field_offsets()
    assert off["sizeof(Instruction)"] == 0xF0
    assert off["InstBIRKernel.kernel_name"] == 0xF0
    assert off["InstNKIKLIRKernel.klir_binary"] == 0xF0
    assert off["InstNKIKLIRKernel.kernel_format"] == 0x110
    assert off["InstNKIKLIRKernel.nki_binary_version_identifier"] == 0x130


def test_kernel_nodes_derive_directly_from_instruction():
    """Seed 000: the three node classes are direct bir::Instruction subclasses. The bindings mirror
    the C++ hierarchy, and the declarations say so (cpp/tests/test_nodes.cpp checks the types)."""
    header = open(os.path.join(ROOT, "cpp", "bir", "KernelInstructions.h")).read()
    for name in ("InstBIRKernel", "InstNKIKernel", "InstNKIKLIRKernel"):
        assert getattr(bir, name).__bases__ == (bir.Instruction,)
        assert re.search(rf"^class {name} final : public Instruction {{$", header, re.M), name


def _block():
    m = bir.Module()
    f = m.addFunction()
    return m, f, f.addBlock()


@pytest.mark.parametrize("op", list(InstructionType), ids=lambda m: m.name)
def test_add_instruction_returns_the_table_subclass(op):
    _, _, bb = _block()
    node = bb.addInstruction(op)
    cls = getattr(bir, bir.OPCODE_NODE_CLASSES[op])
    assert type(node) is cls
    assert cls.classof(node)
    assert node.opcode == op and node.opcode_name == op.name


def test_kernel_nodes_carry_exactly_their_fields():
    _, _, bb = _block()
    it54 = bb.addInstruction(InstructionType.BIRKernel)
    it55 = bb.addInstruction(InstructionType.NKIKernel)
    it56 = bb.addInstruction(InstructionType.NKIKLIRKernel)
    assert not bir.InstBIRKernel.classof(it56) and not bir.InstNKIKLIRKernel.classof(it54)
    assert bir.InstNKIKernel.classof(it55) and not bir.InstNKIKernel.classof(it54)
    carrier = {"klir_binary", "kernel_format", "nki_binary_version_identifier"}
    assert carrier <= set(bir.InstNKIKLIRKernel.field_names)
    assert not carrier & set(bir.InstBIRKernel.field_names)
    for f in ("kernel_name", "kernel_attrs", "srcs_shape", "dsts_shape", "sb_buf_shape", "psum_buf_shape",
              "auto_cast", "auto_cast_type", "is_causal", "fused_rmsnorm", "norm_type", "store_add",
              "quant_kernel", "lower_bound", "skip_gate", "act_fn", "up_bias", "down_bias", "is_tkg",
              "lnc_size", "output_layout"):
        assert f in bir.InstBIRKernel.field_names and hasattr(it54, "set_" + f)
    for f in ("func", "func_args", "func_outs", "sb_buf_shape", "psum_buf_shape"):
        assert f in bir.InstNKIKernel.field_names
    for f in ("func_args", "func_outs", "sb_buf_shape", "psum_buf_shape"):
        assert f in bir.InstNKIKLIRKernel.field_names
    it54.set_kernel_name("QKV")
    it54.set_is_causal(True)
    it54.set_kernel_attrs([("heads", "16")])
    assert (it54.kernel_name, it54.is_causal, it54.kernel_attrs) == ("QKV", True, [("heads", "16")])
    assert it54.store_add is None  # unset optional attrs stay unset
    it56.set_klir_binary("/tmp/k.klr")
    it56.set_kernel_format("klir")
    assert it56.klir_binary == "/tmp/k.klr"
    with pytest.raises(TypeError):
        it54.set_norm_type("one")


def test_operand_api_records_each_flavour():
    m, f, bb = _block()
    x = f.createDramTensor("x", MemoryType.Input, DType.bfloat16, [2, 3, 4])
    node = bb.addInstruction(InstructionType.BIRKernel)
    node.addSeqAccess(x, False)
    node.addOpaqueAP(x, False)
    tile = bir.Instruction.createAP(x, 4, [(4, 3), (1, 2)], [3, 2], 1)
    node.addArgumentOrOutput(tile, False)
    node.addAP(tile, True)
    assert [a.flavour for a in node.ins] == [AccessFlavour.Seq, AccessFlavour.Opaque, AccessFlavour.AP]
    assert [(p.step, p.num) for p in node.ins[0].pattern] == [(12, 2), (4, 3), (1, 4)]
    assert node.outs[0].partition_dim == 1 and node.outs[0].memref == "x"


def test_nodes_keep_their_module_alive():
    def make():
        m = bir.Module()
        return m.addFunction().addBlock().addInstruction(InstructionType.Matmult)
    node = make()
    import gc
    gc.collect()
    node.set_is_transpose(True)
    assert node.is_transpose and node.opcode_name == "Matmult"


def test_bad_opcode_to_add_instruction():
    _, _, bb = _block()
    with pytest.raises(BIRError, match="out of range"):
        bb.addInstruction(500)


def test_plain_access_patterns_for_isa_operands():
    m, f, bb = _block()
    t = f.createOnChipTensor("t", MemoryType.SB, DType.float32, 128, 1024)
    ap = bir.AccessPattern(t, 16, [(256, 64), (1, 32)])
    assert ap.flavour == AccessFlavour.Plain and ap.dtype == DType.float32 and ap.partitions == 64
    assert bir.AccessPattern(t, 0, [(512, 128), (1, 8)], DType.bfloat16).dtype == DType.bfloat16
    node = bb.addInstruction(InstructionType.TensorCopy)
    node.ins = [ap]
    node.outs = [bir.AccessPattern(t, 64, [(256, 64), (1, 32)])]
    assert '"access"' not in m.to_json()  # plain operands carry no kernel-node flavour
    m.verify()


def test_lnc_size_beyond_32_bits_is_refused_where_it_is_read():
    # The operand holds lnc_size in 32 bits: the JSON reader, createAP and the attribute refuse a
    # larger value naming the field; values that fit keep their meaning (the verifier refuses < 1).
    m, f, bb = _block()
    x = f.createDramTensor("x", MemoryType.Input, DType.bfloat16, [2, 3, 4])
    node = bb.addInstruction(InstructionType.BIRKernel)
    node.addArgumentOrOutput(bir.Instruction.createAP(x, 4, [(4, 3), (1, 2)], [3, 2], 1, 2**31 - 1), False)
    text = m.to_json()
    assert '"lnc_size":2147483647' in text.replace(" ", "")
    assert bir.Module.from_json(text).to_json() == text
    with pytest.raises(BIRError, match=r"ins\[0\]\.lnc_size: lnc_size 2147483648 is above 2147483647"):
        bir.Module.from_json(re.sub(r'"lnc_size": ?2147483647', '"lnc_size": 2147483648', text))
    with pytest.raises(BIRError, match="createAP: lnc_size 4294967296 is above 2147483647"):
        bir.Instruction.createAP(x, 4, [(4, 3), (1, 2)], [3, 2], 1, 2**32)
    ap = node.ins[0]
    with pytest.raises(BIRError, match=r"^lnc_size -4294967296 is not positive$"):
        ap.lnc_size = -2**32
    ap.lnc_size = 0
    assert ap.lnc_size == 0


def test_an_operand_views_a_tensor_of_its_own_function():
    # BIR names an operand's tensor within its instruction's function: one of another module was
    # written as a name the module does not declare (and read freed memory once that module was
    # collected); one of another function of the same module, likewise. Refused at the call.
    m1, f1, _ = _block()
    a1 = f1.createDramTensor("a", MemoryType.Input, DType.float32, [128, 8])
    m2, f2, bb2 = _block()
    f2.createDramTensor("a", MemoryType.Input, DType.float32, [128, 8])
    g2 = m2.addFunction("g")
    sb_g = g2.createOnChipTensor("s", MemoryType.SB, DType.float32, 128, 32)
    node = bb2.addInstruction(InstructionType.DMACopy)
    foreign = bir.Instruction.createAP(a1, 0, [(1, 1024)], [], -1)
    other_function = bir.AccessPattern(sb_g, 0, [(8, 128), (1, 8)])
    for call in (lambda: node.addAP(foreign, False), lambda: node.addArgumentOrOutput(foreign, False),
                 lambda: node.addSeqAccess(a1, False), lambda: node.addOpaqueAP(a1, True)):
        with pytest.raises(ValueError, match=r"memory location 'a' is not one of function '.*''s allocations"):
            call()
    with pytest.raises(ValueError, match=r"^Instruction.ins: memory location 's' is not one of function"):
        node.ins = [other_function]
    with pytest.raises(ValueError, match=r"^Instruction.outs: memory location 'a' is not one of function"):
        node.outs = [foreign]
    assert len(node.ins) == 0 and len(node.outs) == 0


def test_a_new_operand_keeps_its_tensors_module_alive():
    import gc

    def make(plain):
        m = bir.Module()
        t = m.addFunction().createDramTensor("t", MemoryType.Input, DType.float32, [4])
        return bir.AccessPattern(t, 0, [(1, 4)]) if plain else bir.Instruction.createAP(t, 0, [(1, 4)], [], -1)
    for plain in (True, False):
        ap = make(plain)
        gc.collect()
        [bir.Module().addFunction().createDramTensor(f"x{i}", MemoryType.Input, DType.float32, [4]) for i in range(50)]
        assert ap.memref == "t" and ap.location.name == "t" and ap.num_elements == 4

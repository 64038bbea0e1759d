"""IT55: user @nki.jit kernels. The kernel is traced at codegen time; these tests stand in for
``neuronxsim.nki.trace`` with a traced module built by hand with the bir API (same interface:
Input DRAM tensors named after the kernel's parameters, Output tensors after its results)."""

import sys

import numpy as np
import pytest

from neuronxsim import bir
from neuronxsim.bir import AccessFlavour, DType, MemoryType, TensorKind
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelCategory

F = ir.FullTensorAccess


def add_kernel(a, b):
    """The user kernel: out = a + b (only its name and parameters matter here)."""
    raise AssertionError("the codegen traces kernels through its tracer, it never calls them")


def traced_add(rows, cols, dtype=DType.float32):
    """What tracing add_kernel gives: ISA BIR of out = a + b. The parameters' tensors are created
    in the opposite order on purpose (func_args must follow the kernel's parameter order)."""
    m = bir.Module()
    f = m.addFunction("add_kernel")
    b = f.createDramTensor("b", MemoryType.Input, dtype, [rows, cols], TensorKind.ExternalInput)
    a = f.createDramTensor("a", MemoryType.Input, dtype, [rows, cols], TensorKind.ExternalInput)
    out = f.createDramTensor("out", MemoryType.Output, dtype, [rows, cols], TensorKind.ExternalOutput)
    row = cols * bir.dtype_size(dtype)
    tiles = [f.createOnChipTensor(n, MemoryType.SB, dtype, rows, row, 0, i * row) for i, n in enumerate("ABO")]
    block = f.addBlock()
    full = [(cols, rows), (1, cols)]
    ap = lambda t: bir.Instruction.createAP(t, 0, full, [], -1)  # noqa: E731
    for src, dst in ((a, tiles[0]), (b, tiles[1])):
        load = block.addInstruction(bir.InstructionType.Load)
        load.addArgumentOrOutput(ap(src), False)
        load.addArgumentOrOutput(ap(dst), True)
    add = block.addInstruction(bir.InstructionType.TensorTensor)
    add.set_op(bir.AluOp.add)
    add.addArgumentOrOutput(ap(tiles[0]), False)
    add.addArgumentOrOutput(ap(tiles[1]), False)
    add.addArgumentOrOutput(ap(tiles[2]), True)
    save = block.addInstruction(bir.InstructionType.Save)
    save.addArgumentOrOutput(ap(tiles[2]), False)
    save.addArgumentOrOutput(ap(out), True)
    return m


class FakeTracer:
    """nki.trace's interface: (kernel, *arrays) -> bir.Module; remembers what it was given."""

    def __init__(self, module):
        self.module, self.calls = module, []

    def __call__(self, kernel, *arrays, arch):
        self.calls.append((kernel, arrays, arch))
        return self.module


def add_program(shape=(128, 512), dtype="float32"):
    p = ir.Program("user")
    x, y = p.tensor("x", shape, dtype), p.tensor("y", shape, dtype)
    z = p.tensor("z", shape, dtype, "output")
    p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x), F(y)], [F(z)], name="user_add"))
    return p


def test_the_node_names_the_kernel_and_carries_its_traced_bir():
    traced = traced_add(128, 512)
    tracer = FakeTracer(traced)
    cg = BirCodeGenLoop(tracer=tracer)
    node = cg.lower(add_program()).functions[0].blocks[0].instructions[0]
    assert node.opcode == 55 and type(node) is bir.InstNKIKernel and node.name == "user_add"
    assert (node.func, node.func_args, node.func_outs) == ("add_kernel", ["a", "b"], ["out"])
    assert (node.sb_buf_shape, node.psum_buf_shape) == ([128, 196608], [128, 8, 2048])
    assert node.body == traced.to_json(-1)
    assert bir.Module.from_json(node.body).to_json(-1) == traced.to_json(-1)
    assert [(a.memref, a.flavour) for a in node.ins] == [("x", AccessFlavour.Seq), ("y", AccessFlavour.Seq)]
    assert [(a.memref, a.flavour) for a in node.outs] == [("z", AccessFlavour.Seq)]
    (kernel, arrays, arch), = tracer.calls
    assert kernel is add_kernel and arch == "trn1"
    assert [(a.shape, a.dtype) for a in arrays] == [((128, 512), np.float32)] * 2
    assert cg.kernel_counts == {(KernelCategory.NKI_KERNEL, "add_kernel"): 1}


def test_operands_must_match_the_traced_kernel():
    cg = BirCodeGenLoop(tracer=FakeTracer(traced_add(128, 256)))
    with pytest.raises(CodegenError, match=r"insts\[0\] ExternalNativeNkiKernel 'user_add' srcs\[0\]: \[128, 512\] float32 "
                                           r"does not match the kernel's parameter 'a' \[128, 256\] float32"):
        cg.lower(add_program())
    cg = BirCodeGenLoop(tracer=FakeTracer(traced_add(128, 512, DType.bfloat16)))
    with pytest.raises(CodegenError, match=r"srcs\[0\]: \[128, 512\] float32 does not match the kernel's parameter 'a' "
                                           r"\[128, 512\] bfloat16"):
        cg.lower(add_program())


def test_operand_counts_must_match_the_traced_kernel():
    p = ir.Program()
    x, z = p.tensor("x", [128, 512]), p.tensor("z", [128, 512], kind="output")
    p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x)], [F(z)]))
    with pytest.raises(CodegenError, match=r"srcs: 1 operands; the traced kernel 'add_kernel' has 2 tensor parameters \(a, b\)"):
        BirCodeGenLoop(tracer=FakeTracer(traced_add(128, 512))).lower(p)


def test_a_tracer_that_gives_no_module_is_refused():
    with pytest.raises(CodegenError, match="tracing 'add_kernel' gave None; expected a bir.Module"):
        BirCodeGenLoop(tracer=lambda kernel, *arrays, arch: None).lower(add_program())


def test_a_kernel_traced_for_another_arch_is_refused():
    module = bir.Module()
    module.arch = "gen3"
    tracer = FakeTracer(traced_add(128, 512))  # a gen2 module
    with pytest.raises(CodegenError, match="'add_kernel' was traced for arch 'gen2'; expected 'gen3'"):
        BirCodeGenLoop(module=module, tracer=tracer).lower(add_program())
    assert tracer.calls[0][2] == "trn2"


def test_user_kernels_take_whole_tensors_or_sub_tensors():
    p = ir.Program()
    x, z = p.tensor("x", [128, 512]), p.tensor("z", [128, 512], kind="output")
    p.add(ir.ExternalNativeNkiKernel(add_kernel, [ir.OpaqueAccess(x)], [F(z)]))
    with pytest.raises(CodegenError, match=r"srcs\[0\]: OpaqueAccess of 'x'; codegenExternalNativeNkiKernel takes "
                                           r"FullTensorAccess or NDimSubTensorAccess operands"):
        BirCodeGenLoop(tracer=FakeTracer(traced_add(128, 512))).lower(p)


def test_without_a_tracer_the_nki_front_end_is_required(monkeypatch):
    monkeypatch.setitem(sys.modules, "neuronxsim.nki", None)  # as in an installation without it
    with pytest.raises(CodegenError, match="tracing a user kernel needs neuronxsim.nki.trace"):
        BirCodeGenLoop().lower(add_program())


def test_a_kernel_that_fails_to_trace_leaves_the_module_unchanged(build):
    p = build.family_program("mlp")
    x = p.tensors["hidden"]
    p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x), F(x)], [F(p.tensor("z", [1, 128, 256], kind="output"))]))
    cg = BirCodeGenLoop(tracer=FakeTracer(traced_add(128, 512)))
    with pytest.raises(CodegenError, match=r"^insts\[1\] ExternalNativeNkiKernel srcs\[0\]: \[1, 128, 256\] bfloat16"):
        cg.lower(p)
    assert len(cg.block) == 0 and not cg.function.allocations and cg.kernel_counts == {}


def test_a_lowered_user_kernel_round_trips_through_bir_json():
    module = BirCodeGenLoop(tracer=FakeTracer(traced_add(128, 512))).lower(add_program())
    text = module.to_json()
    again = bir.Module.from_json(text, verify=True)
    assert again.to_json() == text
    node = again.functions[0].blocks[0].instructions[0]
    assert node.opcode == 55 and node.body == traced_add(128, 512).to_json(-1)

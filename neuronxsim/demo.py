"""The built-in demo: one BIR module holding all three kernel nodes, built the way BirCodeGenLoop
builds them (``addInstruction(Opcode.<X>)`` then the node's setters), printed and written as BIR
JSON.

* IT54 ``InstBIRKernel`` -- a fused RMSNorm + MLP library kernel, named ``"MLP"``, with its named
  attrs and whole-tensor (``addSeqAccess``) operands;
* IT55 ``InstNKIKernel`` -- a user ``@nki.jit`` elementwise-add kernel, compiled ahead of time (ISA
  BIR: two loads, a vector add, a store); the node names the compiled kernel by its handle, and the
  kernel is written beside the module (``nki/``);
* IT56 ``InstNKIKLIRKernel`` -- a registry kernel carrier in Form B (``kernel_format == "bir"``):
  a 32x32 vector-engine transpose as embedded BIR JSON, operands through ``addOpaqueAP``.
"""

from __future__ import annotations

import os

from neuronxsim import bir, walrus
from neuronxsim.bir import DType, MemoryType, TensorKind
from neuronxsim.starfish.penguin.ir.nki_compile import artifact
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop, Opcode


def _elementwise_add_kernel(rows: int, cols: int) -> bir.Module:
    """ISA BIR of out = a + b over [rows, cols] float32, one SBUF tile each."""
    m = bir.Module()
    f = m.addFunction("add_kernel")
    a = f.createDramTensor("a", MemoryType.Input, DType.float32, [rows, cols], TensorKind.ExternalInput)
    b = f.createDramTensor("b", MemoryType.Input, DType.float32, [rows, cols], TensorKind.ExternalInput)
    out = f.createDramTensor("out", MemoryType.Output, DType.float32, [rows, cols], TensorKind.ExternalOutput)
    row_bytes = cols * 4
    sa = f.createOnChipTensor("a_tile", MemoryType.SB, DType.float32, rows, row_bytes, 0, 0)
    sb = f.createOnChipTensor("b_tile", MemoryType.SB, DType.float32, rows, row_bytes, 0, row_bytes)
    so = f.createOnChipTensor("out_tile", MemoryType.SB, DType.float32, rows, row_bytes, 0, 2 * row_bytes)
    block = f.addBlock()
    for src, dst in ((a, sa), (b, sb)):
        load = block.addInstruction(bir.InstructionType.Load)
        load.engine = bir.Engine.SP
        load.addArgumentOrOutput(bir.Instruction.createAP(src, 0, [(cols, rows), (1, cols)], [], -1), False)
        load.addArgumentOrOutput(bir.Instruction.createAP(dst, 0, [(cols, rows), (1, cols)], [], -1), True)
    add = block.addInstruction(bir.InstructionType.TensorTensor)
    add.engine = bir.Engine.DVE
    add.set_op(bir.AluOp.add)
    for t in (sa, sb):
        add.addArgumentOrOutput(bir.Instruction.createAP(t, 0, [(cols, rows), (1, cols)], [], -1), False)
    add.addArgumentOrOutput(bir.Instruction.createAP(so, 0, [(cols, rows), (1, cols)], [], -1), True)
    save = block.addInstruction(bir.InstructionType.Save)
    save.engine = bir.Engine.SP
    save.addArgumentOrOutput(bir.Instruction.createAP(so, 0, [(cols, rows), (1, cols)], [], -1), False)
    save.addArgumentOrOutput(bir.Instruction.createAP(out, 0, [(cols, rows), (1, cols)], [], -1), True)
    for inst in block.instructions:
        inst.source = "demo.py:add_kernel"
    return m


def _transpose_body(n: int) -> str:
    """ISA BIR of out = x.T for an [n, n] float32 tile on the vector engine (n <= 32)."""
    m = bir.Module()
    f = m.addFunction("tiled_dve_transpose_10")
    x = f.createDramTensor("x", MemoryType.Input, DType.float32, [n, n], TensorKind.ExternalInput)
    out = f.createDramTensor("out", MemoryType.Output, DType.float32, [n, n], TensorKind.ExternalOutput)
    sx = f.createOnChipTensor("x_tile", MemoryType.SB, DType.float32, n, n * 4, 0, 0)
    so = f.createOnChipTensor("t_tile", MemoryType.SB, DType.float32, n, n * 4, 0, n * 4)
    block = f.addBlock()
    full = [(n, n), (1, n)]
    load = block.addInstruction(bir.InstructionType.Load)
    load.engine = bir.Engine.SP
    load.addArgumentOrOutput(bir.Instruction.createAP(x, 0, full, [], -1), False)
    load.addArgumentOrOutput(bir.Instruction.createAP(sx, 0, full, [], -1), True)
    tr = block.addInstruction(bir.InstructionType.StreamTranspose)
    tr.engine = bir.Engine.DVE
    tr.addArgumentOrOutput(bir.Instruction.createAP(sx, 0, full, [], -1), False)
    tr.addArgumentOrOutput(bir.Instruction.createAP(so, 0, full, [], -1), True)
    save = block.addInstruction(bir.InstructionType.Save)
    save.engine = bir.Engine.SP
    save.addArgumentOrOutput(bir.Instruction.createAP(so, 0, full, [], -1), False)
    save.addArgumentOrOutput(bir.Instruction.createAP(out, 0, full, [], -1), True)
    return m.to_json(-1)


def build_demo_module(tokens: int = 256, hidden: int = 2048, intermediate: int = 5632) -> bir.Module:
    """A module with one node of each kernel kind, over DRAM tensors of a small decoder layer."""
    cg = BirCodeGenLoop()
    f = cg.function
    bf16 = DType.bfloat16
    hidden_t = f.createDramTensor("hidden", MemoryType.Input, bf16, [1, tokens, hidden], TensorKind.ExternalInput)
    ln_w = f.createDramTensor("ln_w", MemoryType.Input, bf16, [1, hidden], TensorKind.ExternalInput)
    gate_w = f.createDramTensor("gate_w", MemoryType.Input, bf16, [hidden, intermediate], TensorKind.ExternalInput)
    up_w = f.createDramTensor("up_w", MemoryType.Input, bf16, [hidden, intermediate], TensorKind.ExternalInput)
    down_w = f.createDramTensor("down_w", MemoryType.Input, bf16, [intermediate, hidden], TensorKind.ExternalInput)
    mlp_out = f.createDramTensor("mlp_out", MemoryType.Output, bf16, [1, tokens, hidden], TensorKind.ExternalOutput)

    # IT54: the name-inlined library node.
    mlp = cg.addInstruction(Opcode.BIRKernel)
    mlp.set_kernel_name("MLP")
    mlp.set_kernel_attrs([("eps", "1e-06")])
    mlp.set_srcs_shape([list(t.shape) for t in (hidden_t, ln_w, gate_w, up_w, down_w)])
    mlp.set_dsts_shape([list(mlp_out.shape)])
    mlp.set_sb_buf_shape(cg.sb_buf_shape)
    mlp.set_psum_buf_shape(cg.psum_buf_shape)
    mlp.set_auto_cast("none")
    mlp.set_auto_cast_type("bfloat16")
    mlp.set_fused_rmsnorm(True)
    mlp.set_norm_type(1)
    mlp.set_store_add(False)
    mlp.set_quant_kernel(False)
    mlp.set_skip_gate(False)
    mlp.set_act_fn(0)
    mlp.set_up_bias(False)
    mlp.set_down_bias(False)
    from neuronxsim.nki._private_kernels.mlp import TKG_BS_SEQLEN_THRESHOLD
    mlp.set_is_tkg(tokens < TKG_BS_SEQLEN_THRESHOLD)  # codegenMLPKernel's decision
    for t in (hidden_t, ln_w, gate_w, up_w, down_w):
        mlp.addSeqAccess(t, False)
    mlp.addSeqAccess(mlp_out, True)

    # IT55: a user @nki.jit kernel, compiled ahead of time; the node names the artifact.
    rows, cols = 128, 512
    a = f.createDramTensor("add_a", MemoryType.Input, DType.float32, [rows, cols], TensorKind.ExternalInput)
    b = f.createDramTensor("add_b", MemoryType.Input, DType.float32, [rows, cols], TensorKind.ExternalInput)
    c = f.createDramTensor("add_out", MemoryType.Output, DType.float32, [rows, cols], TensorKind.ExternalOutput)
    user = cg.addInstruction(Opcode.NKIKernel)
    handle, _ = artifact(_elementwise_add_kernel(rows, cols), "add_kernel", "bir")
    user.set_func(handle)
    user.set_func_args(["a", "b"])
    user.set_func_outs(["out"])
    user.set_sb_buf_shape(cg.sb_buf_shape)
    user.set_psum_buf_shape(cg.psum_buf_shape)
    user.addSeqAccess(a, False)
    user.addSeqAccess(b, False)
    user.addSeqAccess(c, True)

    # IT56: the registry-traced carrier, Form B (embedded BIR JSON).
    n = 32
    x = f.createDramTensor("tr_x", MemoryType.Input, DType.float32, [n, n], TensorKind.ExternalInput)
    y = f.createDramTensor("tr_out", MemoryType.Output, DType.float32, [n, n], TensorKind.ExternalOutput)
    reg = cg.addInstruction(Opcode.NKIKLIRKernel)
    reg.set_klir_binary(_transpose_body(n))
    reg.set_kernel_format("bir")
    reg.set_nki_binary_version_identifier("neuronxsim-0.1.0")
    reg.set_func_name("tiled_dve_transpose_10")
    reg.set_func_args(["x"])
    reg.set_func_outs(["out"])
    reg.set_sb_buf_shape(cg.sb_buf_shape)
    reg.set_psum_buf_shape(cg.psum_buf_shape)
    reg.addOpaqueAP(x, False)
    reg.addOpaqueAP(y, True)
    return cg.module


def write_demo(output_dir: str = "neuronxsim-demo") -> tuple[str, bir.Module]:
    """Builds the demo module and writes the folder ``output_dir`` (replaced as a whole) holding
    ``module.json`` and the compiled kernels its IT55 nodes name (``nki/``); returns the module
    file's path and the module."""
    from neuronxsim.cli.output_set import OutputSet

    output = OutputSet(output_dir, "demo")
    module = build_demo_module()
    module.verify()
    with output as out:
        out.write_text("module.json", module.to_json())
        for node in (i for f in module.functions for b in f.blocks for i in b.instructions):
            if node.opcode == bir.InstructionType.NKIKernel:  # the compiled kernel beside the module
                out.write_bytes(node.func, walrus.compiled_nki_kernel(node.func))
    return os.path.join(output_dir, "module.json"), module

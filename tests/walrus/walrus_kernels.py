"""Small traced kernels and host modules for the walrus tests, built through neuronxsim.bir."""

from neuronxsim import bir
from neuronxsim.bir import DType, Engine, InstructionType, MemoryType, TensorKind


def add_kernel(rows=128, cols=512, cores=1):
    """out = a + b over [rows, cols] float32 DRAM tensors, one function per core (core i takes
    rows i*rows/cores ...)."""
    m = bir.Module()
    r = rows // cores
    for c in range(cores):
        f = m.addFunction()
        dram = {name: f.createDramTensor(name, kind, DType.float32, [rows, cols], tk)
                for name, kind, tk in (("a", MemoryType.Input, TensorKind.ExternalInput),
                                       ("b", MemoryType.Input, TensorKind.ExternalInput),
                                       ("out", MemoryType.Output, TensorKind.ExternalOutput))}
        tiles = {name: f.createOnChipTensor(name, MemoryType.SB, DType.float32, r, cols * 4, 0, i * cols * 4)
                 for i, name in enumerate(("ta", "tb", "tc"))}
        bb = f.addBlock("body")

        def tile(t):
            return bir.Instruction.createAP(t, 0, [(cols, r), (1, cols)], [], -1)

        def rows_of(t):
            return bir.Instruction.createAP(t, c * r * cols, [(cols, r), (1, cols)], [], -1)

        for name, op, ins, out, engine in (
            ("load_a", InstructionType.DMA, [rows_of(dram["a"])], tile(tiles["ta"]), Engine.SP),
            ("load_b", InstructionType.DMA, [rows_of(dram["b"])], tile(tiles["tb"]), Engine.SP),
            ("add", InstructionType.TensorTensor, [tile(tiles["ta"]), tile(tiles["tb"])], tile(tiles["tc"]), Engine.DVE),
            ("store", InstructionType.DMA, [tile(tiles["tc"])], rows_of(dram["out"]), Engine.SP),
        ):
            inst = bb.addInstruction(op, name)
            inst.ins = ins
            inst.outs = [out]
            inst.engine = engine
            inst.source = f"add.py:{len(bb)}"
    return m


def host(kind, rows=128, cols=512):
    """x, y -> node 'k0' -> z, the node bound to add_kernel's a, b and out."""
    m = bir.Module()
    f = m.addFunction()
    x = f.createDramTensor("x", MemoryType.Input, DType.float32, [rows, cols], TensorKind.ExternalInput)
    y = f.createDramTensor("y", MemoryType.Input, DType.float32, [rows, cols], TensorKind.ExternalInput)
    z = f.createDramTensor("z", MemoryType.Output, DType.float32, [rows, cols], TensorKind.ExternalOutput)
    node = f.addBlock("main").addInstruction(kind, "k0")
    node.addSeqAccess(x, False)
    node.addSeqAccess(y, False)
    node.addOpaqueAP(z, True)
    node.func_args = ["a", "b"]
    node.func_outs = ["out"]
    return m, node


def compiled(kernel, fmt="bir", name="add_kernel"):
    """``kernel`` registered as a compiled user kernel (as the NKI front end does); its handle."""
    from neuronxsim.starfish.penguin.ir.nki_compile import artifact

    return artifact(kernel, name, fmt)[0]

"""The generic IT54 path (codegenBIRKernel), the operand access marshalling, the dispatch table
and the registry boundary."""

import pytest

from neuronxsim import bir
from neuronxsim.bir import AccessFlavour
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen_module
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import NAMED_ATTR_FIELDS, BirCodeGenLoop, Opcode
from neuronxsim.starfish.penguin.targets.codegen.KernelBuilder import KernelBuilder

F = ir.FullTensorAccess
GENERIC = ["RouterTopK", "ExpertMLPs", "RowTiledMM", "ColumnTiledMM", "CaymanPackedPETranspose", "AttentionTkgFwd"]


@pytest.mark.parametrize("kernel_name", GENERIC)
def test_generic_kernels_pass_kernel_attrs_through_unchanged(build, kernel_name):
    p = ir.Program()
    x, y = p.tensor("x", [128, 512]), p.tensor("y", [128, 512], kind="output")
    attrs = [("z_last", "1"), ("a first", " spaced, \"quoted\" "), ("empty", ""), ("k", "[1, 2]")]
    inst = p.add(ir.BIRKernel(kernel_name, [F(x)], [F(y)], kernel_attrs=attrs))
    cg, (node,) = build.lower(p, auto_cast="none", auto_cast_type="fp8_e4m3")
    assert node.opcode == 54 and node.kernel_name == kernel_name and node.name == kernel_name
    assert node.kernel_attrs == attrs == list(inst.kernel_attrs)
    assert (node.srcs_shape, node.dsts_shape) == ([[128, 512]], [[128, 512]])
    assert (node.sb_buf_shape, node.psum_buf_shape) == ([128, 196608], [128, 8, 2048])
    assert (node.auto_cast, node.auto_cast_type) == ("none", "fp8_e4m3")
    assert all(getattr(node, f) is None for f in NAMED_ATTR_FIELDS)


def test_gen3_modules_give_kernels_the_larger_sbuf(build):
    m = bir.Module()
    m.arch = "gen3"
    p = ir.Program()
    p.add(ir.BIRKernel("RowTiledMM", [F(p.tensor("x", [4]))], [F(p.tensor("y", [4], kind="output"))]))
    node = BirCodeGenLoop(module=m).lower(p).functions[0].blocks[0].instructions[0]
    assert node.sb_buf_shape == [128, 224 * 1024]


def test_codegen_options_are_checked():
    with pytest.raises(CodegenError, match="auto_cast is 'some'; expected one of none, matmult, all"):
        BirCodeGenLoop(auto_cast="some")
    with pytest.raises(CodegenError, match="auto_cast_type is 'bfloat16'; expected one of bf16, fp16, tf32, fp8_e4m3"):
        BirCodeGenLoop(auto_cast_type="bfloat16")
    m = bir.Module()
    m.arch = "trn1"  # a name of a generation (Module.arch refuses others), not a BIR arch name
    with pytest.raises(CodegenError, match="module arch is 'trn1'; expected one of gen2, gen3"):
        BirCodeGenLoop(module=m)


def generic_node(build, srcs_of, dsts_of, shapes):
    """Lowers one RowTiledMM over tensors of ``shapes``; ``srcs_of`` / ``dsts_of`` build accesses."""
    p = ir.Program()
    tensors = [p.tensor(f"t{i}", s, kind="input" if i < len(shapes) - 1 else "output") for i, s in enumerate(shapes)]
    p.add(ir.BIRKernel("RowTiledMM", srcs_of(tensors[:-1]), dsts_of(tensors[-1:])))
    cg, (node,) = build.lower(p)
    return cg, node


def pairs(ap):
    return [[x.step, x.num] for x in ap.pattern]


def test_each_access_kind_gets_its_flavour_and_address_list(build):
    _, node = generic_node(
        build,
        lambda t: [F(t[0]), ir.NDimSubTensorAccess(t[1], [1, 2, 4], [2, 3, 5], partition_dim=2, steps=[1, 2, 2]),
                   ir.TileAccess(t[2], ir.MemrefTile([2, 4, 8], [1, 1, 0]), partition_dim=1), ir.OpaqueAccess(t[3])],
        lambda t: [F(t[0])],
        [[4, 8, 16]] * 5)
    full, sub, tile, opaque = node.ins
    assert full.flavour == AccessFlavour.Seq and pairs(full) == [[128, 4], [16, 8], [1, 16]] and full.offset == 0
    assert sub.flavour == AccessFlavour.AP
    assert sub.offset == 1 * 128 + 2 * 16 + 4 and pairs(sub) == [[2, 5], [128, 2], [32, 3]]
    assert (sub.access_shape, sub.partition_dim) == ([2, 3, 5], 2)
    assert tile.flavour == AccessFlavour.AP
    assert tile.offset == 2 * 128 + 4 * 16 and pairs(tile) == [[16, 4], [128, 2], [1, 8]]
    assert (tile.access_shape, tile.partition_dim) == ([2, 4, 8], 1)
    assert opaque.flavour == AccessFlavour.Opaque and pairs(opaque) == pairs(full)
    assert node.srcs_shape == [[4, 8, 16], [2, 3, 5], [2, 4, 8], [4, 8, 16]]


def test_a_view_addresses_the_tensor_in_the_view_and_is_then_undone(build):
    def srcs(t):
        return [ir.TileAccess(t[0], ir.MemrefTile([8, 16], [3, 0]), view_shape=[32, 16]),
                ir.NDimSubTensorAccess(t[0], [1, 0, 0], [1, 8, 16])]

    cg, node = generic_node(build, srcs, lambda t: [F(t[0])], [[4, 8, 16], [4]])
    viewed, plain = node.ins
    assert viewed.offset == 3 * 8 * 16 and pairs(viewed) == [[16, 8], [1, 16]]
    assert plain.offset == 128 and pairs(plain) == [[128, 1], [16, 8], [1, 16]]
    assert cg._ap_reshapes == {}


def test_the_original_ap_is_restored_even_when_marshalling_fails():
    cg = BirCodeGenLoop()
    node = cg.addInstruction(Opcode.BIRKernel)
    undeclared = ir.TileAccess(ir.Tensor("nowhere", [4, 8]), ir.MemrefTile([1, 16], [1, 0]), view_shape=[2, 16])
    with pytest.raises(CodegenError, match="tensor 'nowhere' is not declared in this BirCodeGenLoop"):
        cg.codegenBIRKernelAccess(node, undeclared, False)
    assert cg._ap_reshapes == {} and node.ins == []


def test_an_unknown_access_kind_is_refused():
    cg = BirCodeGenLoop()
    node = cg.addInstruction(Opcode.BIRKernel)
    with pytest.raises(CodegenError, match="codegenBIRKernelAccess: str; expected FullTensorAccess, NDimSubTensorAccess"):
        cg.codegenBIRKernelAccess(node, "x", False)


def test_lowering_only_it54_macros_never_builds_the_registry(build, monkeypatch):
    monkeypatch.setattr(codegen_module, "_INTERNAL_KERNEL_REGISTRY", None)  # as in a fresh process
    p = build.family_program("mlp")
    p.add(ir.BIRKernel("ExpertMLPs", [F(p.tensors["hidden"])], [F(p.tensor("e", [1, 128, 256], kind="output"))]))
    for family in ("qkv", "rmsnorm_quant", "attention", "backwards_attention"):
        build.lower(build.family_program(family))
    build.lower(p)
    assert codegen_module._INTERNAL_KERNEL_REGISTRY is None


def test_opcode_names_every_instruction_type():
    assert len(Opcode) == 110
    assert [(m.name, int(m)) for m in Opcode] == [(bir.instruction_type_string(i), i) for i in range(110)]
    assert (Opcode.BIRKernel, Opcode.NKIKernel, Opcode.NKIKLIRKernel) == (54, 55, 56)


def test_dispatch_is_a_table_covering_every_macro():
    assert set(KernelBuilder.CODEGEN_METHODS) == set(ir.MACRO_CLASSES.values())
    for untiled, tiled in KernelBuilder.CODEGEN_METHODS.values():
        for name in filter(None, (untiled, tiled)):
            assert callable(getattr(BirCodeGenLoop, name)), name
    assert sum(1 for _, tiled in KernelBuilder.CODEGEN_METHODS.values() if tiled) == 4


def test_is_all_io_type_memref_tile():
    x = ir.Tensor("x", [4, 4])
    o = ir.Tensor("o", [4, 4], kind="output")
    tile = lambda t: ir.TileAccess(t, ir.MemrefTile([4, 4], [0, 0]))  # noqa: E731
    assert KernelBuilder._is_all_io_type_memref_tile(ir.BIRKernel("K", [tile(x)], [tile(o)]))
    assert not KernelBuilder._is_all_io_type_memref_tile(ir.BIRKernel("K", [tile(x)], [F(o)]))
    assert not KernelBuilder._is_all_io_type_memref_tile(ir.BIRKernel("K", [], [F(o)]))


def test_something_that_is_not_a_macro_has_no_codegen():
    with pytest.raises(CodegenError, match="str: no codegen lowers it; expected a macro instruction of MLPKernel"):
        KernelBuilder.codegen_method("MLP")
    with pytest.raises(CodegenError, match="expected a penguin.ir Program"):
        BirCodeGenLoop().lower([])


def test_two_programs_may_share_a_function_but_not_tensor_names(build):
    cg = BirCodeGenLoop()
    cg.lower(build.family_program("mlp"))
    cg.lower(build.family_program("attention"))
    assert len(cg.block) == 2
    with pytest.raises(CodegenError, match="Program 'mlp': tensor 'hidden' already exists in the BIR function"):
        cg.lower(build.family_program("mlp"))
    assert len(cg.block) == 2


# ---- seed 000 section 6: LncSize and the reduce flag of the tile / sub-tensor builders ----

def lnc_reduce_program(access_kind):
    p = ir.Program("lnc")
    x = p.tensor("x", [256, 512])
    y = p.tensor("y", [256, 512], kind="output")
    if access_kind == "sub":
        make = lambda t, **kw: ir.NDimSubTensorAccess(t, (0, 0), (256, 512), **kw)  # noqa: E731
    else:
        make = lambda t, **kw: ir.TileAccess(t, ir.MemrefTile([256, 512], [0, 0]), **kw)  # noqa: E731
    p.add(ir.BIRKernel("RowTiledMM", [make(x, lnc=2)], [make(y, lnc=2, reduce=True)], name="k"))
    return p


@pytest.mark.parametrize("access_kind", ["sub", "tile"])
def test_the_builders_record_lnc_size_and_the_reduce_flag(access_kind):
    """addBIRKernelNDimSubTensorAccess / addBIRKernelTileAccess: lnc = LncSize(operand) goes into
    createAP, the reduce flag ("may reduce along partition dim") into addArgumentOrOutput."""
    p = lnc_reduce_program(access_kind)
    assert codegen_module.LncSize(p.insts[0].srcs[0]) == 2
    module = BirCodeGenLoop().lower(p)
    (node,) = module.functions[0].blocks[0].instructions
    assert (node.ins[0].lnc_size, node.ins[0].reduce) == (2, False)
    assert (node.outs[0].lnc_size, node.outs[0].reduce) == (2, True)
    again = bir.Module.from_json(module.to_json())
    (copy,) = again.functions[0].blocks[0].instructions
    assert (copy.outs[0].lnc_size, copy.outs[0].reduce) == (2, True)
    assert ir.Program.loads(p.dumps()).insts[0].dsts[0].reduce is True


def test_an_expander_refuses_a_split_or_reduced_operand_instead_of_ignoring_it():
    from neuronxsim import KernelError
    from neuronxsim.walrus.inline import inline_bir_kernels

    module = BirCodeGenLoop().lower(lnc_reduce_program("sub"))
    with pytest.raises(KernelError, match=r"InstBIRKernel 'k' \(kernel 'RowTiledMM'\): ins\[0\] is shared by 2 "
                                          r"NeuronCores \(lnc_size\): the expanders take operands of one NeuronCore"):
        inline_bir_kernels(module)


def test_lnc_and_reduce_are_checked_where_they_are_made():
    p = ir.Program()
    x = p.tensor("x", [6, 4])
    with pytest.raises(CodegenError, match=r"NDimSubTensorAccess of 'x' lnc: 2 NeuronCores cannot split the partition "
                                           r"dim's 3 elements"):
        ir.NDimSubTensorAccess(x, (0, 0), (3, 4), lnc=2)
    with pytest.raises(CodegenError, match=r"lnc: expected one of 1, 2, got 4"):
        ir.NDimSubTensorAccess(x, (0, 0), (4, 4), lnc=4)
    y = p.tensor("y", [6, 4], kind="output")
    with pytest.raises(CodegenError, match=r"srcs\[0\]: reduce marks an output"):
        ir.BIRKernel("K", [ir.NDimSubTensorAccess(x, (0, 0), (6, 4), reduce=True)], [ir.FullTensorAccess(y)])
    m = bir.Module()
    f = m.addFunction()
    t = f.createDramTensor("t", bir.MemoryType.Input, bir.DType.float32, [4, 4])
    node = f.addBlock().addInstruction(bir.InstructionType.BIRKernel, "k")
    ap = bir.Instruction.createAP(t, 0, [(4, 4), (1, 4)], [4, 4], 0, 2)
    with pytest.raises(bir.BIRError, match="reduce applies to outputs"):
        node.addArgumentOrOutput(ap, False, True)
    u = f.createDramTensor("u", bir.MemoryType.Output, bir.DType.float32, [4, 4])
    copy = f.blocks[0].addInstruction(bir.InstructionType.DMACopy, "c")
    copy.addArgumentOrOutput(ap, False)
    copy.addArgumentOrOutput(bir.Instruction.createAP(u, 0, [(4, 4), (1, 4)], [], -1), True)
    with pytest.raises(bir.BIRError, match=r"ins\[0\]: lnc_size and reduce mark kernel-node operands"):
        m.verify()

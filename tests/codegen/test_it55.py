"""IT55: user @nki.jit kernels. Seed 000: an InstNKIKernel carries func / func_args / func_outs
"for a kernel the user wrote and the front end already AOT-compiled"; codegenInternalNativeNkiKernel
"is the only codegen that re-traces". So the NKI front end compiles a user kernel when the Penguin
program is built or loaded (penguin.ir.nki_compile), the codegen names the compiled artifact and
traces nothing, and the resolver finds the artifact -- in this process, or as the file of that name
in the folder the lowered module was saved in, from another process."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim import KernelError, bir, pipeline, sim, walrus
from neuronxsim.bir import AccessFlavour
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelCategory

F = ir.FullTensorAccess


@nki.jit
def add_kernel(b, a):
    """out = a + b; the parameters are b, a (func_args follows the parameter order)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a) + nl.load(b))
    return out


@nki.jit
def add3_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for h in nl.affine_range(a.shape[0]):
        nl.store(out[h], nl.load(a[h]) + nl.load(b[h]))
    return out


def add_program(macro=ir.ExternalNativeNkiKernel, shape=(128, 512), arch="trn1", name="user_add"):
    p = ir.Program("user", arch)
    x, y = p.tensor("x", shape), p.tensor("y", shape)
    p.add(macro(add_kernel, [F(x), F(y)], [F(p.tensor("z", shape, kind="output"))], name=name))
    return p


def node_of(module):
    (node,) = module.functions[0].blocks[0].instructions
    return node


def test_the_front_end_compiles_the_kernel_when_the_program_is_built():
    p = add_program()
    compiled = p.insts[0].compiled
    assert re.fullmatch(r"nki/add_kernel\.[0-9a-f]{16}\.json", compiled.handle)
    assert (compiled.kernel_name, compiled.arch, compiled.func_args, compiled.func_outs) == \
        ("add_kernel", "trn1", ("b", "a"), ("out",))
    assert walrus.compiled_nki_kernel(compiled.handle) == compiled.data
    x = np.zeros((128, 512), np.float32)
    assert bir.Module.from_json(compiled.data.decode()).to_json() == nki.trace(add_kernel, x, x).to_json()


def test_the_node_names_the_compiled_kernel_and_carries_no_body():
    p = add_program()
    cg = BirCodeGenLoop()
    node = node_of(cg.lower(p))
    compiled = p.insts[0].compiled
    assert node.opcode == 55 and type(node) is bir.InstNKIKernel and node.name == "user_add"
    assert (node.func, node.func_args, node.func_outs) == (compiled.handle, ["b", "a"], ["out"])
    assert (node.sb_buf_shape, node.psum_buf_shape) == ([128, 196608], [128, 8, 2048])
    assert [(a.memref, a.flavour) for a in node.ins] == [("x", AccessFlavour.Seq), ("y", AccessFlavour.Seq)]
    assert "body" not in bir.InstNKIKernel.field_names
    (j,) = json.loads(cg.module.to_json())["functions"][0]["blocks"][0]["instructions"]
    assert set(j) - {"opcode", "name", "engine", "ins", "outs"} == {"func", "func_args", "func_outs", "sb_buf_shape",
                                                                    "psum_buf_shape"}
    assert cg.kernel_counts == {(KernelCategory.NKI_KERNEL, "add_kernel"): 1}


def test_the_codegen_traces_no_user_kernel(monkeypatch):
    """Lowering runs with the NKI tracer unavailable: only the registry sink traces."""
    import neuronxsim.nki.kernel as nki_kernel

    p = add_program()

    def refuse(*args, **kwargs):
        raise AssertionError("the codegen traced a user kernel")

    monkeypatch.setattr(nki_kernel, "_trace", refuse)
    monkeypatch.setitem(sys.modules, "neuronxsim.nki", None)
    node = node_of(BirCodeGenLoop().lower(p))
    assert node.func == p.insts[0].compiled.handle


def test_the_klir_path_is_an_it55_node_naming_a_klr_artifact():
    """ExternalNativeNkiKlirKernel: the front end compiles into a KLR file; the node is IT55, not
    IT56 (which is for the internal kernel registry's kernels only), and resolves to the same code."""
    p = add_program(ir.ExternalNativeNkiKlirKernel)
    cg = BirCodeGenLoop()
    node = node_of(cg.lower(p))
    assert node.opcode == bir.InstructionType.NKIKernel == 55
    assert re.fullmatch(r"nki/add_kernel\.[0-9a-f]{16}\.klr", node.func)
    assert walrus.decode_klr(walrus.compiled_nki_kernel(node.func)).to_json() == \
        bir.Module.from_json(add_program().insts[0].compiled.data.decode()).to_json()
    assert cg.kernel_counts == {(KernelCategory.NKI_KERNEL, "add_kernel"): 1}
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 128, 512), dtype=np.float32)
    resolved = pipeline.resolve(pipeline.lower(p)).module
    np.testing.assert_array_equal(sim.simulate(resolved, {"x": a, "y": b}).outputs["z"], a + b)


def test_operands_must_match_the_kernel_when_it_is_compiled():
    p = ir.Program()
    x, y = p.tensor("x", [128, 512]), p.tensor("y", [128, 512])
    z, w = p.tensor("z", [128, 512], kind="output"), p.tensor("w", [128, 512], "bfloat16", kind="output")
    with pytest.raises(CodegenError, match=r"^insts\[0\] ExternalNativeNkiKernel: compiling user kernel 'add_kernel' "
                                           r"failed: .*missing a required argument: 'a'"):
        p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x)], [F(z)]))
    with pytest.raises(CodegenError, match=r"^insts\[0\] ExternalNativeNkiKernel dsts: 2 operands; the user kernel "
                                           r"'add_kernel' has 1 tensor results \(out\)"):
        p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x), F(y)], [F(z), F(w)]))
    with pytest.raises(CodegenError, match=r"^insts\[0\] ExternalNativeNkiKernel dsts\[0\]: \[128, 512\] bfloat16 does "
                                           r"not match the kernel's result 'out' \[128, 512\] float32"):
        p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x), F(y)], [F(w)]))
    assert p.insts == []


def test_a_macro_the_front_end_did_not_compile_is_refused():
    p = add_program()
    p.insts[0].compiled = None
    with pytest.raises(CodegenError, match=r"insts\[0\] ExternalNativeNkiKernel 'user_add': the user kernel was not "
                                           r"compiled by the NKI front end"):
        BirCodeGenLoop().lower(p)


def test_a_program_lowers_for_its_own_arch_or_is_compiled_again():
    module = bir.Module()
    module.arch = "gen3"
    cg = BirCodeGenLoop(module)
    with pytest.raises(CodegenError, match=r"the user kernel was compiled for trn1; the module is gen3 \(trn2\)"):
        cg.lower(add_program())
    assert len(cg.block) == 0 and not cg.function.allocations  # nothing emitted
    again = add_program().for_arch("trn2")
    assert again.arch == "trn2" and again.insts[0].compiled.arch == "trn2"
    assert node_of(BirCodeGenLoop(module).lower(again)).opcode == 55
    assert pipeline.lower(add_program(), "trn2").module.arch == "gen3"  # the pipeline re-targets


def test_operands_changed_after_compiling_are_refused():
    p = add_program()
    p.insts[0].srcs = [F(p.tensors["y"]), F(p.tensors["x"])]  # same types: still the compiled kernel
    BirCodeGenLoop().lower(p)
    q = add_program()
    w = q.tensor("w", [128, 512], "bfloat16")
    q.insts[0].srcs = [F(q.tensors["x"]), F(w)]
    with pytest.raises(CodegenError, match=r"its operands changed after the user kernel was compiled for them"):
        BirCodeGenLoop().lower(q)


def test_a_sub_tensor_operand_binds_the_kernel_to_part_of_a_tensor():
    """Heads 1..2 of a [4, 128, 64] tensor go to the kernel as [2, 128, 64] (a NDimSubTensorAccess)."""
    p = ir.Program("heads")
    x, y = p.tensor("x", [4, 128, 64]), p.tensor("y", [2, 128, 64])
    z = p.tensor("z", [2, 128, 64], kind="output")
    p.add(ir.ExternalNativeNkiKernel(add3_kernel, [ir.NDimSubTensorAccess(x, (1, 0, 0), (2, 128, 64)), F(y)], [F(z)]))
    resolved = pipeline.resolve(pipeline.lower(p)).module
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((4, 128, 64), dtype=np.float32), rng.standard_normal((2, 128, 64), dtype=np.float32)
    np.testing.assert_array_equal(sim.simulate(resolved, {"x": xs, "y": ys}).outputs["z"], xs[1:3] + ys)


def test_a_program_with_a_user_kernel_round_trips_through_json():
    p = add_program(arch="trn2")
    again = ir.Program.loads(p.dumps())
    assert json.loads(p.dumps())["arch"] == "trn2"
    assert again.arch == "trn2" and again.insts[0].kernel is add_kernel
    assert again.insts[0].compiled.handle == p.insts[0].compiled.handle  # compiled again on load: same kernel


RESOLVE_ELSEWHERE = """
import sys
import numpy as np
from neuronxsim import bir, pipeline, sim, walrus
module = bir.load(sys.argv[1])
(node,) = module.functions[0].blocks[0].instructions
assert walrus.compiled_nki_kernel(node.func) is None  # not compiled in this process
a = np.full((128, 512), 1.5, np.float32)
b = np.full((128, 512), 2.0, np.float32)
out = sim.simulate(pipeline.resolve(module).module, {"x": a, "y": b}).outputs["z"]
assert (out == 3.5).all()
print("ok")
"""


@pytest.mark.parametrize("save", ["pipeline", "codegen"])
def test_a_saved_module_is_resolved_from_its_folder_in_another_process(tmp_path, save):
    p = add_program()
    path = tmp_path / "out" / "module.json"
    if save == "pipeline":
        lowered = pipeline.lower(p, "trn1", out_dir=path.parent)
        bir.save(lowered.module, path)
    else:
        os.makedirs(path.parent)
        cg = BirCodeGenLoop()
        cg.lower(p)
        cg.save(path)
    handle = p.insts[0].compiled.handle
    assert (path.parent / handle).read_bytes() == p.insts[0].compiled.data
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in sys.path if x))
    result = subprocess.run([sys.executable, "-P", "-c", RESOLVE_ELSEWHERE, str(path)], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_the_compiled_kernel_reference_stays_in_the_module_folder(tmp_path):
    module = pipeline.lower(add_program()).module
    node = node_of(module)
    node.func = "../" + node.func
    with pytest.raises(KernelError, match=r"\(NKIKernel 'user_add'\): compiled kernel '\.\./nki/add_kernel\.[0-9a-f]+"
                                          r"\.json' was not compiled in this process, and its file cannot be read: "
                                          r"func '\.\./nki/.*' is outside the files folder"):
        walrus.resolve_nki_kernels(module, base_dir=tmp_path)

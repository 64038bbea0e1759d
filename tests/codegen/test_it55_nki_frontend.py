"""IT55 end to end with the NKI front end's tracer (``neuronxsim.nki.trace``): runs once the
front end is present in this checkout; until then the hand-traced tests in test_it55.py cover
the codegen."""

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import AccessFlavour
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl

F = ir.FullTensorAccess


@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a) + nl.load(b))
    return out


def add_program():
    p = ir.Program("user")
    x, y = p.tensor("x", [128, 512]), p.tensor("y", [128, 512])
    p.add(ir.ExternalNativeNkiKernel(add_kernel, [F(x), F(y)], [F(p.tensor("z", [128, 512], kind="output"))]))
    return p


def test_a_user_kernel_is_traced_into_its_node():
    module = BirCodeGenLoop().lower(add_program())
    node = module.functions[0].blocks[0].instructions[0]
    assert node.opcode == 55 and (node.func, node.func_args, node.func_outs) == ("add_kernel", ["a", "b"], ["out"])
    a = np.zeros((128, 512), np.float32)
    assert node.body == nki.trace(add_kernel, a, a).to_json(-1)
    assert [x.flavour for x in node.ins + node.outs] == [AccessFlavour.Seq] * 3
    assert bir.Module.from_json(module.to_json()).to_json() == module.to_json()


def test_a_program_with_a_user_kernel_round_trips_through_json():
    p = add_program()
    assert ir.Program.loads(p.dumps()).insts[0].kernel is add_kernel


def test_a_sub_tensor_operand_binds_the_kernel_to_part_of_a_tensor():
    """Heads 1..2 of a [4, 128, 64] tensor go to the kernel as [2, 128, 64] (a NDimSubTensorAccess)."""
    p = ir.Program("heads")
    x = p.tensor("x", [4, 128, 64])
    y = p.tensor("y", [2, 128, 64])
    z = p.tensor("z", [2, 128, 64], kind="output")
    part = ir.NDimSubTensorAccess(x, (1, 0, 0), (2, 128, 64))
    p.add(ir.ExternalNativeNkiKernel(add3_kernel, [part, F(y)], [F(z)]))
    from neuronxsim import sim
    from neuronxsim.walrus.inline import inline_bir_kernels

    module = BirCodeGenLoop().lower(p)
    inline_bir_kernels(module)
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((4, 128, 64), dtype=np.float32), rng.standard_normal((2, 128, 64), dtype=np.float32)
    out = sim.simulate(module, {"x": xs, "y": ys}).outputs["z"]
    np.testing.assert_array_equal(out, xs[1:3] + ys)


@nki.jit
def add3_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for h in nl.affine_range(a.shape[0]):
        nl.store(out[h], nl.load(a[h]) + nl.load(b[h]))
    return out


def test_the_klir_path_carries_the_user_kernel_as_a_klr_file(tmp_path, monkeypatch):
    """ExternalNativeNkiKlirKernel: an NKIKLIRKernel node (Form A) whose KLR file lowerKernelInst
    resolves into the same result as the IT55 path."""
    from neuronxsim import sim, walrus
    from neuronxsim.starfish.penguin.targets.codegen import BirCodeGenLoop as codegen

    monkeypatch.setenv(codegen.KLR_DIR_ENV, str(tmp_path))
    p = ir.Program("user_klir")
    x, y = p.tensor("x", [128, 512]), p.tensor("y", [128, 512])
    p.add(ir.ExternalNativeNkiKlirKernel(add_kernel, [F(x), F(y)], [F(p.tensor("z", [128, 512], kind="output"))],
                                         name="k"))
    module = BirCodeGenLoop().lower(p)
    (node,) = module.functions[0].blocks[0].instructions
    assert node.opcode == 56 and (node.kernel_format, node.func_name, node.grid) == ("klir", "add_kernel", 1)
    assert (node.func_args, node.func_outs) == (["a", "b"], ["out"])
    assert node.klir_binary.startswith(str(tmp_path)) and node.nki_binary_version_identifier.startswith("neuronxsim-klr")
    assert walrus.klr_info(node.klir_binary)["kernel_name"] == "add_kernel"
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 128, 512), dtype=np.float32)
    resolved = walrus.lower_kernel_inst(module)
    np.testing.assert_array_equal(sim.simulate(resolved, {"x": a, "y": b}).outputs["z"], a + b)

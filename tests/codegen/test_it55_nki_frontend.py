"""IT55 end to end with the NKI front end's tracer (``neuronxsim.nki.trace``): runs once the
front end is present in this checkout; until then the hand-traced tests in test_it55.py cover
the codegen."""

import numpy as np
import pytest

from neuronxsim import bir
from neuronxsim.bir import AccessFlavour
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop

try:  # the front end, not just the _private_kernels constants this branch adds under neuronxsim.nki
    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl
except ImportError:
    nki = None
if not hasattr(nki, "trace"):
    pytest.skip("neuronxsim.nki (the NKI front end) is not in this checkout yet", allow_module_level=True)

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

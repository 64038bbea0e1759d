"""What the reference executor refuses, and how errors name their place."""

import numpy as np
import pytest

from neuronxsim import BIRError, SimulationError, bir
from neuronxsim.reference.ops import DISPATCH

NOT_ISA = {"InstUnmodeled", "InstBIRKernel", "InstNKIKernel", "InstNKIKLIRKernel"}


def test_every_isa_node_class_opcode_has_a_handler():
    executable = {op.name for op, cls in bir.OPCODE_NODE_CLASSES.items() if cls not in NOT_ISA}
    assert executable == set(DISPATCH)


@pytest.mark.parametrize("opcode", ["Halt", "Shuffle", "MatmultSparse"])
def test_unmodeled_opcodes_are_refused_by_name(program, opcode):
    p = program
    p.add("NoOp")
    p.add(opcode, name="mystery")
    with pytest.raises(SimulationError, match=rf"^functions\[0\].blocks\[0\].instructions\[1\] 'mystery' "
                                              rf"{opcode}: the reference executor does not execute {opcode}"):
        p.run()


@pytest.mark.parametrize("opcode", ["BIRKernel", "NKIKernel", "NKIKLIRKernel"])
def test_kernel_nodes_are_refused(program, opcode):
    p = program
    x = p.input("x", [4])
    kernel = p.add(opcode, name="k")
    kernel.addSeqAccess(x, False)
    with pytest.raises(SimulationError, match=rf"'k' {opcode}: the reference executor does not execute"):
        p.run(x=np.zeros(4, np.float32))


def test_errors_name_the_block_and_instruction(program):
    p = program
    t = p.sbuf("t", 2, 4)
    p.add("Memset", outs=[t], constant=1.0)
    second = p.function.addBlock("second")
    node = second.addInstruction(bir.InstructionType.TensorReduce, "sum")
    node.ins = [p.whole(t)]
    node.outs = [p.ap(t, [[4, 2], [1, 1]])]
    node.axis = bir.ReduceAxis.XY
    with pytest.raises(SimulationError, match=r"^functions\[0\].blocks\[1\].instructions\[0\] 'sum' TensorReduce: "
                                              r"reduce axis XY folds 2 free dims"):
        p.run()


def test_the_structural_verifier_runs_first(program):
    p = program
    t = p.sbuf("t", 2, 4)
    p.add("Memset", outs=[p.ap(t, [[4, 2], [1, 5]])], constant=1.0)  # one column too many
    with pytest.raises(BIRError, match=r"instructions\[0\].outs\[0\]: free access \[0, 4\] is outside"):
        p.run()


def test_a_missing_neuron_core_function_is_an_error(program):
    from neuronxsim import reference
    with pytest.raises(BIRError):
        reference.execute(program.module, {}, neuron_core_id=3)


def test_operand_lane_counts_must_agree(run_op):
    with pytest.raises(SimulationError, match=r"'op' TensorTensor: ins\[1\]: has 3 partitions, expected 2"):
        run_op("TensorTensor", [np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)], [((2, 4), "float32")])
    with pytest.raises(SimulationError, match=r"'op' TensorTensor: ins\[0\]: has 4 elements per partition, expected 5"):
        run_op("TensorTensor", [np.ones((2, 4), np.float32), np.ones((2, 5), np.float32)], [((2, 5), "float32")])


def test_operands_too_large_to_materialise_are_refused(program):
    p = program
    t = p.sbuf("t", 2, 4)
    p.add("Memset", outs=[p.ap(t, [[4, 2], [0, 2**27]])], constant=0.0)  # a step of 0 passes the verifier
    with pytest.raises(SimulationError, match=r"outs\[0\]: an access pattern of 268435456 elements exceeds"):
        p.run()


def test_an_immediate_cannot_stand_for_an_operand_whose_shape_matters(program):
    p = program
    t = p.sbuf("t", 2, 1)
    p.add("TensorReduce", ins=[p.imm(1.0)], outs=[t], axis="X")
    with pytest.raises(SimulationError, match=r"ins\[0\]: must be an access pattern, not an immediate"):
        p.run()

"""The activation engine: Activation (function, scale, bias, accumulator) and
ReadActivationAccumulator."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.activation_functions import activate
from neuronxsim.reference.alu import apply, fold
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step


def activation(step: Step) -> None:
    inst = step.inst
    expected_inputs = 1 + inst.has_bias + inst.has_scale_tensor
    if len(step.ins) != expected_inputs:
        raise Refusal(f"has_bias={inst.has_bias} and has_scale_tensor={inst.has_scale_tensor} need "
                      f"{expected_inputs} inputs, got {len(step.ins)}")
    command = inst.acc.name
    if command in ("AddAccumulate", "LoadAccumulate"):
        raise Refusal(f"accumulator command {command} is refused")
    out = step.outs[0]
    if command == "Accumulate":
        _check_set(step)
    lanes, per_lane = out.shape
    x = step.ins[0].read(lanes, per_lane)
    pointers = iter(step.ins[1:])  # [bias?, scale?] in that order
    bias = next(pointers).read_pointer(lanes) if inst.has_bias else np.float32(0.0)
    scale = next(pointers).read_pointer(lanes) if inst.has_scale_tensor else np.float32(inst.scale)
    y = activate(inst.func, x * scale + bias, inst.alpha)
    out.write(y)

    registers = out.absolute_partitions()
    acc = step.machine.activation_accumulators
    if command == "Zero":
        acc[registers] = 0.0
    elif command == "ZeroAccumulate":
        acc[registers] = fold(inst.acc_op, y)
    elif command == "Accumulate":
        acc[registers] = apply(inst.acc_op, acc[registers], fold(inst.acc_op, y))
    if command != "Idle":
        step.machine.activation_accumulators_set[registers] = True


def _check_set(step: Step) -> None:
    """Refuses reading a register of the output's partitions that no instruction has set."""
    registers = step.outs[0].absolute_partitions()
    unset = ~step.machine.activation_accumulators_set[registers]
    if unset.any():
        raise Refusal(f"reads the activation accumulation register of partition "
                      f"{int(registers[np.argmax(unset)])}, which no instruction has set")


def read_activation_accumulator(step: Step) -> None:
    out = step.outs[0]
    out.expect(per_lane=1)
    _check_set(step)
    out.write(step.machine.activation_accumulators[out.absolute_partitions()][:, None])


HANDLERS = {
    "Activation": activation,
    "ReadActivationAccumulator": read_activation_accumulator,
}

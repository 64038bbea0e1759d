"""Instructions without arithmetic: NoOp and DevicePrint."""

from __future__ import annotations

from neuronxsim.reference.step import Step


def no_op(step: Step) -> None:
    """Nothing: NoOp only orders other instructions, which program order already does."""


def device_print(step: Step) -> None:
    src = step.ins[0]
    lanes, _ = src.shape
    values = src.read().reshape([lanes] + src.free_shape)
    print(f"{step.inst.prefix}{values}", flush=True)


HANDLERS = {
    "NoOp": no_op,
    "DevicePrint": device_print,
}

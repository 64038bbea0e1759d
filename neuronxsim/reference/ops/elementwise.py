"""Elementwise instructions: each output element depends on the same-position input elements
(and per-partition scalars) only."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.alu import (BITWISE_OPS, INT_OPS, apply, apply_bits, apply_int, element_bits,
                                      on_bit_patterns)
from neuronxsim.reference.numbers import bits_of_number, convert, int32_of, is_integer, same_format
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step


def memset(step: Step) -> None:
    out = step.outs[0]
    if step.inst.mode.name == "Random":
        # Seeded by the instruction's position: reproducible, and distinct per instruction.
        out.write(np.random.default_rng(step.position).random(out.shape, dtype=np.float32))
    elif is_integer(out.dtype):
        # The constant itself, not its fp32 rounding (an int32 beyond 2^24, a uint32 mask):
        # section 2's integer conversion (half to even, NaN -> 0, saturating) of the exact number.
        c = float(step.inst.constant)
        out.write_integers(np.int64(0 if np.isnan(c) else np.clip(np.rint(c), -2.0**63, 2.0**63 - 1024)))
    else:
        out.write(np.float32(step.inst.constant))


def reciprocal(step: Step) -> None:
    out = step.outs[0]
    out.write(np.float32(1.0) / step.ins[0].read(*out.shape))


def tensor_copy(step: Step) -> None:
    src, dst = step.ins[0], step.outs[0]
    # NeuronCore-v2's Scalar Engine "performs copy by first casting the input tile to FP32"
    # (NKI 2.2x, nki.isa.tensor_copy): not bit-exact for int32.
    through_fp32 = step.machine.arch == "gen2" and step.inst.engine.name == "Activation"
    if src.is_immediate or through_fp32:
        dst.write(src.read(*dst.shape))
        return
    src.expect(*dst.shape)
    dst.write_raw(convert(src.read_raw(), dst.dtype))


def tensor_copy_dynamic(step: Step) -> None:
    src, dst = step.ins[0], step.outs[0]
    shift = int(int32_of(step.ins[1].first_element())) * step.inst.dynamic_step
    src.expect(*dst.shape)
    moves_source = step.inst.opcode_name == "TensorCopyDynamicSrc"
    raw = src.read_raw(shift if moves_source else 0)
    dst.write_raw(convert(raw, dst.dtype), offset_shift=0 if moves_source else shift)


def _scalar_ops(inst, x, scalar0, scalar1):
    """``v = op0(x, scalar0)``, then ``op1(v, scalar1)`` unless op1 is bypass (reverseN swaps)."""
    v = apply(inst.op0, x, scalar0, inst.reverse0)
    if inst.op1.name != "bypass":
        v = apply(inst.op1, v, scalar1, inst.reverse1)
    return v


def _bit_scalar_ops(inst, x, scalar0, scalar1, width):
    """_scalar_ops of the bit-vector operators, on uint32 bit patterns (op1 is then bit-vector
    or bypass: the rule alu.tensor-scalar-op-kinds); ``width``: the data element's bits."""
    v = apply_bits(inst.op0, x, scalar0, inst.reverse0, width)
    if inst.op1.name != "bypass":
        v = apply_bits(inst.op1, v, scalar1, inst.reverse1, width)
    return v


def tensor_scalar(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    if on_bit_patterns(inst.op0, step.ins[0], out):
        x = step.ins[0].read_bits(*out.shape)
        out.write_bits(_bit_scalar_ops(inst, x, bits_of_number(inst.const0), bits_of_number(inst.const1),
                                       element_bits(step.ins[0].dtype)))
        return
    x = step.ins[0].read(*out.shape)
    out.write(_scalar_ops(inst, x, np.float32(inst.const0), np.float32(inst.const1)))


def tensor_scalar_ptr(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    lanes, per_lane = out.shape
    if on_bit_patterns(inst.op0, step.ins[0], out):
        scalar0 = step.ins[1].read_bits(lanes, 1)
        scalar1 = step.ins[2].read_bits(lanes, 1) if len(step.ins) == 3 else bits_of_number(inst.const1)
        out.write_bits(_bit_scalar_ops(inst, step.ins[0].read_bits(lanes, per_lane), scalar0, scalar1,
                                       element_bits(step.ins[0].dtype)))
        return
    scalar0 = step.ins[1].read_pointer(lanes)
    scalar1 = step.ins[2].read_pointer(lanes) if len(step.ins) == 3 else np.float32(inst.const1)
    out.write(_scalar_ops(inst, step.ins[0].read(lanes, per_lane), scalar0, scalar1))


def tensor_tensor(step: Step) -> None:
    out = step.outs[0]
    words = all(not o.is_immediate and o.dtype in (np.int32, np.uint32) for o in (*step.ins, out))
    if step.inst.engine.name == "Pool" and step.inst.op.name in INT_OPS and words:
        # GpSimd's native integer arithmetic: exact for every 32-bit value
        for o in step.ins:
            o.expect(*out.shape)
        a, b = (o.read_raw().astype(np.int64) for o in step.ins)
        if step.inst.op.name in ("divide", "mod") and (b == 0).any():
            lane, element = (int(i) for i in np.argwhere(b == 0)[0])
            raise Refusal(f"GpSimd integer {step.inst.op.name} by zero (ins[1] lane {lane}, element "
                          f"{element}): what it gives is not documented")
        out.write_bits(apply_int(step.inst.op, a, b))
        return
    if on_bit_patterns(step.inst.op, step.ins[0], step.ins[1], out):
        a = step.ins[0]
        width = 0xFFFFFFFF if a.is_immediate else element_bits(a.dtype)
        out.write_bits(apply_bits(step.inst.op, a.read_bits(*out.shape), step.ins[1].read_bits(*out.shape),
                                  width=width))
        return
    out.write(apply(step.inst.op, step.ins[0].read(*out.shape), step.ins[1].read(*out.shape)))


def scalar_tensor_tensor(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    lanes, per_lane = out.shape
    if step.ins[0].is_immediate or step.ins[1].is_immediate:
        raise Refusal("the data operands of ScalarTensorTensor must be access patterns")
    for op in (inst.op0, inst.op1):
        if op.name in BITWISE_OPS:
            raise Refusal(f"bit-vector op {op.name} (ScalarTensorTensor takes arithmetic ops)")
    scalar0 = step.ins[2].read_pointer(lanes) if len(step.ins) == 3 else np.float32(inst.const0)
    t = apply(inst.op0, step.ins[0].read(lanes, per_lane), scalar0, inst.reverse0)
    out.write(apply(inst.op1, t, step.ins[1].read(lanes, per_lane), inst.reverse1))


def select(step: Step) -> None:
    out = step.outs[0]
    predicate, on_true, on_false = (operand.read(*out.shape) for operand in step.ins)
    out.write(np.where(predicate != 0, on_true, on_false))


def copy_predicated(step: Step) -> None:
    dst, src = step.outs[0], step.ins[0]
    predicate = step.ins[1].read(*dst.shape)
    if not src.is_immediate and same_format(src.dtype, dst.dtype):
        # A copy of one dtype moves bits, as TensorCopy does (an int32 beyond 2^24 is kept).
        src.expect(*dst.shape)
        dst.write_raw(src.read_raw(), where=predicate != 0)
        return
    dst.write(src.read(*dst.shape), where=predicate != 0)


HANDLERS = {
    "Memset": memset,
    "Reciprocal": reciprocal,
    "TensorCopy": tensor_copy,
    "TensorCopyDynamicSrc": tensor_copy_dynamic,
    "TensorCopyDynamicDst": tensor_copy_dynamic,
    "TensorScalar": tensor_scalar,
    "TensorScalarPtr": tensor_scalar_ptr,
    "TensorTensor": tensor_tensor,
    "ScalarTensorTensor": scalar_tensor_tensor,
    "Select": select,
    "CopyPredicated": copy_predicated,
}

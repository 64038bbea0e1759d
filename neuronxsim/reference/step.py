"""One instruction's execution context: its operands, bound to the machine.

Op functions see an instruction through a :class:`Step`: ``step.ins[k]`` and ``step.outs[k]`` are
:class:`Operand` objects that read as fp32 ``[P, F]`` arrays (lane by flattened free index) and
write fp32 values with the store conversion of the destination's dtype. The shape checks of
docs/isa-semantics.md section 1 (same lanes, same elements per lane, ``[P,1]`` pointers) live
here, so every op states them the same way and every refusal names its operand.
"""

from __future__ import annotations

import math

import numpy as np

from neuronxsim.reference.machine import Machine, Placement, check_operand_size
from neuronxsim.reference.numbers import bits_of, bits_of_number, from_bits, from_fp32, from_int64, numpy_dtype, to_fp32
from neuronxsim.reference.refusal import Refusal


class Operand:
    """One access pattern (or immediate) of an instruction."""

    def __init__(self, step: "Step", label: str, ap):
        self.step, self.label, self.ap = step, label, ap

    def refuse(self, message: str) -> Refusal:
        return Refusal(f"{self.label}: {message}")

    @property
    def is_immediate(self) -> bool:
        return self.ap.is_immediate

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.ap.dtype)

    @property
    def memory(self) -> str:
        self._require_pattern()
        return self.ap.location.type.name

    @property
    def shape(self) -> tuple[int, int]:
        """``(P, F)``: lanes and elements per lane."""
        self._require_pattern()
        lanes, per_lane = self.ap.partitions, math.prod(self.ap.free_shape)
        try:
            check_operand_size(lanes * per_lane)  # ops size their work by it
        except Refusal as e:
            raise self.refuse(str(e)) from None
        return lanes, per_lane

    @property
    def free_shape(self) -> list[int]:
        self._require_pattern()
        return list(self.ap.free_shape)

    def expect(self, lanes: int | None = None, per_lane: int | None = None) -> None:
        """Refuses unless the operand has ``lanes`` lanes and ``per_lane`` elements per lane."""
        if self.is_immediate:
            return
        p, f = self.shape
        if lanes is not None and p != lanes:
            raise self.refuse(f"has {p} partitions, expected {lanes}")
        if per_lane is not None and f != per_lane:
            raise self.refuse(f"has {f} elements per partition, expected {per_lane}")

    # ---- reads ----

    def read(self, lanes: int | None = None, per_lane: int | None = None) -> np.ndarray:
        """fp32 ``[P, F]``; an immediate is broadcast to ``[lanes, per_lane]``."""
        if self.is_immediate:
            if lanes is None or per_lane is None:
                raise self.refuse("must be an access pattern, not an immediate")
            return np.full((lanes, per_lane), self.immediate_value(), dtype=np.float32)
        self.expect(lanes, per_lane)
        return to_fp32(self._place().gather())

    def read_pointer(self, lanes: int) -> np.ndarray:
        """A ``[P,1]`` per-partition scalar operand, fp32 ``[lanes, 1]``."""
        return self.read(lanes, 1)

    def read_bits(self, lanes: int | None = None, per_lane: int | None = None) -> np.ndarray:
        """uint32 ``[P, F]`` bit patterns (numbers.bits_of) for the bit-vector operators; an
        immediate is broadcast to ``[lanes, per_lane]``."""
        if self.is_immediate:
            if lanes is None or per_lane is None:
                raise self.refuse("must be an access pattern, not an immediate")
            return np.full((lanes, per_lane), bits_of_number(self.ap.imm), dtype=np.uint32)
        self.expect(lanes, per_lane)
        return bits_of(self._place().gather())

    def read_raw(self, offset_shift: int = 0) -> np.ndarray:
        """The stored elements, ``[P, F]`` of the operand's dtype, unconverted."""
        return self._place(offset_shift).gather()

    def first_element(self) -> float:
        """The operand's first element as fp32 (the value of a register-like operand)."""
        if self.is_immediate:
            return self.immediate_value()
        return float(to_fp32(self._place().gather()).flat[0])

    def immediate_value(self) -> float:
        """An immediate's value: stored as its dtype, as an element of that dtype would be, then
        read as fp32 (docs/isa-semantics.md section 1)."""
        return float(to_fp32(from_fp32(np.array([self.ap.imm], dtype=np.float32), self.dtype))[0])

    # ---- writes ----

    def write(self, values: np.ndarray, where: np.ndarray | None = None) -> None:
        """Stores fp32 ``values`` (broadcast to ``[P, F]``) converted to the operand's dtype;
        ``where`` (bool ``[P, F]``) limits the store to some elements."""
        self.write_raw(from_fp32(self._broadcast(values), self.dtype), where)

    def write_bits(self, bits: np.ndarray) -> None:
        """Stores bit-vector results (uint32 patterns) into the operand's dtype."""
        self.write_raw(from_bits(self._broadcast(bits), self.dtype))

    def write_integers(self, values: np.ndarray) -> None:
        """Stores exact integers (Iota, indices) converted to the operand's dtype."""
        self.write_raw(from_int64(self._broadcast(values), self.dtype))

    def write_raw(self, raw: np.ndarray, where: np.ndarray | None = None, offset_shift: int = 0) -> None:
        placement = self._place(offset_shift)
        placement.scatter(np.broadcast_to(raw, placement.shape), where)

    # ---- addressing ----

    def absolute_partitions(self) -> np.ndarray:
        """The absolute partition of each lane (the activation accumulator registers' index)."""
        self._place()  # refuses immediates and DRAM
        return self.step.machine.absolute_partitions(self.ap)

    def _broadcast(self, values: np.ndarray) -> np.ndarray:
        return np.broadcast_to(values, self.shape)

    def _require_pattern(self) -> None:
        if self.is_immediate:
            raise self.refuse("must be an access pattern, not an immediate")

    def _place(self, offset_shift: int = 0) -> Placement:
        self._require_pattern()
        if self.step.on_chip_only and self.ap.location.type.name not in ("SB", "PSUM"):
            raise self.refuse(f"compute engines address SBUF and PSUM only; tensor "
                              f"'{self.ap.location.name}' is in {self.ap.location.type.name}")
        try:
            return self.step.machine.place(self.ap, offset_shift)
        except Refusal as e:
            raise self.refuse(str(e)) from None


class Step:
    """An instruction being executed: its node, its operands and the machine."""

    def __init__(self, machine: Machine, inst, position: tuple[int, int, int]):
        self.machine = machine
        self.inst = inst
        #: (function, block, instruction) indices: the instruction's position in the module
        self.position = position
        #: DMA queues reach every memory; the engines only SBUF and PSUM.
        self.on_chip_only = inst.node_class != "InstDMA"
        self.ins = [Operand(self, f"ins[{k}]", ap) for k, ap in enumerate(inst.ins)]
        self.outs = [Operand(self, f"outs[{k}]", ap) for k, ap in enumerate(inst.outs)]

"""A small builder for the BIR programs the reference-executor tests run.

    p = Program()
    x = p.input("x", [4, 8])                 # DRAM tensors
    y = p.output("y", [4, 8])
    t = p.sbuf("t", 4, 8)                    # SB / PSUM tiles: partitions x free shape
    p.load(t, x)                             # DMA the whole tensor in
    p.add("Activation", ins=[t], outs=[t], func="Exp")
    p.store(y, t)
    out = p.run(x=np.ones((4, 8), np.float32))["y"]

Operands are whole tensors (a MemoryLocation) or access patterns from ``p.ap``; enum fields
take their member names as strings.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import bir, reference


class Program:
    """A one-function, one-block BIR module under construction."""

    def __init__(self):
        self.module = bir.Module()
        self.function = self.module.addFunction()
        self.block = self.function.addBlock()
        self._next_addr = {"SB": 0, "PSUM": 0}

    # ---- tensors ----

    def input(self, name, shape, dtype="float32"):
        return self.dram(name, shape, dtype, "Input")

    def output(self, name, shape, dtype="float32"):
        return self.dram(name, shape, dtype, "Output")

    def dram(self, name, shape, dtype="float32", memory="DRAM"):
        return self.function.createDramTensor(name, bir.MemoryType.__members__[memory],
                                              bir.DType.__members__[dtype], list(shape))

    def sbuf(self, name, partitions, free, dtype="float32", base_partition=0, addr=None):
        return self._on_chip("SB", name, partitions, free, dtype, base_partition, addr)

    def psum(self, name, partitions, free, dtype="float32", base_partition=0, addr=None):
        return self._on_chip("PSUM", name, partitions, free, dtype, base_partition, addr)

    def _on_chip(self, memory, name, partitions, free, dtype, base_partition, addr):
        free = [free] if isinstance(free, int) else list(free)
        dt = bir.DType.__members__[dtype]
        size = math.prod(free) * bir.dtype_size(dt)
        if addr is None:  # bump allocation, 64-byte aligned
            addr = self._next_addr[memory]
            self._next_addr[memory] = addr + (size + 63) // 64 * 64
        return self.function.createOnChipTensor(name, bir.MemoryType.__members__[memory], dt,
                                                partitions, size, base_partition, addr,
                                                [partitions] + free)

    # ---- operands ----

    @staticmethod
    def ap(loc, pairs, offset=0, dtype=None):
        """An access pattern over ``loc``: ``[[step, num], ...]``, partition pair first."""
        ap = bir.Instruction.createAP(loc, offset, [tuple(p) for p in pairs], [], -1)
        ap.flavour = bir.AccessFlavour.Plain
        if dtype is not None:
            ap.dtype = bir.DType.__members__[dtype]
        return ap

    @staticmethod
    def whole(loc):
        """The whole tensor: for SB/PSUM its partitions by its free shape, for DRAM its shape."""
        shape = list(loc.shape)
        strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        return Program.ap(loc, list(zip(strides, shape)))

    @staticmethod
    def imm(value):
        return bir.AccessPattern.immediate(value)

    # ---- instructions ----

    def add(self, opcode, ins=(), outs=(), name="", **fields):
        inst = self.block.addInstruction(bir.InstructionType[opcode], name)
        inst.ins = [self._operand(x) for x in ins]
        inst.outs = [self._operand(x) for x in outs]
        for field, value in fields.items():
            current = getattr(inst, field)
            if isinstance(value, str) and hasattr(type(current), "__members__"):
                value = type(current).__members__[value]
            setattr(inst, field, value)
        return inst

    def load(self, dst, src, **fields):
        return self.add("DMA", ins=[src], outs=[dst], **fields)

    def store(self, dst, src, **fields):
        return self.add("DMA", ins=[src], outs=[dst], **fields)

    def _operand(self, x):
        return x if isinstance(x, bir.AccessPattern) else self.whole(x)

    def run(self, **inputs):
        return reference.execute(self.module, inputs)


BIR_DTYPE_NAMES = {
    np.dtype(np.float32): "float32", np.dtype(ml_dtypes.bfloat16): "bfloat16",
    np.dtype(np.float16): "float16", np.dtype(ml_dtypes.float8_e4m3): "float8e4",
    np.dtype(ml_dtypes.float8_e5m2): "float8e5", np.dtype(ml_dtypes.float8_e3m4): "float8e3",
    np.dtype(np.int8): "int8", np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64", np.dtype(np.uint8): "uint8", np.dtype(np.uint16): "uint16",
    np.dtype(np.uint32): "uint32", np.dtype(np.uint64): "uint64",
}


def run_instruction(opcode, ins, outs, **fields):
    """Runs one instruction on SB tiles and returns its outputs.

    Each array in ``ins`` (``[P, free...]``) is DMAed from DRAM into an SB tile of its shape and
    dtype; a Python number becomes an immediate. ``outs`` lists ``(shape, dtype)`` or
    ``(shape, dtype, "PSUM")`` of the output tiles, which are DMAed back and returned in order.
    """
    p = Program()
    operands, inputs = [], {}
    for k, x in enumerate(ins):
        if isinstance(x, (int, float)):
            operands.append(p.imm(x))
            continue
        dtype = BIR_DTYPE_NAMES[x.dtype]
        tile = p.sbuf(f"in{k}_tile", x.shape[0], list(x.shape[1:]), dtype)
        p.load(tile, p.input(f"in{k}", x.shape, dtype))
        operands.append(tile)
        inputs[f"in{k}"] = x
    tiles = []
    for k, (shape, dtype, *memory) in enumerate(outs):
        place = p.psum if memory == ["PSUM"] else p.sbuf
        tiles.append(place(f"out{k}_tile", shape[0], list(shape[1:]), dtype))
    p.add(opcode, ins=operands, outs=tiles, name="op", **fields)
    for k, ((shape, dtype, *_), tile) in enumerate(zip(outs, tiles)):
        p.store(p.output(f"out{k}", shape, dtype), tile)
    results = p.run(**inputs)
    return [results[f"out{k}"] for k in range(len(outs))]


@pytest.fixture
def run_op():
    """:func:`run_instruction`."""
    return run_instruction


@pytest.fixture
def bir_dtype_names():
    """NumPy dtype -> BIR dtype name."""
    return BIR_DTYPE_NAMES


@pytest.fixture
def program():
    return Program()


@pytest.fixture
def new_program():
    """The Program class, for tests that build several programs."""
    return Program

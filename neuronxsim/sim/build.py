"""A small helper for writing ISA-level BIR by hand (tests, benchmarks, examples): DRAM tensors,
SBUF/PSUM tensors placed by a bump allocator, access patterns and instructions with their fields.

>>> from neuronxsim.bir import DType, ActivationFunc
>>> b = ModuleBuilder()
>>> x = b.input("x", [128, 64], DType.float32)
>>> y = b.output("y", [128, 64], DType.float32)
>>> t = b.sbuf("t", 128, 64, DType.float32)
>>> _ = b.dma(b.tile(t), b.full(x))
>>> _ = b.add("Activation", [b.tile(t)], [b.tile(t)], func=ActivationFunc.Exp)
>>> _ = b.dma(b.full(y), b.tile(t))
"""

from __future__ import annotations

from typing import Optional, Sequence

from neuronxsim import bir
from neuronxsim.bir import DType, MemoryType, TensorKind
from neuronxsim.bir.target import config


class ModuleBuilder:
    """Builds a module with one function (``functions`` > 1: more NeuronCores, see :meth:`core`)."""

    def __init__(self, arch: str = "trn1", functions: int = 1):
        self.arch = arch
        self.config = config(arch)
        self.module = bir.Module()
        self.module.arch = self.config.bir_arch
        self._functions = [self.module.addFunction() for _ in range(functions)]
        self._blocks = [f.addBlock() for f in self._functions]
        self._tops = [{"SB": 0, "PSUM": 0} for _ in range(functions)]
        self._core = 0

    # ---- where new things go ----
    def core(self, i: int) -> "ModuleBuilder":
        """Makes functions[i] the target of the calls that follow; returns self."""
        self._core = i
        return self

    @property
    def function(self) -> bir.Function:
        return self._functions[self._core]

    @property
    def block(self) -> bir.BasicBlock:
        return self._blocks[self._core]

    # ---- tensors ----
    def input(self, name: str, shape: Sequence[int], dtype: DType) -> bir.MemoryLocation:
        return self.function.createDramTensor(name, MemoryType.Input, dtype, list(shape), TensorKind.ExternalInput)

    def output(self, name: str, shape: Sequence[int], dtype: DType) -> bir.MemoryLocation:
        return self.function.createDramTensor(name, MemoryType.Output, dtype, list(shape), TensorKind.ExternalOutput)

    def dram(self, name: str, shape: Sequence[int], dtype: DType) -> bir.MemoryLocation:
        return self.function.createDramTensor(name, MemoryType.DRAM, dtype, list(shape), TensorKind.Internal)

    def _onchip(self, kind: str, name: str, partitions: int, elems: int, dtype: DType, base_partition: int,
                addr: Optional[int], align: int) -> bir.MemoryLocation:
        nbytes = elems * bir.dtype_size(dtype)
        tops = self._tops[self._core]
        if addr is None:
            addr = -(-tops[kind] // align) * align
        tops[kind] = max(tops[kind], addr + nbytes)
        mtype = MemoryType.SB if kind == "SB" else MemoryType.PSUM
        return self.function.createOnChipTensor(name, mtype, dtype, partitions, nbytes, base_partition, addr)

    def sbuf(self, name: str, partitions: int, elems: int, dtype: DType, base_partition: int = 0,
             addr: Optional[int] = None) -> bir.MemoryLocation:
        """An SBUF tensor of ``partitions`` x ``elems``; placed after the last one unless ``addr``."""
        return self._onchip("SB", name, partitions, elems, dtype, base_partition, addr, 64)

    def psum(self, name: str, partitions: int, elems: int, dtype: DType = DType.float32, base_partition: int = 0,
             addr: Optional[int] = None) -> bir.MemoryLocation:
        """A PSUM tensor; by default at the next 2 KiB bank."""
        return self._onchip("PSUM", name, partitions, elems, dtype, base_partition, addr,
                            self.config.psum_bank_bytes)

    def reset_allocation(self) -> None:
        """Lets the next tensors reuse SBUF and PSUM from address 0 (tensors may alias)."""
        self._tops[self._core] = {"SB": 0, "PSUM": 0}

    # ---- access patterns ----
    @staticmethod
    def ap(loc: bir.MemoryLocation, offset: int, pattern: Sequence[Sequence[int]],
           dtype: Optional[DType] = None) -> bir.AccessPattern:
        """``offset`` elements in, one ``[step, num]`` pair per dim (the partition pair first)."""
        a = bir.Instruction.createAP(loc, offset, [bir.APPair(s, n) for s, n in pattern], [], -1)
        a.flavour = bir.AccessFlavour.Plain
        if dtype is not None:
            a.dtype = dtype
        return a

    def full(self, loc: bir.MemoryLocation) -> bir.AccessPattern:
        """The whole DRAM tensor, row-major, its first dim as the outer pair."""
        view = bir.View.ofShape(loc, loc.dtype, list(loc.shape) or [1])
        return self.ap(loc, 0, [(p.step, p.num) for p in view.dims])

    def tile(self, loc: bir.MemoryLocation, partitions: Optional[int] = None, elems: Optional[int] = None,
             start_partition: int = 0, col: int = 0, dtype: Optional[DType] = None,
             free: Optional[Sequence[Sequence[int]]] = None) -> bir.AccessPattern:
        """A [partitions, elems] tile of an on-chip tensor from (start_partition, col); ``free``
        replaces the single [1, elems] free pair."""
        dtype = dtype if dtype is not None else loc.dtype
        row = loc.bytes_per_partition // bir.dtype_size(dtype)
        partitions = loc.partitions - start_partition if partitions is None else partitions
        elems = row - col if elems is None else elems
        pairs = [(row, partitions)] + ([tuple(p) for p in free] if free is not None else [(1, elems)])
        return self.ap(loc, start_partition * row + col, pairs, dtype)

    # ---- instructions ----
    def add(self, opcode, ins: Sequence[bir.AccessPattern] = (), outs: Sequence[bir.AccessPattern] = (),
            engine: Optional[bir.Engine] = None, name: str = "", **fields) -> bir.Instruction:
        """Appends an instruction of ``opcode`` (name or InstructionType) with its operands and fields."""
        op = bir.InstructionType[opcode] if isinstance(opcode, str) else opcode
        inst = self.block.addInstruction(op, name)
        inst.ins = list(ins)
        inst.outs = list(outs)
        if engine is not None:
            inst.engine = engine
        for k, v in fields.items():
            getattr(inst, "set_" + k)(v)
        return inst

    def dma(self, dst, src, queue: int = 0, **fields) -> bir.Instruction:
        return self.add("DMA", [src], [dst], queue=queue, **fields)

    def matmul(self, out, stationary, moving, start: bool = True, stop: bool = True, **fields) -> bir.Instruction:
        return self.add("Matmult", [stationary, moving], [out], start_tensor_calc=start, stop_tensor_calc=stop,
                        **fields)

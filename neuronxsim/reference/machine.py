"""The reference machine's state and access-pattern addressing (docs/isa-semantics.md section 1).

State: SBUF and PSUM as ``[128, bytes]`` byte arrays shared by every on-chip location (so
locations that overlap alias, as on the hardware), each DRAM tensor as a flat byte buffer, and
the activation and vector engines' 128 fp32 accumulator registers each. New memory is filled with 0xFF bytes:
every float view of them (fp32, bf16, fp16, all three fp8) is NaN, so reads of memory nothing
wrote show up as NaN (integer views see -1 / the type's max).

Addressing: an access pattern (AP) enumerates element indices ``offset + sum_k i_k * step_k``
over its ``[step, num]`` pairs, outermost first, partition pair first. In SB/PSUM element ``e``
sits in partition ``base_partition + e // row``, byte ``addr + (e % row) * size`` of it
(``row = bytes_per_partition // size``); in DRAM at byte ``e * size`` of the tensor. Reads and
writes gather/scatter the element's bytes, so any dtype view at any byte address works.
Operands come back as ``[P, F]`` arrays: lane (partition pair index) by flattened free index.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from neuronxsim.reference.numbers import numpy_dtype
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.xorwow import initial_states

NUM_PARTITIONS = 128
PSUM_BYTES_PER_PARTITION = 16 * 1024
#: SBUF bytes per partition by ``Module.arch`` (NeuronCore-v2, v3, v4); an unknown arch gets the
#: largest, so the reference never refuses what some generation could hold.
SBUF_BYTES_PER_PARTITION = {"gen2": 192 * 1024, "gen3": 224 * 1024, "gen4": 256 * 1024}
#: The reference materialises index arrays per operand: refuse operands (and DRAM tensors) too
#: large to do that with, instead of exhausting the host's memory.
MAX_OPERAND_ELEMENTS = 1 << 27
MAX_DRAM_TENSOR_BYTES = 1 << 32
UNWRITTEN = 0xFF

_ON_CHIP = ("SB", "PSUM")
_DRAM = ("Input", "Output", "DRAM")


class Placement:
    """Where each element of one access pattern lives: ``buffer[rows, byte:byte+size]`` for SB/PSUM
    (``rows`` is None for DRAM, whose ``buffer`` is flat), ``[P, F]`` arrays."""

    def __init__(self, buffer: np.ndarray, rows, first_byte: np.ndarray, dtype: np.dtype):
        self.buffer, self.rows, self.first_byte, self.dtype = buffer, rows, first_byte, dtype

    @property
    def shape(self) -> tuple[int, int]:
        return self.first_byte.shape

    def _byte_index(self):
        byte = self.first_byte[..., None] + np.arange(self.dtype.itemsize)
        return byte if self.rows is None else (self.rows[..., None], byte)

    def gather(self) -> np.ndarray:
        """The elements, ``[P, F]`` of ``dtype`` (their bytes reinterpreted, nothing converted)."""
        raw = np.ascontiguousarray(self.buffer[self._byte_index()])
        return raw.view(self.dtype).reshape(self.shape)

    def scatter(self, values: np.ndarray, where: np.ndarray | None = None) -> None:
        """Stores ``values`` (``[P, F]`` of ``dtype``) byte for byte; ``where`` selects elements.

        Two elements of one pattern at the same address (a step of 0) end with the value the
        enumeration order puts last."""
        raw = np.ascontiguousarray(values, dtype=self.dtype).view(np.uint8)
        raw = raw.reshape(*self.shape, self.dtype.itemsize)
        index = self._byte_index()
        if where is not None:
            index = tuple(i[where] for i in index) if isinstance(index, tuple) else index[where]
            raw = raw[where]
        self.buffer[index] = raw


class Machine:
    """Memories and registers of one NeuronCore, for the locations one function uses."""

    def __init__(self, locations: Mapping[str, object], arch: str):
        self.arch = arch
        self.locations = dict(locations)
        self.dram: dict[str, np.ndarray] = {}
        self.on_chip: dict[str, np.ndarray] = {}
        # The Activation engine's accumulation registers, and which ones an instruction has set
        self.activation_accumulators = np.zeros(NUM_PARTITIONS, dtype=np.float32)
        self.activation_accumulators_set = np.zeros(NUM_PARTITIONS, dtype=bool)
        # The Vector Engine's accumulation registers, which ones an instruction has set, and the
        # last instruction that unset them all, one that may have changed them (its description)
        self.vector_accumulators = np.zeros(NUM_PARTITIONS, dtype=np.float32)
        self.vector_accumulators_set = np.zeros(NUM_PARTITIONS, dtype=bool)
        self.vector_accumulators_changed_by: str | None = None
        # The Vector (0) and GpSimd (1) engines' random generators, six uint32 words per partition
        self.rng_states = [initial_states(g, NUM_PARTITIONS) for g in (0, 1)]
        capacity = {"SB": SBUF_BYTES_PER_PARTITION.get(arch, max(SBUF_BYTES_PER_PARTITION.values())),
                    "PSUM": PSUM_BYTES_PER_PARTITION}
        extent = {"SB": 0, "PSUM": 0}
        for name, loc in self.locations.items():
            kind = loc.type.name
            if kind in _ON_CHIP:
                end = loc.addr + loc.bytes_per_partition
                if end > capacity[kind]:
                    raise Refusal(f"tensor '{name}' ends at byte {end} of a {kind} partition, beyond "
                                  f"the {capacity[kind]} bytes of arch {arch!r}")
                extent[kind] = max(extent[kind], end)
            elif kind in _DRAM:
                size = loc.partitions * loc.bytes_per_partition
                if size > MAX_DRAM_TENSOR_BYTES:
                    raise Refusal(f"DRAM tensor '{name}' of {size} bytes exceeds the reference "
                                  f"executor's limit of {MAX_DRAM_TENSOR_BYTES} bytes")
                self.dram[name] = np.full(size, UNWRITTEN, dtype=np.uint8)
        # Sized to the largest extent used, not the hardware's, to keep small programs cheap.
        for kind in _ON_CHIP:
            self.on_chip[kind] = np.full((NUM_PARTITIONS, extent[kind]), UNWRITTEN, dtype=np.uint8)

    # ---- the Vector Engine's accumulation registers (docs/isa-semantics.md §5) ----

    def vector_registers(self, partitions: np.ndarray) -> np.ndarray:
        """The registers of ``partitions`` (a copy); refuses an unset one."""
        unset = ~self.vector_accumulators_set[partitions]
        if unset.any():
            since = (f" since {self.vector_accumulators_changed_by} (which may have changed it)"
                     if self.vector_accumulators_changed_by else "")
            raise Refusal(f"reads the vector accumulation register of partition "
                          f"{int(partitions[np.argmax(unset)])}, which no instruction has set{since}")
        return self.vector_accumulators[partitions].copy()

    def set_vector_registers(self, partitions: np.ndarray, values: np.ndarray) -> None:
        self.vector_accumulators[partitions] = values
        self.vector_accumulators_set[partitions] = True

    def vector_registers_may_change(self, by: str) -> None:
        """Another Vector Engine instruction (``by``) may have changed every register."""
        self.vector_accumulators_set[:] = False
        self.vector_accumulators_changed_by = by

    # ---- DRAM tensors as arrays ----

    def tensor_view(self, name: str) -> np.ndarray:
        """The DRAM tensor ``name`` as an array of its shape and dtype (a view of its bytes)."""
        loc = self.locations[name]
        dtype = numpy_dtype(loc.dtype)
        shape = tuple(loc.shape)
        needed = math.prod(shape) * dtype.itemsize
        buffer = self.dram[name]
        if needed > buffer.size:
            raise Refusal(f"tensor '{name}' of shape {list(shape)} {loc.dtype.name} needs {needed} "
                          f"bytes but its memory location holds {buffer.size}")
        return buffer[:needed].view(dtype).reshape(shape)

    # ---- access patterns ----

    def place(self, ap, offset_shift: int = 0) -> Placement:
        """The placement of every element of ``ap``, its start moved by ``offset_shift`` elements
        (a dynamic offset, checked to stay inside the location)."""
        loc = ap.location
        kind = loc.type.name
        dtype = numpy_dtype(ap.dtype)
        pairs = [(p.step, p.num) for p in ap.pattern]
        check_operand_size(math.prod(num for _, num in pairs))
        offset = ap.offset + offset_shift
        if offset_shift:
            _check_moved_pattern(loc, kind, pairs, offset, dtype)
        element = np.full((1,) * len(pairs), offset, dtype=np.int64)
        for axis, (step, num) in enumerate(pairs):
            shape = [1] * len(pairs)
            shape[axis] = num
            element = element + (np.arange(num, dtype=np.int64) * step).reshape(shape)
        element = element.reshape(pairs[0][1], -1)
        if kind in _DRAM:
            return Placement(self.dram[loc.name], None, element * dtype.itemsize, dtype)
        if kind in _ON_CHIP:
            row = loc.bytes_per_partition // dtype.itemsize
            rows = loc.base_partition + element // row
            return Placement(self.on_chip[kind], rows, loc.addr + (element % row) * dtype.itemsize, dtype)
        raise Refusal(f"memory type {kind} of tensor '{loc.name}' is not modelled")

    def absolute_partitions(self, ap) -> np.ndarray:
        """The absolute SB/PSUM partition of each lane of ``ap``."""
        row = ap.location.bytes_per_partition // numpy_dtype(ap.dtype).itemsize
        first = ap.location.base_partition + ap.offset // row
        return first + np.arange(ap.pattern[0].num)


def check_operand_size(elements: int) -> None:
    if elements > MAX_OPERAND_ELEMENTS:
        raise Refusal(f"an access pattern of {elements} elements exceeds the reference executor's "
                      f"limit of {MAX_OPERAND_ELEMENTS}")


def _check_moved_pattern(loc, kind: str, pairs, offset: int, dtype: np.dtype) -> None:
    """A pattern moved at run time must stay inside its location, as the verifier checks the
    static ones: inside the tensor (DRAM), or inside its partitions and one row (SB/PSUM)."""
    low = sum(min(0, step * (num - 1)) for step, num in pairs[1:])
    high = sum(max(0, step * (num - 1)) for step, num in pairs[1:])
    if kind in _ON_CHIP:
        row = loc.bytes_per_partition // dtype.itemsize
        first_partition, column = divmod(offset, row)
        if (offset < 0 or first_partition + pairs[0][1] > loc.partitions
                or column + low < 0 or column + high >= row):
            raise Refusal(f"the moved access pattern (offset {offset}) leaves tensor '{loc.name}' "
                          f"({loc.partitions} partitions of {row} elements)")
        return
    partition_span = pairs[0][0] * (pairs[0][1] - 1)
    low += min(0, partition_span)
    high += max(0, partition_span)
    capacity = loc.partitions * loc.bytes_per_partition // dtype.itemsize
    if offset + low < 0 or offset + high >= capacity:
        raise Refusal(f"the moved access pattern reaches elements [{offset + low}, {offset + high}] "
                      f"outside tensor '{loc.name}' of {capacity} elements")

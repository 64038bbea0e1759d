"""Recording a trace: what ``nl`` / ``nisa`` calls append to the record, and the checks made
as they do.

Each call appends :class:`~neuronxsim.nki.record.Op` records (one ISA instruction each) whose
operands are :class:`~neuronxsim.nki.record.Access` patterns over
:class:`~neuronxsim.nki.tensor.Storage` objects, to the :class:`~neuronxsim.nki.record.CoreRecord`
of the NeuronCore being traced. Addresses are not known yet: after the kernel returns, the
passes of :mod:`.passes` turn the record into BIR.

Reads and writes are checked as they are recorded: a tile read before anything wrote it, a write
to a kernel input, an index outside its tensor are errors at the kernel line. What the trace
knows about a storage's contents is its :class:`StorageState`. Ops are never edited once
recorded; what the trace learns about them later is appended to the record as a fact:

* ``nl.zeros`` records a Memset marked ``zero_fill``; the fact "its zeros are needed" is added
  only if something reads them. A matmul accumulating into zeroed PSUM instead starts its
  accumulation group (on the NeuronCore, accumulating onto memset PSUM is undefined).
* ``dst[...] = expr`` adds the fact that the instruction that computed ``expr`` writes ``dst``
  directly (no copy). The temporary then aliases ``dst``; should it be read after ``dst``
  changed (or be written), the fact "copy ``dst -> temporary`` right after that instruction" is
  added. (When nothing but the statement can reach the temporary, the instruction, the last
  recorded, is made to write ``dst`` itself instead, and the temporary dropped: see
  ``record.py``'s ``redirects``.)
* ``acc += matmul`` adds the fact that the matmul joins the accumulation group open in ``acc``.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import legality, target
from neuronxsim.starfish.lib import _core

from .dtypes import BIR_DTYPES, name as dtype_name
from .errors import NKIError, SourceLocation, caller_location
from .indexing import LoopIndex
from .record import Access, CoreRecord, Loop, LoopIteration, Op, new_access, new_op
from .tensor import (HBM, INPUT, NUM_PARTITIONS, PSUM, SBUF, SHARED_HBM, Layout, Storage,
                     Tensor, new_storage, new_view, storage_layout)


Engine = bir.Engine


class IT:
    """The opcodes, ``bir.InstructionType``'s members, as plain class attributes: in Python 3.11
    reading a member of an ``enum`` class costs several times a plain attribute, and the tracer
    names an opcode or two on every instruction it records."""


for _opcode in bir.InstructionType:
    setattr(IT, _opcode.name, _opcode)

#: Per-generation capacities: SBUF bytes per partition, and the BIR arch name (from the target
#: description, neuronxsim.bir.target).
ARCHS = {arch: {"sbuf_bytes": target.config(arch).sbuf_bytes_per_partition, "bir_arch": target.bir_arch(arch)}
         for arch in target.ARCHS}
PSUM_BYTES = target.uniform("psum_bytes_per_partition")
MAX_FREE_PAIRS = target.uniform("ap_max_free_dims")  # access-pattern dimensions per partition an engine can walk
MAX_FREE_SBUF = target.uniform("dve_act_max_free_elements_sbuf")  # elements per partition a DVE/ACT instruction can walk in SBUF
MAX_FREE_PSUM = target.uniform("dve_act_max_free_elements_psum")  # ... and in PSUM
DMA_QUEUES = target.uniform("dma_queues")
#: How many instructions a trace may record (all cores together) before it is refused, unless
#: told otherwise (``max_instructions``): a trace holds about 1 KB per instruction and records
#: a few hundred thousand a second, so a runaway loop stops within seconds, while kernels we know
#: record tens of thousands at most. The same default caps one IT54 kernel node's expansion
#: (walrus::kDefaultMaxInstructions, cpp/walrus/BIRKernelWrapper.h, its home).
DEFAULT_MAX_INSTRUCTIONS = _core.walrus.DEFAULT_MAX_INSTRUCTIONS
#: The environment variable that overrides that default (``--max-instructions`` of the
#: ``neuronxsim`` commands sets it, so that the scripts ``neuronxsim exec`` runs see it too).
MAX_INSTRUCTIONS_ENV = "NEURONXSIM_MAX_INSTRUCTIONS"


def instruction_cap(max_instructions: int | None = None) -> int:
    """The cap a trace uses: ``max_instructions`` if given, else ``$NEURONXSIM_MAX_INSTRUCTIONS``
    if set, else :data:`DEFAULT_MAX_INSTRUCTIONS`; a positive integer (NKIError otherwise)."""
    if max_instructions is None:
        text = os.environ.get(MAX_INSTRUCTIONS_ENV)
        if text is None:
            return DEFAULT_MAX_INSTRUCTIONS
        try:
            max_instructions = int(text)
        except ValueError:
            max_instructions = text
        if type(max_instructions) is not int or max_instructions < 1:
            raise NKIError(f"{MAX_INSTRUCTIONS_ENV}={text!r}: the cap on traced instructions is "
                           "a positive integer")
    if type(max_instructions) is not int or max_instructions < 1:
        raise NKIError(f"max_instructions must be a positive integer, not {max_instructions!r}")
    return max_instructions


class StorageState:
    """What the trace knows about a storage's contents while recording (made by
    :func:`new_state`): writes seen; partitions written from 0 (and written ranges beyond them,
    see ``_note_written_partitions``); the ``zero_fill`` Memset of ``nl.zeros`` until something
    needs or overwrites its zeros; whether ``nl.zeros`` made it and no non-matmul instruction
    wrote it since; the ``(dst view, its write count, producer op)`` of a redirected temporary
    (see Tracer.redirect); the Access of the full view of a [P, F] or [P] tile, made on first
    use and shared by the instructions using it; and, once a matmul is placed in it, its
    :class:`MatmulGroups`; and whether it is the result of an instruction its mask skipped
    (``masked_out``: assignments of it change nothing)."""

    __slots__ = ("write_count", "written_partitions", "later_partitions", "pending_zero",
                 "zero_init", "forward", "full_access", "groups", "masked_out")


_new_slotted = _core.nki.new_slotted
# (freed in one pass in C, as storages are: cpp/python/trace_slotted.cpp, use_slots_dealloc; a
# trace frees a state per instruction result when it ends, and two or three views (Tensor) per
# instruction, which the tracer's C paths make with new_slotted, see configure_tracer_methods)
_core.nki.use_slots_dealloc(StorageState)
_core.nki.use_slots_dealloc(Tensor)
if Storage.__slots__ != ("sid", "kind", "dtype", "shape", "layout", "on_chip", "strides", "name",
                         "hint", "created_at", "explicit_name", "placement", "state"):
    raise ImportError("Tracer.new_result makes storages with new_slotted: update it for the "
                      "slots of Storage")

#: ``new_state()``: the :class:`StorageState` of a storage nothing wrote (``write_count``,
#: ``written_partitions`` 0, ``zero_init``, ``masked_out`` False, the rest None). In C
#: (``cpp/python/trace_slotted.cpp``): a trace makes one per instruction result.
new_state = functools.partial(_new_slotted, StorageState, 0, 0, None, None, False, None,
                              None, None, False)


class MatmulGroups:
    """The matmul accumulation groups of a PSUM storage: ``open``, region (``Access.key()``) ->
    the last matmul of the group open there; ``zero_started``, the regions whose first matmul
    replaced the pending zeros of ``nl.zeros`` (a dict, region -> None, in the order they
    started: place_matmul's C path looks regions up by a hash it keeps, which a set has no entry
    point for), and ``zero_covered``, their element count;
    ``unwritten``: nothing had written the storage when the first matmul was placed in it
    (``acc += matmul`` into a fresh ``nl.ndarray``: each region's first matmul starts a group,
    as into zeros)."""

    __slots__ = ("open", "zero_started", "zero_covered", "unwritten")

    def __init__(self, unwritten: bool):
        self.open: dict = {}
        self.zero_started: dict = {}
        self.zero_covered = 0
        self.unwritten = unwritten


# (freed in one pass in C, as storage states are: a matmul kernel frees one per PSUM tile)
_core.nki.use_slots_dealloc(MatmulGroups)


class CoreTrace:
    """One NeuronCore's part of the trace: its :class:`CoreRecord` and what recording keeps per
    core (the next DMA queue, tiles built once per core, the current first output of each
    redirected op)."""

    # (slots: the C fast paths read them per traced instruction, see trace_slotted.h slotAttr)
    __slots__ = ("index", "record", "dma_queue", "cache", "redirected", "double_rows")

    def __init__(self, index: int):
        self.index = index
        self.record = CoreRecord(index)
        self.dma_queue = 0  # the next transfer's (queues round-robin: see instructions.dma)
        self.cache: dict = {}  # tiles built once per core (PE-transpose identities)
        # op index -> its first output now, None (or past the end) if no redirect moved it (a list:
        # an op index is its position in the record; read and written in C too, see
        # trace_record.h redirectedOutput)
        self.redirected: list[Access | None] = []
        # op index of the second matmul of a double-row pair -> the first (see
        # instructions.matmul_double_row)
        self.double_rows: dict[int, Op] = {}

    def first_output(self, op: Op) -> Access:
        """``op``'s first output as redirects left it."""
        index = op.index
        redirected = self.redirected
        acc = redirected[index] if 0 <= index < len(redirected) else None
        return op.outs[0] if acc is None else acc

    def set_redirected(self, index: int, acc: Access):
        """Op ``index``'s first output is ``acc`` now (see ``redirected``)."""
        if index < 0:
            raise ValueError("a redirected op's index must be its position in the record")
        redirected = self.redirected
        if index >= len(redirected):
            redirected.extend([None] * (index + 1 - len(redirected)))
        redirected[index] = acc

    def unique_name(self, base: str) -> str:
        return self.record.unique_name(base)


def _no_tracer():
    raise NKIError("nki.language and nki.isa functions run only inside a kernel being traced "
                   "(call the kernel through nki.jit, nki.simulate_kernel or nki.trace)",
                   caller_location())


_core.nki.set_no_tracer(_no_tracer)
#: ``current()``: the Tracer recording a kernel, else the NKIError of
#: ``_no_tracer``. In C (``cpp/python/trace_current.cpp``): nearly every nl / nisa call asks.
current = _core.nki.current
#: ``peek()``: the Tracer recording a kernel, else None. The C state behind ``current`` is the
#: one home of the current tracer.
peek = _core.nki.peek


def active() -> bool:
    return peek() is not None


class Tracer:
    """Records one kernel launch: every SPMD instance on every NeuronCore of the grid.
    ``max_instructions``: the most instructions the trace may record (all cores together)."""

    # (slots: the C fast paths read them per traced instruction, see trace_slotted.h slotAttr)
    __slots__ = ("kernel_name", "arch", "sbuf_bytes", "cores", "core", "ops", "storages",
                 "program_ids", "grid", "instance", "shared_index", "constant_index", "loop",
                 "force_auto_alloc", "unassigned_reductions", "max_instructions",
                 "recordable", "tile_layouts", "site_allocations", "site_counts",
                 "nki06_no_reorder")  # (last: NKI 0.6's open no_reorder blocks, nki06.language)

    def __init__(self, arch: str, num_cores: int, max_instructions: int | None = None,
                 kernel_name: str = "kernel"):
        if arch not in ARCHS:
            raise NKIError(f"unknown arch {arch!r}; expected one of {', '.join(ARCHS)}")
        max_instructions = instruction_cap(max_instructions)
        self.kernel_name = kernel_name  # (for the cap's refusal)
        self.arch = arch
        self.sbuf_bytes = ARCHS[arch]["sbuf_bytes"]
        self.cores = [CoreTrace(i) for i in range(num_cores)]
        self.core = self.cores[0]
        self.ops = self.core.record.ops  # (the current core's, read on every instruction)
        self.storages = self.core.record.storages  # (the current core's, see new_result)
        self.program_ids: tuple = (0,)
        self.grid: tuple = (1,)
        self.instance = 0  # index of the SPMD instance being traced on this core
        self.shared_index = 0  # shared_hbm tensors created so far by this instance
        self.constant_index = 0  # shared constants created so far by this instance
        self.loop: LoopIteration | None = None  # the loop iteration being traced
        self.force_auto_alloc = False  # (nki.compiler.force_auto_alloc: direct allocations off)
        self.unassigned_reductions: list = []  # nl.loop_reduce values no assignment took yet
        self.max_instructions = max_instructions
        self.recordable = max_instructions  # instructions the cap still allows
        # The layout of [P, F] and [P] tiles by shape (for them it depends on the shape alone),
        # shared by the many tiles of a trace.
        self.tile_layouts: dict = {}
        # Direct allocations by the kernel line (and loop body) that made them, see
        # direct_allocation.
        self.site_allocations: dict = {}
        self.site_counts: dict = {}

    def __enter__(self):
        if peek() is not None:
            raise NKIError("a kernel is already being traced (nested traces are not supported)")
        _core.nki.set_current(self)
        return self

    def __exit__(self, *exc):
        _core.nki.set_current(None)

    def set_core(self, index: int):
        self.core = self.cores[index]
        self.ops = self.core.record.ops
        self.storages = self.core.record.storages

    def begin_instance(self, program_ids: tuple, instance: int):
        self.program_ids = program_ids
        self.instance = instance
        self.shared_index = 0
        self.constant_index = 0
        self.site_allocations.clear()
        self.site_counts.clear()

    def direct_allocation(self, allocation, loc):
        """The direct allocation a tensor made at ``loc`` gets: ``allocation``, except in a later
        iteration of an ``affine_range`` / ``sequential_range`` loop, where it is the one the
        same tensor got in the loop's first iteration. NKI traces such a loop's body once, so an
        address computed in it (``base_addr=cur_addr`` with ``cur_addr`` growing in the body)
        is computed once; the trace, which runs the body per iteration, keeps the first."""
        it = self.loop
        if it is None:
            return allocation
        body, iterations = [], []
        while it is not None:
            loop = it.loop
            body.append((loop.loc, it.iteration if loop.kind == "static" else None))
            iterations.append(it.iteration)
            it = loop.outer
        site = (loc, tuple(body))
        counted = (site, tuple(iterations))
        n = self.site_counts.get(counted, 0)  # (the n-th tensor this line makes per iteration)
        self.site_counts[counted] = n + 1
        return self.site_allocations.setdefault(site + (n,), allocation)

    # ---- loops ----
    # (iterate: in C, set below)

    # ---- storages ----
    def unique_name(self, base: str) -> str:
        return self.core.record.unique_name(base)

    def new_storage(self, kind: str, dtype: np.dtype, shape: tuple, name: str,
                    loc: SourceLocation | None, explicit_name: bool = False,
                    placement: tuple | None = None) -> Storage:
        """A new storage; on chip, a tile (partition dimension first). ``placement``: the
        (start partition, byte address) a direct allocation fixed (None: the allocation pass
        places it)."""
        record = self.core.record
        unnamed_shared = kind == SHARED_HBM and not explicit_name
        if unnamed_shared and self.instance > 0:
            # Every SPMD instance creates the kernel's shared outputs; they are one tensor.
            outputs = record.shared_outputs
            if self.shared_index < len(outputs):
                st = outputs[self.shared_index]
                self.shared_index += 1
                if st.shape != shape or st.dtype != dtype:
                    raise NKIError(
                        f"program {self.program_ids} creates shared_hbm tensor #{self.shared_index}"
                        f" as {list(shape)} {dtype}, but program 0 created it as "
                        f"{list(st.shape)} {st.dtype}: every SPMD instance must create the same "
                        "shared tensors", loc)
                return st
        if len(shape) <= 2 and (kind == SBUF or kind == PSUM):
            layout = self.tile_layouts.get(shape) or self._tile_layout(kind, shape)
        else:
            layout = storage_layout(kind, shape)
        storages = record.storages
        given = self.unique_name(name) if explicit_name else None
        if kind == HBM and len(self.cores) > 1:
            # Private HBM is "only visible to each individual kernel instance": the cores'
            # functions share DRAM tensors by name, so each core's gets a name of its own.
            given = record.unique_name(f"{given or name}.nc{self.core.index}")
        st = new_storage(len(storages), kind, dtype, shape, layout, name, loc, new_state(),
                         given, explicit_name, placement)
        storages.append(st)
        if unnamed_shared:
            record.shared_outputs.append(st)
            self.shared_index += 1
        return st

    def named_shared_storage(self, dtype: np.dtype, shape: tuple, name: str,
                             loc: SourceLocation | None) -> Storage:
        """The shared_hbm tensor ``name`` of the 2.2x dialect: the first ``nl.ndarray(...,
        buffer=nl.shared_hbm, name=name)`` of the core creates it, every later one (in any SPMD
        instance, loop iteration or branch) is the same memory ("shared_hbm tensors will point to
        the same underlying memory as long as they have the same name", nki.language.ndarray,
        Neuron 2.28). Each core creates it under the same name, which makes it one DRAM tensor of
        the module for all of them."""
        record = self.core.record
        st = record.shared_names.get(name)
        if st is None:
            st = self.new_storage(SHARED_HBM, dtype, shape, name, loc, explicit_name=True)
            record.shared_names[name] = st
        elif st.shape != shape or st.dtype != dtype:
            raise NKIError(
                f"nl.ndarray: shared_hbm tensor {name!r} is {list(shape)} {dtype_name(dtype)} "
                f"here, but {st.describe()} is {list(st.shape)} {dtype_name(st.dtype)}: "
                "shared_hbm tensors of one name are one tensor, of one shape and dtype", loc)
        return st

    def constant_storage(self, values: np.ndarray, loc) -> Storage:
        """An HBM tensor holding ``values`` (``nl.shared_constant``): an ``Input`` of the module
        bound to them when the kernel runs (every SPMD instance of a core shares the ones it
        creates in the same order)."""
        record = self.core.record
        index = self.constant_index
        self.constant_index += 1
        if index < len(record.constant_storages):
            st = record.constant_storages[index]
            if not np.array_equal(record.constants[st.name], values) or \
                    record.constants[st.name].dtype != values.dtype:
                raise NKIError(f"program {self.program_ids} creates shared constant #{index + 1} "
                               "with other values than program 0 did: every SPMD instance must "
                               "create the same constants", loc)
            return st
        st = new_storage(len(record.storages), INPUT, values.dtype, values.shape,
                         storage_layout(INPUT, values.shape), "shared_constant", loc, new_state(),
                         self.unique_name("shared_constant"))
        st.state.write_count = 1
        record.storages.append(st)
        record.constant_storages.append(st)
        record.constants[st.name] = values
        return st

    def input_storage(self, name: str, dtype: np.dtype, shape: tuple) -> Storage:
        record = self.core.record
        st = record.inputs.get(name)
        if st is None:
            st = new_storage(len(record.storages), INPUT, dtype, shape,
                             storage_layout(INPUT, shape), name, None, new_state(),
                             self.unique_name(name))
            record.storages.append(st)
            record.inputs[name] = st
        return st

    def _tile_layout(self, kind: str, shape: tuple) -> Layout:
        """The layout of a [P, F] or [P] tile of ``shape``, the first time (see tile_layouts)."""
        layout = self.tile_layouts[shape] = storage_layout(kind, shape)
        return layout

    # ---- operands ----
    def access(self, view: Tensor, loc, merge: bool = True) -> Access:
        """The access pattern of ``view``, checking that an on-chip view is a tile: its first
        dimension walks partitions and the others stay inside one partition."""
        st = view.storage
        shape = view.shape
        strides = view.strides
        if st.on_chip:
            if len(shape) == 2:  # the common case: [P, F] with a forward step inside the row
                p, n = shape
                row = st.layout.row
                s = strides[1]
                if p == 1 or strides[0] == row:
                    if n == 1:
                        return new_access(st, view.offset, [(row, p), (1, 1)])
                    if 0 < s < row and view.offset % row + s * (n - 1) < row:
                        return new_access(st, view.offset, [(row, p), (s, n)])
        elif len(shape) == 2:
            return new_access(st, view.offset, [(strides[0], shape[0]),
                                                (strides[1], shape[1]) if shape[1] > 1 else (1, 1)])
        else:
            pairs = [(strides[0], shape[0])] if shape else [(1, 1)]
            pairs += [(s, n) for s, n in zip(strides[1:], shape[1:])]
            return new_access(st, view.offset, _merge_free(pairs) if merge else pairs)
        if not shape:
            raise NKIError(f"a scalar view of tile {st.describe()} has no partition dimension; "
                           "index partitions with a range (t[i:i+1, ...])", loc)
        row = st.layout.row
        if shape[0] > 1 and strides[0] != row:
            partitions = round(strides[0] / row)  # (per step of the first index)
            if partitions and strides[0] % row:
                raise NKIError(f"this view of {st.kind} tile {st.describe()} moves "
                               f"{strides[0] - partitions * row:+d} element(s) along the free "
                               "dimension per partition: a free index that depends on the "
                               "partition index (as t[i_p, i_p + i_f]); an engine or DMA reads "
                               "and writes the same free positions of every partition", loc)
            if strides[0] and strides[0] % row == 0:
                raise NKIError(f"this view of {st.kind} tile {st.describe()} steps through its "
                               f"partitions {strides[0] // row} at a time; engines and DMAs "
                               "address a tile's partitions one after another, in increasing "
                               "order (partition step 1)", loc)
            raise NKIError(f"the first dimension of a view of {st.kind} tile {st.describe()} "
                           "must be its partition dimension", loc)
        col = view.offset % row
        lo = hi = col
        pairs = [(row, shape[0])]
        for s, n in zip(strides[1:], shape[1:]):
            if n == 1:
                continue
            if abs(s) >= row:
                raise NKIError(f"a free dimension of this view of tile {st.describe()} steps "
                               "across partitions; the partition dimension must come first", loc)
            span = s * (n - 1)
            if span < 0:
                lo += span
            else:
                hi += span
            pairs.append((s, n))
        if lo < 0 or hi >= row:
            raise NKIError(f"view of tile {st.describe()} reaches outside its {row} elements per "
                           "partition", loc)
        if len(pairs) == 1:
            pairs.append((1, 1))
        return new_access(st, view.offset, _merge_free(pairs) if merge else pairs)

    def read(self, view: Tensor, loc, merge: bool = True) -> Access:
        st = view.storage
        s = st.state
        if s.forward is not None:
            view = self._resolve_forward(view)
            st = view.storage
            s = st.state
        if s.pending_zero is not None:
            self.need_zeros(s)
        if s.write_count == 0 and st.kind != INPUT and st.placement is None:
            # (memory the kernel placed itself holds what was there: no error for it)
            why = " (the instruction that computes it was masked out)" if s.masked_out else ""
            raise NKIError(f"reads {st.kind} tensor {st.describe()} before anything writes it"
                           f"{why}", loc)
        if view.checks:
            view.check_bounds(loc)
        return self.access(view, loc, merge)

    def write(self, view: Tensor, loc, merge: bool = True, matmul: bool = False) -> Access:
        st = view.storage
        if st.kind == INPUT:
            raise NKIError(f"writes to kernel input '{st.name}'; kernel inputs are read-only "
                           "(create an output with nl.ndarray(..., buffer=nl.shared_hbm))", loc)
        s = st.state
        if s.forward is not None:
            self._materialize_forward(st)
        if not matmul:
            if s.pending_zero is not None:
                if not view.is_full_view():
                    self.need_zeros(s)
                s.pending_zero = None
            s.zero_init = False
            if s.groups is not None:
                s.groups.unwritten = False
        if view.checks:
            view.check_bounds(loc)
        acc = self.access(view, loc, merge)
        if s.groups is not None and s.groups.open and not matmul:
            self._close_overlapping_groups(s.groups, acc)
        s.write_count += 1
        if st.on_chip:
            _note_written_partitions(s, acc.offset // st.layout.row, acc.pairs[0][1])
        return acc

    #: ``write_plain(view, engine, matmul=False)``: ``write`` of the commonest destination (see
    #: :func:`plain_tile_access`) when nothing about its storage needs ``write``'s other cases (a
    #: redirect forward, partitions written beyond the written prefix, bound checks; unless
    #: ``matmul``, pending ``nl.zeros`` zeros or an open matmul group), with what ``write`` does
    #: for it; None otherwise, having changed nothing. In C
    #: (``cpp/python/trace_plain_access.cpp``): it runs for nearly every destination.
    write_plain = staticmethod(_core.nki.write_plain)

    def defined_partitions(self, view: Tensor) -> int:
        """How many leading partitions of ``view`` something wrote (all, off chip)."""
        st = view.storage
        s = st.state
        if s.forward is not None:
            dst, count, _ = s.forward
            if dst.storage.state.write_count == count and view.is_full_view():
                return self.defined_partitions(dst)
        if not st.on_chip or s.pending_zero is not None:
            return view.shape[0] if view.shape else 1
        if view.shape and view.shape[0] > 1 and view.strides[0] != st.layout.row:
            return view.shape[0]  # not partitions in order: access refuses it, nothing to count
        start = view.offset // st.layout.row
        return max(0, min(view.shape[0], s.written_partitions - start))

    def _refuse_cap(self, loc):
        """The error of ``record`` (see below) at the cap on recorded instructions."""
        raise NKIError(f"kernel {self.kernel_name} records more than max_instructions="
                       f"{self.max_instructions} instructions; if it should, raise the cap: "
                       "max_instructions=N when tracing or simulating, --max-instructions N "
                       f"on the neuronxsim command, or {MAX_INSTRUCTIONS_ENV}=N", loc)

    def _zero_fill_general(self, view: Tensor, loc) -> Op:
        """``zero_fill`` (see below; C): ``nl.zeros``' Memset filling the whole storage of
        ``view`` (its full view, partition axis first) with zeros, kept only if something reads
        them."""
        st = view.storage
        s = st.state
        acc = plain_tile_access(view, st, Engine.DVE) or self.access(view, loc)
        op = self.record(IT.Memset, Engine.DVE, [], [acc], _ZERO_FILL, loc, None, True)
        s.pending_zero = op
        s.write_count += 1
        s.written_partitions = st.layout.partitions
        s.zero_init = True
        return op

    def need_zeros(self, s: StorageState):
        """The zeros ``nl.zeros`` put in the storage of state ``s`` are read (or partly kept
        under a new write): its Memset stays."""
        self.core.record.zeros_needed.add(s.pending_zero.index)
        s.pending_zero = None

    def _new_result_general(self, kind: str, dtype: np.dtype, shape: tuple, name: str,
                            loc) -> Tensor:
        """``new_result`` (see below) of a shape that is not a tuple of at most two dimensions."""
        if len(shape) <= 2:  # [P, F] or [P] (what new_storage does for it, inline)
            storages = self.storages
            layout = self.tile_layouts.get(shape) or self._tile_layout(kind, shape)
            st = _new_slotted(Storage, len(storages), kind, dtype, shape, layout, layout.on_chip,
                              layout.strides, None, name, loc, False, None, new_state())
            storages.append(st)
            return new_view(st, 0, shape, st.strides, ())
        return self.new_storage(kind, dtype, shape, name, loc).full_view()

    # ---- the redirect of `dst[...] = expr` ----
    def redirect(self, op: Op, value: Tensor, dst: Tensor, loc, merge: bool = True,
                 matmul: bool = False, checked_as: tuple | None = None) -> Access:
        """Makes ``op`` write ``dst`` instead of the temporary ``value``; ``checked_as``:
        ``(what, name)`` to check the new destination as ``op``'s engine's operand."""
        target = dst
        if op.out_box is not None:
            for axis, (lo, hi) in enumerate(op.out_box):
                target = target.restrict(axis, lo, hi)
        acc = self.write_plain(target, op.engine, matmul)  # (one the engine takes as it is)
        if acc is None:
            acc = self.write(target, loc, merge, matmul=matmul)
            if checked_as is not None:
                check_compute_operand(acc, loc, *checked_as, op.opcode, op.engine, True)
        core = self.core
        temp = core.first_output(op).storage
        core.set_redirected(op.index, acc)
        core.record.redirects.append((op.index, acc))
        temp.state.forward = (dst, acc.storage.state.write_count, op)
        return acc

    def _resolve_forward(self, view: Tensor) -> Tensor:
        st = view.storage
        dst, count, _ = st.state.forward
        if dst.storage.state.write_count == count and view.is_full_view():
            if dst.storage.state.forward is not None:
                return self._resolve_forward(dst)
            return dst
        self._materialize_forward(st)
        return view

    def _materialize_forward(self, st: Storage):
        """Gives a redirected temporary its own value: a copy from the destination, placed right
        after the instruction that wrote both."""
        s = st.state
        dst, _, producer = s.forward
        s.forward = None
        copy = new_op(IT.TensorCopy, Engine.DVE, [self.access(dst, producer.loc)],
                      [self.access(st.full_view(), producer.loc)], None, producer.loc,
                      producer.loop, -1)
        self.core.record.copies.append((producer.index, copy))

    def _place_matmul_general(self, value: Tensor, dst: Tensor, accumulate: bool) -> bool:
        """``place_matmul`` (see below; C) of any matmul result and destination."""
        ops = self.ops
        if not ops or ops[-1][6] is not _MATMULT:  # (op.opcode; the cheap test first)
            return False
        op = self.fresh_result(value)
        if op is None or op[3]["is_transpose"]:  # (op.fields)
            return False
        st = dst.storage
        if st.kind != PSUM:
            raise NKIError(f"matmul results live in PSUM; {st.describe()} is in {st.kind}")
        s = st.state
        groups = s.groups
        if groups is None:  # the first matmul placed in this tile
            groups = s.groups = MatmulGroups(s.write_count == 0)
        if not accumulate and s.pending_zero is not None and not dst.is_full_view():
            self.need_zeros(s)  # the rest of the tile must still read as zeros
        if op[11] is None:  # (no out_box: redirect's steps for a matmul, inline)
            acc = write_plain(dst, op[7], True) or self.write(dst, None, False, matmul=True)
            core = self.core
            index = op[10]  # (op.index)
            temp = core.first_output(op)[3]  # (.storage)
            core.set_redirected(index, acc)
            core.record.redirects.append((index, acc))
            temp.state.forward = (dst, acc[3].state.write_count, op)
        else:
            acc = self.redirect(op, value, dst, None, False, True)
            core = self.core
        first = core.double_rows.get(op[10]) if core.double_rows else None
        if first is not None:  # (a pair: the first half moves along)
            core.set_redirected(first.index, acc)
            core.record.redirects.append((first.index, acc))
        region = (acc[1], tuple(acc[2]))  # (acc.key())
        # (op was recorded starting and stopping its group: only a join changes that)
        if accumulate:
            if (s.zero_init or groups.unwritten) and region not in groups.zero_started:
                if groups.zero_started:
                    self._refuse_overlapping_start(st, groups, acc)
                groups.zero_started[region] = None
                groups.zero_covered += acc.partitions * acc.free_size
                if s.pending_zero is not None and groups.zero_covered >= st.elements:
                    s.pending_zero = None  # matmuls overwrite every zero: the memset is dead
            else:
                last = groups.open.get(region)
                if last is None:
                    if groups.zero_started:
                        self._refuse_overlapping_start(st, groups, acc)
                    self._refuse_accumulation(st)
                core.record.matmul_joins.append((last.index, (first or op).index))
        else:
            self._close_overlapping_groups(groups, acc)
            groups.zero_started[region] = None  # (a later += here joins this group)
        groups.open[region] = op
        return True

    @staticmethod
    def _refuse_accumulation(st: Storage):
        """The error of a matmul accumulated into a region of ``st`` no group is open on."""
        why = ("nothing wrote it" if st.state.write_count <= 1 else
               "it holds a result of a non-matmul instruction")
        raise NKIError(f"accumulates a matmul into PSUM tile {st.describe()}, but {why}; on the "
                       "NeuronCore only a matmul accumulation group (or nl.zeros) can be "
                       "accumulated into")

    @staticmethod
    def _refuse_overlapping_start(st: Storage, groups: MatmulGroups, acc: Access):
        """Refuses a matmul accumulated into region ``acc`` of PSUM tile ``st`` that partly
        overlaps the region of an earlier matmul group (returns if none does). As the region's
        first matmul onto zeros (or a fresh tile) it would start a group, which overwrites, and
        lose that group's results; accumulating needs a group open on the same region."""
        a = _extent(acc)
        row = st.layout.row
        own = (acc[1], tuple(acc[2]))  # (acc.key(); a closed group on it is not an overlap)
        for region in groups.zero_started:
            if region == own:
                continue
            b = _pairs_extent(row, *region)
            if _overlaps(a, b):
                raise NKIError(
                    f"accumulates a matmul into partitions {a[0]}..{a[1]}, columns {a[2]}..{a[3]}"
                    f" of PSUM tile {st.describe()}, which partly overlap the region of an "
                    f"earlier accumulation group (partitions {b[0]}..{b[1]}, columns "
                    f"{b[2]}..{b[3]}); accumulating into overlapping regions is not modelled "
                    "(accumulate into the group's whole region, or copy the tile to SBUF and "
                    "add there)")

    def _close_overlapping_groups(self, groups: MatmulGroups, acc: Access):
        """Forgets the open matmul accumulation groups a write to ``acc`` overwrites."""
        a = _extent(acc)
        first_output = self.core.first_output
        for region in [r for r, op in groups.open.items()
                       if _overlaps(a, _extent(first_output(op)))]:
            del groups.open[region]


_core.nki.configure_tracer_methods(Op, Storage, Tensor, new_state, IT.Matmult, Access)
# Methods in C (cpp/python/trace_tracer_methods.cpp; place_matmul: trace_assign.cpp), installed as
# method descriptors: every traced instruction calls them, and as Python methods each cost a frame
# and dozens of bytecodes.
#
# ``record(opcode, engine, ins, outs, fields, loc, out_box=None, zero_fill=False)``: appends an
# instruction to the record and returns its Op; ``out_box``: the mask box its first output was cut
# to (None when it covers the iteration space); ``zero_fill``: the memset of ``nl.zeros`` (see
# ``zero_fill``). At the cap on recorded instructions, ``_refuse_cap`` raises.
Tracer.record = _core.nki.tracer_method(Tracer, "record")
# ``new_result(kind, dtype, shape, name, loc)``: a fresh temporary tile for an instruction's result
# (a [P, F] or [P] storage appended to ``storages``, its layout shared by shape through
# ``tile_layouts``, and its full view; other shapes: ``_new_result_general``).
Tracer.new_result = _core.nki.tracer_method(Tracer, "new_result")
# ``fresh_result(value)``: the instruction that just produced ``value``, if ``value`` is an untouched
# temporary it alone wrote (so that instruction can write elsewhere instead): the full view of the
# storage of the last op's first output (as redirects left it: ``core.first_output``), written once,
# not forwarded, not an ``nl.zeros`` fill, and, unless the op is a matmul (which reads SBUF and
# writes one PSUM tile), no other operand of the op on that storage; else None.
Tracer.fresh_result = _core.nki.tracer_method(Tracer, "fresh_result")
# ``write_fresh(view)``: ``write`` of a tile an instruction creates for its result (nothing to
# check yet): written once over all its partitions; the whole tile's access, made once
# (``state.full_access``) from the layout's full pairs (without them: ``access(view, None)``).
Tracer.write_fresh = _core.nki.tracer_method(Tracer, "write_fresh")
# ``place_matmul(value, dst, accumulate)``: points the matmul that just produced ``value`` (if
# ``value`` is its untouched result: see ``fresh_result``; False otherwise, having changed nothing)
# at the PSUM view ``dst``, either starting a new accumulation group (``accumulate`` False) or
# adding to the one open there. Errors locate the kernel line themselves. In C for a destination
# that ``write_plain`` takes, without a mask box or a double-row pair, and with pending ``nl.zeros``
# zeros only when ``accumulate`` (the first ``acc += matmul`` into ``nl.zeros``, every matmul
# kernel's); the tile's first matmul makes its MatmulGroups there too. Else
# ``_place_matmul_general``, the home of the rules (cpp/python/trace_assign.cpp says why the C
# steps are the same).
Tracer.place_matmul = _core.nki.place_matmul_method(Tracer, MatmulGroups)

_core.nki.configure_iterate(Loop, LoopIteration, "static")
# ``iterate(kind, values, loc, directives=())``: runs the body of a loop of ``kind`` (see
# :class:`~neuronxsim.nki.record.Loop`) over ``values``, with every op it records referring to its
# iteration. The steps of the generator it replaces (cpp/python/trace_loop_iterate.cpp):
#     outer = self.loop
#     loop = Loop(kind, len(values), loc, outer, directives)
#     symbolic = kind != "static"  # (NKI's static_range index is a plain integer)
#     try:
#         for i, value in enumerate(values):
#             self.loop = LoopIteration(loop, i)
#             yield int.__new__(LoopIndex, value) if symbolic else value
#     finally:
#         self.loop = outer
Tracer.iterate = _core.nki.iterate_method(Tracer)

# The fields of every nl.zeros memset, one dict (the fields of a recorded op never change).
_ZERO_FILL = {"mode": bir.MemsetMode.Const, "constant": 0.0}


def check_compute_operand(acc: Access, loc, what: str, name: str, opcode, engine, output: bool):
    """The rules every on-chip operand ``name`` (an ``output`` or an input) of ``opcode`` issued
    on a compute ``engine`` obeys (DMA is exempt). The engine's own are the legality rules
    ``operand.pool-psum`` and ``operand.dve-act-free-size``, asked of
    :func:`neuronxsim.bir.legality.engine_operand` when the operand is one they might refuse."""
    st = acc.storage
    if not st.on_chip:
        raise NKIError(f"{what}: {name} must be an SBUF or PSUM tile; {st.describe()} is in HBM "
                       "(load it with nl.load first)", loc)
    pairs = acc.pairs
    p = pairs[0][1]
    start = acc.offset // st.layout.row
    if st.placement is not None:  # (the rule is on absolute partitions)
        start += st.placement[0]
    if start or p > NUM_PARTITIONS:
        if p > NUM_PARTITIONS:
            raise NKIError(f"{what}: {name} spans {p} partitions; a tile has at most "
                           f"{NUM_PARTITIONS}", loc)
        if p > 64 or 32 < p <= 64 and start != 64 or p <= 32 and start % 32:
            raise NKIError(f"{what}: {name} starts at partition {start} with {p} partitions, "
                           "breaking the start-partition rule (more than 64 partitions start at "
                           "0; 33-64 at 0 or 64; up to 32 at 0, 32, 64 or 96)", loc)
    if len(pairs) > 2:
        if len(pairs) - 1 > MAX_FREE_PAIRS:
            raise NKIError(f"{what}: {name} needs {len(pairs) - 1} access-pattern dimensions "
                           f"per partition; engines walk at most {MAX_FREE_PAIRS}", loc)
        free = acc.free_size
    else:
        free = pairs[1][1]
    if engine is not Engine.PE and (st.kind == PSUM and engine is Engine.Pool or
                                    free > (MAX_FREE_PSUM if st.kind == PSUM else MAX_FREE_SBUF)):
        space = legality.Space.PSUM if st.kind == PSUM else legality.Space.SBUF
        facts = legality.Operand(space, BIR_DTYPES[st.dtype], p, free)
        why = legality.engine_operand(opcode, engine, facts, output=output, arch=current().arch)
        if why is not None:
            raise NKIError(f"{what}: {why.message} ({name}: {st.describe()})", loc)


# (module globals: reading a member of the Engine class costs several times as much)
_PE, _POOL = Engine.PE, Engine.Pool
_MATMULT = IT.Matmult
write_plain = _core.nki.write_plain  # (Tracer.write_plain, for place_matmul)

_core.nki.configure_plain_tile_access(Access, _PE, _POOL, PSUM, NUM_PARTITIONS, MAX_FREE_PSUM,
                                      MAX_FREE_SBUF)
#: ``plain_tile_access(view, st, engine)``: the access of the commonest operand, a [P, F] view
#: (of storage ``st``) from partition 0 that walks its row forwards and that ``engine`` may use
#: as it is (``Tracer.access`` and ``check_compute_operand`` would accept it); None for anything
#: else. The whole tile's access is made once (``st.state.full_access``), another view's once
#: (``view.access``). In C (``cpp/python/trace_plain_access.cpp``, which states the rules): it
#: runs for nearly every operand of every traced instruction.
plain_tile_access = _core.nki.plain_tile_access

_core.nki.configure_zero_fill(plain_tile_access, IT.Memset, Engine.DVE, _ZERO_FILL)
# ``zero_fill(view, loc)``: ``_zero_fill_general``'s steps in C (cpp/python/trace_tracer_methods.cpp)
# for a view ``plain_tile_access`` takes, else ``_zero_fill_general``: matmul kernels make an
# ``nl.zeros`` tile per accumulation group.
Tracer.zero_fill = _core.nki.tracer_method(Tracer, "zero_fill")


def _note_written_partitions(s: StorageState, start: int, count: int):
    """Extends ``s.written_partitions``, the prefix of partitions something wrote; ranges
    written beyond the prefix wait in ``s.later_partitions`` until the prefix reaches them."""
    end = start + count
    if start > s.written_partitions:
        if s.later_partitions is None:
            s.later_partitions = []
        s.later_partitions.append((start, end))
        return
    prefix = s.written_partitions
    if end <= prefix:
        return
    later = s.later_partitions
    while later:
        # The ranges the prefix reaches join it; the others wait, and are looked at again once it
        # has grown (they arrive in any order).
        waiting = [r for r in later if r[0] > end]
        if len(waiting) == len(later):
            break
        end = max(end, *(hi for lo, hi in later if lo <= end))
        later = waiting
    s.later_partitions = later or None
    s.written_partitions = end


def _extent(acc: Access) -> tuple:
    """(first partition, last partition, first column, last column) an access touches."""
    return _pairs_extent(acc.storage.layout.row, acc.offset, acc.pairs)


def _pairs_extent(row: int, offset: int, pairs) -> tuple:
    """``_extent`` of the access of ``pairs`` from element ``offset`` (an access's ``key()``
    is ``(offset, pairs)``) in a storage of ``row`` elements per partition."""
    p0, col = divmod(offset, row)
    lo = hi = col
    for s, n in pairs[1:]:
        span = s * (n - 1)
        if span < 0:
            lo += span
        else:
            hi += span
    return p0, p0 + pairs[0][1] - 1, lo, hi


def _overlaps(a: tuple, b: tuple) -> bool:
    return a[0] <= b[1] and b[0] <= a[1] and a[2] <= b[3] and b[2] <= a[3]


def merge_pairs(pairs) -> list:
    """The pairs with size-1 ones dropped and neighbours that walk memory contiguously merged:
    the same elements in the same order, in fewer access-pattern dimensions."""
    out = []
    for s, n in pairs:
        if n == 1:
            continue
        if out and out[-1][0] == s * n:
            out[-1] = (s, out[-1][1] * n)
        else:
            out.append((s, n))
    return out


def _merge_free(pairs: list) -> list:
    """merge_pairs of the free pairs, the partition pair kept first (for instructions that pair
    elements in order)."""
    return [pairs[0]] + (merge_pairs(pairs[1:]) or [(1, 1)])


__all__ = ["Tracer", "CoreTrace", "StorageState", "MatmulGroups", "Op", "Access", "new_access",
           "current", "peek", "active", "ARCHS", "DEFAULT_MAX_INSTRUCTIONS", "MAX_INSTRUCTIONS_ENV",
           "instruction_cap"]

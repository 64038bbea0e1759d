"""The trace: a tile-level instruction list recorded while the kernel's Python runs once.

Each ``nl`` / ``nisa`` call appends :class:`Op` records (one ISA instruction each) whose operands
are :class:`Access` patterns over :class:`~neuronxsim.nki.tensor.Storage` objects. Addresses are not
known yet: after the kernel returns, :mod:`.allocator` places SBUF and PSUM storages by their live
ranges and :mod:`.emit` writes the BIR.

Reads and writes are checked as they are recorded: a tile read before anything wrote it, a write
to a kernel input, an index outside its tensor are errors at the kernel line. Two recorded facts
are revised later:

* ``nl.zeros`` records a *disabled* Memset; it is enabled only if something reads the zeros. A
  matmul accumulating into zeroed PSUM instead starts its accumulation group (on the NeuronCore,
  accumulating onto memset PSUM is undefined).
* ``dst[...] = expr`` redirects the instruction that computed ``expr`` to write ``dst`` directly
  (no copy). The temporary then aliases ``dst``; should it be read after ``dst`` changed (or be
  written), a copy ``dst -> temporary`` is inserted right after that instruction.
"""

from __future__ import annotations

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import target

from .errors import NKIError, SourceLocation, caller_location
from .tensor import (INPUT, NUM_PARTITIONS, PSUM, SBUF, SHARED_HBM, Storage, Tensor, new_storage,
                     new_view, storage_layout)

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


class Access:
    """An operand: ``pairs`` ``[(step, num), ...]`` (partition pair first) from element ``offset``
    of ``storage`` (for on-chip storages, element ``partition * row + column``); made by
    :func:`new_access`. (Access and Op have no ``__init__``: a trace creates a few of each per
    instruction, and a bare slotted object filled by a function is the cheapest to create.)"""

    __slots__ = ("storage", "offset", "pairs")

    @property
    def partitions(self) -> int:
        return self.pairs[0][1]

    @property
    def free_size(self) -> int:
        n = 1
        for _, num in self.pairs[1:]:
            n *= num
        return n

    def key(self) -> tuple:
        return (self.offset, tuple(self.pairs))


def new_access(storage: Storage, offset: int, pairs: list) -> Access:
    acc = Access()
    acc.storage = storage
    acc.offset = offset
    acc.pairs = pairs
    return acc


class Op:
    """One ISA instruction of the trace: ``ins``/``outs`` are :class:`Access` operands,
    ``fields`` the node's fields by their BIR names; made by :meth:`Tracer.record` (which fills
    the bare slotted object itself: a trace records one per instruction, and a function call
    more per instruction costs about as much as its whole bookkeeping of live ranges)."""

    __slots__ = ("opcode", "engine", "ins", "outs", "fields", "loc", "enabled", "out_box",
                 "index")


class CoreTrace:
    """The ops and storages of one NeuronCore (one BIR function)."""

    def __init__(self, index: int):
        self.index = index
        self.ops: list[Op] = []
        self.storages: list[Storage] = []
        self.inputs: dict[str, Storage] = {}
        self.shared_outputs: list[Storage] = []  # shared_hbm tensors, in creation order
        self.names: set[str] = set()
        self.name_counts: dict[str, int] = {}  # base name -> next suffix to try
        self.dma_queue = 0  # the next transfer's (queues round-robin: see instructions.dma)
        self.cache: dict = {}  # tiles built once per core (PE-transpose identities)
        # Live ranges are kept while recording; an instruction enabled or inserted afterwards
        # makes them stale (allocation then recomputes them).
        self.ranges_stale = False

    def break_cycles(self):
        """Drops the references from storages back to ops (nl.zeros memsets, open matmul
        groups, redirects) and to their own shared accesses once the trace is emitted, so that
        reference counting frees the trace at once instead of leaving it to the cyclic garbage
        collector."""
        for st in self.storages:
            st.pending_zero = st.forward = st.full_access = None
            if st.psum_groups is not None:
                st.psum_groups = None

    def unique_name(self, base: str) -> str:
        names, counts = self.names, self.name_counts
        i = counts.get(base, 0)
        name = base if i == 0 else f"{base}.{i}"
        while name in names:
            i += 1
            name = f"{base}.{i}"
        counts[base] = i + 1
        names.add(name)
        return name


_CURRENT: "Tracer | None" = None


def current() -> "Tracer":
    if _CURRENT is None:
        raise NKIError("nki.language and nki.isa functions run only inside a kernel being traced "
                       "(call the kernel through nki.jit, nki.simulate_kernel or nki.trace)",
                       caller_location())
    return _CURRENT


def active() -> bool:
    return _CURRENT is not None


class Tracer:
    """Records one kernel launch: every SPMD instance on every NeuronCore of the grid."""

    def __init__(self, arch: str, num_cores: int):
        if arch not in ARCHS:
            raise NKIError(f"unknown arch {arch!r}; expected one of {', '.join(ARCHS)}")
        self.arch = arch
        self.sbuf_bytes = ARCHS[arch]["sbuf_bytes"]
        self.cores = [CoreTrace(i) for i in range(num_cores)]
        self.core = self.cores[0]
        self.program_ids: tuple = (0,)
        self.grid: tuple = (1,)
        self.instance = 0  # index of the SPMD instance being traced on this core
        self.shared_index = 0  # shared_hbm tensors created so far by this instance
        # The storage_layout of [P, F] and [P] tiles by shape (for them it depends on the shape
        # alone: there are no blocks to pad in PSUM), shared by the many tiles of a trace.
        self.tile_layouts: dict = {}

    def __enter__(self):
        global _CURRENT
        if _CURRENT is not None:
            raise NKIError("a kernel is already being traced (nested traces are not supported)")
        _CURRENT = self
        return self

    def __exit__(self, *exc):
        global _CURRENT
        _CURRENT = None

    def set_core(self, index: int):
        self.core = self.cores[index]

    def begin_instance(self, program_ids: tuple, instance: int):
        self.program_ids = program_ids
        self.instance = instance
        self.shared_index = 0

    # ---- storages ----
    def unique_name(self, base: str) -> str:
        return self.core.unique_name(base)

    def new_storage(self, kind: str, dtype: np.dtype, shape: tuple, name: str,
                    loc: SourceLocation | None, partition_axis: int = 0,
                    explicit_name: bool = False) -> Storage:
        if kind == SHARED_HBM and self.instance > 0:
            # Every SPMD instance creates the kernel's shared outputs; they are one tensor.
            outputs = self.core.shared_outputs
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
        if partition_axis == 0 and len(shape) <= 2 and (kind == SBUF or kind == PSUM):
            layout = self.tile_layouts.get(shape) or self._tile_layout(kind, dtype, shape)
        else:
            layout = storage_layout(kind, dtype, shape, partition_axis)
        st = new_storage(kind, dtype, shape, layout, name, loc,
                         self.unique_name(name) if explicit_name else None, explicit_name)
        self.core.storages.append(st)
        if kind == SHARED_HBM:
            self.core.shared_outputs.append(st)
            self.shared_index += 1
        return st

    def input_storage(self, name: str, dtype: np.dtype, shape: tuple) -> Storage:
        st = self.core.inputs.get(name)
        if st is None:
            st = new_storage(INPUT, dtype, shape, storage_layout(INPUT, dtype, shape), name, None,
                             self.unique_name(name))
            self.core.storages.append(st)
            self.core.inputs[name] = st
        return st

    def _tile_layout(self, kind: str, dtype: np.dtype, shape: tuple) -> tuple:
        """The layout of a [P, F] or [P] tile of ``shape``, the first time (see tile_layouts)."""
        layout = self.tile_layouts[shape] = storage_layout(kind, dtype, shape)
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
                row = st.row
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
        row = st.row
        if shape[0] > 1 and strides[0] != row:
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

    def _check_bounds(self, view: Tensor, loc):
        if view.checks:
            why = view.bound_violation()
            if why:
                raise NKIError(f"out-of-range access to {view.storage.describe()}: {why}", loc)

    def read(self, view: Tensor, loc, merge: bool = True) -> Access:
        st = view.storage
        if st.forward is not None:
            view = self._resolve_forward(view)
            st = view.storage
        if st.pending_zero is not None:
            self.enable(st.pending_zero)
            st.pending_zero = None
        if st.write_count == 0 and st.kind != INPUT:
            raise NKIError(f"reads {st.kind} tensor {st.describe()} before anything writes it", loc)
        if view.checks:
            self._check_bounds(view, loc)
        return self.access(view, loc, merge)

    def write(self, view: Tensor, loc, merge: bool = True, matmul: bool = False) -> Access:
        st = view.storage
        if st.kind == INPUT:
            raise NKIError(f"writes to kernel input '{st.name}'; kernel inputs are read-only "
                           "(create an output with nl.ndarray(..., buffer=nl.shared_hbm))", loc)
        if st.forward is not None:
            self._materialize_forward(st)
        if not matmul:
            if st.pending_zero is not None:
                if not view.is_full_view():
                    self.enable(st.pending_zero)
                st.pending_zero = None
            st.zero_init = False
        if view.checks:
            self._check_bounds(view, loc)
        acc = self.access(view, loc, merge)
        if st.psum_groups and not matmul:
            _close_overlapping_groups(st, acc)
        st.write_count += 1
        if st.on_chip:
            _note_written_partitions(st, acc.offset // st.row, acc.pairs[0][1])
        return acc

    def write_plain(self, view: Tensor, engine, matmul: bool = False) -> Access | None:
        """``write`` of the commonest destination (see :func:`plain_tile_access`) when nothing
        about its storage needs ``write``'s other cases; None otherwise."""
        st = view.storage
        if st.forward is None and st.later_partitions is None and not view.checks and \
                (matmul or st.pending_zero is None and not st.psum_groups):
            acc = plain_tile_access(view, st, engine)
            if acc is not None:  # what write() does for it
                if not matmul:
                    st.zero_init = False
                st.write_count += 1
                p = acc.pairs[0][1]
                if p > st.written_partitions:
                    st.written_partitions = p
                return acc
        return None

    def write_fresh(self, view: Tensor) -> Access:
        """``write`` of a tile an instruction creates for its result (nothing to check yet)."""
        st = view.storage
        st.write_count = 1
        st.written_partitions = st.partitions
        if st.full_pairs is not None:
            acc = st.full_access
            if acc is None:
                acc = st.full_access = new_access(st, 0, st.full_pairs)
            return acc
        return self.access(view, None)

    def defined_partitions(self, view: Tensor) -> int:
        """How many leading partitions of ``view`` something wrote (all, off chip)."""
        st = view.storage
        if st.forward is not None:
            dst, count, _ = st.forward
            if dst.storage.write_count == count and view.is_full_view():
                return self.defined_partitions(dst)
        if not st.on_chip or st.pending_zero is not None:
            return view.shape[0] if view.shape else 1
        start = view.offset // st.row
        return max(0, min(view.shape[0], st.written_partitions - start))

    def record(self, opcode, engine, ins, outs, fields, loc, enabled=True) -> Op:
        """Appends an instruction, extending the live ranges of the storages it touches."""
        op = Op()
        op.opcode = opcode
        op.engine = engine
        op.ins = ins
        op.outs = outs
        op.fields = fields
        op.loc = loc
        op.enabled = enabled
        op.out_box = None  # the mask box the output was restricted to (for redirects)
        op.index = -1  # of an op recorded disabled: its position when recorded
        ops = self.core.ops
        if enabled:
            index = len(ops)
            for a in ins:
                st = a.storage
                if st.first_use < 0:
                    st.first_use = index
                st.last_use = index
            for a in outs:
                st = a.storage
                if st.first_use < 0:
                    st.first_use = index
                st.last_use = index
        else:
            op.index = len(ops)
        ops.append(op)
        return op

    def enable(self, op: Op):
        """Enables an instruction recorded disabled (a Memset of nl.zeros): its storage's live
        range now starts there (unless an insertion has made the indices stale)."""
        op.enabled = True
        for acc in op.outs:
            st = acc.storage
            if st.first_use < 0 or op.index < st.first_use:
                st.first_use = op.index
            if st.last_use < op.index:
                st.last_use = op.index

    def new_result(self, kind: str, dtype: np.dtype, shape: tuple, name: str, loc) -> Tensor:
        """A fresh temporary tile for an instruction's result."""
        if len(shape) <= 2:  # [P, F] or [P] (what new_storage does for it)
            st = new_storage(kind, dtype, shape,
                             self.tile_layouts.get(shape) or self._tile_layout(kind, dtype, shape),
                             name, loc)
            self.core.storages.append(st)
            return new_view(st, 0, shape, st.strides, ())
        return self.new_storage(kind, dtype, shape, name, loc).full_view()

    # ---- the redirect of `dst[...] = expr` ----
    def fresh_result(self, value: Tensor) -> Op | None:
        """The instruction that just produced ``value``, if ``value`` is an untouched temporary
        it alone wrote (so that instruction can write elsewhere instead)."""
        ops = self.core.ops
        if not ops:
            return None
        op = ops[-1]
        st = value.storage
        outs = op.outs
        # (a result's view shares its storage's shape and strides tuples: `is` decides the
        # usual case before comparing them)
        if not outs or outs[0].storage is not st or st.write_count != 1 or \
                st.forward is not None or not op.enabled or value.offset or \
                value.shape is not st.shape and value.shape != st.shape or \
                value.strides is not st.strides and value.strides != st.strides:
            return None  # (not a full view)
        if op.opcode is IT.Matmult:
            return op  # (it reads SBUF and writes one PSUM tile: nothing else touches st)
        for a in op.ins:
            if a.storage is st:
                return None
        if len(outs) > 1 and any(a.storage is st for a in outs[1:]):
            return None
        return op

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
                check_compute_operand(acc, loc, *checked_as, op.engine)
        outs = op.outs
        temp = outs[0].storage
        outs[0] = acc
        # The op is the last one recorded, and the temporary's only use.
        index = len(self.core.ops) - 1
        temp.first_use = temp.last_use = -1
        st = acc.storage  # (dst's: a mask's box only narrows the view)
        if st.first_use < 0:
            st.first_use = index
        st.last_use = index
        temp.forward = (dst, st.write_count, op)
        return acc

    def _resolve_forward(self, view: Tensor) -> Tensor:
        st = view.storage
        dst, count, _ = st.forward
        if dst.storage.write_count == count and view.is_full_view():
            if dst.storage.forward is not None:
                return self._resolve_forward(dst)
            return dst
        self._materialize_forward(st)
        return view

    def _materialize_forward(self, st: Storage):
        """Gives a redirected temporary its own value: a copy from the destination, placed right
        after the instruction that wrote both."""
        dst, _, producer = st.forward
        st.forward = None
        # (recorded last, then moved: the live ranges record() extends are recomputed anyway,
        # the instruction indices being stale from here on)
        copy = self.record(IT.TensorCopy, Engine.DVE, [self.access(dst, producer.loc)],
                           [self.access(st.full_view(), producer.loc)], None, producer.loc)
        ops = self.core.ops
        ops.pop()
        ops.insert(ops.index(producer) + 1, copy)
        self.core.ranges_stale = True

    def place_matmul(self, value: Tensor, dst: Tensor, accumulate: bool) -> bool:
        """Points the matmul that just produced ``value`` (if ``value`` is its untouched result:
        see ``fresh_result``; False otherwise, having changed nothing) at the PSUM view ``dst``,
        either starting a new accumulation group or adding to the one open there. Errors locate
        the kernel line themselves."""
        ops = self.core.ops
        if not ops or ops[-1].opcode is not IT.Matmult:  # (the cheap test first)
            return False
        op = self.fresh_result(value)
        if op is None or op.fields["is_transpose"]:
            return False
        st = dst.storage
        if st.kind != PSUM:
            raise NKIError(f"matmul results live in PSUM; {st.describe()} is in {st.kind}")
        groups = st.psum_groups
        if groups is None:  # the first matmul placed in this tile
            groups = st.psum_groups = {}
            st.zero_started = set()
        if not accumulate and st.pending_zero is not None and not dst.is_full_view():
            self.enable(st.pending_zero)  # the rest of the tile must still read as zeros
            st.pending_zero = None
        acc = self.redirect(op, value, dst, None, merge=False, matmul=True)
        region = acc.key()
        # (op was recorded starting and stopping its group: only a join changes that)
        if accumulate:
            if st.zero_init and region not in st.zero_started:
                st.zero_started.add(region)
                st.zero_covered += acc.partitions * acc.free_size
                if st.pending_zero is not None and \
                        st.zero_covered >= st.partitions * st.free_elements:
                    st.pending_zero = None  # matmuls overwrite every zero: the memset is dead
            else:
                last = groups.get(region)
                if last is None:
                    why = ("nothing wrote it" if st.write_count <= 1 else
                           "it holds a result of a non-matmul instruction")
                    raise NKIError(f"accumulates a matmul into PSUM tile {st.describe()}, but "
                                   f"{why}; on the NeuronCore only a matmul accumulation group "
                                   "(or nl.zeros) can be accumulated into")
                op.fields["start_tensor_calc"] = False
                last.fields["stop_tensor_calc"] = False
        else:
            _close_overlapping_groups(st, acc)
        groups[region] = op
        return True


def check_compute_operand(acc: Access, loc, what: str, name: str, engine):
    """The rules every on-chip operand of a compute engine obeys (DMA is exempt)."""
    st = acc.storage
    if not st.on_chip:
        raise NKIError(f"{what}: {name} must be an SBUF or PSUM tile; {st.describe()} is in HBM "
                       "(load it with nl.load first)", loc)
    pairs = acc.pairs
    p = pairs[0][1]
    start = acc.offset // st.row
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
    if engine is not Engine.PE:
        kind = st.kind
        if kind == PSUM:
            if engine is Engine.Pool:
                raise NKIError(f"{what}: {name} is in PSUM, which the GpSimd engine cannot "
                               "access", loc)
            limit = MAX_FREE_PSUM
        else:
            limit = MAX_FREE_SBUF
        if free > limit:
            raise NKIError(f"{what}: {name} has {free} elements per partition; a "
                           f"{ENGINE_NAMES[engine]} Engine instruction walks at most {limit} in "
                           f"{kind.upper()}", loc)


ENGINE_NAMES = {Engine.DVE: "Vector", Engine.Activation: "Scalar", Engine.Pool: "GpSimd",
                Engine.PE: "Tensor"}


def plain_tile_access(view: Tensor, st: Storage, engine) -> Access | None:
    """The access of the commonest operand, a [P, F] view from partition 0 that walks its row
    forwards and that ``engine`` may use as it is (``Tracer.access`` and
    ``check_compute_operand`` would accept it); None for anything else."""
    pairs = st.full_pairs
    offset = view.offset
    if pairs is not None and view.shape is st.shape and view.strides is st.strides and \
            offset == 0:  # a whole tile (full_view shares the storage's tuples)
        acc = st.full_access
        if acc is None:
            acc = st.full_access = new_access(st, 0, pairs)
        n = st.row
    else:
        acc = view.access  # (made by an earlier use of this view)
        if acc is not None:
            n = acc.pairs[1][1]
        else:
            if not st.on_chip or len(view.shape) != 2:
                return None
            p, n = view.shape
            row = st.row
            if p > NUM_PARTITIONS or offset >= row or (p != 1 and view.strides[0] != row):
                return None
            if n == 1:
                free = (1, 1)
            else:
                s = view.strides[1]
                if not 0 < s < row or offset + s * (n - 1) >= row:
                    return None
                free = (s, n)
            acc = view.access = new_access(st, offset, [(row, p), free])
    if engine is not _PE:
        if st.kind == PSUM:
            if engine is _POOL or n > MAX_FREE_PSUM:
                return None
        elif n > MAX_FREE_SBUF:
            return None
    return acc


# (module globals: reading a member of the Engine class costs several times as much)
_PE, _POOL = Engine.PE, Engine.Pool


def _note_written_partitions(st: Storage, start: int, count: int):
    """Extends ``st.written_partitions``, the prefix of partitions something wrote; ranges
    written beyond the prefix wait in ``st.later_partitions`` until the prefix reaches them."""
    end = start + count
    if start > st.written_partitions:
        if st.later_partitions is None:
            st.later_partitions = []
        st.later_partitions.append((start, end))
        return
    prefix = st.written_partitions
    if end <= prefix:
        return
    later = st.later_partitions
    while later:
        reached = [r for r in later if r[0] <= end]
        if not reached:
            break
        end = max(end, *(hi for _, hi in reached))
        later = [r for r in later if r[0] > end]
    st.later_partitions = later or None
    st.written_partitions = end


def _extent(acc: Access) -> tuple:
    """(first partition, last partition, first column, last column) an access touches."""
    row = acc.storage.row
    p0, col = divmod(acc.offset, row)
    lo = hi = col
    for s, n in acc.pairs[1:]:
        span = s * (n - 1)
        if span < 0:
            lo += span
        else:
            hi += span
    return p0, p0 + acc.partitions - 1, lo, hi


def _close_overlapping_groups(st: Storage, acc: Access):
    """Forgets the open matmul accumulation groups a write to ``acc`` overwrites."""
    a = _extent(acc)
    for region in [r for r, op in st.psum_groups.items() if _overlaps(a, _extent(op.outs[0]))]:
        del st.psum_groups[region]


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


__all__ = ["Tracer", "Op", "Access", "new_access", "current", "active", "ARCHS"]

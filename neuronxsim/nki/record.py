"""The record of a trace: what the kernel's Python did, appended in order and never edited
(but for the last op's output, while nothing else can see it: see ``redirects``).

Per NeuronCore, a :class:`CoreRecord` holds

* ``ops``: one :class:`Op` per ISA instruction the kernel's ``nl`` / ``nisa`` calls asked for,
  in program order, each with its :class:`Access` operands, its BIR fields, its kernel source
  line and the loop iteration that recorded it (:class:`LoopIteration`);
* ``storages``: every memory object the kernel created (``Storage.sid`` is the position here);
* the *facts* the trace learned about earlier ops after recording them, each appended when
  learned (the passes of :mod:`.passes` apply them, in this order):

  - ``zeros_needed``: the ``nl.zeros`` memsets (ops recorded with ``zero_fill``) whose zeros
    something reads; the others are dead (a full overwrite or matmuls replaced every zero);
  - ``redirects``: ``(op index, access)``: ``dst[...] = expr`` made the op that computed ``expr``
    write ``access`` (in ``dst``) instead of its temporary; a later entry for the same op wins.
    When nothing but the statement holds the temporary (``t[...] = nl.load(x)``,
    ``acc += nisa.nc_matmul(a, b)``: the C paths count the references, see
    cpp/python/trace_assign.cpp ``soleTemporary``), the op, the last one recorded, is made to
    write ``access`` itself and the temporary's storage, the last one, leaves ``storages``: what
    recording it so would have left, with no entry here;
  - ``copies``: ``(op index, copy op)``: a redirected temporary was needed after all (read after
    ``dst`` changed, or written), so a copy ``dst -> temporary`` runs right after that op;
  - ``matmul_joins``: ``(earlier op index, op index)``: a matmul joined the accumulation group
    of an earlier one (the earlier does not stop the group, the later does not start one).

Nothing here knows addresses or live ranges: those are the passes' answers.
"""

from __future__ import annotations

import functools
import operator

from neuronxsim.starfish.lib import _core


class Access(tuple):
    """An operand: ``pairs`` ``[(step, num), ...]`` (partition pair first) from element ``offset``
    of ``storage`` (for on-chip storages, element ``partition * row + column``); made by
    :func:`new_access` and never changed.

    It is the plain record the emission hands libBIR as it is: the tuple ``(storage sid,
    offset, pairs, storage)``, of which C++ reads the first three."""

    __slots__ = ()

    sid = property(operator.itemgetter(0), doc="the storage's position in its core's list")
    offset = property(operator.itemgetter(1))
    pairs = property(operator.itemgetter(2))
    storage = property(operator.itemgetter(3))

    @property
    def partitions(self) -> int:
        return self[2][0][1]

    @property
    def free_size(self) -> int:
        n = 1
        for _, num in self[2][1:]:
            n *= num
        return n

    def key(self) -> tuple:
        return (self[1], tuple(self[2]))


#: ``new_access(storage, offset, pairs)``: an :class:`Access` (in C, ``cpp/python/trace_record.cpp``:
#: a trace makes a few per instruction).
new_access = functools.partial(_core.nki.new_access, Access)


class Op(tuple):
    """One ISA instruction of the record: ``opcode`` (a ``bir.InstructionType``), ``engine``,
    ``ins``/``outs`` (:class:`Access` operands), ``fields`` (the node's fields by their BIR
    names, or None), ``loc`` (the kernel line), ``loop`` (the :class:`LoopIteration` being
    traced, None outside loops), ``index`` (position in the record; -1 for a copy of
    :attr:`CoreRecord.copies`), ``out_box`` (the mask box the first output was cut to, for
    redirects) and ``zero_fill`` (an ``nl.zeros`` memset, kept only if its zeros are read).
    Made by :func:`new_op` (``Tracer.record``); a pass that changes an op makes a new one
    (:meth:`replaced`).

    It is the plain record the emission hands libBIR as it is: the tuple ``(opcode number,
    engine number, source "file.py:LINE", fields, ins, outs, ...)``, of which C++ reads the
    first six."""

    __slots__ = ()

    opcode_number = property(operator.itemgetter(0))
    engine_number = property(operator.itemgetter(1))
    source = property(operator.itemgetter(2))
    fields = property(operator.itemgetter(3))
    ins = property(operator.itemgetter(4))
    outs = property(operator.itemgetter(5))
    opcode = property(operator.itemgetter(6))
    engine = property(operator.itemgetter(7))
    loc = property(operator.itemgetter(8))
    loop = property(operator.itemgetter(9))
    index = property(operator.itemgetter(10))
    out_box = property(operator.itemgetter(11))
    zero_fill = property(operator.itemgetter(12))

    def replaced(self, outs=None, fields=None, ins=None) -> "Op":
        """This op with other operands or fields (for the passes)."""
        items = list(self)
        if ins is not None:
            items[4] = ins
        if outs is not None:
            items[5] = outs
        if fields is not None:
            items[3] = fields
        return tuple.__new__(Op, items)


# Ops and accesses are freed in one pass in C (cpp/python/trace_record.cpp, use_record_dealloc):
# a trace frees an op and a few accesses per instruction, and the generic deallocation of a
# Python class's instances, then the tuple's, was a third of freeing a trace.
_core.nki.use_record_dealloc(Access)
_core.nki.use_record_dealloc(Op)

#: ``new_op(opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, zero_fill=False)``:
#: an :class:`Op` (in C, ``cpp/python/trace_record.cpp``: one per recorded instruction); the opcode
#: and engine numbers are ``int()`` of the members, read once per member.
new_op = functools.partial(_core.nki.new_op, Op)


def _positions(cls) -> dict[str, int]:
    """Where each named item of the record tuple class ``cls`` is (read from its properties),
    for the passes written in C (``cpp/python/trace_pass_facts.cpp``), which take the positions
    they read as arguments."""
    at = {}
    for name, member in vars(cls).items():
        if isinstance(member, property) and isinstance(member.fget, operator.itemgetter):
            at[name] = member.fget(range(64))
    return at


#: The position of each item of an :class:`Op` / :class:`Access` by its property's name.
OP_AT = _positions(Op)
ACCESS_AT = _positions(Access)


class Loop:
    """A loop of the kernel as traced: ``kind`` ("affine" for ``nl.affine_range``, whose
    iterations are independent; "sequential" for ``nl.sequential_range``; "static" for
    ``nl.static_range``), its trip count, its source line, the iteration of the enclosing
    loop it runs in (None at the kernel's top level) and the ``directives`` the kernel gave it
    (``nki.compiler.no_reorder()``, ``multi_buffer(n)``)."""

    __slots__ = ("kind", "trips", "loc", "outer", "directives")

    def __init__(self, kind: str, trips: int, loc, outer: "LoopIteration | None",
                 directives: tuple = ()):
        self.kind = kind
        self.trips = trips
        self.loc = loc
        self.outer = outer
        self.directives = directives

    def __repr__(self):
        return f"<{self.kind} loop of {self.trips} at {self.loc}>"


class LoopIteration:
    """Iteration ``iteration`` (0-based) of ``loop``. Every op recorded inside it refers to it,
    so a pass can tell which loop, which iteration and which enclosing iterations an
    instruction belongs to (``outer`` chains to the enclosing loop's iteration)."""

    __slots__ = ("loop", "iteration")

    def __init__(self, loop: Loop, iteration: int):
        self.loop = loop
        self.iteration = iteration

    @property
    def outer(self) -> "LoopIteration | None":
        return self.loop.outer

    def nest(self) -> list["LoopIteration"]:
        """The iterations from the outermost loop in to this one."""
        chain, it = [], self
        while it is not None:
            chain.append(it)
            it = it.loop.outer
        return chain[::-1]

    def __repr__(self):
        return f"<iteration {self.iteration} of {self.loop!r}>"


# (freed in one pass in C, as ops are: a trace frees a loop iteration per instruction or so)
_core.nki.use_slots_dealloc(Loop)
_core.nki.use_slots_dealloc(LoopIteration)

_unique_name = _core.nki.unique_name


class CoreRecord:
    """The record of one NeuronCore (one BIR function): see the module docstring."""

    # (slots: the C fast paths read them per traced instruction, see trace_slotted.h slotAttr)
    __slots__ = ("index", "ops", "storages", "inputs", "shared_outputs", "shared_names",
                 "constant_storages", "constants", "names", "name_counts", "zeros_needed",
                 "redirects", "copies", "matmul_joins", "keep_order")

    def __init__(self, index: int):
        self.index = index
        self.ops: list[Op] = []
        self.storages: list = []
        self.inputs: dict = {}  # parameter name -> its Input storage
        self.shared_outputs: list = []  # unnamed shared_hbm tensors, in creation order
        self.shared_names: dict = {}  # name -> the named shared_hbm tensor (2.2x nl.ndarray)
        self.constant_storages: list = []  # nl.shared_constant tensors, in creation order
        self.constants: dict = {}  # their values by name (bound as inputs when the kernel runs)
        self.names: set[str] = set()  # of storages named so far
        self.name_counts: dict[str, int] = {}  # base name -> next suffix to try
        # the facts (see the module docstring)
        self.zeros_needed: set[int] = set()
        self.redirects: list[tuple[int, Access]] = []
        self.copies: list[tuple[int, Op]] = []
        self.matmul_joins: list[tuple[int, int]] = []
        # NKI 0.6's nl.no_reorder() held instructions: nothing may be reordered to fit (pressure.py)
        self.keep_order = False

    def unique_name(self, base: str) -> str:
        """``base``, or ``base.1``, ``base.2``, ...: the first not yet taken on this core (in C,
        ``cpp/python/trace_emit_tensors.cpp``, where the emission names its temporaries)."""
        return _unique_name(self.names, self.name_counts, base)


__all__ = ["Access", "new_access", "Op", "new_op", "OP_AT", "ACCESS_AT", "Loop", "LoopIteration",
           "CoreRecord"]

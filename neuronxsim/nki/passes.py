"""From the record to BIR: the passes a traced NeuronCore goes through, in order.

A pass is a small class with ``run(program)``; :data:`PIPELINE` is the flat list of them. Each
reads what the record and the passes before it left in the :class:`Program` and adds its own
answer; none changes the record (a pass that changes an op puts a new one in ``program.ops``):

1. :class:`ZeroElision` drops the ``nl.zeros`` memsets whose zeros nothing reads;
2. :class:`Redirects` makes the ops that ``dst[...] = expr`` redirected write ``dst``, and puts
   the copies of redirected temporaries that were needed after all right after their ops;
3. :class:`MatmulGroups` clears the start / stop flags of matmuls that joined an accumulation
   group;
4. :class:`Liveness` finds each storage's live range (first and last instruction using it);
5. :class:`~neuronxsim.nki.allocator.Allocation` places SBUF and PSUM storages by live range,
   spilling SBUF tiles that do not fit (:mod:`~neuronxsim.nki.spill`: it adds the transfers to
   ``program.ops`` and recomputes the live ranges); what does not fit it leaves in
   ``program.refusal``;
6. :class:`~neuronxsim.nki.pressure.PressureSchedule`, only after a refusal, reorders
   ``program.ops`` within their dependencies so that fewer tiles are live at once (as the
   compiler may) and allocates again, or raises the refusal;
7. :class:`~neuronxsim.nki.emit.Emission` writes the function's tensors and instructions.

Later passes slot in by position: a scheduler that reorders the instructions of independent
``affine_range`` iterations (every op carries its loop iteration, see
:class:`~neuronxsim.nki.record.LoopIteration`) goes before :class:`Liveness`.
:class:`~neuronxsim.nki.pressure.PressureSchedule` comes after the allocation because it only
runs when the program order does not fit (every kernel that fits keeps its order).
"""

from __future__ import annotations

from neuronxsim.starfish.lib import _core

from .allocator import Allocation
from .emit import Emission
from .pressure import PressureSchedule
from .record import ACCESS_AT, OP_AT, CoreRecord, Op

# The passes that touch every op run in C (cpp/python/trace_pass_facts.cpp), told where the
# items they read are.
_INDEX, _INS, _OUTS, _FIELDS, _ZERO_FILL = (OP_AT[k] for k in ("index", "ins", "outs", "fields",
                                                                "zero_fill"))
_SID = ACCESS_AT["sid"]


class Program:
    """One NeuronCore's trace on its way through the passes.

    ``record``: the :class:`~neuronxsim.nki.record.CoreRecord` (read only); ``storages``: the
    record's storages and the ones the passes add (spill buffers, reloaded tiles; ``sid`` is the
    position here); ``arch``: "trn1" or
    "trn2"; ``sbuf_bytes``: SBUF bytes per partition; ``outputs``: the storages the kernel
    returns; ``module``: the ``bir.Module`` the function goes into. What the passes add:
    ``ops`` (the instructions in order, starting as the record's), ``first_use`` / ``last_use``
    (per storage ``sid``, the indices in ``ops`` of the first and last instruction using it, -1
    if none: :class:`Liveness`), ``addr``, ``peak_bytes`` and ``spills`` (per ``sid``, per space
    and the spill transfers: allocation), ``refusal`` (None, or the allocation pass that refused
    and its error, until :class:`~neuronxsim.nki.pressure.PressureSchedule` resolves or raises
    it), ``reordered`` (how many instructions that pass moved to make the tiles fit: 0 when program
    order fits), ``function`` (emission)."""

    def __init__(self, record: CoreRecord, arch: str, sbuf_bytes: int, outputs: list, module):
        self.record = record
        self.arch = arch
        self.sbuf_bytes = sbuf_bytes
        self.outputs = outputs
        self.module = module
        self.ops: list[Op] = record.ops
        self.storages: list = list(record.storages)
        self.first_use: list[int] = []
        self.last_use: list[int] = []
        self.addr: list = []
        self.peak_bytes: dict = {}
        self.spills: dict = {}
        self.refusal: tuple | None = None
        self.reordered = 0
        self.function = None


class Pass:
    """A stage of the pipeline: ``name`` (for errors and timings) and ``run(program)``.
    (:class:`~neuronxsim.nki.allocator.Allocation` and :class:`~neuronxsim.nki.emit.Emission`
    live beside what they do and have the same two members.)"""

    name = ""

    def run(self, program: Program) -> None:
        raise NotImplementedError


class ZeroElision(Pass):
    """Drops the ``zero_fill`` memsets of ``nl.zeros`` whose zeros nothing needs (the record's
    ``zeros_needed``)."""

    name = "zero-elision"

    def run(self, program: Program) -> None:
        # in C: [op for op in program.ops if not op.zero_fill or op.index in needed]
        program.ops = _core.nki.ops_zero_elided(program.ops, program.record.zeros_needed, _INDEX,
                                                _ZERO_FILL)


class Redirects(Pass):
    """Applies the record's ``redirects`` (the last one of an op wins) and ``copies`` (each
    right after its op; a later copy goes before an earlier one, as it was placed right after
    the op when it was made)."""

    name = "redirects"

    def run(self, program: Program) -> None:
        record = program.record
        if record.redirects or record.copies:
            program.ops = _core.nki.ops_redirected(program.ops, record.redirects, record.copies,
                                                   _INDEX, _OUTS)


class MatmulGroups(Pass):
    """Applies the record's ``matmul_joins``: the earlier matmul of a join does not stop its
    accumulation group (``stop_tensor_calc``), the later does not start one
    (``start_tensor_calc``); every matmul was recorded doing both."""

    name = "matmul-groups"

    def run(self, program: Program) -> None:
        joins = program.record.matmul_joins
        if joins:
            program.ops = _core.nki.ops_matmul_grouped(program.ops, joins, _INDEX, _FIELDS)


class Liveness(Pass):
    """Each storage's live range: the positions in ``program.ops`` of the first and the last
    instruction that reads or writes it (-1 for a storage no instruction touches)."""

    name = "liveness"

    def run(self, program: Program) -> None:
        program.first_use, program.last_use = _core.nki.live_ranges(
            program.ops, len(program.storages), _INS, _OUTS, _SID)


#: The passes of every trace, in order (see the module docstring).
PIPELINE = (ZeroElision(), Redirects(), MatmulGroups(), Liveness(), Allocation(),
            PressureSchedule(), Emission())


def run_pipeline(program: Program, pipeline=PIPELINE) -> Program:
    for stage in pipeline:
        stage.run(program)
    return program


__all__ = ["Program", "Pass", "ZeroElision", "Redirects", "MatmulGroups", "Liveness",
           "PIPELINE", "run_pipeline"]

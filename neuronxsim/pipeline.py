"""The tool chain as one flat list of named stages, over plain objects:

=========  ==========================  ===============================================================
stage      takes                       returns
=========  ==========================  ===============================================================
lower      a Penguin ``Program``       :class:`Lowered`: BIR with kernel nodes (``BirCodeGenLoop``)
resolve    :class:`Lowered` / Module   :class:`Resolved`: ISA-level BIR, one pass per node kind
simulate   :class:`Resolved` / Module  ``neuronxsim.sim.SimResult``: outputs, time, records
report     ``SimResult`` + nodes       :class:`Report`: per-kernel rows and engine busy shares
=========  ==========================  ===============================================================

Copy policy: **a stage never changes its input.** A stage that transforms a module makes its own
copy once, when it starts (``Module.clone()``, a deep copy in C++), runs its passes on that copy
in place one after another, and returns it. So every object a stage returned stays valid and
unchanged whatever runs later, and a failed stage leaves nothing half done behind.

Resolving runs one pass per kernel-node kind, in this order (:data:`RESOLVE_PASSES`):

* IT54 ``InstBIRKernel``: ``InlineBIRKernel`` expands each library node natively;
* IT55 ``InstNKIKernel``: the user kernel's compiled body is spliced in its place;
* IT56 ``InstNKIKLIRKernel``: ``lowerKernelInst`` reads its KLR file (Form A) or BIR JSON (Form B).

File references (IT55 compiled kernels, IT56 Form A paths) resolve inside one folder,
``files_dir``: the output folder the module was lowered into (its references are then relative to
it, and the compiled user kernels are written there), or the folder of a module file
(``Module.files_dir``). A reference outside it (``../``, an absolute path elsewhere) is refused
(walrus/FileReference.h).

>>> from neuronxsim import pipeline
>>> lowered = pipeline.lower(program, "trn1", out_dir="out")          # doctest: +SKIP
>>> resolved = pipeline.resolve(lowered)                               # doctest: +SKIP
>>> result = pipeline.simulate(resolved, inputs, arch="trn1")          # doctest: +SKIP
>>> pipeline.report(result, resolved.nodes).rows[0].time_ns            # doctest: +SKIP
>>> everything = pipeline.run(program, arch="trn1", inputs=inputs)     # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import target
from neuronxsim.cli.kernel_report import KernelNode, KernelRow, engine_busy, kernel_nodes, kernel_rows
from neuronxsim.errors import CodegenError, KernelError
from neuronxsim.sim.result import UnwrittenOutput

#: BIR's name of each NeuronCore generation the pipeline takes (the target description's).
ARCHS: Dict[str, str] = {arch: target.bir_arch(arch) for arch in target.ARCHS}

#: The simulator's modes: numerics and time, or time only.
MODES = ("full", "timing")

PathLike = Union[str, os.PathLike]
OnProgress = Callable[[int, int], None]


def _check_arch(arch: str) -> str:
    if arch not in ARCHS:
        raise CodegenError(f"arch {arch!r}: expected one of {', '.join(ARCHS)}")
    return ARCHS[arch]


# ---- lower ----

@dataclasses.dataclass
class Lowered:
    """What ``lower`` made: the module with its kernel nodes, the program it came from, how many
    nodes of each kernel it emitted (``{(category, kernel name): count}``), and ``files_dir``: the
    folder its kernel nodes' file references are relative to (None when it has none)."""
    module: bir.Module
    program: object
    arch: str
    kernel_counts: dict
    files_dir: Optional[str]

    @property
    def nodes(self) -> List[KernelNode]:
        return kernel_nodes(self.module)


def lower(program, arch: str = "trn1", out_dir: Optional[PathLike] = None) -> Lowered:
    """``program`` lowered for ``arch`` by ``BirCodeGenLoop`` (a program built for another arch is
    compiled again for this one first: ``Program.for_arch``). With ``out_dir``, IT56 kernels are
    written as KLR files to ``out_dir/klr/`` and the compiled user kernels IT55 nodes name to
    ``out_dir/nki/``, and the nodes refer to them by paths relative to ``out_dir``, so a module
    saved in ``out_dir`` can move with its folder; without it the KLR files go where the codegen
    puts them (``NEURONXSIM_KLR_DIR`` or a per-process directory), ``files_dir`` is that directory,
    and the user kernels are found in this process."""
    from neuronxsim.starfish.penguin.ir import Program
    from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop

    module = bir.Module()
    module.arch = _check_arch(arch)
    out = os.path.abspath(out_dir) if out_dir is not None else None
    codegen = BirCodeGenLoop(module, klr_dir=os.path.join(out, "klr") if out else None)
    codegen.lower(program.for_arch(arch) if isinstance(program, Program) else program)  # lower() refuses others
    if out:
        codegen.write_compiled_kernels(out)
    files_dir = _relative_file_references(module, out)
    module.files_dir = files_dir or ""
    return Lowered(module, program, arch, dict(codegen.kernel_counts), files_dir)


def _form_a_nodes(module: bir.Module):
    for fn in module.functions:
        for block in fn.blocks:
            for inst in block.instructions:
                if inst.opcode == bir.InstructionType.NKIKLIRKernel and inst.kernel_format != "bir":
                    yield inst


def _relative_file_references(module: bir.Module, out: Optional[str]) -> Optional[str]:
    """Makes the module's Form A references relative to ``out``; returns the folder they are
    relative to (``out``, or the codegen's KLR directory when there is no ``out``).

    The codegen caches traces per process, so a kernel traced for an earlier lowering keeps the
    KLR file it was written to then: such a file is copied into ``out/klr/`` (names are content
    hashes, so an existing copy is the same file)."""
    folders = set()
    for node in _form_a_nodes(module):
        path = node.klir_binary
        if out is None:
            folders.add(os.path.dirname(path))
            continue
        if os.path.relpath(path, out).startswith(os.pardir):
            path = _copy_into(path, os.path.join(out, "klr"))
        node.klir_binary = os.path.relpath(path, out)
    if out is not None:
        return out
    if len(folders) > 1:
        raise KernelError(f"the codegen wrote KLR files into {len(folders)} directories: {sorted(folders)}")
    return folders.pop() if folders else None


def _copy_into(path: str, folder: str) -> str:
    import shutil
    import tempfile

    target = os.path.join(folder, os.path.basename(path))
    if not os.path.exists(target):
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        os.close(fd)
        try:
            shutil.copyfile(path, tmp)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    return target


# ---- resolve ----

class ResolvePass:
    """One walrus pass over the stage's own copy of the module: resolves every node of one kind
    in place. ``run`` returns what it reports per node (or a count)."""
    name = ""
    kind = None

    def run(self, module: bir.Module, files_dir: Optional[str]):
        raise NotImplementedError


class InlineBIRKernel(ResolvePass):
    """IT54: each library node expanded natively by its C++ leaf (walrus ``InlineBIRKernel``)."""
    name, kind = "InlineBIRKernel", bir.InstructionType.BIRKernel

    def run(self, module, files_dir):
        from neuronxsim.walrus.inline import inline_bir_kernels
        return inline_bir_kernels(module)


class ResolveNKIKernel(ResolvePass):
    """IT55: each user ``@nki.jit`` kernel node replaced by its compiled kernel."""
    name, kind = "ResolveNKIKernel", bir.InstructionType.NKIKernel

    def run(self, module, files_dir):
        from neuronxsim import walrus
        return walrus.resolve_kernel_nodes_in_place(module, (self.kind,), files_dir)


class LowerKernelInst(ResolvePass):
    """IT56: each registry kernel node replaced by the kernel its KLR file (Form A) or BIR JSON
    (Form B) carries (``TranslateNKIASTToBIR::lowerKernelInst``)."""
    name, kind = "lowerKernelInst", bir.InstructionType.NKIKLIRKernel

    def run(self, module, files_dir):
        from neuronxsim import walrus
        return walrus.resolve_kernel_nodes_in_place(module, (self.kind,), files_dir)


#: The resolve stage's passes, one per kernel-node kind, in the order they run.
RESOLVE_PASSES: Tuple[ResolvePass, ...] = (InlineBIRKernel(), ResolveNKIKernel(), LowerKernelInst())


@dataclasses.dataclass
class Resolved:
    """What ``resolve`` made: the ISA-level module, the kernel nodes it was resolved from (in
    program order), and each pass's report by pass name (``InlineBIRKernel``: one statistics dict
    per IT54 node; the others: the number of nodes resolved)."""
    module: bir.Module
    nodes: List[KernelNode]
    passes: dict


def resolve(lowered: Union[Lowered, bir.Module], files_dir: Optional[PathLike] = None) -> Resolved:
    """Every kernel node expanded into ISA instructions, on a copy (see the module docstring).
    ``files_dir``: the folder file references resolve in (default: the ``Lowered``'s; for a bare
    module, its ``files_dir``, which ``bir.load`` sets to the file's folder, else the working
    directory)."""
    module = lowered.module if isinstance(lowered, Lowered) else lowered
    if not isinstance(module, bir.Module):
        raise KernelError(f"resolve: expected a Lowered or a neuronxsim.bir.Module, got {type(lowered).__name__}")
    if files_dir is None and isinstance(lowered, Lowered):
        files_dir = lowered.files_dir
    nodes = kernel_nodes(module)
    copy = module.clone()
    reports = {p.name: p.run(copy, os.fspath(files_dir) if files_dir is not None else None)
               for p in RESOLVE_PASSES}
    return Resolved(copy, nodes, reports)


# ---- simulate ----

def simulate(resolved: Union[Resolved, bir.Module], inputs: Optional[Mapping[str, np.ndarray]] = None,
             arch: Optional[str] = None, mode: str = "full", on_progress: Optional[OnProgress] = None):
    """The simulator's run of the module (``neuronxsim.sim.simulate``: ``arch`` None is the
    module's own, another must name the module's generation); kernel nodes left in a
    module are timed in timing mode, each as one step: the cached simulated time of its own
    expansion (walrus KernelNodeLatency). ``on_progress(done, total)``
    (instructions) is called about ten times a second from another thread while it runs."""
    from neuronxsim import sim

    if arch is not None:
        _check_arch(arch)
    module = resolved.module if isinstance(resolved, Resolved) else resolved
    return sim.simulate(module, inputs, arch=arch, mode=mode, on_progress=on_progress)


# ---- report ----

@dataclasses.dataclass
class Report:
    """Where a simulated module's time went: one row per kernel node (see
    ``neuronxsim.cli.kernel_report``) and the whole module's busy share per engine; and the
    outputs the run left partly unwritten (``neuronxsim.sim.UnwrittenOutput``)."""
    rows: List[KernelRow]
    engine_busy: Dict[str, float]
    total_ns: float
    cycles: int
    instructions: int
    pe_mfu: float
    unwritten_outputs: Tuple[UnwrittenOutput, ...] = ()

    def to_json(self) -> dict:
        return {"total_ns": self.total_ns, "cycles": self.cycles, "instructions": self.instructions,
                "pe_mfu": self.pe_mfu, "engine_busy": dict(self.engine_busy),
                "kernels": [r.to_json() for r in self.rows],
                "unwritten_outputs": [u.to_json() for u in self.unwritten_outputs]}


def report(result, nodes: List[KernelNode]) -> Report:
    """The per-kernel rows and engine busy shares of ``result`` (of a module resolved from
    ``nodes``; empty rows when there were none), and its unwritten outputs."""
    return Report(kernel_rows(result, nodes) if nodes else [], engine_busy(result), result.total_ns,
                  result.cycles, result.instruction_count, result.pe_mfu, result.unwritten_outputs)


# ---- the flat list ----

@dataclasses.dataclass
class Settings:
    """What the stages of one :func:`run` share."""
    arch: str = "trn1"
    mode: str = "full"
    inputs: Optional[Mapping[str, np.ndarray]] = None
    out_dir: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Stage:
    """A named stage: ``run(results so far by stage name, settings)`` -> its result."""
    name: str
    run: Callable[[dict, Settings], object]


#: The pipeline, in order. ``results["program"]`` is the input of the first stage.
STAGES: Tuple[Stage, ...] = (
    Stage("lower", lambda r, s: lower(r["program"], s.arch, out_dir=s.out_dir)),
    Stage("resolve", lambda r, s: resolve(r["lower"])),
    Stage("simulate", lambda r, s: simulate(r["resolve"], s.inputs, s.arch, s.mode)),
    Stage("report", lambda r, s: report(r["simulate"], r["resolve"].nodes)),
)

STAGE_NAMES: Tuple[str, ...] = tuple(s.name for s in STAGES)


def run(program, arch: str = "trn1", *, mode: str = "full", inputs=None, out_dir: Optional[PathLike] = None,
        until: str = "report", on_stage: Optional[Callable[[str], contextlib.AbstractContextManager]] = None) -> dict:
    """Runs the stages from ``lower`` through ``until`` on ``program``; returns every result by
    stage name (and ``"program"``). ``on_stage(name)``, if given, is a context manager entered
    around each stage (a progress bar's step)."""
    if until not in STAGE_NAMES:
        raise ValueError(f"until={until!r}: expected one of {', '.join(STAGE_NAMES)}")
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: expected one of {', '.join(MODES)}")
    settings = Settings(arch, mode, inputs, os.fspath(out_dir) if out_dir is not None else None)
    results = {"program": program}
    for stage in STAGES[:STAGE_NAMES.index(until) + 1]:
        with on_stage(stage.name) if on_stage else contextlib.nullcontext():
            results[stage.name] = stage.run(results, settings)
    return results


__all__ = ["ARCHS", "MODES", "Lowered", "Resolved", "Report", "ResolvePass", "InlineBIRKernel",
           "ResolveNKIKernel", "LowerKernelInst", "RESOLVE_PASSES", "Stage", "STAGES", "STAGE_NAMES",
           "Settings", "lower", "resolve", "simulate", "report", "run"]

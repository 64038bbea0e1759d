"""``neuronxsim profile file.py:kernel --shapes 128x512 128x512:bfloat16``: an NKI kernel traced
and simulated on seeded random inputs of the given shapes; prints time, engine use and the
kernel's busiest source lines, and writes trace.json and timeline.png to a folder.

Everything is checked before the kernel file runs: the kernel reference (a regular ``.py``
file), each shape (positive dims joined by ``x``) and dtype (a name of ``neuronxsim.nki``'s
dtypes), and the memory the random inputs take. An exception in the kernel file or the kernel
is reported at the kernel's own line.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import re
import runpy
import sys

import numpy as np

from neuronxsim import pipeline
from neuronxsim.cli import arguments, files, memory, printing
from neuronxsim.cli.failures import user_code
from neuronxsim.cli.inputs import check_python_source
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.errors import NeuronxsimError
from neuronxsim.sweep import space


class ProfileError(NeuronxsimError, ValueError):
    """A bad kernel reference or --shapes argument."""


def add_parser(sub) -> None:
    p = sub.add_parser("profile", help="trace and simulate an NKI kernel on random inputs")
    p.add_argument("kernel", help="FILE.py:NAME of an @nki.jit kernel")
    p.add_argument("--shapes", nargs="+", required=True, metavar="SHAPE[:DTYPE]",
                   help="one per kernel argument, e.g. 128x512 or 128x512:bfloat16 (default float32)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a non-array kernel argument by name, read as a Python literal "
                        "(pool_size=2, scale=0.5, shape2D=(3,4), flag=True; other text is a string)")
    p.add_argument("--allow-shadowing", action="store_true",
                   help="run even when a real nki/neuronxcc package is importable")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default=None,
                   help="trn1 or trn2 (default: trn1 for 2.2x kernels; for NKI 0.6 kernels "
                        "NEURON_PLATFORM_TARGET_OVERRIDE, else trn2)")
    p.add_argument("--mode", choices=("full", "timing"), default="full",
                   help="full (numerics and time, the default) or timing (time only: no values "
                        "are made or computed, for large sizes)")
    p.add_argument("--max-instructions", type=arguments.size, default=None, metavar="N",
                   help="refuse a trace past N instructions (default: $NEURONXSIM_MAX_INSTRUCTIONS "
                        "or one million)")
    p.add_argument("--seed", type=arguments.seed, default=0)
    p.add_argument("--output", type=arguments.folder, default="neuronxsim-profile",
                   help="output folder (default ./neuronxsim-profile)")
    p.add_argument("--top", type=arguments.count, default=8, help="source lines to list (default 8)")
    printing.add_options(p)
    p.set_defaults(func=run)


def dtype_names() -> dict:
    """The dtypes a shape may name: ``neuronxsim.nki``'s, by name."""
    from neuronxsim.nki import dtypes

    return {dtypes.name(dt): dt for dt in dtypes.SUPPORTED}


def parse_shape(spec: str) -> tuple[tuple, np.dtype]:
    """(shape, dtype) of ``128x512`` or ``128x512:bfloat16``; ProfileError naming what is wrong."""
    shape_text, _, dtype_name = spec.partition(":")
    dims = shape_text.lower().split("x")
    if not all(re.fullmatch(r"[+-]?\d{1,20}", d) for d in dims):
        raise ProfileError(f"--shapes {spec!r}: expected dims joined by 'x', e.g. 128x512 or 128x512:bfloat16")
    shape = tuple(int(d) for d in dims)
    if any(d < 1 or d > arguments.MAX_SIZE for d in shape):
        raise ProfileError(f"--shapes {spec!r}: every dim must be a positive integer up to {arguments.MAX_SIZE}")
    names = dtype_names()
    dtype_name = dtype_name or "float32"
    if dtype_name not in names:
        raise ProfileError(f"--shapes {spec!r}: unknown dtype {dtype_name!r}; expected one of {', '.join(names)}")
    return shape, names[dtype_name]


def _kernel_file(ref: str) -> tuple[str, str]:
    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise ProfileError(f"{ref!r}: expected FILE.py:KERNEL")
    if not path.endswith(".py"):
        raise ProfileError(f"{path}: a kernel file is a Python file (FILE.py:KERNEL)")
    return check_python_source(path, "kernel file"), name


def _check_arity(kernel, name: str, count: int) -> None:
    """No more --shapes arrays than the kernel has positional parameters (said at the kernel's
    line; too few is kernel_arguments' to say, as --arg may give the rest)."""
    func = _function(kernel)
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return  # not introspectable: the tracer checks the call
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if count > len(positional):
        code = getattr(func, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}: " if code else ""
        raise ProfileError(f"{where}kernel {name!r} takes {len(positional)} positional argument(s) "
                           f"({', '.join(positional)}); --shapes gives {count} arrays")


def run(args) -> int:
    from neuronxsim.importer import installed

    path, name = _kernel_file(args.kernel)
    specs = [parse_shape(s) for s in args.shapes]
    output = OutputSet(args.output, "profile", inputs=(path,))
    if args.mode == "full":  # inputs are drawn as float64 and then cast: both are held at once
        memory.check(sum(math.prod(s) * (8 + dt.itemsize) for s, dt in specs),
                     f"the inputs of {args.kernel}", "Use smaller --shapes or --mode timing.")
    with installed(allow_shadowing=args.allow_shadowing), _folder_on_path(path):
        with user_code(path):
            namespace = runpy.run_path(path, run_name="__neuronxsim_profile__")
        if name not in namespace:
            raise ProfileError(f"{path} defines no {name!r}")
        kernel = namespace[name]
        _check_arity(kernel, name, len(specs))
        kwargs = kernel_arguments(kernel, len(specs), args.arg)
        rng = np.random.default_rng(args.seed)
        arrays = [rng.standard_normal(s).astype(dt) if args.mode == "full"
                  else np.broadcast_to(np.zeros((), dt), s)  # timing: the shape and dtype, no memory
                  for s, dt in specs]
        with user_code(path):
            prof = _profile(kernel, arrays, kwargs, args.arch, args.mode, args.max_instructions)
    r = prof.result
    printing.warn_unwritten_outputs(r)
    with output as out:
        out.write_with("trace.json", r.write_trace)
        out.write_with("timeline.png", files.timeline_writer(r, [], f"{args.kernel}: {r.total_ns / 1e3:.1f} us"))
    rec = r.instructions
    lines = []
    if len(rec):
        sources, inverse = np.unique(rec["source"], return_inverse=True)
        busy = np.bincount(inverse.ravel(), weights=rec["busy_ns"], minlength=len(sources))
        counts = np.bincount(inverse.ravel(), minlength=len(sources))
        lines = [{"source": str(sources[i]), "busy_ns": float(busy[i]), "instructions": int(counts[i])}
                 for i in np.argsort(-busy)[:args.top]]

    def text():
        print(prof.summary())
        if lines:
            print("busiest source lines (busy time, instructions):")
            for line in lines:
                print(f"  {line['source'] or '(no source)':<48} {line['busy_ns'] / 1e3:9.2f} us  {line['instructions']:6d}")
        print(f"wrote {args.output}/: trace.json, timeline.png")

    printing.emit(args, {"command": "profile", "kernel": args.kernel, "arch": r.arch, "mode": args.mode, "seed": args.seed,
                         "shapes": args.shapes, "total_ns": r.total_ns, "instructions": r.instruction_count,
                         "pe_utilization": prof.pe_utilization, "pe_mfu": r.pe_mfu,
                         "engine_busy": {e: s.utilization for e, s in r.engines.items()},
                         "busiest_source_lines": lines,
                         "unwritten_outputs": [u.to_json() for u in r.unwritten_outputs], "output": args.output}, text)
    return 0


@contextlib.contextmanager
def _folder_on_path(path: str):
    """The kernel file's folder first on sys.path while it is loaded and traced (as ``python
    FILE.py`` has it), so that it imports its neighbours."""
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


def _function(kernel):
    """The Python function of a kernel object of either dialect (or a plain function)."""
    for attr in ("kernel", "func"):  # (launched / grid kernels hold a kernel, kernels a func)
        inner = getattr(kernel, attr, None)
        if inner is not None and not isinstance(inner, (int, tuple)):
            return _function(inner)
    if not callable(kernel):
        raise ProfileError(f"{kernel!r} is not a kernel")
    return kernel


def kernel_arguments(kernel, arrays: int, specs: list) -> dict:
    """The ``--arg NAME=VALUE`` values by name: each a parameter of the kernel not taken by one
    of the ``arrays`` positional arrays, its value a Python literal (else the text)."""
    params = inspect.signature(_function(kernel)).parameters
    names = [n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [n for n, p in params.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:arrays]
    values = {}
    for spec in specs:
        name, eq, text = spec.partition("=")
        name = name.strip()
        if not eq or not name:
            raise ProfileError(f"--arg {spec!r}: expected NAME=VALUE, e.g. pool_size=2")
        if name not in names:
            raise ProfileError(f"--arg {name}: the kernel has no parameter {name!r} (its "
                               f"parameters: {', '.join(names)})")
        if name in positional:
            raise ProfileError(f"--arg {name}: that parameter already takes an array from "
                               "--shapes")
        if name in values:
            raise ProfileError(f"--arg {name}: given twice")
        try:  # (as sweep reads them: a near-literal such as false refused, any text else a string)
            values[name] = space.value(text, f"--arg {name}")
        except space.SweepError as e:
            raise ProfileError(str(e)) from None
    missing = [n for n in names[len(positional):] if n not in values and
               params[n].default is inspect.Parameter.empty]
    if missing:
        raise ProfileError(f"the kernel needs {', '.join(repr(m) for m in missing)}: give an array "
                           "with --shapes or a value with --arg NAME=VALUE")
    return values


def _profile(kernel, arrays, kwargs, arch, mode, max_instructions):
    """Profiles a kernel of either dialect."""
    from neuronxsim.nki06.kernel import Kernel, LaunchedKernel
    if isinstance(kernel, (Kernel, LaunchedKernel)):
        from neuronxsim.nki06.kernel import profile
        return profile(kernel, *arrays, arch=arch, mode=mode, max_instructions=max_instructions,
                       **kwargs)
    import neuronxsim.nki as nki
    return nki.profile_kernel(kernel, *arrays, arch=arch or "trn1", mode=mode,
                              max_instructions=max_instructions, **kwargs)


"""``neuronxsim profile file.py:kernel --shapes 128x512 128x512:bfloat16``: an NKI kernel traced
and simulated on seeded random inputs of the given shapes; prints time, engine use and the
kernel's busiest source lines, and writes trace.json and timeline.png."""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import runpy
import sys

import numpy as np

from neuronxsim import pipeline
from neuronxsim.cli import files
from neuronxsim.errors import NeuronxsimError


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
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", default="neuronxsim-profile", help="output folder (default ./neuronxsim-profile)")
    p.add_argument("--top", type=int, default=8, help="source lines to list (default 8)")
    p.set_defaults(func=run)


def _array(spec: str, rng, values: bool = True) -> np.ndarray:
    from neuronxsim.nki import language as nl

    shape_text, _, dtype_name = spec.partition(":")
    try:
        shape = tuple(int(d) for d in shape_text.lower().split("x"))
    except ValueError:
        shape = ()
    if not shape or any(d < 1 for d in shape):
        raise ProfileError(f"--shapes: {spec!r}; expected dims joined by 'x', e.g. 128x512 or 128x512:bfloat16")
    dtype = getattr(nl, dtype_name or "float32", None)
    if dtype is None:
        raise ProfileError(f"--shapes: {spec!r}: unknown dtype {dtype_name!r} (an nki.language dtype, e.g. bfloat16)")
    if not values:  # timing mode: the shape and dtype, no memory
        return np.broadcast_to(np.zeros((), np.dtype(dtype)), shape)
    return rng.standard_normal(shape).astype(np.dtype(dtype))


def _kernel(ref: str):
    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise ProfileError(f"{ref!r}: expected FILE.py:KERNEL")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    namespace = runpy.run_path(path, run_name="__neuronxsim_profile__")
    if name not in namespace:
        raise ProfileError(f"{path} defines no {name!r}")
    return namespace[name]


def run(args) -> int:
    from neuronxsim.importer import installed

    rng = np.random.default_rng(args.seed)
    arrays = [_array(s, rng, values=args.mode == "full") for s in args.shapes]
    with installed(allow_shadowing=args.allow_shadowing), _folder_on_path(args.kernel):
        kernel = _kernel(args.kernel)
        kwargs = kernel_arguments(kernel, len(arrays), args.arg)
        os.makedirs(args.output, exist_ok=True)
        out = os.path.abspath(args.output)
        prof = _profile(kernel, arrays, kwargs, args.arch, args.mode)
    r = prof.result
    files.write_trace(r, os.path.join(out, "trace.json"))
    files.write_timeline(r, [], os.path.join(out, "timeline.png"), f"{args.kernel}: {r.total_ns / 1e3:.1f} us")
    print(prof.summary())
    rec = r.instructions
    if len(rec):
        sources, inverse = np.unique(rec["source"], return_inverse=True)
        busy = np.bincount(inverse.ravel(), weights=rec["end_ns"] - rec["start_ns"], minlength=len(sources))
        counts = np.bincount(inverse.ravel(), minlength=len(sources))
        print("busiest source lines (engine time, instructions):")
        for i in np.argsort(-busy)[:args.top]:
            print(f"  {sources[i] or '(no source)':<48} {busy[i] / 1e3:9.2f} us  {counts[i]:6d}")
    print(f"wrote {out}/: trace.json, timeline.png")
    return 0


@contextlib.contextmanager
def _folder_on_path(ref: str):
    """The kernel file's folder first on sys.path while it is loaded and traced (as ``python
    FILE.py`` has it), so that it imports its neighbours."""
    folder = os.path.dirname(os.path.abspath(ref.rpartition(":")[0] or ref))
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
        try:
            values[name] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            values[name] = text
    missing = [n for n in names[len(positional):] if n not in values and
               params[n].default is inspect.Parameter.empty]
    if missing:
        raise ProfileError(f"the kernel needs {', '.join(repr(m) for m in missing)}: give an array "
                           "with --shapes or a value with --arg NAME=VALUE")
    return values


def _profile(kernel, arrays, kwargs, arch, mode):
    """Profiles a kernel of either dialect."""
    from neuronxsim.nki06.kernel import Kernel, LaunchedKernel
    if isinstance(kernel, (Kernel, LaunchedKernel)):
        from neuronxsim.nki06.kernel import profile
        return profile(kernel, *arrays, arch=arch, mode=mode, **kwargs)
    import neuronxsim.nki as nki
    return nki.profile(kernel, *arrays, arch=arch or "trn1", mode=mode, **kwargs)


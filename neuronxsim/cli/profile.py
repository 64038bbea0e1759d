"""``neuronxsim profile file.py:kernel --shapes 128x512 128x512:bfloat16``: an NKI kernel traced
and simulated on seeded random inputs of the given shapes; prints time, engine use and the
kernel's busiest source lines, and writes trace.json and timeline.png."""

from __future__ import annotations

import os
import runpy

import numpy as np

from neuronxsim import pipeline
from neuronxsim.cli import files
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.errors import NeuronxsimError


class ProfileError(NeuronxsimError, ValueError):
    """A bad kernel reference or --shapes argument."""


def add_parser(sub) -> None:
    p = sub.add_parser("profile", help="trace and simulate an NKI kernel on random inputs")
    p.add_argument("kernel", help="FILE.py:NAME of an @nki.jit kernel")
    p.add_argument("--shapes", nargs="+", required=True, metavar="SHAPE[:DTYPE]",
                   help="one per kernel argument, e.g. 128x512 or 128x512:bfloat16 (default float32)")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default="trn1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", default="neuronxsim-profile", help="output folder (default ./neuronxsim-profile)")
    p.add_argument("--top", type=int, default=8, help="source lines to list (default 8)")
    p.set_defaults(func=run)


def _array(spec: str, rng) -> np.ndarray:
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
    import neuronxsim.nki as nki

    output = OutputSet(args.output, "profile")
    kernel = _kernel(args.kernel)
    rng = np.random.default_rng(args.seed)
    arrays = [_array(s, rng) for s in args.shapes]
    prof = nki.profile(kernel, *arrays, arch=args.arch)
    r = prof.result
    with output as out:
        out.write_with("trace.json", r.write_trace)
        out.write_with("timeline.png", files.timeline_writer(r, [], f"{args.kernel}: {r.total_ns / 1e3:.1f} us"))
    print(prof.summary())
    rec = r.instructions
    if len(rec):
        sources, inverse = np.unique(rec["source"], return_inverse=True)
        busy = np.bincount(inverse.ravel(), weights=rec["end_ns"] - rec["start_ns"], minlength=len(sources))
        counts = np.bincount(inverse.ravel(), minlength=len(sources))
        print("busiest source lines (engine time, instructions):")
        for i in np.argsort(-busy)[:args.top]:
            print(f"  {sources[i] or '(no source)':<48} {busy[i] / 1e3:9.2f} us  {counts[i]:6d}")
    print(f"wrote {args.output}/: trace.json, timeline.png")
    return 0

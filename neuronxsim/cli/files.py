"""Writing the command line's result files: each atomically (a temporary beside it, renamed into
place), so an interrupted run never leaves a half-written file."""

from __future__ import annotations

import json
import os

import numpy as np

from neuronxsim import bir


def _replace_from_tmp(path: str, write) -> None:
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f".tmp-{os.getpid()}-{os.path.basename(path)}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path: str, obj) -> None:
    bir.atomic_write_text(path, json.dumps(obj, indent=1) + "\n")


def write_trace(result, path: str) -> None:
    """The simulator's Chrome trace-event file (Perfetto, chrome://tracing)."""
    _replace_from_tmp(path, result.write_trace)


def write_npz(path: str, arrays: dict) -> None:
    """Arrays as .npz; bfloat16 and fp8 arrays are stored as float32 (lossless, and readable
    without ml_dtypes)."""
    plain = {k: (np.asarray(v, np.float32) if np.asarray(v).dtype.kind == "V" or
                 np.asarray(v).dtype.name in ("bfloat16", "float8_e4m3", "float8_e5m2", "float8_e4m3fn")
                 else np.asarray(v)) for k, v in arrays.items()}

    def save(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **plain)

    _replace_from_tmp(path, save)


def write_timeline(result, rows, path: str, title: str) -> None:
    from neuronxsim.cli.kernel_report import timeline_data
    from neuronxsim.report.timeline import render_timeline

    render_timeline(path, timeline_data(result, rows), title=title)

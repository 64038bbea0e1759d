"""Writers of the command line's result files, each taking the path to write (an
``OutputSet``'s staging folder makes the whole set appear at once)."""

from __future__ import annotations

import numpy as np


def npz_writer(arrays: dict):
    """Arrays as .npz; bfloat16 and fp8 arrays are stored as float32 (lossless, and readable
    without ml_dtypes)."""
    plain = {k: (np.asarray(v, np.float32) if np.asarray(v).dtype.kind == "V" or
                 np.asarray(v).dtype.name in ("bfloat16", "float8_e4m3", "float8_e5m2", "float8_e4m3fn")
                 else np.asarray(v)) for k, v in arrays.items()}

    def write(path: str) -> None:
        with open(path, "wb") as f:
            np.savez(f, **plain)
    return write


def timeline_writer(result, rows, title: str):
    """The per-engine timeline picture (PNG) of a simulator result."""
    from neuronxsim.cli.kernel_report import timeline_data
    from neuronxsim.report.timeline import render_timeline

    return lambda path: render_timeline(path, timeline_data(result, rows), title=title)

"""The per-engine timeline picture: one row per track of the trace (engine, sub-track, DMA
queue), time left to right.

Each pixel column of a row is shaded by how much of that column's time the row has a slice (so a
million instructions render as readable density, not as overdrawn slivers) and coloured by the
kernel that kept it busiest there. A strip above the rows shows each kernel's span; the figure
right of a row and the lines under the legend are given (the text report prints the same ones:
neuronxsim/report/busy.py), never measured from the pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from neuronxsim.report._font6x10 import CELL_HEIGHT
from neuronxsim.report.canvas import Canvas
from neuronxsim.report.png import write_png

# Tableau-like palette: distinct, readable on white.
PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
SUBPIXELS = 8  # time resolution inside one pixel column


@dataclass(frozen=True)
class TimelineData:
    """What the picture shows. Arrays have one entry per instruction."""
    tracks: Sequence[str]          # row labels, top to bottom
    track_of: np.ndarray           # int: row of each instruction
    start_ns: np.ndarray
    end_ns: np.ndarray
    group_of: np.ndarray | None = None   # int: kernel of each instruction (colour), or None
    group_names: Sequence[str] = ()
    figures: Sequence[str] = ()          # per row, printed right of it ("" or absent: none)
    notes: Sequence[str] = ()            # lines under the legend


def _nice_step(span: float, target_ticks: int = 8) -> float:
    raw = span / max(1, target_ticks)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _format_time(ns: float, step: float) -> str:
    if step >= 1e6:
        return f"{ns / 1e6:g}ms"
    if step >= 1e3:
        return f"{ns / 1e3:g}us"
    return f"{ns:g}ns"


def _coverage(cols: int, x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """Busy fraction per pixel column for intervals [x0, x1) given in (fractional) columns."""
    fine = cols * SUBPIXELS
    a = np.clip(np.floor(x0 * SUBPIXELS).astype(np.int64), 0, fine)
    b = np.clip(np.ceil(x1 * SUBPIXELS).astype(np.int64), 0, fine)
    b = np.maximum(b, np.minimum(a + 1, fine))  # a zero-length instruction still shows
    diff = np.bincount(a, minlength=fine + 1) - np.bincount(b, minlength=fine + 1)
    busy = np.cumsum(diff[:-1]) > 0
    return busy.reshape(cols, SUBPIXELS).mean(axis=1)


def render_timeline(path, data: TimelineData, title: str = "", width: int = 1400) -> None:
    """Writes the timeline of `data` as a PNG at `path` (atomically)."""
    n_tracks = len(data.tracks)
    groups = list(data.group_names) or ["instructions"]
    group_of = (np.asarray(data.group_of, np.int64) if data.group_of is not None
                else np.zeros(len(data.start_ns), np.int64))
    t0 = float(np.min(data.start_ns)) if len(data.start_ns) else 0.0
    t1 = float(np.max(data.end_ns)) if len(data.end_ns) else 1.0
    span = max(t1 - t0, 1e-9)

    label_w = max(Canvas.text_width(t) for t in list(data.tracks) + ["kernels"]) + 12
    figures = list(data.figures) + [""] * (n_tracks - len(data.figures))
    share_w = max(Canvas.text_width(f) for f in figures + ["100.0%"]) + 12
    plot_x0, plot_x1 = label_w, width - share_w
    cols = plot_x1 - plot_x0
    row_h, gap = 18, 4
    top = 8 + (CELL_HEIGHT + 8 if title else 0)
    strip_y = top
    rows_y = strip_y + row_h + 2 * gap
    axis_y = rows_y + n_tracks * (row_h + gap) + 2
    legend_y = axis_y + CELL_HEIGHT + 12
    legend_rows = math.ceil(len(groups) / max(1, (width - 20) // 220))
    notes_y = legend_y + legend_rows * (CELL_HEIGHT + 6) + 4
    height = notes_y + len(data.notes) * (CELL_HEIGHT + 4) + 8

    canvas = Canvas(width, height)
    if title:
        canvas.text(8, 8, title)
    scale = cols / span
    x0 = (np.asarray(data.start_ns, float) - t0) * scale
    x1 = (np.asarray(data.end_ns, float) - t0) * scale

    # Kernel strip: each kernel's span from its first start to its last end.
    canvas.text(4, strip_y + 4, "kernels", (90, 90, 90))
    for g in range(len(groups)):
        sel = group_of == g
        if np.any(sel):
            a, b = int(np.min(x0[sel])), int(math.ceil(np.max(x1[sel])))
            canvas.rect(plot_x0 + a, strip_y, plot_x0 + max(b, a + 1), strip_y + row_h, PALETTE[g % len(PALETTE)])

    # Group instructions by (row, kernel) once: one sort instead of a mask per pair.
    n_groups = max(len(groups), int(np.max(group_of)) + 1 if len(group_of) else 1)
    keys = np.asarray(data.track_of, np.int64) * n_groups + group_of
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    bounds = np.flatnonzero(np.diff(sorted_keys)) + 1
    runs = {int(sorted_keys[lo]): order[lo:hi]
            for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(order)]) if hi > lo}

    for r, label in enumerate(data.tracks):
        y = rows_y + r * (row_h + gap)
        canvas.rect(plot_x0, y, plot_x1, y + row_h, (242, 242, 242))
        canvas.text(4, y + (row_h - CELL_HEIGHT) // 2, label)
        best = np.zeros(cols)
        colour = np.zeros((cols, 3))
        total = np.zeros(cols)
        for g in range(n_groups):
            idx = runs.get(r * n_groups + g)
            if idx is None:
                continue
            cov = _coverage(cols, x0[idx], x1[idx])
            total = np.maximum(total, cov)
            better = cov > best
            best[better] = cov[better]
            colour[better] = PALETTE[g % len(PALETTE)]
        busy = np.minimum(total, 1.0)
        shade = 242 - (242 - colour) * (0.25 + 0.75 * busy[:, None])
        shade[busy == 0] = 242
        canvas.pixels[y:y + row_h, plot_x0:plot_x1] = shade.astype(np.uint8)[None, :, :]
        if figures[r]:
            fx = width - 4 - Canvas.text_width(figures[r])  # right-aligned
            canvas.text(fx, y + (row_h - CELL_HEIGHT) // 2, figures[r])

    # Time axis.
    canvas.rect(plot_x0, axis_y, plot_x1, axis_y + 1, (0, 0, 0))
    step = _nice_step(span)
    t = 0.0
    while t <= span + 1e-9:
        x = plot_x0 + int(t * scale)
        canvas.rect(x, axis_y - 3, x + 1, axis_y + 3, (0, 0, 0))
        label = _format_time(t, step)
        lx = min(max(plot_x0, x - Canvas.text_width(label) // 2), width - Canvas.text_width(label) - 2)
        canvas.text(lx, axis_y + 5, label, (60, 60, 60))
        t += step

    # Legend.
    per_row = max(1, (width - 20) // 220)
    for g, name in enumerate(groups):
        lx = 10 + (g % per_row) * 220
        ly = legend_y + (g // per_row) * (CELL_HEIGHT + 6)
        canvas.rect(lx, ly, lx + 10, ly + CELL_HEIGHT, PALETTE[g % len(PALETTE)])
        canvas.text(lx + 14, ly, name[:33])
    for k, line in enumerate(data.notes):
        canvas.text(10, notes_y + k * (CELL_HEIGHT + 4), line)
    write_png(path, canvas.pixels)

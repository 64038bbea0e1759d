"""The sweep picture: the simulated time of every configuration, fastest first, one bar each,
coloured by the value of one parameter, so that which values make a kernel fast shows at a
glance."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from neuronxsim.report._font6x10 import CELL_HEIGHT
from neuronxsim.report.canvas import Canvas
from neuronxsim.report.png import write_png
from neuronxsim.report.timeline import PALETTE, _nice_step

_AXIS = (60, 60, 60)
_GRID = (232, 232, 232)


def value_colours(values: Sequence[str]) -> dict:
    """A colour per distinct value (in the order given): the palette's, or, for more values than
    it has, a blue-to-red ramp in that order."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) <= len(PALETTE):
        return {v: PALETTE[i] for i, v in enumerate(distinct)}
    lo, hi = np.array((31, 119, 180), float), np.array((214, 39, 40), float)
    n = len(distinct) - 1
    return {v: tuple(int(c) for c in lo + (hi - lo) * i / n) for i, v in enumerate(distinct)}


def render_sweep(path, times_ns: Sequence[float], labels: Sequence[str], colour_name: str,
                 title: str = "", note: str = "", width: int = 1200, height: int = 420) -> None:
    """Writes the picture (PNG, atomically): one bar per configuration of ``times_ns``, sorted,
    coloured by its entry of ``labels`` (the value of parameter ``colour_name``, as text; the
    legend lists the values in the order they first appear in ``labels``). ``note`` goes under
    the legend (e.g. how many configurations failed)."""
    times = np.asarray(times_ns, float)
    order = np.argsort(times, kind="stable")
    colours = value_colours(list(labels))
    legend = list(colours)

    top = 8 + (CELL_HEIGHT + 10 if title else 0)
    axis_w = Canvas.text_width("10000.0 us") + 10
    plot_x0, plot_x1 = axis_w, width - 12
    per_row = max(1, (width - 20) // 180)
    legend_rows = 1 + math.ceil(len(legend) / per_row) + (1 if note else 0)
    plot_y0, plot_y1 = top, height - (CELL_HEIGHT + 14) - legend_rows * (CELL_HEIGHT + 6) - 8
    canvas = Canvas(width, height)
    if title:
        canvas.text(8, 8, title)

    t_max = float(times.max()) if len(times) else 1.0
    step = _nice_step(t_max, 6)
    y_max = step * math.ceil(t_max / step) if t_max > 0 else 1.0
    scale = (plot_y1 - plot_y0) / y_max
    t = 0.0
    while t <= y_max + 1e-9:
        y = plot_y1 - int(round(t * scale))
        canvas.rect(plot_x0, y, plot_x1, y + 1, _GRID)
        label = f"{t / 1e3:g} us"
        canvas.text(plot_x0 - 6 - Canvas.text_width(label), y - CELL_HEIGHT // 2, label, _AXIS)
        t += step
    canvas.rect(plot_x0, plot_y0, plot_x0 + 1, plot_y1 + 1, _AXIS)
    canvas.rect(plot_x0, plot_y1, plot_x1, plot_y1 + 1, _AXIS)

    n = len(order)
    cols = plot_x1 - plot_x0 - 2
    for rank, i in enumerate(order):
        x0 = plot_x0 + 2 + (rank * cols) // max(n, 1)
        x1 = plot_x0 + 2 + ((rank + 1) * cols) // max(n, 1)
        bar = max(1, x1 - x0 - (1 if x1 - x0 > 3 else 0))
        y = plot_y1 - max(1, int(round(times[i] * scale)))
        canvas.rect(x0, y, x0 + bar, plot_y1, colours[labels[i]])
    axis_label = f"{n} configuration{'s' if n != 1 else ''}, fastest first"
    canvas.text(plot_x0 + (cols - Canvas.text_width(axis_label)) // 2, plot_y1 + 6, axis_label, _AXIS)

    ly = plot_y1 + CELL_HEIGHT + 14
    canvas.text(10, ly, f"colour: {colour_name}", _AXIS)
    for k, value in enumerate(legend):
        lx = 10 + (k % per_row) * 180
        y = ly + (1 + k // per_row) * (CELL_HEIGHT + 6)
        canvas.rect(lx, y, lx + 10, y + CELL_HEIGHT, colours[value])
        canvas.text(lx + 14, y, value[:26])
    if note:
        canvas.text(10, ly + (legend_rows - 1) * (CELL_HEIGHT + 6), note, _AXIS)
    write_png(path, canvas.pixels)


__all__ = ["render_sweep", "value_colours"]

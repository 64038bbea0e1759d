"""What a sweep ends with: the counts, a table of the best configurations and the picture."""

from __future__ import annotations

import json
import os
from typing import Callable, Optional

from neuronxsim.sweep.job import DMA_MAX
from neuronxsim.sweep.space import _NEAR_LITERALS, SweepError, literal

PICTURE = "sweep.png"
_TABLE_ENGINES = ("PE", "ACT", "DVE", "Pool", DMA_MAX)


def _text(value) -> str:
    """A parameter's value as the table shows it: as Python writes it (``False``, ``None``,
    ``(1, 2)`` read back from results.jsonl as ``[1, 2]``), a string bare unless it would read as
    another value (``"2"``, ``"False"``: then quoted), so that two values never look the same."""
    if isinstance(value, str) and literal(value) == value and \
            value.strip().lower() not in _NEAR_LITERALS and value == value.strip():
        return value
    return repr(value)


def counts(rows: list) -> dict:
    out = {"configurations": len(rows)}
    for row in rows:
        out[row["status"]] = out.get(row["status"], 0) + 1
    return out


def best(rows: list, top: int) -> list:
    """The ``top`` fastest configurations that ran ("ok") and wrote every output whole, fastest
    first: one that leaves part of an output unwritten (``unwritten_outputs``) did
    less work than the kernel is for, so its time would rank it above the kernels that do it."""
    ok = [r for r in rows if r["status"] == "ok" and r.get("total_ns") is not None
          and not r.get("unwritten_outputs")]
    return sorted(ok, key=lambda r: r["total_ns"])[:top]


def unranked(rows: list) -> list:
    """The "ok" configurations :func:`best` leaves out for leaving outputs partly unwritten."""
    return [r for r in rows if r["status"] == "ok" and r.get("unwritten_outputs")]


def _varying(rows: list) -> tuple[bool, bool]:
    """Whether the rows differ in shapes, and in generation."""
    return len({tuple(r["shapes"]) for r in rows}) > 1, len({r["arch"] for r in rows}) > 1


def table(rows: list, names: list, top: int) -> str:
    """The best configurations as an aligned text table: rank, the parameters (and shapes and
    generation where the sweep varies them), time, engine busy shares, PE MFU, instructions; a
    rank marked ``*`` fits only reordered (its row's ``reordered``), said under the table."""
    if top == 0:
        return ""  # (--top 0: no table asked for)
    chosen = best(rows, top)
    partial = unranked(rows)
    note = (f"not ranked: {len(partial)} configuration(s) that ran but left part of an output "
            "unwritten (unwritten_outputs in results.jsonl)") if partial else ""
    if not chosen:
        return "\n".join(["no configuration ran successfully"] + ([note] if note else []))
    shapes, archs = _varying(rows)
    head = ["#"] + names + (["shapes"] if shapes else []) + (["arch"] if archs else [])
    head += ["time us"] + list(_TABLE_ENGINES) + ["MFU", "instrs"]
    lines = [head]
    for i, r in enumerate(chosen, 1):
        line = [f"{i}*" if r.get("reordered") else str(i)] + [_text(r["params"].get(n)) for n in names]
        line += ([" ".join(r["shapes"])] if shapes else []) + ([r["arch"]] if archs else [])
        busy = r.get("engine_busy", {})
        line += [f"{r['total_ns'] / 1e3:.1f}"] + [f"{100 * busy.get(e, 0):.0f}%" for e in _TABLE_ENGINES]
        line += [f"{100 * r.get('pe_mfu', 0):.1f}%", str(r.get("instructions", ""))]
        lines.append(line)
    widths = [max(len(l[i]) for l in lines) for i in range(len(head))]
    text_cols = {head.index(n) for n in ("shapes", "arch") if n in head}
    out = []
    for k, l in enumerate(lines):
        out.append("  ".join(c.ljust(w) if i in text_cols else c.rjust(w)
                             for i, (c, w) in enumerate(zip(l, widths))).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    if any(r.get("reordered") for r in chosen):
        out.append("* fits on chip only with instructions moved out of program order, as the "
                   "compiler may or may not do (docs/nki-tracer.md, Reordering to fit)")
    if note:
        out.append(note)
    return "\n".join(out)


def colour_values(rows: list, colour: str) -> list:
    """Each row's value of ``colour`` (a parameter, "shapes" or "arch"), as text."""
    if colour == "shapes":
        return [" ".join(r["shapes"]) for r in rows]
    if colour == "arch":
        return [r["arch"] for r in rows]
    return [_text(r["params"][colour]) for r in rows]


def check_colour(colour: Optional[str], names: list) -> str:
    """The parameter the picture colours by: ``colour``, or the first grid parameter."""
    if colour is None:
        return names[0]
    if colour not in names and colour not in ("shapes", "arch"):
        raise SweepError(f"--colour {colour}: not a --grid parameter (they are: {', '.join(names)}; "
                         "'shapes' and 'arch' also work)")
    return colour


def picture(rows: list, folder: str, colour: str, kernel: str,
            write: Callable[[str, Callable[[str], object]], None] = lambda path, writer: writer(path)) -> Optional[str]:
    """Writes ``folder``/sweep.png; returns its path (None when no configuration ran).
    ``write(path, writer)`` writes the file with ``writer(path_to_write)`` (the command line
    replaces it in one rename)."""
    from neuronxsim.report.sweep import render_sweep

    ok = [r for r in rows if r["status"] == "ok" and r.get("total_ns") is not None
          and not r.get("unwritten_outputs")]  # (as best() ranks them)
    if not ok:
        return None
    c = counts(rows)
    partial = len(unranked(rows))
    if partial:
        c["ok"] -= partial
        c["ok leaving an output partly unwritten"] = partial
    fastest = min(ok, key=lambda r: r["total_ns"])
    title = (f"{kernel}: {len(rows)} configurations, best {fastest['total_ns'] / 1e3:.1f} us "
             f"({', '.join(f'{k}={_text(v)}' for k, v in fastest['params'].items())})")
    others = len(rows) - len(ok)
    note = ""
    if others:
        note = "not shown: " + ", ".join(f"{c[s]} {s}" for s in sorted(c)
                                         if s not in ("ok", "configurations") and c[s])
    path = os.path.join(folder, PICTURE)
    write(path, lambda p: render_sweep(p, [r["total_ns"] for r in ok], colour_values(ok, colour), colour, title, note))
    return path


__all__ = ["counts", "best", "table", "picture", "check_colour", "colour_values", "PICTURE"]

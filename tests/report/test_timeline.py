"""The PNG writer and the timeline picture: what it draws, and that it prints the figures the text
prints."""

import struct
import zlib

import numpy as np
import pytest

import trace_rules as tr
from neuronxsim import cli, sim
from neuronxsim.cli import kernel_report
from neuronxsim.report.busy import busy_lines, core_busy
from neuronxsim.report.canvas import Canvas
from neuronxsim.report.png import encode_png, write_png
from neuronxsim.report.timeline import PALETTE, TimelineData, render_timeline


def decode_png(data: bytes) -> np.ndarray:
    """Decodes the 8-bit RGB, filter-0 PNGs encode_png writes (an independent reader for tests)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w, h = 8, b"", None, None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", payload[:10])
            assert (depth, colour) == (8, 2)
        elif kind == b"IDAT":
            idat += payload
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    assert np.all(raw[:, 0] == 0)
    return raw[:, 1:].reshape(h, w, 3)


def test_png_round_trip(tmp_path):
    img = np.random.default_rng(1).integers(0, 256, (7, 13, 3), dtype=np.uint8)
    assert np.array_equal(decode_png(encode_png(img)), img)
    write_png(tmp_path / "x.png", img)
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"]
    assert np.array_equal(decode_png((tmp_path / "x.png").read_bytes()), img)


def test_text_draws_glyph_pixels():
    c = Canvas(20, 12)
    c.text(0, 0, "I")
    assert (c.pixels == 0).any() and (c.pixels[:, 6:] == 255).all()


def test_timeline_shades_busy_time_in_the_kernel_colour(tmp_path):
    # Row 0 busy for the first half by kernel 0, row 1 busy for the second half by kernel 1.
    data = TimelineData(tracks=["PE", "DVE"], track_of=np.array([0, 1]), start_ns=np.array([0.0, 500.0]),
                        end_ns=np.array([500.0, 1000.0]), group_of=np.array([0, 1]), group_names=["mm", "act"])
    render_timeline(tmp_path / "t.png", data, title="test")
    img = decode_png((tmp_path / "t.png").read_bytes())
    colours = {tuple(int(v) for v in px) for px in img.reshape(-1, 3)}
    assert tuple(PALETTE[0]) in colours and tuple(PALETTE[1]) in colours
    # Find the rows: the PE row is kernel-0 coloured on the left and idle grey on the right.
    pe_rows = np.where((img == PALETTE[0]).all(axis=2).sum(axis=1) > 100)[0]
    assert len(pe_rows) > 0
    row = img[pe_rows[-1]]
    blue = np.where((row == PALETTE[0]).all(axis=1))[0]
    grey = np.where((row == (242, 242, 242)).all(axis=1))[0]
    assert blue.max() < grey.max() and blue.min() < grey.min() + 5


def _figures(line: str) -> dict:
    """"  nc0: PE 11.6%, ..., DMA (any queue) 62.1%" -> {"nc0 PE": "11.6%", ...}"""
    core, _, rest = line.strip().partition(": ")
    return {f"{core} {name}": value for name, _, value in (part.rpartition(" ") for part in rest.split(", "))}


def test_the_picture_and_the_text_print_the_same_busy_figures_per_core(small_layer, tmp_path, capsys):
    lowered, _, r = small_layer
    rows = kernel_report.kernel_rows(r, kernel_report.kernel_nodes(lowered))
    data = kernel_report.timeline_data(r, rows)
    lines = busy_lines(r)
    assert data.notes == lines  # printed under the picture's legend
    assert lines[0] == f"engines busy, share of the {r.total_ns / 1e3:.1f} us total, per NeuronCore:"
    figures = {}
    for line in lines[1:]:
        figures.update(_figures(line))
    # Every figure is the simulator's busy time of that core's track (or its PE flops at the PE
    # peak) over the total time; the module's MFU is their mean.
    peak = r.config.pe_bf16_peak_flops_per_ns
    mfu = [c["pe_flops"] / (peak * r.total_ns) for c in r.cores]
    assert [figures[f"nc{c['core']} PE MFU"] for c in r.cores] == [f"{100 * m:.1f}%" for m in mfu]
    assert r.pe_mfu == pytest.approx(np.mean(mfu))
    for c in r.cores:
        for name, (busy_ns, _) in c["tracks"].items():
            key = f"nc{c['core']} {name}"
            if key in figures:
                assert figures[key] == f"{100 * busy_ns / r.total_ns:.1f}%"
    # A row of the picture shows the same figure as the line of its core.
    shown = {label: f for label, f in zip(data.tracks, data.figures) if f}
    assert shown and all(figures[label] == f for label, f in shown.items() if label in figures)
    assert all(label in figures or label.split()[1].startswith("DMA") for label in shown)
    # `run` prints the same lines (timing mode: the same times).
    cli.main(["run", "--tokens", "130", "--hidden", "256", "--q-heads", "4", "--kv-heads", "2", "--head-dim", "64",
              "--intermediate", "384", "--mode", "timing", "--output", str(tmp_path / "run")])
    out = capsys.readouterr().out.splitlines()
    assert out[out.index(lines[0]):out.index(lines[0]) + len(lines)] == lines


def test_every_track_of_the_trace_has_its_row_and_an_idle_core_one_row(small_layer, tmp_path):
    lowered, _, r = small_layer
    data = kernel_report.timeline_data(r, [])
    r.write_trace(tmp_path / "t.json")
    trace = tr.load(tmp_path / "t.json")
    busiest = {b.core: max(b.tracks.values()) for b in core_busy(r)}
    assert busiest[0] > kernel_report.COMPACT_BELOW > busiest[1]  # nc1 runs only the K cache transpose
    for (pid, tid), name in trace.threads.items():
        if pid == 0:
            assert f"nc0 {name}" in data.tracks
    assert [t for t in data.tracks if t.startswith("nc1")] == [
        f"nc1 (all {len({tid % len(sim.TRACKS) for pid, tid in trace.threads if pid == 1})} tracks)"]
    assert "nc0 SP" in data.tracks and any(t.endswith("(pipelined)") for t in data.tracks)
    # Slices land on their rows: the instruction count of each row is that track's.
    counts = np.bincount(data.track_of, minlength=len(data.tracks))
    assert counts.sum() == sum(len(v) for v in trace.tracks.values())
    for row, label in enumerate(data.tracks):
        if label.startswith("nc0 "):
            tid = next(t for (p, t), n in trace.threads.items() if p == 0 and f"nc0 {n}" == label)
            assert counts[row] == len(trace.tracks[(0, tid)])
    render_timeline(tmp_path / "t.png", data, title="small layer")
    img = decode_png((tmp_path / "t.png").read_bytes())
    assert img.shape[1] == 1400


def test_a_kernel_s_time_starts_when_its_first_instruction_issues(small_layer):
    # The module's first kernel starts the run: its first instruction (a DMA) issues at 0, and its
    # span is counted from there, not from the transfer's start one DMA latency later.
    lowered, _, r = small_layer
    first = kernel_report.kernel_rows(r, kernel_report.kernel_nodes(lowered))[0]
    mine = r.instructions[r.instructions["kernel"] == first.name]
    assert mine["issue_ns"].min() == 0.0 < mine["start_ns"].min()
    assert first.start_ns == 0.0 and first.time_ns == pytest.approx(first.end_ns)

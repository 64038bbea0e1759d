"""The rules a trace.json must obey for Perfetto to draw it as the simulator ran it, checked on the
file itself (tests/report/conftest.py puts this directory on sys.path).

Times are read as exact decimals and turned into integer nanoseconds (Perfetto's clock): a "ts" or
"dur" that is not a whole number of nanoseconds is an error.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from decimal import Decimal
from typing import Dict, List, Tuple

#: The simulator's dependency kinds, and which end of the source slice the wait ended at.
FLOW_KINDS = ("RAW", "WAR", "WAW")


def ns(value) -> int:
    """A trace time (microseconds) as integer nanoseconds; refuses fractions of a nanosecond."""
    x = Decimal(value) * 1000
    assert x == x.to_integral_value(), f"{value} us is not a whole number of nanoseconds"
    return int(x)


@dataclasses.dataclass
class Slice:
    pid: int
    tid: int
    start: int
    end: int
    name: str
    args: dict


@dataclasses.dataclass
class Trace:
    doc: dict
    slices: List[Slice]
    flows: Dict[int, Dict[str, dict]]                      # id -> {"s": event, "f": event}
    counters: Dict[Tuple[int, str], List[Tuple[int, float]]]  # (pid, "name unit") -> samples
    threads: Dict[Tuple[int, int], str]
    processes: Dict[int, str]
    tracks: Dict[Tuple[int, int], List[Slice]]  # (pid, tid) -> its slices, in file order


def load(path) -> Trace:
    with open(path) as f:
        doc = json.load(f, parse_float=Decimal)
    slices, flows, threads, processes = [], collections.defaultdict(dict), {}, {}
    counters = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        ph = e["ph"]
        if ph == "X":
            start = ns(e["ts"])
            slices.append(Slice(e["pid"], e["tid"], start, start + ns(e["dur"]), e["name"], e["args"]))
        elif ph in "sf":
            assert ph not in flows[e["id"]], f"flow {e['id']} has two '{ph}' events"
            flows[e["id"]][ph] = e
        elif ph == "C":
            (unit, value), = e["args"].items()
            counters[(e["pid"], f"{e['name']} {unit}")].append((ns(e["ts"]), float(value)))
        elif ph == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif ph == "M" and e["name"] == "process_name":
            processes[e["pid"]] = e["args"]["name"]
    tracks = collections.defaultdict(list)
    for s in slices:
        tracks[(s.pid, s.tid)].append(s)
    return Trace(doc, slices, dict(flows), dict(counters), threads, processes, dict(tracks))


def assert_tracks_nest(trace: Trace) -> int:
    """Every track (pid, tid) is named, and any two of its slices are disjoint or one contains the
    other (Perfetto's rule). Returns the number of slices checked."""
    for key, slices in trace.tracks.items():
        assert all(s.end >= s.start for s in slices), key
        assert key in trace.threads, f"track {key} has slices but no thread_name"
        assert key[0] in trace.processes, f"process {key[0]} has no process_name"
        slices = sorted(slices, key=lambda s: (s.start, -s.end))
        open_ends: List[int] = []  # ends of the slices enclosing the current one
        for s in slices:
            while open_ends and open_ends[-1] <= s.start:
                open_ends.pop()
            assert not open_ends or s.end <= open_ends[-1], (
                f"{trace.threads[key]}: {s.name} [{s.start}, {s.end}) ns overlaps the slice before "
                f"(ending at {open_ends[-1]}) without nesting")
            open_ends.append(s.end)
    return len(trace.slices)


def _bound_slice(trace: Trace, event: dict) -> Slice:
    """The slice a flow event binds to: on its track, starting at its ts (the writer puts flow
    ends at slice starts)."""
    at = ns(event["ts"])
    found = [s for s in trace.tracks.get((event["pid"], event["tid"]), []) if s.start == at]
    if len(found) > 1:
        found = [s for s in found if s.end > s.start]
    assert len(found) == 1, f"flow {event['id']}: {len(found)} slices start at {at} ns on its track"
    return found[0]


def assert_flows_valid(trace: Trace, cfg) -> collections.Counter:
    """Every flow has one start and one end, each on a slice; the source comes first and the
    target starts when the source released what it waited for plus the semaphore wait
    (``cfg.semaphore_wait_ns``): RAW/WAW at the source's end (results visible; a DMA's after its
    completion semaphore, ``cfg.dma_completion_ns``; the PE's PSUM writes without the wait), WAR
    when the source's reads were done (start + busy_ns). Within 1 ns (the trace's instants are
    rounded). Returns the count per kind."""
    kinds = collections.Counter()
    for fid, ends in trace.flows.items():
        assert set(ends) == {"s", "f"}, f"flow {fid} lacks an end: {sorted(ends)}"
        s, f = ends["s"], ends["f"]
        assert s["name"] == f["name"] in FLOW_KINDS and s["cat"] == f["cat"] == "dependency", (s, f)
        assert f.get("bp") == "e", f
        assert s["pid"] == f["pid"], "a flow between NeuronCores"
        src, dst = _bound_slice(trace, s), _bound_slice(trace, f)
        track = trace.threads[(s["pid"], s["tid"])]
        if s["name"] == "WAR":
            released = src.start + src.args["busy_ns"] + cfg.semaphore_wait_ns
        elif track.startswith("DMA"):
            released = src.end + cfg.dma_completion_ns + cfg.semaphore_wait_ns
        else:
            released = src.end + (0 if track.startswith("PE") else cfg.semaphore_wait_ns)
        assert src.start < dst.start, (src, dst)
        assert abs(dst.start - released) <= 1, (
            f"{s['name']} flow {fid}: {dst.name} starts at {dst.start} ns, {src.name} released at {released} ns")
        kinds[s["name"]] += 1
    return kinds


def assert_counters_valid(trace: Trace, sbuf_bytes: int, psum_bytes: int) -> None:
    """Counter tracks: samples from 0 in increasing time, back to 0 at the end; bytes in use are
    whole, never negative and within the memory; rates never negative."""
    for (pid, name), samples in trace.counters.items():
        times = [t for t, _ in samples]
        assert times[0] == 0 and all(a < b for a, b in zip(times, times[1:])), (pid, name)
        values = [v for _, v in samples]
        assert values[-1] == 0 and min(values) >= 0, (pid, name, values[-1], min(values))
        if name.endswith(" in use bytes"):
            cap = sbuf_bytes if name.startswith("SBUF") else psum_bytes
            assert all(v == int(v) for v in values) and max(values) <= cap, (pid, name, max(values), cap)
        else:
            assert name.endswith(" rate GB/s"), name


def integral(samples: List[Tuple[int, float]]) -> float:
    """The area under a step counter (value held until the next sample), in value x ns."""
    return sum(v * (t1 - t0) for (t0, v), (t1, _) in zip(samples, samples[1:]))


def assert_trace_valid(path, result) -> Trace:
    """All of the above on the trace ``result.write_trace(path)`` wrote; also: its slices are
    ``result.slices`` (what the picture draws)."""
    result.write_trace(path)
    trace = load(path)
    assert_tracks_nest(trace)
    cfg = result.config
    assert_flows_valid(trace, cfg)
    assert_counters_valid(trace, cfg.num_partitions * cfg.sbuf_bytes_per_partition,
                          cfg.num_partitions * cfg.psum_bytes_per_partition)
    sl = result.slices
    assert len(sl) == len(trace.slices)
    assert sorted((s.pid, s.start, s.end) for s in trace.slices) == sorted(
        zip(sl["core"].tolist(), sl["start_ns"].tolist(), sl["end_ns"].tolist()))
    return trace

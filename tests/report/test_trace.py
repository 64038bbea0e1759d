"""trace.json as Perfetto draws it: on real traces (a small decoder layer with its 2-core registry
transpose, every NKI tutorial kernel, that 2-core kernel alone) every track obeys the
nesting rule, every flow joins the instruction waited for to the one it delayed at the instant
the wait ended, and the counters hold; on small modules, the exact slices, lanes, flows and
counter values."""

import numpy as np
import pytest

import trace_rules as tr
import tutorial_kernels as tk
import neuronxsim.nki as nki
from neuronxsim import bir, pipeline, sim
from neuronxsim.bir import DType
from neuronxsim.sim.build import ModuleBuilder
from neuronxsim.starfish.penguin import ir

def _two_core_module(tmp_path):
    """The registry's 2-core transpose (IT56, grid 2) alone."""
    p = ir.Program("transpose")
    y = p.tensor("y", [256, 640])
    yt = p.tensor("yt", [640, 256], kind="output")
    p.add(ir.InternalNativeNkiKernel("tiled_pf_transpose", [ir.OpaqueAccess(y)], [ir.OpaqueAccess(yt)], name="tp"))
    return pipeline.resolve(pipeline.lower(p, "trn1", out_dir=tmp_path)).module


def test_the_decoder_layer_trace(small_layer, tmp_path):
    _, _, r = small_layer
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    assert set(trace.processes) == {0, 1}  # the K cache transpose runs on two NeuronCores
    kinds = tr.assert_flows_valid(trace, r.config)
    assert kinds["RAW"] > 100 and kinds["WAR"] > 0
    names = {name for _, name in trace.counters}
    assert {"SBUF in use bytes", "PSUM in use bytes", "DMA0 rate GB/s"} <= names


def test_the_decoder_layer_trace_with_kernel_nodes_timed_whole(small_layer, tmp_path):
    lowered, _, _ = small_layer
    r = sim.simulate(lowered, mode="timing")  # simulate --analytic: each node occupies its core
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    assert np.all(r.slices["whole_core"]) and len(trace.slices) == r.instruction_count
    assert not trace.flows  # a node waits for the whole core before it, never for memory alone


def test_a_two_core_kernel_trace(tmp_path):
    r = sim.simulate(_two_core_module(tmp_path), mode="timing")
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    assert {pid for pid, _ in trace.tracks} == {0, 1}
    assert all(trace.counters[(core, "SBUF in use bytes")] for core in (0, 1))


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


TUTORIALS = {
    "tensor_add": lambda g: (tk.tensor_add_launch(np.zeros((256, 1024), np.float16)),
                             [g.random((256, 1024)).astype(np.float16)] * 2),
    "matmul_tiled": lambda g: (tk.matmul_tiled, [_f32(g, 512, 256), _f32(g, 512, 1024)]),
    "matmul_hoisted": lambda g: (tk.matmul_hoisted, [_f32(g, 512, 256), _f32(g, 512, 1024)]),
    "matmul_blocked": lambda g: (tk.matmul_blocked, [_f32(g, 512, 256), _f32(g, 512, 1024)]),
    "transpose2d": lambda g: (tk.transpose2d_kernel, [np.zeros((5, 12), np.int8), (3, 4)]),
    "avgpool": lambda g: (tk.avgpool_kernel, [_f32(g, 16, 24, 32), 4]),
    "rmsnorm": lambda g: (tk.rmsnorm_kernel, [_f32(g, 250, 512), _f32(g, 512)]),
    "layernorm_v1": lambda g: (tk.layernorm_v1, [_f32(g, 300, 1024), 1e-5, _f32(g, 1024), _f32(g, 1024)]),
    "layernorm_v2": lambda g: (tk.layernorm_v2, [_f32(g, 300, 1024), 1e-5, _f32(g, 1024), _f32(g, 1024)]),
    "softmax": lambda g: (tk.softmax_kernel, [_f32(g, 250, 512)]),
    "attention_v1": lambda g: (tk.attention_fwd_v1, [_f32(g, 128, 128)] * 3),
    "attention_v2": lambda g: (tk.attention_fwd_v2, [_f32(g, 128, 128)] * 3),
    "mamba_v1": lambda g: (tk.mamba_v1, [_f32(g, 2, 256, 512), _f32(g, 2, 256, 512), _f32(g, 256, 4),
                                          _f32(g, 2, 4, 512), _f32(g, 2, 4, 512)]),
    "mamba_v2": lambda g: (tk.mamba_v2, [_f32(g, 2, 256, 512), _f32(g, 2, 256, 512), _f32(g, 256, 4),
                                          _f32(g, 2, 4, 512), _f32(g, 2, 4, 512)]),
}


def test_every_tutorial_kernel_has_a_trace_test():
    assert len(TUTORIALS) == len({name for name in dir(tk) if hasattr(getattr(tk, name), "func")})


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_a_tutorial_kernel_trace(name, tmp_path):
    kernel, args = TUTORIALS[name](np.random.default_rng(0))
    traced = nki.trace_kernel(kernel, *args)
    r = sim.simulate(traced.module, mode="timing")
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    assert len(trace.slices) >= r.instruction_count


def _rec(r, name):
    (i,) = np.flatnonzero(r.instructions["name"] == name)
    return i, r.instructions[i]


def test_back_to_back_instructions_of_one_engine_alternate_with_its_pipelined_sub_track(tmp_path):
    b = ModuleBuilder()
    for i in range(4):
        b.add("Memset", [], [b.tile(b.sbuf(f"s{i}", 128, 512, DType.float32))], name=f"m{i}", constant=1.0)
    r = sim.simulate(b.module, mode="timing")
    lat = sim.latency(b.block[0])
    assert lat["access_ns"] < lat["busy_ns"]  # each overlaps the next one only
    sl = r.slices
    assert sl["lane"].tolist() == [0, 1, 0, 1]
    assert np.all(sl["track"] == sim.TRACKS.index("DVE"))
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    assert sorted(trace.threads.values()) == ["DVE", "DVE (pipelined)"]
    # Perfetto's clock: integer ns, each instant rounded once (durations are differences).
    assert sl["start_ns"].tolist() == [round(x) for x in r.instructions["start_ns"]]
    assert sl["end_ns"].tolist() == [round(x) for x in r.instructions["end_ns"]]
    assert (sl["busy_end_ns"] - sl["start_ns"]).tolist() == [round(x + lat["busy_ns"]) - round(x)
                                                             for x in r.instructions["start_ns"]]


def _flows_module():
    b = ModuleBuilder()
    x = b.input("x", [128, 512], DType.float32)
    x2 = b.input("x2", [128, 512], DType.float32)
    xs, ys, zs = (b.sbuf(n, 128, 512, DType.float32) for n in ("xs", "ys", "zs"))
    b.dma(b.tile(xs), b.full(x), queue=0, name="load")
    b.add("Activation", [b.tile(xs)], [b.tile(ys)], name="act", func=bir.ActivationFunc.Exp)  # RAW on xs
    b.add("Memset", [], [b.tile(zs)], name="zero", constant=0.0)  # no dependency
    b.dma(b.tile(xs), b.full(x2), queue=1, name="reload")  # WAR on xs (act reads it)
    b.add("Memset", [], [b.tile(ys)], name="overwrite", constant=0.0)  # WAW on ys (act writes it)
    for loc in (xs, ys, zs):
        b.dma(b.full(b.output(loc.name + "_out", [128, 512], DType.float32)), b.tile(loc), queue=2,
              name="store_" + loc.name)
    return b


def test_flows_join_each_delayed_instruction_to_the_one_it_waited_for(tmp_path):
    r = sim.simulate(_flows_module().module, mode="timing")
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    by_slice = {(s.pid, s.tid, s.start): s for s in trace.slices}
    flows = {}
    for ends in trace.flows.values():
        src = by_slice[(ends["s"]["pid"], ends["s"]["tid"], tr.ns(ends["s"]["ts"]))]
        dst = by_slice[(ends["f"]["pid"], ends["f"]["tid"], tr.ns(ends["f"]["ts"]))]
        flows[dst.name] = (ends["s"]["name"], src.name)
    assert flows == {"Activation act": ("RAW", "DMA load"),
                     "trigger DMA reload": ("WAR", "Activation act"),  # a DMA waits with its trigger
                     "Memset overwrite": ("WAW", "Activation act"),
                     "trigger DMA store_xs": ("RAW", "DMA reload")}  # the other stores wait for SP
    _, load = _rec(r, "load")
    _, act = _rec(r, "act")
    _, reload = _rec(r, "reload")
    _, overwrite = _rec(r, "overwrite")
    act_busy = sim.latency(next(i for i in _flows_module().block.instructions if i.name == "act"))["busy_ns"]
    sem = r.config.semaphore_wait_ns  # each waiter starts a semaphore wait after what it waited for
    assert act["start_ns"] == pytest.approx(load["end_ns"] + r.config.dma_completion_ns + sem)
    assert reload["issue_ns"] == pytest.approx(act["start_ns"] + act_busy + sem)
    assert overwrite["start_ns"] == pytest.approx(act["end_ns"] + sem)


def test_counters_sum_the_tiles_in_use_and_the_dma_rates(tmp_path):
    b = ModuleBuilder()
    x = b.input("x", [128, 512], DType.bfloat16)
    w = b.input("w", [128, 128], DType.bfloat16)
    y = b.output("y", [128, 512], DType.float32)
    xs, ws = b.sbuf("xs", 128, 512, DType.bfloat16), b.sbuf("ws", 128, 128, DType.bfloat16)
    acc, ys = b.psum("acc", 128, 512), b.sbuf("ys", 128, 512, DType.float32)
    dmas = [b.dma(b.tile(xs), b.full(x), name="load_x"), b.dma(b.tile(ws), b.full(w), queue=1, name="load_w")]
    for i in range(4):
        b.matmul(b.tile(acc), b.tile(ws), b.tile(xs), start=i == 0, stop=i == 3)
    b.add("Activation", [b.tile(acc)], [b.tile(ys)], func=bir.ActivationFunc.Gelu, name="act")
    dmas.append(b.dma(b.full(y), b.tile(ys), queue=2, name="store"))
    r = sim.simulate(b.module, mode="timing")
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    # SBUF: x's tile (128 KiB), then w's (32 KiB) from their loads' starts until the last matmul
    # has read them, which is when its PSUM result is visible and the activation starts; y's tile
    # (256 KiB) from then until the store has read it.
    sbuf = trace.counters[(0, "SBUF in use bytes")]
    assert [v for _, v in sbuf] == [0, 128 * 1024, 160 * 1024, 256 * 1024, 0]
    (_, lx), (_, lw), (_, act), (_, store) = (_rec(r, n) for n in ("load_x", "load_w", "act", "store"))
    assert [t for t, _ in sbuf][1:] == [round(lx["start_ns"]), round(lw["start_ns"]), round(act["start_ns"]),
                                        round(store["end_ns"])]
    psum = trace.counters[(0, "PSUM in use bytes")]
    assert [v for _, v in psum] == [0, 256 * 1024, 0]
    # DMA rates: bytes / payload time while each moves its payload; the area is its bytes within
    # the rounding of its two instants (1 ns x rate).
    for queue, inst in enumerate(dmas):
        lat = sim.latency(inst)
        samples = trace.counters[(0, f"DMA{queue} rate GB/s")]
        rate = lat["bytes"] / lat["dma_transfer_ns"]
        assert [v for _, v in samples] == [0, pytest.approx(rate), 0]
        assert tr.integral(samples) == pytest.approx(lat["bytes"], abs=rate)

"""The scheduling pass's decoding reused by the timing run (sim/ListSchedule.cpp scheduleModule's
`prepared`, Simulator's PreparedProgram constructor): a traced module simulated from it times
exactly as one the simulator prepares afresh, and the simulator refuses it for any run it was not
prepared for."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
import neuronxsim.nki.typing as nt
from neuronxsim import bir, sim
from neuronxsim.errors import SimulationError
from neuronxsim.nki.kernel import traced_kernel
import neuronxsim.nki06 as nki06
import neuronxsim.nki06.language as nl06
from neuronxsim.nki06.kernel import traced as traced06

import tutorial_kernels as tk
from test_schedule import _stream_per_core  # two functions that differ


@nki.jit
def _every_engine(x, w):
    """PE (a matmul group accumulating over two K tiles), ACT, DVE, Pool and DMA on several queues,
    over iterations the pass interleaves."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        acc = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(2):
            xt = nl.load(x[k * 128:(k + 1) * 128, i * 128:(i + 1) * 128])
            wt = nl.load(w[k * 128:(k + 1) * 128, :])
            acc += nisa.nc_matmul(xt, wt)
        e = nisa.activation(op=nl.exp, data=acc)
        s = nisa.tensor_tensor(e, acc, op=nl.add)
        ix = nisa.iota(nl.arange(128)[:, None] + nl.arange(128)[None, :], dtype=nl.float32)  # GpSimd
        nl.store(out[:, i * 128:(i + 1) * 128], nisa.tensor_tensor(s, ix, op=nl.multiply))
    return out


@nki.jit
def _random_block(x):
    """Random draws (nl.rand, from the Vector Engine's generators): they keep their order there."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(x[:, i * 64:(i + 1) * 64])
        nl.store(out[:, i * 64:(i + 1) * 64], nl.add(nl.exp(t), nl.rand((128, 64))))
    return out


def _f32(*shape):
    return nt.tensor[list(shape), nl.float32]


CASES = {
    "every engine": (_every_engine, (_f32(256, 512), _f32(256, 128)), "trn1"),
    "every engine trn2": (_every_engine, (_f32(256, 512), _f32(256, 128)), "trn2"),
    "matmul groups": (tk.matmul_tiled, (_f32(256, 128), _f32(256, 1024)), "trn1"),
    "mamba": (tk.mamba_v2, (_f32(1, 256, 512), _f32(1, 256, 512), _f32(256, 4), _f32(1, 4, 512),
                            _f32(1, 4, 512)), "trn1"),
    "random draws": (_random_block, (_f32(128, 256),), "trn1"),
    "two cores": (_stream_per_core[nl.nc(2)], (_f32(128, 1024),), "trn2"),
}


def _prepared_trace(kernel, args, arch):
    t = traced_kernel(kernel, args, {}, arch, prepare=True)
    prepared = t.take_prepared()
    assert prepared is not None and t.prepared is None
    return t, prepared


def _reused(module, arch, prepared, **kw):
    return sim._simulate(module, None, arch, "timing", kw.pop("neuron_core_id", None), threads=0,
                         records=True, on_progress=None, prepared=prepared, **kw)


@pytest.mark.parametrize("case", CASES)
def test_the_reused_decoding_times_exactly_as_a_fresh_one(case):
    kernel, args, arch = CASES[case]
    t, prepared = _prepared_trace(kernel, args, arch)
    assert prepared.arch == arch and prepared.instruction_count == t.instruction_count
    reused = _reused(t.module, arch, prepared)
    fresh = sim.simulate(t.module, arch=arch, mode="timing")
    assert reused.total_ns == fresh.total_ns > 0
    assert reused.pe_mfu == fresh.pe_mfu
    assert {e: (s.busy_ns, s.instructions) for e, s in reused.engines.items()} == \
        {e: (s.busy_ns, s.instructions) for e, s in fresh.engines.items()}
    assert len(reused.instructions) == t.instruction_count
    for field in reused.instructions.dtype.names:  # start, end, engine/queue, opcode, name, source
        assert np.array_equal(reused.instructions[field], fresh.instructions[field]), field
    for field in reused.slices.dtype.names:
        assert np.array_equal(reused.slices[field], fresh.slices[field]), field


def test_the_cases_cover_what_the_reordering_must_carry():
    """Every engine and DMA queues, matmul groups, two functions, blocks moved and a block kept."""
    moved = 0
    engines, queues = set(), set()
    for kernel, args, arch in CASES.values():
        t, prepared = _prepared_trace(kernel, args, arch)
        records = _reused(t.module, arch, prepared).instructions
        engines |= {str(e) for e in records["engine"]} | {str(e) for e in records["issue_engine"]}
        queues |= set(records["queue"].tolist())
    assert {"PE", "ACT", "DVE", "Pool", "SP", "DMA"} <= engines and len(queues - {-1}) > 1
    from neuronxsim.starfish.lib import _core
    for name in ("random draws", "two cores", "matmul groups"):
        kernel, args, arch = CASES[name]
        t = traced_kernel(kernel, args, {}, arch, schedule="source")
        stats = _core.sim.schedule_module(t.module, arch)
        moved += sum(s["moved"] for s in stats)
        if name == "two cores":
            assert len(stats) == 2 and all(s["blocks"] == 1 for s in stats)
    assert moved > 0
    # A block kept: a random memset, which no NKI call makes (nl.rand draws from the generators).
    kept = _core.sim.schedule_module(_random_memset_module(), "trn1")
    assert kept == [{"blocks": 0, "kept": 1, "moved": 0, "refused": False}]


@nki06.jit
def _copy06(a):
    t = nl06.ndarray(a.shape, dtype=a.dtype, buffer=nl06.sbuf)
    nki06.isa.dma_copy(dst=t, src=a)
    out = nl06.ndarray(a.shape, dtype=a.dtype, buffer=nl06.shared_hbm)
    nki06.isa.dma_copy(dst=out, src=t)
    return out


def test_the_nki06_path_keeps_the_decoding_only_when_asked():
    args = (_f32(128, 256),)
    t = traced06(_copy06, args, {}, "trn2", prepare=True)[0]
    assert t.prepared is not None
    assert _reused(t.module, "trn2", t.take_prepared()).total_ns == \
        sim.simulate(t.module, arch="trn2", mode="timing").total_ns
    assert traced06(_copy06, args, {}, "trn2")[0].prepared is None
    assert traced_kernel(tk.matmul_tiled, CASES["matmul groups"][1], {}, "trn1").prepared is None


def test_the_simulator_refuses_a_run_the_decoding_was_not_prepared_for():
    kernel, args, arch = CASES["two cores"]
    t, prepared = _prepared_trace(kernel, args, arch)
    refusals = {
        "is for timing mode only": dict(mode="full"),
        "runs every function of the module, not only neuron_core_id 1": dict(neuron_core_id=1),
    }
    for message, change in refusals.items():
        kw = {"arch": arch, "mode": "timing", "neuron_core_id": None, **change}
        with pytest.raises(SimulationError, match=message):
            sim._simulate(t.module, None, kw["arch"], kw["mode"], kw["neuron_core_id"], threads=0,
                          records=False, on_progress=None, prepared=prepared)
    # An arch other than the module's is refused before the decoding is looked at; a module whose
    # arch changed since is refused by the decoding.
    with pytest.raises(SimulationError, match="arch 'trn1' .* contradicts the module's arch 'gen3'"):
        sim._simulate(t.module, None, "trn1", "timing", None, threads=0, records=False, on_progress=None,
                      prepared=prepared)
    t.module.arch = "gen2"
    with pytest.raises(SimulationError, match="is for arch 'trn2', not 'trn1'"):
        sim._simulate(t.module, None, None, "timing", None, threads=0, records=False, on_progress=None,
                      prepared=prepared)
    t.module.arch = "gen3"
    other = traced_kernel(kernel, args, {}, arch)
    with pytest.raises(SimulationError, match="is of another module"):
        _reused(other.module, arch, prepared)
    # A module changed since (here: an instruction added) no longer matches.
    t, prepared = _prepared_trace(*CASES["matmul groups"])
    t.module.functions[0].blocks[0].addInstruction(int(bir.InstructionType.NoOp))
    with pytest.raises(SimulationError, match="no longer matches the module's instructions"):
        _reused(t.module, "trn1", prepared)


def test_a_single_function_decoding_serves_neuron_core_id_0():
    """One function: every function is functions[0], the same decoding."""
    kernel, args, arch = CASES["matmul groups"]
    t, prepared = _prepared_trace(kernel, args, arch)
    assert _reused(t.module, arch, prepared, neuron_core_id=0).total_ns == \
        sim.simulate(t.module, arch=arch, mode="timing", neuron_core_id=0).total_ns


def test_a_sweep_job_simulates_a_fresh_trace_from_its_decoding(monkeypatch, tmp_path):
    """The job (timing mode, a fresh trace) hands the decoding to the run; a trace read back from
    the cache, or full mode, prepares the module as before."""
    from neuronxsim.sweep import job as job_module
    seen = []
    real = sim._simulate
    monkeypatch.setattr(sim, "_simulate", lambda *a, **kw: seen.append(kw["prepared"]) or real(*a, **kw))
    src = tmp_path / "k.py"
    src.write_text("import neuronxsim.nki.language as nl\nfrom neuronxsim import nki\n\n"
                   "@nki.jit\ndef k(x):\n    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
                   "    nl.store(out, nl.exp(nl.load(x)))\n    return out\n")
    from neuronxsim.sweep.build import fingerprint
    from neuronxsim.sweep.kernel_file import read
    base = {"key": "a", "neuronxsim": fingerprint(),
            "kernel": read(f"{src}:k").to_dict(), "kernel_location": str(src), "dialect": "nki",
            "shapes": [[[128, 256], "float32"]], "params": {}, "args": {}, "arch": "trn1",
            "mode": "timing", "seed": 0, "reference": None, "rtol": 0.02, "atol": 0.01,
            "trace_cache": str(tmp_path / "cache"), "allow_shadowing": False, "max_instructions": 1000000}
    rows = [job_module.run(dict(base)) for _ in range(2)]  # fresh, then from the cache
    assert [r["status"] for r in rows] == ["ok", "ok"] and [r["trace_cached"] for r in rows] == [False, True]
    assert seen[0] is not None and seen[1] is None
    assert rows[0]["total_ns"] == rows[1]["total_ns"]


@pytest.mark.parametrize("dialect", ["nki", "nki06"])
def test_a_timing_profile_simulates_its_fresh_trace_from_its_decoding(monkeypatch, dialect):
    """profile_kernel (and `neuronxsim profile`, which calls it) and the NKI 0.6 profile, in timing
    mode: the decoding goes to the run and is not left on the profile's TracedKernel; full mode
    keeps none."""
    seen = []
    real = sim._simulate
    monkeypatch.setattr(sim, "_simulate", lambda *a, **kw: seen.append(kw.get("prepared")) or real(*a, **kw))
    if dialect == "nki":
        arrays = (np.ones((256, 128), np.float32), np.ones((256, 1024), np.float32))
        profile = lambda mode: nki.profile_kernel(tk.matmul_tiled, *arrays, mode=mode)  # noqa: E731
    else:
        from neuronxsim.nki06.kernel import profile as profile06
        profile = lambda mode: profile06(_copy06, _f32(128, 256), arch="trn2", mode=mode)  # noqa: E731
    p = profile("timing")
    assert len(seen) == 1 and seen[0] is not None and p.traced.prepared is None
    seen.clear()
    assert p.result.total_ns == sim.simulate(p.traced.module, arch=p.traced.arch, mode="timing").total_ns
    if dialect == "nki":
        profile("full")
    assert all(s is None for s in seen)


def _random_memset_module():
    """A random memset (seeded by its position): its block keeps its source order. No NKI call
    makes one since nl.rand draws from the generators, so the module is built here."""
    from neuronxsim.sim.build import ModuleBuilder
    b = ModuleBuilder()
    t = [b.sbuf(f"t{i}", 128, 64, bir.DType.float32) for i in range(2)]
    b.add("Memset", [], [b.tile(t[0])], name="rand", mode=bir.MemsetMode.Random)
    b.add("Memset", [], [b.tile(t[1])], name="one", constant=1.0)
    return b.module


def test_a_block_kept_in_source_order_times_exactly_from_its_decoding():
    from neuronxsim.nki.schedule import Schedule
    module = _random_memset_module()
    stats, prepared = Schedule().run_prepared(module, "trn1")
    assert stats[0]["kept"] == 1
    reused = _reused(module, "trn1", prepared)
    fresh = sim.simulate(module, arch="trn1", mode="timing")
    assert reused.total_ns == fresh.total_ns > 0
    for field in reused.instructions.dtype.names:
        assert np.array_equal(reused.instructions[field], fresh.instructions[field]), field

"""WAR and WAW between instructions of one in-order engine (or one DMA queue) need no semaphore:
the engine runs its instructions in order [A1: each engine has its own sequencer and instruction
stream; dependencies across engines use semaphores], so an earlier instruction's reads are done
before a later one starts and its writes land first. RAW on one engine still waits for the result
to be visible plus the semaphore wait (fitted to a chain of dependent ScalarE instructions, [P1]);
any dependency across engines pays it (cpp/sim/README.md, cpp/sim/Hazards.h)."""

import pytest

from neuronxsim import sim
from neuronxsim.bir import DType, Engine
from neuronxsim.sim.build import ModuleBuilder

N = 256


def _run(b, arch="trn1"):
    r = sim.simulate(b.module, arch=arch, mode="timing")
    return {x["name"]: x for x in r.instructions}, r


def _copy(b, src, dst, engine, name):
    return b.add("TensorCopy", [b.tile(src)], [b.tile(dst)], engine=engine, name=name)


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
def test_same_engine_war_and_waw_start_when_the_engine_is_free(arch):
    cfg = sim.config(arch)
    b = ModuleBuilder(arch)
    t, u, v, w = (b.sbuf(n, 128, N, DType.float32) for n in "tuvw")
    _copy(b, t, u, Engine.DVE, "a")      # reads t, writes u
    _copy(b, v, t, Engine.DVE, "war")    # overwrites what a read
    _copy(b, w, u, Engine.DVE, "waw")    # overwrites what a wrote
    rec, r = _run(b, arch)
    a, war, waw = rec["a"], rec["war"], rec["waw"]
    assert war["start_ns"] == a["start_ns"] + a["busy_ns"]  # not + semaphore_wait_ns
    assert waw["start_ns"] == war["start_ns"] + war["busy_ns"]  # not a's end + semaphore_wait_ns
    # the result of the engine's order is the program's: the later write lands later
    assert waw["end_ns"] > a["end_ns"] and cfg.semaphore_wait_ns > 0


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
def test_same_engine_raw_and_cross_engine_war_still_wait(arch):
    cfg = sim.config(arch)
    sem = cfg.semaphore_wait_ns
    b = ModuleBuilder(arch)
    t, u, v, x = (b.sbuf(n, 128, N, DType.float32) for n in "tuvx")
    _copy(b, t, u, Engine.DVE, "a")
    _copy(b, u, v, Engine.DVE, "raw")    # reads what a wrote: result visible + semaphore
    _copy(b, x, t, Engine.Activation, "war_act")  # another engine overwrites what a read
    rec, _ = _run(b, arch)
    a, raw, war = rec["a"], rec["raw"], rec["war_act"]
    assert raw["start_ns"] == pytest.approx(a["end_ns"] + sem)
    assert war["start_ns"] == pytest.approx(a["start_ns"] + a["busy_ns"] + sem)


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
def test_a_write_still_waits_for_another_engines_read_behind_its_own(arch):
    """A long ScalarE read of t, then a short Vector Engine read of t, then a Vector Engine write
    of t: the write is exempt from its own engine's read, not from ScalarE's, which ends later."""
    sem = sim.config(arch).semaphore_wait_ns
    b = ModuleBuilder(arch)
    big = 16 * N
    t, u, v, w = (b.sbuf(n, 128, big, DType.float32) for n in "tuvw")
    small = b.sbuf("s", 128, N, DType.float32)
    b.add("Activation", [b.tile(t)], [b.tile(u)], name="act_read")
    b.add("TensorCopy", [b.tile(t, free=[(1, N)])], [b.tile(small)], engine=Engine.DVE, name="dve_read")
    b.add("TensorCopy", [b.tile(v)], [b.tile(t)], engine=Engine.DVE, name="dve_write")
    rec, _ = _run(b, arch)
    act, dve_read, write = rec["act_read"], rec["dve_read"], rec["dve_write"]
    act_done = act["start_ns"] + act["busy_ns"]
    assert act_done > dve_read["start_ns"] + dve_read["busy_ns"]
    assert write["start_ns"] == pytest.approx(act_done + sem)


def test_same_queue_dma_waw_waits_for_the_queue_only():
    """Two DMAs on one queue writing the same DRAM bytes: the queue runs them in order, so the
    second's transfer starts when the first's ends, not after its completion semaphore."""
    cfg = sim.config("trn1")
    b = ModuleBuilder("trn1")
    y = b.output("y", [128, N], DType.float32)
    s1, s2 = b.sbuf("s1", 128, N, DType.float32), b.sbuf("s2", 128, N, DType.float32)
    b.dma(b.full(y), b.tile(s1), queue=0, name="first")
    b.dma(b.full(y), b.tile(s2), queue=0, name="second")
    b.dma(b.full(y), b.tile(s1), queue=1, name="other_queue")
    rec, _ = _run(b)
    first, second, other = rec["first"], rec["second"], rec["other_queue"]
    assert second["start_ns"] == pytest.approx(first["end_ns"])
    # another queue's DMA is ordered by the semaphore: the completion and the wait
    assert other["issue_ns"] == pytest.approx(second["end_ns"] + cfg.dma_completion_ns + cfg.semaphore_wait_ns)

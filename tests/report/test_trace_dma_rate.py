"""The trace's "<queue> rate" counter draws what the model moved: a transfer's bytes over its time
on the queue, from its start to its end. Where the core's HBM bandwidth holds a transfer back
(MachineConfig.hbm_core_bandwidth_gbps [A1, H4]: a DRAM-to-DRAM copy carries its bytes through
HBM twice), the counter stays under that cap instead of showing the DMA engines' rate."""

import pytest

import trace_rules as tr
from neuronxsim import sim
from neuronxsim.bir import DType
from neuronxsim.sim.build import ModuleBuilder


@pytest.mark.parametrize("arch, what", [("trn1", "dram to dram"), ("trn2", "dram to dram"), ("trn2", "load")])
def test_rate_counter_is_bytes_over_the_transfers_time_on_its_queue(tmp_path, arch, what):
    cfg = sim.config(arch)
    b = ModuleBuilder(arch)
    if what == "load":
        x = b.input("x", [128, 8192], DType.float32)
        b.dma(b.tile(b.sbuf("t", 128, 8192, DType.float32)), b.full(x), name="copy")
        hbm_sides = 1
    else:
        x = b.input("x", [1024, 1024], DType.float32)
        b.dma(b.full(b.output("y", [1024, 1024], DType.float32)), b.full(x), name="copy")
        hbm_sides = 2
    r = sim.simulate(b.module, arch=arch, mode="timing")
    (d,) = r.instructions
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    samples = trace.counters[(0, "DMA0 rate GB/s")]
    rate = d["bytes"] / (d["end_ns"] - d["start_ns"])
    assert [t for t, _ in samples] == [0, round(d["start_ns"]), round(d["end_ns"])]
    assert [v for _, v in samples] == [0, pytest.approx(rate), 0]
    assert rate <= cfg.hbm_core_bandwidth_gbps / hbm_sides * (1 + 1e-9)
    assert rate <= cfg.dma_engines * cfg.dma_engine_bandwidth_gbps * (1 + 1e-9)
    assert tr.integral(samples) == pytest.approx(d["bytes"], abs=rate)

"""Software DGE makes a DMA's descriptors on GpSimd ([A2]; MachineConfig.dma_dge_instruction_ns,
ours for software DGE): that time counts in GpSimd's busy figures, so the trace shows it as a
`descriptors` slice on Pool and the slices add up to the reported busy time."""

import numpy as np
import pytest

import trace_rules as tr
from neuronxsim import bir, sim
from neuronxsim.bir import DType
from neuronxsim.sim import TRACKS
from neuronxsim.sim.build import ModuleBuilder


def test_software_dge_descriptors_are_pool_slices_that_add_up_to_its_busy_time(tmp_path):
    cfg = sim.config("trn2")
    b = ModuleBuilder("trn2")
    x = b.input("x", [16, 64], DType.bfloat16)
    for i in range(4):
        t = b.sbuf(f"t{i}", 4, 64, DType.bfloat16, base_partition=32 * i)
        b.dma(b.tile(t), b.ap(x, 4 * 64 * i, [(64, 4), (1, 64)]), queue=i, name=f"l{i}",
              dge_type=bir.DgeType.SWDGE)
    b.add("TensorCopy", [b.tile(b.sbuf("a", 128, 64, DType.float32))], [b.tile(b.sbuf("c", 128, 64, DType.float32))],
          engine=bir.Engine.Pool, name="pool_copy")
    r = sim.simulate(b.module, arch="trn2", mode="timing")
    sl = r.slices
    pool = TRACKS.index("Pool")
    mine = sl[sl["track"] == pool]
    desc = mine[mine["descriptors"]]
    assert len(desc) == 4
    assert list(r.instructions["name"][desc["record"]]) == ["l0", "l1", "l2", "l3"]
    assert np.all(desc["busy_end_ns"] - desc["start_ns"] == round(cfg.dma_dge_instruction_ns))
    # back to back on GpSimd, each before its transfer starts
    assert np.all(desc["start_ns"][1:] >= desc["busy_end_ns"][:-1])
    assert np.all(desc["busy_end_ns"] <= r.instructions["start_ns"][desc["record"]] + 1)
    busy = float(np.sum(mine["busy_end_ns"] - mine["start_ns"]))
    assert busy == pytest.approx(r.engines["Pool"].busy_ns, abs=len(mine))  # each instant rounded once
    trace = tr.assert_trace_valid(tmp_path / "trace.json", r)
    on_pool = [s for s in trace.slices if trace.threads[(s.pid, s.tid)].startswith("Pool")]
    assert sum(s.name.startswith("descriptors DMA") for s in on_pool) == 4

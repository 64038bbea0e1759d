"""PE MFU counts a matmul's flops as the profiler's ``adjusted_flops`` does
(../shared/reference/nki-isa-and-hw.md §3, "Profiler FLOP accounting" [R2]): weighted by its input
dtype against the bf16 peak, bf16/fp16/tf32 1x, fp32 4x, fp8 1x on trn1 and 0.5x on trn2. So a PE
kept busy by matmuls of any dtype at their documented II [I nc_matmul] is at most 100% MFU, and MFU
is never above the PE's busy share."""

import pytest

from neuronxsim import bir, sim
from neuronxsim.bir import DType
from neuronxsim.report.busy import core_busy
from neuronxsim.sim.build import ModuleBuilder

# The profiler's multipliers [R2], written out here (the model reads MachineConfig.pe_mfu_*_factor).
WEIGHT = {("trn1", DType.float32): 4.0, ("trn2", DType.float32): 4.0,
          ("trn1", DType.float8e4): 1.0, ("trn2", DType.float8e4): 0.5,
          ("trn1", DType.bfloat16): 1.0, ("trn2", DType.bfloat16): 1.0,
          ("trn1", DType.float32r): 1.0}


def _matmuls(arch, dtype, count, m=128, n=512, **fields):
    """`count` [128, m] x [128, n] matmuls of `dtype` back to back into one PSUM bank."""
    b = ModuleBuilder(arch)
    st = b.tile(b.sbuf("st", 128, m, dtype))
    mv = b.tile(b.sbuf("mv", 128, n, dtype))
    acc = b.tile(b.psum("acc", m, n, DType.float32))
    for i in range(count):
        b.matmul(acc, st, mv, start=i == 0, stop=i == count - 1, **fields)
    return sim.simulate(b.module, arch=arch, mode="timing")


@pytest.mark.parametrize("arch, dtype, fields, cycles", [
    # trn2 fp8 double row: half the bf16 II, max(min(64, M), N) / 2 [A2]
    ("trn2", DType.float8e4, {"perf_mode": bir.PerfMode.DoubleRow}, 512 / 2),
    # trn1 fp32: four passes, 4 * max(min(64, M), N) [I]
    ("trn1", DType.float32, {}, 4 * 512),
    ("trn2", DType.float32, {}, 4 * 512),
    ("trn2", DType.float8e4, {}, 512),  # fp8 without double row: the bf16 rate, half the fp8 peak
    ("trn1", DType.float8e4, {}, 512),
    ("trn1", DType.bfloat16, {}, 512),
    ("trn1", DType.float32r, {}, 512),  # tf32 at the bf16 rate
])
def test_mfu_counts_adjusted_flops(arch, dtype, fields, cycles):
    count = 16
    r = _matmuls(arch, dtype, count, **fields)
    cfg = sim.config(arch)
    mm = [x for x in r.instructions if x["opcode"] == "Matmult"]
    assert [x["cycles"] for x in mm] == [cycles] * count
    raw = 2 * 128 * 128 * 512  # 2 K M N per matmul
    assert [x["flops"] for x in mm] == [raw] * count  # the raw count is unchanged
    assert [x["adjusted_flops"] for x in mm] == [raw * WEIGHT[arch, dtype]] * count
    assert r.pe_flops == count * raw
    assert r.pe_adjusted_flops == count * raw * WEIGHT[arch, dtype]
    peak = 2 * 128 * 128 * cfg.pe_clock_ghz  # the bf16 peak, flops per ns [ref §1]
    assert r.pe_mfu == pytest.approx(count * raw * WEIGHT[arch, dtype] / (peak * r.total_ns), rel=1e-12)
    # A full-size matmul at its II does the dtype's peak work: MFU equals the PE's busy share
    # where the dtype runs at its own peak, and stays below it where it does not (fp8 at the bf16
    # rate on trn2).
    pe = r.engines["PE"].utilization
    assert pe == pytest.approx(count * cycles / cfg.pe_clock_ghz / r.total_ns)
    assert r.pe_mfu <= pe * (1 + 1e-12)
    at_peak = not (arch == "trn2" and dtype == DType.float8e4 and not fields)
    assert r.pe_mfu == pytest.approx(pe if at_peak else pe / 2, rel=1e-12)
    # the per-core figure the reports print is the same count
    assert core_busy(r)[0].pe_mfu == pytest.approx(r.pe_mfu, rel=1e-12)


def test_mfu_weights_are_the_machine_descriptions():
    assert (sim.config("trn1").pe_mfu_fp32_factor, sim.config("trn1").pe_mfu_fp8_factor) == (4, 1)
    assert (sim.config("trn2").pe_mfu_fp32_factor, sim.config("trn2").pe_mfu_fp8_factor) == (4, 0.5)

"""The cycle model: every bir::Hwm latency against its documented formula
(../shared/reference/nki-isa-and-hw.md §3-§4), and the scheduler: in-order engines, exact
RAW/WAR/WAW hazards on byte ranges, shared DMA engines, kernel nodes, determinism, the trace."""

import json
import math

import numpy as np
import pytest

from neuronxsim import SimulationError, bir, sim
from neuronxsim.bir import AluOp, DType, Engine, MemsetMode
from neuronxsim.sim.build import ModuleBuilder


CFG1, CFG2 = sim.config("trn1"), sim.config("trn2")
MIN_II = CFG1.min_ii_cycles


def _inst(arch, opcode, ins, outs, **fields):
    b = ModuleBuilder(arch)
    return b, b.add(opcode, ins(b) if callable(ins) else ins, outs(b) if callable(outs) else outs, **fields)


def _sb(b, n, dtype=DType.float32, partitions=128, name=None):
    t = b.sbuf(name or f"t{len(b.function.allocations)}", partitions, n, dtype)
    return b.tile(t)


def _ps(b, n, dtype=DType.float32, partitions=128):
    return b.tile(b.psum(f"p{len(b.function.allocations)}", partitions, n, dtype))


def lat(arch, opcode, ins, outs, **fields):
    b = ModuleBuilder(arch)
    inst = b.add(opcode, ins(b), outs(b), **fields)
    return sim.latency(inst, arch)


@pytest.mark.parametrize("n", [8, 64, 200, 1000])
def test_dve_act_formulas(n):
    one = lambda b: [_sb(b, n)]  # noqa: E731
    f = lambda x: max(MIN_II, x)  # noqa: E731
    cases = {
        ("Activation", ()): f(n),
        ("TensorCopy", ()): f(n),
        ("Reciprocal", ()): f(8 * n),
        ("TensorScalar", ()): f(n),
        ("Dropout", ()): f(n),
        ("BNStats", ()): f(n),
        ("StreamShuffle", (("shuffle_mask", tuple(range(32))),)): f(n),
    }
    for (op, fields), want in cases.items():
        got = lat("trn1", op, one, one, **{k: list(v) for k, v in fields})
        assert got["cycles"] == want, op
        assert got["busy_ns"] == pytest.approx(want / got["clock_ghz"])
        assert got["access_ns"] == pytest.approx(
            (CFG1.sram_access_cycles + CFG1.static_instruction_overhead_cycles) / got["clock_ghz"])
    assert lat("trn1", "Activation", one, one)["engine"] == Engine.Activation
    assert lat("trn1", "Activation", one, one)["clock_ghz"] == CFG1.act_clock_ghz
    assert lat("trn1", "TensorCopy", one, one)["clock_ghz"] == CFG1.dve_clock_ghz
    # tensor_reduce: N/2 if in and out bf16 with add or max, N otherwise (no MIN_II)
    red = lambda dt: (lambda b: [_sb(b, n, dt)])  # noqa: E731
    assert lat("trn1", "TensorReduce", red(DType.bfloat16), lambda b: [_sb(b, 1, DType.bfloat16)])["cycles"] == n / 2
    assert lat("trn1", "TensorReduce", red(DType.float32), lambda b: [_sb(b, 1)])["cycles"] == n
    # tensor_tensor_scan 2N; bn_aggr 13 * (N/3); max8 / find_index8 N
    two = lambda b: [_sb(b, n), _sb(b, n)]  # noqa: E731
    assert lat("trn1", "TensorTensorScan", two, one)["cycles"] == f(2 * n)
    assert lat("trn1", "BNStatsAggregate", lambda b: [_sb(b, 3 * n)], lambda b: [_sb(b, 2)])["cycles"] == f(13 * n)
    assert lat("trn1", "Max", one, lambda b: [_sb(b, 8)])["cycles"] == n
    assert lat("trn1", "MaxIndex", lambda b: [_sb(b, n), _sb(b, 8)], lambda b: [_sb(b, 8)])["cycles"] == n
    assert lat("trn1", "MatchReplace", lambda b: [_sb(b, n), _sb(b, 8)], one)["cycles"] == f(n)
    assert lat("trn1", "TensorCopyDynamicSrc", lambda b: [_sb(b, n), _sb(b, 1)], one)["cycles"] == max(600, n)
    assert lat("trn1", "ReadActivationAccumulator", lambda b: [], lambda b: [_sb(b, 1)])["cycles"] == 64


def test_tensor_tensor_variants():
    n = 512
    f = lambda x: max(MIN_II, x)  # noqa: E731
    ps_sb = lat("trn1", "TensorTensor", lambda b: [_ps(b, n), _sb(b, n)], lambda b: [_sb(b, n)])
    bf16_add = lat("trn1", "TensorTensor", lambda b: [_sb(b, n, DType.bfloat16)] * 2,
                   lambda b: [_sb(b, n, DType.bfloat16)], op=AluOp.add)
    bf16_div = lat("trn1", "TensorTensor", lambda b: [_sb(b, n, DType.bfloat16)] * 2,
                   lambda b: [_sb(b, n, DType.bfloat16)], op=AluOp.divide)
    fp32 = lat("trn1", "TensorTensor", lambda b: [_sb(b, n)] * 2, lambda b: [_sb(b, n)])
    assert (ps_sb["cycles"], bf16_add["cycles"], bf16_div["cycles"], fp32["cycles"]) == (f(n), f(n), f(2 * n), f(2 * n))
    # copy_predicated: N with a PSUM input, 2N otherwise
    cp = lat("trn1", "CopyPredicated", lambda b: [_ps(b, n), _sb(b, n)], lambda b: [_sb(b, n)])
    cp2 = lat("trn1", "CopyPredicated", lambda b: [_sb(b, n), _sb(b, n)], lambda b: [_sb(b, n)])
    assert (cp["cycles"], cp2["cycles"]) == (n, 2 * n)


def test_memset_iota_affine_select_and_pool():
    n = 300
    zero_bf16 = lat("trn1", "Memset", lambda b: [], lambda b: [_sb(b, n, DType.bfloat16)], constant=0.0)
    one_bf16 = lat("trn1", "Memset", lambda b: [], lambda b: [_sb(b, n, DType.bfloat16)], constant=1.0)
    rand = lat("trn1", "Memset", lambda b: [], lambda b: [_sb(b, n, DType.bfloat16)], mode=MemsetMode.Random)
    assert (zero_bf16["cycles"], one_bf16["cycles"], rand["cycles"]) == (n / 2, n, n)
    iota = lat("trn1", "Iota", lambda b: [], lambda b: [_sb(b, n, DType.int32)], pattern=[bir.APPair(1, n)])
    assert iota["cycles"] == 150 + n and iota["engine"] == Engine.Pool
    assert iota["clock_ghz"] == CFG1.pool_clock_ghz
    aff = lat("trn1", "TensorScalarAffineSelect", lambda b: [_sb(b, n)], lambda b: [_sb(b, n)],
              pattern=[bir.APPair(1, n)])
    assert aff["cycles"] == CFG1.gpsimd_start_cycles + n
    pool_copy = lat("trn1", "TensorCopy", lambda b: [_sb(b, n)], lambda b: [_sb(b, n)], engine=Engine.Pool)
    assert pool_copy["cycles"] == max(MIN_II, n)  # tensor_copy "DVE/ACT/Pool": max(MIN_II, N) [I]


@pytest.mark.parametrize("m,n", [(128, 512), (32, 512), (128, 16), (16, 8)])
@pytest.mark.parametrize("dtype", [DType.bfloat16, DType.float32, DType.float8e4, DType.float32r])
def test_matmul_formula(m, n, dtype):
    """`max(min(64, N_stationary), N_moving)` PE cycles, x4 for fp32 (not for tfloat32, float32r:
    the nc_matmul page lists it with bf16)."""
    got = lat("trn1", "Matmult", lambda b: [_sb(b, m, dtype), _sb(b, n, dtype)], lambda b: [_ps(b, n, partitions=m)])
    want = max(min(64, m), n) * (4 if dtype == DType.float32 else 1)
    assert got["cycles"] == want and got["engine"] == Engine.PE
    assert got["busy_ns"] == pytest.approx(want / CFG1.pe_clock_ghz)
    assert got["flops"] == 2 * 128 * m * n and got["access_ns"] == 0


def test_pe_transpose_and_trn2_variants():
    # transpose: max(P, min(64, F)); fp32 x4 on trn1, x2 on trn2 (transpose mode)
    for arch, factor in (("trn1", 4), ("trn2", 2)):
        got = lat(arch, "Matmult", lambda b: [_sb(b, 100, DType.float32, 96), _sb(b, 96, DType.float32, 96)],
                  lambda b: [_ps(b, 96, partitions=100)], is_transpose=True)
        assert got["cycles"] == max(96, min(64, 100)) * factor
    # trn2 FP8 double row: half the cycles; "FP8_E3 runs at BF16 speed" [A2]: an e3 operand, all of them
    for st, mv, cycles in ((DType.float8e4, DType.float8e4, 256), (DType.float8e5, DType.float8e4, 256),
                           (DType.float8e3, DType.float8e3, 512), (DType.float8e4, DType.float8e3, 512)):
        dr = lat("trn2", "Matmult", lambda b: [_sb(b, 128, st), _sb(b, 512, mv)],
                 lambda b: [_ps(b, 512)], perf_mode=bir.PerfMode.DoubleRow)
        assert dr["cycles"] == cycles, (st, mv)
    # trn2 DVE perf modes: 4x copy SBUF->SBUF bf16 unit stride, 2x with PSUM, 2x tensor_tensor bf16
    n = 1024
    c4 = lat("trn2", "TensorCopy", lambda b: [_sb(b, n, DType.bfloat16)], lambda b: [_sb(b, n, DType.bfloat16)])
    c2 = lat("trn2", "TensorCopy", lambda b: [_ps(b, n, DType.bfloat16)], lambda b: [_sb(b, n, DType.bfloat16)])
    c1 = lat("trn2", "TensorCopy", lambda b: [_sb(b, n)], lambda b: [_sb(b, n)])
    tt = lat("trn2", "TensorTensor", lambda b: [_sb(b, n, DType.bfloat16)] * 2, lambda b: [_sb(b, n, DType.bfloat16)],
             op=AluOp.divide)
    assert (c4["cycles"], c2["cycles"], c1["cycles"], tt["cycles"]) == (n / 4, n / 2, n, n)
    assert c1["clock_ghz"] == CFG2.dve_clock_ghz


def test_dma_formula():
    """Descriptors are the contiguous runs of both sides; each DMA engine takes
    max(dma_descriptor_ns, run bytes / bandwidth) per descriptor of its 8 partitions."""
    b = ModuleBuilder()
    x = b.input("x", [128, 1024], DType.bfloat16)
    t = b.sbuf("t", 128, 1024, DType.bfloat16)
    half = b.sbuf("h", 64, 1024, DType.float32)
    full = b.dma(b.tile(t), b.full(x), queue=5)
    cast = b.dma(b.tile(half), b.ap(x, 0, [(1024, 64), (1, 1024)]), queue=2)
    got = sim.latency(full)
    nbytes = 128 * 1024 * 2
    assert got["dma_queue"] == 5 and got["bytes"] == nbytes and got["dma_engine_mask"] == 0xFFFF
    assert got["dma_latency_ns"] == CFG1.dma_start_latency_ns and got["dma_dge_ns"] == 0
    assert got["dma_descriptors"] == 8  # a 2 KiB row per partition, 8 partitions per engine
    assert got["dma_transfer_ns"] == pytest.approx(8 * max(CFG1.dma_descriptor_ns, 2048 / DOC_DMA_BYTES_PER_NS["trn1"]))
    assert got["dma_hbm_ns"] == pytest.approx(nbytes / CFG1.hbm_core_bandwidth_gbps)
    assert got["access_ns"] == CFG1.dma_completion_ns
    assert got["cycles"] == CFG1.dma_trigger_cycles and got["engine"] == Engine.SP
    got = sim.latency(cast)  # 64 partitions -> 8 DMA engines; the fp32 side's bytes are charged
    assert got["dma_engine_mask"] == 0x00FF
    assert got["dma_transfer_ns"] == pytest.approx(8 * 1024 * 4 / DOC_DMA_BYTES_PER_NS["trn1"])


# ---- the formulas against the reference's own numbers ----
# Computed from ../shared/reference/nki-isa-and-hw.md and the public guides docs/calibration.md cites,
# not from sim.config: the clocks of §1, MIN_II ("roughly 64 engine cycles"), GPSIMD_START (150), the
# ~60-cycle tensor access overhead of §2, the static instruction overhead of 100 engine cycles (the
# architecture guide's VectorE cost model), the DMA bandwidth guide's 17 / 23 B/ns per DMA engine and
# the DGE's 600 ns. A compute instruction alone in a timing run takes (cycles + 60 + 100) / clock.
# The fitted numbers (semaphore wait, DMA descriptor floor, DMA latencies) are read from sim.config.

DOC_GHZ = {"trn1": {"PE": 2.8, "ACT": 1.4, "DVE": 1.12, "Pool": 1.4},
           "trn2": {"PE": 2.4, "ACT": 1.2, "DVE": 0.96, "Pool": 1.2}}
DOC_MIN_II, DOC_GPSIMD_START, DOC_ACCESS_CYCLES, DOC_STATIC_CYCLES = 64, 150, 60, 100
DOC_DMA_BYTES_PER_NS, DOC_DMA_ENGINES, DOC_DGE_NS = {"trn1": 17.0, "trn2": 23.0}, 16, 600.0
ENGINE_KEY = {Engine.DVE: "DVE", Engine.Activation: "ACT", Engine.Pool: "Pool", Engine.PE: "PE"}


def _timed(arch, opcode, ins, outs, **fields):
    """sim.latency of one instruction, and its duration in a timing run of a module holding only it."""
    b = ModuleBuilder(arch)
    inst = b.add(opcode, ins(b), outs(b), **fields)
    (rec,) = sim.simulate(b.module, arch=arch, mode="timing").instructions
    return sim.latency(inst, arch), rec["end_ns"] - rec["start_ns"]


def _costs(arch, runs_on, cycles, opcode, ins, outs, **fields):
    """``cycles`` on engine ``runs_on``, and (cycles + the static overhead + the access overhead) / its
    clock in a timing run."""
    got, took = _timed(arch, opcode, ins, outs, **fields)
    assert got["engine"] == runs_on, opcode
    assert got["cycles"] == cycles, opcode
    want = (cycles + DOC_STATIC_CYCLES + DOC_ACCESS_CYCLES) / DOC_GHZ[arch][ENGINE_KEY[runs_on]]
    assert took == pytest.approx(want), opcode


def _strided(b, n, dtype):
    """Every other element of a 2n-element row: a non-unit innermost stride."""
    return b.tile(b.sbuf(f"s{len(b.function.allocations)}", 128, 2 * n, dtype), free=[(2, n)])


@pytest.mark.parametrize("n", [8, 200, 1000])
def test_tensor_scalar_ptr_formula(n):
    """tensor_scalar with [P, 1] scalars: `max(MIN_II, N)` Vector or Scalar cycles, one op as two [ref §4];
    the same on Pool: the row names DVE/ACT/Pool with one formula (GPSIMD_START is cited only for
    iota and affine_select [ref §3])."""
    one, ptr = (lambda b: [_sb(b, n)]), (lambda b: [_sb(b, 1)])  # noqa: E731
    f = max(DOC_MIN_II, n)
    for arch in ("trn1", "trn2"):
        _costs(arch, Engine.DVE, f, "TensorScalarPtr", lambda b: one(b) + ptr(b), one, op0=AluOp.mult)
        _costs(arch, Engine.DVE, f, "TensorScalarPtr", lambda b: one(b) + ptr(b) + ptr(b), one, op0=AluOp.mult,
               op1=AluOp.add)
        _costs(arch, Engine.Activation, f, "TensorScalarPtr", lambda b: one(b) + ptr(b), one, op0=AluOp.mult,
               engine=Engine.Activation)
        _costs(arch, Engine.Pool, f, "TensorScalarPtr", lambda b: one(b) + ptr(b), one,
               op0=AluOp.mult, engine=Engine.Pool)


@pytest.mark.parametrize("n", [40, 1000])
def test_dve_transpose_range_select_and_select_formulas(n):
    # nc_transpose on DVE: `max(MIN_II, N)` [ref §4]; it takes at most 32 x 32, so N <= 32 and the cost
    # is MIN_II whatever the shape.
    for p, f in ((32, 32), (8, 32), (32, 1)):
        _costs("trn1", Engine.DVE, DOC_MIN_II, "StreamTranspose", lambda b: [_sb(b, f, partitions=p)],
               lambda b: [_sb(b, p, partitions=f)])
    # range_select (v3+): `max(MIN_II, N)` [ref §4]; with or without its max-reduce output.
    ins = lambda b: [_sb(b, n), _sb(b, 1), _sb(b, 1)]  # noqa: E731
    cmp = dict(comp_op0=AluOp.is_ge, comp_op1=AluOp.is_lt)
    _costs("trn2", Engine.DVE, max(DOC_MIN_II, n), "RangeSelect", ins, lambda b: [_sb(b, n)], **cmp)
    _costs("trn2", Engine.DVE, max(DOC_MIN_II, n), "RangeSelect", ins, lambda b: [_sb(b, n), _sb(b, 1)], **cmp)
    # select / select_reduce: "not documented" [ref §4]; costed as the two-input DVE rule of thumb, ~2N
    # [ref §3], floored at MIN_II (the model's reading, Hwm.cpp).
    f2 = max(DOC_MIN_II, 2 * n)
    _costs("trn1", Engine.DVE, f2, "Select", lambda b: [_sb(b, n)] * 3, lambda b: [_sb(b, n)])
    _costs("trn1", Engine.DVE, f2, "SelectReduce", lambda b: [_sb(b, n)] * 2, lambda b: [_sb(b, n)])
    _costs("trn1", Engine.DVE, f2, "SelectReduce", lambda b: [_sb(b, n)] * 2, lambda b: [_sb(b, n), _sb(b, 1)],
           reduce_op=AluOp.max)


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
def test_pool_engine_forms(arch):
    """tensor_copy, tensor_scalar and memset on GpSimd: the rows' formulas, which name no
    engine-specific form [ref §4], and no GPSIMD_START (cited only for iota and affine_select [ref §3]):
    tensor_copy "DVE/ACT/Pool" `max(MIN_II, N)`; tensor_scalar `max(MIN_II, N)`; memset
    `max(MIN_II, N/2)` for 0 in bf16/fp16, `max(MIN_II, N)` otherwise. tensor_tensor's row gives the
    Vector Engine's rule and names GpSimd without one: there GPSIMD_START + N (ours, calibrated on the
    mamba rows of docs/calibration.md). No v3 DVE perf mode on GpSimd (the modes are the Vector
    Engine's [A2])."""
    f = lambda x: max(DOC_MIN_II, x)  # noqa: E731
    for n in (8, 100, 1000):
        for dt in (DType.float32, DType.bfloat16):
            one = lambda b: [_sb(b, n, dt)]  # noqa: E731
            bf16 = dt == DType.bfloat16
            _costs(arch, Engine.Pool, f(n / 2 if bf16 else n), "Memset", lambda b: [], one, engine=Engine.Pool,
                   constant=0.0)
            _costs(arch, Engine.Pool, f(n), "Memset", lambda b: [], one, engine=Engine.Pool, constant=1.0)
            _costs(arch, Engine.Pool, f(n), "TensorCopy", one, one, engine=Engine.Pool)
            _costs(arch, Engine.Pool, f(n), "TensorScalar", one, one, engine=Engine.Pool, op0=AluOp.mult, const0=2.0)
            for op in (AluOp.add, AluOp.max):
                _costs(arch, Engine.Pool, DOC_GPSIMD_START + n, "TensorTensor", lambda b: one(b) + one(b), one,
                       engine=Engine.Pool, op=op)


@pytest.mark.parametrize("opcode", ["TensorCopy", "TensorScalar"])
def test_trn2_dve_perf_modes_of_copy_and_tensor_scalar(opcode):
    """v3 DVE perf mode [ref §3]: 4x for tensor_copy / tensor_scalar with in and out in SBUF, BF16/FP16,
    unit-stride innermost; 2x for the same when not contiguous or with one side in PSUM; none for other
    dtypes or on ACT. Each on `max(MIN_II, N)` [ref §4]."""
    n, bf, h = 1024, DType.bfloat16, DType.float16
    f = lambda x: max(DOC_MIN_II, x)  # noqa: E731
    fields = {"op0": AluOp.mult, "const0": 2.0} if opcode == "TensorScalar" else {}
    cases = [
        (lambda b: [_sb(b, n, bf)], lambda b: [_sb(b, n, bf)], n / 4),
        (lambda b: [_sb(b, n, h)], lambda b: [_sb(b, n, h)], n / 4),
        (lambda b: [_strided(b, n, bf)], lambda b: [_sb(b, n, bf)], n / 2),
        (lambda b: [_sb(b, n, bf)], lambda b: [_strided(b, n, bf)], n / 2),
        (lambda b: [_ps(b, n, bf)], lambda b: [_sb(b, n, bf)], n / 2),
        (lambda b: [_sb(b, n, bf)], lambda b: [_ps(b, n, bf)], n / 2),
        (lambda b: [_sb(b, n, bf)], lambda b: [_sb(b, n)], n),
        (lambda b: [_sb(b, n)], lambda b: [_sb(b, n)], n),
        (lambda b: [_sb(b, 128, bf)], lambda b: [_sb(b, 128, bf)], 32),  # 4x, then the MIN_II floor
    ]
    for ins, outs, cycles in cases:
        _costs("trn2", Engine.DVE, f(cycles), opcode, ins, outs, **fields)
    sb = lambda b: [_sb(b, n, bf)]  # noqa: E731
    _costs("trn1", Engine.DVE, n, opcode, sb, sb, **fields)  # v2 has no perf mode
    _costs("trn2", Engine.Activation, n, opcode, sb, sb, engine=Engine.Activation, **fields)  # DVE only


def test_trn2_dve_perf_mode_of_tensor_scalar_with_pointer_scalars():
    """tensor_scalar takes `s = const or [P,1]` [ref §4]; the v3 perf mode is stated for tensor_scalar
    [ref §3], so the [P, 1] form gets it too."""
    n, bf = 1024, DType.bfloat16
    _costs("trn2", Engine.DVE, n / 4, "TensorScalarPtr", lambda b: [_sb(b, n, bf), _sb(b, 1)],
           lambda b: [_sb(b, n, bf)], op0=AluOp.mult)
    _costs("trn2", Engine.DVE, n / 2, "TensorScalarPtr", lambda b: [_ps(b, n, bf), _sb(b, 1)],
           lambda b: [_sb(b, n, bf)], op0=AluOp.mult)


def _dma_ns(arch, build, **fields):
    """sim.latency of one DMA, and its transfer's duration in a timing run of a module holding only it."""
    b = ModuleBuilder(arch)
    inst = b.dma(*build(b), **fields)
    (rec,) = sim.simulate(b.module, arch=arch, mode="timing").instructions
    return sim.latency(inst, arch), rec["end_ns"] - rec["start_ns"]


@pytest.mark.parametrize("width", [1, 8, 64, 512, 4096])
def test_dma_descriptor_floor(width):
    """A column slice of a row-major DRAM tensor moves 128 runs of `width` fp32 elements; each DMA engine
    takes max(dma_descriptor_ns, run bytes / 17 B/ns) per run of its 8 partitions (the DMA bandwidth
    guide's per-engine bandwidth; the floor is the "DMA packet rate" limit it describes)."""
    def build(b):
        x = b.input("x", [128, 8192], DType.float32)
        return b.tile(b.sbuf("t", 128, width, DType.float32)), b.ap(x, 0, [(8192, 128), (1, width)])
    got, took = _dma_ns("trn1", build)
    transfer = 8 * max(CFG1.dma_descriptor_ns, width * 4 / DOC_DMA_BYTES_PER_NS["trn1"])
    assert got["bytes"] == 128 * width * 4
    assert got["dma_transfer_ns"] == pytest.approx(transfer)
    assert took == pytest.approx(max(transfer, 128 * width * 4 / CFG1.hbm_core_bandwidth_gbps))


def test_dma_rows_split_into_runs_and_dram_to_dram_uses_every_engine():
    def strided(b):  # every other element of the source: runs of one element
        x = b.input("x", [128, 64], DType.float32)
        return b.tile(b.sbuf("t", 128, 32, DType.float32)), b.ap(x, 0, [(64, 128), (2, 32)])
    got, _ = _dma_ns("trn1", strided)
    assert got["dma_descriptors"] == 8 * 32
    assert got["dma_transfer_ns"] == pytest.approx(8 * 32 * CFG1.dma_descriptor_ns)

    def dram_copy(b):  # 4 MiB, contiguous: an even split over the 16 engines
        x, y = b.input("x", [1024, 1024], DType.float32), b.output("y", [1024, 1024], DType.float32)
        return b.full(y), b.full(x)
    got, took = _dma_ns("trn1", dram_copy)
    assert got["dma_engine_mask"] == 0xFFFF
    nbytes = 4 << 20
    assert got["dma_transfer_ns"] == pytest.approx(nbytes / 16 / DOC_DMA_BYTES_PER_NS["trn1"])
    assert got["dma_hbm_ns"] == pytest.approx(2 * nbytes / CFG1.hbm_core_bandwidth_gbps)  # read and write
    assert took == pytest.approx(max(got["dma_transfer_ns"], got["dma_hbm_ns"]))


def test_dma_peak_bandwidth_per_generation():
    """[128, 32 KiB] loads: 16 engines x 17 B/ns = 272 GB/s on trn1; on trn2 16 x 23 = 368 GB/s is
    above the core's share of the chip's HBM (2.9 TB/s / 8 cores), which then limits the transfer."""
    def build(b):
        x = b.input("x", [128, 8192], DType.float32)
        return b.tile(b.sbuf("t", 128, 8192, DType.float32)), b.full(x)
    nbytes = 128 * 32768
    _, took1 = _dma_ns("trn1", build)
    assert nbytes / took1 == pytest.approx(16 * DOC_DMA_BYTES_PER_NS["trn1"])
    _, took2 = _dma_ns("trn2", build)
    assert nbytes / took2 == pytest.approx(min(16 * DOC_DMA_BYTES_PER_NS["trn2"], 2900 / 8))


@pytest.mark.parametrize("mode", ["transpose", "accumulate"])
def test_dma_transpose_and_accumulate_rates(mode):
    """DMA transposes move data at 90% of a copy's rate from DRAM, 50% SBUF to SBUF (the Trainium2
    architecture guide); an accumulating DMA at 50% (the Trainium3 guide, for NeuronCore-v2/v3)."""
    b = ModuleBuilder("trn2")
    x = b.input("x", [128, 4096], DType.bfloat16)
    t, u = b.sbuf("t", 128, 4096, DType.bfloat16), b.sbuf("u", 128, 4096, DType.bfloat16)
    copy = sim.latency(b.dma(b.tile(t), b.full(x)), "trn2")
    if mode == "transpose":
        from_dram = sim.latency(b.dma(b.tile(t), b.full(x), mode=bir.DmaMode.Transpose), "trn2")
        on_chip = sim.latency(b.dma(b.tile(u), b.tile(t), mode=bir.DmaMode.Transpose), "trn2")
        assert from_dram["dma_transfer_ns"] == pytest.approx(copy["dma_transfer_ns"] / 0.9)
        assert on_chip["dma_transfer_ns"] == pytest.approx(copy["dma_transfer_ns"] / 0.5)
    else:
        acc = sim.latency(b.dma(b.tile(t), b.full(x), dst_rmw_op=AluOp.add), "trn2")
        assert acc["dma_transfer_ns"] == pytest.approx(copy["dma_transfer_ns"] / 0.5)


def test_dma_latency_completion_and_semaphore():
    """A transfer starts dma_start_latency_ns after its trigger; an instruction reading its data starts
    dma_completion_ns + semaphore_wait_ns after it ends (together ~1300 ns, the DMA bandwidth guide's
    "semaphore-to-start latency (~1300 ns cross-engine)")."""
    b = ModuleBuilder("trn2")
    x = b.input("x", [4, 4096], DType.bfloat16)
    t = b.sbuf("t", 4, 4096, DType.bfloat16)
    b.dma(b.tile(t), b.full(x), name="load")
    b.add("Activation", [b.tile(t)], [b.tile(t)], name="act", func=bir.ActivationFunc.Exp)
    r = sim.simulate(b.module, arch="trn2", mode="timing")
    load, act = _rec(r, "load"), _rec(r, "act")
    assert load["start_ns"] - load["issue_ns"] == pytest.approx(
        CFG2.dma_trigger_cycles / CFG2.sp_clock_ghz + CFG2.dma_start_latency_ns)
    assert CFG2.dma_start_latency_ns + CFG2.dma_completion_ns + CFG2.semaphore_wait_ns == pytest.approx(1300)
    # the DMA overview's Example 1: 32 KiB on one DMA engine in 1416 ns; the model: 4 rows at 23 B/ns
    assert load["end_ns"] - load["start_ns"] == pytest.approx(32768 / DOC_DMA_BYTES_PER_NS["trn2"])
    assert act["start_ns"] == pytest.approx(load["end_ns"] + CFG2.dma_completion_ns + CFG2.semaphore_wait_ns)


def _small_loads(arch, triggers, dge):
    b = ModuleBuilder(arch)
    x = b.input("x", [4 * len(triggers), 64], DType.bfloat16)
    for i, engine in enumerate(triggers):  # on partitions 32i..: a DMA engine each
        t = b.sbuf(f"t{i}", 4, 64, DType.bfloat16, base_partition=32 * (i % 4))
        b.dma(b.tile(t), b.ap(x, 4 * 64 * i, [(64, 4), (1, 64)]), queue=i, name=f"l{i}",
              engine=getattr(Engine, engine), dge_type=getattr(bir.DgeType, dge))
    return b.module


def test_hardware_dge_is_a_600_ns_unit_per_sequencer():
    """Each hardware-DGE instruction takes 600 ns on its DGE (the DGE guide); DGE[0] serves ScalarE,
    DGE[1] the Sync engine (Trainium2 architecture guide), so loads from one sequencer follow each
    other 600 ns apart while the two sequencers' run side by side. The descriptors are made while the
    start latency runs: a lone DGE load is no slower than a static one."""
    r = sim.simulate(_small_loads("trn2", ["SP"] * 4, "HWDGE"), arch="trn2", mode="timing")
    starts = [_rec(r, f"l{i}")["start_ns"] for i in range(4)]
    assert np.allclose(np.diff(starts)[1:], DOC_DGE_NS)  # (the first DGE hides in the start latency)
    r = sim.simulate(_small_loads("trn2", ["SP", "Activation"], "HWDGE"), arch="trn2", mode="timing")
    assert _rec(r, "l1")["start_ns"] - _rec(r, "l0")["start_ns"] < DOC_DGE_NS
    static = sim.simulate(_small_loads("trn2", ["SP"], "None"), arch="trn2", mode="timing")
    dge = sim.simulate(_small_loads("trn2", ["SP"], "HWDGE"), arch="trn2", mode="timing")
    assert _rec(dge, "l0")["start_ns"] == pytest.approx(_rec(static, "l0")["start_ns"])
    assert sim.latency(_small_loads("trn2", ["SP"], "HWDGE").functions[0].blocks[0][0], "trn2")["dma_dge_ns"] == DOC_DGE_NS


def test_software_dge_runs_on_gpsimd_and_hardware_dge_is_refused_where_it_does_not_exist():
    r = sim.simulate(_small_loads("trn1", ["SP"] * 3, "SWDGE"), mode="timing")
    assert r.engines["Pool"].busy_ns == pytest.approx(3 * CFG1.dma_dge_instruction_ns)
    with pytest.raises(SimulationError, match="DMA: hardware DGE needs NeuronCore-v3 or later; trn1 is NeuronCore-v2"):
        sim.simulate(_small_loads("trn1", ["SP"], "HWDGE"), mode="timing")
    with pytest.raises(SimulationError, match="triggered by the Activation or SP engine, not Pool"):
        sim.simulate(_small_loads("trn2", ["Pool"], "HWDGE"), arch="trn2", mode="timing")


# ---- the scheduler ----

# From a DMA's last data to an instruction waiting for it: the completion semaphore and the wait.
DMA_TO_WAITER = CFG1.dma_completion_ns + CFG1.semaphore_wait_ns


def test_a_dependent_instruction_waits_for_the_pipeline_and_a_semaphore():
    """An instruction reading another's result starts (MIN_II or N) + static overhead + SRAM access
    cycles after it starts, plus the semaphore wait; independent ones follow each other at the
    documented cost. The perf guide measures a chain of one-element dependent ScalarE activations at
    "189 ns (264 ScalarE cycles on NC-v2)"."""
    b = ModuleBuilder()
    t = b.sbuf("t", 128, 1, DType.float32)
    u = [b.sbuf(f"u{i}", 128, 1, DType.float32) for i in range(3)]
    b.add("Memset", [], [b.tile(t)], name="init", constant=1.0)
    for i in range(3):  # a dependent chain
        b.add("Activation", [b.tile(t)], [b.tile(t)], name=f"dep{i}", func=bir.ActivationFunc.Copy)
    for i in range(3):  # independent of each other
        b.add("Activation", [b.tile(t)], [b.tile(u[i])], name=f"ind{i}", func=bir.ActivationFunc.Copy)
    r = sim.simulate(b.module, mode="timing")
    dep = [_rec(r, f"dep{i}")["start_ns"] for i in range(3)]
    ind = [_rec(r, f"ind{i}")["start_ns"] for i in range(3)]
    ghz = DOC_GHZ["trn1"]["ACT"]
    chain = (DOC_MIN_II + DOC_STATIC_CYCLES + DOC_ACCESS_CYCLES) / ghz + CFG1.semaphore_wait_ns
    assert np.allclose(np.diff(dep), chain)
    assert chain == pytest.approx(189, rel=0.01)
    assert np.allclose(np.diff(ind), DOC_MIN_II / ghz)

def _rec(result, name):
    (r,) = [r for r in result.instructions if r["name"] == name]
    return r


def test_dve_op_waits_for_its_dma_and_independent_work_overlaps():
    b = ModuleBuilder()
    x = b.input("x", [128, 2048], DType.float32)
    t, u, v = (b.sbuf(n, 128, 2048, DType.float32) for n in "tuv")
    b.add("Memset", [], [b.tile(v)], name="init_v", constant=1.0)
    b.dma(b.tile(t), b.full(x), name="load")
    b.add("TensorScalar", [b.tile(t)], [b.tile(u)], name="scale", op0=AluOp.mult, const0=2.0)
    b.add("TensorScalar", [b.tile(v)], [b.tile(v)], name="indep", engine=Engine.Activation, op0=AluOp.mult, const0=3.0)
    r = sim.simulate(b.module, {"x": np.ones((128, 2048), np.float32)})
    load, scale, indep, init = (_rec(r, n) for n in ("load", "scale", "indep", "init_v"))
    assert scale["start_ns"] == pytest.approx(load["end_ns"] + DMA_TO_WAITER)  # RAW on t
    assert indep["start_ns"] == pytest.approx(init["end_ns"] + CFG1.semaphore_wait_ns)  # RAW on v, not on the DMA
    assert indep["start_ns"] < load["end_ns"]                  # ACT ran while the DMA moved data
    assert r.total_ns == pytest.approx(max(x["end_ns"] for x in r.instructions))


def test_matmul_waits_for_its_stationary_load():
    b = ModuleBuilder()
    w = b.input("w", [128, 128], DType.bfloat16)
    x = b.input("x", [128, 512], DType.bfloat16)
    ws, xs = b.sbuf("ws", 128, 128, DType.bfloat16), b.sbuf("xs", 128, 512, DType.bfloat16)
    acc = b.psum("acc", 128, 512)
    b.dma(b.tile(xs), b.full(x), queue=0, name="load_moving")
    # the stationary's load is queued behind a large unrelated transfer on the same queue
    big = b.input("big", [128, 8192], DType.float32)
    bs = b.sbuf("bs", 128, 8192, DType.float32)
    b.dma(b.tile(bs), b.full(big), queue=1, name="big")
    b.dma(b.tile(ws), b.full(w), queue=1, name="load_stationary")
    b.matmul(b.tile(acc), b.tile(ws), b.tile(xs), name="mm")
    bf = sim.dtype_to_numpy(DType.bfloat16)
    r = sim.simulate(b.module, {"w": np.ones((128, 128), bf), "x": np.ones((128, 512), bf),
                                "big": np.ones((128, 8192), np.float32)}, mode="timing")
    mm, st, mv, bg = (_rec(r, n) for n in ("mm", "load_stationary", "load_moving", "big"))
    assert st["start_ns"] >= bg["end_ns"] - 1e-9  # in order on queue 1
    assert mm["start_ns"] == pytest.approx(st["end_ns"] + DMA_TO_WAITER) and mm["start_ns"] > mv["end_ns"]


def test_war_and_waw():
    b = ModuleBuilder()
    x = b.input("x", [128, 512], DType.float32)
    t, u = b.sbuf("t", 128, 512, DType.float32), b.sbuf("u", 128, 512, DType.float32)
    b.add("Memset", [], [b.tile(t)], name="fill", constant=1.0)
    b.add("Activation", [b.tile(t)], [b.tile(u)], name="read_t")      # ACT reads t
    b.dma(b.tile(t), b.full(x), name="overwrite_t")                   # WAR: waits for read_t
    b.add("Memset", [], [b.tile(u)], name="rewrite_u", constant=2.0, engine=Engine.Pool)  # WAW on u
    r = sim.simulate(b.module, mode="timing")
    read_t, over, rew = (_rec(r, n) for n in ("read_t", "overwrite_t", "rewrite_u"))
    assert over["issue_ns"] >= read_t["start_ns"] + sim.latency(b.block[1])["busy_ns"] - 1e-9
    assert rew["start_ns"] == pytest.approx(read_t["end_ns"] + CFG1.semaphore_wait_ns)


def test_hazards_are_exact_on_bytes_and_quadrants():
    """Disjoint byte ranges (or partition quadrants) of one tensor do not order instructions."""
    b = ModuleBuilder()
    x = b.input("x", [128, 4096], DType.float32)
    t = b.sbuf("t", 128, 8192, DType.float32)
    o1, o2 = b.sbuf("o1", 128, 64, DType.float32), b.sbuf("o2", 32, 64, DType.float32)
    b.add("Memset", [], [b.tile(t, elems=64)], name="head", constant=1.0)
    b.dma(b.tile(t, col=4096, elems=4096), b.full(x), name="tail_load")            # bytes [16K, 32K)
    b.add("TensorCopy", [b.tile(t, elems=64)], [b.tile(o1)], name="use_head")      # bytes [0, 256)
    b.dma(b.tile(t, partitions=32, start_partition=64, col=64, elems=64),
          b.ap(x, 0, [(4096, 32), (1, 64)]), name="q2_load", queue=1)               # quadrant 2 only
    b.add("Memset", [], [b.tile(t, partitions=32, start_partition=0, col=64, elems=64)], name="q0_fill")
    b.add("TensorCopy", [b.tile(t, partitions=32, start_partition=0, col=64, elems=64)], [b.tile(o2)],
          name="use_q0")
    r = sim.simulate(b.module, mode="timing")
    head, tail, use_head, q2, q0, use_q0 = (_rec(r, n) for n in
                                             ("head", "tail_load", "use_head", "q2_load", "q0_fill", "use_q0"))
    sem = CFG1.semaphore_wait_ns
    assert use_head["start_ns"] == pytest.approx(head["end_ns"] + sem) and use_head["start_ns"] < tail["end_ns"]
    assert use_q0["start_ns"] == pytest.approx(q0["end_ns"] + sem) and use_q0["start_ns"] < q2["end_ns"]


def test_dma_engines_are_shared_between_queues():
    b = ModuleBuilder()
    x = b.input("x", [128, 4096], DType.float32)
    t = b.sbuf("t", 128, 8192, DType.float32)
    b.dma(b.tile(t, elems=4096), b.full(x), queue=0, name="a")
    b.dma(b.tile(t, col=4096, elems=4096), b.full(x), queue=1, name="b")
    r = sim.simulate(b.module, mode="timing")
    a, bb = _rec(r, "a"), _rec(r, "b")
    transfer = 128 * 4096 * 4 / (DOC_DMA_BYTES_PER_NS["trn1"] * 16)
    assert a["end_ns"] - a["start_ns"] == pytest.approx(transfer)
    assert bb["end_ns"] == pytest.approx(a["end_ns"] + transfer)  # waited for the 16 engines
    # Partitions 0-63 and 64-127 map to disjoint DMA engines: two queues move them concurrently.
    b = ModuleBuilder()
    x = b.input("x", [128, 4096], DType.float32)
    lo, hi = b.sbuf("lo", 64, 4096, DType.float32), b.sbuf("hi", 64, 4096, DType.float32, base_partition=64)
    half = b.ap(x, 0, [(4096, 64), (1, 4096)])
    b.dma(b.tile(lo), half, queue=2, name="c")
    b.dma(b.tile(hi), half, queue=3, name="d")
    r = sim.simulate(b.module, mode="timing")
    c, d = _rec(r, "c"), _rec(r, "d")
    half_transfer = 64 * 4096 * 4 / (DOC_DMA_BYTES_PER_NS["trn1"] * 8)
    assert c["end_ns"] - c["start_ns"] == pytest.approx(half_transfer)
    assert d["end_ns"] - d["start_ns"] == pytest.approx(half_transfer)


def test_engine_streams_are_in_order():
    b = ModuleBuilder()
    ts = [b.sbuf(f"s{i}", 128, 512, DType.float32) for i in range(4)]
    for i, t in enumerate(ts):
        b.add("Memset", [], [b.tile(t)], name=f"m{i}", constant=float(i))
    r = sim.simulate(b.module, mode="timing")
    starts = [_rec(r, f"m{i}")["start_ns"] for i in range(4)]
    busy = sim.latency(b.block[0])["busy_ns"]
    assert np.allclose(np.diff(starts), busy)
    assert r.engines["DVE"].busy_ns == pytest.approx(4 * busy)
    assert r.engines["DVE"].instructions == 4
    assert r.engines["DVE"].utilization == pytest.approx(4 * busy / r.total_ns)
    assert r.cycles["DVE"] == pytest.approx(r.total_ns * CFG1.dve_clock_ghz)


def _gemm_like(b):
    x = b.input("x", [128, 512], DType.bfloat16)
    w = b.input("w", [128, 128], DType.bfloat16)
    y = b.output("y", [128, 512], DType.float32)
    xs, ws = b.sbuf("xs", 128, 512, DType.bfloat16), b.sbuf("ws", 128, 128, DType.bfloat16)
    acc, ys = b.psum("acc", 128, 512), b.sbuf("ys", 128, 512, DType.float32)
    b.dma(b.tile(xs), b.full(x))
    b.dma(b.tile(ws), b.full(w), queue=1)
    for i in range(4):
        b.matmul(b.tile(acc), b.tile(ws), b.tile(xs), start=i == 0, stop=i == 3)
    b.add("Activation", [b.tile(acc)], [b.tile(ys)], func=bir.ActivationFunc.Gelu)
    b.dma(b.full(y), b.tile(ys), queue=2)


def test_determinism_and_timing_mode_agree(rng):
    b = ModuleBuilder()
    _gemm_like(b)
    bf = sim.dtype_to_numpy(DType.bfloat16)
    inputs = {"x": rng.normal(size=(128, 512)).astype(bf), "w": rng.normal(size=(128, 128)).astype(bf)}
    r1, r2 = sim.simulate(b.module, inputs), sim.simulate(b.module, inputs, threads=1)
    t = sim.simulate(b.module, mode="timing")
    assert np.array_equal(r1.outputs["y"], r2.outputs["y"], equal_nan=True)
    assert np.array_equal(r1.instructions, r2.instructions)
    assert r1.total_ns == r2.total_ns == t.total_ns and r1.cycles == r2.cycles
    assert t.outputs == {}
    mm = [r for r in r1.instructions if r["opcode"] == "Matmult"]
    assert np.allclose(np.diff([r["start_ns"] for r in mm]), 512 / CFG1.pe_clock_ghz)  # back to back at the II
    assert r1.pe_flops == 4 * 2 * 128 * 128 * 512
    assert r1.pe_mfu == pytest.approx(r1.pe_flops / (CFG1.pe_bf16_peak_flops_per_ns * r1.total_ns))


def test_trace_is_chrome_trace_event_json(tmp_path):
    b = ModuleBuilder()
    _gemm_like(b)
    b.block[0].source = 'kern"el.py:12'
    b.block[0].kernel = "mlp_0"
    r = sim.simulate(b.module, mode="timing")
    path = tmp_path / "trace.json"
    r.write_trace(path)
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    slices = [e for e in events if e["ph"] == "X"]
    tracks = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert tracks == {"PE", "ACT", "SP", "DMA0", "DMA1", "DMA2"}  # the tracks with slices
    assert len(sim.TRACKS) == 5 + 16
    n_dma = sum(1 for x in r.instructions if x["engine"] == "DMA")
    assert len(slices) == len(r.instructions) + n_dma  # plus one trigger slice per DMA
    for e in slices:
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and isinstance(e["pid"], int)
        assert {"opcode", "instruction", "source", "kernel", "bytes", "flops", "busy_ns"} <= set(e["args"])
    first = next(e for e in slices if e["args"]["instruction"] == b.block[0].name and not e["name"].startswith("trigger"))
    assert first["args"]["source"] == 'kern"el.py:12' and first["args"]["kernel"] == "mlp_0"
    # Integer nanoseconds (tests/report/test_trace.py checks the rest of the trace's rules).
    assert math.isclose(max(e["ts"] + e["dur"] for e in slices), round(r.total_ns) / 1000, abs_tol=1e-9)


# ---- timing mode of the NKI front end ----

def test_nki_profile_in_timing_mode_gives_the_full_modes_timeline_without_numerics():
    import neuronxsim.nki as nki
    import neuronxsim.nki.language as nl
    import neuronxsim.nki.typing as nt
    import neuronxsim.nki06 as nki06
    from neuronxsim.nki06.kernel import profile as profile06

    @nki.jit
    def scale(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.multiply(nl.load(a), 2.0))
        return out

    a = np.ones((128, 512), np.float32)
    full = nki.profile_kernel(scale, a)
    timed = nki.profile_kernel(scale, nt.tensor[[128, 512], nl.float32], mode="timing")
    assert timed.outputs == {} and full.outputs["out"].shape == (128, 512)
    assert np.array_equal(timed.instructions[["start_ns", "end_ns", "opcode"]],
                          full.instructions[["start_ns", "end_ns", "opcode"]])
    assert timed.total_ns == full.total_ns
    with pytest.raises(nki.NKIError, match="mode 'fast'"):
        nki.profile_kernel(scale, a, mode="fast")

    @nki06.jit
    def scale06(a):
        out = nki06.language.ndarray(a.shape, dtype=a.dtype, buffer=nki06.language.shared_hbm)
        t = nki06.language.ndarray(a.shape, dtype=a.dtype, buffer=nki06.language.sbuf)
        nki06.isa.dma_copy(dst=t, src=a)
        nki06.isa.dma_copy(dst=out, src=t)
        return out

    full06 = profile06(scale06, a, arch="trn2")
    timed06 = profile06(scale06, a, arch="trn2", mode="timing")
    assert timed06.outputs == {} and timed06.total_ns == full06.total_ns


def test_a_large_innermost_stride_halves_the_engines_data_rate():
    """An SBUF/PSUM operand with an innermost stride over 16 bytes halves its interface's bandwidth,
    "roughly 50% performance hit on the instructions" (the Trainium/Inferentia2 architecture guide):
    the cost formula's cycles double, but not the MIN_II floor."""
    def copy(n, step):
        return lat("trn1", "TensorCopy", lambda b: [b.tile(b.sbuf(f"s{step}", 128, n * step, DType.float32),
                                                           free=[(step, n)])], lambda b: [_sb(b, n)])
    assert copy(512, 4)["cycles"] == 512      # 16 bytes: full rate
    assert copy(512, 8)["cycles"] == 2 * 512  # 32 bytes
    assert copy(32, 8)["cycles"] == DOC_MIN_II


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
def test_v2_engines_share_sram_ports(arch):
    """NeuronCore-v2: "VectorE and GpSimdE cannot access SBUF in parallel", "VectorE and ScalarE cannot
    access PSUM in parallel" (architecture guide); both are lifted on v3. Timing mode: the PSUM tiles
    need no contents."""
    b = ModuleBuilder(arch)
    s = [b.sbuf(f"s{i}", 128, 512, DType.float32) for i in range(4)]
    p = [b.psum(f"p{i}", 128, 512) for i in range(2)]
    b.add("Memset", [], [b.tile(s[0])], name="dve_sbuf", constant=1.0)
    b.add("Memset", [], [b.tile(s[1])], name="pool_sbuf", constant=1.0, engine=Engine.Pool)
    b.add("TensorCopy", [b.tile(p[0])], [b.tile(s[2])], name="dve_psum")
    b.add("Activation", [b.tile(p[1])], [b.tile(s[3])], name="act_psum", func=bir.ActivationFunc.Copy)
    r = sim.simulate(b.module, arch=arch, mode="timing")
    busy = lambda i: sim.latency(b.block[i], arch)["busy_ns"]  # noqa: E731
    dve, pool, dve_p, act_p = (_rec(r, n) for n in ("dve_sbuf", "pool_sbuf", "dve_psum", "act_psum"))
    if arch == "trn1":
        assert pool["start_ns"] == pytest.approx(dve["end_ns"] - sim.latency(b.block[0], arch)["access_ns"])
        assert act_p["start_ns"] == pytest.approx(dve_p["start_ns"] + busy(2))
    else:
        assert pool["start_ns"] == dve["start_ns"] == 0
        assert act_p["start_ns"] == 0


def test_a_trace_that_cannot_be_written_names_the_file_and_the_reason(tmp_path):
    b = ModuleBuilder()
    _gemm_like(b)
    r = sim.simulate(b.module, mode="timing")
    with pytest.raises(SimulationError, match=r"writing trace file '/dev/full' failed \(No space left on device\)"):
        r.write_trace("/dev/full")
    with pytest.raises(SimulationError, match=r"cannot open trace file '.*/no/such/trace.json' for writing "
                                              r"\(No such file or directory\)"):
        r.write_trace(tmp_path / "no" / "such" / "trace.json")


def _doc_dma_engine_partitions(p0, partitions):
    """Partitions [p0, p0 + partitions) per DMA engine, engine e serving partitions [8e, 8e + 8) ("spread over
    up to 16 DMA engines, each serving 8 partitions", the DMA overview [D1]): {engine: its partitions}."""
    per = {e: len(set(range(8 * e, 8 * e + 8)) & set(range(p0, p0 + partitions))) for e in range(DOC_DMA_ENGINES)}
    return {e: n for e, n in per.items() if n}


@pytest.mark.parametrize("p0, partitions", [(p0, n) for p0 in (0, 1, 4, 7, 8, 12, 60, 120)
                                             for n in (1, 4, 7, 8, 9, 12, 16, 17, 24) if p0 + n <= 128])
def test_dma_engine_shares_follow_the_partitions_start(p0, partitions):
    """A transfer on on-chip partitions that do not start on an engine's first partition splits them
    between engines as they map [D1]: 4..11 is 4 partitions on each of engines 0 and 1, half the
    busiest engine's work of 0..7. The busiest engine takes its partitions' descriptors (one 8 KiB
    row each here) at max(descriptor floor, bytes / 17 B/ns) [DB]; loads, stores and on-chip copies
    (the destination's partitions) alike."""
    width = 2048
    engines = _doc_dma_engine_partitions(p0, partitions)
    busiest = max(engines.values())
    want_transfer = busiest * max(CFG1.dma_descriptor_ns, width * 4 / DOC_DMA_BYTES_PER_NS["trn1"])
    mask = sum(1 << e for e in engines)

    def load(b):
        x = b.input("x", [partitions, width], DType.float32)
        return b.tile(b.sbuf("t", 128, width, DType.float32), partitions=partitions, start_partition=p0), b.full(x)

    def store(b):
        y = b.output("y", [partitions, width], DType.float32)
        return b.full(y), b.tile(b.sbuf("t", 128, width, DType.float32), partitions=partitions, start_partition=p0)

    def on_chip(b):  # from partitions 0.. to p0..: the destination's engines are the busiest's
        src = b.tile(b.sbuf("s", 128, width, DType.float32), partitions=partitions)
        return b.tile(b.sbuf("t", 128, width, DType.float32), partitions=partitions, start_partition=p0), src

    for build, want_mask in ((load, mask), (store, mask),
                             (on_chip, mask | sum(1 << e for e in _doc_dma_engine_partitions(0, partitions)))):
        got, took = _dma_ns("trn1", build)
        assert got["dma_engine_mask"] == want_mask, build.__name__
        assert got["dma_descriptors"] == busiest, build.__name__
        assert got["dma_transfer_ns"] == pytest.approx(want_transfer), build.__name__
        assert took == pytest.approx(max(want_transfer, got["dma_hbm_ns"])), build.__name__
    # An indirect gather into those partitions (its index beside them): the rows it moves are the
    # destination's.
    b = ModuleBuilder()
    table, idx = b.input("table", [200, width], DType.float32), b.sbuf("i", 128, 1, DType.int32)
    dst = b.tile(b.sbuf("t", 128, width, DType.float32), partitions=partitions, start_partition=p0)
    got = sim.latency(b.add("DMA", [b.full(table), b.tile(idx, partitions=partitions, start_partition=p0)], [dst]))
    assert (got["dma_engine_mask"], got["dma_descriptors"]) == (mask, busiest)
    assert got["dma_transfer_ns"] == pytest.approx(want_transfer)


def _stride32(b, n, dtype=DType.float32):
    """n elements of a partition 32 bytes apart: an innermost stride past the 16-byte full-rate limit."""
    step = 32 // bir.dtype_size(dtype)
    return b.tile(b.sbuf(f"w{len(b.function.allocations)}", 128, n * step, dtype), free=[(step, n)])


# Each formula of ../shared/reference/nki-isa-and-hw.md §3-§4 as (start-up, floor, per-element part)
# of `start-up + max(floor, per-element part)` in engine cycles, the instruction on n elements per
# partition; `strided` is its form with an operand 32 bytes apart.
_STRIDE_CASES = {
    "activation": (lambda n: (0, DOC_MIN_II, n), "Activation", lambda b, n, s: ([s(b, n)], [_sb(b, n)]), {}),
    "DVE copy, strided output": (lambda n: (0, DOC_MIN_II, n), "TensorCopy",
                                 lambda b, n, s: ([_sb(b, n)], [s(b, n)]), {}),
    "ACT tensor_scalar": (lambda n: (0, DOC_MIN_II, n), "TensorScalar", lambda b, n, s: ([s(b, n)], [_sb(b, n)]),
                          dict(op0=AluOp.mult, const0=2.0, engine=Engine.Activation)),
    "fp32 tensor_tensor": (lambda n: (0, DOC_MIN_II, 2 * n), "TensorTensor",
                           lambda b, n, s: ([s(b, n), _sb(b, n)], [_sb(b, n)]), dict(op=AluOp.add)),
    "tensor_tensor, one input in PSUM": (lambda n: (0, DOC_MIN_II, n), "TensorTensor",
                                         lambda b, n, s: ([_ps(b, n), s(b, n)], [_sb(b, n)]), dict(op=AluOp.add)),
    "reciprocal": (lambda n: (0, DOC_MIN_II, 8 * n), "Reciprocal", lambda b, n, s: ([s(b, n)], [_sb(b, n)]), {}),
    "tensor_reduce (no floor)": (lambda n: (0, 0, n), "TensorReduce", lambda b, n, s: ([s(b, n)], [_sb(b, 1)]), {}),
    "max8 (no floor)": (lambda n: (0, 0, n), "Max", lambda b, n, s: ([s(b, n)], [_sb(b, 8)]), {}),
    "memset": (lambda n: (0, DOC_MIN_II, n), "Memset", lambda b, n, s: ([], [s(b, n)]), dict(constant=1.0)),
    "tensor_scalar_reduce": (lambda n: (DOC_MIN_II, DOC_MIN_II, n), "TensorScalarReduce",
                             lambda b, n, s: ([s(b, n)], [_sb(b, n)]),
                             dict(op0=AluOp.mult, const0=2.0, reduce_op=AluOp.add)),
    "tensor_copy_dynamic (MIN_II_DYNAMIC)": (lambda n: (0, 600, n), "TensorCopyDynamicSrc",
                                             lambda b, n, s: ([s(b, n), _sb(b, 1)], [_sb(b, n)]), {}),
    "Pool copy": (lambda n: (0, DOC_MIN_II, n), "TensorCopy", lambda b, n, s: ([s(b, n)], [_sb(b, n)]),
                  dict(engine=Engine.Pool)),
    "Pool memset": (lambda n: (0, DOC_MIN_II, n), "Memset", lambda b, n, s: ([], [s(b, n)]),
                    dict(constant=1.0, engine=Engine.Pool)),
    "iota": (lambda n: (DOC_GPSIMD_START, 0, n), "Iota",
             lambda b, n, s: ([], [s(b, n, DType.int32)]), None),
}


@pytest.mark.parametrize("case", list(_STRIDE_CASES))
@pytest.mark.parametrize("n", [4, 8, 31, 32, 33, 40, 64, 65, 299, 300, 301, 600])
def test_a_strided_operand_halves_the_data_rate_not_the_floor_or_the_start_up(case, n):
    """An innermost stride past 16 bytes halves the SBUF/PSUM interface's bandwidth, "roughly 50%
    performance hit" [A1]: the formula's per-element part takes twice as long, before the MIN_II (or
    MIN_II_DYNAMIC) floor, and a GpSimd start-up is not data; values on both sides of each floor."""
    formula, opcode, operands, fields = _STRIDE_CASES[case]
    start_up, floor, data = formula(n)
    if fields is None:  # iota: its pattern is its output's
        fields = dict(pattern=[bir.APPair(1, n)])
    for strided, factor in ((_sb, 1), (_stride32, 2)):
        b = ModuleBuilder()
        ins, outs = operands(b, n, strided)
        got = sim.latency(b.add(opcode, ins, outs, **fields))
        assert got["cycles"] == start_up + max(floor, factor * data), (strided.__name__, got["cycles"])


@pytest.mark.parametrize("opcode", ["TensorCopy", "TensorScalar"])
@pytest.mark.parametrize("n", [64, 100, 128, 129, 130, 1024])
def test_trn2_dve_perf_mode_prices_a_strided_operand_once(opcode, n):
    """v3 DVE perf mode [ref §3, A2]: in and out in SBUF, BF16, not contiguous: 2x, the mode's own rate for
    strided operands, which a 32-byte stride does not halve again [A1]; one side in PSUM: 2x, and the
    strided SBUF side halves that rate. Each on `max(MIN_II, N)` [ref §4]."""
    bf = DType.bfloat16
    fields = {"op0": AluOp.mult, "const0": 2.0} if opcode == "TensorScalar" else {}
    f = lambda x: max(DOC_MIN_II, x)  # noqa: E731
    _costs("trn2", Engine.DVE, f(n / 2), opcode, lambda b: [_stride32(b, n, bf)], lambda b: [_sb(b, n, bf)], **fields)
    _costs("trn2", Engine.DVE, f(n / 2), opcode, lambda b: [_sb(b, n, bf)], lambda b: [_stride32(b, n, bf)], **fields)
    _costs("trn2", Engine.DVE, f(2 * (n / 2)), opcode, lambda b: [_ps(b, n, bf)], lambda b: [_stride32(b, n, bf)],
           **fields)


def _trace_args(result, tmp_path, name):
    """The trace's args of instruction ``name``'s slice (not a DMA trigger's)."""
    path = tmp_path / "trace.json"
    result.write_trace(str(path))
    (args,) = [e["args"] for e in json.loads(path.read_text())["traceEvents"]
               if e.get("ph") == "X" and e["args"].get("instruction") == name and not e["name"].startswith("trigger")]
    return args


def test_a_wait_for_a_v2_sram_port_is_named_on_the_waiting_slice(tmp_path):
    """NeuronCore-v2: "VectorE and GpSimdE cannot access SBUF in parallel", "VectorE and ScalarE cannot
    access PSUM in parallel" (architecture guide [A1]): an independent Pool memset waits for the DVE
    memset's SBUF port, an ACT read of PSUM for the DVE one's PSUM port; no dependency arrow shows it, so
    the waiting slice names the port (docs/trace.md)."""
    b = ModuleBuilder("trn1")
    s = [b.sbuf(f"s{i}", 128, 512, DType.float32) for i in range(4)]
    p = [b.psum(f"p{i}", 128, 512) for i in range(2)]
    b.add("Memset", [], [b.tile(s[0])], name="dve_sbuf", constant=1.0)
    b.add("Memset", [], [b.tile(s[1])], name="pool_sbuf", constant=1.0, engine=Engine.Pool)
    b.add("TensorCopy", [b.tile(p[0])], [b.tile(s[2])], name="dve_psum", engine=Engine.DVE)
    b.add("Activation", [b.tile(p[1])], [b.tile(s[3])], name="act_psum", func=bir.ActivationFunc.Copy)
    r = sim.simulate(b.module, arch="trn1", mode="timing")
    assert _rec(r, "pool_sbuf")["start_ns"] > 0 and _rec(r, "act_psum")["start_ns"] > 0
    assert _trace_args(r, tmp_path, "pool_sbuf")["waited_for"] == "the SBUF port DVE and Pool share"
    assert _trace_args(r, tmp_path, "act_psum")["waited_for"] == "the PSUM port DVE and ACT share"
    assert "waited_for" not in _trace_args(r, tmp_path, "dve_sbuf")
    assert not [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"] if e.get("ph") == "f"]


@pytest.mark.parametrize("dve_bytes, act_bytes, same_bank", [
    ((0, 1024), (1024, 2048), True),      # the two halves of bank 0
    ((0, 2048), (2048, 4096), False),     # banks 0 and 1
    ((1024, 2048), (2048, 3072), False),  # either side of the 2 KiB boundary
    ((1024, 2052), (2048, 3072), True),   # one element into bank 1
    ((0, 1024), (14336, 16384), False),   # banks 0 and 7
    ((12288, 16384), (14336, 15360), True),
])
def test_trn2_dve_and_act_share_each_psum_bank(tmp_path, dve_bytes, act_bytes, same_bank):
    """NeuronCore-v3: "DVE and ACT get full PSUM bandwidth in parallel unless they hit the same bank"
    [A2], a bank being 2 KiB of a partition [A1]: reads of one bank by DVE and ACT take turns, of two banks
    run at once. On v2 they never run at once (the one PSUM port)."""
    def run(arch):
        b = ModuleBuilder(arch)
        bank_words = b.psum("p", 128, 4096, addr=0)
        tile = lambda lo, hi: b.tile(bank_words, col=lo // 4, elems=(hi - lo) // 4)  # noqa: E731
        b.add("TensorCopy", [tile(*dve_bytes)], [_sb(b, (dve_bytes[1] - dve_bytes[0]) // 4)], name="dve",
              engine=Engine.DVE)
        b.add("Activation", [tile(*act_bytes)], [_sb(b, (act_bytes[1] - act_bytes[0]) // 4)], name="act",
              func=bir.ActivationFunc.Copy)
        r = sim.simulate(b.module, arch=arch, mode="timing")
        return r, _rec(r, "dve"), _rec(r, "act"), sim.latency(b.block[0], arch)["busy_ns"]

    r, dve, act, dve_busy = run("trn2")
    assert dve["start_ns"] == 0
    if same_bank:
        assert act["start_ns"] == pytest.approx(dve_busy)
        assert _trace_args(r, tmp_path, "act")["waited_for"] == "a PSUM bank DVE and ACT share"
    else:
        assert act["start_ns"] == 0 and "waited_for" not in _trace_args(r, tmp_path, "act")
    _, dve, act, dve_busy = run("trn1")
    assert act["start_ns"] == pytest.approx(dve["start_ns"] + dve_busy)


def test_records_carry_each_instructions_busy_time():
    """``SimResult.instructions["busy_ns"]``: how long it kept its engine busy, the cost formula's cycles over
    its clock (not the wait for its results; a DMA: its transfer on its queue). The per-engine busy sums add
    the same (with the DMA triggers on the issuing engine)."""
    b = ModuleBuilder()
    x, y = b.input("x", [128, 512], DType.float32), b.output("y", [128, 512], DType.float32)
    t, u = b.sbuf("t", 128, 512, DType.float32), b.sbuf("u", 128, 512, DType.float32)
    b.dma(b.tile(t), b.full(x))
    for i in range(3):
        b.add("Activation", [b.tile(t)], [b.tile(u)], name=f"act{i}", func=bir.ActivationFunc.Exp)
    b.dma(b.full(y), b.tile(u))
    r = sim.simulate(b.module, mode="timing")
    rec = r.instructions
    act = rec[rec["engine"] == "ACT"]
    assert list(act["busy_ns"]) == pytest.approx([max(DOC_MIN_II, 512) / DOC_GHZ["trn1"]["ACT"]] * 3)
    assert act["busy_ns"].sum() == pytest.approx(r.engines["ACT"].busy_ns)
    dma = rec[rec["engine"] == "DMA"]
    assert list(dma["busy_ns"]) == pytest.approx(list(dma["end_ns"] - dma["start_ns"]))
    assert dma["busy_ns"].sum() == pytest.approx(r.engines["DMA0"].busy_ns)

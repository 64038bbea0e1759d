"""The cost of the fused Vector Engine instructions and of the GpSimd gathers and reductions
against their documented formulas (../shared/reference/nki-isa-and-hw.md §4, the nki.isa pages
[I]), and the choices where none is published (cpp/bir/Hwm.cpp says which)."""

import math

import pytest

from neuronxsim import bir, sim
from neuronxsim.bir import AccumCmd, AluOp, DType, Engine
from neuronxsim.sim.build import ModuleBuilder

CFG = {arch: sim.config(arch) for arch in ("trn1", "trn2")}


def lat(arch, opcode, ins, outs, **fields):
    b = ModuleBuilder(arch)
    inst = b.add(opcode, ins(b), outs(b), **fields)
    return sim.latency(inst, arch)


def _sb(b, n, dtype=DType.float32, partitions=128):
    return b.tile(b.sbuf(f"t{len(b.function.allocations)}", partitions, n, dtype))


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
@pytest.mark.parametrize("n", [1, 8, 64, 200, 1000, 1001])
def test_scalar_tensor_tensor(arch, n):
    """`N` if data and operand1 are bf16, op0 = subtract, op1 = multiply and N even; else `2N`."""
    def cycles(dtype, op0, op1):
        return lat(arch, "ScalarTensorTensor", lambda b: [_sb(b, n, dtype), _sb(b, n, dtype)],
                   lambda b: [_sb(b, n, dtype)], op0=op0, op1=op1)

    fast = cycles(DType.bfloat16, AluOp.subtract, AluOp.mult)
    assert fast["cycles"] == (n if n % 2 == 0 else 2 * n)
    assert fast["engine"] == Engine.DVE
    assert fast["busy_ns"] == pytest.approx(fast["cycles"] / CFG[arch].dve_clock_ghz)
    assert cycles(DType.float32, AluOp.subtract, AluOp.mult)["cycles"] == 2 * n
    assert cycles(DType.bfloat16, AluOp.mult, AluOp.subtract)["cycles"] == 2 * n


@pytest.mark.parametrize("n", [1, 63, 64, 65, 700])
def test_tensor_scalar_reduce_and_cumulative(n):
    """tensor_scalar_reduce: `max(MIN_II, N) + MIN_II`; the cumulative form, whose cost is not
    published: `max(MIN_II, N)` (ours)."""
    min_ii = CFG["trn1"].min_ii_cycles
    one = lambda b: [_sb(b, n)]  # noqa: E731
    reduce = lat("trn1", "TensorScalarReduce", one, lambda b: [_sb(b, n), _sb(b, 1)],
                 acc=AccumCmd.ZeroAccumulate)
    assert reduce["cycles"] == max(min_ii, n) + min_ii
    cumulative = lat("trn1", "TensorScalarReduce", one, one, cumulative=True)
    assert cumulative["cycles"] == max(min_ii, n)


@pytest.mark.parametrize("partitions,n", [(1, 1), (64, 100), (128, 2048)])
def test_partition_reduce_sequence_bounds_and_nonzero_take_the_gpsimd_default(partitions, n):
    """No published cost: `GPSIMD_START + N` GpSimd cycles, N the input's elements per partition,
    as iota and affine_select (ours)."""
    start = CFG["trn2"].gpsimd_start_cycles
    pr = lat("trn2", "TensorPartitionReduce", lambda b: [_sb(b, n, partitions=partitions)],
             lambda b: [_sb(b, n, partitions=1)], op=AluOp.add)
    assert pr["cycles"] == start + n and pr["engine"] == Engine.Pool
    assert pr["busy_ns"] == pytest.approx((start + n) / CFG["trn2"].pool_clock_ghz)
    sb = lat("trn2", "SequenceBounds", lambda b: [_sb(b, n, DType.int32, 1)],
             lambda b: [_sb(b, 2 * n, DType.int32, 1)])
    assert sb["cycles"] == start + n
    nz = lat("trn2", "NonzeroWithCount", lambda b: [_sb(b, n, partitions=partitions)],
             lambda b: [_sb(b, n + 1, DType.int32, partitions)])
    assert nz["cycles"] == start + n


@pytest.mark.parametrize("n", [1, 512, 513, 4096])
def test_nc_n_gather_starts_once_per_group_of_512(n):
    """nc_n_gather is `ceil(N / 512)` underlying instructions [I]: a GpSimd start-up each."""
    start = CFG["trn1"].gpsimd_start_cycles
    g = lat("trn1", "Gather", lambda b: [_sb(b, 600), _sb(b, n, DType.uint32)],
            lambda b: [_sb(b, n)])
    assert g["cycles"] == math.ceil(n / 512) * start + n


@pytest.mark.parametrize("dtype,size", [(DType.float32, 4), (DType.bfloat16, 2), (DType.float8e4, 1)])
@pytest.mark.parametrize("e", [1, 2, 4, 8, 16, 32])
@pytest.mark.parametrize("valid", [1, 64, 4096])
def test_local_gather(dtype, size, e, valid):
    """`150 + (num_valid_indices * num_elem_per_idx) / C` GpSimd cycles with
    `C = ((28 + t*E) / (t*E)) / min(4/dtype_size, E)`, t = 4 [I local_gather]."""
    t = 4
    c = ((28 + t * e) / (t * e)) / min(4 / size, e)
    got = lat("trn1", "LocalGather", lambda b: [_sb(b, 64, dtype), _sb(b, 256, DType.uint16)],
              lambda b: [_sb(b, valid * e, dtype)], num_elem_per_idx=e, num_valid_indices=valid)
    assert got["cycles"] == pytest.approx(CFG["trn1"].gpsimd_start_cycles + valid * e / c)
    assert got["engine"] == Engine.Pool


def test_a_kernel_times_one_instruction_per_call():
    """The dialects record each of these as one instruction: a kernel's time has one slice per
    call, on the engine the formula names."""
    import numpy as np

    import neuronxsim.nki06 as nki
    import neuronxsim.nki06.isa as nisa
    import neuronxsim.nki06.language as nl
    from neuronxsim.nki06.kernel import profile

    @nki.jit
    def kernel(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        d = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=d, data=t, op0=nl.subtract, operand0=1.0, op1=nl.multiply,
                                  operand1=t)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=d)
        return out

    n = 2048
    records = profile(kernel, np.ones((128, n), dtype=nl.bfloat16), arch="trn1").instructions
    stt = records[records["opcode"] == "ScalarTensorTensor"]
    assert len(stt) == 1
    assert stt["cycles"][0] == n  # bf16, subtract then multiply, N even

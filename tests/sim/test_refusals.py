"""What the machine cannot do is refused: a SimulationError naming the instruction (its place in the
module, opcode and name), never a crash, a clamp or a silent result."""

import numpy as np
import pytest

from neuronxsim import SimulationError, bir, sim
from neuronxsim.bir import AccumCmd, ActivationFunc, AluOp, DgeType, DType, Engine, PerfMode
from neuronxsim.sim.build import ModuleBuilder

WHERE = r"functions\[0\]\.blocks\[0\]\.instructions\[\d+\] "


def refused(b, pattern, arch="trn1", mode="timing", inputs=None):
    with pytest.raises(SimulationError, match=WHERE + pattern):
        sim.simulate(b.module, inputs, arch=arch, mode=mode)


def _b(arch="trn1"):
    return ModuleBuilder(arch)


def test_out_of_bounds_access():
    b = _b()
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("TensorCopy", [b.tile(t)], [b.tile(t, col=32, elems=64)], name="oob")
    refused(b, r"TensorCopy 'oob'\.outs\[0\]: free access \[32, 95\] is outside the 64 elements per partition of 't'")


def test_sbuf_capacity_is_per_generation():
    b = _b()
    t = b.sbuf("t", 128, 8192, DType.float32, addr=190 * 1024)  # [190 KiB, 222 KiB)
    b.add("Memset", [], [b.tile(t)], name="fill")
    refused(b, r"Memset 'fill': outs\[0\] tensor 't' occupies SBUF bytes \[194560, 227328\) per partition, "
               r"beyond the 196608 bytes of a trn1 SBUF partition")
    b.module.arch = "gen3"
    assert sim.simulate(b.module, arch="trn2", mode="timing").total_ns > 0  # 224 KiB on trn2


def test_psum_capacity_is_16_kib_on_both_generations():
    """PSUM is 16 KiB per partition on trn1 and trn2 [ref §1]. A PSUM tensor beyond it is refused by the
    module verifier when it checks the allocation, before any instruction is decoded: the message names
    the allocation, the tensor and its byte range, not an instruction (unlike SBUF, whose capacity is checked per
    instruction, per generation)."""
    for arch in ("trn1", "trn2"):
        b = _b(arch)
        t = b.psum("t", 128, 1024, addr=14 * 1024)  # [14 KiB, 18 KiB)
        b.add("Memset", [], [b.tile(t)], name="fill")
        with pytest.raises(SimulationError, match=r"^the module does not verify: functions\[0\]\.allocations\[0\]\."
                                                  r"memorylocations\[0\] 't': PSUM bytes \[14336, 18432\) exceed the 16384 "
                                                  r"bytes of a PSUM partition$"):
            sim.simulate(b.module, arch=arch, mode="timing")
        b = _b(arch)
        t = b.psum("t", 128, 512, addr=14 * 1024)  # [14 KiB, 16 KiB): the last bank fits
        b.add("Memset", [], [b.tile(t)], name="fill")
        assert sim.simulate(b.module, arch=arch, mode="timing").total_ns > 0


def test_start_partition_rule():
    b = _b()
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("Memset", [], [b.tile(t, partitions=16, start_partition=16)], name="m")
    refused(b, r"Memset 'm'\.outs\[0\]: partition start 16 breaks the start-partition rule for 16 partitions")


def _mm(b, k=128, m=128, n=512, dtype=DType.bfloat16, psum_addr=None, **fields):
    st = b.sbuf(f"st{len(b.function.allocations)}", k, m, dtype)
    mv = b.sbuf(f"mv{len(b.function.allocations)}", k, n, dtype)
    acc = b.psum(f"acc{len(b.function.allocations)}", m, n, addr=psum_addr)
    b.add("Memset", [], [b.tile(st)], constant=1.0)
    b.add("Memset", [], [b.tile(mv)], constant=1.0)
    return b.matmul(b.tile(acc), b.tile(st), b.tile(mv), name="mm", **fields), acc


def test_pe_limits():
    b = _b()
    st, mv = b.sbuf("st", 128, 129, DType.bfloat16), b.sbuf("mv", 128, 512, DType.bfloat16)
    b.matmul(b.tile(b.psum("acc", 128, 512)), b.tile(st), b.tile(mv), name="mm")
    refused(b, r"Matmult 'mm': Matmult: M = 129 \(the stationary's elements per partition\) exceeds the 128 PE columns")
    b = _b()
    _mm(b, n=513)
    refused(b, r"Matmult 'mm': Matmult: N = 513 \(the moving's elements per partition\) exceeds 512 per matmul")
    b = _b()
    _mm(b, k=64, tile_size=[64, 128], tile_position=[0, 0])
    assert sim.simulate(b.module, mode="timing").total_ns > 0
    b = _b()
    _mm(b, k=128, tile_size=[64, 128], tile_position=[0, 0])
    refused(b, r"Matmult 'mm': Matmult: K x M = 128 x 128 does not fit the 64 x 128 PE tile")
    b = _b()
    st, mv = b.sbuf("st", 128, 128, DType.bfloat16), b.sbuf("mv", 64, 512, DType.bfloat16)
    b.matmul(b.tile(b.psum("acc", 128, 512)), b.tile(st), b.tile(mv), name="mm")
    refused(b, r"Matmult 'mm': Matmult: the stationary has K = 128 partitions and the moving 64")


def test_pe_contraction_beyond_128_rows_is_refused_by_the_verifier():
    """K > 128 cannot reach the PE's own K check: an operand spanning 129 partitions is refused by the
    verifier (the pattern, naming the instruction; or the tensor, naming its allocation)."""
    for operand in (0, 1):
        b = _b()
        st, mv = b.sbuf("st", 128, 128, DType.bfloat16), b.sbuf("mv", 128, 512, DType.bfloat16)
        ops = [b.tile(st), b.tile(mv)]
        loc, row = (st, 128) if operand == 0 else (mv, 512)
        ops[operand] = b.ap(loc, 0, [(row, 129), (1, row)])
        b.matmul(b.tile(b.psum("acc", 128, 512)), *ops, name="mm")
        refused(b, rf"Matmult 'mm'\.ins\[{operand}\]: 129 partitions exceed the 128 partitions")
    b = _b()
    st, mv = b.sbuf("st", 129, 128, DType.bfloat16), b.sbuf("mv", 129, 512, DType.bfloat16)
    b.matmul(b.tile(b.psum("acc", 128, 512)), b.tile(st), b.tile(mv), name="mm")
    with pytest.raises(SimulationError, match=r"^the module does not verify: functions\[0\]\.allocations\[0\]\."
                                              r"memorylocations\[0\] 'st': partitions \[0, 129\) exceed the 128 "
                                              r"partitions$"):
        sim.simulate(b.module, mode="timing")


def test_matmul_group_must_fit_one_psum_bank():
    b = _b()
    _mm(b, n=512, psum_addr=1024)
    refused(b, r"Matmult 'mm': Matmult: the result covers PSUM bytes \[1024, 3072\) of each partition, crossing the bank "
               r"boundary at 2048")


def test_accumulating_into_a_group_never_started():
    b = _b()
    _mm(b, start=False)
    refused(b, r"Matmult 'mm': accumulates \(start_tensor_calc false\) into PSUM partition 0 bytes \[0, 4\), where "
               r"no matmul started an accumulation group", mode="full", inputs={})
    b = _b()  # a memset ends a group, even one a later matmul already accumulated into [ref §2: UB on v2/v3]
    _, acc = _mm(b, start=False)
    b.block[2].set_start_tensor_calc(True)
    b.block[2].name = "first"
    operands = [b.tile(b.function.allocations[i].location) for i in (0, 1)]
    b.matmul(b.tile(acc), *operands, start=False, name="second")
    b.add("Memset", [], [b.tile(acc, elems=16)], constant=0.0)
    b.matmul(b.tile(acc), *operands, start=False, name="again")
    refused(b, r"Matmult 'again': accumulates .* where no matmul started", mode="full", inputs={})


def test_read_of_unwritten_memory():
    b = _b()
    t, u = b.sbuf("t", 128, 64, DType.float32), b.sbuf("u", 128, 64, DType.float32)
    b.add("Memset", [], [b.tile(t, elems=32)], constant=1.0)
    b.add("TensorCopy", [b.tile(t)], [b.tile(u)], name="copy")
    refused(b, r"TensorCopy 'copy': ins\[0\] reads SBUF partition 0 bytes \[128, 129\), which no instruction has "
               r"written", mode="full", inputs={})
    b = _b()
    d = b.dram("scratch", [128, 64], DType.float32)
    t = b.sbuf("t", 128, 64, DType.float32)
    b.dma(b.tile(t), b.full(d), name="load")
    refused(b, r"DMA 'load': ins\[0\] reads tensor 'scratch' bytes \[0, 1\), which no instruction has written",
            mode="full", inputs={})


def test_read_of_unwritten_psum():
    b = _b()  # an eviction of a PSUM tile no matmul wrote
    p, t = b.psum("p", 128, 64), b.sbuf("t", 128, 64, DType.float32)
    b.add("TensorCopy", [b.tile(p)], [b.tile(t)], name="evict")
    refused(b, r"TensorCopy 'evict': ins\[0\] reads PSUM partition 0 bytes \[0, 1\), which no instruction has "
               r"written", mode="full", inputs={})
    b = _b()  # the matmul wrote partitions 0..63 (M = 64); the eviction reads 128, on ACT
    st, mv = b.sbuf("st", 128, 64, DType.bfloat16), b.sbuf("mv", 128, 64, DType.bfloat16)
    p, t = b.psum("p", 128, 64), b.sbuf("t", 128, 64, DType.float32)
    b.add("Memset", [], [b.tile(st)], constant=1.0)
    b.add("Memset", [], [b.tile(mv)], constant=1.0)
    b.matmul(b.tile(p, partitions=64), b.tile(st), b.tile(mv), name="mm")
    b.add("Activation", [b.tile(p)], [b.tile(t)], name="evict")
    refused(b, r"Activation 'evict': ins\[0\] reads PSUM partition 64 bytes \[0, 1\), which no instruction has "
               r"written", mode="full", inputs={})
    b = _b()  # the group started on bytes [0, 1024); the accumulation reads on into [1024, 2048)
    st, mv = b.sbuf("st", 128, 128, DType.bfloat16), b.sbuf("mv", 128, 512, DType.bfloat16)
    acc = b.psum("acc", 128, 512)
    b.add("Memset", [], [b.tile(st)], constant=1.0)
    b.add("Memset", [], [b.tile(mv)], constant=1.0)
    b.matmul(b.tile(acc, elems=256), b.tile(st), b.tile(mv, elems=256), stop=False, name="first")
    b.matmul(b.tile(acc), b.tile(st), b.tile(mv), start=False, name="more")
    refused(b, r"Matmult 'more': accumulates \(start_tensor_calc false\) into PSUM partition 0 bytes \[1024, 1028\), "
               r"where no matmul started an accumulation group", mode="full", inputs={})


@pytest.mark.parametrize("n", [64, 512])  # 512: large enough for the kernel's worker threads
@pytest.mark.parametrize("operand", [0, 1])
def test_matmul_read_of_unwritten_operand_rows(operand, n):
    """The matmul kernel checks its operand rows on its worker threads; the refusal still names the
    operand and its first unwritten byte."""
    b = _b()
    st, mv = b.sbuf("st", 128, 128, DType.bfloat16), b.sbuf("mv", 128, n, DType.bfloat16)
    acc = b.psum("acc", 128, n)
    for t in (st, mv):  # partitions 96..127 of one operand stay unwritten
        b.add("Memset", [], [b.tile(t, partitions=96 if t is (st, mv)[operand] else None)], constant=1.0)
    b.matmul(b.tile(acc), b.tile(st), b.tile(mv), name="mm")
    refused(b, rf"Matmult 'mm': ins\[{operand}\] reads SBUF partition 96 bytes \[\d+, \d+\), which no instruction "
               r"has written", mode="full", inputs={})


def test_matmul_operand_known_written_only_as_far_as_checked():
    """A tile the matmul found written is not checked again; a larger tile at the same place is."""
    b = _b()
    st, mv = b.sbuf("st", 128, 64, DType.bfloat16), b.sbuf("mv", 128, 64, DType.bfloat16)
    acc = b.psum("acc", 64, 64)
    b.add("Memset", [], [b.tile(st, partitions=64)], constant=1.0)
    b.add("Memset", [], [b.tile(mv)], constant=1.0)
    b.matmul(b.tile(acc), b.tile(st, partitions=64), b.tile(mv, partitions=64), name="half")
    b.matmul(b.tile(acc), b.tile(st), b.tile(mv), name="whole")
    refused(b, r"Matmult 'whole': ins\[0\] reads SBUF partition 64 bytes", mode="full", inputs={})


@pytest.mark.parametrize("case", [
    "pool_psum", "matmul_on_dve", "psum_matmul_input", "int_matmul", "act_divide", "bitwise_on_pool",
    "range_select_trn1", "act_reduce_max_trn1", "double_row_trn1", "hwdge_trn1", "tensor_tensor_on_act",
    "copy_on_pe", "dma_on_pe", "iota_on_dve", "dram_compute_operand", "fp32_bf16_matmul", "psum_bf16_matmul_out",
])
def test_dtype_and_engine_combinations_the_hardware_lacks(case):
    b = _b()
    t = b.sbuf("t", 128, 64, DType.float32)
    p = b.psum("p", 128, 64)
    ti = b.sbuf("ti", 128, 64, DType.int8)
    tb = b.sbuf("tb", 128, 64, DType.bfloat16)
    p64 = b.psum("p64", 64, 64)  # the [M = 64, N = 64] result of tb^T @ tb
    want = {
        "pool_psum": (lambda: b.add("TensorCopy", [b.tile(p)], [b.tile(t)], engine=Engine.Pool, name="x"),
                      r"TensorCopy 'x': TensorCopy: an input is in PSUM, which GpSimd \(Pool\) cannot access"),
        "matmul_on_dve": (lambda: b.matmul(b.tile(p64), b.tile(tb), b.tile(tb), engine=Engine.DVE, name="x"),
                          r"Matmult 'x': runs on DVE, which cannot execute InstMatmult"),
        "psum_matmul_input": (lambda: b.matmul(b.tile(p), b.tile(p), b.tile(tb), name="x"),
                              r"Matmult 'x': Matmult: the stationary is in PSUM; the PE reads its operands from SBUF"),
        "int_matmul": (lambda: b.matmul(b.tile(p64), b.tile(ti), b.tile(ti), name="x"),
                       r"Matmult 'x': Matmult: the stationary is int8, which the PE does not take on trn1"),
        "act_divide": (lambda: b.add("TensorScalar", [b.tile(t)], [b.tile(t)], engine=Engine.Activation,
                                     op0=AluOp.divide, name="x"),
                       r"TensorScalar 'x': TensorScalar: op0 divide, op1 bypass on the Activation engine, which takes op0 mult "
                       r"with op1 add or bypass, or op0 add with op1 bypass"),
        "bitwise_on_pool": (lambda: b.add("TensorTensor", [b.tile(t), b.tile(t)], [b.tile(t)], engine=Engine.Pool,
                                          op=AluOp.bitwise_and, name="x"),
                            r"TensorTensor 'x': TensorTensor: the bit-vector operator bitwise_and runs on the Vector Engine, not Pool"),
        "range_select_trn1": (lambda: b.add("RangeSelect", [b.tile(t), b.tile(t, elems=1), b.tile(t, elems=1)],
                                            [b.tile(t)], name="x"),
                              r"RangeSelect 'x': RangeSelect: needs NeuronCore-v3 or later; trn1 is NeuronCore-v2"),
        "act_reduce_max_trn1": (lambda: b.add("Activation", [b.tile(t)], [b.tile(t)], acc=AccumCmd.ZeroAccumulate,
                                              acc_op=AluOp.max, name="x"),
                                r"Activation 'x': Activation: the trn1 Activation engine's accumulation registers reduce with add only, "
                                r"not max \(NeuronCore-v2\)"),
        "double_row_trn1": (lambda: b.matmul(b.tile(p64), b.tile(tb), b.tile(tb), perf_mode=PerfMode.DoubleRow,
                                             name="x"),
                            r"Matmult 'x': Matmult: perf_mode DoubleRow needs NeuronCore-v3 or later; trn1 is NeuronCore-v2"),
        "hwdge_trn1": (lambda: b.dma(b.tile(t), b.tile(t), dge_type=DgeType.HWDGE, name="x"),
                       r"DMA 'x': DMA: hardware DGE needs NeuronCore-v3 or later; trn1 is NeuronCore-v2"),
        "tensor_tensor_on_act": (lambda: b.add("TensorTensor", [b.tile(t), b.tile(t)], [b.tile(t)],
                                               engine=Engine.Activation, name="x"),
                                 r"TensorTensor 'x': runs on Activation, which cannot execute InstTensorTensor"),
        "copy_on_pe": (lambda: b.add("TensorCopy", [b.tile(t)], [b.tile(t)], engine=Engine.PE, name="x"),
                       r"TensorCopy 'x': runs on PE, which cannot execute InstTensorCopy"),
        "dma_on_pe": (lambda: b.dma(b.tile(t), b.tile(t), engine=Engine.PE, name="x"),
                      r"DMA 'x': runs on PE, which cannot execute InstDMA"),
        "iota_on_dve": (lambda: b.add("Iota", [], [b.tile(t)], engine=Engine.DVE, pattern=[bir.APPair(1, 64)],
                                      name="x"),
                        r"Iota 'x': runs on DVE, which cannot execute InstIota"),
        "dram_compute_operand": (lambda: b.add("TensorCopy", [b.full(b.input("d", [128, 64], DType.float32))],
                                               [b.tile(t)], name="x"),
                                 r"TensorCopy 'x': ins\[0\] is DRAM tensor 'd': compute engines address SBUF and PSUM"),
        "fp32_bf16_matmul": (lambda: b.matmul(b.tile(p64), b.tile(t), b.tile(tb), name="x"),
                             r"Matmult 'x': Matmult: the stationary is float32 and the moving bfloat16; if one operand is fp32 "),
        "psum_bf16_matmul_out": (lambda: b.matmul(b.tile(b.psum("pb", 64, 64, DType.bfloat16)), b.tile(tb),
                                                  b.tile(tb), name="x"),
                                 r"Matmult 'x': Matmult: the PE accumulates in fp32 PSUM; the result is bfloat16"),
    }
    build, pattern = want[case]
    build()
    refused(b, pattern)


def test_unexpanded_kernel_nodes_and_unmodeled_opcodes():
    b = _b()
    x = b.input("x", [4, 4], DType.float32)
    k = b.block.addInstruction(bir.InstructionType.NKIKLIRKernel, "k")
    k.addSeqAccess(x, False)
    refused(b, r"NKIKLIRKernel 'k': kernel nodes must be expanded .* before a full simulation", mode="full",
            inputs={"x": np.zeros((4, 4), np.float32)})
    b = _b()
    b.add("Halt", name="h")
    refused(b, r"Halt 'h': the simulator has no model of this opcode")


def test_free_size_limits_and_queues():
    b = _b()
    t = b.sbuf("t", 128, 65537, DType.uint8)
    b.add("Memset", [], [b.tile(t)], name="big")
    refused(b, r"Memset 'big': Memset: an output walks 65537 elements per partition; a DVE or ACT instruction walks at most 65536")
    b = _b()
    t = b.sbuf("t", 128, 64, DType.float32)
    b.dma(b.tile(t), b.tile(t), queue=16, name="q")
    refused(b, r"DMA 'q': DMA queue 16 does not exist")


def test_shape_rules():
    b = _b()
    t, u = b.sbuf("t", 128, 64, DType.float32), b.sbuf("u", 64, 64, DType.float32)
    b.add("TensorTensor", [b.tile(t), b.tile(u)], [b.tile(t)], name="tt")
    refused(b, r"TensorTensor 'tt': ins\[1\] has 64 partitions but outs\[0\] has 128")
    b = _b()
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("Activation", [b.tile(t)], [b.tile(t)], has_bias=True, name="a")
    refused(b, r"Activation 'a': takes 2 inputs \(data, bias\), got 1")
    b = _b()
    t = b.sbuf("t", 128, 64, DType.float32)
    b.add("Activation", [b.tile(t)], [b.tile(t)], func=ActivationFunc.Unknown, name="a")
    refused(b, r"Activation 'a': activation function Unknown")


def test_runtime_refusals_indirect_and_dynamic():
    b = _b()
    table = b.input("table", [10, 4], DType.float32)
    idx = b.input("idx", [2, 1], DType.int32)
    out = b.output("out", [2, 4], DType.float32)
    b.add("DMA", [b.full(table), b.full(idx)], [b.full(out)], name="gather")
    with pytest.raises(SimulationError, match=WHERE + r"DMA 'gather': index 10 for destination row 1 is outside the "
                                                      r"10 source rows"):
        sim.simulate(b.module, {"table": np.zeros((10, 4), np.float32), "idx": np.array([[3], [10]], np.int32)})
    b = _b()
    off = b.input("off", [1, 1], DType.int32)
    t, o, a = b.sbuf("t", 128, 64, DType.float32), b.sbuf("o", 1, 1, DType.int32), b.sbuf("a", 128, 8, DType.float32)
    b.add("Memset", [], [b.tile(t)], constant=1.0)
    b.dma(b.tile(o), b.full(off))
    b.add("TensorCopyDynamicSrc", [b.tile(t, elems=8), b.tile(o)], [b.tile(a)], dynamic_step=8, name="dyn")
    with pytest.raises(SimulationError, match=WHERE + r"TensorCopyDynamicSrc 'dyn': ins\[0\] with the run-time offset "
                                                      r"8 .* moves outside tensor 't'"):
        sim.simulate(b.module, {"off": np.array([[8]], np.int32)})

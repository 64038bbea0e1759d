"""One set of legality rules (cpp/bir/Legality.h, neuronxsim.bir.legality), one wording per rule.

For every rule: the rule's own check (through the Python API) breaks it with a message naming the
instruction, and each layer that can be asked for such an instruction refuses it with that very
message: the simulator's decoder, the 2.2x NKI tracer and the NKI 0.6 tracer (prefixed with the
kernel's source line). The IT54 kernel builder's refusals are checked in
cpp/tests/test_legality.cpp. A layer that cannot express the violation says why in ``UNREACHABLE``;
a new rule without its cases fails ``test_every_rule_has_its_cases``.
"""

from __future__ import annotations

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
import neuronxsim.nki06 as nki06
import neuronxsim.nki06.isa as nisa06
import neuronxsim.nki06.language as nl06
from neuronxsim import bir, sim
from neuronxsim.bir import (AccumCmd, ActivationFunc, AluOp, DgeType, DmaMode, DType, Engine, InstructionType, PerfMode,
                            ReduceAxis, legality)
from neuronxsim.errors import NeuronxsimError
from neuronxsim.nki06.kernel import traced
from neuronxsim.sim.build import ModuleBuilder

S = legality.Space
IT = InstructionType
LAYERS = ("decoder", "nki", "nki06")


def sb(dtype, p, f):
    return legality.Operand(S.SBUF, dtype, p, f)


def ps(dtype, p, f):
    return legality.Operand(S.PSUM, dtype, p, f)


# ---- the layers ----

def decoder_error(arch, build) -> str:
    """The simulator's refusal of the module ``build(b)`` makes."""
    b = ModuleBuilder(arch)
    build(b)
    with pytest.raises(NeuronxsimError) as info:
        sim.simulate(b.module, arch=arch, mode="timing")
    return str(info.value)


def nki_error(arch, body, *shapes) -> str:
    """The 2.2x tracer's refusal of a kernel loading fp32 inputs of ``shapes`` into SBUF (bf16
    tiles) and running ``body(*tiles)``."""
    def kernel(*args):
        tiles = [nl.load(a, dtype=nl.bfloat16) for a in args]
        body(*tiles)
        out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        return out

    with pytest.raises(nki.NKIError) as info:
        nki.trace(kernel, *[np.zeros(s, np.float32) for s in shapes], arch=arch)
    assert info.value.location is not None and str(info.value).startswith(f"{__file__}:")
    return str(info.value)


def nki06_error(arch, body, *specs) -> str:
    """The NKI 0.6 tracer's refusal of a kernel passing tiles to ``body(*tiles)``: one per spec,
    a shape (a bf16 SBUF tile) or (shape, "sbuf" | "psum", dtype name), set to 1."""
    @nki06.jit
    def kernel(a):
        tiles = []
        for spec in specs:
            shape, buffer, dtype = spec if isinstance(spec[1], str) else (spec, "sbuf", "bfloat16")
            t = nl06.ndarray(shape, dtype=getattr(nl06, dtype), buffer=getattr(nl06, buffer))
            nisa06.memset(dst=t, value=1.0)
            tiles.append(t)
        body(*tiles)
        return a

    with pytest.raises(nki.NKIError) as info:
        traced(kernel, (np.zeros((1, 1), np.float32),), {}, arch)
    assert info.value.location is not None and str(info.value).startswith(f"{__file__}:")
    return str(info.value)


def hbm_copy(tile):
    """An HBM tensor holding ``tile`` (NKI 0.6: the base of an indirect access)."""
    h = nl06.ndarray(tile.shape, dtype=tile.dtype, buffer=nl06.shared_hbm)
    nisa06.dma_copy(dst=h, src=tile)
    return h


# ---- decoder builders ----

def mm_module(k=128, m=128, n=512, st_dtype=DType.bfloat16, mv_dtype=DType.bfloat16, out_dtype=DType.float32,
              out_space="PSUM", st_space="SB", mv_k=None, out_p=None, out_n=None, psum_addr=None, **fields):
    def build(b):
        st = (b.sbuf if st_space == "SB" else b.psum)("st", k, m, st_dtype)
        mv = b.sbuf("mv", mv_k or k, n, mv_dtype)
        out = (b.psum if out_space == "PSUM" else b.sbuf)("acc", out_p or m, out_n or n, out_dtype,
                                                         **({"addr": psum_addr} if psum_addr is not None else {}))
        b.matmul(b.tile(out), b.tile(st), b.tile(mv), name="mm", **fields)
    return build


def one(opcode, ins_spec, out_spec, engine=None, **fields):
    """A module of one ``opcode`` over fresh tensors: specs are (space, partitions, elems, dtype)."""
    def build(b):
        def loc(i, spec):
            space, p, f, dtype = spec
            return (b.sbuf if space == "SB" else b.psum)(f"t{i}", p, f, dtype)
        ins = [b.tile(loc(i, s)) for i, s in enumerate(ins_spec)]
        outs = [b.tile(loc(len(ins_spec) + i, s)) for i, s in enumerate(out_spec)]
        b.add(opcode, ins, outs, engine=engine, name="x", **fields)
    return build


def dma_module(src_shape, dst_shape, index=None, opcode="DMA", **fields):
    def build(b):
        src = b.input("src", src_shape, DType.float32)
        dst = b.output("dst", dst_shape, DType.float32)
        ins = [b.full(src)]
        if index is not None:
            ins.append(b.full(b.input("idx", index[0], index[1])))
        b.add(opcode, ins, [b.full(dst)], name="x", **fields)
    return build


def gather_module(partitions, index_dtype, per_index, valid):
    """A LocalGather on GpSimd of a [partitions, 64] fp32 source by a [partitions, 1] index."""
    return one("LocalGather", [("SB", partitions, 64, DType.float32), ("SB", partitions, 1, index_dtype)],
               [("SB", partitions, per_index * valid, DType.float32)], engine=Engine.Pool, num_elem_per_idx=per_index,
               num_valid_indices=valid)


BF, F32, U16 = DType.bfloat16, DType.float32, DType.uint16
TRN1 = "trn1"
REPLICATE = DmaMode.__members__["Replicate"]  # (a mode the simulator does not model)
DYNAMIC = DmaMode.Dynamic  # rows at a run-time offset (ins[1])
I32 = DType.int32


def dram(p, f, dtype=F32):
    return legality.Operand(S.DRAM, dtype, p, f)

#: rule id -> (arch, the Python API's violating call, {layer: how that layer is asked}).
CASES = {
    "matmul.operand-space": (TRN1, lambda a: legality.matmul(ps(BF, 128, 128), sb(BF, 128, 512), ps(F32, 128, 512), arch=a), {
        "decoder": mm_module(st_space="PSUM"),
        "nki06": lambda t: nisa06.nc_matmul(dst=t[2], stationary=t[0], moving=t[1])}),
    "matmul.operand-dtype": (TRN1, lambda a: legality.matmul(sb(DType.int32, 128, 128), sb(BF, 128, 512), ps(F32, 128, 512), arch=a), {
        "decoder": mm_module(st_dtype=DType.int32)}),
    "matmul.fp32-pair": (TRN1, lambda a: legality.matmul(sb(F32, 128, 128), sb(BF, 128, 512), ps(F32, 128, 512), arch=a), {
        "decoder": mm_module(st_dtype=F32)}),
    "matmul.result-space": (TRN1, lambda a: legality.matmul(sb(BF, 64, 64), sb(BF, 64, 64), sb(F32, 64, 64), arch=a), {
        "decoder": mm_module(k=64, m=64, n=64, out_space="SB"),
        "nki06": lambda t: nisa06.nc_matmul(dst=t[2], stationary=t[0], moving=t[1])}),
    "matmul.contraction": (TRN1, lambda a: legality.matmul(sb(BF, 128, 128), sb(BF, 64, 512), ps(F32, 128, 512), arch=a), {
        "decoder": mm_module(mv_k=64),
        "nki": lambda t: nisa.nc_matmul(t[0], t[1])}),
    "matmul.pe-rows": (TRN1, lambda a: legality.matmul(sb(BF, 129, 128), sb(BF, 129, 512), ps(F32, 128, 512), arch=a), {}),
    "matmul.pe-cols": (TRN1, lambda a: legality.matmul(sb(BF, 128, 129), sb(BF, 128, 512), ps(F32, 129, 512), arch=a), {
        "nki": lambda t: nisa.nc_matmul(t[0], t[1])}),
    "matmul.moving-size": (TRN1, lambda a: legality.matmul(sb(BF, 128, 128), sb(BF, 128, 513), ps(F32, 128, 513), arch=a), {
        "decoder": mm_module(n=513),
        "nki": lambda t: nisa.nc_matmul(t[0], t[1])}),
    "matmul.result-partitions": (TRN1, lambda a: legality.matmul(sb(BF, 128, 128), sb(BF, 128, 512), ps(F32, 64, 512), arch=a), {
        "decoder": mm_module(out_p=64)}),
    "matmul.result-size": (TRN1, lambda a: legality.matmul(sb(BF, 128, 128), sb(BF, 128, 512), ps(F32, 128, 256), arch=a), {
        "decoder": mm_module(out_n=256)}),
    "matmul.result-dtype": (TRN1, lambda a: legality.matmul(sb(BF, 128, 128), sb(BF, 128, 512), ps(BF, 128, 512), arch=a), {
        "decoder": mm_module(out_dtype=BF)}),
    "matmul.transpose-identity": (TRN1, lambda a: legality.matmul(sb(BF, 64, 64), sb(BF, 64, 32), ps(BF, 64, 64), arch=a, is_transpose=True), {
        "decoder": mm_module(k=64, m=64, n=32, out_dtype=BF, out_n=64, is_transpose=True)}),
    "matmul.transpose-start": (TRN1, lambda a: legality.matmul(sb(BF, 64, 64), sb(BF, 64, 64), ps(BF, 64, 64), arch=a, is_transpose=True, start=False), {
        "decoder": mm_module(k=64, m=64, n=64, out_dtype=BF, is_transpose=True, start=False),
        "nki06": lambda t: nisa06.nc_matmul(dst=t[2], stationary=t[0], moving=t[1], is_transpose=True,
                                             accumulate=True)}),
    "matmul.psum-word": (TRN1, lambda a: legality.matmul(sb(BF, 64, 64), sb(BF, 64, 64), legality.Operand(S.PSUM, BF, 64, 64, placed=(2, 2, 130)), arch=a, is_transpose=True), {}),
    "matmul.psum-bank": (TRN1, lambda a: legality.matmul(sb(BF, 128, 128), sb(BF, 128, 512), legality.Operand(S.PSUM, F32, 128, 512, placed=(1024, 1024, 3072)), arch=a), {
        "decoder": mm_module(psum_addr=1024)}),
    "matmul.perf-mode": (TRN1, lambda a: legality.matmul(sb(BF, 64, 64), sb(BF, 64, 64), ps(F32, 64, 64), arch=a, perf_mode=PerfMode.DoubleRow), {
        "decoder": mm_module(k=64, m=64, n=64, perf_mode=PerfMode.DoubleRow),
        "nki": lambda t: nisa.nc_matmul(t[0], t[1], perf_mode="double_row_gen3"),
        "nki06": lambda t: nisa06.nc_matmul(dst=t[2], stationary=t[0], moving=t[1],
                                             perf_mode=nisa06.matmul_perf_mode.double_row)}),
    "matmul.pe-tile": (TRN1, lambda a: legality.matmul(sb(BF, 64, 64), sb(BF, 64, 64), ps(F32, 64, 64), arch=a, tile_size=[32, 64], tile_position=[0, 0]), {
        "decoder": mm_module(k=64, m=64, n=64, tile_size=[32, 64], tile_position=[0, 0]),
        "nki": lambda t: nisa.nc_matmul(t[0], t[1], tile_size=(32, 64), tile_position=(0, 0)),
        "nki06": lambda t: nisa06.nc_matmul(dst=t[2], stationary=t[0], moving=t[1], tile_size=(32, 64),
                                             tile_position=(0, 0))}),
    "operand.pool-psum": (TRN1, lambda a: legality.engine_operand(IT.TensorCopy, Engine.Pool, ps(F32, 64, 64), output=False, arch=a), {
        "decoder": one("TensorCopy", [("PSUM", 64, 64, F32)], [("SB", 64, 64, F32)], engine=Engine.Pool),
        "nki": lambda t: nisa.tensor_copy(nisa.nc_transpose(t[0]), engine=nisa.gpsimd_engine),
        "nki06": lambda t: nisa06.tensor_copy(dst=t[1], src=t[0], engine=nisa06.gpsimd_engine)}),
    "operand.dve-act-free-size": (TRN1, lambda a: legality.engine_operand(IT.Memset, Engine.DVE, sb(DType.uint8, 2, 65537), output=True, arch=a), {
        "decoder": one("Memset", [], [("SB", 2, 65537, DType.uint8)], engine=Engine.DVE),
        "nki": lambda t: nisa.memset((2, 65537), 0, nl.uint8, engine=nisa.vector_engine),
        "nki06": lambda t: nisa06.memset(dst=t[0], value=0.0, engine=nisa06.vector_engine)}),
    "operand.psum-inputs": (TRN1, lambda a: legality.psum_inputs(IT.TensorTensor, ps(F32, 64, 64), ps(F32, 64, 64)), {
        "decoder": one("TensorTensor", [("PSUM", 64, 64, F32), ("PSUM", 64, 64, F32)], [("SB", 64, 64, F32)],
                       engine=Engine.DVE, op=AluOp.add),
        "nki": lambda t: nisa.tensor_tensor(nisa.nc_transpose(t[0]), nisa.nc_transpose(t[0]), op=np.add),
        "nki06": lambda t: nisa06.tensor_tensor(dst=t[2], data1=t[0], data2=t[1], op=nl06.add)}),
    "alu.bitvec-engine": (TRN1, lambda a: legality.alu_ops(IT.TensorTensor, Engine.Pool, AluOp.bitwise_and), {
        "decoder": one("TensorTensor", [("SB", 4, 8, I32), ("SB", 4, 8, I32)], [("SB", 4, 8, I32)], engine=Engine.Pool,
                       op=AluOp.bitwise_and),
        "nki": lambda t: nisa.tensor_tensor(t[0], t[0], op=np.bitwise_and, engine=nisa.gpsimd_engine),
        "nki06": lambda t: nisa06.tensor_tensor(dst=t[0], data1=t[0], data2=t[0], op=nl06.bitwise_and,
                                                 engine=nisa06.gpsimd_engine)}),
    "alu.act-tensor-scalar": (TRN1, lambda a: legality.alu_ops(IT.TensorScalar, Engine.Activation, AluOp.add, AluOp.mult), {
        "decoder": one("TensorScalar", [("SB", 4, 8, F32)], [("SB", 4, 8, F32)], engine=Engine.Activation,
                       op0=AluOp.add, const0=1.0, op1=AluOp.mult, const1=2.0),
        "nki": lambda t: nisa.tensor_scalar(t[0], np.add, 1.0, op1=np.multiply, operand1=2.0,
                                            engine=nisa.scalar_engine),
        "nki06": lambda t: nisa06.tensor_scalar(dst=t[0], data=t[0], op0=nl06.add, operand0=1.0, op1=nl06.multiply,
                                                 operand1=2.0, engine=nisa06.scalar_engine)}),
    "alu.act-reduce": (TRN1, lambda a: legality.activation_reduce(AccumCmd.ZeroAccumulate, AluOp.max, arch=a), {
        "decoder": one("Activation", [("SB", 4, 8, F32)], [("SB", 4, 8, F32)], func=ActivationFunc.Copy,
                       acc=AccumCmd.ZeroAccumulate, acc_op=AluOp.max),
        "nki": lambda t: nisa.activation_reduce(nl.copy, t[0], reduce_op=np.max,
                                                reduce_res=nl.ndarray((4, 1), dtype=nl.float32, buffer=nl.sbuf)),
        "nki06": lambda t: nisa06.activation_reduce(dst=t[0], op=nl06.copy, data=t[0], reduce_op=nl06.maximum,
                                                     reduce_res=t[1])}),
    "alu.scalar-tensor-tensor": (TRN1, lambda a: legality.alu_ops(IT.ScalarTensorTensor, Engine.DVE, AluOp.add, AluOp.bitwise_and), {
        "decoder": one("ScalarTensorTensor", [("SB", 4, 8, I32), ("SB", 4, 8, I32)], [("SB", 4, 8, I32)],
                       engine=Engine.DVE, op0=AluOp.add, const0=1.0, op1=AluOp.bitwise_and),
        "nki": lambda t: nisa.scalar_tensor_tensor(data=t[0], op0=np.add, operand0=1.0, op1=np.bitwise_and,
                                                   operand1=t[0]),
        "nki06": lambda t: nisa06.scalar_tensor_tensor(dst=t[0], data=t[0], op0=nl06.add, operand0=1.0,
                                                        op1=nl06.bitwise_and, operand1=t[0])}),
    "alu.tensor-scalar-reduce": (TRN1, lambda a: legality.alu_ops(IT.TensorScalarReduce, Engine.DVE, AluOp.bitwise_xor), {
        "decoder": one("TensorScalarReduce", [("SB", 4, 8, I32)], [("SB", 4, 8, I32), ("SB", 4, 1, I32)],
                       engine=Engine.DVE, op0=AluOp.bitwise_xor, const0=1.0, acc=AccumCmd.ZeroAccumulate),
        "nki": lambda t: nisa.tensor_scalar_reduce(data=t[0], op0=np.bitwise_xor, operand0=1, reduce_op=np.add,
                                                   reduce_res=nl.ndarray((4, 1), dtype=nl.int32, buffer=nl.sbuf)),
        "nki06": lambda t: nisa06.tensor_scalar_cumulative(dst=t[0], src=t[0], op0=nl06.bitwise_xor, op1=nl06.add,
                                                            imm0=1.0)}),
    "alu.tensor-tensor-scan": (TRN1, lambda a: legality.alu_ops(IT.TensorTensorScan, Engine.DVE, AluOp.add, AluOp.bitwise_or), {
        "decoder": one("TensorTensorScan", [("SB", 4, 8, I32), ("SB", 4, 8, I32)], [("SB", 4, 8, I32)],
                       engine=Engine.DVE, op0=AluOp.add, op1=AluOp.bitwise_or, initial=0.0),
        "nki": lambda t: nisa.tensor_tensor_scan(t[0], t[0], 0.0, np.add, np.bitwise_or),
        "nki06": lambda t: nisa06.tensor_tensor_scan(dst=t[0], data0=t[0], data1=t[0], initial=0.0,
                                                      op0=nl06.add, op1=nl06.bitwise_or)}),
    "alu.tensor-scalar-reduce-fold": (TRN1, lambda a: legality.register_fold(AluOp.subtract, cumulative=False), {
        "decoder": one("TensorScalarReduce", [("SB", 4, 8, F32)], [("SB", 4, 8, F32), ("SB", 4, 1, F32)],
                       engine=Engine.DVE, op0=AluOp.mult, const0=1.0, reduce_op=AluOp.subtract,
                       acc=AccumCmd.ZeroAccumulate),
        "nki06": lambda t: nisa06.tensor_scalar_reduce(dst=t[0], data=t[0], op0=nl06.multiply, operand0=1.0,
                                                        reduce_op=nl06.subtract, reduce_res=t[1])}),
    "alu.bitvec-dtype": (TRN1, lambda a: legality.bitvec_dtypes(IT.TensorTensor, AluOp.bitwise_and, ins=[BF, BF], outs=[BF]), {
        "decoder": one("TensorTensor", [("SB", 4, 8, BF), ("SB", 4, 8, BF)], [("SB", 4, 8, BF)], engine=Engine.DVE,
                       op=AluOp.bitwise_and),
        "nki": lambda t: nisa.tensor_tensor(t[0], t[0], op=np.bitwise_and),
        "nki06": lambda t: nisa06.tensor_tensor(dst=t[0], data1=t[0], data2=t[0], op=nl06.bitwise_and)}),
    "alu.tensor-scalar-op-kinds": (TRN1, lambda a: legality.alu_ops(IT.TensorScalar, Engine.DVE, AluOp.add, AluOp.bitwise_and), {
        "decoder": one("TensorScalar", [("SB", 4, 8, I32)], [("SB", 4, 8, I32)], engine=Engine.DVE,
                       op0=AluOp.add, const0=1.0, op1=AluOp.bitwise_and, const1=3.0),
        "nki": lambda t: nisa.tensor_scalar(t[0], np.add, 1.0, op1=np.bitwise_and, operand1=3),
        "nki06": lambda t: nisa06.tensor_scalar(dst=t[0], data=t[0], op0=nl06.add, operand0=1.0,
                                                 op1=nl06.bitwise_and, operand1=3)}),
    "alu.reduce-op": (TRN1, lambda a: legality.reduce_op(IT.TensorReduce, AluOp.pow), {
        "decoder": one("TensorReduce", [("SB", 4, 8, F32)], [("SB", 4, 1, F32)], engine=Engine.DVE, op=AluOp.pow,
                       axis=ReduceAxis.X),
        "nki": lambda t: nisa.tensor_reduce(np.power, t[0], axis=1),
        "nki06": lambda t: nisa06.tensor_reduce(dst=t[1], op=nl06.power, data=t[0], axis=1)}),
    "alu.partition-reduce-op": (TRN1, lambda a: legality.partition_reduce_op(AluOp.min), {
        "decoder": one("TensorPartitionReduce", [("SB", 4, 8, F32)], [("SB", 1, 8, F32)], engine=Engine.Pool,
                       op=AluOp.min),
        "nki06": lambda t: nisa06.tensor_partition_reduce(dst=t[1], op=nl06.minimum, data=t[0])}),
    "stream-transpose.source": (TRN1, lambda a: legality.dve_transpose(legality.Operand(S.Immediate, F32, 1, 1), sb(F32, 1, 1), arch=a), {}),
    "stream-transpose.block": (TRN1, lambda a: legality.dve_transpose(sb(BF, 16, 40), sb(BF, 40, 16), arch=a), {
        "decoder": one("StreamTranspose", [("SB", 16, 40, BF)], [("SB", 40, 16, BF)]),
        "nki": lambda t: nisa.nc_transpose(t[0], engine=nisa.vector_engine),
        "nki06": lambda t: nisa06.nc_transpose(dst=t[1], data=t[0], engine=nisa06.vector_engine)}),
    "stream-transpose.result": (TRN1, lambda a: legality.dve_transpose(sb(BF, 16, 32), sb(BF, 16, 32), arch=a), {
        "decoder": one("StreamTranspose", [("SB", 16, 32, BF)], [("SB", 16, 32, BF)])}),
    "bn-stats.size": (TRN1, lambda a: legality.bn_stats(sb(BF, 8, 513), arch=a), {
        "decoder": one("BNStats", [("SB", 8, 513, BF)], [("SB", 8, 6, BF)]),
        "nki": lambda t: nisa.bn_stats(t[0]),
        "nki06": lambda t: nisa06.bn_stats(dst=t[1], data=t[0])}),
    "max8.size": (TRN1, lambda a: legality.max8_family(IT.Max, sb(BF, 8, 4), arch=a), {
        "decoder": one("Max", [("SB", 8, 4, BF)], [("SB", 8, 8, BF)]),
        "nki": lambda t: nisa.max8(src=t[0]),
        "nki06": lambda t: nisa06.max8(dst=t[1], src=t[0])}),
    "local-gather.partitions": (TRN1, lambda a: legality.local_gather(sb(F32, 24, 64), sb(U16, 24, 1), 1, 16, arch=a), {
        "decoder": gather_module(24, U16, 1, 16),
        "nki06": lambda t: nisa06.local_gather(dst=t[2], src_buffer=t[0], index=t[1])}),
    "local-gather.index-dtype": (TRN1, lambda a: legality.local_gather(sb(F32, 16, 64), sb(I32, 16, 1), 1, 16, arch=a), {
        "decoder": gather_module(16, I32, 1, 16),
        "nki06": lambda t: nisa06.local_gather(dst=t[2], src_buffer=t[0], index=t[1])}),
    "local-gather.elements-per-index": (TRN1, lambda a: legality.local_gather(sb(F32, 16, 64), sb(U16, 16, 1), 3, 16, arch=a), {
        "decoder": gather_module(16, U16, 3, 16),
        "nki06": lambda t: nisa06.local_gather(dst=t[2], src_buffer=t[0], index=t[1], num_elem_per_idx=3)}),
    "local-gather.valid-indices": (TRN1, lambda a: legality.local_gather(sb(F32, 16, 64), sb(U16, 16, 1), 1, 17, arch=a), {
        "decoder": gather_module(16, U16, 1, 17),
        "nki06": lambda t: nisa06.local_gather(dst=t[2], src_buffer=t[0], index=t[1], num_valid_indices=17)}),
    "instruction.generation": (TRN1, lambda a: legality.generation(IT.RangeSelect, Engine.DVE, arch=a), {
        "decoder": one("RangeSelect", [("SB", 4, 8, F32), ("SB", 4, 1, F32), ("SB", 4, 1, F32)], [("SB", 4, 8, F32)]),
        "nki": lambda t: nisa.range_select(on_true_tile=t[0], comp_op0=np.greater_equal, comp_op1=np.less,
                                           bound0=t[1], bound1=t[1]),
        "nki06": lambda t: nisa06.range_select(dst=t[0], on_true_tile=t[0], comp_op0=np.greater_equal,
                                               comp_op1=np.less, bound0=t[1], bound1=t[1])}),
    "dma.source": (TRN1, lambda a: legality.dma(legality.Operand(S.Immediate, F32, 1, 1), dram(1, 1), arch=a), {}),
    "dma.psum": (TRN1, lambda a: legality.dma(sb(F32, 4, 8), ps(F32, 4, 8), arch=a, opcode=IT.DMACopy), {
        "decoder": one("DMACopy", [("SB", 4, 8, F32)], [("PSUM", 4, 8, F32)]),
        "nki": lambda t: nisa.dma_copy(dst=nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.psum), src=t[0]),
        "nki06": lambda t: nisa06.dma_copy(dst=t[1], src=t[0])}),
    "dma.mode": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 8), arch=a, mode=REPLICATE), {
        "decoder": dma_module((4, 8), (4, 8), mode=REPLICATE)}),
    "dma.rmw-op": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 8), arch=a, opcode=IT.DMACopy, dst_rmw_op=AluOp.mult), {
        "decoder": dma_module((4, 8), (4, 8), opcode="DMACopy", dst_rmw_op=AluOp.mult),
        "nki": lambda t: nisa.dma_copy(dst=t[1], src=t[0], dst_rmw_op=np.multiply),
        "nki06": lambda t: nisa06.dma_compute(dst=t[1], srcs=[t[0], t[1]], reduce_op=nl06.multiply)}),
    "dma.hwdge": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 8), arch=a, opcode=IT.DMACopy, dge_type=DgeType.HWDGE), {
        "decoder": dma_module((4, 8), (4, 8), opcode="DMACopy", dge_type=DgeType.HWDGE),
        "nki06": lambda t: nisa06.dma_copy(dst=t[1], src=t[0], dge_mode=nisa06.dge_mode.hwdge)}),
    "dma.index": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 8), arch=a, opcode=IT.DMACopy, index=dram(2, 1, I32)), {
        "decoder": dma_module((4, 8), (4, 8), opcode="DMACopy", index=((2, 1), I32)),
        "nki06": lambda t: nisa06.dma_copy(dst=t[2], src=hbm_copy(t[0]).ap([[8, 2], [1, 8]], vector_offset=t[1],
                                                                          indirect_dim=0))}),
    "dma.indirect-dim": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 8), arch=a, opcode=IT.DMACopy, index=dram(1, 1, I32), mode=DYNAMIC, indirect_dim=1), {
        "decoder": dma_module((4, 8), (4, 8), opcode="DMACopy", index=((1, 1), I32), mode=DYNAMIC, indirect_dim=1),
        "nki06": lambda t: nisa06.dma_copy(dst=t[2], src=hbm_copy(t[0]).ap([[8, 4], [1, 8]], scalar_offset=t[1],
                                                                          indirect_dim=1))}),
    "dma.dynamic-offset": (TRN1, lambda a: legality.dma(dram(8, 8), dram(4, 8), arch=a, opcode=IT.DMACopy, index=dram(2, 1, I32), mode=DYNAMIC), {
        "decoder": dma_module((8, 8), (4, 8), opcode="DMACopy", index=((2, 1), I32), mode=DYNAMIC),
        "nki06": lambda t: nisa06.dma_copy(dst=t[2], src=hbm_copy(t[0]).ap([[8, 4], [1, 8]], scalar_offset=t[1],
                                                                          indirect_dim=0))}),
    "dma.row-size": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 4), arch=a, opcode=IT.DMACopy, index=dram(4, 1, I32)), {
        "decoder": dma_module((4, 8), (4, 4), opcode="DMACopy", index=((4, 1), I32)),
        "nki06": lambda t: nisa06.dma_copy(dst=t[2], src=hbm_copy(t[0]).ap([[8, 4], [1, 8]], vector_offset=t[1],
                                                                          indirect_dim=0))}),
    "dma.transpose-source": (TRN1, lambda a: legality.dma(dram(2, 12), dram(2, 12), arch=a, opcode=IT.DMACopy, mode=DmaMode.Transpose, src_2d=False), {
        "decoder": dma_module((2, 3, 4), (2, 12), opcode="DMACopy", mode=DmaMode.Transpose),
        "nki06": lambda t: nisa06.dma_transpose(dst=t[1], src=t[0])}),
    "dma.element-count": (TRN1, lambda a: legality.dma(dram(4, 8), dram(4, 4), arch=a, opcode=IT.DMACopy), {
        "decoder": dma_module((4, 8), (4, 4), opcode="DMACopy"),
        "nki": lambda t: nisa.dma_copy(dst=t[1], src=t[0]),
        "nki06": lambda t: nisa06.dma_copy(dst=t[1], src=t[0])}),
}

#: Why a layer cannot be asked for an instruction breaking the rule (rule id -> layer -> reason).
TRACERS_MAKE_THE_RESULT = "the tracer makes the PSUM result of the matmul's shape and dtype itself"
TRACERS_PLACE_LATER = "the tracer places tiles after the trace (its allocator keeps groups in one bank)"
NO_129_PARTITIONS = "no tile, and (decoder) no verified operand, spans more than the PE rows"
UNREACHABLE = {
    "matmul.operand-dtype": {"nki": "the tracers have no PE-illegal on-chip float dtype to hand it",
                             "nki06": "the tracers have no PE-illegal on-chip float dtype to hand it"},
    "matmul.fp32-pair": {"nki": "bf16 test tiles", "nki06": "bf16 test tiles"},
    "matmul.operand-space": {"nki": "the 2.2x tracer copies a PSUM operand to SBUF first, as NKI's compiler does "
                                    "(test_a_psum_operand_reaches_the_pe_through_sbuf)"},
    "matmul.result-space": {"nki": TRACERS_MAKE_THE_RESULT},
    "matmul.contraction": {"nki06": "covered through the shared builder (nki/instructions.matmul)"},
    "matmul.pe-rows": {"decoder": NO_129_PARTITIONS, "nki": NO_129_PARTITIONS, "nki06": NO_129_PARTITIONS},
    "matmul.pe-cols": {"decoder": "the stationary's partitions would have to exceed the result's PSUM tensor",
                       "nki06": "covered through the shared builder (nki/instructions.matmul)"},
    "matmul.moving-size": {"nki06": "covered through the shared builder (nki/instructions.matmul)"},
    "matmul.result-partitions": {"nki": TRACERS_MAKE_THE_RESULT, "nki06": TRACERS_MAKE_THE_RESULT},
    "matmul.result-size": {"nki": TRACERS_MAKE_THE_RESULT, "nki06": TRACERS_MAKE_THE_RESULT},
    "matmul.result-dtype": {"nki": TRACERS_MAKE_THE_RESULT, "nki06": TRACERS_MAKE_THE_RESULT},
    "matmul.transpose-identity": {"nki": "the tracer streams its own identity",
                                  "nki06": "the tracer streams its own identity"},
    "matmul.transpose-start": {"nki": "nc_transpose never accumulates"},
    "matmul.psum-word": {"decoder": "matmul.psum-bank's decoder case covers the placed-address rules",
                         "nki": TRACERS_PLACE_LATER, "nki06": TRACERS_PLACE_LATER},
    "matmul.psum-bank": {"nki": TRACERS_PLACE_LATER, "nki06": TRACERS_PLACE_LATER},
    "stream-transpose.source": {"decoder": "the decoder refuses an immediate input of StreamTranspose",
                                "nki": "tracer operands are tiles", "nki06": "tracer operands are tiles"},
    "stream-transpose.result": {"nki": "the tracer makes the transposed result",
                                "nki06": "nki06 reshapes dst to the transposed result"},
    "dma.source": {"decoder": "covered by the decoder's refusal of immediate DMA sources",
                   "nki": "tracer operands are tiles", "nki06": "tracer operands are tiles"},
}
for _rule in ("local-gather.partitions", "local-gather.index-dtype", "local-gather.elements-per-index",
              "local-gather.valid-indices"):
    UNREACHABLE[_rule] = {"nki": "the 2.2x local_gather is not modelled (refused)"}
UNREACHABLE["dma.hwdge"] = {"nki": "the 2.2x dma_copy records no descriptor-generator type (its dge_mode is not modelled)"}
UNREACHABLE["dma.mode"] = {"nki": "the tracers emit copies, transposes and Dynamic transfers only",
                           "nki06": "the tracers emit copies, transposes and Dynamic transfers only"}
NO_2X_INDIRECT = "the 2.2x gathers index SBUF tiles by whole rows of their own shape (dma_gather)"
for _rule in ("dma.index", "dma.indirect-dim", "dma.dynamic-offset", "dma.row-size"):
    UNREACHABLE[_rule] = {"nki": NO_2X_INDIRECT}
UNREACHABLE["alu.tensor-scalar-reduce-fold"] = {
    "nki": "the 2.2x tensor_scalar_reduce is recorded as a tensor_scalar and a tensor_reduce (its docs take "
           "nl.subtract too), not as a TensorScalarReduce"}
UNREACHABLE["alu.partition-reduce-op"] = {
    "nki": "the 2.2x tensor_partition_reduce is recorded through the PE array (a matmul, or transposes and a "
           "tensor_reduce), not as a TensorPartitionReduce"}
UNREACHABLE["dma.transpose-source"] = {"nki": "nki.isa.dma_transpose takes 2-D tiles only (its axes=(1, 0))"}

#: The on-chip bf16 tiles each tracer case starts from.
NKI_TILES = {"matmul.operand-space": [(128, 128), (128, 512)], "matmul.contraction": [(128, 128), (64, 512)], "matmul.pe-cols": [(128, 129), (128, 512)],
             "matmul.moving-size": [(128, 128), (128, 513)], "matmul.pe-tile": [(64, 64), (64, 64)],
             "matmul.perf-mode": [(64, 2, 64), (64, 2, 64)], "instruction.generation": [(4, 8), (4, 1)],
             "operand.pool-psum": [(64, 64)], "operand.dve-act-free-size": [], "operand.psum-inputs": [(64, 64)],
             "dma.rmw-op": [(4, 8), (4, 8)], "dma.element-count": [(4, 8), (4, 4)], "dma.psum": [(4, 8)],
             "alu.bitvec-engine": [(4, 8)], "alu.act-tensor-scalar": [(4, 8)], "alu.act-reduce": [(4, 8)],
             "alu.scalar-tensor-tensor": [(4, 8)], "alu.tensor-scalar-reduce": [(4, 8)], "alu.tensor-tensor-scan": [(4, 8)],
             "alu.bitvec-dtype": [(4, 8)], "alu.tensor-scalar-op-kinds": [(4, 8)], "alu.reduce-op": [(4, 8)],
             "stream-transpose.block": [(16, 40)], "bn-stats.size": [(8, 513)], "max8.size": [(8, 4)]}
PSUM_F32 = ((64, 64), "psum", "float32")
F32_4x8 = ((4, 8), "sbuf", "float32")
NKI06_TILES = {"matmul.operand-space": [((128, 128), "psum", "bfloat16"), (128, 512), ((128, 512), "psum", "float32")],
               "matmul.result-space": [(64, 64), (64, 64), ((64, 64), "sbuf", "float32")],
               "matmul.transpose-start": [(64, 64), (64, 64), ((64, 64), "psum", "bfloat16")],
               "matmul.perf-mode": [(64, 64), (64, 64), PSUM_F32],
               "matmul.pe-tile": [(64, 64), (64, 64), PSUM_F32],
               "operand.pool-psum": [PSUM_F32, ((64, 64), "sbuf", "float32")],
               "operand.dve-act-free-size": [((2, 65537), "sbuf", "uint8")],
               "operand.psum-inputs": [PSUM_F32, PSUM_F32, ((64, 64), "sbuf", "float32")],
               "dma.rmw-op": [(4, 8), (4, 8)], "dma.element-count": [(4, 8), (4, 4)],
               "dma.psum": [F32_4x8, ((4, 8), "psum", "float32")],
               "alu.bitvec-engine": [((4, 8), "sbuf", "int32")], "alu.act-tensor-scalar": [F32_4x8],
               "alu.act-reduce": [F32_4x8, ((4, 1), "sbuf", "float32")],
               "alu.scalar-tensor-tensor": [((4, 8), "sbuf", "int32")], "alu.tensor-scalar-reduce": [F32_4x8],
               "alu.tensor-tensor-scan": [((4, 8), "sbuf", "int32")],
               "alu.tensor-scalar-reduce-fold": [F32_4x8, ((4, 1), "sbuf", "float32")],
               "alu.bitvec-dtype": [(4, 8)], "alu.tensor-scalar-op-kinds": [((4, 8), "sbuf", "int32")],
               "alu.reduce-op": [F32_4x8, ((4, 1), "sbuf", "float32")],
               "alu.partition-reduce-op": [F32_4x8, ((1, 8), "sbuf", "float32")],
               "dma.index": [F32_4x8, ((2, 1), "sbuf", "int32"), F32_4x8],
               "dma.indirect-dim": [F32_4x8, ((1, 1), "sbuf", "int32"), F32_4x8],
               "dma.dynamic-offset": [F32_4x8, ((2, 1), "sbuf", "int32"), F32_4x8],
               "dma.row-size": [F32_4x8, ((4, 1), "sbuf", "int32"), ((4, 4), "sbuf", "float32")],
               "dma.transpose-source": [(2, 3, 4), (12, 2)],
               "stream-transpose.block": [(16, 40), (40, 16)], "bn-stats.size": [(8, 513), (8, 6)],
               "max8.size": [(8, 4), (8, 8)], "dma.hwdge": [(4, 8), (4, 8)],
               "instruction.generation": [(4, 8), (4, 1)],
               "local-gather.partitions": [((24, 64), "sbuf", "float32"), ((24, 1), "sbuf", "uint16"), ((24, 16), "sbuf", "float32")],
               "local-gather.index-dtype": [((16, 64), "sbuf", "float32"), ((16, 1), "sbuf", "int32"), ((16, 16), "sbuf", "float32")],
               "local-gather.elements-per-index": [((16, 64), "sbuf", "float32"), ((16, 1), "sbuf", "uint16"), ((16, 48), "sbuf", "float32")],
               "local-gather.valid-indices": [((16, 64), "sbuf", "float32"), ((16, 1), "sbuf", "uint16"), ((16, 17), "sbuf", "float32")]}


def test_every_rule_has_its_cases():
    ids = [r.id for r in legality.RULES]
    assert len(ids) == len(set(ids)) and ids == list(CASES)
    for rid, (_, _, layers) in CASES.items():
        for layer in LAYERS:
            assert (layer in layers) != (layer in UNREACHABLE.get(rid, {})), (rid, layer)
    for rule in legality.RULES:
        assert rule.requires and repr(rule) == f"<rule {rule.id}>"


@pytest.mark.parametrize("rid", list(CASES))
def test_one_wording_through_every_layer(rid):
    arch, api, layers = CASES[rid]
    v = api(arch)
    assert v is not None and v.rule == rid, v
    assert v.message.split(":")[0] in {t.name for t in IT}, v.message  # it names the instruction
    for layer, how in layers.items():
        if layer == "decoder":
            text = decoder_error(arch, how)
        elif layer == "nki":
            tiles = NKI_TILES[rid]
            text = nki_error(arch, lambda *t: how(t), *tiles)
        else:
            text = nki06_error(arch, lambda *t: how(t), *NKI06_TILES[rid])
        assert v.message in text, (layer, v.message, text)


def test_legal_instructions_pass_and_limits_follow_the_generation():
    ok = legality.matmul(sb(BF, 128, 128), sb(BF, 128, 512), ps(F32, 128, 512), arch="trn1")
    assert ok is None
    e3 = DType.float8e3
    assert legality.matmul(sb(e3, 64, 64), sb(e3, 64, 64), ps(F32, 64, 64), arch="trn1").rule == "matmul.operand-dtype"
    assert legality.matmul(sb(e3, 64, 64), sb(e3, 64, 64), ps(F32, 64, 64), arch="trn2") is None
    assert e3 in legality.pe_input_dtypes("trn2") and e3 not in legality.pe_input_dtypes("trn1")
    tiles = dict(tile_size=[32, 64], tile_position=[0, 0])
    assert legality.matmul(sb(BF, 32, 64), sb(BF, 32, 64), ps(F32, 64, 64), arch="trn2", **tiles) is None
    # A tile is the array's rows / columns halved or quartered, at a multiple of its size.
    for arch, size, position, why in [
            ("trn2", [96, 96], [0, 0], "PE tile size [96, 96]: a tiling mode slices the 128 x 128 array in halves or quarters, down to 32 on trn2"),
            ("trn1", [32, 64], [0, 0], "PE tile sizes and positions are multiples of 64 on trn1"),
            ("trn2", [64, 128], [32, 0], "PE tile position [32, 0] is not a multiple of its size [64, 128]"),
            ("trn2", [128, 64], [0, 32], "PE tile position [0, 32] is not a multiple of its size [128, 64]")]:
        v = legality.matmul(sb(BF, 32, 32), sb(BF, 32, 64), ps(F32, 32, 64), arch=arch, tile_size=size, tile_position=position)
        assert v.rule == "matmul.pe-tile" and why in v.message, (arch, size, position, v)
    for size, position in [([64, 64], [64, 64]), ([32, 32], [96, 32]), ([128, 32], [0, 96])]:
        assert legality.matmul(sb(BF, 32, 32), sb(BF, 32, 64), ps(F32, 32, 64), arch="trn2", tile_size=size,
                               tile_position=position) is None
    assert legality.dma(dram(4, 8), dram(4, 8), arch="trn2", dge_type=DgeType.HWDGE) is None
    with pytest.raises(NeuronxsimError, match="unknown arch 'trn9'"):
        legality.bn_stats(sb(BF, 1, 1), arch="trn9")
    for fold in (AluOp.add, AluOp.mult, AluOp.max, AluOp.min):
        assert legality.register_fold(fold, cumulative=False) is None
    assert legality.register_fold(AluOp.subtract, cumulative=True) is None
    assert legality.register_fold(AluOp.divide, cumulative=True).rule == "alu.tensor-scalar-reduce-fold"


def test_dma_rules_cover_scatters_and_run_time_offsets():
    """IndirectSave (a scatter: one index per source row) and Dynamic DMAs (one run-time row
    offset) are refused by the rules dma.index / dma.dynamic-offset, with their one wording, in
    the simulator's decoder too."""
    scatter = IT.IndirectSave
    cases = [
        (legality.dma(dram(4, 8), dram(8, 8), arch=TRN1, opcode=scatter), "dma.index",
         dma_module((4, 8), (8, 8), opcode="IndirectSave")),
        (legality.dma(dram(4, 8), dram(8, 8), arch=TRN1, opcode=scatter, index=dram(8, 1, I32)), "dma.index",
         dma_module((4, 8), (8, 8), opcode="IndirectSave", index=((8, 1), I32))),
        (legality.dma(dram(8, 8), dram(4, 8), arch=TRN1, mode=DYNAMIC), "dma.dynamic-offset",
         dma_module((8, 8), (4, 8), mode=DYNAMIC)),
        (legality.dma(dram(8, 8), dram(4, 8), arch=TRN1, mode=DYNAMIC, index=dram(1, 1, F32)), "dma.dynamic-offset",
         dma_module((8, 8), (4, 8), mode=DYNAMIC, index=((1, 1), F32))),
        (legality.dma(dram(8, 8), dram(4, 4), arch=TRN1, mode=DYNAMIC, index=dram(1, 1, I32)), "dma.row-size",
         dma_module((8, 8), (4, 4), mode=DYNAMIC, index=((1, 1), I32))),
    ]
    for v, rid, build in cases:
        assert v is not None and v.rule == rid, (rid, v)
        assert v.message in decoder_error(TRN1, build), (rid, v.message)
    assert "the source has 4 rows" in cases[1][0].message
    assert legality.dma(dram(4, 8), dram(8, 8), arch=TRN1, opcode=scatter, index=dram(4, 1, I32)) is None
    assert legality.dma(dram(8, 8), dram(4, 8), arch=TRN1, mode=DYNAMIC, index=dram(1, 1, I32)) is None


def test_a_psum_operand_reaches_the_pe_through_sbuf():
    """The PE reads its operands from SBUF (nki.isa.nc_matmul: "must read inputs from SBUF";
    rule matmul.operand-space). The 2.2x tracer lowers a PSUM operand as NKI's compiler does, a
    copy to SBUF before the Matmult, so the instruction it emits obeys the rule; NKI 0.6, whose
    instructions are the hardware's one to one, refuses it (CASES)."""
    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nisa.nc_transpose(nl.load(a))  # [128, 128] in PSUM
        nl.store(out, nisa.nc_matmul(t, nl.load(b)))
        return out

    a, b = np.zeros((128, 128), np.float32), np.zeros((128, 64), np.float32)
    insts = nki.trace(kernel, a, b).functions[0].blocks[0].instructions
    mm = [i for i in insts if i.opcode_name == "Matmult"][-1]
    assert all(ap.location.type.name == "SB" for ap in mm.ins), [ap.location.type for ap in mm.ins]


def test_the_generation_rule_covers_every_later_instruction():
    """instruction.generation: each instruction the rule names, refused on trn1 and taken on trn2
    (the GetRandState of the Vector Engine's generators on neither: NeuronCore-v4's)."""
    pool, dve = Engine.Pool, Engine.DVE
    for op, engine in ((IT.RangeSelect, dve), (IT.NonzeroWithCount, pool), (IT.Rand, pool),
                       (IT.SetRandState, pool), (IT.GetRandState, pool)):
        v = legality.generation(op, engine, arch="trn1")
        assert v is not None and v.rule == "instruction.generation" and v.message.startswith(f"{op.name}: "), v
        assert "needs NeuronCore-v3 or later; trn1 is NeuronCore-v2" in v.message
        assert legality.generation(op, engine, arch="trn2") is None
    assert legality.generation(IT.Rand, dve, arch="trn1") is None  # the Vector Engine's generators: every generation
    assert "NeuronCore-v4" in legality.generation(IT.GetRandState, dve, arch="trn2").message
    assert legality.generation(IT.TensorCopy, pool, arch="trn1") is None


def test_hardware_dge_moves_raw_bytes():
    """dma.hwdge on a generation that has hardware DGE: a cast is refused with one wording by the
    decoder and both tracers."""
    v = legality.dma(dram(4, 8, BF), dram(4, 8), arch="trn2", opcode=IT.DMACopy, dge_type=DgeType.HWDGE)
    assert v is not None and v.rule == "dma.hwdge" and "raw bytes" in v.message, v
    assert legality.dma(dram(4, 8), dram(4, 8), arch="trn2", opcode=IT.DMACopy, dge_type=DgeType.HWDGE) is None

    def build(b):
        src, dst = b.input("src", (4, 8), BF), b.output("dst", (4, 8), F32)
        b.add("DMACopy", [b.full(src)], [b.full(dst)], name="x", dge_type=DgeType.HWDGE)

    def cast_2x(t):
        nisa.dma_copy(dst=nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf), src=t[0],
                      dge_mode=nisa.dge_mode.hwdge)

    assert v.message in decoder_error("trn2", build)
    assert v.message in nki_error("trn2", lambda *t: cast_2x(t), (4, 8))
    assert v.message in nki06_error("trn2", lambda *t: nisa06.dma_copy(dst=t[1], src=t[0], dge_mode=nisa06.dge_mode.hwdge),
                                    (4, 8), ((4, 8), "sbuf", "float32"))


def test_dma_does_not_reach_psum():
    """dma.psum: DMA moves data between HBM and SBUF, a compute engine between PSUM and SBUF. A
    PSUM source, destination or index is refused with one wording by the decoder and the tracers'
    DMA calls; the 2.2x nl.store lowers a PSUM tile as NKI 2.26's compiler does ("nki.language.store
    supports PSUM buffer with extra additional copy inserted"), a copy to SBUF before the DMA, while
    NKI 0.6's nl.store, whose instructions are the hardware's one to one, refuses it."""
    src = legality.dma(ps(F32, 4, 8), dram(4, 8), arch=TRN1, opcode=IT.Save)
    assert src.rule == "dma.psum" and src.message.startswith("Save: the source is in PSUM"), src
    index = legality.dma(dram(4, 8), sb(F32, 4, 8), arch=TRN1, index=ps(I32, 4, 1))
    assert index.rule == "dma.psum" and "the index tensor is in PSUM" in index.message, index
    offset = legality.dma(dram(8, 8), sb(F32, 4, 8), arch=TRN1, index=ps(I32, 1, 1), mode=DYNAMIC)
    assert "the run-time row offset is in PSUM" in offset.message, offset
    assert legality.dma(dram(4, 8), sb(F32, 4, 8), arch=TRN1) is None

    def hbm(t):
        return nl06.ndarray(t.shape, dtype=t.dtype, buffer=nl06.shared_hbm)

    psum = ((4, 8), "psum", "float32")
    assert src.message in nki06_error(TRN1, lambda *t: nl06.store(hbm(t[0]), t[0]), psum)
    transposed = legality.dma(ps(F32, 4, 8), sb(F32, 8, 4), arch=TRN1, opcode=IT.DMACopy, mode=DmaMode.Transpose)
    assert transposed.message in nki06_error(TRN1, lambda *t: nisa06.dma_transpose(dst=t[1], src=t[0]), psum,
                                             ((8, 4), "sbuf", "float32"))
    assert src.message in decoder_error(TRN1, one("Save", [("PSUM", 4, 8, F32)], [("SB", 4, 8, F32)]))

    @nki.jit
    def store_psum(a):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nisa.nc_transpose(nl.load(a)))  # the transpose lands in PSUM
        return out

    insts = nki.trace(store_psum, np.zeros((128, 128), np.float32)).functions[0].blocks[0].instructions
    spaces = [(i.opcode_name, [ap.location.type.name for ap in i.ins + i.outs if not ap.is_immediate])
              for i in insts[-2:]]
    assert spaces == [("TensorCopy", ["PSUM", "SB"]), ("Save", ["SB", "Output"])], spaces


def test_alu_rules_follow_engine_and_generation():
    """alu.*: the operator combinations each engine takes (public tensor_scalar docs), and the
    Activation engine's add-only reduction on NeuronCore-v2 only."""
    act, ts = Engine.Activation, IT.TensorScalar
    for op0, op1 in ((AluOp.mult, AluOp.add), (AluOp.mult, AluOp.bypass), (AluOp.add, AluOp.bypass)):
        assert legality.alu_ops(ts, act, op0, op1) is None
        assert legality.alu_ops(IT.TensorScalarPtr, act, op0, op1) is None
    for op0, op1 in ((AluOp.mult, AluOp.mult), (AluOp.add, AluOp.add), (AluOp.subtract, AluOp.bypass),
                     (AluOp.bypass, AluOp.bypass)):
        assert legality.alu_ops(ts, act, op0, op1).rule == "alu.act-tensor-scalar"
    assert legality.alu_ops(ts, Engine.DVE, AluOp.bitwise_xor, AluOp.logical_shift_left) is None
    assert legality.alu_ops(ts, Engine.Pool, AluOp.bitwise_and, AluOp.arith_shift_right).rule == "alu.bitvec-engine"
    assert legality.alu_ops(ts, Engine.Pool, AluOp.add, AluOp.arith_shift_right).rule == "alu.tensor-scalar-op-kinds"
    assert legality.alu_ops(IT.TensorScalarPtr, Engine.DVE, AluOp.bitwise_not, AluOp.bypass) is None  # one operator
    assert legality.alu_ops(IT.TensorTensor, Engine.Pool, AluOp.pow) is None
    zero = AccumCmd.ZeroAccumulate
    assert legality.activation_reduce(zero, AluOp.add, arch="trn1") is None
    assert legality.activation_reduce(AccumCmd.Idle, AluOp.max, arch="trn1") is None
    assert legality.activation_reduce(zero, AluOp.max, arch="trn2") is None
    # the tracers record add only: on trn2, where the rule takes max, they say so
    text = nki_error("trn2", lambda *t: nisa.activation_reduce(nl.copy, t[0], reduce_op=np.max,
                                                               reduce_res=nl.ndarray((4, 1), dtype=nl.float32,
                                                                                     buffer=nl.sbuf)), (4, 8))
    assert "is not modelled by the tracer" in text, text


def _bitwise_module(dtype, op0=AluOp.bitwise_and, op1=AluOp.bypass):
    """A BIR JSON module loading x [4, 8] of ``dtype``, ``(x op0 12) op1 3`` on the Vector
    Engine, storing y."""
    b = ModuleBuilder(TRN1)
    x, y = b.input("x", (4, 8), dtype), b.output("y", (4, 8), dtype)
    t = b.sbuf("t", 4, 8, dtype)
    b.dma(b.tile(t), b.full(x))
    b.add("TensorScalar", [b.tile(t)], [b.tile(t)], engine=Engine.DVE, name="x", op0=op0, const0=12.0, op1=op1,
          const1=3.0)
    b.dma(b.full(y), b.tile(t))
    return bir.Module.from_json(b.module.to_json(-1))


def test_a_bir_json_module_applies_bit_vector_operators_to_integer_tiles_only():
    """alu.bitvec-dtype, alu.tensor-scalar-op-kinds: the simulator once computed a bit-vector
    operator on float data as on its int32-truncated values, a silent wrong answer for a module
    read from BIR JSON; it refuses it with the rule's wording. On integer tiles the result is the
    integers' bits, as before."""
    x = np.arange(32, dtype=np.int32).reshape(4, 8) - 7
    r = sim.simulate(_bitwise_module(I32), {"x": x}, arch=TRN1)
    np.testing.assert_array_equal(r.outputs["y"], x & 12)
    bad = legality.bitvec_dtypes(IT.TensorScalar, AluOp.bitwise_and, ins=[F32], outs=[F32])
    assert bad.rule == "alu.bitvec-dtype" and "an input is float32" in bad.message, bad
    with pytest.raises(NeuronxsimError) as info:
        sim.simulate(_bitwise_module(F32), {"x": x.astype(np.float32)}, arch=TRN1)
    assert bad.message in str(info.value), str(info.value)
    mixed = legality.alu_ops(IT.TensorScalar, Engine.DVE, AluOp.bitwise_and, AluOp.add)
    assert mixed.rule == "alu.tensor-scalar-op-kinds", mixed
    with pytest.raises(NeuronxsimError) as info:
        sim.simulate(_bitwise_module(I32, op1=AluOp.add), {"x": x}, arch=TRN1)
    assert mixed.message in str(info.value), str(info.value)
    assert legality.bitvec_dtypes(IT.TensorTensor, AluOp.bitwise_or, ins=[I32, DType.uint8], outs=[DType.int16]) is None
    assert legality.bitvec_dtypes(IT.TensorTensor, AluOp.add, ins=[F32, F32], outs=[BF]) is None
    out = legality.bitvec_dtypes(IT.TensorReduce, AluOp.logical_shift_left, ins=[I32], outs=[F32])
    assert out.rule == "alu.bitvec-dtype" and "an output is float32" in out.message, out


def test_reductions_fold_with_the_documented_operators():
    """alu.reduce-op (tbl-aluop's Legal Reduction column) for TensorReduce, an accumulating
    Activation and SelectReduce in the decoder; alu.partition-reduce-op for GpSimd's partition
    reduction, whose bit-vector operators take integer tiles (alu.bitvec-dtype) in the decoder and
    the NKI 0.6 tracer."""
    legal = {AluOp.add, AluOp.subtract, AluOp.mult, AluOp.max, AluOp.min, AluOp.logical_and, AluOp.logical_or,
             AluOp.logical_xor, AluOp.bitwise_and, AluOp.bitwise_or, AluOp.bitwise_xor}
    for op in AluOp.__members__.values():
        assert legality.is_reduce_op(op) == (op in legal), op
        assert (legality.reduce_op(IT.TensorReduce, op) is None) == (op in legal), op
    for op in (AluOp.add, AluOp.max, AluOp.bitwise_or, AluOp.bitwise_and, AluOp.average):
        assert legality.partition_reduce_op(op) is None, op
    divide = legality.reduce_op(IT.Activation, AluOp.divide)
    assert divide.rule == "alu.reduce-op" and divide.message.startswith("Activation: "), divide
    act = one("Activation", [("SB", 4, 8, F32)], [("SB", 4, 8, F32)], func=ActivationFunc.Copy,
              acc=AccumCmd.ZeroAccumulate, acc_op=AluOp.divide)
    assert divide.message in decoder_error("trn2", act)
    pow_ = legality.reduce_op(IT.SelectReduce, AluOp.pow)
    select = one("SelectReduce", [("SB", 4, 8, DType.uint8), ("SB", 4, 8, F32)], [("SB", 4, 8, F32), ("SB", 4, 1, F32)],
                 engine=Engine.DVE, reduce_op=AluOp.pow)
    assert pow_.message in decoder_error(TRN1, select)
    floats = legality.bitvec_dtypes(IT.TensorPartitionReduce, AluOp.bitwise_or, ins=[F32], outs=[F32])
    tpr = one("TensorPartitionReduce", [("SB", 4, 8, F32)], [("SB", 1, 8, F32)], engine=Engine.Pool,
              op=AluOp.bitwise_or)
    assert floats.message in decoder_error(TRN1, tpr)
    f32 = ((4, 8), "sbuf", "float32")
    assert floats.message in nki06_error(TRN1, lambda *t: nisa06.tensor_partition_reduce(dst=t[1], op=nl06.bitwise_or,
                                                                                         data=t[0]),
                                         f32, ((1, 8), "sbuf", "float32"))


def test_integer_bit_vector_tensor_tensor_runs_on_the_vector_engine():
    """NKI 0.6's tensor_tensor defaults all-int32 operands to GpSimd, but a bit-vector operator
    to the Vector Engine, where the rule alu.bitvec-engine puts it."""
    @nki06.jit
    def kernel(a):
        out = nl06.ndarray((4, 8), dtype=nl06.int32, buffer=nl06.shared_hbm)
        t = nl06.ndarray((4, 8), dtype=nl06.int32, buffer=nl06.sbuf)
        nisa06.dma_copy(dst=t, src=a)
        nisa06.tensor_tensor(dst=t, data1=t, data2=t, op=nl06.bitwise_xor)
        nisa06.dma_copy(dst=out, src=t)
        return out

    module = traced(kernel, (np.zeros((4, 8), np.int32),), {}, TRN1)[0].module
    engines = [i.engine for i in module.functions[0].blocks[0].instructions if i.opcode_name == "TensorTensor"]
    assert engines == [Engine.DVE], engines

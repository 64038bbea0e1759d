"""The innermost stride the cost formulas read is the innermost free pair that walks (num > 1): a
pair of one element ([1, 1] anywhere in the pattern) moves nowhere and must not hide it. The rules:
an SBUF/PSUM innermost stride past 16 bytes halves the interface's rate [A1]; the v3 DVE perf mode
is 4x only for unit-stride innermost operands, 2x otherwise [A2]; the v2 bf16 tensor_tensor fast
path needs unit stride [I tensor_tensor] (../shared/reference/nki-isa-and-hw.md §2-§4)."""

import pytest

from neuronxsim import sim
from neuronxsim.bir import AluOp, DType
from neuronxsim.sim.build import ModuleBuilder

N = 1024


def _cycles(arch, opcode, src_free, dtype, **fields):
    """Cycles of `opcode` whose first input walks `src_free` over a [128, 16 N] SBUF tile (the
    other operands contiguous [128, N])."""
    b = ModuleBuilder(arch)
    src = b.tile(b.sbuf("src", 128, 16 * N, dtype), free=src_free)
    other = lambda name: b.tile(b.sbuf(name, 128, N, dtype))  # noqa: E731
    ins = [src, other("in1")] if opcode == "TensorTensor" else [src]
    inst = b.add(opcode, ins, [other("out")], **fields)
    return sim.latency(inst, arch)["cycles"]


# The same N elements read at `step`, with unit pairs before, between and after.
def _walks(step):
    return {
        "plain": [(step, N)],
        "trailing [1,1]": [(step, N), (1, 1)],
        "two trailing": [(step, N), (1, 1), (1, 1)],
        "leading [1,1]": [(1, 1), (step, N)],
        "split, [1,1] inside": [(step * N // 4, 4), (1, 1), (step, N // 4)],
    }


OPS = [("TensorCopy", {}), ("Activation", {}), ("TensorTensor", {"op": AluOp.add})]


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
@pytest.mark.parametrize("dtype", [DType.float32, DType.bfloat16])
@pytest.mark.parametrize("opcode, fields", OPS, ids=[op for op, _ in OPS])
@pytest.mark.parametrize("step", [1, 16])
def test_unit_pairs_do_not_change_the_cost(arch, dtype, opcode, fields, step):
    walks = _walks(step)
    got = {name: _cycles(arch, opcode, free, dtype, **fields) for name, free in walks.items()}
    assert len(set(got.values())) == 1, got


@pytest.mark.parametrize("arch", ["trn1", "trn2"])
def test_a_stride_behind_a_unit_pair_is_priced(arch):
    cfg = sim.config(arch)
    for dtype in (DType.float32, DType.bfloat16):
        for opcode, fields in OPS:
            unit = _cycles(arch, opcode, [(1, N), (1, 1)], dtype, **fields)
            strided = _cycles(arch, opcode, [(16, N), (1, 1)], dtype, **fields)
            v3_bf16 = arch == "trn2" and dtype == DType.bfloat16
            if opcode == "TensorCopy" and v3_bf16:
                # perf mode: 4x with unit stride, 2x when not contiguous [A2]
                assert (unit, strided) == (N / 4, N / 2)
            elif opcode == "TensorTensor" and dtype == DType.bfloat16:
                # v2: N with unit stride, 2N otherwise, then halved by the stride [I, A1];
                # v3: the 2x mode for all-bf16 SBUF operands, N, halved by the stride [A2, A1]
                assert (unit, strided) == ((N, 4 * N) if arch == "trn1" else (N, 2 * N))
            else:
                base = 2 * N if opcode == "TensorTensor" else N
                assert (unit, strided) == (base, base * cfg.sram_strided_factor), (opcode, dtype)

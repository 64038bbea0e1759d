"""blockwise_mm: the MoE blockwise matmul, against the public pseudo code."""

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
from neuronxsim.errors import KernelError
from neuronxsim.nki._private_kernels.blockwise_mm import ExpertAffinityScaleMode, blockwise_mm


def moe_case(rng, tokens, hidden, experts, inter, block, top_k, dtype=np.float32):
    affinity, positions, block_expert = refs.moe_routing(rng, tokens, experts, top_k, block)
    h = (rng.standard_normal((tokens + 1, hidden)) * 0.5).astype(dtype)
    gate_up = (rng.standard_normal((experts, hidden, 2, inter)) / np.sqrt(hidden)).astype(dtype)
    down = (rng.standard_normal((experts, inter, hidden)) / np.sqrt(inter)).astype(dtype)
    return h, affinity.astype(dtype), gate_up, down, positions, block_expert


@pytest.mark.parametrize("tokens, hidden, experts, inter, block, top_k, dtype", [
    (300, 192, 4, 160, 128, 2, np.float32),  # T+1, H, I not multiples of 128
    (100, 128, 3, 64, 64, 2, ml_dtypes.bfloat16),
    (40, 96, 2, 600, 32, 1, np.float32),  # I over several tiles, B under one
])
def test_matches_the_public_math(rng, tokens, hidden, experts, inter, block, top_k, dtype):
    operands = moe_case(rng, tokens, hidden, experts, inter, block, top_k, dtype)
    (out,), _ = refs.run_on_reference(blockwise_mm, *operands, block_size=block)
    assert out.dtype == operands[0].dtype and out.shape == (tokens + 1, hidden)
    expected = refs.blockwise_mm(*operands, block)
    refs.max_all_close(out[:tokens], expected[:tokens], refs.MOE_RTOL, refs.MOE_ATOL)
    np.testing.assert_array_equal(out[tokens], 0)  # the padding token's affinity is 0


@pytest.mark.parametrize("mode", list(ExpertAffinityScaleMode))
def test_every_affinity_scaling_mode(rng, mode):
    operands = moe_case(rng, 60, 96, 2, 40, 32, 1)
    (out,), _ = refs.run_on_reference(blockwise_mm, *operands, block_size=32, expert_affinities_scaling_mode=int(mode))
    refs.max_all_close(out, refs.blockwise_mm(*operands, 32, int(mode)), refs.MOE_RTOL, refs.MOE_ATOL)


def test_a_block_writes_only_its_tokens(rng):
    """One block of expert 1: every other token's output is exactly 0."""
    h, aff, gate_up, down, _, _ = moe_case(rng, 20, 64, 2, 32, 8, 1)
    positions = np.array([3, 7, 7, 19, 0, 20, 20, 20], np.int32)  # a repeated token, padding
    aff[:] = 1.0
    (out,), _ = refs.run_on_reference(blockwise_mm, h, aff, gate_up, down, positions, np.array([[1]], np.int32),
                                      block_size=8)
    untouched = np.setdiff1d(np.arange(21), positions)
    np.testing.assert_array_equal(out[untouched], 0)
    refs.max_all_close(out, refs.blockwise_mm(h, aff, gate_up, down, positions, np.array([[1]]), 8),
                       refs.MOE_RTOL, refs.MOE_ATOL)


def test_bad_operands_are_refused(rng):
    h, aff, gate_up, down, positions, block_expert = moe_case(rng, 20, 64, 2, 32, 8, 1)
    with pytest.raises(KernelError, match=r"blockwise_mm: token_position_to_id has shape \[\d+\]; expected \[\d+\] "
                                          r"\(T=21 tokens, H=64, E=2 experts, I=32, N=\d+ blocks of block_size=16\)"):
        refs.run_on_reference(blockwise_mm, h, aff, gate_up, down, positions, block_expert, block_size=16)
    with pytest.raises(KernelError, match=r"blockwise_mm: down_proj_weight has shape \[2, 64, 32\]; expected "
                                          r"\[2, 32, 64\]"):
        refs.run_on_reference(blockwise_mm, h, aff, gate_up, down.transpose(0, 2, 1).copy(), positions, block_expert,
                              block_size=8)
    with pytest.raises(KernelError, match="blockwise_mm: block_to_expert is float32; expected int32"):
        refs.run_on_reference(blockwise_mm, h, aff, gate_up, down, positions, block_expert.astype(np.float32),
                              block_size=8)
    with pytest.raises(KernelError, match="blockwise_mm: block_size is 0; expected a positive int"):
        refs.run_on_reference(blockwise_mm, h, aff, gate_up, down, positions, block_expert, block_size=0)
    with pytest.raises(KernelError, match=r"blockwise_mm: expert_affinities_scaling_mode is 7; expected one of 0 "
                                          r"\(NO_SCALE\), 1 \(POST_SCALE\), 2 \(PRE_SCALE\)"):
        refs.run_on_reference(blockwise_mm, h, aff, gate_up, down, positions, block_expert, block_size=8,
                              expert_affinities_scaling_mode=7)

"""nisa.bn_stats, bn_aggr and tensor_scalar test their usual arguments (an on-chip tile, no dtype,
the default engine, a remembered size verdict, a mask keeps_all settles) without the frames of
the helpers that check them; every other argument still goes to those helpers. These kernels
pin what each call records or refuses: partial masks, masks that keep nothing, tiles crossing
the last partial tile, and the refusals in their order."""

import math

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl

from nki_testing import trace_outcome

T = nki.typing.tensor


@nki.jit
def layernorm(x_hbm, eps):
    """layernorm_v2's statistics over row tiles (the last one partial) and column chunks (the
    last one partial), then its normalisation."""
    out = nl.ndarray(x_hbm.shape, dtype=x_hbm.dtype, buffer=nl.shared_hbm)
    rows, cols = x_hbm.shape
    fb = nl.tile_size.bn_stats_fmax
    chunks = math.ceil(cols / fb)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    i_fb = nl.arange(fb)[None, :]
    i6 = nl.arange(6)[None, :]
    for t in nl.affine_range(math.ceil(rows / 128)):
        valid = t * 128 + ip < rows
        x = nl.load(x_hbm[t * 128 + ip, ic], mask=valid)
        stats = nl.ndarray((128, 6 * chunks), dtype=np.float32)
        for j in nl.affine_range(chunks):
            stats[ip, j * 6 + i6] = nisa.bn_stats(x[ip, j * fb + i_fb],
                                                  mask=(j * fb + i_fb < cols), dtype=np.float32)
        mean_var = nisa.bn_aggr(stats[ip, nl.arange(6 * chunks)[None, :]])
        inv_std = nl.rsqrt(mean_var[ip, 1] + eps)
        y = nisa.tensor_scalar(data=x, op0=np.subtract, operand0=mean_var[ip, 0],
                               op1=np.multiply, operand1=inv_std)
        z = nisa.tensor_scalar(y, nl.multiply, 2.0, engine=nisa.vector_engine, dtype=nl.bfloat16)
        w = nisa.tensor_scalar(z, np.multiply, 3.0, op1=np.add, operand1=1.0,
                               engine=nisa.scalar_engine, mask=valid)
        nl.store(out[t * 128 + ip, ic], value=w, mask=valid)
    return out


@nki.jit
def masked_stats(x_hbm):
    """bn_stats and bn_aggr under masks that keep part, nothing, or all, and a dtype."""
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    i6 = nl.arange(6)[None, :]
    x = nl.load(x_hbm)
    stats = nl.ndarray((128, 18), dtype=np.float32)
    stats[ip, i6] = nisa.bn_stats(x, mask=ip < 64)
    stats[ip, 6 + i6] = nisa.bn_stats(x, mask=ip < 0)
    stats[ip, 12 + i6] = nisa.bn_stats(x, mask=ip >= 0, dtype=nl.float32)
    mv = nisa.bn_aggr(stats, mask=ip < 64, dtype=nl.float32)
    nl.store(out, value=nisa.bn_aggr(stats[:, 12:18]))
    nl.store(out[0:64, :], value=mv[0:64, :])
    return out


@nki.jit
def stats_of_hbm(x_hbm):
    return nisa.bn_stats(x_hbm)


@nki.jit
def stats_of_number(x_hbm):
    return nisa.bn_stats(3)


@nki.jit
def stats_wrong_dtype(x_hbm):
    return nisa.bn_stats(nl.load(x_hbm), dtype="float7")


@nki.jit
def stats_too_wide(x_hbm):
    return nisa.bn_stats(nl.load(x_hbm))


@nki.jit
def stats_bad_mask(x_hbm):
    return nisa.bn_stats(nl.load(x_hbm), mask="rows")


@nki.jit
def aggr_of_hbm(x_hbm):
    return nisa.bn_aggr(x_hbm)


@nki.jit
def aggr_bad_count(x_hbm):
    return nisa.bn_aggr(nl.load(x_hbm)[:, 0:4])


@nki.jit
def scalar_hbm_operand(x_hbm, c_hbm):
    return nisa.tensor_scalar(nl.load(x_hbm), np.add, c_hbm)


@nki.jit
def scalar_hbm_data(x_hbm, c_hbm):
    return nisa.tensor_scalar(x_hbm, np.add, nl.load(c_hbm))


@nki.jit
def scalar_bad_engine(x_hbm, c_hbm):
    return nisa.tensor_scalar(nl.load(x_hbm), np.add, 1.0, engine="tensor")


@nki.jit
def scalar_bad_dtype(x_hbm, c_hbm):
    return nisa.tensor_scalar(nl.load(x_hbm), np.add, 1.0, dtype="float7")


@nki.jit
def scalar_no_operand1(x_hbm, c_hbm):
    return nisa.tensor_scalar(x_hbm, np.add, 1.0, op1=np.add)  # (data is checked first)


@pytest.mark.parametrize("rows, cols", [(4096, 2048), (300, 1000), (128, 512), (100, 100)])
def test_layernorm_traces(rows, cols):
    out = trace_outcome(layernorm, T[[rows, cols], nl.float32], 1e-5)
    assert out.startswith("{"), out


def test_masked_statistics_trace():
    assert trace_outcome(masked_stats, T[[128, 512], nl.float32]).startswith("{")


@pytest.mark.parametrize("kernel, shape, message", [
    (stats_of_hbm, [128, 512], "bn_stats: data is the HBM tensor"),
    (stats_of_number, [128, 512], "bn_stats: data must be a tile, not int"),
    (stats_wrong_dtype, [128, 512], "dtype 'float7' is not an NKI data type"),
    (stats_too_wide, [128, 1024], "bn_stats: "),
    (stats_bad_mask, [128, 512], "mask must be a comparison"),
    (aggr_of_hbm, [128, 6], "bn_aggr: data is the HBM tensor"),
    (aggr_bad_count, [128, 6], "not a whole number of"),
])
def test_statistics_refusals(kernel, shape, message):
    out = trace_outcome(kernel, T[shape, nl.float32])
    assert out.startswith("NKIError") and message in out, out


@pytest.mark.parametrize("kernel, message", [
    (scalar_hbm_operand, "tensor_scalar: operand is the HBM tensor"),
    (scalar_hbm_data, "tensor_scalar: data is the HBM tensor"),
    (scalar_bad_engine, "tensor_scalar: engine must be one of"),
    (scalar_bad_dtype, "dtype 'float7' is not an NKI data type"),
    (scalar_no_operand1, "tensor_scalar: data is the HBM tensor"),
])
def test_tensor_scalar_refusals(kernel, message):
    out = trace_outcome(kernel, T[[128, 512], nl.float32], T[[128, 1], nl.float32])
    assert out.startswith("NKIError") and message in out, out


def test_remembered_size_verdicts_answer_again():
    """A size verdict remembered (in _SIZE_VERDICTS and by value in the C path) answers the next
    trace as the first: the refusal again, and the legal width recorded again (the kernel then
    fails only at its return)."""
    for _ in range(3):
        out = trace_outcome(stats_too_wide, T[[128, 1024], nl.float32])
        assert out.startswith("NKIError") and "bn_stats: " in out, out
        out = trace_outcome(stats_too_wide, T[[128, 512], nl.float32])
        assert "bn_stats: " not in out and "returns an SBUF tile" in out, out

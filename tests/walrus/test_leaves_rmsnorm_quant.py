"""The QuantOnly leaf (RMSNormQuant): RMS norm then per-row fp8 quantisation with the fp32 dequant
scale in each row's last 4 bytes, lower_bound clipping, and static quantisation; against nkilib's
rmsnorm_quant math (values rtol 0.072, scales rtol 0.007)."""

import os
import sys

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.starfish.penguin import ir  # noqa: E402

VALUES_RTOL, SCALES_RTOL = 0.072, 0.007
FP8_MAX = 240.0


def quant_case(rng, dtype, B, S, H, norm_type="RMS_NORM", quantization_type="ROW", lower_bound=0.0, eps=1e-6):
    b = kit.Builder(dtype, rng)
    srcs = [b.t("hidden", [B, S, H], scale=3.0), b.t("ln_w", [1, H], offset=1.0, scale=0.2)]
    if quantization_type == "STATIC":
        srcs.append(b.t("in_scale", [128, 1], "float32", values=np.full((128, 1), 0.02, np.float32)))
    row = quantization_type == "ROW"
    out = b.out("out", [B, S, H + 4] if row else [B, S, H], "float8e4")
    b.add(ir.RMSNormQuantKernel([kit.F(t) for t in srcs], [kit.F(out)], norm_type=norm_type,
                                quantization_type=quantization_type, lower_bound=lower_bound, eps=eps))
    outs, _ = b.run()
    x = kit.norm(b.f("hidden"), norm_type, b.f("ln_w")[0], eps)
    got = outs["out"]
    if not row:
        expected = np.clip(x / 0.02, -FP8_MAX, FP8_MAX).astype(ml_dtypes.float8_e4m3)
        kit.assert_close(got, expected, VALUES_RTOL, 0.0, "static-quantized values")
        return
    absmax = np.abs(x).max(-1, keepdims=True)
    if lower_bound > 1e-6:
        absmax, x = np.minimum(absmax, lower_bound), np.clip(x, -lower_bound, lower_bound)
    scale = np.maximum(absmax / FP8_MAX, 1e-6)
    values = (x / scale).astype(ml_dtypes.float8_e4m3)
    got_scale = np.ascontiguousarray(got[..., H:]).view(np.float32)
    kit.assert_close(got_scale, scale, SCALES_RTOL, 0.0, "dequant scales")
    kit.assert_close(got[..., :H], values, VALUES_RTOL, 0.0, "quantized values")
    # The row's own scale dequantizes it.
    kit.assert_close(kit.f32(got[..., :H]) * got_scale, x, 0.04, 0.0, "dequantized rows")


@pytest.mark.parametrize("dtype, B, S, H, opts", [
    ("float32", 2, 100, 256, {}),
    ("bfloat16", 1, 130, 301, dict(lower_bound=2.0)),  # H + 4 not a multiple of 4: the scale goes in its own DMA
    ("bfloat16", 1, 64, 512, dict(norm_type="NO_NORM")),
    ("float32", 2, 50, 128, dict(quantization_type="STATIC")),
])
def test_rmsnorm_quant(rng, dtype, B, S, H, opts):
    quant_case(rng, dtype, B, S, H, **opts)


@pytest.fixture
def rng():
    return np.random.default_rng(11)

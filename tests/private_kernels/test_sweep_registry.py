"""The shape sweep of every registry (IT56) leaf and the top-k methods: their tile-count residues
and boundaries, traced and run on the simulator (full mode: what `neuronxsim run` executes),
checked against each leaf's one NumPy reference in kernel_refs.py.

The leaf tests beside this file check every option on the NumPy reference executor; this sweep
crosses the tile boundaries, with the case lists of tests/walrus/sweep_design.py (every pair of
levels of any two factors; three-wise and more levels under NXS_LONG_SWEEP=1,
scripts/sweep-leaves.sh). Levels:
  partition-tiled sizes (channels, rows, N*C)    1, 127, 128, 129 (long: 255..257)
  free sizes tiled by 512 (PSUM, output pixels)  511, 512, 513; spatial maps of < and > 512 pixels
  conv windows, strides, paddings, dilations     1x1, 3x3, 2x5 (1-D: 1x3, 1x5); bundles of
                                                 stride 1/2, padding 0/1/(1, 2), dilation 1/2
  top-k vocab and k                              vocab 8..16384 across 128/512 boundaries; k 1,
                                                 7..9 (rounds of max8), 64, 65, vocab
Tolerances: sweep_design.TOLERANCES by dtype (bf16 rtol 2e-2 atol 1e-2, fp16 5e-3/1e-3, fp32
1e-4/1e-5, the public comparator); data movement (resize, transposes, top-k values and indices)
exactly.
"""

import os
import sys

import ml_dtypes
import numpy as np

import kernel_refs as refs
from test_conv import LEAVES as CONVS  # (kernel, layouts, takes out_shape) by leaf name
import neuronxsim.nki.language as nl
from neuronxsim.nki._private_kernels.blockwise_mm import blockwise_mm
from neuronxsim.nki._private_kernels.topk.topk_method_mapping import SUPPORTED_TOPK_METHOD_MAPPING
from neuronxsim.private_nkl.resize import resize_nearest_fixed_dma_kernel
from neuronxsim.private_nkl.select_and_scatter import pooled_size, select_and_scatter_kernel
from neuronxsim.private_nkl.transpose import tiled_dve_transpose_10, tiled_pf_transpose

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "walrus"))
from sweep_design import TOLERANCES, design, levels, parametrize  # noqa: E402

NP_DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "int32": np.int32}
SETUP = 2e5  # the cost estimate's fixed part per case, in element operations


def dims(text):
    return tuple(int(n) for n in text.split("x"))


def close(actual, expected, dtype):
    assert actual.dtype == NP_DTYPES[dtype]
    refs.max_all_close(actual, expected, *TOLERANCES[dtype])


# ---- data movement: resize, transposes ----

RESIZE = design(
    {"hw": levels(["1x1", "7x5", "30x20"], ["128x3", "9x129"]),
     "out_hw": levels(["1x1", "4x11", "59x38", "129x2"], ["256x1", "3x513"]),
     "nc": levels(["1x1", "2x3", "1x129"], ["3x128", "1x513"]),
     "dtype": ["float32", "bfloat16", "float16", "int32"]},
    cost=lambda c: SETUP + np.prod(dims(c["out_hw"])) * np.prod(dims(c["nc"])),
)


@parametrize(RESIZE)
def test_resize_nearest(case, rng):
    (h, w), (oh, ow), (n, c) = dims(case["hw"]), dims(case["out_hw"]), dims(case["nc"])
    data = (rng.standard_normal((n, h, w, c)) * 100).astype(NP_DTYPES[case["dtype"]])
    (out,), _ = refs.run_on_simulator(resize_nearest_fixed_dma_kernel, data, out_shape=(n, oh, ow, c))
    np.testing.assert_array_equal(out, refs.resize_nearest(data, (n, oh, ow, c)))


TRANSPOSE = design(
    {"kernel": ["tiled_pf_transpose", "tiled_dve_transpose_10"],
     "rows": levels([1, 127, 128, 129, 511, 513], [2, 255, 256, 257, 512, 1025]),
     "cols": levels([1, 127, 128, 129, 511, 512, 513], [2, 255, 256, 257, 1025]),
     "cores": [1, 2],
     "dtype": ["float32", "bfloat16", "float16", "int32"]},
    valid=lambda c: not (c["kernel"] == "tiled_pf_transpose" and c["dtype"] == "int32"),
    cost=lambda c: SETUP + c["rows"] * c["cols"],
)


@parametrize(TRANSPOSE)
def test_transpose(case, rng):
    kernel = {"tiled_pf_transpose": tiled_pf_transpose, "tiled_dve_transpose_10": tiled_dve_transpose_10}[case["kernel"]]
    x = (rng.standard_normal((case["rows"], case["cols"])) * 100).astype(NP_DTYPES[case["dtype"]])
    (out,), _ = refs.run_on_simulator(kernel[nl.nc(2)] if case["cores"] == 2 else kernel, x)
    np.testing.assert_array_equal(out, x.T)


# ---- select_and_scatter (max-pool backward) ----

SELECT_AND_SCATTER = design(
    {"nc": levels(["1x1", "1x127", "1x128", "2x64", "1x129", "3x43"], ["1x255", "2x128", "1x257"]),
     "h": levels([1, 2, 3, 8, 9, 28], [4, 5, 31, 32]),
     "w": levels([1, 2, 3, 8, 9, 28], [4, 5, 31, 32]),
     "ties": [False, True],
     "dtype": ["float32", "bfloat16"]},
    cost=lambda c: SETUP + np.prod(dims(c["nc"])) * c["h"] * c["w"] * 9,
)


@parametrize(SELECT_AND_SCATTER)
def test_select_and_scatter(case, rng):
    (n, c), h, w = dims(case["nc"]), case["h"], case["w"]
    dtype = NP_DTYPES[case["dtype"]]
    operand = (rng.integers(0, 3, (n, c, h, w)) if case["ties"] else rng.standard_normal((n, c, h, w))).astype(dtype)
    source = rng.standard_normal((n, c, pooled_size(h), pooled_size(w))).astype(dtype)
    (out,), _ = refs.run_on_simulator(select_and_scatter_kernel, operand, source)
    close(out, refs.select_and_scatter(operand, source), case["dtype"])


# ---- the eight convolutions ----

# What each conv leaf takes: "depthwise" (groups = features, out features = features x a
# multiplier), "1d" (depthwise with a one-row filter), "packing" (every filter column packed:
# columns x features per group <= 128), "dw" (groups 1) or "any".
CONV_KINDS = {
    "conv1d_depthwise_bf01_oi01_bf01": "1d",
    "conv2d_depthwise_f01b_o01i_bf01": "depthwise",
    "conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh": "dw",
    "conv2d_column_packing": "packing",
    "conv2d_column_packing_io10": "packing",
    "conv2d_column_packing_1": "any",
    "conv2d_pbp_0f1b_0i1o_01fb_experimental_1": "any",
    "conv2d_pbp_fb01_io01_01bf_kernel_experimental_1": "any",
}
assert set(CONV_KINDS) == set(CONVS)
# stride, padding (per spatial dim: (low, high)), dilation
GEOMETRIES = {
    "s1-p0-d1": dict(stride=1, padding=0, dilation=1),
    "s2-p1-d1": dict(stride=2, padding=1, dilation=1),
    "s1-p12-d2": dict(stride=1, padding=((1, 2), (1, 2)), dilation=2),
    "s21-p1-d12": dict(stride=(2, 1), padding=1, dilation=(1, 2)),
}


def conv_shapes(c):
    """(lhs sizes by letter, rhs sizes by letter, attrs) of a conv case, or None if the leaf cannot
    take it."""
    kind = CONV_KINDS[c["leaf"]]
    f, (h, w), (k0, k1) = c["features"], dims(c["hw"]), dims(c["window"])
    geometry = GEOMETRIES[c["geometry"]]
    if kind in ("1d", "depthwise"):
        groups, o, i = f, f * c["out"], 1  # "out" is the depthwise multiplier
        if c["out"] > 2 or (kind == "1d" and k0 != 1):
            return None
    else:
        groups, o = c["groups"], c["out"]
        if f % groups or o % groups or (kind == "dw" and groups != 1):
            return None
        i = f // groups
        if kind == "packing" and k1 * i > 128:
            return None
    pads = [sum(p) if isinstance(p, tuple) else 2 * p for p in
            ((geometry["padding"],) * 2 if not isinstance(geometry["padding"], tuple) else geometry["padding"])]
    dil = geometry["dilation"] if isinstance(geometry["dilation"], tuple) else (geometry["dilation"],) * 2
    if (k0 - 1) * dil[0] + 1 > h + pads[0] or (k1 - 1) * dil[1] + 1 > w + pads[1]:
        return None
    lhs = dict(b=c["batch"], f=f, **{"0": h, "1": w})
    rhs = dict(o=o, i=i, **{"0": k0, "1": k1})
    return lhs, rhs, dict(geometry, groups=groups)


def conv_cost(c):
    """MACs, and for the weight-gradient schedule (instructions per output pixel: it is meant for
    filter-sized outputs) its per-pixel work."""
    f, (h, w), (k0, k1) = c["features"], dims(c["hw"]), dims(c["window"])
    cost = SETUP + c["batch"] * f * c["out"] * h * w * k0 * k1
    if CONV_KINDS[c["leaf"]] == "dw":
        cost += 1e5 * c["batch"] * -(-f // 128) * max(h - k0 + 1, 1) * max(w - k1 + 1, 1)
    return cost


CONV = design(
    {"leaf": sorted(CONVS),
     "features": levels([1, 3, 127, 128, 129], [255, 256, 257]),
     "out": levels([1, 2, 127, 128, 129], [255, 256, 257]),  # out features (depthwise: multiplier 1 or 2)
     "hw": levels(["1x1", "7x5", "9x9", "24x22"], ["33x33", "64x9"]),  # 24x22: over 512 output pixels
     "window": levels(["1x1", "3x3", "2x5", "1x3"], ["1x5", "5x5"]),
     "geometry": list(GEOMETRIES),
     "groups": [1, 2],
     "batch": [1, 2],
     "dtype": ["float32", "bfloat16"]},
    valid=lambda c: conv_shapes(c) is not None,
    core=("leaf", "features", "out"),
    cost=conv_cost,
) + [
    # Regression (found by the long sweep): the weight-gradient leaf kept every filter in SBUF, 256
    # input x 257 output features overflowed it; now they are loaded where used.
    dict(leaf="conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", features=256, out=257, hw="1x1", window="1x1",
         geometry="s1-p0-d1", groups=1, batch=2, dtype="float32"),
]


@parametrize(CONV)
def test_convolution(case, rng):
    kernel, layouts, takes_out_shape = CONVS[case["leaf"]]
    lhs_sizes, rhs_sizes, attrs = conv_shapes(case)
    lhs_layout, rhs_layout, _ = layouts.split("_")
    dtype = NP_DTYPES[case["dtype"]]
    img = refs.random_operand(rng, lhs_layout, lhs_sizes, dtype)
    filt = refs.random_operand(rng, rhs_layout, rhs_sizes, dtype)
    expected = refs.conv(img, filt, layouts, **attrs)
    kwargs = dict(attrs, out_shape=expected.shape) if takes_out_shape else attrs
    (out,), _ = refs.run_on_simulator(kernel, img, filt, **kwargs)
    close(out, expected, case["dtype"])


# ---- blockwise_mm ----

BLOCKWISE_MM = design(
    {"tokens": levels([1, 127, 128, 129, 300], [255, 256, 257, 513]),
     "hidden": levels([1, 127, 128, 129], [255, 256, 257, 513]),
     "experts": levels([1, 2, 3], [4, 8]),
     "inter": levels([1, 127, 128, 129, 511, 513], [255, 256, 257, 1025]),
     "block": levels([1, 32, 127, 128, 129], [255, 256, 512]),
     "top_k": [1, 2],
     "mode": [0, 1, 2],
     "dtype": ["float32", "bfloat16"]},
    valid=lambda c: c["top_k"] <= c["experts"],
    # every block passes over all tokens (one-hot gather and scatter) and every expert's weights
    cost=lambda c: SETUP + (c["tokens"] * c["top_k"] // c["block"] + c["experts"]) * (
        5e4 + c["tokens"] * c["hidden"] * c["block"] + c["experts"] * c["hidden"] * c["inter"]),
)


@parametrize(BLOCKWISE_MM)
def test_blockwise_mm(case, rng):
    tokens, hidden, experts, inter, block = (case[k] for k in ("tokens", "hidden", "experts", "inter", "block"))
    dtype = NP_DTYPES[case["dtype"]]
    affinity, positions, block_expert = refs.moe_routing(rng, tokens, experts, case["top_k"], block)
    h = (rng.standard_normal((tokens + 1, hidden)) * 0.5).astype(dtype)
    gate_up = (rng.standard_normal((experts, hidden, 2, inter)) / np.sqrt(hidden)).astype(dtype)
    down = (rng.standard_normal((experts, inter, hidden)) / np.sqrt(inter)).astype(dtype)
    operands = (h, affinity.astype(dtype), gate_up, down, positions, block_expert)
    (out,), _ = refs.run_on_simulator(blockwise_mm, *operands, block_size=block,
                                      expert_affinities_scaling_mode=case["mode"])
    # Every row, the padding token's too (0 unless NO_SCALE leaves its 0 affinity unapplied).
    close(out, refs.blockwise_mm(*operands, block, case["mode"]), case["dtype"])


# ---- top-k: the three methods ----

TOPK = design(
    {"method": [m.name for m in SUPPORTED_TOPK_METHOD_MAPPING],
     "rows": levels(["1", "127", "128", "129", "2x65"], ["255", "256", "257", "3x43", "513"]),  # [B, S] as AxB
     "vocab": levels([8, 9, 127, 128, 129, 511, 513, 4097, 16384], [15, 16, 17, 255, 256, 257, 512, 1025, 8192]),
     "k": levels([1, 7, 8, 9, 64, 65, "vocab"], [2, 15, 16, 17, 127, 128, 129, 256]),
     "ties": [False, True],
     "dtype": ["float32", "bfloat16", "float16"]},
    # Beyond vocab 12288 a k over 2048 can overflow SBUF in the traced kernels (an allocation
    # error at trace time, never a wrong answer; where depends on the allocator's placement).
    valid=lambda c: (c["vocab"] if c["k"] == "vocab" else c["k"]) <= (c["vocab"] if c["vocab"] <= 12288 else 2048),
    cost=lambda c: SETUP + np.prod(dims(c["rows"])) * c["vocab"] * -(-(c["vocab"] if c["k"] == "vocab" else c["k"]) // 8),
)


@parametrize(TOPK)
def test_topk(case, rng):
    kernel = SUPPORTED_TOPK_METHOD_MAPPING[next(m for m in SUPPORTED_TOPK_METHOD_MAPPING if m.name == case["method"])]
    shape = dims(case["rows"]) + (case["vocab"],)
    k = case["vocab"] if case["k"] == "vocab" else case["k"]
    x = (rng.integers(0, 40, shape) if case["ties"] else rng.standard_normal(shape)).astype(NP_DTYPES[case["dtype"]])
    (values, indices), _ = refs.run_on_simulator(kernel, x, k)
    expected_values, _ = refs.topk(x, k)
    np.testing.assert_array_equal(values, expected_values)  # selected, not computed
    refs.assert_topk_indices(x, indices, k)

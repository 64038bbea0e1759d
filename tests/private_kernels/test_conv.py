"""The eight convolution leaves: each reads the layouts its name carries (XLA dimension
numbers), against conv_general_dilated in NumPy."""

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
from neuronxsim.errors import KernelError
from neuronxsim.nki._private_kernels import conv as experimental
from neuronxsim.private_nkl import conv

# (kernel, layouts, takes out_shape)
LEAVES = {
    "conv1d_depthwise_bf01_oi01_bf01": (conv.conv1d_depthwise_bf01_oi01_bf01, "bf01_oi01_bf01", True),
    "conv2d_depthwise_f01b_o01i_bf01": (conv.conv2d_depthwise_f01b_o01i_bf01, "f01b_o01i_bf01", True),
    "conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh": (conv.conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh, "fb01_io01_01bf", True),
    "conv2d_column_packing": (conv.conv2d_column_packing, "bf01_oi01_bf01", True),
    "conv2d_column_packing_io10": (conv.conv2d_column_packing_io10, "bf01_io10_bf01", True),
    "conv2d_column_packing_1": (conv.conv2d_column_packing_1, "bf01_oi01_bf01", True),
    "conv2d_pbp_0f1b_0i1o_01fb_experimental_1": (experimental.conv2d_pbp_0f1b_0i1o_01fb_experimental_1,
                                                 "0f1b_0i1o_01fb", False),
    "conv2d_pbp_fb01_io01_01bf_kernel_experimental_1": (
        experimental.conv2d_pbp_fb01_io01_01bf_kernel_experimental_1, "fb01_io01_01bf", False),
}

# (leaf, lhs sizes {b, f, 0, 1}, rhs sizes {o, i, 0, 1}, attrs)
CASES = [
    ("conv1d_depthwise_bf01_oi01_bf01", dict(b=2, f=130, **{"0": 1, "1": 50}), dict(o=260, i=1, **{"0": 1, "1": 5}),
     dict(padding=(0, 2), groups=130)),
    ("conv1d_depthwise_bf01_oi01_bf01", dict(b=1, f=16, **{"0": 3, "1": 40}), dict(o=16, i=1, **{"0": 1, "1": 3}),
     dict(stride=(1, 2), dilation=(1, 3), padding=((0, 0), (2, 1)), groups=16)),
    ("conv2d_depthwise_f01b_o01i_bf01", dict(b=2, f=8, **{"0": 11, "1": 12}), dict(o=8, i=1, **{"0": 3, "1": 3}),
     dict(padding=1, stride=2, groups=8)),
    ("conv2d_depthwise_f01b_o01i_bf01", dict(b=1, f=140, **{"0": 9, "1": 9}), dict(o=280, i=1, **{"0": 3, "1": 3}),
     dict(padding=1, groups=140)),
    ("conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", dict(b=4, f=16, **{"0": 10, "1": 10}),
     dict(o=8, i=16, **{"0": 10, "1": 10}), dict(padding=1)),  # dW of a 3x3 pad-1 conv
    ("conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", dict(b=3, f=2, **{"0": 12, "1": 11}),
     dict(o=5, i=2, **{"0": 6, "1": 5}), dict(padding=(1, 2), dilation=2)),  # dW of a stride-2 conv
    ("conv2d_column_packing", dict(b=2, f=3, **{"0": 20, "1": 21}), dict(o=16, i=3, **{"0": 3, "1": 3}),
     dict(stride=2, padding=1)),
    ("conv2d_column_packing", dict(b=1, f=8, **{"0": 9, "1": 9}), dict(o=12, i=4, **{"0": 3, "1": 3}),
     dict(padding=1, groups=2)),
    ("conv2d_column_packing_io10", dict(b=2, f=3, **{"0": 20, "1": 21}), dict(o=16, i=3, **{"0": 3, "1": 5}),
     dict(padding=(1, 2))),
    ("conv2d_column_packing_1", dict(b=1, f=70, **{"0": 9, "1": 8}), dict(o=20, i=70, **{"0": 3, "1": 3}),
     dict(padding=1)),
    ("conv2d_column_packing_1", dict(b=1, f=150, **{"0": 6, "1": 5}), dict(o=140, i=150, **{"0": 2, "1": 2}), {}),
    ("conv2d_pbp_0f1b_0i1o_01fb_experimental_1", dict(b=2, f=3, **{"0": 9, "1": 10}),
     dict(o=5, i=3, **{"0": 3, "1": 3}), dict(padding=1)),
    ("conv2d_pbp_0f1b_0i1o_01fb_experimental_1", dict(b=1, f=130, **{"0": 7, "1": 6}),
     dict(o=140, i=130, **{"0": 2, "1": 3}), dict(stride=(2, 1), padding=((1, 0), (2, 1)), dilation=(1, 2))),
    ("conv2d_pbp_0f1b_0i1o_01fb_experimental_1", dict(b=2, f=8, **{"0": 6, "1": 6}),
     dict(o=12, i=4, **{"0": 3, "1": 3}), dict(padding=1, groups=2)),
    ("conv2d_pbp_fb01_io01_01bf_kernel_experimental_1", dict(b=4, f=6, **{"0": 8, "1": 8}),
     dict(o=8, i=6, **{"0": 8, "1": 8}), dict(padding=1)),
]


def _operands(rng, leaf, lhs_sizes, rhs_sizes, dtype=np.float32):
    _, layouts, _ = LEAVES[leaf]
    lhs_layout, rhs_layout, _ = layouts.split("_")
    return (refs.random_operand(rng, lhs_layout, lhs_sizes, dtype), refs.random_operand(rng, rhs_layout, rhs_sizes, dtype))


@pytest.mark.parametrize("leaf, lhs_sizes, rhs_sizes, attrs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_conv_general_dilated(rng, leaf, lhs_sizes, rhs_sizes, attrs):
    kernel, layouts, takes_out_shape = LEAVES[leaf]
    img, filt = _operands(rng, leaf, lhs_sizes, rhs_sizes)
    expected = refs.conv(img, filt, layouts, **attrs)
    kwargs = dict(attrs, out_shape=expected.shape) if takes_out_shape else attrs
    (out,), _ = refs.run_on_reference(kernel, img, filt, **kwargs)
    refs.max_all_close(out, expected, refs.CONV_RTOL, refs.CONV_ATOL)
    assert np.abs(out - expected).max() <= 1e-4 * np.abs(expected).max()  # fp32 operands: far inside


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_bfloat16_operands(rng, leaf):
    kernel, layouts, takes_out_shape = LEAVES[leaf]
    case = next(c for c in CASES if c[0] == leaf)
    img, filt = _operands(rng, leaf, case[1], case[2], ml_dtypes.bfloat16)
    expected = refs.conv(img, filt, layouts, **case[3])
    kwargs = dict(case[3], out_shape=expected.shape) if takes_out_shape else case[3]
    (out,), _ = refs.run_on_reference(kernel, img, filt, **kwargs)
    assert out.dtype == ml_dtypes.bfloat16
    refs.max_all_close(out, expected, refs.CONV_RTOL, refs.CONV_ATOL)


def test_the_two_dw_schedules_agree(rng):
    """The production and the experimental weight-gradient leaves read the same layouts."""
    img, filt = _operands(rng, "conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", dict(b=3, f=4, **{"0": 7, "1": 7}),
                          dict(o=5, i=4, **{"0": 7, "1": 7}))
    (dw,), _ = refs.run_on_reference(conv.conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh, img, filt, padding=1,
                                     out_shape=(3, 3, 3, 5))
    (pbp,), _ = refs.run_on_reference(experimental.conv2d_pbp_fb01_io01_01bf_kernel_experimental_1, img, filt, padding=1)
    np.testing.assert_allclose(dw, pbp, rtol=1e-5, atol=1e-5)


def _refused(leaf, lhs_sizes, rhs_sizes, message, **attrs):
    kernel, layouts, _ = LEAVES[leaf]
    lhs_layout, rhs_layout, _ = layouts.split("_")
    img = np.zeros([lhs_sizes[c] for c in lhs_layout], np.float32)
    filt = np.zeros([rhs_sizes[c] for c in rhs_layout], np.float32)
    with pytest.raises(KernelError, match=message):
        refs.run_on_reference(kernel, img, filt, **attrs)


NCHW = dict(b=1, f=4, **{"0": 8, "1": 8})
OIHW = dict(o=4, i=4, **{"0": 3, "1": 3})


@pytest.mark.parametrize("attrs, message", [
    (dict(stride="2"), r"conv2d_column_packing_1: stride is '2'; expected an int or 2 ints, each >= 1"),
    (dict(stride=(1, 0)), r"stride is \(1, 0\); expected an int or 2 ints, each >= 1"),
    (dict(dilation=[1, 2, 3]), r"dilation is \[1, 2, 3\]; expected an int or 2 ints, each >= 1"),
    (dict(padding=-1), r"padding is -1; expected an int or 2 ints, each >= 0"),
    (dict(padding=[[1, 1], [1]]), r"padding\[1\] is \[1\]; expected an int or 2 ints, each >= 0"),
    (dict(padding="same"), r"padding is 'same'; expected an int, 2 ints, or 2 \[low, high\] pairs"),
    (dict(groups=3), r"with groups=3 expected lhs features = groups \* rhs input features"),
    (dict(out_shape=(1, 4, 8, 8)), r"out_shape is \[1, 4, 8, 8\]; the convolution gives \[1, 4, 6, 6\] \(bf01\)"),
    (dict(dilation=5), r"the dilated window \[3, 3\] \(dilation \[5, 5\]\) does not fit the padded input"),
])
def test_bad_attrs_are_refused(attrs, message):
    _refused("conv2d_column_packing_1", NCHW, OIHW, message, **attrs)


def test_unknown_attrs_are_refused():
    with pytest.raises(Exception, match="unexpected keyword argument 'lhs_dilation'"):
        refs.run_on_reference(conv.conv2d_column_packing_1, np.zeros((1, 4, 8, 8), np.float32),
                              np.zeros((4, 4, 3, 3), np.float32), lhs_dilation=2)


def test_each_leaf_checks_its_own_preconditions():
    _refused("conv2d_column_packing", dict(b=1, f=64, **{"0": 8, "1": 8}), dict(o=4, i=64, **{"0": 3, "1": 3}),
             r"3 filter columns x 64 input features per group = 192 packed partitions; this kernel packs every filter "
             r"column and takes at most 128 \(conv2d_column_packing_1 packs in several groups\)")
    _refused("conv1d_depthwise_bf01_oi01_bf01", dict(b=1, f=4, **{"0": 5, "1": 8}), dict(o=4, i=1, **{"0": 3, "1": 3}),
             r"the filter spans 3 rows \(spatial 0\); a 1-D convolution's filter has 1", groups=4)
    _refused("conv2d_depthwise_f01b_o01i_bf01", dict(b=1, f=4, **{"0": 5, "1": 8}), dict(o=4, i=2, **{"0": 3, "1": 3}),
             r"groups is 2 for 4 lhs features and 2 rhs input features; a depthwise convolution has groups = lhs "
             r"features", groups=2)
    _refused("conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", dict(b=2, f=4, **{"0": 5, "1": 5}),
             dict(o=4, i=2, **{"0": 3, "1": 3}), r"groups is 2; this kernel takes groups=1", groups=2)


def test_a_wrong_rank_operand_is_refused():
    with pytest.raises(KernelError, match=r"conv2d_column_packing: rhs has shape \[4, 4, 3\]; expected 4 dims \(oi01\)"):
        refs.run_on_reference(conv.conv2d_column_packing, np.zeros((1, 4, 8, 8), np.float32),
                              np.zeros((4, 4, 3), np.float32))

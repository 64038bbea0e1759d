"""The production convolution leaves of the internal kernel registry (seed 003 entries #5-#9
and #11). Each name ends in XLA dimension numbers ``<lhs>_<rhs>_<out>`` that say how the kernel
reads its operands; ``conv_geometry`` defines the letters, the math and the attrs, and
``conv_engines`` the schedules. The registry binds every one of these to
``_get_conv_attrs_with_out_shape``: the kernels take ``(img, filt)`` positionally, then the
macro's attrs (``stride``, ``padding``, ``dilation``, ``groups``) and ``out_shape`` (the macro
result's shape, checked) as keywords.
"""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.errors import KernelError

from .conv_engines import PMAX, conv_column_packing, conv_depthwise, conv_window_contraction
from .conv_geometry import conv_geometry


def _conv(kernel: str, layouts: str, engine, img, filt, attrs: dict, check=None):
    """Checks the operands and attrs, allocates the output in the input's dtype and runs
    ``engine``; ``check(geometry)`` adds the kernel's own preconditions."""
    g = conv_geometry(kernel, img, filt, layouts, **attrs)
    if check is not None:
        check(g)
    out = nl.ndarray(g.out_shape(), dtype=img.dtype, buffer=nl.shared_hbm)
    engine(img, filt, g, out)
    return out


def _one_row_window(g):
    if g.window[0] != 1:
        raise KernelError(f"{g.kernel}: the filter spans {g.window[0]} rows (spatial 0); a 1-D convolution's "
                          "filter has 1 (use conv2d_depthwise_f01b_o01i_bf01 for 2-D windows)")


def _all_columns_pack(g):
    if g.window[1] * g.group_in > PMAX:
        raise KernelError(f"{g.kernel}: {g.window[1]} filter columns x {g.group_in} input features per group = "
                          f"{g.window[1] * g.group_in} packed partitions; this kernel packs every filter column and "
                          f"takes at most {PMAX} (conv2d_column_packing_1 packs in several groups)")


@nki.jit
def conv1d_depthwise_bf01_oi01_bf01(img, filt, out_shape=None, stride=1, padding=0, dilation=1, groups=1):
    """Depthwise 1-D convolution written in 2-D layouts.

    Layouts: ``img`` bf01 = [batch, feature, spatial 0, spatial 1]; ``filt`` oi01 = [out
    feature, in feature (1), spatial 0 (1), spatial 1]; result bf01. The 1-D axis is spatial 1;
    spatial 0 is the unit dim of a 1-D convolution in a 2-D layout (the filter must span one row
    there; the image may hold several rows, each convolved on its own). Depthwise:
    ``groups`` = features, output feature ``c*m + j`` filters feature ``c`` with its j-th of ``m``
    filters. Attrs: stride, padding, dilation, groups, out_shape. Vector Engine MACs,
    features on partitions.
    """
    return _conv("conv1d_depthwise_bf01_oi01_bf01", "bf01_oi01_bf01", conv_depthwise, img, filt,
                 dict(out_shape=out_shape, stride=stride, padding=padding, dilation=dilation, groups=groups),
                 _one_row_window)


@nki.jit
def conv2d_depthwise_f01b_o01i_bf01(img, filt, out_shape=None, stride=1, padding=0, dilation=1, groups=1):
    """Depthwise 2-D convolution of a CHWN image.

    Layouts: ``img`` f01b = [feature, spatial 0, spatial 1, batch] (CHWN); ``filt`` o01i = [out
    feature, spatial 0, spatial 1, in feature (1)]; result bf01 = [batch, feature, rows, cols]
    (NCHW). Depthwise: ``groups`` = features; output feature ``c*m + j`` filters feature ``c``.
    Attrs: stride, padding, dilation, groups, out_shape. Vector Engine MACs, features on
    partitions.
    """
    return _conv("conv2d_depthwise_f01b_o01i_bf01", "f01b_o01i_bf01", conv_depthwise, img, filt,
                 dict(out_shape=out_shape, stride=stride, padding=padding, dilation=dilation, groups=groups))


@nki.jit
def conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh(img, filt, out_shape=None, stride=1, padding=0, dilation=1, groups=1):
    """The weight-gradient ("dW") convolution.

    Layouts: ``img`` fb01 = [feature, batch, spatial 0, spatial 1]; ``filt`` io01 = [in
    feature, out feature, spatial 0, spatial 1]; result 01bf = [spatial 0, spatial 1, batch,
    feature]. Read as a weight gradient: ``img`` is the forward activations NCHW (its N
    contracted as the feature f, its C kept as the batch b), ``filt`` the output gradients NCHW
    (N contracted as i, C as o), the result the filter gradient HWIO; ``stride`` is the forward
    dilation, ``dilation`` the forward stride, ``padding`` the forward padding.

    ``rep_nhwc_Pcinh``: the contraction runs over (in feature, window position) with the window
    positions on partitions -- for every result pixel, the image pixels under the window are
    replicated into an NHWC-like tile, window pixels on partitions and the image's batch along
    the free dim (see ``conv_engines.conv_window_contraction``). Attrs: stride, padding,
    dilation, groups (1), out_shape.
    """
    return _conv("conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh", "fb01_io01_01bf", conv_window_contraction, img, filt,
                 dict(out_shape=out_shape, stride=stride, padding=padding, dilation=dilation, groups=groups))


@nki.jit
def conv2d_column_packing(img, filt, out_shape=None, stride=1, padding=0, dilation=1, groups=1):
    """Convolution with every filter column packed into the contraction.

    Layouts (no layout in the name: the NCHW defaults): ``img`` bf01 = NCHW, ``filt`` oi01 =
    OIHW, result bf01 = NCHW. Column packing: partition ``k1 * I + i`` holds input feature
    ``i`` shifted by filter column ``k1``, so one matmul per filter row contracts the whole row;
    requires ``filter columns * input features per group <= 128`` (for few-channel layers, such
    as a network's first). Attrs: stride, padding, dilation, groups, out_shape.
    """
    return _conv("conv2d_column_packing", "bf01_oi01_bf01", conv_column_packing, img, filt,
                 dict(out_shape=out_shape, stride=stride, padding=padding, dilation=dilation, groups=groups),
                 _all_columns_pack)


@nki.jit
def conv2d_column_packing_io10(img, filt, out_shape=None, stride=1, padding=0, dilation=1, groups=1):
    """``conv2d_column_packing`` with the filter stored io10 = [in feature, out feature,
    spatial 1, spatial 0] (IOWH). Layouts: ``img`` bf01, result bf01. Same packing and
    precondition. Attrs: stride, padding, dilation, groups, out_shape.
    """
    return _conv("conv2d_column_packing_io10", "bf01_io10_bf01", conv_column_packing, img, filt,
                 dict(out_shape=out_shape, stride=stride, padding=padding, dilation=dilation, groups=groups),
                 _all_columns_pack)


@nki.jit
def conv2d_column_packing_1(img, filt, out_shape=None, stride=1, padding=0, dilation=1, groups=1):
    """``conv2d_column_packing`` for any channel count ("_1": at least one column per pack).

    Layouts: ``img`` bf01, ``filt`` oi01, result bf01. The filter columns are packed in groups of
    as many as fit 128 partitions with a tile of up to 128 input features -- one column per pack
    once a group has 128 or more features -- and PSUM accumulates the packs. Attrs: stride,
    padding, dilation, groups, out_shape.
    """
    return _conv("conv2d_column_packing_1", "bf01_oi01_bf01", conv_column_packing, img, filt,
                 dict(out_shape=out_shape, stride=stride, padding=padding, dilation=dilation, groups=groups))

"""The experimental "pbp" convolutions of the internal kernel registry (seed 003 entries #3 and
#4; registry keys ``Conv2d_pbp_...``). "pbp": the contraction goes partition by partition over
input features -- features on partitions, one matmul per (feature tile, filter tap), PSUM
accumulating the taps of up to 512 output pixels (``private_nkl.conv_engines.
conv_channel_contraction``); "experimental_1" is that first schedule, without packing.

The registry binds both to ``_get_attrs``: they take ``(img, filt)`` positionally and the
macro's attrs as keywords -- ``stride``, ``padding``, ``dilation``, ``groups`` (see
``private_nkl.conv_geometry``) -- and compute the output shape themselves (no ``out_shape``).
"""

from __future__ import annotations

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.private_nkl.conv_engines import conv_channel_contraction
from neuronxsim.private_nkl.conv_geometry import conv_geometry


def _pbp(kernel: str, layouts: str, img, filt, stride, padding, dilation, groups):
    g = conv_geometry(kernel, img, filt, layouts, stride=stride, padding=padding, dilation=dilation, groups=groups)
    out = nl.ndarray(g.out_shape(), dtype=img.dtype, buffer=nl.shared_hbm)
    conv_channel_contraction(img, filt, g, out)
    return out


@nki.jit
def conv2d_pbp_0f1b_0i1o_01fb_experimental_1(img, filt, stride=1, padding=0, dilation=1, groups=1):
    """Convolution of a row-major-by-spatial image.

    Layouts: ``img`` 0f1b = [spatial 0, feature, spatial 1, batch]; ``filt`` 0i1o = [spatial 0,
    in feature, spatial 1, out feature]; result 01fb = [spatial 0, spatial 1, feature, batch].
    Attrs: stride, padding, dilation, groups.
    """
    return _pbp("conv2d_pbp_0f1b_0i1o_01fb_experimental_1", "0f1b_0i1o_01fb", img, filt, stride, padding,
                dilation, groups)


@nki.jit
def conv2d_pbp_fb01_io01_01bf_kernel_experimental_1(img, filt, stride=1, padding=0, dilation=1, groups=1):
    """The pbp schedule of the weight-gradient dimension numbers (registry key
    ``Conv2d_pbp_fb01_io01_01bf_experimental_1``, without "_kernel").

    Layouts: ``img`` fb01 = [feature, batch, spatial 0, spatial 1]; ``filt`` io01 = [in feature,
    out feature, spatial 0, spatial 1]; result 01bf = [spatial 0, spatial 1, batch, feature] --
    as ``private_nkl.conv.conv2d_dw_fb01_io01_01bf_rep_nhwc_Pcinh`` reads them, contracted here
    feature tile by feature tile and tap by tap. Attrs: stride, padding, dilation, groups.
    """
    return _pbp("conv2d_pbp_fb01_io01_01bf_kernel_experimental_1", "fb01_io01_01bf", img, filt, stride, padding,
                dilation, groups)

"""The enums the bespoke macro families take as attrs.

Members and values are nki-library's (``core/utils/common_types.py``), the open successor of the
bundled ``_private_kernels``; the BIR ``InstBIRKernel`` node stores them as their integer values
(public schema: ``norm_type?: int``, ``output_layout?: int``).
"""

from __future__ import annotations

import enum


class NormType(enum.IntEnum):
    """The normalization fused in front of an MLP or QKV projection."""

    NO_NORM = 0
    RMS_NORM = 1
    LAYER_NORM = 2
    RMS_NORM_SKIP_GAMMA = 3


class ActFnType(enum.IntEnum):
    """The MLP gate activation."""

    SiLU = 0
    GELU = 1
    GELU_Tanh_Approx = 2
    Swish = 3


class QKVOutputLayout(enum.IntEnum):
    """How the fused QKV projection lays out its output: ``BSD`` is ``[B, S, I]``; ``NBSd`` is
    ``[heads, B, S, d]``; ``NBdS`` is ``[heads, B, d, S]`` (heads = q heads + 2 * kv heads)."""

    BSD = 0
    NBSd = 1
    NBdS = 2


class QuantizationType(enum.IntEnum):
    """How a quantizing kernel scales its fp8 output."""

    NONE = 0
    STATIC = 1
    ROW = 2
    MX = 3
    STATIC_MX = 4
    ROW_MX = 5


__all__ = ["NormType", "ActFnType", "QKVOutputLayout", "QuantizationType"]

"""What a convolution leaf reads from its name and attrs: the operand layouts, the window and
the output geometry. Pure Python; the engines in ``conv_engines`` trace the compute.

Layout strings
--------------
A conv leaf's name carries XLA convolution dimension numbers, one 4-letter string per operand,
each letter naming what the operand's physical dim at that position holds (outermost first):

* input (lhs) and output: ``b`` batch, ``f`` feature (channels), ``0`` / ``1`` spatial dims 0
  and 1 (rows, columns);
* filter (rhs): ``o`` output feature, ``i`` input feature (per group), ``0`` / ``1`` the window's
  spatial dims.

So ``bf01`` is NCHW, ``f01b`` is CHWN, ``01bf`` is HWNC, ``oi01`` is OIHW, ``io10`` is IOWH. With
``G = groups``, lhs channels ``C = G * I`` and output features ``O`` (a multiple of ``G``), every
leaf computes XLA's ``conv_general_dilated``::

    out[b, o, y0, y1] = sum_{i, k0, k1} lhs[b, g*I + i, y0*s0 + k0*d0 - pl0, y1*s1 + k1*d1 - pl1]
                                        * rhs[o, i, k0, k1]          (g = o // (O / G))

with lhs elements outside the image read as 0, and ``Y = (S + pl + ph - d*(K - 1) - 1) // s + 1``
along each spatial dim.

Attrs
-----
``stride`` (``s``, default 1), ``dilation`` (``d``, the filter's, default 1): an int or one int per
spatial dim. ``padding``: an int, one int per spatial dim, or one ``[low, high]`` pair per spatial
dim (default 0). ``groups``: the feature group count (default 1). ``out_shape``: the output's
physical shape, checked against the computed one (the registry passes it from the macro's result
for the leaves bound to ``_get_conv_attrs_with_out_shape``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import neuronxsim.nki.language as nl
from neuronxsim.errors import KernelError

from ._checks import int_tuple, shape_of

LHS_LETTERS = "bf01"
RHS_LETTERS = "oi01"


def _check_layout(kernel: str, what: str, layout: str, letters: str) -> None:
    if sorted(layout) != sorted(letters):
        raise ValueError(f"{kernel}: {what} layout {layout!r} is not a permutation of {letters!r}")


def _padding(kernel: str, value) -> tuple:
    """((low0, high0), (low1, high1)) from an int, two ints or two [low, high] pairs."""
    if isinstance(value, numbers.Integral) or (hasattr(value, "__len__") and not isinstance(value, (str, bytes))
                                               and all(isinstance(v, numbers.Integral) for v in value)):
        p0, p1 = int_tuple(kernel, "padding", value, 2, 0)
        return (p0, p0), (p1, p1)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise KernelError(f"{kernel}: padding is {value!r}; expected an int, 2 ints, or 2 [low, high] pairs of "
                          "ints >= 0")
    return tuple(int_tuple(kernel, f"padding[{d}]", pair, 2, 0) for d, pair in enumerate(value))


@dataclass(frozen=True)
class ConvGeometry:
    """One convolution: layouts, sizes in canonical order, window and output sizes."""

    kernel: str
    lhs_layout: str
    rhs_layout: str
    out_layout: str
    batch: int  # B
    channels: int  # C = G * I
    in_size: tuple  # (S0, S1)
    out_features: int  # O
    group_in: int  # I, lhs channels per group
    window: tuple  # (K0, K1)
    groups: int
    stride: tuple
    padding: tuple  # ((low0, high0), (low1, high1))
    dilation: tuple
    out_size: tuple  # (Y0, Y1)

    @property
    def group_out(self) -> int:
        return self.out_features // self.groups

    @property
    def taps(self) -> int:
        return self.window[0] * self.window[1]

    def out_shape(self) -> tuple:
        """The output's physical shape (in ``out_layout`` order)."""
        sizes = {"b": self.batch, "f": self.out_features, "0": self.out_size[0], "1": self.out_size[1]}
        return tuple(sizes[letter] for letter in self.out_layout)

    def in_range(self, axis: int, tap: int, first: int, count: int) -> tuple[int, int]:
        """The outputs ``[lo, hi)`` among ``first .. first+count-1`` along spatial ``axis`` whose
        window element ``tap`` lies inside the image (input index ``y*s + tap*d - low``)."""
        s, size = self.stride[axis], self.in_size[axis]
        offset = tap * self.dilation[axis] - self.padding[axis][0]
        lo = max(first, -(offset // s))  # the first y with y*s + offset >= 0
        hi = min(first + count, (size - 1 - offset) // s + 1)
        return lo, max(lo, hi)


def conv_geometry(kernel: str, lhs, rhs, layouts: str, stride=1, padding=0, dilation=1, groups=1,
                  out_shape=None) -> ConvGeometry:
    """Checks a conv leaf's operands and attrs against its ``"lhs_rhs_out"`` layouts."""
    lhs_layout, rhs_layout, out_layout = layouts.split("_")
    for what, layout, letters in (("lhs", lhs_layout, LHS_LETTERS), ("rhs", rhs_layout, RHS_LETTERS),
                                  ("out", out_layout, LHS_LETTERS)):
        _check_layout(kernel, what, layout, letters)
    for name, t, layout in (("lhs", lhs, lhs_layout), ("rhs", rhs, rhs_layout)):
        if len(t.shape) != 4:
            raise KernelError(f"{kernel}: {name} has shape {list(t.shape)}; expected 4 dims ({layout})")
    lhs_dims = dict(zip(lhs_layout, lhs.shape))
    rhs_dims = dict(zip(rhs_layout, rhs.shape))
    stride = int_tuple(kernel, "stride", stride, 2, 1)
    dilation = int_tuple(kernel, "dilation", dilation, 2, 1)
    pads = _padding(kernel, padding)
    (groups,) = int_tuple(kernel, "groups", groups, 1, 1)
    channels, group_in, out_features = lhs_dims["f"], rhs_dims["i"], rhs_dims["o"]
    if channels != groups * group_in or out_features % groups:
        raise KernelError(f"{kernel}: lhs has {channels} features ({lhs_layout} {list(lhs.shape)}), rhs {group_in} "
                          f"input and {out_features} output features ({rhs_layout} {list(rhs.shape)}); with "
                          f"groups={groups} expected lhs features = groups * rhs input features and output "
                          "features a multiple of groups")
    in_size = (lhs_dims["0"], lhs_dims["1"])
    window = (rhs_dims["0"], rhs_dims["1"])
    out_size = tuple((in_size[a] + sum(pads[a]) - dilation[a] * (window[a] - 1) - 1) // stride[a] + 1
                     for a in range(2))
    if min(out_size) < 1:
        raise KernelError(f"{kernel}: the dilated window {list(window)} (dilation {list(dilation)}) does not fit the "
                          f"padded input {[in_size[a] + sum(pads[a]) for a in range(2)]}; expected an output of at "
                          "least 1x1")
    geometry = ConvGeometry(kernel, lhs_layout, rhs_layout, out_layout, lhs_dims["b"], channels, in_size,
                            out_features, group_in, window, groups, stride, pads, dilation, out_size)
    if out_shape is not None:
        given = shape_of(kernel, "out_shape", out_shape, 4)
        if given != geometry.out_shape():
            raise KernelError(f"{kernel}: out_shape is {list(given)}; the convolution gives "
                              f"{list(geometry.out_shape())} ({out_layout})")
    return geometry


def along(n: int, axis: int, rank: int, start: int = 0, step: int = 1):
    """``start + step * i`` for ``i`` in ``0..n-1`` on grid axis ``axis`` of ``rank``."""
    e = nl.arange(n)[tuple(slice(None) if a == axis else None for a in range(rank))]
    return start + e * step if step != 1 else start + e


def view(tensor, layout: str, index: dict):
    """``tensor`` indexed by letter: ``index[letter]`` is an int or an ``along`` expression, so the
    view's dims come in whatever grid order the expressions name."""
    return tensor[tuple(index[letter] for letter in layout)]


def compute_dtype(lhs, rhs):
    """The PE operand dtype: float32 if either operand is, else the input's."""
    return nl.float32 if nl.float32 in (lhs.dtype, rhs.dtype) else lhs.dtype

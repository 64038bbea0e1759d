"""Argument checks shared by the registry leaves: a wrong attr or shape is a ``KernelError`` that
names the kernel, the argument and the form it expects."""

from __future__ import annotations

import numbers

from neuronxsim.errors import KernelError


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def int_tuple(kernel: str, name: str, value, length: int, minimum: int) -> tuple:
    """``value`` (an int, or a sequence of ``length`` ints) as ``length`` ints >= ``minimum``."""
    values = (value,) * length if _is_int(value) else value
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) != length or not all(
            _is_int(v) and v >= minimum for v in values):
        raise KernelError(f"{kernel}: {name} is {value!r}; expected an int or {length} ints, each >= {minimum}")
    return tuple(int(v) for v in values)


def shape_of(kernel: str, name: str, value, rank: int) -> tuple:
    """``value`` as a shape of ``rank`` positive ints."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != rank or not all(
            _is_int(v) and v > 0 for v in value):
        raise KernelError(f"{kernel}: {name} is {value!r}; expected a shape of {rank} positive ints")
    return tuple(int(v) for v in value)


def check_rank(kernel: str, name: str, tensor, rank: int, layout: str = "") -> tuple:
    """The shape of ``tensor``, which must have ``rank`` dims (named by ``layout``)."""
    shape = tuple(tensor.shape)
    if len(shape) != rank:
        what = f" ({layout})" if layout else ""
        raise KernelError(f"{kernel}: {name} has shape {list(shape)}; expected {rank} dims{what}")
    return shape


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)

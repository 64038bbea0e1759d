"""The activation engine's functions (``ActivationFunc``), docs/isa-semantics.md section 4.

Each function is evaluated in float64 on the fp32 argument and rounded once to fp32, so the
reference gives the correctly rounded fp32 value (up to float64's own error) that any fp32
implementation should be within a few ulp of. NumPy has no erf, so :func:`erf` and :func:`erfc`
are implemented here, vectorised, to about 1e-13 relative accuracy.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from neuronxsim.reference.refusal import Refusal

_SQRT_PI = np.sqrt(np.pi)
_SQRT_2 = np.sqrt(2.0)

# |x| below this: Taylor series of erf (terms stay small, so little cancellation);
# above: the continued fraction of erfc, which converges quickly there.
_SERIES_LIMIT = 2.0
_SERIES_TERMS = 60
_FRACTION_DEPTH = 50


def _erf_series(x: np.ndarray) -> np.ndarray:
    # erf x = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    x2 = x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * (-x2) / n
        total = total + term / (2 * n + 1)
    return 2.0 / _SQRT_PI * total


def _erfc_fraction(x: np.ndarray) -> np.ndarray:
    # For x > 0: erfc x = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
    t = x.copy()
    for k in range(_FRACTION_DEPTH, 0, -1):
        t = x + (k / 2.0) / t
    return np.exp(-x * x) / _SQRT_PI / t


def erfc(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    near = ax < _SERIES_LIMIT
    tail = _erfc_fraction(np.where(near, _SERIES_LIMIT, ax))  # erfc(|x|) where |x| is large
    far = np.where(x < 0, 2.0 - tail, tail)
    return np.where(near, 1.0 - _erf_series(np.where(near, x, 0.0)), far)


def erf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    near = ax < _SERIES_LIMIT
    tail = _erfc_fraction(np.where(near, _SERIES_LIMIT, ax))
    return np.where(near, _erf_series(np.where(near, x, 0.0)), np.sign(x) * (1.0 - tail))


def _sigmoid(x):
    # exp of a non-positive argument only, so no overflow
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def _normal_cdf(x):
    return 0.5 * erfc(-x / _SQRT_2)  # erfc keeps the far left tail accurate


def _normal_pdf(x):
    return np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


def _leaky(x, alpha):
    return np.where(x > 0, x, alpha * x)


def _with_limits(fn, at_minus_inf: float, at_plus_inf: float):
    """``fn`` with its limits at -inf and +inf, where its formula gives inf * 0 (NaN): the public
    table "Supported Activation Functions for NKI ISA" gives these functions the valid input
    range [-inf, inf] (docs/isa-semantics.md section 4)."""
    def limited(x, a):
        with np.errstate(invalid="ignore"):
            y = fn(x, a)
        return np.where(x == -np.inf, at_minus_inf, np.where(x == np.inf, at_plus_inf, y))
    return limited


# f(x, alpha) on float64 arrays; alpha is only used by Lrelu / Prelu.
ACTIVATION_FUNCTIONS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "Abs": lambda x, a: np.abs(x),
    "Abs_reciprocal_sqrt": lambda x, a: 1.0 / np.sqrt(np.abs(x)),
    "Arctan": lambda x, a: np.arctan(x),
    "Copy": lambda x, a: x,
    "Identity": lambda x, a: x,
    "Derivative_Erf": lambda x, a: 2.0 / _SQRT_PI * np.exp(-x * x),
    "Derivative_Gelu": _with_limits(lambda x, a: _normal_cdf(x) + x * _normal_pdf(x), 0.0, 1.0),
    "Derivative_silu": _with_limits(lambda x, a: _sigmoid(x) * (1.0 + x * (1.0 - _sigmoid(x))), -0.0, 1.0),
    "Dsqrt": lambda x, a: 0.5 / np.sqrt(x),
    "Erf": lambda x, a: erf(x),
    "Exp": lambda x, a: np.exp(x),
    # = 0.5x(1 + erf(x/sqrt 2)), accurate in the tail
    "Gelu": _with_limits(lambda x, a: x * _normal_cdf(x), -0.0, np.inf),
    "Gelu_apprx_sigmoid": _with_limits(lambda x, a: x * _sigmoid(1.702 * x), -0.0, np.inf),
    # 0.5 x (1 + tanh(u)) = x sigmoid(2u): 1 + tanh(u) cancels to 0 long before the value underflows
    "Gelu_apprx_tanh": _with_limits(
        lambda x, a: x * _sigmoid(2.0 * np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)), -0.0, np.inf),
    "Is_finite": lambda x, a: np.isfinite(x).astype(np.float64),
    "Ln": lambda x, a: np.log(x),
    "Ln_prime": lambda x, a: 1.0 / x,
    "Lrelu": _leaky,
    "Prelu": _leaky,
    "MemsetZero": lambda x, a: np.zeros_like(x),
    "Mish": _with_limits(lambda x, a: x * np.tanh(_softplus(x)), -0.0, np.inf),
    "Reciprocal": lambda x, a: 1.0 / x,
    "Relu": lambda x, a: np.maximum(x, 0.0),
    "Rsqrt": lambda x, a: 1.0 / np.sqrt(x),
    "Sigmoid": lambda x, a: _sigmoid(x),
    "Sign": lambda x, a: np.sign(x),
    "Silu": _with_limits(lambda x, a: x * _sigmoid(x), -0.0, np.inf),
    "Sin": lambda x, a: np.sin(x),
    "Softplus": lambda x, a: _softplus(x),
    "Sqrt": lambda x, a: np.sqrt(x),
    "Square": lambda x, a: x * x,
    "Tanh": lambda x, a: np.tanh(x),
}


def activate(func, x: np.ndarray, alpha: float) -> np.ndarray:
    """``func(x)`` for fp32 ``x``, rounded to fp32; ``func`` is a ``bir.ActivationFunc`` member."""
    try:
        fn = ACTIVATION_FUNCTIONS[func.name]
    except KeyError:
        raise Refusal(f"activation function {func.name} is refused") from None
    # alpha is an fp32 register on the engine: round it before use
    return fn(np.asarray(x, dtype=np.float64), float(np.float32(alpha))).astype(np.float32)

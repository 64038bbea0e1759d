"""Fits the polynomial behind the simulator's erf and Gelu (cpp/sim/FastMath.cpp, kErfcPoly).

    python scripts/fit_erfc.py        # prints the C++ table and the fit's error

For z >= 0, erfc(z) = t * exp(g(u) - z*z) with t = 2 / (2 + z) and u = 2t - 1, which maps
[0, inf) onto (-1, 1]; g(u) = ln(erfcx(z)) - ln(t) is smooth there (the form of Numerical
Recipes' erfccheb). g is interpolated at Chebyshev points (degree 18) and converted to a plain
polynomial in u, evaluated by Horner in double precision. erfcx comes from math.erfc and
math.exp for z < 25 and from its asymptotic series beyond.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import chebyshev, polynomial

DEGREE = 18


def erfcx(z: float) -> float:
    if z < 25:
        return math.erfc(z) * math.exp(z * z)
    total, term = 1.0, 1.0
    for n in range(1, 12):
        term *= -(2 * n - 1) / (2 * z * z)
        total += term
    return total / (z * math.sqrt(math.pi))


def g(u: float) -> float:
    t = (u + 1) / 2
    return math.log(erfcx(2 / t - 2)) - math.log(t)


def main():
    coefs = polynomial.Polynomial(chebyshev.cheb2poly(chebyshev.chebinterpolate(np.vectorize(g), DEGREE))).coef
    z = np.concatenate([np.linspace(0, 30, 300001), np.geomspace(1e-9, 1, 3001)])
    t = 2 / (2 + z)
    err = np.abs(polynomial.polyval(2 * t - 1, coefs) - [math.log(erfcx(v)) - math.log(w) for v, w in zip(z, t)])
    print(f"// g(u), degree {DEGREE}: |error| <= {err.max():.2e} on z in [0, 30] (relative error of erfc)")
    print("constexpr double kErfcPoly[] = {")
    line = "   "
    for c in coefs:
        piece = f" {float(c)!r},"
        if len(line) + len(piece) > 110:
            print(line)
            line = "   "
        line += piece
    print(line)
    print("};")


if __name__ == "__main__":
    main()

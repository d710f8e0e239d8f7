"""Reaches of the population variance (paper 002, Sec. 4 and 5.2), its global sensitivity
and its supremum on a box.

The variance reaches are computed in extended precision within a proven error bound and
moved outward by a margin growing with the level (:func:`variance_profile`), so that the
reach property (Cor. 3.1) holds exactly; see :mod:`privest.mechanisms.profiles.reaches` for the
profile object and the other statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privest.errors import ValidationError
from privest.mechanisms.profiles.reaches import ReachProfile, prepare_data

__all__ = ["variance_global_sensitivity", "variance_profile", "variance_sup"]


def variance_sup(n: int, a: float, b: float) -> float:
    """sup of the population variance of n values in [a, b]: (b-a)^2 j(n-j)/n^2, j = n // 2."""
    j = n // 2
    return (b - a) ** 2 * j * (n - j) / n**2


def variance_global_sensitivity(n: int, a: float, b: float) -> float:
    """GS of the population variance under swap: (b - a)^2 (n - 1) / n^2."""
    return (b - a) ** 2 * (n - 1) / n**2


def _variance_error_bound(n: int, half_width: float) -> float:
    """Bound on |computed - exact| for every variance reach of :func:`variance_profile`.

    Forward error analysis of its extended-precision code (unit roundoff u, recursive
    prefix sums, gamma = (n+1) u / (1 - (n+1) u), records within ``half_width`` = B of the
    centre): about (9.2 gamma + 38 u) B^2; returned with a safety factor, (16 gamma + 64 u) B^2.
    It also needs the computed optimal count j* within 1/2 of the exact one, which holds
    when (n+1)^2 u <= 0.1 (n up to 10^9 with 80-bit long double, 3 10^7 with float64).
    """
    u = float(np.finfo(np.longdouble).eps) / 2
    if (n + 1) ** 2 * u > 0.1:
        raise ValidationError(f"x: n = {n} is too large for the variance reaches at this precision")
    gamma = (n + 1) * u / (1 - (n + 1) * u)
    return (16 * gamma + 64 * u) * half_width**2


def variance_profile(
    x: Any, bounds: Any, *, clip: bool = False, max_level: int | None = None
) -> ReachProfile:
    """Population variance (1/n). O(n) per level.

    U_l: remove a contiguous block of l sorted values and put j changed points at a and
    l - j at b (the best j is found from the concave quadratic in j). D_l: keep the n - l
    consecutive sorted values with the least sum of squared deviations, put the changed
    points at their mean. With ``max_level = k`` only l < k are computed and the
    range-end tail (paper 002, Sec. 5.2) is added (U_l = sup f, D_l = 0 for l >= k).

    Floating point: the reaches cannot be computed exactly at this cost, so each is
    computed within a proven error bound eps_f (:func:`_variance_error_bound`, about
    1e-15 of the squared half-range at n = 1000) and moved outward by the margin
    ``3 l eps_f``: U_l + 3 l eps_f and D_l - 3 l eps_f. Because the margin grows by more
    than 2 eps_f per level, Cor. 3.1 holds exactly for the float reaches (the rounding
    afterwards is a nondecreasing map). The reaches are then valid but not tight, by at
    most 3 n eps_f (negligible against the pieces).
    """
    arr, a, b, clipped = prepare_data(x, bounds, clip)
    n = arr.size
    if n < 2:
        raise ValidationError("x: the variance needs at least 2 records (n is public)")
    if max_level is not None and int(max_level) < 1:
        raise ValidationError(f"max_level: {max_level!r} must be >= 1")
    shift = 0.5 * (a + b)
    # variance is shift-invariant; centring limits cancellation. x -> x - shift (rounded)
    # is a fixed record-wise map, so it keeps neighbours neighbours.
    ld = np.longdouble
    xs = np.sort(arr).astype(ld) - ld(shift)
    a0, b0 = ld(a) - ld(shift), ld(b) - ld(shift)
    err = _variance_error_bound(n, float(max(-a0, b0)))
    step = ld(3 * err)  # margin per level: more than 2 err (docstring)
    s = np.concatenate([np.zeros(1, dtype=ld), np.cumsum(xs)])
    t = np.concatenate([np.zeros(1, dtype=ld), np.cumsum(xs * xs)])
    hi = variance_sup(n, a, b)
    last = n if max_level is None else min(n, int(max_level) - 1)
    center = min(max(0.0, float((t[n] - s[n] ** 2 / n) / n)), hi)
    up = np.empty(last + 1)
    dn = np.empty(last + 1)
    up[0] = dn[0] = center
    for lvl in range(1, last + 1):
        i = np.arange(n - lvl + 1)
        ks = s[n] - (s[i + lvl] - s[i])
        kt = t[n] - (t[i + lvl] - t[i])
        jstar = (n * (a0 + b0) / 2 - ks - lvl * b0) / (a0 - b0)
        best = np.full(i.size, -np.inf, dtype=ld)
        for cand in (
            np.zeros_like(jstar),
            np.full_like(jstar, lvl),
            np.floor(jstar),
            np.ceil(jstar),
        ):
            j = np.clip(cand, 0, lvl)
            tot = ks + j * a0 + (lvl - j) * b0
            best = np.maximum(best, kt + j * a0**2 + (lvl - j) * b0**2 - tot**2 / n)
        up[lvl] = float(best.max() / n + lvl * step)
        w = n - lvl
        if w <= 1:
            dn[lvl] = 0.0
        else:
            i = np.arange(lvl + 1)
            ws, wt = s[i + w] - s[i], t[i + w] - t[i]
            dn[lvl] = float((wt - ws**2 / w).min() / n - lvl * step)
    # running max / min and clipping to the public range keep Cor. 3.1
    up = np.minimum(np.maximum.accumulate(up), hi)
    dn = np.maximum(np.minimum.accumulate(dn), 0.0)
    gs = variance_global_sensitivity(n, a, b)
    if last == n:
        up[-1], dn[-1] = hi, 0.0
    else:
        up, dn = np.append(up, hi), np.append(dn, 0.0)
    return ReachProfile(center, up, dn, 0.0, hi, gs, "variance", n, clipped, tolerance=err)

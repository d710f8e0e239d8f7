"""Exact inference for a private count (docs/central-inference.md, "Counts and proportions").

The release is ``clip(C + K, 0, n)``: ``C ~ Binomial(n, p)`` for records drawn iid with a
proportion p in the set, ``K`` the discrete Laplace noise, ``P(K = k) = (1 - r)/(1 + r)
r^|k|`` with ``r = exp(-1/t)`` public. Its law is the convolution of the two, computed
exactly (the tails of K beyond ``r^k < 1e-17`` dropped); the interval for p inverts the
equal-tailed mid-p test (Lancaster 1961; Agresti 2013, Sec. 1.4.5), which holds its level
on average without the conservatism of the exact Clopper-Pearson construction, and the
p-value of a null proportion is the same test's.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

__all__ = ["count_interval", "count_noise_halfwidth", "count_pvalue", "count_tails"]


def _noise(r: float) -> tuple[np.ndarray, np.ndarray]:
    """The support (|k| <= K) and pmf of the discrete Laplace noise with ratio ``r``."""
    top = max(1, math.ceil(39.2 / -math.log(r))) if r > 0 else 0
    k = np.arange(-top, top + 1)
    pk = (1 - r) / (1 + r) * r ** np.abs(k)
    return k, pk / pk.sum()


def count_tails(c: float, n: int, p: float, r: float) -> tuple[float, float, float]:
    """``(P(M < c), P(M = c), P(M > c))`` for the clamped release ``M`` of a count ``c`` in
    ``[0, n]`` (integer), proportion ``p``, noise ratio ``r``."""
    k, pk = _noise(r)
    below = 0.0 if c <= 0 else float(np.sum(pk * stats.binom.cdf(c - 1 - k, n, p)))
    above = 0.0 if c >= n else float(np.sum(pk * stats.binom.sf(c - k, n, p)))
    below, above = min(max(below, 0.0), 1.0), min(max(above, 0.0), 1.0)
    return below, max(0.0, 1.0 - below - above), above


def _mid(c: float, n: int, p: float, r: float) -> tuple[float, float]:
    """Mid-p tails: ``(P(M < c) + P(M = c)/2, P(M > c) + P(M = c)/2)``."""
    below, at, above = count_tails(c, n, p, r)
    return below + at / 2, above + at / 2


def count_interval(c: float, n: int, r: float, alpha: float) -> tuple[float, float]:
    """The mid-p interval ``(pL, pU)`` of the proportion from a released count ``c``."""
    a = alpha / 2

    def low_side(p: float) -> float:  # increasing in p
        return _mid(c, n, p, r)[1] - a

    def high_side(p: float) -> float:  # decreasing in p
        return _mid(c, n, p, r)[0] - a

    lower = 0.0 if low_side(0.0) >= 0 else optimize.brentq(low_side, 0.0, 1.0, xtol=1e-12)
    upper = 1.0 if high_side(1.0) >= 0 else optimize.brentq(high_side, 0.0, 1.0, xtol=1e-12)
    return float(lower), float(upper)


def count_pvalue(c: float, n: int, p0: float, r: float, alternative: str = "two-sided") -> float:
    """Mid-p p-value of the null proportion ``p0`` for the released count ``c``
    (``"larger"``: the alternative p > p0)."""
    low, high = _mid(c, n, p0, r)
    if alternative == "larger":
        return high
    if alternative == "smaller":
        return low
    return min(1.0, 2.0 * min(low, high))


def count_noise_halfwidth(r: float, alpha: float) -> int:
    """The least integer a with ``P(|K| <= a) >= 1 - alpha``:
    ``P(|K| > a) = 2 r^(a+1) / (1 + r)``."""
    if r <= 0:
        return 0
    return max(0, math.ceil(math.log(alpha * (1 + r) / 2) / math.log(r) - 1 - 1e-12))

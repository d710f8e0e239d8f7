"""Exact inference for a private count (docs/central-inference.md, "Counts and proportions").

The release is ``clip(C + K, 0, n)``: ``C ~ Binomial(n, p)`` for records drawn iid with a
proportion p in the set, ``K`` the discrete Laplace noise, ``P(K = k) = (1 - r)/(1 + r)
r^|k|`` with ``r = exp(-1/t)`` public. Its law is the convolution of the two, computed
exactly: ``P(C + K <= m) = sum_j P(C = j) P(K <= m - j)`` with the geometric closed form of
``P(K <= .)`` and the binomial summed where its mass exceeds 1e-30. The interval for p
inverts the equal-tailed mid-p test (Lancaster 1961; Agresti 2013, Sec. 1.4.5), which holds
its level on average without the conservatism of the exact Clopper-Pearson construction;
the p-value of a null proportion is the same test's. Everything is vectorised over counts.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["count_interval", "count_noise_halfwidth", "count_pvalue", "count_tails"]

#: bisection steps on p (precision 2^-44)
_STEPS = 44
#: counts per block (each block sums the binomial over its own window)
_CHUNK = 256


def _noise_cdf(m: np.ndarray, r: float) -> np.ndarray:
    """P(K <= m) for integers m (discrete Laplace with ratio r; r = 0: no noise)."""
    if r <= 0:
        return (m >= 0).astype(float)
    with np.errstate(over="ignore", under="ignore"):
        up = 1.0 - np.power(r, np.maximum(m, 0) + 1.0) / (1.0 + r)
        down = np.power(r, np.maximum(-m, 0)) / (1.0 + r)
    return np.where(m >= 0, up, down)


def _reach(r: float) -> int:
    """|k| beyond which the noise has mass below 1e-20."""
    return 0 if r <= 0 else math.ceil(46.1 / -math.log(r)) + 1


class _CountLaw:
    """The released count's law at counts ``c`` (1-D), for any p: the noise part is fixed,
    the binomial is summed exactly over the counts' range widened by the noise's reach;
    beyond it ``C + K`` lies on one side of every count, so the binomial's tails add whole."""

    def __init__(self, c: np.ndarray, n: int, r: float):
        from scipy import special

        reach = _reach(r)
        self.c, self.n, self.r = c, n, r
        self.j_lo = max(0, int(c.min()) - reach)
        self.j_hi = min(n, int(c.max()) + reach)
        j = np.arange(self.j_lo, self.j_hi + 1, dtype=float)
        self.j = j
        self.log_choose = (
            special.gammaln(n + 1) - special.gammaln(j + 1) - special.gammaln(n - j + 1)
        )
        self.k_below = _noise_cdf(c[:, None] - 1 - j, r)  # P(K <= c - 1 - j)
        self.k_above = _noise_cdf(j - c[:, None] - 1, r)  # P(K >= c + 1 - j)

    def tails(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P(M < c), P(M > c)) at proportions p (one per count)."""
        from scipy import stats  # here, not at import (a second of every command's start)

        n, j = self.n, self.j
        pp = np.clip(p, 1e-300, 1 - 1e-16)[:, None]
        with np.errstate(under="ignore"):
            pmf = np.exp(self.log_choose + j * np.log(pp) + (n - j) * np.log1p(-pp))
        pmf = np.where(p[:, None] <= 0, j == 0, np.where(p[:, None] >= 1, j == n, pmf))
        below = np.sum(pmf * self.k_below, axis=1) + stats.binom.cdf(self.j_lo - 1, n, p)
        above = np.sum(pmf * self.k_above, axis=1) + stats.binom.sf(self.j_hi, n, p)
        below = np.where(self.c <= 0, 0.0, np.clip(below, 0, 1))
        above = np.where(self.c >= n, 0.0, np.clip(above, 0, 1))
        return below, above

    def mid(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mid-p tails ``(P(M < c) + P(M = c)/2, P(M > c) + P(M = c)/2)``."""
        below, above = self.tails(p)
        at = np.clip(1 - below - above, 0, 1)
        return below + at / 2, above + at / 2

    def atoms(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The least mid-p tails the release can have: ``P(M = 0)/2``, ``P(M = n)/2`` (the
        clamped ends' atoms), at proportions p."""
        if not hasattr(self, "_edges"):
            ones = np.ones(self.c.size)
            self._edges = (
                _CountLaw(ones, self.n, self.r),
                _CountLaw(ones * (self.n - 1), self.n, self.r),
            )
        return self._edges[0].tails(p)[0] / 2, self._edges[1].tails(p)[1] / 2

    def accepts(self, p: np.ndarray, alpha: Any) -> np.ndarray:
        """The equal-tailed mid-p test of each p at level alpha (one per count, or one for
        all), clamp-aware: where a clamped end's atom stops one tail from ever rejecting at
        alpha/2, the other tail gets all of alpha (as for the moments,
        :func:`privest.intervals.laws.invert`)."""
        low, high = self.mid(p)
        least_low, least_high = self.atoms(p)
        low_free, high_free = least_low > alpha / 2, least_high > alpha / 2
        a_low = np.where(high_free, alpha, alpha / 2)
        a_high = np.where(low_free, alpha, alpha / 2)
        return (low_free | (low > a_low)) & (high_free | (high > a_high))


def _chunks(c: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    """Counts flattened, and index chunks of neighbouring counts (narrow windows)."""
    flat = np.asarray(c, dtype=float).ravel()
    order = np.argsort(flat, kind="stable")
    return flat, [order[i : i + _CHUNK] for i in range(0, flat.size, _CHUNK)]


def count_tails(c: Any, n: int, p: Any, r: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P(M < c), P(M = c), P(M > c))`` for the clamped release ``M`` of counts ``c`` in
    ``[0, n]`` (integers), proportions ``p`` (broadcast), noise ratio ``r``."""
    c, p = np.broadcast_arrays(np.asarray(c, dtype=float), np.asarray(p, dtype=float))
    flat, chunks = _chunks(c)
    below, above = np.empty(flat.size), np.empty(flat.size)
    for idx in chunks:
        below[idx], above[idx] = _CountLaw(flat[idx], n, r).tails(p.ravel()[idx])
    below, above = below.reshape(c.shape), above.reshape(c.shape)
    return below, np.clip(1 - below - above, 0, 1), above


def count_interval(c: Any, n: int, r: float, alpha: float) -> tuple[Any, Any]:
    """The mid-p interval ``(pL, pU)`` of the proportion from released counts ``c`` (floats
    for one count, arrays for many): the proportions its test accepts."""
    flat, chunks = _chunks(c)
    low, high = np.empty(flat.size), np.empty(flat.size)
    for idx in chunks:
        low[idx], high[idx] = _invert(_CountLaw(flat[idx], n, r), alpha)
    if np.ndim(c) == 0:
        return float(low[0]), float(high[0])
    return low.reshape(np.shape(c)), high.reshape(np.shape(c))


def _invert(law: _CountLaw, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The proportions the test accepts, by bisection from ``c / n`` outwards."""
    start = np.clip(law.c / law.n, 0.0, 1.0)
    ends = []
    for bound in (0.0, 1.0):
        inner, outer = start.copy(), np.full(start.shape, bound)
        whole = law.accepts(outer, alpha)
        for _ in range(_STEPS):
            mid = 0.5 * (inner + outer)
            ok = law.accepts(mid, alpha)
            inner, outer = np.where(ok, mid, inner), np.where(ok, outer, mid)
        ends.append(np.where(whole, bound, inner))
    return ends[0], ends[1]


def count_pvalue(c: Any, n: int, p0: float, r: float, alternative: str = "two-sided") -> Any:
    """Mid-p p-value of the null proportion ``p0`` for released counts ``c``
    (``"larger"``: the alternative p > p0); two-sided, the least alpha at which the
    interval's test (:meth:`_CountLaw.accepts`) rejects."""
    flat, chunks = _chunks(np.atleast_1d(np.asarray(c, dtype=float)))
    out = np.empty(flat.size)
    for idx in chunks:  # neighbouring counts share a narrow window of the binomial
        out[idx] = _pvalue(_CountLaw(flat[idx], n, r), float(p0), alternative)
    out = out.reshape(np.shape(c))
    return float(out) if np.ndim(out) == 0 else out


def _pvalue(law: _CountLaw, p0: float, alternative: str) -> np.ndarray:
    """:func:`count_pvalue` of the counts of one window."""
    p = np.full(law.c.shape, p0)
    low, high = law.mid(p)
    if alternative in ("larger", "smaller"):
        return high if alternative == "larger" else low
    least_low, least_high = law.atoms(p)
    candidates = [low, 2 * low, high, 2 * high, 2 * least_low, 2 * least_high]
    out = np.ones(law.c.shape)
    for a in candidates:  # the test's decision changes only at these levels
        a = np.clip(a, 0.0, 1.0)
        out = np.where(~law.accepts(p, a) & (a < out), a, out)
    return out


def count_noise_halfwidth(r: float, alpha: float) -> int:
    """The least integer a with ``P(|K| <= a) >= 1 - alpha``:
    ``P(|K| > a) = 2 r^(a+1) / (1 + r)`` (the closed form's root, then checked against the
    tail itself on both sides, so float rounding of the logarithms cannot move it)."""
    if r <= 0:
        return 0

    def tail(a: int) -> float:
        return 2.0 * r ** (a + 1.0) / (1.0 + r)

    a = max(0, math.ceil(math.log(alpha * (1.0 + r) / 2.0) / math.log(r) - 1.0))
    while a > 0 and tail(a - 1) <= alpha:
        a -= 1
    while tail(a) > alpha:
        a += 1
    return a

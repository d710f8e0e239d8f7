"""Ranks of the private order statistics that bound a quantile's interval
(docs/central-inference.md, "Medians and quantiles").

The interval of the population q-quantile ``Q`` is ``[x~_(kL), x~_(kU)]``: two releases of
order statistics by the piecewise Laplace staircase (paper 002; target ``x_(k)`` exactly),
at ranks chosen from public inputs only (n, q, epsilon, alpha). This is the nonparametric
interval from order statistics (Drechsler et al. 2022, "Nonparametric differentially private
confidence intervals for the median"), calibrated instead of bounded: the ranks make each
side's coverage at least ``1 - alpha/2`` under an explicit model rather than under a union
bound, so the interval is not conservative.

The model, in rank units (the order statistic x_(j) sits at position j):

* the release's position is ``k + N``: the staircase picks the piece (gap) l levels from the
  target with probability proportional to ``w_l D_l`` (``w_l`` its level's weight averaged
  over the staircase's two runs, ``D_l`` the gap's length), then a point inside it with the
  staircase's two-level shape. Near the quantile of a smooth density the gaps are iid
  exponential up to a common factor (uniform spacings), and the marginal piece law is
  ``P(l) = w_l int_0^inf (1 + t w_l)^-1 prod_j (1 + t w_j)^-1 dt`` (from
  ``1/a = int_0^inf e^{-ta} dt`` and the exponential's Laplace transform) -- exactly
  normalised, data-free;
* ``Q`` sits at ``B + U``: ``B = #{x_i <= Q} ~ Binomial(n, q)``, U uniform in its gap;
* the lower end covers when ``k + N <= B + U``. ``P(B + U - N >= k)`` is a convolution of
  the binomial with the law of ``U - N``; ``kL`` is the largest rank with probability at
  least ``1 - alpha/2``, ``kU`` the smallest with ``P(B + U - N' <= kU) >= 1 - alpha/2``.

The model has no room for the gaps between the data and the bounds (their lengths are
private), nor for records clipped onto a bound: ``c`` records tied at a bound leave ``c``
gaps of length zero, which get no mass, so an end whose noise reaches them is pushed away
from the bound (and a quantile inside the tie, the bound itself, is missed by any end
below it). The records with a gap of positive length on both sides are ranks
``1 + c_lo .. n - c_hi``; ``c_lo`` and ``c_hi`` are private, so the release spends a
share of epsilon on the two counts (most on the bound nearer the quantile,
:func:`count_shares`; :func:`tied_upper` turns each into an upper confidence bound), and
an end is aimed only where its noise stays clear of the ties those bounds allow on its
own side, and of the released number of ties on the far side (:func:`clear_of_edges`).
An end ruled out only by the far side's count is moved outward to the nearest rank that
is clear (:func:`outward`: further from the far ties, and covering more under the model).
An end that is still not clear, and a rank below 1 or above n, is the public bound itself,
released for free, and the other end gets all of alpha and both ends' epsilon
(:func:`endpoint_plan`). For the noise-only interval (``kind="noise"``) ``B + U`` is
replaced by the data's own rank.

On the data's own lattice (a ``resolution`` given: ties possible anywhere) the model is
replaced by a bound that holds for any data (:func:`robust_miss`): no counts, no edge rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from privest.mechanisms.lattice_plm import run_epsilon, stair_fraction
from privest.mechanisms.profiles.reaches import quantile_target

__all__ = [
    "EndpointPlan",
    "clear_of_edges",
    "count_shares",
    "endpoint_plan",
    "endpoint_ranks",
    "order_levels",
    "outward",
    "order_se",
    "rank_noise_cdf",
    "robust_miss",
    "tied_upper",
]

#: pieces beyond this weight ratio carry no mass that matters (e^-28: about 1e-12)
_LEVEL_LOG_RATIO = 28.0
#: n times the share of an end's noise allowed past the far record (clear_of_edges)
EDGE_TAIL = 0.005
#: the share allowed past the near record
NEAR_TAIL = 0.2
#: the chance, as a share of alpha, that a count of records on a bound exceeds its upper
#: confidence bound (:func:`tied_upper`): the most coverage a failed bound can cost
TIE_TAIL = 0.1


@lru_cache(maxsize=64)
def _piece_law(epsilon: float) -> tuple[np.ndarray, float, float]:
    """(P(piece l) per side for l = 1..L, the staircase's flat share c, its step ratio r)."""
    c = float(stair_fraction(epsilon))
    r = math.exp(-epsilon / 2)
    top = int(math.ceil(2 * _LEVEL_LOG_RATIO / epsilon)) + 2
    lv = np.arange(1, top + 1)
    w = np.exp(-epsilon * lv / 2) * (c + (1 - c) * r)  # per unit rank of the gap
    total = 2 * w.sum()
    t = np.exp(np.linspace(math.log(1e-8 / total), math.log(1e9 / total), 2400))
    logprod = -2.0 * np.sum(np.log1p(np.multiply.outer(t, w)), axis=1)  # both sides
    integrand = np.exp(logprod)[:, None] * t[:, None] / (1.0 + np.multiply.outer(t, w))
    dlog = math.log(t[1] / t[0])
    p = w * np.trapezoid(integrand, dx=dlog, axis=0)
    return p / (2 * p.sum()), c, r


def rank_noise_cdf(y: np.ndarray, epsilon: float) -> np.ndarray:
    """P(N <= y): the release's offset from its target rank, in rank units (module docstring;
    symmetric, continuous)."""
    p, c, r = _piece_law(float(epsilon))
    cum = np.concatenate([[0.0], np.cumsum(p)])
    y = np.asarray(y, dtype=float)
    a = np.abs(y)
    whole = np.minimum(np.floor(a), p.size).astype(np.int64)
    frac = a - whole
    inside = np.where(frac < c, frac, c + (frac - c) * r) / (c + (1 - c) * r)
    part = np.where(whole < p.size, p[np.minimum(whole, p.size - 1)] * inside, 0.0)
    upper = 0.5 + cum[whole] + part
    return np.where(y >= 0, upper, 1.0 - upper)


@lru_cache(maxsize=64)
def _g_table(epsilon: float) -> tuple[int, np.ndarray]:
    """``G[m] = P(U - N >= m)`` for the integers m in ``[-L - 1, L + 1]``: (L + 1, G)."""
    p, _, _ = _piece_law(float(epsilon))
    top = p.size + 1
    m = np.arange(-top, top + 1)
    u = (np.arange(256) + 0.5) / 256
    g = rank_noise_cdf(u[None, :] - m[:, None], epsilon).mean(axis=1)
    return top, g


def binom_pmf(k: np.ndarray, n: int, q: float) -> np.ndarray:
    """The Binomial(n, q) pmf at the integers ``k`` (0 <= k <= n, 0 < q < 1), from log-gamma
    (scipy.special: the first median in a process need not import scipy.stats)."""
    from scipy import special

    k = np.asarray(k, dtype=float)
    log_pmf = (
        special.gammaln(n + 1.0)
        - special.gammaln(k + 1.0)
        - special.gammaln(n - k + 1.0)
        + special.xlogy(k, q)
        + special.xlog1py(n - k, -q)
    )
    return np.exp(log_pmf)


def _cover_lower(n: int, q: float, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(ks, P(B + U - N >= k)) for every rank k where it is neither 0 nor 1."""
    top, g = _g_table(epsilon)
    sd = math.sqrt(n * q * (1 - q))
    b_lo = max(0, math.floor(n * q - 12 * sd - 2))
    b_hi = min(n, math.ceil(n * q + 12 * sd + 2))
    b = np.arange(b_lo, b_hi + 1)
    pmf = binom_pmf(b, n, q)
    span = b_hi - b_lo
    # G extended: 1 below -top, 0 above top; index m - m_lo with m_lo = -top - span
    pad = np.concatenate([np.ones(span), g, np.zeros(span)])
    size = pmf.size + pad.size - 1
    conv = np.fft.irfft(np.fft.rfft(pmf, size) * np.fft.rfft(pad, size), size)
    ks = np.arange(b_lo - top, b_hi + top + 1)
    return ks, conv[span : span + ks.size]


#: the staircase's truncated levels merge into a range-end piece of at most this weight
#: relative to the target point (privest.mechanisms.lattice_plm.truncation_levels), plus a
#: margin for its integer weights' rounding
_MERGED_TAIL = 1e-14


def robust_miss(d: np.ndarray, epsilon: float, points: int) -> np.ndarray:
    """A bound, valid for ANY data in the bounds, on the chance that an end released with
    ``epsilon`` on a lattice of ``points`` points lands past the quantile when its noise must
    climb ``d + 1`` levels to get there (docs/central-inference.md, "Ties inside the
    bounds"). The staircase gives each point of the piece l levels out the weight ``E_l =
    e^(-eps' l/2)`` (its first ``floor(c L)`` points) or ``E_(l+1)`` (the rest), so a piece of
    L points weighs at most ``L E_l (c + (1 - c) e^(-eps'/2))``; the target's own piece is
    one point, all in the second run (``E_1``); at most ``points - 1`` points lie elsewhere.
    So ``P(level >= d + 1) <= (points - 1) (c + (1 - c) e^(-eps'/2)) e^(-eps' d/2)``; ``d < 0``
    (the target itself past the quantile): 1."""
    e = float(run_epsilon(epsilon))
    c = float(stair_fraction(epsilon))
    share = c + (1 - c) * math.exp(-e / 2)
    d = np.asarray(d, dtype=float)
    with np.errstate(over="ignore"):
        tail = (points - 1) * share * np.exp(-e * np.maximum(d, 0.0) / 2) + _MERGED_TAIL
    return np.where(d < 0, 1.0, np.minimum(1.0, tail))


def _robust_ranks(
    n: int, quantile: float, epsilon: float, level: float, points: int, own: tuple[int, int] | None
) -> tuple[int, int]:
    """:func:`endpoint_ranks` from :func:`robust_miss`. The lower end at rank k misses the
    population quantile Q only if ``B = #{x <= Q}`` is below k or its noise climbs ``B - k + 1``
    levels: ``P <= E robust_miss(B - k)``, decreasing in B, and B is at least Binomial(n, q)
    stochastically (``F(Q) >= q``, with or without atoms), so the binomial gives a bound;
    the upper end likewise with ``#{x < Q}`` (at most Binomial(n, q)): ``E robust_miss(k - 1
    - B)``. ``own``: the ranks (j1, j2) of the data's own value instead of B (``kind="noise"``)."""
    if own is None:
        sd = math.sqrt(n * quantile * (1 - quantile))
        b = np.arange(
            max(0, math.floor(n * quantile - 12 * sd - 2)),
            1 + min(n, math.ceil(n * quantile + 12 * sd + 2)),
        )
        pmf = binom_pmf(b, n, quantile)
        rest = max(0.0, 1.0 - float(pmf.sum()))
        b_low = b_high = b
    else:
        pmf, rest = np.ones(1), 0.0
        b_low, b_high = np.array([own[0]]), np.array([own[1] - 1])

    def miss_low(k: int) -> float:
        return float(pmf @ robust_miss(b_low - k, epsilon, points)) + rest

    def miss_high(k: int) -> float:
        return float(pmf @ robust_miss(k - 1 - b_high, epsilon, points)) + rest

    beta = 1.0 - level
    reach = math.ceil(2 * math.log(max(points, 2) / beta) / float(run_epsilon(epsilon))) + 2
    k_low = _last_true(lambda k: miss_low(k) <= beta, int(b_low[0]) - reach, int(b_low[-1]) + 1)
    k_high = _first_true(
        lambda k: miss_high(k) <= beta, int(b_high[0]), int(b_high[-1]) + reach + 1
    )
    return k_low, k_high


def _last_true(ok, lo: int, hi: int) -> int:
    """The largest k in [lo, hi] with ok(k) (ok decreasing in k); lo - 1 if none."""
    if not ok(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


def _first_true(ok, lo: int, hi: int) -> int:
    """The smallest k in [lo, hi] with ok(k) (ok increasing in k); hi + 1 if none."""
    if not ok(hi):
        return hi + 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
    return lo


@lru_cache(maxsize=256)
def endpoint_ranks(
    n: int,
    quantile: float,
    epsilon: float,
    level: float,
    *,
    kind: str = "population",
    center: float | None = None,
    points: int | None = None,
) -> tuple[int, int]:
    """``(kL, kU)``: the ranks whose private order statistics (each released with
    ``epsilon``) cover the quantile from below / above with probability at least ``level``
    each (module docstring). A rank outside ``[1, n]`` means the bound itself. ``center``:
    the data statistic's own rank position for ``kind="noise"`` (default its target,
    :func:`~privest.mechanisms.profiles.reaches.quantile_target`; ``(n + 1)/2`` for the
    median). ``points``: the number of points of the data's own lattice (a ``resolution``
    given: ties possible), for ranks that hold for any data (:func:`robust_miss`) instead of
    the model's."""
    if points is not None:
        own = None
        if kind == "noise":
            k0 = quantile_target(quantile, n) / 2 if center is None else center
            own = (math.floor(k0), math.ceil(k0))
        return _robust_ranks(n, quantile, float(epsilon), level, int(points), own)
    if kind == "noise":
        k0 = quantile_target(quantile, n) / 2 if center is None else center
        span = _piece_law(float(epsilon))[0].size + 2
        ks = np.arange(math.floor(k0) - span, math.ceil(k0) + span + 1)
        h = rank_noise_cdf(k0 - ks, epsilon)  # P(k + N <= k0)
        low = ks[h >= level]
        high = ks[1.0 - h >= level]
        return int(low.max()), int(high.min())
    ks, cover = _cover_lower(n, quantile, epsilon)
    below = ks[cover >= level]
    above = ks[1.0 - cover >= level]  # P(B + U - N' <= k) = 1 - P(... >= k), continuous
    k_low = int(below.max()) if below.size else int(ks[0]) - 1
    k_high = int(above.min()) if above.size else int(ks[-1]) + 1
    return k_low, k_high


@dataclass(frozen=True)
class EndpointPlan:
    """Which ends are released, at which ranks and with which epsilon (public)."""

    lower_rank: int | None  # None: the lower bound itself
    upper_rank: int | None
    lower_epsilon: float
    upper_epsilon: float


def count_shares(quantile: float) -> tuple[float, float]:
    """The shares of the bound counts' epsilon spent on the lower and the upper bound's
    count (public): three quarters on the bound nearer the quantile, whose ties an end can
    reach; the far bound's records matter only when they hold most of the data."""
    if quantile == 0.5:
        return 0.5, 0.5
    return (0.75, 0.25) if quantile < 0.5 else (0.25, 0.75)


def tied_upper(count: float, p: float, n: int, alpha: float) -> int:
    """An upper confidence bound, failing with probability at most ``TIE_TAIL * alpha``, of a
    count of records on a bound released as ``clamp(c + K, 0, n)`` with ``K`` the discrete
    Laplace noise of ratio ``p`` (``P(K = k) ~ p^|k|``): ``P(K <= -m) = p^m / (1 + p)``, so
    ``c <= count + m`` unless ``K <= -m`` (a clamp at 0 keeps it; one at n is n)."""
    beta = TIE_TAIL * alpha
    m = math.ceil(math.log(beta * (1 + p)) / math.log(p)) if p > 0 else 0
    return int(min(n, max(0, round(count)) + max(m, 0)))


def clear_of_edges(
    k: int,
    n: int,
    epsilon: float,
    side: int,
    tied: tuple[int, int] = (0, 0),
    far_tied: tuple[int, int] | None = None,
) -> bool:
    """Whether an end at rank k (``side`` -1: the lower end, +1: the upper) stays clear of
    the gaps whose lengths are private: between the data and the bounds, and the zero gaps
    of the records tied on each bound, so the records that count are ranks
    ``1 + c_lo .. n - c_hi``. Past the near one (x_(1 + c_lo) for the lower end; ``tied``:
    upper confidence bounds of the counts) its noise may carry at most ``NEAR_TAIL`` (a tied
    or empty gap there drops that mass and the rest renormalises); past the far one
    (``far_tied``: the released counts themselves, default ``tied``) at most
    ``EDGE_TAIL / n`` (a gap up to n typical gaps long could multiply it n-fold, and there
    a lower end lands above the quantile)."""
    far_tied = tied if far_tied is None else far_tied
    if side < 0:
        far, near = n - far_tied[1] - k, k - 1 - tied[0]
    else:
        far, near = k - 1 - far_tied[0], n - tied[1] - k
    if far < 0 or near < 0:
        return False
    beyond = 1.0 - rank_noise_cdf(np.array([far, near], dtype=float), epsilon)
    return bool(n * beyond[0] <= EDGE_TAIL and beyond[1] <= NEAR_TAIL)


def _reach(epsilon: float, share: float) -> int:
    """The smallest whole distance d with ``P(N > d) <= share`` (:func:`rank_noise_cdf`)."""
    top = _piece_law(float(epsilon))[0].size + 1
    d = np.arange(top + 1, dtype=float)
    return int(np.argmax(1.0 - rank_noise_cdf(d, epsilon) <= share))


def outward(
    k: int,
    n: int,
    epsilon: float,
    side: int,
    tied: tuple[int, int],
    far_tied: tuple[int, int] | None = None,
) -> int | None:
    """The rank nearest k on its outer side (below it for the lower end, ``side`` -1) that is
    :func:`clear_of_edges`, or None where the near side's rule fails first. Moving an end
    outward raises its coverage under the model and takes it away from the far side's
    ties, so an end ruled out only by the far side's released count is kept, further out
    (docs/central-inference.md, "The far side")."""
    far_tied = tied if far_tied is None else far_tied
    far_d, near_d = _reach(epsilon, EDGE_TAIL / n), _reach(epsilon, NEAR_TAIL)
    if side < 0:  # far = n - far_tied[1] - k, near = k - 1 - tied[0]
        k = min(k, n - far_tied[1] - far_d)
        ok = k - 1 - tied[0] >= near_d
    else:
        k = max(k, far_tied[0] + 1 + far_d)
        ok = n - tied[1] - k >= near_d
    return k if ok and clear_of_edges(k, n, epsilon, side, tied, far_tied) else None


def endpoint_plan(
    n: int,
    quantile: float,
    epsilon: float,
    alpha: float,
    kind: str = "population",
    center: float | None = None,
    tied: tuple[int, int] = (0, 0),
    far_tied: tuple[int, int] | None = None,
    points: int | None = None,
) -> EndpointPlan:
    """The public rule: ``epsilon / 2`` per end at level ``1 - alpha/2``. An end whose rank
    is not :func:`clear_of_edges` (given ``tied`` and ``far_tied``, upper bounds and estimates of
    the records on each bound, from released counts) or lies beyond the data becomes its
    bound, released for free, unless only the far side's count rules it out: then it is
    moved to the nearest clear rank outward (:func:`outward`). Where an end is the bound,
    the other end is recomputed with all of ``epsilon`` at ``1 - alpha`` where the rule is
    public (no record on the bounds would change it), at ``1 - alpha/2`` where the released
    counts chose it. Neither clear at
    ``epsilon / 2``: the one that is clear at ``epsilon`` (the lower one if both are and q >= 1/2);
    none: no end is released. ``points`` (the data's own lattice, :func:`robust_miss`): the
    ranks hold for any data, ties and records on the bounds included, so an end is clear
    whenever its rank is in ``[1, n]``."""

    def aim(k: int, eps: float, side: int) -> int | None:
        """The end's rank: k where it is clear; where only the released count on the far
        side rules it out, the nearest rank outward that is clear; None: the bound."""
        if points is not None:
            return k if 1 <= k <= n else None
        if clear_of_edges(k, n, eps, side, tied, far_tied):
            return k
        if not clear_of_edges(k, n, eps, side):  # public: no record on a bound would help
            return None
        return outward(k, n, eps, side, tied, far_tied)

    half = epsilon / 2
    ranks = dict(kind=kind, center=center, points=points)
    k_low, k_high = endpoint_ranks(n, quantile, half, 1 - alpha / 2, **ranks)
    a_low, a_high = aim(k_low, half, -1), aim(k_high, half, +1)
    low_in, high_in = a_low is not None, a_high is not None
    if low_in and high_in:
        return EndpointPlan(a_low, a_high, half, half)
    # Chosen by the released counts (with no record on a bound both ends were clear), a
    # one-ended plan keeps its end at 1 - alpha/2: its level is a chance over all samples,
    # and the counts pick the samples where the end misses more often (docs/central-
    # inference.md, "One-ended plans chosen by the counts").
    counted = points is None and all(
        clear_of_edges(k, n, half, side) for k, side in ((k_low, -1), (k_high, +1))
    )
    level = 1 - alpha / 2 if counted else 1 - alpha
    k_low, k_high = endpoint_ranks(n, quantile, epsilon, level, **ranks)
    a_low = None if high_in else aim(k_low, epsilon, -1)
    a_high = None if low_in else aim(k_high, epsilon, +1)
    if a_low is not None and (a_high is None or quantile >= 0.5):
        return EndpointPlan(a_low, None, epsilon, 0.0)
    if a_high is not None:
        return EndpointPlan(None, a_high, 0.0, epsilon)
    return EndpointPlan(None, None, 0.0, 0.0)


def order_levels(
    quantile: float, n_lower: np.ndarray, rank_error: float, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """The levels ``q -+ (z sqrt(q (1 - q) n) + r + 1) / n`` of the two order statistics
    whose releases bound the population q-quantile with a union bound (vectorised over
    releases): ``n`` a lower confidence bound of the count (failing w.p. alpha/8 per end),
    ``z = z_(1 - alpha/4)`` for the binomial rank of the quantile, ``r`` the mechanism's
    rank error bound (alpha/8); each end fails w.p. at most alpha/2 (the order-statistic
    interval, David and Nagaraja 2003, Sec. 7.1; Drechsler et al. 2022 for private ones).
    A level outside (0, 1) means the public bound."""
    from scipy import special

    q = quantile
    z = special.ndtri(1 - alpha / 4)
    offset = (z * np.sqrt(q * (1 - q) * n_lower) + rank_error + 1.0) / n_lower
    return q - offset, q + offset


def order_se(lower: Any, upper: Any, alpha: float) -> Any:
    """The standard error reported for an order-statistic interval: its width over
    ``2 z_(1 - alpha/2)`` (the interval is not symmetric)."""
    from scipy import special

    return (upper - lower) / (2 * special.ndtri(1 - alpha / 2))

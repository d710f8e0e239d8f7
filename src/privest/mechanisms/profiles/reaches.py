"""Reach profiles: the upper and lower reaches U_l, D_l of a statistic (paper 002, Sec. 3.1).

``U_l(x) = sup{f(x') : d(x, x') <= l}`` and ``D_l(x) = inf{...}`` under swap neighbours
(fixed n). They define the pieces of the piecewise Laplace and inverse
sensitivity mechanisms. Every privacy proof rests on Cor. 3.1 alone:
``U_l(x) <= U_{l+1}(x')`` and ``D_l(x) >= D_{l+1}(x')`` for neighbours x, x'.

Builders, each O(n log n) from sorted data and prefix sums unless noted: order statistics
/ quantiles / median, mean of bounded data, sum and count, population variance
(O(n * levels)), and :func:`from_callables` (user reaches). The paper gives reaches only
for the median (and triangle counts); the others are derived here and checked by brute
force in the tests (docs/piecewise-laplace.md, "Reaches of each statistic").

Floating point (docs/piecewise-laplace.md, "Floating point"): Cor. 3.1 must hold for the
float reaches exactly, not up to rounding. Order-statistic reaches are data values (or
correctly rounded averages of two), so it holds bit for bit. Mean and sum reaches are
exact integer sums on a public dyadic grid, mapped to floats by one nondecreasing map (see
the note above :func:`mean_profile`): exact too. Variance reaches are computed within a
proven error bound and moved outward by a margin growing with l (module
:mod:`~privest.mechanisms.profiles.variance`), which makes Cor. 3.1 exact at the price of
reaches looser by about 1e-12 of the range. GS
tails (:meth:`ReachProfile.truncated`) are accumulated step by step for the same reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from privest.errors import BoundsError, ValidationError
from privest.mechanisms.profiles.exact_totals import MAX_EXACT_N, ExactTotals, grid_exponent, snap
from privest.registry import parse_statistic, quantile_level
from privest.validation import as_float_vector, check_bounds

__all__ = [
    "ReachProfile",
    "check_reach_property",
    "count_profile",
    "from_callables",
    "mean_profile",
    "median_profile",
    "order_statistic_profile",
    "parse_statistic",
    "prepare_data",
    "profile_for",
    "quantile_profile",
    "quantile_rank",
    "quantile_target",
    "rank_level",
    "sum_profile",
    "target_ranks",
]


@dataclass(frozen=True)
class ReachProfile:
    """Reaches ``upper[l] = U_l`` and ``lower[l] = D_l`` for l = 0..L of one data set.

    ``lo`` and ``hi`` are the public range of the statistic (inf f and sup f over all data
    sets); the last reaches must equal them, so that the output support is data-independent.
    ``global_sensitivity`` is GS of the statistic (for the Laplace baseline and GS tails).
    """

    center: float
    upper: np.ndarray
    lower: np.ndarray
    lo: float
    hi: float
    global_sensitivity: float
    statistic: str = "custom"
    n: int = 0
    n_clipped: int = 0
    #: set by the builders of this module, whose reaches are valid by construction
    trusted: bool = field(default=False, repr=False, compare=False)
    #: bound on |computed - exact| of each reach before its rounding to float64 (0 when
    #: every reach is a correctly rounded exact value); used to make GS tails consistent
    tolerance: float = field(default=0.0, repr=False, compare=False)

    def __post_init__(self) -> None:
        up = np.asarray(self.upper, dtype=float)
        dn = np.asarray(self.lower, dtype=float)
        object.__setattr__(self, "upper", up)
        object.__setattr__(self, "lower", dn)
        if not self.trusted:
            self.validate()

    def validate(self) -> None:
        """Check finiteness, U_0 = D_0 = f(x), monotonicity and that the range ends are reached."""
        up, dn = self.upper, self.lower
        if up.ndim != 1 or dn.ndim != 1 or up.size < 2 or dn.size < 2:
            raise ValidationError("reaches: need 1-D arrays U_0..U_L and D_0..D_L with L >= 1")
        if not (np.all(np.isfinite(up)) and np.all(np.isfinite(dn))):
            raise ValidationError(
                "reaches: infinite or NaN reach; the range of the statistic must be bounded "
                "(otherwise the normaliser is infinite)"
            )
        if not (up[0] == dn[0] == self.center):
            raise ValidationError(
                f"reaches: U_0 = {up[0]!r} and D_0 = {dn[0]!r} must both equal f(x) = "
                f"{self.center!r}"
            )
        if np.any(np.diff(up) < 0) or np.any(np.diff(dn) > 0):
            raise ValidationError("reaches: U_l must be nondecreasing and D_l nonincreasing in l")
        if not (self.lo <= dn[-1] and up[-1] <= self.hi):
            raise ValidationError(
                f"reaches: [{dn[-1]}, {up[-1]}] leaves the statistic's range [{self.lo}, {self.hi}]"
            )
        if up[-1] != self.hi or dn[-1] != self.lo:
            raise ValidationError(
                f"reaches: the last reaches [{dn[-1]}, {up[-1]}] must equal the range "
                f"[{self.lo}, {self.hi}] (use truncate() to add a tail)"
            )

    @property
    def levels(self) -> int:
        """L, the largest l stored."""
        return max(self.upper.size, self.lower.size) - 1

    def pieces(self) -> dict[str, np.ndarray]:
        """Positive-length pieces: ``level``, ``side`` (+1 upper, -1 lower), ``start``, ``length``.

        Upper piece l is (U_{l-1}, U_l] with start U_{l-1}; lower piece l is [D_l, D_{l-1})
        with start D_{l-1} (paper 002, Sec. 3.2). Zero-length pieces carry no mass and are
        dropped.
        """
        du, dd = np.diff(self.upper), -np.diff(self.lower)
        lu, ld = np.arange(1, du.size + 1), np.arange(1, dd.size + 1)
        keep_u, keep_d = du > 0, dd > 0
        return {
            "level": np.concatenate([lu[keep_u], ld[keep_d]]),
            "side": np.concatenate([np.ones(keep_u.sum()), -np.ones(keep_d.sum())]),
            "start": np.concatenate([self.upper[:-1][keep_u], self.lower[:-1][keep_d]]),
            "end": np.concatenate([self.upper[1:][keep_u], self.lower[1:][keep_d]]),
            "length": np.concatenate([du[keep_u], dd[keep_d]]),
        }

    def log_weights(self, epsilon: float) -> np.ndarray:
        """log(exp(-eps*l/2) * length) of each piece of :meth:`pieces` (paper 002, Alg. 1,
        step 1)."""
        p = self.pieces()
        return -0.5 * epsilon * p["level"] + np.log(p["length"])

    def path_length(self, y: Any) -> np.ndarray:
        """ell(y; x) = min{l : D_l <= y <= U_l} (``inf`` outside [lo, hi])."""
        y = np.asarray(y, dtype=float)
        lu = np.searchsorted(self.upper, y, side="left")
        ld = np.searchsorted(-self.lower, -y, side="left")
        ell = np.where(y >= self.center, lu, ld).astype(float)
        return np.where((y < self.lo) | (y > self.hi), np.inf, ell)

    def truncated(self, k: int, tail: str = "range_end") -> ReachProfile:
        """Keep U_l, D_l for l < k and add a tail (paper 002, Sec. 5.2; keeps Cor. 3.1 under
        swap; docs/piecewise-laplace.md, "Truncation and approximate radii").

        ``tail="range_end"``: U_l = hi and D_l = lo for l >= k (one long last piece per side).
        ``tail="gs"``: U_l = min(hi, U_{k-1} + (l-k+1) GS), D mirrored. In floats the tail
        is accumulated one step at a time, ``T_m = fl(T_{m-1} + G)``, with the step G a
        hair above GS (by the reaches' rounding error and :attr:`tolerance`), so that
        ``U_{k-1}(x) <= U_{k-1}(x') + G``; each step is then a nondecreasing map and
        Cor. 3.1 carries over level by level, bit for bit.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValidationError(f"k: {k!r} must be an integer >= 1")
        if tail not in ("range_end", "gs"):
            raise ValidationError(f"tail: {tail!r} is not 'range_end' or 'gs'")
        up = _pad(self.upper, k)[:k]
        dn = _pad(self.lower, k)[:k]
        if tail == "range_end":
            up, dn = np.append(up, self.hi), np.append(dn, self.lo)
        else:
            scale = max(abs(self.lo), abs(self.hi))
            step = self.global_sensitivity + 2 * self.tolerance + 8 * float(np.spacing(scale))
            up = np.append(up, _gs_tail(up[-1], step, self.hi))
            dn = -np.append(-dn, _gs_tail(-dn[-1], step, -self.lo))
        return replace(self, upper=up, lower=dn)

    def shifted(self, c: float, scale: float = 1.0) -> ReachProfile:
        """The profile of ``scale * f + c`` (scale > 0); used to test equivariance."""
        return replace(
            self,
            center=scale * self.center + c,
            upper=scale * self.upper + c,
            lower=scale * self.lower + c,
            lo=scale * self.lo + c,
            hi=scale * self.hi + c,
            global_sensitivity=scale * self.global_sensitivity,
            tolerance=scale * self.tolerance,
        )


def _gs_tail(start: float, step: float, end: float) -> np.ndarray:
    """min(end, T_m) for m = 1, 2, ... until T_m >= end, with T_0 = start and
    T_m = fl(T_{m-1} + step) (np.add.accumulate adds left to right)."""
    count = max(1, math.ceil((end - start) / step) + 1)
    while True:
        tail = np.add.accumulate(np.r_[start, np.full(count, step)])[1:]
        reached = np.nonzero(tail >= end)[0]
        if reached.size:
            return np.minimum(tail[: reached[0] + 1], end)
        count *= 2


def _pad(arr: np.ndarray, length: int) -> np.ndarray:
    """``arr`` extended with its last value to at least ``length`` entries."""
    if arr.size >= length:
        return arr
    return np.concatenate([arr, np.full(length - arr.size, arr[-1])])


def check_reach_property(first: ReachProfile, second: ReachProfile) -> float:
    """Largest violation of Cor. 3.1 between the profiles of two neighbours (0 if it holds).

    Checks ``U_l(x) <= U_{l+1}(x')`` and ``D_l(x) >= D_{l+1}(x')`` both ways, for every l.
    """
    length = max(first.levels, second.levels) + 2
    pu, pd, qu, qd = (
        _pad(a, length) for a in (first.upper, first.lower, second.upper, second.lower)
    )
    gaps = [pu[:-1] - qu[1:], qd[1:] - pd[:-1], qu[:-1] - pu[1:], pd[1:] - qd[:-1]]
    return float(max(0.0, max(g.max() for g in gaps)))


# -- data preparation ---------------------------------------------------------------------


def prepare_data(x: Any, bounds: Any, clip: bool = False, name: str = "x") -> tuple:
    """Validated 1-D data and public bounds ``(x, a, b, n_clipped)``.

    Data outside the bounds are an error unless ``clip=True``; then they are clipped and
    their number is returned (and reported by the callers).
    """
    arr = as_float_vector(x, name)
    ((a, b),) = check_bounds(bounds, 1)
    inside = arr.size == 0 or (arr.min() >= a and arr.max() <= b)  # two passes, no temporaries
    outside = 0 if inside else int(np.count_nonzero((arr < a) | (arr > b)))
    if outside and not clip:
        raise BoundsError(
            f"{name}: some values lie outside the public bounds [{a:g}, {b:g}]; "
            "pass clip=True to clip them"
        )
    if outside:
        arr = np.clip(arr, a, b)
    return arr, float(a), float(b), outside


def sorted_data(x: Any, bounds: Any, clip: bool = False, name: str = "x", pad: int = 0) -> tuple:
    """``(aug, a, b, n_clipped)``: aug = [a, sorted x, b], i.e. x_(0) .. x_(n+1).

    Same checks as :func:`prepare_data`, made on the sorted data in O(log n). With
    ``pad = p``, ``aug`` is a view into a buffer (``aug.base``) with p more slots on each
    side, filled with a and b (room for in-place work without new memory).
    """
    arr = as_float_vector(x, name)
    ((a, b),) = check_bounds(bounds, 1)
    a, b = float(a), float(b)
    n = arr.size
    buf = np.empty(n + 2 + 2 * pad)
    buf[: pad + 1], buf[n + 1 + pad :] = a, b
    aug = buf[pad : n + 2 + pad] if pad else buf
    aug[1:-1] = arr
    aug[1:-1].sort()
    below = int(np.searchsorted(aug[1:-1], a, side="left"))
    above = n - int(np.searchsorted(aug[1:-1], b, side="right"))
    outside = below + above
    if outside and not clip:
        raise BoundsError(
            f"{name}: some values lie outside the public bounds [{a:g}, {b:g}]; "
            "pass clip=True to clip them"
        )
    if outside:
        np.clip(aug, a, b, out=aug)
    return aug, a, b, outside


def quantile_rank(q: float, n: int) -> int:
    """1-based rank m = clip(ceil(q*n), 1, n) (the "inverted CDF" rule; numpy's
    ``method="inverted_cdf"``): the smooth-sensitivity and PTR baselines aim at x_(m). The
    level is in (0, 1] (docs/vocabulary.md): quantile 0 is refused."""
    quantile_level(q)
    return int(min(max(math.ceil(q * n), 1), n))


def quantile_target(q: float, n: int) -> int:
    """Twice the target rank, ``2 t``, of the q-quantile of n records: the half rank t
    nearest to numpy's default (linear) position ``h = 1 + (n - 1) q``, ties toward the
    middle (docs/piecewise-laplace.md, "Quantile convention"). ``t`` is a rank (the target
    is x_(t)) or a half rank (the average of x_(t - 1/2) and x_(t + 1/2)); q = 1/2 gives
    ``2 t = n + 1``, the median, for every n. Exact in rationals."""
    quantile_rank(q, n)  # validates q
    h2 = 2 + 2 * (n - 1) * Fraction(float(q))  # 2 h
    half = Fraction(1, 2)  # ties round toward the middle, 2 t = n + 1
    return int(math.floor(h2 + half) if h2 <= n + 1 else math.ceil(h2 - half))


def rank_level(rank: int, n: int) -> float:
    """The level q whose target (:func:`quantile_target`) is the order statistic x_(rank)
    of n records: numpy's position ``1 + (n - 1) q`` is ``rank`` (q = 1/(8(n - 1)) for
    rank 1, since level 0 is refused). A release aimed at x_(k) (an interval's end, docs/
    central-inference.md) passes this level with ``target="rank"``."""
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 1 <= rank <= n:
        raise ValidationError(f"rank: {rank!r} must be an integer in [1, {n}]")
    return 1.0 if n == 1 else max(rank - 1, 0.125) / (n - 1)


def target_ranks(twice: int) -> list[int]:
    """The 1-based rank(s) averaged for a target at rank ``twice / 2``."""
    return [twice // 2] if twice % 2 == 0 else [twice // 2, twice // 2 + 1]


# -- builders (docs/piecewise-laplace.md, "Reaches of each statistic") --------------------
def _augmented(xs: np.ndarray, a: float, b: float) -> np.ndarray:
    """x_(0) = a, x_(1..n), x_(n+1) = b (sorted)."""
    out = np.empty(xs.size + 2)
    out[0], out[-1] = a, b
    out[1:-1] = xs
    return out


def order_statistic_profile(
    x: Any, rank: int, bounds: Any, *, clip: bool = False, presorted: bool = False
) -> ReachProfile:
    """f(x) = x_(m) (1-based rank m): U_l = x_(min(m+l, n+1)), D_l = x_(max(m-l, 0))."""
    if presorted:
        arr, a, b, clipped = prepare_data(x, bounds, clip)
        aug = _augmented(arr, a, b)
    else:
        aug, a, b, clipped = sorted_data(x, bounds, clip)
    n = aug.size - 2
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 1 <= rank <= n:
        raise ValidationError(f"rank: {rank!r} must be an integer in [1, {n}]")
    # U_l = x_(min(m+l, n+1)) and D_l = x_(max(m-l, 0)): views of the augmented sample,
    # each running until it reaches its range end (later levels repeat it: no pieces).
    up, dn = aug[rank:], aug[rank::-1]
    return ReachProfile(
        float(aug[rank]), up, dn, a, b, b - a, f"order statistic {rank}/{n}", n, clipped, True
    )


def quantile_profile(x: Any, bounds: Any, *, quantile: float, clip: bool = False) -> ReachProfile:
    """The q-quantile (q = ``quantile``) at its target (:func:`quantile_target`): an order
    statistic, or the average of two neighbours with the reaches of the even-n median."""
    arr = as_float_vector(x)
    ranks = target_ranks(quantile_target(quantile, arr.size))
    if len(ranks) == 1:
        prof = order_statistic_profile(arr, ranks[0], bounds, clip=clip)
    else:
        aug, a, b, clipped = sorted_data(arr, bounds, clip, pad=1)
        up, dn = _even_median_reaches(aug, ranks[0])
        prof = ReachProfile(float(up[0]), up, dn, a, b, b - a, "", arr.size, clipped, True)
    return replace(prof, statistic=f"quantile {quantile:g}")


def median_profile(
    x: Any, bounds: Any, *, clip: bool = False, even: str = "average"
) -> ReachProfile:
    """Median: x_((n+1)/2) for odd n; for even n the average of the two middle values
    (``even="average"``, as numpy) or the lower one (``even="low"``)."""
    if even not in ("average", "low"):
        raise ValidationError(f"even: {even!r} is not 'average' or 'low'")
    aug, a, b, clipped = sorted_data(x, bounds, clip, pad=1)
    n = aug.size - 2
    if n % 2 == 1 or even == "low":
        m = (n + 1) // 2
        return ReachProfile(
            float(aug[m]), aug[m:], aug[m::-1], a, b, b - a, "median", n, clipped, True
        )
    m = n // 2
    up, dn = _even_median_reaches(aug, m)
    return ReachProfile(float(up[0]), up, dn, a, b, b - a, "median", n, clipped, True)


def _even_median_reaches(aug: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """U_l = (x_(m+l) + x_(m+l+1))/2 and D_l = (x_(m-l) + x_(m+1-l))/2, indices clipped to
    [0, n+1], for l = 0 .. n+1-m and 0 .. m+1.

    Computed in place, chunk by chunk through a small buffer, in the padded buffer
    ``aug.base`` of :func:`sorted_data` (``pad=1``; the sorted data are overwritten):
    fresh memory is what costs time at n = 10^6.
    """
    n = aug.size - 2
    buf = aug.base  # buf[i + 1] = aug[i]; buf[0] = a, buf[n + 3] = b
    if buf is None or buf.size != n + 4:
        raise ValueError("aug must come from sorted_data(..., pad=1)")
    chunk = 1 << 15
    # upper: U_l goes to buf[m+l+2] and reads buf[m+l+1], buf[m+l+2]; fill from the top
    saved = buf[m + 2]
    hi = n + 4
    while hi > m + 2:
        lo = max(m + 2, hi - chunk)
        tmp = buf[lo - 1 : hi].copy()
        np.add(tmp[:-1], tmp[1:], out=buf[lo:hi])
        buf[lo:hi] *= 0.5
        hi = lo
    # lower: D_l goes to buf[m+1-l] and reads buf[m+1-l], buf[m+2-l]; fill from the bottom
    lo = 0
    while lo < m + 2:
        hi = min(m + 2, lo + chunk)
        tmp = buf[lo : hi + 1].copy()
        if hi == m + 2:
            tmp[-1] = saved  # buf[m+2] already holds U_0
        np.add(tmp[:-1], tmp[1:], out=buf[lo:hi])
        buf[lo:hi] *= 0.5
        lo = hi
    return buf[m + 2 :], buf[m + 1 :: -1]


def _exact_reaches(
    x: Any, bounds: Any, clip: bool, divide: bool
) -> tuple[np.ndarray, np.ndarray, float, float, float, int, int]:
    """Upper and lower reaches of the sum (``divide=False``) or mean of the snapped records.

    U_l = (S_n - S_l) + l b and D_l = S_{n-l} + l a on the grid (S the prefix sums), mapped to
    floats by one nondecreasing map, clipped to the public range and pinned to its ends.
    Returns ``(up, dn, lo, hi, gs, n, n_clipped)``.
    """
    arr, a, b, clipped = prepare_data(x, bounds, clip)
    n = arr.size
    if n > MAX_EXACT_N:
        raise ValidationError(f"x: n = {n} exceeds 2^30, the limit of the exact reaches")
    p = grid_exponent(a, b)
    ka, kb = (int(v) for v in snap(np.array([a, b]), p))
    k = snap(arr, p)
    k.sort()
    tot = ExactTotals(k)
    lv = np.arange(n + 1, dtype=np.int64)
    (ha, la), (hb, lb) = ExactTotals.split(ka), ExactTotals.split(kb)
    up_h = (tot.h[n] - tot.h) + lv * hb
    up_l = (tot.l[n] - tot.l) + lv * lb
    dn_h = tot.h[n - lv] + lv * ha
    dn_l = tot.l[n - lv] + lv * la
    lo, hi = (a, b) if divide else (n * a, n * b)

    def to_reach(h: np.ndarray, low: np.ndarray) -> np.ndarray:
        t = ExactTotals.to_float(h, low)
        if divide:
            t /= n
        out = np.clip(np.ldexp(t, -p), lo, hi)
        out[ExactTotals.equals(h, low, n * kb)] = hi
        out[ExactTotals.equals(h, low, n * ka)] = lo
        return out

    gs = (b - a) / n if divide else b - a
    return to_reach(up_h, up_l), to_reach(dn_h, dn_l), lo, hi, gs, n, clipped


def sum_profile(x: Any, bounds: Any, *, clip: bool = False) -> ReachProfile:
    """Sum: U_l = (S_n - S_l) + l b, D_l = S_{n-l} + l a; range [n a, n b], GS = b - a (5.3).

    Exact on the public grid of the module note: Cor. 3.1 holds bit for bit.
    """
    up, dn, lo, hi, gs, n, clipped = _exact_reaches(x, bounds, clip, divide=False)
    return ReachProfile(float(up[0]), up, dn, lo, hi, gs, "sum", n, clipped)


def mean_profile(x: Any, bounds: Any, *, clip: bool = False) -> ReachProfile:
    """Mean: U_l = ((S_n - S_l) + l b)/n, D_l = (S_{n-l} + l a)/n; GS = (b - a)/n.

    Exact on the public grid of the module note: Cor. 3.1 holds bit for bit.
    """
    up, dn, a, b, gs, n, clipped = _exact_reaches(x, bounds, clip, divide=True)
    return ReachProfile(float(up[0]), up, dn, a, b, gs, "mean", n, clipped)


def count_profile(indicators: Any) -> ReachProfile:
    """Count of records in a set: U_l = min(k+l, n), D_l = max(k-l, 0).

    ``indicators`` holds one 0/1 (or boolean) entry per record. Under swap neighbours n
    is public. PLM is then Lap(2/eps) truncated to [0, n] (paper 002, Sec. 4.1).
    """
    arr = as_float_vector(np.asarray(indicators, dtype=float), "indicators")
    if not np.all((arr == 0) | (arr == 1)):
        raise ValidationError("indicators: entries must be 0/1 or booleans (one per record)")
    n, k = arr.size, int(arr.sum())
    lv = np.arange(n + 1)
    up = np.minimum(k + lv, n).astype(float)
    dn = np.maximum(k - lv, 0).astype(float)
    return ReachProfile(float(k), up, dn, 0.0, float(n), 1.0, "count", n, 0)


def from_callables(
    x: Any,
    f: Callable[[Any], float],
    upper: Callable[[Any, int], float],
    lower: Callable[[Any, int], float],
    *,
    lo: float,
    hi: float,
    global_sensitivity: float,
    max_level: int,
) -> ReachProfile:
    """A profile from user reaches ``upper(x, l)``, ``lower(x, l)`` for l = 0..max_level.

    The callables must give the exact reaches (or any U, D satisfying Cor. 3.1, which
    :func:`check_reach_property` tests on neighbour pairs). ``lo``/``hi`` are the public
    range of f; if the reaches stop short of it, the range-end tail (paper 002, Sec. 5.2)
    is added.
    """
    if isinstance(max_level, bool) or not isinstance(max_level, (int, np.integer)):
        raise ValidationError(f"max_level: {max_level!r} must be an integer >= 1")
    if max_level < 1:
        raise ValidationError(f"max_level: {max_level!r} must be an integer >= 1")
    up = np.array([float(upper(x, lvl)) for lvl in range(max_level + 1)])
    dn = np.array([float(lower(x, lvl)) for lvl in range(max_level + 1)])
    center = float(f(x))
    if up[-1] != hi or dn[-1] != lo:
        up, dn = np.append(up, hi), np.append(dn, lo)
    return ReachProfile(center, up, dn, float(lo), float(hi), float(global_sensitivity))


# -- dispatch by name (the statistic registry, privest.registry) ------------------------
def profile_for(
    x: Any,
    statistic: str,
    bounds: Any = None,
    *,
    quantile: float | None = None,
    clip: bool = False,
    max_level: int | None = None,
) -> ReachProfile:
    """The reach profile of a registered statistic (its :class:`~privest.registry.
    StatisticSpec`'s builder). ``bounds`` (public) are required except for statistics that
    need none (``count``, whose ``x`` holds 0/1 indicators); ``max_level`` truncates the
    statistics whose reaches cost a pass per level (the variance; paper 002, Sec. 5.2)."""
    from privest.registry import load, statistic_spec

    name, q_spec = parse_statistic(statistic)
    spec = statistic_spec(name)
    build = load(spec.profile)
    if not spec.needs_bounds:
        return build(x)
    if bounds is None:
        raise BoundsError(f"bounds: required for the {name} (public bounds (lo, hi) of the data)")
    options: dict[str, Any] = {"clip": clip}
    if spec.level:
        q = q_spec if quantile is None else quantile
        if q is None:
            raise ValidationError("quantile: the level is required, e.g. quantile=0.9")
        options["quantile"] = q
    if spec.truncatable:
        options["max_level"] = max_level
    return build(x, bounds, **options)

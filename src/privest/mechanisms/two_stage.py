"""Two-stage medians and quantiles for wide bounds: a private coarse histogram shrinks the
bounds, then the piecewise Laplace staircase runs on them (issue 16, requirement 4).

With public bounds ``(a, b)`` much wider than the data and small ``eps min(k, n + 1 - k)``,
the pieces out to the bounds hold most of the mass of every exponential-mechanism-type
release (paper 002, Sec. 4.1: the piece law weighs length against level). Coarse-to-fine
search avoids it (as a quantile tree does). ``TwoStage`` spends

1. ``eps_1 = share * eps`` on the counts of ``bins`` equal public bins of ``(a, b)``, each
   plus exact discrete Laplace noise ``P(z) proportional to exp(-eps_1 |z| / 2)``
   (Canonne, Kamath and Steinke 2020, Alg. 2, in Python integers). Under swap neighbours
   one record leaves one bin and enters another: L1 sensitivity 2, so the noisy histogram
   is eps_1-DP (the geometric mechanism, Ghosh, Roughgarden and Sundararajan 2009). Its
   post-processing picks the first bin ``j`` whose noisy cumulative count reaches ``q n``
   and keeps the bins ``j - 1 .. j + 1``: the shrunk bounds, a function of the noisy counts
   only;
2. ``eps_2 = eps - eps_1`` on :class:`~privest.mechanisms.piecewise_laplace.PiecewiseLaplace`
   (staircase, exact lattice sampling) on the shrunk bounds with the data clipped to them
   (a record-wise map chosen from public values, so it is eps_2-DP for every choice).

Sequential composition with the second stage chosen from the first stage's output
(adaptive composition, Dwork and Roth 2014, Thm. 3.16 for pure DP) gives eps_1 + eps_2 =
eps. The test suite checks both parts and the end-to-end law exactly on neighbours.

The exact law of the chosen bin: the noisy cumulative counts are a random walk with
discrete Laplace steps, so ``P(j)`` is computed by propagating the walk's law below the
threshold ``ceil(q n)`` bin by bin (noise truncated where its tail is below 10^-18).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.profiles.lattice import (
    _BLOCK,
    _SAMPLED,
    _check_data,
    data_range,
    inward_target,
    order_statistics,
    order_window,
    profile_from_order_statistics,
    selection_is_shared,
    split_by_value,
)
from privest.mechanisms.samplers.bigint import Bits
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng
from privest.validation import as_float_vector

__all__ = ["TwoStage", "TwoStageLaw", "discrete_laplace_rational"]

#: default share of the budget on the coarse histogram and its number of bins (measured:
#: docs/piecewise-laplace.md, "Two-stage release for wide bounds")
SHARE, BINS = 0.5, 16
#: discrete Laplace noise beyond this tail mass is left out of the exact law (not the sampler)
_TAIL = 1e-18


def discrete_laplace_rational(eps: Fraction, size: int, bits: Bits) -> list[int]:
    """Exact draws with ``P(z)`` proportional to ``exp(-eps |z| / 2)``, eps rational:
    Canonne, Kamath and Steinke (2020), Alg. 2 with scale ``t / s = 2 / eps``."""
    t, s = 2 * eps.denominator, eps.numerator
    out: list[int] = []
    while len(out) < size:
        u = bits.below(t)
        if not bits.bernoulli_exp(u, t):
            continue
        y = (u + t * bits.geometric_exp1()) // s
        neg = bits.coin()
        if neg and y == 0:
            continue
        out.append(-y if neg else y)
    return out


def _edges(a: float, b: float, bins: int) -> np.ndarray:
    return a + (b - a) * np.arange(bins + 1) / bins


def _shrunk(edges: np.ndarray, j: int) -> tuple[float, float]:
    """The bins j - 1 .. j + 1 (public post-processing of the chosen bin)."""
    return float(edges[max(j - 1, 0)]), float(edges[min(j + 2, edges.size - 1)])


def _threshold(q: float, n: int) -> int:
    """ceil(q n) exactly: the noisy cumulative count (an integer) reaches q n."""
    return math.ceil(Fraction(q) * n)


def bin_law(counts: np.ndarray, eps1: float, threshold: int) -> np.ndarray:
    """P(chosen bin = j): the first j whose noisy cumulative count reaches ``threshold``
    (the last bin if none does), by propagating the walk's law (module docstring)."""
    from scipy.signal import fftconvolve  # the law only: a release never needs it

    alpha = math.exp(-eps1 / 2)
    width = math.ceil(math.log(1 / _TAIL) / (eps1 / 2))
    z = np.arange(-width, width + 1)
    noise = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)
    low = -width * counts.size  # the walk's least value kept
    below = np.zeros(threshold - low)  # P(S = low + i, not yet crossed)
    below[-low] = 1.0  # S_0 = 0
    out = np.zeros(counts.size)
    for j, c in enumerate(counts.tolist()):
        step = fftconvolve(below, noise)  # S + z, indices shifted by -width
        step = np.clip(step, 0.0, None)
        start = -width + int(c)  # index offset of step[0] relative to below[0]
        vals = low + start + np.arange(step.size)
        out[j] = step[vals >= threshold].sum()
        keep = (vals < threshold) & (vals >= low)
        below = np.zeros_like(below)
        below[vals[keep] - low] = step[keep]
    out[-1] += below.sum()
    return out / out.sum()


def _bin_counts(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The counts of the bins ``edges[j] <= x < edges[j + 1]`` of data in
    ``[edges[0], edges[-1]]`` (the last bin also holds ``x = edges[-1]``): the records below
    each inner edge, counted block by block (a block stays in the cache for all edges)."""
    below = np.zeros(edges.size - 2, dtype=np.int64)
    for start in range(0, x.size, _BLOCK):
        block = x[start : start + _BLOCK]
        below += [np.count_nonzero(block < e) for e in edges[1:-1]]
    return np.diff(np.concatenate([[0], below, [x.size]]))


def _crossing(x: np.ndarray, edges: np.ndarray, noise: np.ndarray, threshold: int) -> int | None:
    """The bin :meth:`TwoStageLaw.chosen_bin` picks, from three exact counts, or None. With
    ``B_k`` the records below ``edges[k]`` (``B_bins = n``) and ``need_i = threshold -
    (noise_0 + ... + noise_i)``, bin i is reached iff ``B_{i+1} >= need_i``, and the first
    bin reached is picked (the last bin if none is). A sorted strided sample proposes j;
    one blocked pass counts ``B_k`` for k in ``K = j-1 .. j+1`` (inner edges only). The
    bins with ``i + 1`` in K are tested exactly; those below K are not reached if
    ``B_{min K} < need_i`` for each of them (B is nondecreasing); any other case: None."""
    n, bins = x.size, edges.size - 1
    need = threshold - np.cumsum(noise)
    sample = np.sort(x[:: max(1, n // 4096)])
    est = np.append(np.searchsorted(sample, edges[1:-1]) * (n / sample.size), n)
    hit = np.flatnonzero(est >= need)
    j = int(hit[0]) if hit.size else bins - 1
    known = list(range(max(1, j - 1), min(bins - 1, j + 1) + 1))
    below = np.zeros(len(known), dtype=np.int64)
    for start in range(0, n, _BLOCK):
        block = x[start : start + _BLOCK]
        below += [np.count_nonzero(block < edges[k]) for k in known]
    count = dict(zip(known, below.tolist(), strict=True))
    count[bins] = n
    low = min(count)  # bins i < low - 1 have B_{i+1} <= B_low
    if low > 1 and not count[low] < need[: low - 1].min():
        return None
    for i in range(low - 1, bins):
        if i + 1 not in count:
            return None  # not reached among the counted bins, and this one is not counted
        if count[i + 1] >= need[i]:
            return i
    return bins - 1


def _clipped_window(
    x: np.ndarray, lo: float, hi: float, ranks: tuple[int, int]
) -> tuple[np.ndarray, int]:
    """The order statistics ``ranks[0] .. ranks[1]`` of ``clip(x, lo, hi)`` and the number
    of records clipped (clipping is nondecreasing, so it commutes with order statistics).
    Above ``_SAMPLED`` records or inside
    :func:`~privest.mechanisms.profiles.lattice.shared_selection`: the window of ``x``
    itself (:func:`~privest.mechanisms.profiles.lattice.order_statistics`), clipped, and the
    records outside counted block by block. Otherwise: ranks among
    the records below ``lo`` are ``lo``, ranks above the records inside ``[lo, hi]`` are
    ``hi``, the rest are selected from the records inside (fewer to select from)."""
    if x.size > _SAMPLED or selection_is_shared(x):
        outside = sum(
            np.count_nonzero(block < lo) + np.count_nonzero(block > hi)
            for block in (x[start : start + _BLOCK] for start in range(0, x.size, _BLOCK))
        )
        return np.clip(order_statistics(x, ranks[0], ranks[1]), lo, hi), int(outside)
    below, inside = split_by_value(x, lo, hi)
    r = np.arange(ranks[0], ranks[1] + 1) - below  # ranks among the records inside
    out = np.where(r < 1, lo, hi)
    mid = (r >= 1) & (r <= inside.size)
    if mid.any():
        out[mid] = order_statistics(inside, int(r[mid][0]), int(r[mid][-1]))
    return out, x.size - inside.size


@functools.lru_cache(maxsize=1 << 10)
def _second_stage(
    spec: str, eps2: float, bounds: tuple[float, float], resolution: float | None
) -> PiecewiseLaplace:
    """The second stage's mechanism, from public inputs only: a mechanism holds no data and
    is not changed by a release, so one object serves every release with these inputs (a
    median with its interval builds the two-stage mechanism twice, each with 16 of these)."""
    return PiecewiseLaplace(spec, epsilon=eps2, bounds=bounds, clip=True, resolution=resolution)


class TwoStageLaw(OutputLaw):
    """The two-stage release on one data set: the chosen bin's exact law mixed with the
    second stage's lattice laws (curator's view; never publish it).

    No sort of the data: the bin counts are one blocked counting pass (above ``_SAMPLED``
    records a single draw counts three edges first, :meth:`chosen_bin`), and the second
    stage reads its window of order statistics by selection
    (:func:`~privest.mechanisms.profiles.lattice.order_statistics`;
    clipping to the shrunk bounds and snapping to the lattice are nondecreasing, so they
    commute with taking order statistics). A release (:meth:`sample`) needs nothing more;
    the exact bin law (:attr:`bin_prob`, 16 convolutions) is computed on first use, by the
    error laws."""

    def __init__(self, mech: TwoStage, x: Any):
        a, b = mech.bounds
        arr = as_float_vector(x)
        lo, hi = data_range(arr)
        if not (lo >= a and hi <= b):
            arr, _ = _check_data(arr, a, b, mech.clip)  # raises, or clips
        self.mech, self.x, self.epsilon = mech, arr, mech.epsilon
        self.edges = _edges(a, b, mech.bins)
        self.threshold = _threshold(mech.level, arr.size)
        self._laws: dict[int, Any] = {}

    @cached_property
    def counts(self) -> np.ndarray:
        """The counts of the bins (:func:`_bin_counts`)."""
        return _bin_counts(self.x, self.edges)

    def chosen_bin(self, noise: np.ndarray, probe: bool = True) -> int:
        """The first bin whose noisy cumulative count (``noise``: the bins' noise) reaches
        the threshold, the last if none does. With ``probe``, above ``_SAMPLED`` records and
        before the counts exist, :func:`_crossing` tries two exact counts first (the same
        bin; one pass each time, so a batch of draws counts all bins once instead)."""
        if probe and "counts" not in self.__dict__ and self.x.size > _SAMPLED:
            j = _crossing(self.x, self.edges, noise, self.threshold)
            if j is not None:
                return j
        hit = np.flatnonzero(np.cumsum(self.counts + noise) >= self.threshold)
        return int(hit[0]) if hit.size else self.counts.size - 1

    @cached_property
    def bin_prob(self) -> np.ndarray:
        """P(the first stage picks bin j), exactly (:func:`bin_law`)."""
        return bin_law(self.counts, self.mech.eps1, self.threshold)

    @property
    def value(self) -> float:
        """The stated target: the order statistic(s) the second stage aims at."""
        n = self.x.size
        inward = inward_target(self.mech.spec, None, n, self.mech.eps2)
        ranks, _, _ = order_window(self.mech.spec, None, n, 0, inward=inward)
        return float(np.mean(order_statistics(self.x, ranks[0], ranks[-1])))

    def stage_two(self, j: int) -> Any:
        """The second stage's lattice law when the first stage picks bin j: its profile
        from the order statistics of the data clipped to the shrunk bounds and snapped
        (:func:`~privest.mechanisms.profiles.lattice.profile_from_order_statistics`, as
        :func:`~privest.mechanisms.profiles.lattice.lattice_profile_of` builds it from
        unsorted data)."""
        if j not in self._laws:
            lo, hi = _shrunk(self.edges, j)
            second = self.mech.second((lo, hi))
            x, n = self.x, self.x.size
            inward = second.inward(n)
            _, first, last = order_window(second.spec, None, n, second.levels, inward=inward)
            window, outside = _clipped_window(x, lo, hi, (first, last))
            window = second.grid.snap(window).astype(np.int64)
            profile = profile_from_order_statistics(
                window,
                second.spec,
                second.grid,
                n=n,
                levels=second.levels,
                n_clipped=outside,
                inward=inward,
            )
            self._laws[j] = second.law_from_profile(profile)
        return self._laws[j]

    def _used(self) -> list[int]:
        return [j for j in range(self.bin_prob.size) if self.bin_prob[j] > 1e-15]

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Exact draws: both stages run with exact integer noise."""
        gen = resolve_rng(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        m = int(np.prod(shape)) if shape else 1
        bits = Bits(gen, block=64)
        eps1 = Fraction(self.mech.eps1)
        out = np.empty(m)
        for r in range(m):
            noise = np.array(discrete_laplace_rational(eps1, self.mech.bins, bits))
            out[r] = self.stage_two(self.chosen_bin(noise, probe=m == 1)).sample(None, gen)
        return float(out[0]) if size is None else out.reshape(shape)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        parts = [np.log(self.bin_prob[j]) + self.stage_two(j).logpdf(y) for j in self._used()]
        return np.logaddexp.reduce(np.array(parts), axis=0)

    def error_mean_abs(self, reference: float | None = None) -> float:
        """E|M(x) - target| (``value``), or E|M(x) - reference|, exactly given the bin law."""
        ref = self.value if reference is None else reference
        return float(
            sum(
                self.bin_prob[j] * self.stage_two(j).error_mean_abs(reference=ref)
                for j in self._used()
            )
        )

    def error_cdf(self, alpha: ArrayLike, reference: float | None = None) -> np.ndarray:
        ref = self.value if reference is None else reference
        return sum(
            self.bin_prob[j] * self.stage_two(j).error_cdf(alpha, reference=ref)
            for j in self._used()
        )

    def privacy_report(self) -> dict[str, float]:
        return {"pure_dp": self.epsilon, "stage_1": self.mech.eps1, "stage_2": self.mech.eps2}


class TwoStage(StatisticMechanism):
    """Two-stage median or quantile (module docstring): ``share`` of eps on a noisy
    histogram of ``bins`` public bins, the rest on the PLM staircase on the shrunk bounds.

    ``TwoStage("median", epsilon=1.0, bounds=(-1000, 1000)).release(x)``.
    """

    name = "two_stage"

    def __init__(
        self,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
        resolution: float | None = None,
        domain: Domain | None = None,
        share: float = SHARE,
        bins: int = BINS,
    ) -> None:
        super().__init__(
            statistic,
            epsilon=epsilon,
            bounds=bounds,
            quantile=quantile,
            clip=clip,
            domain=domain,
            resolution=resolution,
        )
        resolution = self.domain.resolution
        if not 0 < share < 1:
            raise ValidationError(f"share: {share!r} must lie strictly between 0 and 1")
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 3:
            raise ValidationError(f"bins: {bins!r} must be an integer >= 3")
        self.share, self.bins, self.resolution = float(share), bins, resolution
        self.eps1 = self.epsilon * self.share
        self.eps2 = self.epsilon - self.eps1
        self.level = 0.5 if self.statistic == "median" else float(self.q)
        a, b = self.bounds
        edges = _edges(a, b, bins)
        for j in range(bins):  # every shrunk range holds a lattice point (public check)
            self.second(_shrunk(edges, j))

    def second(self, bounds: Any) -> PiecewiseLaplace:
        """The second stage on the shrunk ``bounds`` (data clipped to them), built once per
        process for each set of public inputs (:func:`_second_stage`)."""
        key = (float(bounds[0]), float(bounds[1]))
        return _second_stage(self.spec, self.eps2, key, self.resolution)

    def law(self, x: Any) -> TwoStageLaw:
        return TwoStageLaw(self, x)

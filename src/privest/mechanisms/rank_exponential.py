"""Medians and quantiles under add/remove neighbours: the exponential mechanism over public
lattice points with the rank utility, sampled exactly, vectorised over the cells of a table.

McSherry and Talwar (2007): release the candidate ``c`` with probability proportional to
``exp(-eps d(c) / (2 Delta))``. The candidates are the points ``ka .. kb`` of a public lattice
(``resolution=``, or a power-of-two step with 2^10 to 2^11 points across the bounds), the
data are snapped to it (one fixed record-wise map, :class:`~privest.mechanisms.profiles.
lattice.LatticeGrid`), and the distance of ``c`` from being a q-quantile is

    d(c) = max(#{x < c} - q N, q N - #{x <= c}, 0)      (in ranks; 0 at every q-quantile)

(Smith 2011 uses ``|#{x < c} - q N|`` between data points; the two counts make tied data,
many records on one lattice point, cost nothing). Adding or removing a unit of at most
``m`` rows moves ``#{x < c}`` and ``#{x <= c}`` by at most ``m`` and ``q N`` by ``q m``, so
each term moves by at most ``Delta = m max(q, 1 - q)``; under swap neighbours (n public)
``Delta = 1``. This needs no public n: the mechanism releases medians and quantiles under
add/remove neighbours (a table's cells, docs/tables.md).

Exact arithmetic: the level is the public ``q = a / 2^16`` (``a = round(q 2^16)``), so
``2^16 d(c)`` is an integer ``D``; epsilon runs at ``eps' = floor(eps 2^20) / 2^20 <= eps``;
``eps' d / (2 Delta) = E D / (2^21 m A)`` with ``E = eps' 2^20``, ``A = max(a, 2^16 - a)``
(``A = 2^16``, ``m = 1`` under swap). ``D`` is capped at the value where the exponent
reaches 40 (weight e^-40; ``min(d, cap)`` moves by at most ``Delta`` too, so the guarantee
is unchanged). The sampler proposes candidates uniformly (exact uniform integers) and
accepts with the exact Bernoulli(exp(-E D / (2^21 m A))) of Canonne, Kamath and Steinke
(2020, Alg. 1): rejection sampling, so the released index has exactly the exponential
mechanism's law, which is eps'-DP (McSherry and Talwar 2007, Thm 6). Every candidate has
positive probability under every data set (no float support attack). The cells of a table
are sampled together, in rounds of :data:`BATCH` proposals per open cell.

The EM's error in ranks obeys ``P(d >= (2 Delta / eps)(ln N_c + t)) <= e^-t`` for ``N_c``
candidates (Dwork and Roth 2014, Thm 3.11): :func:`rank_error_bound`, used by the
intervals of docs/tables.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.laws.base import DiscreteOutputLaw
from privest.mechanisms.profiles.lattice import LatticeGrid, _check_data
from privest.mechanisms.profiles.reaches import parse_statistic
from privest.mechanisms.samplers.lattice import bernoulli_exp
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng

__all__ = [
    "BATCH",
    "LEVEL_BITS",
    "RankExponential",
    "RankExponentialLaw",
    "RankScore",
    "em_grid",
    "rank_error_bound",
    "sample_rank_em",
]

#: the quantile level is a multiple of 2^-LEVEL_BITS (public rounding)
LEVEL_BITS = 16
#: epsilon runs at floor(eps 2^EPS_BITS) / 2^EPS_BITS
EPS_BITS = 20
#: the exponent is capped here (weight e^-40 relative to a q-quantile)
CAP = 40
#: default candidates: 2^GRID_BITS to 2^(GRID_BITS + 1) lattice steps across the bounds
GRID_BITS = 10
#: at most this many candidates (the histogram of a table holds cells x candidates)
MAX_CANDIDATES = 1 << 16
#: proposals per open cell and round: at least BATCH, a quarter of the candidates, and at
#: most ROUND proposals in all
BATCH, ROUND = 32, 1 << 20


def em_grid(a: float, b: float, resolution: float | None = None) -> LatticeGrid:
    """The public candidate lattice of bounds ``(a, b)`` (module docstring)."""
    if resolution is None:
        resolution = math.ldexp(1.0, math.floor(math.log2(b - a)) - GRID_BITS)
    grid = LatticeGrid.for_bounds(a, b, resolution)
    if grid.kb - grid.ka + 1 > MAX_CANDIDATES:
        raise ValidationError(
            f"resolution: {resolution!r} gives {grid.kb - grid.ka + 1} candidates in the "
            f"bounds ({a:g}, {b:g}); at most {MAX_CANDIDATES} are accepted"
        )
    return grid


class RankScore:
    """The public integers of the score: ``q = a / 2^16``, ``E``, the denominator and the
    cap of ``D`` (module docstring), for epsilon ``epsilon`` and units of ``m`` rows
    (``swap=True``: one record changes value, n public, ``Delta = 1``; ``any_level=True``:
    ``Delta = m``, valid for any level, so that each cell may have its own)."""

    def __init__(
        self,
        quantile: float,
        epsilon: float,
        m: int = 1,
        *,
        swap: bool = False,
        any_level: bool = False,
    ):
        if not 0.0 < quantile <= 1.0:
            raise ValidationError(f"quantile: {quantile!r} must be in (0, 1]")
        if not epsilon >= 2.0**-EPS_BITS:
            raise ValidationError(f"epsilon: {epsilon!r} is below 2^-{EPS_BITS}")
        one = 1 << LEVEL_BITS
        self.a = min(max(round(quantile * one), 1), one)
        self.e = math.floor(epsilon * (1 << EPS_BITS))
        self.m = 1 if swap else int(m)
        # any_level: Delta = m, valid for every level (levels chosen per cell)
        spread = one if swap or any_level else max(self.a, one - self.a)
        self.den = (1 << (EPS_BITS + 1)) * self.m * spread
        if self.den >= 1 << 55:
            raise ValidationError(f"max_rows: {m!r} is too large for the exact sampler")
        self.cap = math.ceil(CAP * self.den / self.e)
        #: the sensitivity Delta in ranks and the epsilon the release runs at
        self.delta_ranks = self.m * spread / one
        self.epsilon_run = self.e / (1 << EPS_BITS)

    def distance(
        self, below: np.ndarray, upto: np.ndarray, n: np.ndarray, a: Any = None
    ) -> np.ndarray:
        """``D = 2^16 d``, capped: ``below = #{x < c}``, ``upto = #{x <= c}`` (int64); ``a``
        the levels (times 2^16) per entry, if not the score's own."""
        one = 1 << LEVEL_BITS
        target = (self.a if a is None else a) * n
        d = np.maximum(np.maximum(below * one - target, target - upto * one), 0)
        return np.minimum(d, self.cap)

    def log_weight(self, d: np.ndarray) -> np.ndarray:
        """``-E D / den``: the log-weights of the candidates (for the law, in floats)."""
        return -(self.e * d.astype(float)) / self.den


def sample_rank_em(
    counts: np.ndarray,
    score: RankScore,
    rng: np.random.Generator,
    levels: np.ndarray | None = None,
) -> np.ndarray:
    """One exact draw of the exponential mechanism per row of ``counts`` (cells x
    candidates: how many of each cell's snapped records sit on each lattice point); returns
    the chosen candidate positions ``0 .. N_c - 1`` (module docstring). ``levels``: each
    row's level times 2^16 (a score built with ``any_level=True``)."""
    counts = np.asarray(counts, dtype=np.int64)
    cells, width = counts.shape
    cum = np.cumsum(counts, axis=1)
    total = cum[:, -1] if width else np.zeros(cells, np.int64)
    out = np.full(cells, -1, dtype=np.int64)
    open_ = np.arange(cells)
    while open_.size:
        batch = max(BATCH, min(width // 4, ROUND // open_.size))
        rows = np.repeat(open_, batch)
        r = rng.integers(0, width, size=rows.size)
        upto = cum[rows, r]
        below = upto - counts[rows, r]
        a = None if levels is None else np.asarray(levels, dtype=np.int64)[rows]
        d = score.distance(below, upto, total[rows], a)
        ok = bernoulli_exp(score.e * d, np.full(d.size, score.den, np.int64), rng)
        ok = ok.reshape(open_.size, batch)
        hit = ok.any(axis=1)
        first = np.argmax(ok, axis=1)
        out[open_[hit]] = r.reshape(open_.size, batch)[hit, first[hit]]
        open_ = open_[~hit]
    return out


def rank_error_bound(epsilon: float, delta_ranks: float, candidates: int, beta: float) -> float:
    """``r`` with ``P(d(release) > r) <= beta``: ``(2 Delta / eps)(ln N_c + ln(1/beta))``
    (Dwork and Roth 2014, Thm 3.11; ``d`` in ranks, module docstring)."""
    return 2.0 * delta_ranks / epsilon * (math.log(candidates) + math.log(1.0 / beta))


class RankExponentialLaw(DiscreteOutputLaw):
    """The exponential mechanism's law on one data set (curator's view; never publish)."""

    def __init__(self, idx: np.ndarray, grid: LatticeGrid, score: RankScore, value: float):
        self.grid, self.score = grid, score
        self.epsilon = score.epsilon_run
        width = grid.kb - grid.ka + 1
        self.counts = np.bincount(idx - grid.ka, minlength=width).astype(np.int64)
        cum = np.cumsum(self.counts)
        d = score.distance(cum - self.counts, cum, np.full(width, cum[-1]))
        logw = score.log_weight(d)
        w = np.exp(logw - logw.max())
        self._pmf = w / w.sum()
        self.value = value

    def support(self) -> np.ndarray:
        return np.arange(self.grid.ka, self.grid.kb + 1) * self.grid.step

    def pmf(self) -> np.ndarray:
        return self._pmf

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        m = int(np.prod(shape)) if shape else 1
        pos = sample_rank_em(np.broadcast_to(self.counts, (m, self.counts.size)), self.score, gen)
        y = (pos + self.grid.ka) * self.grid.step
        return float(y[0]) if size is None else y.reshape(shape)


class RankExponential(StatisticMechanism):
    """Exponential-mechanism median or quantile over public lattice points (module
    docstring), under swap or add/remove neighbours (a unit of at most ``max_rows`` rows).

    ``RankExponential("median", epsilon=1.0, bounds=(0, 100), resolution=1).release(x)``.
    """

    name = "rank_exponential"

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
        self.grid = em_grid(*self.bounds, self.domain.resolution)
        level = 0.5 if self.statistic == "median" else float(self.q)
        swap = self.domain.neighbours == "swap"
        self.score = RankScore(level, self.epsilon, self.domain.max_rows or 1, swap=swap)

    def law(self, x: Any) -> RankExponentialLaw:
        """NON-PRIVATE: the exact law on ``x``."""
        a, b = self.bounds
        arr = np.asarray(x, dtype=float).ravel()
        if arr.size or self.domain.n_public:  # under add/remove the empty data set counts
            arr, _ = _check_data(x, a, b, self.clip)
        idx = self.grid.snap(arr).astype(np.int64)
        name, _ = parse_statistic(self.spec)
        q = 0.5 if name == "median" else float(self.q)
        value = float(np.quantile(arr, q, method="inverted_cdf")) if arr.size else math.nan
        return RankExponentialLaw(idx, self.grid, self.score, value)

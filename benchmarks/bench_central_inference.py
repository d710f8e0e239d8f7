"""Coverage and width of the private statistics' intervals on real data (issue 27, item 4).

Populations: columns of data sets shipped inside scikit-learn (offline): ``diabetes``
(disease progression, 442 records), ``breast_cancer`` (mean area, 569), ``wine`` (proline,
178); for proportions ``diabetes`` sex = 2, ``breast_cancer`` malignant, ``wine`` class 0
and ``diabetes`` progression > 275 (7%). Each cell draws ``--reps`` samples of n records
with replacement from the data set (the population; its quantity is the data set's own),
releases them with the library's split of epsilon and its mechanisms' noise laws, and
computes the library's interval (:mod:`privest.intervals`) on the released values,
batched over releases. Bounds: ``wide`` (holding the data) and ``clip`` (cutting 10-19% of
it: the target is then the quantity of the clipped distribution, the stated assumption).

* mean, sum, variance: sufficient statistics of each sample from multinomial counts; the
  noise drawn from each mechanism's noise law (Laplace at the law's scale: the release's
  lattice moves it by at most 2^-20 of the scale);
* count: exact, no sampling (``--reps`` unused): the coverage and mean width summed over
  the joint law of the binomial count and the discrete Laplace noise;
* median and quantiles 0.1, 0.9: the population is the data set smoothed by a uniform
  kernel (Silverman's bandwidth), so that its quantiles are continuous (the ``ties`` rows
  use the raw data on the integer lattice instead); each sample is the window of order
  statistics the releases read, drawn exactly (uniform order statistics through the
  population's quantile function), and each end's coverage is exact given the sample from
  the piecewise Laplace staircase's law on that window (checked against the library's
  ``law.cdf`` on every cell's first window), so a cell's coverage is the mean over samples
  of the exact conditional coverage.

Beside each private interval: the non-private one (t interval; normal with the sample
kurtosis for the variance; Wilson for a proportion; order statistics for quantiles) and
the noise-only one (the anchors' kind), with their coverage of the population quantity.
For a smoothed population's quantile inside the bounds the order-statistic interval's
coverage is also exact (``nonprivate_exact``: a binomial sum), so the private coverage is
estimated a second way with it as a control variate (``paired_coverage``: the exact figure
plus the mean over samples of the private conditional coverage minus the non-private hit;
``paired_se``): where the two intervals nearly agree its SE is far below the plain one.
``lower_at_bound`` and ``upper_at_bound``: the share of samples whose plan makes that end of
the population interval the bound itself (released for free).

    python benchmarks/bench_central_inference.py [--quick] [--reps 1000] [--out DIR]
    python benchmarks/bench_central_inference.py --tables --parts counts quantiles --out DIR
    python benchmarks/bench_central_inference.py --parts quantiles --rows smooth --q 0.5 \
        [--bounds wide clip] [--n 10000] [--epsilons 1 2] --out DIR   (a subset of cells)
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from privest.domain import Domain
from privest.intervals.counts import count_interval
from privest.intervals.release import (
    fourth_plan,
    moment_inference,
    plan_split,
    spread_plan,
)
from privest.intervals.results import CountInference
from privest.mechanisms.discrete_laplace import DiscreteLaplace
from privest.mechanisms.laplace import LaplaceMechanism
from privest.mechanisms.profiles.variance import variance_sup

ALPHA = 0.05
N_GRID = (100, 1_000, 10_000, 100_000)
EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class Population:
    """Atoms and weights of a data set's column, with its two pairs of public bounds."""

    name: str
    atoms: np.ndarray
    weights: np.ndarray
    wide: tuple[float, float]
    clip: tuple[float, float]


def populations() -> list[Population]:
    from sklearn import datasets

    cols = {
        "diabetes": (datasets.load_diabetes(scaled=False).target, (0, 400), (50, 250)),
        "breast_cancer": (datasets.load_breast_cancer().data[:, 3], (0, 2600), (200, 1200)),
        "wine": (datasets.load_wine().data[:, 12], (0, 2000), (300, 1200)),
    }
    out = []
    for name, (col, wide, clip) in cols.items():
        atoms, counts = np.unique(col, return_counts=True)
        out.append(Population(name, atoms, counts / counts.sum(), wide, clip))
    return out


def proportions() -> dict[str, float]:
    from sklearn import datasets

    d = datasets.load_diabetes(scaled=False)
    return {
        "diabetes sex": float(np.mean(d.data[:, 1] == 2)),
        "breast_cancer malignant": float(np.mean(datasets.load_breast_cancer().target == 0)),
        "wine class 0": float(np.mean(datasets.load_wine().target == 0)),
        "diabetes progression > 275": float(np.mean(d.target > 275)),
    }


def _noise_scale(statistic: str, epsilon: float, bounds, n: int) -> float:
    return float(LaplaceMechanism(statistic, epsilon=epsilon, bounds=bounds).noise_law(n).scale)


def _row(**kw) -> dict:
    return kw


def _mean(a) -> float:
    return float(np.mean(a))


# -- mean, sum, variance --------------------------------------------------------------------
def _moments(pop: Population, bounds, n: int, reps: int, rng) -> dict:
    """Power sums about the bounds' midpoint of ``reps`` samples of n clipped records."""
    lo, hi = bounds
    c = np.clip(pop.atoms, lo, hi) - (lo + hi) / 2
    counts = rng.multinomial(n, pop.weights, size=reps).astype(float)
    s = {k: counts @ c**k for k in (1, 2, 3, 4)}
    mu = float(pop.weights @ c)
    var = float(pop.weights @ (c - mu) ** 2)
    return {"s": s, "mu": mu + (lo + hi) / 2, "var": var}


def _cover(low, high, target) -> tuple[float, float]:
    hit = (low <= target) & (target <= high)
    return float(np.mean(hit)), float(np.mean(high - low))


def _se(coverage: float, reps: int) -> float:
    return math.sqrt(coverage * (1 - coverage) / reps)


def moment_cells(pop: Population, kind: str, n: int, reps: int, rng) -> list[dict]:
    bounds = pop.wide if kind == "wide" else pop.clip
    lo, hi = bounds
    dom = Domain(bounds=bounds)
    m = _moments(pop, bounds, n, reps, rng)
    s1, s2, s3, s4 = (m["s"][k] for k in (1, 2, 3, 4))
    mid = (lo + hi) / 2
    xbar = mid + s1 / n
    var_n = s2 / n - (s1 / n) ** 2
    m4 = (s4 - 4 * (s1 / n) * s3 + 6 * (s1 / n) ** 2 * s2) / n - 3 * (s1 / n) ** 4
    rows = []
    tq = stats.t.ppf(1 - ALPHA / 2, n - 1)
    np_mean = tq * np.sqrt(var_n * n / (n - 1) / n)
    for eps in EPSILONS:
        common = dict(data=pop.name, bounds=kind, n=n, epsilon=eps)
        for stat in ("mean", "sum"):
            f = n if stat == "sum" else 1.0
            split = plan_split(stat, eps, "population")
            b = _noise_scale(stat, split["point"], bounds, n)
            est = np.clip(f * xbar + rng.laplace(0, b, reps), f * lo, f * hi)
            centre, cap = spread_plan(dom)
            b2 = _noise_scale("mean", split["spread"], (0.0, cap), n)
            m2 = np.clip(s2 / n + rng.laplace(0, b2, reps), 0, cap)
            inf = moment_inference(
                stat,
                "population",
                est,
                n,
                dom,
                b,
                split,
                spread=m2,
                spread_scale=b2,
                spread_cap=cap,
                centre=centre,
            )
            cov, width = _cover(*inf.conf_int(ALPHA), f * m["mu"])
            bn = _noise_scale(stat, eps, bounds, n)
            own = f * xbar
            est_n = np.clip(own + rng.laplace(0, bn, reps), f * lo, f * hi)
            noise = moment_inference(stat, "noise", est_n, n, dom, bn, {"point": eps})
            ncov, nwidth = _cover(*noise.conf_int(ALPHA), f * m["mu"])
            own_cov, _ = _cover(*noise.conf_int(ALPHA), own)
            npcov, npw = _cover(f * (xbar - np_mean), f * (xbar + np_mean), f * m["mu"])
            rows.append(
                _row(
                    statistic=stat,
                    **common,
                    coverage=cov,
                    coverage_se=_se(cov, reps),
                    width=width,
                    nonprivate_coverage=npcov,
                    nonprivate_width=npw,
                    noise_coverage=ncov,
                    noise_width=nwidth,
                    noise_own_coverage=own_cov,
                )
            )
        rows.append(_variance_cell(pop, dom, n, reps, rng, eps, m, xbar, var_n, m4, common))
    return rows


def _variance_cell(pop, dom, n, reps, rng, eps, m, xbar, var_n, m4, common) -> dict:
    lo, hi = dom.interval()
    mid = (lo + hi) / 2
    s1, s2, s3, s4 = (m["s"][k] for k in (1, 2, 3, 4))
    split = plan_split("variance", eps, "population")
    top = variance_sup(n, lo, hi)
    b = _noise_scale("variance", split["point"], dom.bounds, n)
    vhat = np.clip(var_n + rng.laplace(0, b, reps), 0, top)
    bm = _noise_scale("mean", split["centre"], dom.bounds, n)
    mhat = np.clip(xbar + rng.laplace(0, bm, reps), lo, hi)
    v, cap = fourth_plan(mhat, vhat, dom)
    d = mhat - mid  # sums of (y - d)^k, y = x - mid
    p2 = s2 - 2 * d * s1 + n * d**2
    p4 = s4 - 4 * d * s3 + 6 * d**2 * s2 - 4 * d**3 * s1 + n * d**4
    t = (p4 - 2 * v * p2 + n * v**2) / n
    # the noise law of the mean of values in [0, cap]: scale cap / (n eps) on its lattice
    # (the lattice's relative excess read off the law for cap = 1)
    bt = cap * _noise_scale("mean", split["fourth"], (0.0, 1.0), n)
    that = np.clip(t + rng.laplace(0, bt), 0, cap)
    inf = moment_inference(
        "variance",
        "population",
        vhat,
        n,
        dom,
        b,
        split,
        spread=that,
        spread_scale=bt,
        spread_cap=cap,
        centre=v,
    )
    cov, width = _cover(*inf.conf_int(ALPHA), m["var"])
    bn = _noise_scale("variance", common["epsilon"], dom.bounds, n)
    noise = moment_inference(
        "variance",
        "noise",
        np.clip(var_n + rng.laplace(0, bn, reps), 0, top),
        n,
        dom,
        bn,
        {"point": common["epsilon"]},
    )
    ncov, nwidth = _cover(*noise.conf_int(ALPHA), m["var"])
    own_cov, _ = _cover(*noise.conf_int(ALPHA), var_n)
    s2u = var_n * n / (n - 1)
    half = stats.norm.ppf(1 - ALPHA / 2) * np.sqrt(np.maximum(m4 - var_n**2, 0) / n)
    npcov, npw = _cover(s2u - half, s2u + half, m["var"])
    return _row(
        statistic="variance",
        **common,
        coverage=cov,
        coverage_se=_se(cov, reps),
        width=width,
        nonprivate_coverage=npcov,
        nonprivate_width=npw,
        noise_coverage=ncov,
        noise_width=nwidth,
        noise_own_coverage=own_cov,
    )


# -- counts ---------------------------------------------------------------------------------
def _wilson(c: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    z = stats.norm.ppf(1 - ALPHA / 2)
    ph = c / n
    centre = (ph + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return n * (centre - half), n * (centre + half)


def count_cells(name: str, p: float, n: int, reps: int, rng) -> list[dict]:
    """Exact coverages and mean widths (``reps`` unused): the sums over the joint law of the
    binomial count C (13 SDs each side) and the discrete Laplace noise K (to mass 1e-20)."""
    del reps, rng
    sd = math.sqrt(n * p * (1 - p))
    j = np.arange(
        max(0, math.floor(n * p - 13 * sd - 2)), min(n, math.ceil(n * p + 13 * sd + 2)) + 1
    )
    pj = stats.binom.pmf(j, n, p)
    lo_np, hi_np = _wilson(j.astype(float), n)
    npcov = float(pj @ ((lo_np <= n * p) & (n * p <= hi_np)))
    npw = float(pj @ (hi_np - lo_np))
    rows = []
    for eps in EPSILONS:
        law = DiscreteLaplace("count", epsilon=eps).noise_law()
        r = float(law.p)
        reach = math.ceil(46.1 / -math.log(r)) + 1
        k = np.arange(-reach, reach + 1)
        w = pj[:, None] * ((1 - r) / (1 + r) * r ** np.abs(k))[None, :]
        if not 1 - 1e-9 < w.sum() <= 1 + 1e-9:
            raise AssertionError(f"the joint law's mass is {w.sum()}")
        rel = np.clip(j[:, None] + k[None, :], 0, n)
        # CountInference.conf_int's interval (count_interval times n) of every release
        values, where = np.unique(rel, return_inverse=True)
        low, high = (n * b[where.reshape(rel.shape)] for b in count_interval(values, n, r, ALPHA))
        cov = float(np.sum(w * ((low <= n * p) & (n * p <= high))))
        nhalf = CountInference("noise", 0.0, n, r).conf_int(ALPHA).upper  # no clamping above
        nlow, nhigh = np.maximum(rel - nhalf, 0), np.minimum(rel + nhalf, n)
        rows.append(
            _row(
                statistic="count",
                data=name,
                bounds="-",
                n=n,
                epsilon=eps,
                coverage=cov,
                coverage_se=0.0,
                width=float(np.sum(w * (high - low))),
                nonprivate_coverage=npcov,
                nonprivate_width=npw,
                noise_coverage=float(np.sum(w * ((nlow <= n * p) & (n * p <= nhigh)))),
                noise_width=float(np.sum(w * (nhigh - nlow))),
                noise_own_coverage=float(
                    np.sum(w * ((nlow <= j[:, None]) & (j[:, None] <= nhigh)))
                ),
            )
        )
    return rows


# -- medians and quantiles ------------------------------------------------------------------
class Quantiles:
    """A population for order statistics: the data set smoothed by a uniform kernel of
    Silverman's bandwidth (``smooth=True``) or the raw atoms (ties)."""

    def __init__(self, pop: Population, smooth: bool):
        self.pop, self.smooth = pop, smooth
        w, a = pop.weights, pop.atoms
        cum = np.cumsum(w)
        if not smooth:
            self._cum = cum
            return
        mean = w @ a
        sd = math.sqrt(w @ (a - mean) ** 2)
        iqr = np.interp(0.75, cum, a) - np.interp(0.25, cum, a)
        h = math.sqrt(3) * 0.9 * min(sd, iqr / 1.34) * a.size**-0.2
        br = np.unique(np.concatenate([a - h, a + h]))
        cdf = np.clip((br[:, None] - a[None, :] + h) / (2 * h), 0, 1) @ w
        keep = np.concatenate([[True], np.diff(cdf) > 0])
        self._br, self._cdf = br[keep], cdf[keep]

    def cdf_at(self, lo: float, hi: float) -> tuple[float, float]:
        """``(P(X <= lo), P(X < hi))``: a record is on a bound when clipped (its uniform
        at most the first, or above the second)."""
        if self.smooth:
            return tuple(float(np.interp(t, self._br, self._cdf)) for t in (lo, hi))
        w, a = self.pop.weights, self.pop.atoms
        return float(w[a <= lo].sum()), float(w[a < hi].sum())

    def ppf(self, u: np.ndarray) -> np.ndarray:
        if self.smooth:
            return np.interp(u, self._cdf, self._br)
        return self.pop.atoms[np.minimum(np.searchsorted(self._cum, u), self.pop.atoms.size - 1)]


def _uniform_window(n: int, first: int, last: int, reps: int, rng) -> np.ndarray:
    """Uniform order statistics U_(first..last) of n draws (exact: a beta, then spacings)."""
    start = rng.beta(first, n - first + 1, size=reps)
    if last == first:
        return start[:, None]
    steps = np.log(rng.random((reps, last - first))) / (n - np.arange(first, last))[None, :]
    tail = -np.expm1(np.log1p(-start)[:, None] + np.cumsum(steps, axis=1))
    return np.concatenate([start[:, None], tail], axis=1)


@dataclass
class EndLaw:
    """The staircase law of an end released at rank k, for a batch of windows: its
    sub-pieces' first lattice index, length and probability per index (one row per window).
    Queries run ``ROWS`` windows at a time (in cache)."""

    start: np.ndarray
    length: np.ndarray
    density: np.ndarray

    def cdf(self, t: np.ndarray) -> np.ndarray:
        """P(index <= t), t of shape (reps,)."""
        t = np.asarray(t, dtype=float)
        out = np.empty(t.size)
        for i in range(0, t.size, ROWS):
            rows = slice(i, i + ROWS)
            cnt = t[rows, None] - self.start[rows] + 1
            np.clip(cnt, 0, self.length[rows], out=cnt)
            out[rows] = np.einsum("ij,ij->i", self.density[rows], cnt)
        return out

    def mean(self) -> np.ndarray:
        mid = self.start + (self.length - 1) / 2
        return np.einsum("ij,ij,ij->i", self.density, self.length, mid)


#: windows per block of the batch laws
ROWS = 32


def end_law(win, first, n, k, levels, eps, grid) -> EndLaw:
    """The library's lattice staircase (privest.mechanisms.lattice_plm), vectorised over
    windows, ``ROWS`` at a time (the arrays have 4 levels + 2 columns: in cache, about 2.5
    times faster than all windows at once at eps 0.025, 4,130 levels)."""
    parts = [
        _end_law(win[i : i + ROWS], first, n, k, levels, eps, grid)
        for i in range(0, len(win), ROWS)
    ]
    return EndLaw(
        *(np.concatenate([getattr(p, a) for p in parts]) for a in ("start", "length", "density"))
    )


def _end_law(win, first, n, k, levels, eps, grid) -> EndLaw:
    from privest.mechanisms.lattice_plm import run_epsilon, stair_fraction

    lv = np.arange(levels)

    def order(r):
        inner = win[:, np.clip(r - first, 0, win.shape[1] - 1)]
        return np.where(r <= 0, grid.ka, np.where(r >= n + 1, grid.kb, inner))

    reps = win.shape[0]
    up = np.concatenate([order(k + lv), np.full((reps, 1), grid.kb)], axis=1)
    dn = np.concatenate([order(k - lv), np.full((reps, 1), grid.ka)], axis=1)
    ones = np.ones((reps, 1))
    length = np.concatenate([ones, np.diff(up, axis=1), -np.diff(dn, axis=1)], axis=1)
    level = np.concatenate([[0], np.arange(1, levels + 1), np.arange(1, levels + 1)])
    inner = np.concatenate([up[:, :1] - 1, up[:, :-1], dn[:, :-1]], axis=1)
    side = np.concatenate([[1], np.ones(levels), -np.ones(levels)])
    flat = np.floor(length * float(stair_fraction(eps)))
    e = float(run_epsilon(eps))
    # the level weights (down to about e^-31 at the truncation level: no underflow) times
    # the lengths
    weight = np.exp(np.concatenate([-e * level / 2, -e * (level + 1) / 2]))
    lens = np.concatenate([flat, length - flat], axis=1)
    prob = lens * weight[None, :]
    prob /= prob.sum(axis=1, keepdims=True)
    sides = np.concatenate([side, side])[None, :]
    inners = np.concatenate([inner, inner + side[None, :] * flat], axis=1)
    start = np.where(sides > 0, inners + 1, inners - lens)  # the lowest index of each run
    return EndLaw(start, lens, prob / np.maximum(lens, 1))


def _check_end(law: EndLaw, win, first, n, k, eps, bounds, grid, q_idx) -> None:
    """The batch law against the library's law.cdf on the first window."""
    from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
    from privest.mechanisms.profiles.lattice import order_window, profile_from_order_statistics
    from privest.mechanisms.profiles.reaches import rank_level

    level_q = rank_level(k, n)  # the library's level for an end at x_(k)
    mech = PiecewiseLaplace(
        "quantile",
        quantile=level_q,
        epsilon=eps,
        bounds=bounds,
        target="rank",
        resolution=grid.step if grid.step >= 1 else None,
    )
    _, f, last = order_window("quantile", level_q, n, mech.levels)
    mine = law.cdf(q_idx)
    for i in range(1):
        prof = profile_from_order_statistics(
            win[i, f - first : last - first + 1],
            "quantile",
            mech.grid,
            n=n,
            levels=mech.levels,
            quantile=level_q,
        )
        ref = float(mech.law_from_profile(prof).cdf(q_idx[i] * grid.step))
        if abs(ref - mine[i]) > 1e-9:
            raise AssertionError(f"batch law differs from the library's: {ref} vs {mine[i]}")


def quantile_cells(
    qp: Quantiles, kind: str, n: int, q: float, reps: int, rng, epsilons=EPSILONS
) -> list[dict]:
    """One row per epsilon of ``epsilons``: population / noise-only / non-private intervals
    of the q-quantile (q = 0.5: the median's). The ends' ranks depend on the released counts of
    records on the bounds, so each sample gets its own plan (the library's rule), and the
    samples are grouped by plan. On the data's own lattice (``ties``) the library's ends hold
    for any data and release no counts; the rule of the default lattice (the counts and the
    model's ranks) runs on the same samples beside it (``model_*`` columns), and the counts
    are drawn on every row so that the samples do not depend on the rule."""
    from privest.mechanisms.lattice_plm import truncation_levels
    from privest.mechanisms.profiles.lattice import LatticeGrid
    from privest.mechanisms.profiles.reaches import quantile_target

    bounds = qp.pop.wide if kind != "clip" else qp.pop.clip
    lo, hi = bounds
    grid = LatticeGrid.for_bounds(lo, hi, None if qp.smooth else 1.0)
    raw = float(qp.ppf(np.array([q]))[0])
    target = min(max(raw, lo), hi)  # the clipped distribution's quantile
    centre = quantile_target(q, n) / 2  # the point's target rank, as the library's
    b = np.arange(n + 1)
    sf = stats.binom.sf(b - 1, n, q)  # P(B >= b)
    np_low = int(b[sf >= 1 - ALPHA / 2].max()) if (sf >= 1 - ALPHA / 2).any() else 0
    np_high = int(b[stats.binom.cdf(b - 1, n, q) >= 1 - ALPHA / 2].min())
    points = None if qp.smooth else grid.kb - grid.ka + 1
    # the order-statistic interval's exact coverage, P(np_low <= B < np_high) for B the
    # records at most the quantile, Binomial(n, q), where the population is continuous there
    smooth_inside = qp.smooth and lo < raw < hi
    np_exact = float(sf[np_low] - sf[np_high]) if smooth_inside else math.nan
    rows = []
    for eps in epsilons:
        split = plan_split("quantile", eps, "population", points is not None)
        counts = plan_split("quantile", eps, "population")["bound counts"]
        ranks = _candidate_ranks(n, q, split["ends"], centre, points) + [np_low, np_high]
        if points is None:
            ranks += _outward_ranks(qp, bounds, n, q, split["ends"], counts, ranks)
        ranks = [r for r in ranks if 1 <= r <= n] or [1]
        top = truncation_levels(split["ends"] / 2, grid.kb - grid.ka + 1)
        first, last = max(1, min(ranks) - top), min(n, max(ranks) + top)
        u = _uniform_window(n, first, last, reps, rng)
        tied = _released_ties(qp, u, first, last, n, q, bounds, counts, rng)
        win = grid.snap(np.clip(qp.ppf(u), lo, hi)).astype(np.int64)
        truth = np.full(reps, target)
        k0 = (math.floor(centre), math.ceil(centre))
        own = 0.5 * sum(win[:, min(max(k, first), last) - first] for k in k0) * grid.step
        res = {}
        args = (n, q, split["ends"], centre, tied, win, first, grid, bounds, truth, own, target)
        for how in ("population", "noise"):
            res[how] = _planned_cover(how, *args, points)
        model = _planned_cover("population", *args, None) if points else [np.nan] * 2
        at_bound = res["population"][3].mean(axis=0)  # the share of samples per end
        npl = win[:, np_low - first] * grid.step if np_low >= 1 else np.full(reps, lo)
        nph = win[:, np_high - first] * grid.step if np_high <= n else np.full(reps, hi)
        npcov, npw = _cover(npl, nph, target)
        cover, width = res["population"][:2]
        paired = cover - ((npl <= target) & (target <= nph))  # the control variate's residual
        rows.append(
            _row(
                statistic="median" if q == 0.5 else f"quantile {q:g}",
                data=qp.pop.name,
                bounds=kind,
                n=n,
                epsilon=eps,
                coverage=float(np.mean(cover)),
                coverage_se=float(np.std(cover) / math.sqrt(reps)),
                width=float(np.mean(width)),
                nonprivate_coverage=npcov,
                nonprivate_width=npw,
                nonprivate_exact=np_exact,
                paired_coverage=np_exact + _mean(paired),
                paired_se=float(np.std(paired) / math.sqrt(reps)),
                noise_coverage=_mean(res["noise"][0]),
                noise_width=_mean(res["noise"][1]),
                noise_own_coverage=_mean(res["noise"][2]),
                model_coverage=_mean(model[0]),
                model_coverage_se=float(np.std(model[0]) / math.sqrt(reps)),
                model_width=_mean(model[1]),
                lower_at_bound=float(at_bound[0]),
                upper_at_bound=float(at_bound[1]),
                note="" if lo < raw < hi else "the quantile lies outside the bounds",
            )
        )
    return rows


def _candidate_ranks(n, q, ends, centre, points) -> list[int]:
    """Every rank a plan may aim an end at: both ends at half and at all of ``ends``, by the
    model's rule and (``points``: the data's own lattice) the rule for any data."""
    from privest.intervals.ranks import endpoint_ranks

    out = []
    for how in ("population", "noise"):
        for e, level in ((ends / 2, 1 - ALPHA / 2), (ends, 1 - ALPHA)):
            for pts in {None, points}:
                out += endpoint_ranks(n, q, e, level, kind=how, center=centre, points=pts)
    return list(out)


def _outward_ranks(qp, bounds, n, q, ends, counts, ranks) -> list[int]:
    """The furthest ranks an end moved outward past the far side's released count
    (``privest.intervals.ranks.outward``) can reach in practice: the count's mean plus
    six binomial SDs plus its noise's 1e-6 quantile, for the window of order statistics."""
    from privest.intervals.ranks import EDGE_TAIL, count_shares, rank_noise_cdf
    from privest.models.statistics import statistic_mechanism

    u_lo, u_hi = qp.cdf_at(*bounds)
    out = []
    for mean, share, side in zip(
        (n * u_lo, n * (1 - u_hi)), count_shares(q), (+1, -1), strict=True
    ):
        p = float(
            statistic_mechanism("count", epsilon=counts * share, mechanism="discrete_laplace", n=n)
            .noise_law(n)
            .p
        )
        far = mean + 6 * math.sqrt(mean + 1) + math.log(1e-6) / math.log(p)
        for e in (ends / 2, ends):
            d = np.arange(n + 1, dtype=float)
            reach = int(np.argmax(1.0 - rank_noise_cdf(d, e) <= EDGE_TAIL / n))
            k = math.ceil(far) + 1 + reach if side > 0 else n - math.ceil(far) - reach
            if 1 <= k <= n and (k > max(ranks) if side > 0 else k < min(ranks)):
                out.append(k)
    return out


def _released_ties(qp, u, first, last, n, q, bounds, epsilon, rng) -> np.ndarray:
    """Per sample, the library's upper bounds of the records on each bound from the
    released counts (the sample's counts: the window's uniforms, and binomial draws for the
    records outside it given its edges; then the discrete Laplace noise), and the released
    counts: shape (reps, 4)."""
    from privest.intervals.ranks import count_shares, tied_upper
    from privest.models.statistics import statistic_mechanism

    lo, hi = bounds
    u_lo, u_hi = qp.cdf_at(lo, hi)  # P(X <= lo), P(X < hi)
    below = np.where(
        u[:, 0] <= u_lo, first - 1, rng.binomial(first - 1, np.minimum(1, u_lo / u[:, 0]))
    )
    gap = np.clip((1 - u_hi) / np.maximum(1 - u[:, -1], 1e-300), 0, 1)
    above = np.where(u[:, -1] > u_hi, n - last, rng.binomial(n - last, gap))
    counts = (below + np.sum(u <= u_lo, axis=1), above + np.sum(u > u_hi, axis=1))
    out = np.empty((u.shape[0], 4), dtype=np.int64)  # upper bounds, then released counts
    for j, (c, share) in enumerate(zip(counts, count_shares(q), strict=True)):
        mech = statistic_mechanism(
            "count", epsilon=epsilon * share, mechanism="discrete_laplace", n=n
        )
        p = float(mech.noise_law(n).p)
        g = rng.geometric(1 - p, size=(2, c.size)) - 1
        released = np.clip(c + g[0] - g[1], 0, n)
        out[:, j] = [tied_upper(float(v), p, n, ALPHA) for v in released]
        out[:, j + 2] = released
    return out


def _planned_cover(
    how, n, q, ends, centre, tied, win, first, grid, bounds, truth, own, target, points
):
    """(coverage of the truth, width, coverage of the data's own value, whether each end
    is its bound: shape (reps, 2)) per sample, each sample's ends planned from its ties
    (:func:`privest.intervals.ranks.endpoint_plan`; ``points``: for any data, the ties
    unused)."""
    from privest.intervals.ranks import endpoint_plan

    reps = win.shape[0]
    cover, width, own_cover = np.empty(reps), np.empty(reps), np.empty(reps)
    at_bound = np.empty((reps, 2), dtype=bool)
    keys, inverse = np.unique(tied, axis=0, return_inverse=True)
    plans = [
        endpoint_plan(n, q, ends, ALPHA, how, centre, tuple(k[:2]), tuple(k[2:]), points)
        for k in keys.tolist()
    ]
    groups: dict = {}
    for i, pl in enumerate(plans):
        groups.setdefault(pl, []).append(i)
    for pl, idx in groups.items():
        rows = np.flatnonzero(np.isin(inverse.ravel(), idx))
        check_at = np.full(rows.size, math.floor(target / grid.step + 1e-9))
        laws = _end_laws(pl, win[rows], first, n, grid, bounds, check_at)
        cover[rows] = _point_cover(laws, truth[rows], grid, bounds)
        width[rows] = _width(laws, grid, bounds, rows.size)
        own_cover[rows] = _point_cover(laws, own[rows], grid, bounds)
        at_bound[rows] = (pl.lower_rank is None, pl.upper_rank is None)
    return cover, width, own_cover, at_bound


def _end_laws(plan, win, first, n, grid, bounds, check_at):
    """The batch laws of the planned ends (None where the end is the bound)."""
    from privest.mechanisms.lattice_plm import truncation_levels

    laws = []
    for rank, e in ((plan.lower_rank, plan.lower_epsilon), (plan.upper_rank, plan.upper_epsilon)):
        if rank is None:
            laws.append(None)
            continue
        levels = truncation_levels(e, grid.kb - grid.ka + 1)
        law = end_law(win, first, n, rank, levels, e, grid)
        _check_end(law, win, first, n, rank, e, bounds, grid, check_at)
        laws.append(law)
    return laws


def _point_cover(laws, point, grid, bounds) -> np.ndarray:
    """P(min(L, U) <= point <= max(L, U)) given each window (L, U independent), exactly;
    ``point`` in value units (one per window)."""
    t_lo = np.floor(point / grid.step + 1e-9)
    t_hi = np.ceil(point / grid.step - 1e-9)
    same = np.array_equal(t_hi - 1, t_lo)  # off the lattice: one cdf per end

    def tails(law, bound):  # (P(end <= point), P(end >= point))
        if law is None:
            return (point >= bound).astype(float), (point <= bound).astype(float)
        below = law.cdf(t_lo)
        return below, 1 - (below if same else law.cdf(t_hi - 1))

    (fl, gl), (fu, gu) = tails(laws[0], bounds[0]), tails(laws[1], bounds[1])
    at_l, at_u = np.clip(fl + gl - 1, 0, 1), np.clip(fu + gu - 1, 0, 1)
    return np.clip(fl * gu + fu * gl - at_l * at_u, 0, 1)


def _width(laws, grid, bounds, reps) -> np.ndarray:
    """The distance between the means of the ends' laws, given each window."""
    low, high = laws
    ml = np.full(reps, bounds[0]) if low is None else low.mean() * grid.step
    mu = np.full(reps, bounds[1]) if high is None else high.mean() * grid.step
    return np.abs(mu - ml)


# -- driver ---------------------------------------------------------------------------------
PARTS = ("moments", "counts", "quantiles")


def run(
    part: str,
    reps: int,
    n_grid,
    rng,
    rows_of: str | None = None,
    data: str | None = None,
    only: dict | None = None,
) -> pd.DataFrame:
    """One part's table; ``rows_of`` ("smooth", "ties"), ``data`` (a data set's name): only
    those quantile populations; ``only``: the quantile cells' ``q``, ``bounds`` and
    ``epsilons`` (None: all)."""
    only = {k: v for k, v in (only or {}).items() if v}
    rows: list[dict] = []
    pops = populations()
    t0 = time.perf_counter()
    if part == "moments":
        for pop in pops:
            for kind in ("wide", "clip"):
                for n in n_grid:
                    rows += moment_cells(pop, kind, n, reps, rng)
                    print(f"{pop.name} {kind} n={n}: {time.perf_counter() - t0:.0f} s", flush=True)
    elif part == "counts":
        for name, p in proportions().items():
            for n in n_grid:
                rows += count_cells(name, p, n, reps, rng)
                print(f"{name} n={n}: {time.perf_counter() - t0:.0f} s", flush=True)
    else:
        cases = [(Quantiles(pop, True), kind) for pop in pops for kind in ("wide", "clip")]
        cases += [(Quantiles(p, False), "ties") for p in pops if p.name in ("diabetes", "wine")]
        cases = [c for c in cases if (c[1] == "ties") == (rows_of == "ties") or not rows_of]
        cases = [c for c in cases if data in (None, c[0].pop.name)]
        cases = [c for c in cases if c[1] in only.get("bounds", (c[1],))]
        for qp, kind in cases:
            for q in only.get("q", (0.5, 0.1, 0.9)):
                for n in n_grid:
                    eps = only.get("epsilons", EPSILONS)
                    rows += quantile_cells(qp, kind, n, q, reps, rng, eps)
                    print(
                        f"{qp.pop.name} {kind} q={q} n={n}: {time.perf_counter() - t0:.0f} s",
                        flush=True,
                    )
    return pd.DataFrame(rows)


def _cell(r) -> str:
    ratio = r.width / r.nonprivate_width if r.nonprivate_width > 0 else math.inf
    flag = " *" if isinstance(r.get("note"), str) and r.note else ""
    return f"{r.coverage:.3f} ({ratio:.2f}x){flag}"


def grid_tables(table: pd.DataFrame) -> str:
    """The docs' compact tables: per statistic, n by epsilon, each cell the lowest coverage
    over the populations / the median width over the non-private interval's / the lowest
    noise-only coverage; cells whose quantile lies outside the bounds (``note``) are left
    out and listed below the table."""
    out = []
    for stat, part in table.groupby("statistic", sort=False):
        noted = part.note.fillna("").astype(bool) if "note" in part else part.n < 0
        kept = part[~noted]
        inside = int(kept.coverage.between(0.935, 0.975).sum())
        out += [
            f"**{stat}** ({inside} of {len(kept)} cells in [0.935, 0.975]; "
            f"{kept[['data', 'bounds']].drop_duplicates().shape[0]} populations)",
            "",
            "| n | " + " | ".join(f"eps {e:g}" for e in EPSILONS) + " |",
            "|---|" + "---|" * len(EPSILONS),
        ]
        for n, rows in kept.groupby("n"):
            cells = []
            for e in EPSILONS:
                c = rows[rows.epsilon == e]
                ratio = float(np.median(c.width / c.nonprivate_width))
                cells.append(
                    f"{c.coverage.min():.3f} / {ratio:.2f}x / {c.noise_coverage.min():.2f}"
                )
            out.append(f"| {n:,} | " + " | ".join(cells) + " |")
        for _, r in part[noted].iterrows():
            out.append(f"* {r.data}, {r.bounds}, n = {r.n:,}, eps {r.epsilon:g}: {r.coverage:.3f}")
        out.append("")
    return "\n".join(out)


def markdown(table: pd.DataFrame) -> str:
    """The docs' tables: the summary, then per statistic the coverage (and the width over
    the non-private interval's) by data, bounds and n across epsilon."""
    out = ["| statistic | cells | in [0.935, 0.975] | lowest | highest |", "|---|---|---|---|---|"]
    for _, r in summary(table).iterrows():
        out.append(
            f"| {r.statistic} | {r.cells} | {r['in [0.935, 0.975]']} | {r.lowest} | {r.highest} |"
        )
    for stat, part in table.groupby("statistic", sort=False):
        out += [
            "",
            f"#### {stat}",
            "",
            "| data | bounds | n | " + " | ".join(f"eps {e:g}" for e in EPSILONS) + " |",
            "|---|---|---|" + "---|" * len(EPSILONS),
        ]
        for (data, bounds, n), rows in part.groupby(["data", "bounds", "n"], sort=False):
            cells = [_cell(rows[rows.epsilon == e].iloc[0]) for e in EPSILONS]
            out.append(f"| {data} | {bounds} | {n:,} | " + " | ".join(cells) + " |")
    mid = table[(table.n == 10_000) & (table.epsilon == 1.0) & (table.bounds != "clip")]
    out += [
        "",
        "#### Widths at n = 10,000, epsilon 1",
        "",
        "| statistic | data | private | non-private | noise-only | noise-only coverage |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in mid.iterrows():
        out.append(
            f"| {r.statistic} | {r.data} ({r.bounds}) | {r.width:.4g} | "
            f"{r.nonprivate_width:.4g} | {r.noise_width:.4g} | {r.noise_coverage:.3f} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="n up to 10^4, 200 releases")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    ap.add_argument("--out", default="bench-output", help="folder for the CSVs")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--tables", action="store_true", help="print the docs' tables from --out")
    ap.add_argument("--rows", choices=("smooth", "ties"), help="only these quantile populations")
    ap.add_argument("--data", help="only this data set's quantile populations")
    ap.add_argument("--n", type=int, nargs="+", help="these n only (default: 100 to 10^5)")
    ap.add_argument("--q", type=float, nargs="+", help="only these quantiles (0.5, 0.1, 0.9)")
    ap.add_argument("--bounds", nargs="+", choices=("wide", "clip", "ties"), help="quantile rows")
    ap.add_argument("--epsilons", type=float, nargs="+", help="the quantile cells' epsilons")
    args = ap.parse_args(argv)
    if args.tables:
        files = [Path(args.out) / f"central_inference_{p}.csv" for p in args.parts]
        table = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
        print(markdown(table), grid_tables(table), sep="\n\n")
        return
    reps = 200 if args.quick else args.reps
    n_grid = args.n or (N_GRID[:3] if args.quick else N_GRID)
    only = {"q": args.q, "bounds": args.bounds, "epsilons": args.epsilons}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for part in args.parts:
        rng = np.random.default_rng([args.seed, PARTS.index(part)])
        table = run(part, reps, n_grid, rng, args.rows, args.data, only)
        table.to_csv(out / f"central_inference_{part}.csv", index=False)
        print(summary(table).to_string())


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per statistic: the worst cells' coverage and the width ratio at n = 10^4, eps = 1."""
    out = []
    for stat, part in table.groupby("statistic", sort=False):
        low = part.loc[part.coverage.idxmin()]
        high = part.loc[part.coverage.idxmax()]

        def where(r):
            return f"{r.coverage:.3f} ({r.data}, {r.bounds}, n={r.n}, eps={r.epsilon:g})"

        mid = part[(part.n == 10_000) & (part.epsilon == 1.0)]
        out.append(
            {
                "statistic": stat,
                "cells": len(part),
                "in [0.935, 0.975]": int(part.coverage.between(0.935, 0.975).sum()),
                "lowest": where(low),
                "highest": where(high),
                "width / non-private at n=1e4, eps=1": ", ".join(
                    f"{w:.2f}" for w in (mid.width / mid.nonprivate_width)
                ),
            }
        )
    return pd.DataFrame(out)


if __name__ == "__main__":
    main()

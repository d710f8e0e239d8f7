"""Tests statisticians run, on private releases (docs/central-inference.md, "Tests").

* :func:`mean_test`: one-sample test of a mean, H0 ``mu = value``;
* :func:`mean_diff_test`: two independent samples, H0 ``mu_x - mu_y = value``;
* :func:`proportion_test`: one proportion, H0 ``p = value``;
* :func:`proportion_diff_test`: two proportions, H0 ``p_x = p_y``.

Each returns a :class:`PrivateTestResult` (``statistic``, ``pvalue``, the estimate, its
interval, the guarantee). The null distribution is the exact law of what was released,
never a normal approximation of the noise: for means the sampling error (normal, its
variance evaluated under the null and integrated over the private spread's fiducial law)
convolved with the exact Laplace noise (:mod:`privest.intervals.laws`); for one proportion
the exact binomial convolved with the discrete Laplace noise (mid-p,
:mod:`privest.intervals.counts`); for two proportions, whose null leaves the common
proportion unknown, a parametric bootstrap at its pooled private estimate (20,000 draws of
binomials plus the exact noise; Ferrando, Wang and Sheldon, AISTATS 2022; the
simulation-calibrated tests of Awan and Wang's repro samples), deterministic for a given
release. A released mean is clamped into its bounds, which puts an atom at each bound:
the one-sample test's null law is that clamped law, the two-sample test's the exact law of
the difference of the two clamped releases (both atoms of each), and the two-sided p-value
is the exact law of the smaller tail on it (not twice the smaller tail, which halves the
size where the noise reaches a bound). Type I errors at n = 100 .. 10^4 and epsilon
0.1 .. 4 are measured in benchmarks/bench_private_tests.py.

Two samples must hold disjoint records (no person in both): the two releases then compose
in parallel and the guarantee is epsilon per record, charged once. If a person may appear in
both, the guarantee is 2 epsilon: pass half the epsilon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from privest.accounting.base import ApproxDP, Guarantee
from privest.accounting.budget import Budget, charge
from privest.errors import ValidationError
from privest.intervals.counts import count_interval, count_pvalue
from privest.intervals.laws import (
    clamped_diff_tails,
    error_cdf,
    laplace_nodes,
    mixture_cdf,
)
from privest.intervals.laws import pvalue as law_pvalue
from privest.intervals.results import Interval, MomentInference, check_alpha
from privest.released import PrivateStatistic
from privest.rng import resolve_rng

__all__ = [
    "ALTERNATIVES",
    "PrivateTestResult",
    "mean_diff_pvalue",
    "mean_diff_test",
    "mean_pvalue",
    "mean_test",
    "proportion_diff_pvalue",
    "proportion_diff_test",
    "proportion_test",
]

ALTERNATIVES: tuple[str, ...] = ("two-sided", "larger", "smaller")
#: draws of the parametric bootstrap of the two-proportion test's null
BOOTSTRAP_DRAWS = 20_000
#: nuisance nodes per sample in the two-sample mean test (their pairs: 64 nodes)
_PAIR_NODES = 8
#: a bound's atom below which a release's clamping is ignored (the laws differ by less)
_NEGLIGIBLE_ATOM = 1e-10
#: releases per batch of the clamped difference's law (memory: 256 cells x 8 nodes each)
_DIFF_BATCH = 128


@dataclass(frozen=True)
class PrivateTestResult:
    """A test on private releases: ``statistic`` (the estimate standardised under the
    null), ``pvalue``, ``estimate`` (of the tested quantity), ``null`` (its value under H0),
    ``interval`` (its ``1 - alpha`` interval), ``alternative``, ``method`` (how the null
    law was obtained), ``guarantee`` and the ``releases`` it used."""

    test: str
    statistic: float
    pvalue: float
    estimate: float
    null: float
    alternative: str
    interval: Interval
    alpha: float
    method: str
    guarantee: Guarantee
    releases: tuple[PrivateStatistic, ...] = field(default=(), repr=False)

    def summary(self) -> str:
        """The test in a few lines."""
        return "\n".join(
            [
                f"{self.test}: estimate {self.estimate:.6g} (null {self.null:g}, "
                f"{self.alternative})",
                f"  statistic {self.statistic:.4g}, p-value {self.pvalue:.4g}",
                f"  {1 - self.alpha:.0%} interval [{self.interval.lower:.6g}, "
                f"{self.interval.upper:.6g}]",
                f"  null law: {self.method}",
                f"  privacy: {self.guarantee}",
            ]
        )


def _alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValidationError(
            f"alternative: {alternative!r} is not one of {', '.join(map(repr, ALTERNATIVES))}"
        )
    return alternative


def _z_pvalue(z: np.ndarray, alternative: str) -> np.ndarray:
    if alternative == "larger":
        return stats.norm.sf(z)
    if alternative == "smaller":
        return stats.norm.cdf(z)
    return 2 * stats.norm.sf(np.abs(z))


# -- means ---------------------------------------------------------------------------------
def mean_pvalue(inf: MomentInference, value: Any, alternative: str = "two-sided") -> tuple:
    """``(statistic, pvalue)`` of H0 ``mu = value`` from a mean's (or a sum's, on the mean
    scale) population inference; vectorised over a batch of releases."""
    theta = np.broadcast_to(np.asarray(value, dtype=float), np.shape(inf.work))
    if alternative == "two-sided":
        p = _clamped_two_sided(inf, theta)
    else:
        p = law_pvalue(inf.work, theta, inf.sd_at, (inf.scale,), alternative)
    sd = np.sqrt(np.mean(inf.sd_at(theta) ** 2, axis=-1) + 2 * inf.scale**2)
    return (inf.work - theta) / sd, p


def _clamped_two_sided(inf: MomentInference, theta: np.ndarray) -> np.ndarray:
    """Two-sided p-value of a release clamped into ``[lo, hi]`` (:func:`_smaller_tail`)."""
    sd, scales = inf.sd_at(theta), (inf.scale,)
    below = mixture_cdf(inf.work - theta, sd, scales)
    low_atom = mixture_cdf(inf.lo - theta, sd, scales)
    high_atom = 1.0 - mixture_cdf(inf.hi - theta, sd, scales)
    return _smaller_tail(below, 1.0 - below, low_atom, high_atom)


def _smaller_tail(below, above, low_atom, high_atom) -> np.ndarray:
    """``P(T <= t)`` for the smaller tail ``T = min(P(M <= m), P(M >= m))`` of a statistic
    ``m`` (tails ``below``, ``above`` under the null law) whose law has an atom at its
    least and greatest values (masses ``low_atom``, ``high_atom``): the exact p-value of
    that statistic. No outcome's lower tail is below ``low_atom``, so a tail ``t`` smaller
    than it can only be reached on the upper side and counts once, not twice. Where the
    atoms are negligible this is the doubled tail; doubling there would make the test
    conservative (size alpha / 2 once an atom exceeds alpha / 2; docs/central-inference.md,
    "The tests' size and power, measured")."""
    t = np.minimum(below, above)
    sides = (t >= low_atom).astype(float) + (t >= high_atom)
    return np.minimum(1.0, t * sides)


def _node_sd(inf: MomentInference, t: Any) -> np.ndarray:
    """Sampling sds of one mean at candidate means ``t``: the nuisance nodes (last axis)."""
    q = laplace_nodes(inf.spread_scale, _PAIR_NODES)
    spread = np.asarray(inf.spread, dtype=float)[..., None]
    centre = np.asarray(inf.centre, dtype=float)[..., None]
    t = np.asarray(t, dtype=float)[..., None]
    return np.sqrt(np.clip(spread - q - (t - centre) ** 2, 0.0, inf.spread_cap) / inf.n)


def _pair_sd(ix: MomentInference, iy: MomentInference, tx: Any, ty: Any) -> np.ndarray:
    """Sampling sds of ``mean_x - mean_y`` at candidate means: the pairs of nuisance nodes."""
    vx, vy = np.square(_node_sd(ix, tx)), np.square(_node_sd(iy, ty))
    both = vx[..., :, None] + vy[..., None, :]
    return np.sqrt(both.reshape(*both.shape[:-2], -1))


def _null_means(ix: MomentInference, iy: MomentInference, delta: np.ndarray) -> tuple:
    """The means closest to the releases whose difference is ``delta``: where the null's
    sampling variances are evaluated. The weights are the error variances with one pooled
    per-record variance for both samples (plus each release's noise variance): a sample's
    own variance would move the null means towards the sample with the smaller one, and
    with the variance model's slope in theta (``spread - (theta - centre)^2``) lower the
    null variance where skewed data make the larger mean come with the larger variance
    (breast_cancer's skewed column, n = 100, epsilon 2: size 0.073, the Welch z test's
    0.060 on the same samples; docs/central-inference.md, "The tests' size and power,
    measured")."""
    nx, ny = ix.n, iy.n
    noise_x, noise_y = 2 * ix.scale**2, 2 * iy.scale**2
    pooled = (nx**2 * (np.square(ix.bse) - noise_x) + ny**2 * (np.square(iy.bse) - noise_y)) / (
        nx + ny
    )
    wx, wy = pooled / nx + noise_x, pooled / ny + noise_y
    gap = (ix.work - iy.work - delta) / (wx + wy)
    tx = np.clip(ix.work - wx * gap, ix.lo, ix.hi)
    ty = np.clip(iy.work + wy * gap, iy.lo, iy.hi)
    return tx, ty


def mean_diff_pvalue(
    ix: MomentInference, iy: MomentInference, value: Any = 0.0, alternative: str = "two-sided"
) -> tuple:
    """``(statistic, pvalue)`` of H0 ``mu_x - mu_y = value`` from two independent means'
    population inferences (vectorised): the exact law of the difference of the two clamped
    releases at the null's means (:func:`_clamped_diff_tails`), whose sampling errors are
    normal (variances at those means, integrated over both spreads' fiducial laws) and
    whose noises are Laplace; the two-sided p-value is that of the smaller tail
    (:func:`_smaller_tail`)."""
    d = ix.work - iy.work
    delta = np.broadcast_to(np.asarray(value, dtype=float), np.shape(d))
    tx, ty = _null_means(ix, iy, delta)
    below, above, low_atom, high_atom = _clamped_diff_tails(ix, iy, d, tx, ty)
    if alternative == "larger":
        p = above
    elif alternative == "smaller":
        p = below
    else:
        p = _smaller_tail(below, above, low_atom, high_atom)
    sd = _pair_sd(ix, iy, tx, ty)
    se = np.sqrt(np.mean(sd**2, axis=-1) + 2 * ix.scale**2 + 2 * iy.scale**2)
    return (d - delta) / se, p


def _atoms(inf: MomentInference, t: np.ndarray, sd: np.ndarray) -> tuple:
    """The masses of a release's atoms at its two bounds under the law at ``t``."""
    low = mixture_cdf(inf.lo - t, sd, (inf.scale,))
    return low, 1.0 - mixture_cdf(inf.hi - t, sd, (inf.scale,))


def _clamped_diff_tails(ix: MomentInference, iy: MomentInference, d, tx, ty) -> tuple:
    """``P(D <= d)``, ``P(D >= d)`` and the masses of ``D``'s least and greatest values, for
    ``D`` the difference of the two clamped releases at the null's means ``tx``, ``ty``.

    Where every bound's atom is below ``_NEGLIGIBLE_ATOM`` the clamped law differs from the
    unclamped one by less than that mass, and the unclamped law is exact in closed form
    (the normal plus two Laplace terms, over the pairs of nuisance nodes); elsewhere
    :func:`~privest.intervals.laws.clamped_diff_tails`, in batches of releases."""
    d, tx, ty = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (d, tx, ty)))
    sdx, sdy = _node_sd(ix, tx), _node_sd(iy, ty)
    (lo_x, hi_x), (lo_y, hi_y) = _atoms(ix, tx, sdx), _atoms(iy, ty, sdy)
    sd = _pair_sd(ix, iy, tx, ty)
    scales = (np.full(d.shape, ix.scale)[..., None], np.full(d.shape, iy.scale)[..., None])
    below = np.mean(error_cdf((d - (tx - ty))[..., None], sd, scales), axis=-1)
    above = 1.0 - below
    clamped = np.maximum.reduce([lo_x, hi_x, lo_y, hi_y]) > _NEGLIGIBLE_ATOM
    if clamped.any():
        idx = np.flatnonzero(clamped)
        flat = [np.reshape(v, (d.size, *np.shape(v)[d.ndim :])) for v in (d, tx, ty, sdx, sdy)]
        below, above = below.reshape(-1).copy(), above.reshape(-1).copy()
        for chunk in np.array_split(idx, max(1, idx.size // _DIFF_BATCH)):
            dd, ax, ay, sx, sy = (v[chunk] for v in flat)
            below[chunk], above[chunk] = clamped_diff_tails(
                dd, (ax, sx, ix.scale, ix.lo, ix.hi), (ay, sy, iy.scale, iy.lo, iy.hi)
            )
        below, above = below.reshape(d.shape), above.reshape(d.shape)
    return below, above, lo_x * hi_y, hi_x * lo_y


def _mover(est: float, a: Interval, b: Interval, ea: float, eb: float) -> Interval:
    """MOVER interval of ``A - B`` from intervals of A and B (Zou and Donner 2008;
    Newcombe 1998 for proportions)."""
    low = est - math.hypot(ea - a.lower, b.upper - eb)
    high = est + math.hypot(a.upper - ea, eb - b.lower)
    return Interval(low, high)


def _charge_once(budget: Budget | None, epsilon: float, label: str) -> Guarantee:
    guarantee = ApproxDP(epsilon)
    charge(budget, guarantee, label=label, mechanism="auto")
    return guarantee


def mean_test(
    x: Any,
    value: float = 0.0,
    *,
    epsilon: float,
    bounds: Any = None,
    alternative: str = "two-sided",
    alpha: float = 0.05,
    clip: bool = False,
    rng: np.random.Generator | int | None = None,
    budget: Budget | None = None,
    domain: Any = None,
) -> PrivateTestResult:
    """One-sample test of the population mean (of the distribution clipped to ``bounds``),
    H0 ``mu = value``: a :func:`~privest.private_mean` release with its population
    inference (module docstring)."""
    from privest.models.statistics import private_mean

    alt = _alternative(alternative)
    rel = private_mean(
        x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, budget=budget, domain=domain
    )
    z, p = mean_pvalue(rel.interval, value, alt)
    return PrivateTestResult(
        "one-sample mean test",
        float(z),
        float(p),
        float(rel),
        float(value),
        alt,
        rel.conf_int(alpha),
        check_alpha(alpha),
        "normal sampling error (variance at the null) + exact Laplace noise",
        rel.guarantee,
        (rel,),
    )


def mean_diff_test(
    x: Any,
    y: Any,
    value: float = 0.0,
    *,
    epsilon: float,
    bounds: Any = None,
    alternative: str = "two-sided",
    alpha: float = 0.05,
    clip: bool = False,
    rng: np.random.Generator | int | None = None,
    budget: Budget | None = None,
) -> PrivateTestResult:
    """Two-sample test of H0 ``mu_x - mu_y = value`` for disjoint samples ``x``, ``y`` in the
    same public ``bounds`` (module docstring); the interval is MOVER's from the two
    one-sample intervals."""
    from privest.models.statistics import private_mean

    alt = _alternative(alternative)
    gen = resolve_rng(rng)
    guarantee = _charge_once(budget, epsilon, "mean difference (two disjoint samples)")
    rx, ry = (private_mean(s, epsilon=epsilon, bounds=bounds, rng=gen, clip=clip) for s in (x, y))
    z, p = mean_diff_pvalue(rx.interval, ry.interval, value, alt)
    a = check_alpha(alpha)
    est = float(rx) - float(ry)
    ci = _mover(est, rx.conf_int(a), ry.conf_int(a), float(rx), float(ry))
    return PrivateTestResult(
        "two-sample mean difference test",
        float(z),
        float(p),
        est,
        float(value),
        alt,
        ci,
        a,
        "normal sampling error (variances at the null) + both exact Laplace noises",
        guarantee,
        (rx, ry),
    )


# -- proportions ---------------------------------------------------------------------------
def _count_release(x: Any, epsilon: float, where: Any, rng: Any, budget: Any) -> PrivateStatistic:
    from privest.models.statistics import private_count

    rel = private_count(x, epsilon=epsilon, where=where, rng=rng, budget=budget)
    if rel.n is None or rel.inference != "population":
        raise ValidationError("x: a proportion test needs the public n (swap neighbours)")
    return rel


def proportion_test(
    x: Any,
    value: float = 0.5,
    *,
    epsilon: float,
    where: Any = None,
    alternative: str = "two-sided",
    alpha: float = 0.05,
    rng: np.random.Generator | int | None = None,
    budget: Budget | None = None,
) -> PrivateTestResult:
    """Test of H0 ``p = value`` for the proportion of records in a set (0/1 indicators, or
    ``where(x)``): the exact mid-p test on the released count (module docstring)."""
    alt = _alternative(alternative)
    if not 0 < value < 1:
        raise ValidationError(f"value: {value!r} must be a proportion in (0, 1)")
    rel = _count_release(x, epsilon, where, rng, budget)
    inf, n = rel.interval, rel.n
    p = count_pvalue(float(rel), n, value, inf.r, alt)
    z = (float(rel) - n * value) / math.sqrt(n * value * (1 - value) + inf.noise_variance)
    a = check_alpha(alpha)
    low, high = count_interval(float(rel), n, inf.r, a)
    return PrivateTestResult(
        "one-proportion test",
        z,
        p,
        float(rel) / n,
        float(value),
        alt,
        Interval(low, high),
        a,
        "exact: binomial convolved with the discrete Laplace noise (mid-p)",
        rel.guarantee,
        (rel,),
    )


def _dlap(r: float, shape: tuple[int, ...], gen: np.random.Generator) -> np.ndarray:
    """Discrete Laplace draws: the difference of two geometric variables (ratio ``r``)."""
    if r <= 0:
        return np.zeros(shape)
    return (gen.geometric(1 - r, shape) - gen.geometric(1 - r, shape)).astype(float)


def _diff_z(cx, nx, vx, cy, ny, vy) -> np.ndarray:
    """The pooled z statistic of p_x - p_y from released counts (noise variances vx, vy)."""
    pool = np.clip((cx + cy) / (nx + ny), 0.5 / (nx + ny), 1 - 0.5 / (nx + ny))
    var = pool * (1 - pool) * (1 / nx + 1 / ny) + vx / nx**2 + vy / ny**2
    return (cx / nx - cy / ny) / np.sqrt(var)


def proportion_diff_pvalue(
    cx: Any, nx: int, rx: float, cy: Any, ny: int, ry: float, alternative: str = "two-sided"
) -> tuple:
    """``(statistic, pvalue)`` of H0 ``p_x = p_y`` from released counts ``cx``, ``cy``
    (discrete Laplace ratios ``rx``, ``ry``; vectorised): the pooled z statistic, its null
    law simulated at the pooled proportion (module docstring; a fixed internal seed, so the
    same releases give the same p-value). Memory grows as 20,000 x the batch: pass batches
    of at most a few hundred releases."""
    vx, vy = (2 * r / (1 - r) ** 2 for r in (rx, ry))
    cx, cy = np.asarray(cx, dtype=float), np.asarray(cy, dtype=float)
    z = _diff_z(cx, nx, vx, cy, ny, vy)
    pool = np.clip((cx + cy) / (nx + ny), 0.0, 1.0)
    gen = np.random.default_rng(20_270_001)
    shape = (BOOTSTRAP_DRAWS, *np.shape(z))
    sx = np.clip(gen.binomial(nx, pool, shape) + _dlap(rx, shape, gen), 0, nx)
    sy = np.clip(gen.binomial(ny, pool, shape) + _dlap(ry, shape, gen), 0, ny)
    zs = _diff_z(sx, nx, vx, sy, ny, vy)
    if alternative == "larger":
        p = np.mean(zs >= z, axis=0)
    elif alternative == "smaller":
        p = np.mean(zs <= z, axis=0)
    else:
        p = np.mean(np.abs(zs) >= np.abs(z), axis=0)
    return z, (p * BOOTSTRAP_DRAWS + 1) / (BOOTSTRAP_DRAWS + 1)


def proportion_diff_test(
    x: Any,
    y: Any,
    *,
    epsilon: float,
    where: Any = None,
    alternative: str = "two-sided",
    alpha: float = 0.05,
    rng: np.random.Generator | int | None = None,
    budget: Budget | None = None,
) -> PrivateTestResult:
    """Test of H0 ``p_x = p_y`` for disjoint samples (indicators, or ``where`` applied to
    each); the interval of ``p_x - p_y`` is MOVER's from the two mid-p intervals (Newcombe
    1998, method 10, with the noise inside each interval)."""
    alt = _alternative(alternative)
    gen = resolve_rng(rng)
    guarantee = _charge_once(budget, epsilon, "proportion difference (two disjoint samples)")
    rx, ry = (_count_release(s, epsilon, where, gen, None) for s in (x, y))
    nx, ny = rx.n, ry.n
    z, p = proportion_diff_pvalue(float(rx), nx, rx.interval.r, float(ry), ny, ry.interval.r, alt)
    a = check_alpha(alpha)
    px, py = float(rx) / nx, float(ry) / ny
    ix = Interval(*count_interval(float(rx), nx, rx.interval.r, a))
    iy = Interval(*count_interval(float(ry), ny, ry.interval.r, a))
    return PrivateTestResult(
        "two-proportion test",
        float(z),
        float(p),
        px - py,
        0.0,
        alt,
        _mover(px - py, ix, iy, px, py),
        a,
        f"parametric bootstrap at the pooled proportion ({BOOTSTRAP_DRAWS} draws, exact noise)",
        guarantee,
        (rx, ry),
    )

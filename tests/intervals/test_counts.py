"""Exact inference for private counts (privest.intervals.counts): the law of the clamped
release against a brute-force convolution, and the mid-p interval's coverage computed
exactly (no Monte Carlo: the sum over every possible release)."""

import math

import numpy as np
import pytest
from scipy import stats

from privest.intervals.counts import (
    count_interval,
    count_noise_halfwidth,
    count_pvalue,
    count_tails,
)


def _brute_pmf(n, p, r):
    top = 0 if r <= 0 else math.ceil(40 / -math.log(r))
    k = np.arange(-top, top + 1)
    pk = (1 - r) / (1 + r) * r ** np.abs(k) if r > 0 else (k == 0).astype(float)
    c = np.arange(n + 1)
    pm = stats.binom.pmf(c, n, p)
    out = np.zeros(n + 1)
    for kk, w in zip(k, pk, strict=True):
        np.add.at(out, np.clip(c + kk, 0, n), pm * w)
    return out


@pytest.mark.parametrize(
    "n,p,r",
    [
        (50, 0.3, math.exp(-0.5)),
        (30, 0.0, 0.5),
        (30, 1.0, 0.3),
        (40, 0.5, 0.0),
        (200, 0.05, math.exp(-0.1)),
    ],
)
def test_tails_are_the_convolution(n, p, r):
    pmf = _brute_pmf(n, p, r)
    below, at, above = count_tails(np.arange(n + 1), n, p, r)
    assert np.allclose(at, pmf, atol=1e-13)
    assert np.allclose(below, np.concatenate([[0], np.cumsum(pmf)[:-1]]), atol=1e-13)
    assert np.allclose(above, 1 - np.cumsum(pmf), atol=1e-13)


def _exact_coverage(n, p, eps, alpha=0.05):
    r = math.exp(-eps)
    pmf = _brute_pmf(n, p, r)
    low, high = count_interval(np.arange(n + 1.0), n, r, alpha)
    return float(np.sum(pmf * ((low <= p) & (p <= high))))


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_mid_p_interval_holds_its_level_on_average(eps):
    """Exact coverage at n = 100, averaged over p in a grid, within [0.935, 0.975] (mid-p
    holds the level on average; pointwise it oscillates with the lattice)."""
    n = 100
    grid = np.linspace(0.05, 0.95, 10)
    cov = np.array([_exact_coverage(n, p, eps) for p in grid])
    assert 0.935 <= cov.mean() <= 0.975
    assert cov.min() > 0.90


def test_clopper_pearson_is_the_conservative_control():
    """Control: with no noise and the plain (non-mid) exact test the coverage at n = 100 is
    above the mid-p one everywhere, i.e. the exact coverage check can tell them apart."""
    n, p = 100, 0.3
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    c = np.arange(n + 1)
    cp_low = np.where(c == 0, 0, stats.beta.ppf(0.025, c, n - c + 1))
    cp_high = np.where(c == n, 1, stats.beta.ppf(0.975, c + 1, n - c))
    cp = float(np.sum(pmf * ((cp_low <= p) & (p <= cp_high))))
    assert cp > _exact_coverage(n, p, 50.0)


def test_scalar_and_vector_agree_and_edges():
    r = math.exp(-1.0)
    lo, hi = count_interval(np.array([0.0, 37.0, 100.0]), 100, r, 0.05)
    assert lo[0] == 0.0 and hi[2] == 1.0
    assert count_interval(37.0, 100, r, 0.05) == pytest.approx((lo[1], hi[1]))
    assert 0 < count_pvalue(37.0, 100, 0.3, r) < 1
    assert count_pvalue(37.0, 100, 0.37, r) > count_pvalue(37.0, 100, 0.2, r)


def test_noise_halfwidth_is_the_least_with_enough_mass():
    r = math.exp(-0.5)
    a = count_noise_halfwidth(r, 0.05)
    tail = lambda t: 2 * r ** (t + 1) / (1 + r)  # noqa: E731
    assert tail(a) <= 0.05 < tail(a - 1)


def test_test_and_interval_are_dual_and_keep_their_size_at_a_clamped_end():
    """n p = 10 under noise of scale 10: the release piles up at 0, so the lower tail can
    never reject at alpha/2. The clamp-aware test gives the upper tail all of alpha: exact
    size near 0.05, and the interval is the set of proportions it accepts. Control: the
    plain two-sided mid-p test (twice the smaller tail) has half the size there."""
    n, p0, r = 100, 0.1, math.exp(-0.1)
    c = np.arange(n + 1.0)
    _, pmf, _ = count_tails(c, n, p0, r)
    pv = count_pvalue(c, n, p0, r)
    assert 0.04 <= float(np.sum(pmf * (pv <= 0.05))) <= 0.06
    low, high = count_interval(c, n, r, 0.05)
    inside = (low <= p0) & (p0 <= high)
    assert float(np.sum(pmf[inside == (pv <= 0.05)])) < 0.01  # dual up to the bisection
    below, at, above = count_tails(c, n, p0, r)
    plain = np.minimum(1, 2 * np.minimum(below + at / 2, above + at / 2))
    assert float(np.sum(pmf * (plain <= 0.05))) < 0.03

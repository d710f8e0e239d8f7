"""Baselines of paper 002's comparisons: PTR for the median, smooth sensitivity, grid INV."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privest.accounting.base import ApproxDP
from privest.audit import audit
from privest.mechanisms.approximate import ApproximatePiecewiseLaplaceLaw, RadiusBounds
from privest.mechanisms.inverse_sensitivity import GridInverseSensitivityLaw, InverseSensitivityLaw
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.mechanisms.profiles.reaches import median_profile, sorted_data
from privest.mechanisms.ptr_median import PTRMedianLaw, distance_to_instability
from privest.mechanisms.smooth_sensitivity import (
    SmoothSensitivityLaw,
    local_sensitivity_at_distance,
)


def test_distance_to_instability_matches_its_definition():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = np.round(rng.uniform(0, 1, int(rng.integers(3, 15))), 2)
        aug, *_ = sorted_data(x, (0, 1))
        rank = (aug.size - 1) // 2
        bound = float(rng.uniform(0.01, 0.5))
        a_k = local_sensitivity_at_distance(aug, rank, np.arange(aug.size))
        over = np.nonzero(a_k > bound)[0]
        expected = float(over[0]) if over.size else math.inf
        assert distance_to_instability(aug, [rank], bound) == expected


def test_ptr_refusal_probability_and_release_law():
    x = np.linspace(0.4, 0.6, 101)
    mech = PTRMedianLaw(x, epsilon=1.0, delta=1e-3, bounds=(0, 1), local_sensitivity=0.05)
    assert mech.guarantee.eps == 1.0 and mech.guarantee.dlt == 1e-3
    draws = mech.sample(40_000, rng=1)
    refused = np.isnan(draws)
    p = mech.refusal_probability
    assert abs(refused.mean() - p) < 4 * math.sqrt(p * (1 - p) / draws.size) + 1e-12
    released = draws[~refused]
    lap = stats.laplace(mech.value, mech.scale)
    assert stats.kstest(released, lap.cdf).pvalue > 1e-3
    unstable = PTRMedianLaw(
        np.r_[np.zeros(50), np.ones(51)],
        epsilon=1.0,
        delta=1e-3,
        bounds=(0, 1),
        local_sensitivity=0.05,
    )
    assert unstable.gamma == 0 and unstable.refusal_probability > 0.99  # the paper's criticism


def _score(y):
    return np.where(np.isnan(y), -np.inf, y)  # refusals form an atom at -inf


def test_ptr_audit_and_broken_ptr():
    """(eps, delta) claim holds on neighbours straddling the unstable set; a PTR that skips
    the test (releases Lap(B) even when LS > B) is caught."""
    eps, delta = 1.0, 1e-3
    x = np.r_[np.full(9, 0.5), 0.51, 0.52, np.full(10, 0.53)]
    xp = x.copy()
    xp[-1] = 0.0  # moves the median's neighbourhood
    m = PTRMedianLaw(x, epsilon=eps, delta=delta, bounds=(0, 1), local_sensitivity=0.02)
    mp = PTRMedianLaw(xp, epsilon=eps, delta=delta, bounds=(0, 1), local_sensitivity=0.02)
    result = audit(
        lambda n, g: m.sample(n, g),
        lambda n, g: mp.sample(n, g),
        ApproxDP(eps, delta),
        n=50_000,
        score=_score,
        rng=2,
    )
    assert not result.contradicts

    class NoTest(PTRMedianLaw):
        @property
        def refusal_probability(self):
            return 0.0

        def sample(self, size=None, rng=None):
            g = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
            return self.value + g.laplace(0.0, self.scale, size)

    a = np.r_[np.zeros(10), np.ones(11)]  # median 1
    b = np.r_[np.zeros(11), np.ones(10)]  # one record swapped: median 0
    na = NoTest(a, epsilon=eps, delta=delta, bounds=(0, 1), local_sensitivity=0.02)
    nb = NoTest(b, epsilon=eps, delta=delta, bounds=(0, 1), local_sensitivity=0.02)
    assert na.value == 1.0 and nb.value == 0.0
    # larger outputs point towards the second data set (the auditor's convention)
    broken = audit(
        lambda n, g: nb.sample(n, g),
        lambda n, g: na.sample(n, g),
        ApproxDP(eps, delta),
        n=50_000,
        rng=3,
    )
    assert broken.contradicts


@pytest.mark.parametrize("delta", [0.0, 1e-4])
def test_smooth_sensitivity_noise_law(delta):
    x = np.random.default_rng(4).normal(size=41).clip(-5, 5)
    mech = SmoothSensitivityLaw(x, epsilon=1.0, bounds=(-5, 5), delta=delta)
    total = integrate.quad(lambda y: float(mech.pdf(y)), -np.inf, np.inf, limit=200)[0]
    assert total == pytest.approx(1.0, abs=1e-8)
    draws = mech.sample(20_000, rng=5)
    assert stats.kstest(draws, mech.cdf).pvalue > 1e-3
    err = np.abs(draws - mech.value)
    assert abs(err.mean() - mech.error_mean_abs()) < 4 * err.std() / math.sqrt(err.size)
    assert mech.guarantee.dlt == delta


def test_smooth_sensitivity_is_an_upper_bound_on_local_sensitivity():
    rng = np.random.default_rng(6)
    for _ in range(10):
        x = rng.uniform(0, 1, 15)
        mech = SmoothSensitivityLaw(x, epsilon=1.0, bounds=(0, 1))
        aug, *_ = sorted_data(x, (0, 1))
        ls = local_sensitivity_at_distance(aug, 8, [0])[0]
        assert mech.sensitivity >= ls


def test_grid_inverse_sensitivity_privacy():
    """Exact pmf ratios over the grid between neighbours never exceed eps."""
    rng = np.random.default_rng(7)
    grid = np.linspace(0, 1, 201)
    for _ in range(30):
        x = rng.uniform(0, 1, int(rng.integers(2, 12)))
        y = x.copy()
        y[rng.integers(x.size)] = rng.choice([0.0, 1.0, rng.uniform()])
        m1 = GridInverseSensitivityLaw(median_profile(x, (0, 1)), 1.0, grid)
        m2 = GridInverseSensitivityLaw(median_profile(y, (0, 1)), 1.0, grid)
        assert np.max(np.abs(m1.log_prob - m2.log_prob)) <= 1.0 + 1e-9


def test_ptr_cdf_and_error_functionals_are_its_exact_law():
    """PTRMedianLaw's law: a refusal atom (NaN) and f(x) + Lap(2B/eps) otherwise, independent."""
    x = np.linspace(0.4, 0.6, 101)
    mech = PTRMedianLaw(
        x, epsilon=1.0, delta=1e-3, bounds=(0, 1), local_sensitivity=0.03
    )  # gamma = 14
    keep = mech.release_probability
    assert 0.05 < keep < 0.95  # both parts of the law carry mass here
    draws = mech.sample(40_000, rng=8)
    released = ~np.isnan(draws)
    err = np.abs(draws - mech.value)  # NaN (refusal) compares False: an infinite error
    for y in mech.value + mech.scale * np.array([-2.0, -0.3, 0.0, 0.5, 3.0]):
        p = float(mech.cdf(y))
        assert abs((draws <= y).mean() - p) < 4 * math.sqrt(p * (1 - p) / draws.size)
    assert float(mech.cdf(1e9)) == pytest.approx(keep)
    for q in (0.1, 0.5):
        alpha = float(mech.error_quantile(q * keep))
        assert float(mech.error_cdf(alpha)) == pytest.approx(q * keep, rel=1e-12)
        assert abs((err <= alpha).mean() - q * keep) < 4 * math.sqrt(q * keep / draws.size)
    assert mech.error_quantile(keep + 0.01) == math.inf
    assert abs(err[released].mean() - mech.error_mean_abs()) < 4 * mech.scale / math.sqrt(
        released.sum()
    )
    assert mech.error_mse() == pytest.approx(2 * mech.scale**2)


def test_error_quantiles_invert_the_error_cdfs():
    """error_quantile is the inverse of error_cdf for every 1-D mechanism that has both."""
    x = np.random.default_rng(9).normal(size=41).clip(-5, 5)
    probs = np.array([0.05, 0.5, 0.9, 0.99])
    mechs = [
        PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=1.0, bounds=(-5, 5)),
        InverseSensitivityLaw.for_statistic(x, "mean", epsilon=0.5, bounds=(-5, 5)),
        PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=2.0, bounds=(-5, 5), rho=0.1),
        LaplaceLaw.for_statistic(x, "median", epsilon=1.0, bounds=(-5, 5)),
        SmoothSensitivityLaw(x, epsilon=1.0, bounds=(-5, 5)),
        SmoothSensitivityLaw(x, epsilon=1.0, bounds=(-5, 5), delta=1e-5),
        ApproximatePiecewiseLaplaceLaw(0.0, RadiusBounds([0.2, 0.5, 1.0]), 1.0),
    ]
    for mech in mechs:
        q = mech.error_quantile(probs)
        assert np.all(np.diff(q) > 0)
        assert np.allclose(mech.error_cdf(q), probs, atol=1e-9), type(mech).__name__
    grid = GridInverseSensitivityLaw(median_profile(x, (-5, 5)), 1.0, np.linspace(-5, 5, 201))
    q = grid.error_quantile(probs)
    assert np.all(grid.error_cdf(q) >= probs - 1e-12)
    assert np.all(grid.error_cdf(q - 1e-9) < probs)  # the smallest such grid distance

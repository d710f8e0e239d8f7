"""The vectorised discrete Gaussian for large variances (privest.mechanisms.samplers.wide):
its Bernoulli(exp(-gamma)) with a two-part denominator has the exact probability, and its
draws follow the exact law and that of the Python-integer reference, each at a fixed seed
with a negative control the same test rejects."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privest.errors import ValidationError
from privest.mechanisms.samplers.bigint import discrete_gaussian_big
from privest.mechanisms.samplers.lattice import (
    VECTOR_SIGMA2,
    lattice_gaussian_zcdp,
    sample_discrete_gaussian,
)
from privest.mechanisms.samplers.wide import (
    _gaussian_accept,
    discrete_gaussian_wide,
    exp_fraction,
)

P_MIN = 1e-3  # a correct sampler fails at this level once in 1000 seeds


@pytest.mark.parametrize(
    "hi, lo, den_hi, den_lo", [(2, 3, 5, 7), (0, 6, 3, 7), (4, 0, 4, 9), (1, 0, 1, 1), (0, 0, 9, 1)]
)
def test_exp_fraction_has_the_exact_probability(hi, lo, den_hi, den_lo):
    # small denominators, so ties U1 == hi (the second part) happen often
    n = 200_000
    gamma = (hi * den_lo + lo) / (den_hi * den_lo)
    got = exp_fraction(np.full(n, hi), np.full(n, lo), den_hi, den_lo, np.random.default_rng(1))
    p = math.exp(-gamma)
    se = math.sqrt(p * (1 - p) / n) or 1e-12
    assert abs(got.mean() - p) <= 4 * se
    if 0 < p < 1:  # control: gamma 0.03 larger is outside the band
        assert abs(got.mean() - math.exp(-gamma - 0.03)) > 4 * se


def binned_p(draws: np.ndarray, edges: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square p-value of ``draws`` in the integer bins [edges[i], edges[i+1])."""
    observed = np.histogram(draws, bins=edges)[0].astype(float)
    expected = probs / probs.sum() * observed.sum()
    return float(stats.chisquare(observed, expected).pvalue)


def exact_bins(sigma2: int, edges: np.ndarray) -> np.ndarray:
    """Exact bin masses of the discrete Gaussian (pmf summed over +-40 sd)."""
    top = int(40 * math.sqrt(sigma2))
    k = np.arange(-top, top + 1)
    pmf = np.exp(-(k.astype(float) ** 2) / (2 * sigma2))
    return np.histogram(k, bins=edges, weights=pmf)[0]


def test_wide_draws_follow_the_exact_law():
    sigma2 = VECTOR_SIGMA2 + 12345
    sd = math.sqrt(sigma2)
    edges = np.unique(np.round(np.linspace(-4.5, 4.5, 41) * sd)).astype(np.int64)
    edges = np.concatenate([[-(2**40)], edges, [2**40]])
    draws = sample_discrete_gaussian(sigma2, 100_000, np.random.default_rng(2))
    assert binned_p(draws, edges, exact_bins(sigma2, edges)) > P_MIN
    # control: the same draws against 5% more variance are rejected
    assert binned_p(draws, edges, exact_bins(int(1.05 * sigma2), edges)) < 1e-6


def test_wide_draws_match_the_python_integer_reference():
    # two-sample chi-square (a contingency table over 20 bins) against draws of the same law
    # from bigint; control: the reference at 10% more variance is told apart
    sigma2 = 2**40 + 987
    sd = math.sqrt(sigma2)
    edges = np.concatenate([[-(2**62)], np.linspace(-3, 3, 19) * sd, [2**62]])
    wide = discrete_gaussian_wide(sigma2, 40_000, np.random.default_rng(3))
    ref = np.array(discrete_gaussian_big(sigma2, 20_000, np.random.default_rng(4)), dtype=float)
    wrong = np.array(
        discrete_gaussian_big(int(1.1 * sigma2), 20_000, np.random.default_rng(5)), dtype=float
    )

    def p_two(a: np.ndarray, b: np.ndarray) -> float:
        table = np.array([np.histogram(a, edges)[0], np.histogram(b, edges)[0]])
        return float(stats.chi2_contingency(table)[1])

    assert p_two(wide.astype(float), ref) > P_MIN
    assert p_two(wide.astype(float), wrong) < 1e-6


def test_the_largest_variances_follow_the_normal_bins():
    # at sigma2 near 2^59 the discrete law's bin masses equal the normal ones to far below
    # the test's resolution (Poisson summation: relative error ~ exp(-2 pi^2 sigma2))
    sigma2 = 2**59 + 12345
    sd = math.sqrt(sigma2)
    z = np.linspace(-3, 3, 25)
    edges = np.concatenate([[-np.inf], z, [np.inf]])
    draws = sample_discrete_gaussian(sigma2, 50_000, np.random.default_rng(6)) / sd
    assert binned_p(draws, edges, np.diff(stats.norm.cdf(edges))) > P_MIN
    assert binned_p(draws, edges, np.diff(stats.norm.cdf(edges, scale=1.04))) < 1e-6


def test_far_candidates_take_the_exact_big_integer_test():
    # |Y| of 2^40 t makes the exponent's whole part exceed 2^62: accepted with probability
    # below exp(-2^62), never; a candidate at the mode (|Y| t = sigma2 up to t) is accepted
    # with probability above exp(-1/2)
    sigma2 = 2**30 + 1
    t = math.isqrt(sigma2) + 1
    y = np.array([2**40 * t, 2**41 * t] + [sigma2 // t] * 2000, dtype=np.int64)
    ok = _gaussian_accept(y, sigma2, t, np.random.default_rng(7))
    assert not ok[:2].any()
    assert ok[2:].mean() > math.exp(-0.5) - 4 * math.sqrt(0.25 / 2000)


def test_noise_drawn_ahead_is_added_on_the_lattice_and_a_wrong_shape_is_refused():
    # the batched gradient noise of noisy_mm: release(noise=k) is g (round(value / g) + k)
    mech = lattice_gaussian_zcdp(0.01, 1.0, 3)
    k = mech.noise(6, np.random.default_rng(8)).reshape(2, 3)
    value = np.array([0.3, -1.7, 12.0])
    got = mech.release(value, np.random.default_rng(9), noise=k[1])
    assert np.array_equal(got, (np.rint(value / mech.step) + k[1]) * mech.step)
    with pytest.raises(ValidationError, match=r"noise: shape \(6,\); expected \(3,\)"):
        mech.release(value, np.random.default_rng(9), noise=k.ravel())

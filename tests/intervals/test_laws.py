"""The error laws behind the moment intervals (privest.intervals.laws): the normal-Laplace
CDF and its two-noise version against Monte Carlo (tolerance from the MC SE), and the
clamp-aware test inversion's exact coverage on a pure-noise law."""

import math

import numpy as np
import pytest

from privest.intervals.laws import error_cdf, invert, laplace_nodes, normal_laplace_cdf, pvalue

DRAWS = 400_000
#: 5 Monte Carlo SEs of a probability (at most 0.5 / sqrt(DRAWS))
TOL = 5 * 0.5 / math.sqrt(DRAWS)
POINTS = np.array([-4.0, -1.5, -0.3, 0.0, 0.7, 2.0, 5.0])


@pytest.mark.parametrize("sd,b", [(1.0, 0.05), (1.0, 3.0), (0.02, 1.0), (2.0, 0.0), (0.0, 1.5)])
def test_normal_laplace_cdf_matches_simulation(sd, b):
    rng = np.random.default_rng(1)
    z = sd * rng.standard_normal(DRAWS) + (rng.laplace(0, b, DRAWS) if b > 0 else 0.0)
    mc = (z[:, None] <= POINTS).mean(axis=0)
    assert np.abs(normal_laplace_cdf(POINTS, sd, b) - mc).max() < TOL


@pytest.mark.parametrize("sd,b1,b2", [(1.0, 0.5, 2.0), (0.1, 1.0, 1.0), (0.0, 1.0, 1e-3)])
def test_two_laplace_terms_match_simulation(sd, b1, b2):
    rng = np.random.default_rng(2)
    z = sd * rng.standard_normal(DRAWS) + rng.laplace(0, b1, DRAWS) + rng.laplace(0, b2, DRAWS)
    mc = (z[:, None] <= POINTS).mean(axis=0)
    assert np.abs(error_cdf(POINTS, sd, (b1, b2)) - mc).max() < TOL


def test_cdf_does_not_overflow_when_the_normal_dominates():
    out = normal_laplace_cdf(np.array([-50.0, 0.0, 50.0]), 10.0, 1e-6)
    assert np.all(np.isfinite(out)) and out[1] == pytest.approx(0.5)


def _series(z, r):
    """P(Z + L <= x) by its series in r = b/s (E L^2 = 2 b^2, E L^4 = 24 b^4), z = x/s."""
    from scipy import stats

    phi = stats.norm.pdf(z)
    return stats.norm.cdf(z) - r * r * z * phi + r**4 * (3 * z - z**3) * phi


def test_cdf_is_exact_and_quiet_when_the_laplace_scale_is_tiny():
    """b/s from 1e-6 to 1e-13 (a sampling sd of 50 against a noise of 1e-12): the exponents
    a^2/2 -+ x/b no longer cancel in the sum (a warning and NaN before), and the value agrees
    with the series to rounding; control: the unscaled exponents lose that agreement."""
    from scipy import special

    z = np.linspace(-3.0, 3.0, 13)
    for r in (1e-6, 1e-9, 1e-13):
        with np.errstate(all="raise"):
            out = normal_laplace_cdf(z, 1.0, r)
        assert np.abs(out - _series(z, r)).max() < 1e-15
    a, r = 1e6, 1e-6  # the same terms in the unscaled form
    t1 = special.log_ndtr(z - a) + 0.5 * a * a - z * a
    t2 = special.log_ndtr(-z - a) + 0.5 * a * a + z * a
    naive = special.ndtr(z) - 0.5 * np.exp(t1) + 0.5 * np.exp(t2)
    assert np.abs(naive - _series(z, r)).max() > 1e-12


def test_laplace_nodes_are_its_midpoint_quantiles():
    nodes = laplace_nodes(2.0, 8)
    u = (np.arange(8) + 0.5) / 8
    cdf = np.where(nodes < 0, 0.5 * np.exp(nodes / 2.0), 1 - 0.5 * np.exp(-nodes / 2.0))
    assert np.allclose(cdf, u)


def _pure_noise(b):
    return lambda theta: np.zeros((*np.shape(theta), 1))


def test_inversion_of_a_pure_laplace_law_is_exact_away_from_bounds():
    """No sampling error: the interval is est -+ b log(1/alpha), the Laplace quantile."""
    b, alpha = 0.5, 0.05
    low, high = invert(np.array([0.0, 1.0]), _pure_noise(b), (b,), -100.0, 100.0, alpha)
    assert np.allclose(high - [0.0, 1.0], b * math.log(1 / alpha), rtol=1e-9)
    assert np.allclose([0.0, 1.0] - low, b * math.log(1 / alpha), rtol=1e-9)


def test_clamp_aware_inversion_keeps_coverage_at_one_minus_alpha_near_a_bound():
    """theta near the upper bound: the release is clamped, one tail cannot fail; the test
    gives the other tail all of alpha, so coverage is 1 - alpha (exactly, by the law), not
    1 - alpha/2. Control: the plain equal-tailed interval covers 1 - alpha/2 there."""
    b, alpha, hi = 1.0, 0.05, 1.0
    theta = 0.2  # within b log(2/alpha) of the bound
    rng = np.random.default_rng(3)
    est = np.minimum(theta + rng.laplace(0, b, 40_000), hi)
    low, high = invert(est, _pure_noise(b), (b,), -50.0, hi, alpha)
    cover = np.mean((low <= theta) & (theta <= high))
    se = math.sqrt(alpha * (1 - alpha) / est.size)
    assert abs(cover - (1 - alpha)) < 4 * se
    q = b * math.log(1 / alpha)
    plain = np.mean(np.abs(np.where(est >= hi, theta, est) - theta) <= q)  # clamped: covered
    assert plain > 1 - alpha / 2 - 4 * se


def test_pvalue_is_uniform_under_the_null():
    rng = np.random.default_rng(4)
    sd = lambda t: np.full((*np.shape(t), 1), 0.3)  # noqa: E731
    est = rng.normal(0, 0.3, 20_000) + rng.laplace(0, 0.2, 20_000)
    p = pvalue(est, np.zeros(est.size), sd, (0.2,))
    for a in (0.01, 0.05, 0.2):
        assert abs(np.mean(p <= a) - a) < 4 * math.sqrt(a * (1 - a) / est.size)

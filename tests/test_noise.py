"""Oracles for the SL and ZIL samplers and the SL density (paper 000, Sec. 3.1).

Tolerances are multiples of the Monte Carlo standard error computed from the known
moments, never from the observed result.
"""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from privest.noise import sample_sl, sample_zil, sl_logpdf

N = 200_000
Z_TOL = 4.5  # |z| bound per check; several checks per test


def test_sl_mean_and_covariance():
    lam, d = 1.5, 3
    s = sample_sl(N, d, lam, np.random.default_rng(1))
    se_mean = lam / math.sqrt(N)
    assert np.all(np.abs(s.mean(axis=0)) < Z_TOL * se_mean)
    cov = s.T @ s / N
    var_diag = 5 * lam**4  # Var(S^2) = E S^4 - sigma^4 = 6 sigma^4 - sigma^4
    var_off = 2 * lam**4  # Var(S_i S_j) = E W^2 lam^4 = 2 lam^4
    for i in range(d):
        for j in range(d):
            target = lam**2 if i == j else 0.0
            se = math.sqrt((var_diag if i == j else var_off) / N)
            assert abs(cov[i, j] - target) < Z_TOL * se


def test_sl_projection_is_laplace():
    lam, d = 0.7, 4
    s = sample_sl(50_000, d, lam, np.random.default_rng(2))
    a = np.array([0.3, -1.0, 0.5, 2.0])
    proj = s @ a
    sd = lam * np.linalg.norm(a)
    assert stats.kstest(proj, stats.laplace(scale=sd / math.sqrt(2)).cdf).pvalue > 1e-3


def test_sl_projection_detects_independent_laplace():
    """Negative control: independent Laplace coordinates are not SL_d, and the KS test sees it."""
    rng = np.random.default_rng(3)
    lam, d = 1.0, 4
    indep = rng.laplace(scale=lam / math.sqrt(2), size=(50_000, d))
    proj = indep @ np.ones(d)
    sd = lam * math.sqrt(d)
    assert stats.kstest(proj, stats.laplace(scale=sd / math.sqrt(2)).cdf).pvalue < 1e-6


def test_sl_squared_norm_law():
    d, lam = 3, 2.0
    s = sample_sl(50_000, d, lam, np.random.default_rng(4))
    r2 = np.sum(s**2, axis=1) / lam**2
    ref = np.random.default_rng(5)
    w_chi = ref.standard_exponential(50_000) * ref.chisquare(d, 50_000)
    assert stats.ks_2samp(r2, w_chi).pvalue > 1e-3


def test_sl_kurtosis_in_one_dimension():
    s = sample_sl(1_000_000, 1, 1.0, np.random.default_rng(6))[:, 0]
    fourth = np.mean(s**4)
    se = math.sqrt((2520 - 36) / 1_000_000)  # Laplace: E S^8 = 8! b^8 = 2520 sigma^8
    assert abs(fourth - 6.0) < Z_TOL * se


def test_zil_zero_share_and_whole_vector_zero():
    delta, lam, d = 0.2, 1.0, 3
    z, zero = sample_zil(N, d, lam, delta, np.random.default_rng(7))
    assert abs(zero.mean() - delta) < Z_TOL * math.sqrt(delta * (1 - delta) / N)
    coord_zero = z == 0
    np.testing.assert_array_equal(coord_zero.any(axis=1), coord_zero.all(axis=1))
    np.testing.assert_array_equal(coord_zero.all(axis=1), zero)
    cov = z.T @ z / N
    se = math.sqrt((6 * (1 - delta) - (1 - delta) ** 2) * lam**4 / N)
    assert np.all(np.abs(np.diag(cov) - (1 - delta) * lam**2) < Z_TOL * se)


def test_zil_characteristic_function():
    delta, lam, d = 0.1, 1.3, 2
    z, _ = sample_zil(N, d, lam, delta, np.random.default_rng(8))
    for t in ([0.5, 0.0], [0.4, -0.8], [1.5, 1.0]):
        t = np.asarray(t)
        u = lam**2 * (t @ t) / 2
        ecf = np.mean(np.cos(z @ t))
        assert abs(ecf - (1 + delta * u) / (1 + u)) < Z_TOL / math.sqrt(N)


def test_zil_plus_sl_is_sl():
    """ZIL(delta, lam^2 I) + SL(delta lam^2 I) = SL(lam^2 I): the DR convolution identity."""
    delta, lam, d = 0.3, 1.0, 3
    rng = np.random.default_rng(9)
    z, _ = sample_zil(50_000, d, lam, delta, rng)
    total = z + sample_sl(50_000, d, lam * math.sqrt(delta), rng)
    for a in (np.array([1.0, 0, 0]), np.array([0.5, 0.5, -1.0])):
        sd = lam * np.linalg.norm(a)
        pvalue = stats.kstest(total @ a, stats.laplace(scale=sd / math.sqrt(2)).cdf).pvalue
        assert pvalue > 1e-3
    r2 = np.sum(total**2, axis=1) / lam**2
    ref = np.random.default_rng(10)
    assert (
        stats.ks_2samp(r2, ref.standard_exponential(50_000) * ref.chisquare(d, 50_000)).pvalue
        > 1e-3
    )


def test_density_matches_laplace_in_one_dimension():
    x = np.linspace(-5, 5, 41)[:, None]
    np.testing.assert_allclose(
        sl_logpdf(x, 1.7), stats.laplace(scale=1.7 / math.sqrt(2)).logpdf(x[:, 0]), rtol=1e-12
    )


@pytest.mark.parametrize("d", [2, 3, 5])
def test_density_integrates_to_one_radially(d):
    area = 2 * math.pi ** (d / 2) / special.gamma(d / 2)

    def radial(r):
        return area * r ** (d - 1) * math.exp(sl_logpdf(np.array([[r] + [0.0] * (d - 1)]))[0])

    total, err = integrate.quad(radial, 0, np.inf, limit=200)
    assert abs(total - 1) < 1e-6


def test_density_matches_histogram_in_two_dimensions():
    """P(||S|| <= r) from the density against the sampler's empirical frequency."""
    s = sample_sl(N, 2, 1.0, np.random.default_rng(11))
    radius = np.linalg.norm(s, axis=1)
    for r in (0.3, 1.0, 2.5):
        prob, _ = integrate.quad(
            lambda t: 2 * math.pi * t * math.exp(sl_logpdf(np.array([[t, 0.0]]))[0]), 0, r
        )
        freq = np.mean(radius <= r)
        assert abs(freq - prob) < Z_TOL * math.sqrt(prob * (1 - prob) / N)

"""Gaussian calibration (classic and analytic) and the exact profile of Gaussian + RR."""

import math

import numpy as np
import pytest
from scipy import special

from privest.accounting.gaussian import GaussianRRGuarantee, LocalDP, gaussian_sigma
from privest.errors import ValidationError
from privest.mechanisms.gaussian import gaussian_delta


def classic_gaussian_sigma(eps, delta, sens):
    return gaussian_sigma(eps, delta, sens, "classic")


def analytic_gaussian_sigma(eps, delta, sens):
    return gaussian_sigma(eps, delta, sens, "analytic")


def _delta(eps, sigma, sensitivity):
    """Exact Gaussian profile (Balle-Wang Thm 8) at noise sigma and L2 sensitivity."""
    return gaussian_delta(eps, sensitivity, sigma)


def test_classic_sigma_matches_paper_formula():
    # Paper 004, Prop 2.2: sigma^2 = 8 log(1.25/delta) R^2 / eps^2 with sensitivity 2R, R = 1.
    assert classic_gaussian_sigma(1.0, 1e-5, 2.0) ** 2 == pytest.approx(8 * math.log(1.25e5))
    assert classic_gaussian_sigma(1.0, 1e-5, 2.0) ** 2 == pytest.approx(93.889, abs=1e-3)
    # proportional to R^2 / eps^2
    ratio = classic_gaussian_sigma(0.5, 1e-5, 6.0) ** 2 / classic_gaussian_sigma(1, 1e-5, 2) ** 2
    assert ratio == pytest.approx(9 * 4)


def _hockey_stick_mc(eps, mu, n, rng):
    """E_P[(1 - e^{eps - L})_+], L ~ N(mu^2/2, mu^2): the Gaussian privacy profile by MC."""
    L = mu**2 / 2 + mu * rng.standard_normal(n)
    v = np.maximum(0.0, 1.0 - np.exp(eps - L))
    return v.mean(), v.std() / math.sqrt(n)


@pytest.mark.parametrize("eps,mu", [(0.5, 1.0), (1.0, 0.5), (2.0, 2.0), (-0.5, 1.0)])
def test_gaussian_delta_matches_monte_carlo_hockey_stick(eps, mu):
    rng = np.random.default_rng(1)
    est, se = _hockey_stick_mc(eps, mu, 2_000_000, rng)
    exact = _delta(eps, 2.0 / mu, 2.0)
    assert abs(est - exact) <= 5 * se + 1e-12


def test_analytic_sigma_meets_delta_exactly_and_beats_classic():
    for eps, delta in [(0.5, 1e-5), (1.0, 1e-6), (3.0, 1e-5), (8.0, 1e-3)]:
        s = analytic_gaussian_sigma(eps, delta, 2.0)
        assert _delta(eps, s, 2.0) <= delta
        assert _delta(eps, s * (1 - 1e-6), 2.0) > delta * (1 - 1e-3)
        classic = classic_gaussian_sigma(eps, delta, 2.0)
        # Where the classic sigma is valid, the exact calibration needs no more noise.
        assert s <= classic or _delta(eps, classic, 2.0) > delta


def test_classic_calibration_fails_for_large_epsilon():
    """Negative control on the profile: the classic formula is not valid for every eps (A3)."""
    assert _delta(8.0, classic_gaussian_sigma(8.0, 1e-3, 2.0), 2.0) > 1e-3
    eps, delta = 20.0, 0.2
    s = classic_gaussian_sigma(eps, delta, 1.0)
    assert _delta(eps, s, 1.0) > delta
    assert _delta(eps, analytic_gaussian_sigma(eps, delta, 1.0), 1.0) <= delta


def test_combined_profile_matches_monte_carlo_privacy_loss():
    """delta(eps) of Gaussian + RR equals E_P[(1 - e^{eps - L})_+] with L = L_G + L_RR."""
    rng = np.random.default_rng(2)
    sigma, sens, eps_y, n = 3.0, 2.0, 1.0, 2_000_000
    mu = sens / sigma
    keep = special.expit(eps_y)
    L = mu**2 / 2 + mu * rng.standard_normal(n) + np.where(rng.random(n) < keep, eps_y, -eps_y)
    g = GaussianRRGuarantee(sigma, sens, eps_y)
    for eps in (0.5, 1.5, 2.5):
        v = np.maximum(0.0, 1.0 - np.exp(eps - L))
        assert abs(v.mean() - g.delta(eps)) <= 5 * v.std() / math.sqrt(n)


def test_local_dp_label_and_dispatch():
    g = LocalDP(2.0, 1e-5)
    assert "LDP" in g.label and g.epsilon(1e-5) == pytest.approx(2.0, abs=1e-9)
    assert gaussian_sigma(1, 1e-5, 2) == classic_gaussian_sigma(1, 1e-5, 2)  # the default
    with pytest.raises(ValidationError, match="calibration"):
        gaussian_sigma(1, 1e-5, 2, "magic")

"""Utility claims and non-claims of paper 002 (Thm. 2; docs/piecewise-laplace.md, "When PLM
helps, and when it does not") and regression values of an independent prototype."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privest.mechanisms.approximate import (
    ApproximateLpPLMLaw,
    ApproximatePiecewiseLaplaceLaw,
    RadiusBounds,
)
from privest.mechanisms.inverse_sensitivity import InverseSensitivityLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.mechanisms.profiles.reaches import mean_profile, median_profile, profile_for


@pytest.mark.parametrize("statistic", ["median", "quantile:0.8", "mean", "variance"])
def test_plm_dominates_inv_in_one_dimension(statistic):
    """Thm. 2: P_PLM(|err| <= alpha) >= P_INV at every alpha incl. all piece endpoints;
    strict inside pieces; E|err| and MSE strictly smaller."""
    rng = np.random.default_rng(len(statistic))
    for _ in range(8):
        x = np.clip(rng.standard_t(3, size=int(rng.integers(3, 40))), -5, 5)
        eps = float(rng.choice([0.2, 1.0, 4.0]))
        prof = profile_for(x, statistic, (-5, 5))
        plm, inv = PiecewiseLaplaceLaw(prof, eps), InverseSensitivityLaw(prof, eps)
        d = plm.density
        o = np.abs(d.inner - prof.center)
        ends = np.unique(np.concatenate([o, o + d.width]))
        mids = o + 0.5 * d.width
        alphas = np.unique(np.concatenate([ends, mids, np.linspace(0, 10, 501)]))
        gap = plm.error_cdf(alphas) - inv.error_cdf(alphas)
        assert gap.min() >= -1e-12
        p_mid, q_mid = plm.error_cdf(mids), inv.error_cdf(mids)
        resolvable = q_mid < 1 - 1e-9  # strictness is invisible once both round to 1
        assert resolvable.any()
        assert np.all(p_mid[resolvable] > q_mid[resolvable])
        assert plm.error_mean_abs() < inv.error_mean_abs()
        assert plm.error_mse() < inv.error_mse()


def test_rho_smoothed_plm_does_not_dominate_rho_inv():
    """Non-claim: rho-PLM does not dominate rho-INV (median of 21 N(0,1), eps = 1,
    rho = 0.05, at alpha = rho)."""
    eps, rho = 1.0, 0.05
    worse = 0
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.normal(size=21)
        prof = median_profile(x, (-10, 10))
        p = float(PiecewiseLaplaceLaw(prof, eps, rho=rho).error_cdf(rho))
        q = float(InverseSensitivityLaw(prof, eps, rho=rho).error_cdf(rho))
        w = prof.pieces()
        weight = float(np.sum(np.exp(-eps * w["level"] / 2) * w["length"]))
        assert q == pytest.approx(2 * rho / (2 * rho + weight), rel=1e-9)
        assert p == pytest.approx(
            2 * rho / (2 * rho + 2 / eps * math.expm1(eps / 2) * weight), rel=1e-9
        )
        worse += p < q
    assert worse == 5


def test_median_table_e1_regression():
    """E1: prototype values (median of N(0,1) in [-10, 10], n = 51, 50 data sets); +-5 %."""
    ref = {0.1: (4.39, 4.41), 1.0: (0.117, 0.121), 5.0: (0.0266, 0.0402)}
    rng = np.random.default_rng(2024)
    data = [np.clip(rng.normal(size=51), -10, 10) for _ in range(50)]
    for eps, (plm_ref, inv_ref) in ref.items():
        plm = np.mean(
            [PiecewiseLaplaceLaw(median_profile(x, (-10, 10)), eps).error_mean_abs() for x in data]
        )
        inv = np.mean(
            [
                InverseSensitivityLaw(median_profile(x, (-10, 10)), eps).error_mean_abs()
                for x in data
            ]
        )
        assert plm == pytest.approx(plm_ref, rel=0.08)
        assert inv == pytest.approx(inv_ref, rel=0.08)
        assert plm <= inv


def test_mean_table_e2_plm_between_laplace_levels():
    """Beta(2,5) mean, n = 50 (prototype values): PLM beats INV but not eps-DP Laplace at
    eps >= 1 (paper 002, Sec. 4.1)."""
    rng = np.random.default_rng(7)
    for eps, plm_ref in ((1.0, 1.55), (5.0, 0.338)):
        vals = [
            PiecewiseLaplaceLaw(mean_profile(rng.beta(2, 5, 50), (0, 1)), eps).error_mean_abs() * 50
            for _ in range(50)
        ]
        assert np.mean(vals) == pytest.approx(plm_ref, rel=0.08)
        assert 1 / eps < np.mean(vals) < 2 / eps  # between Lap(GS/eps) and Lap(2GS/eps)


# -- d dimensions (paper 002, Sec. 5.1) ------------------------------------------------------
def test_radial_sampler_matches_rejection_and_exact_cdf():
    """inverse-CDF radial sampler vs the paper's rejection sampler and the radial CDF."""
    mech = ApproximateLpPLMLaw(np.zeros(3), RadiusBounds([0.3, 1.0, 2.0]), 1.0, p=1)
    r_inv = mech.sample_radius(8000, rng=1)
    r_rej = np.abs(mech.sample_rejection_l1(3000, rng=2)).sum(axis=1)
    assert stats.ks_2samp(r_inv, r_rej).pvalue > 1e-3
    assert stats.kstest(r_inv, mech.radial_cdf).pvalue > 1e-3


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf, 3.0])
def test_direction_independent_of_radius(p):
    """||theta||_p = 1; for p = 1, |theta_1| ~ Beta(1, d - 1); radius independent."""
    d = 4
    mech = ApproximateLpPLMLaw(np.ones(d), RadiusBounds([0.5, 1.0]), 2.0, p=p)
    y = mech.sample(6000, rng=3) - 1.0
    r = np.linalg.norm(y, ord=p, axis=1)
    theta = y / r[:, None]
    assert np.allclose(np.linalg.norm(theta, ord=p, axis=1), 1.0)
    if p == 1:
        assert stats.kstest(np.abs(theta[:, 0]), stats.beta(1, d - 1).cdf).pvalue > 1e-3
    rho = stats.spearmanr(r, np.abs(theta[:, 0])).statistic
    assert abs(rho) < 4 / math.sqrt(r.size)  # about 4 SE of a null Spearman correlation


def test_d1_reduces_to_symmetric_approximate_plm():
    """d = 1 equals the 1-D symmetric approximate PLM."""
    radii = RadiusBounds([0.2, 0.5, 1.0])
    one = ApproximatePiecewiseLaplaceLaw(0.0, radii, 1.5)
    dd = ApproximateLpPLMLaw(np.zeros(1), radii, 1.5, p=2)
    ys = np.linspace(-6, 6, 301)
    assert np.allclose(dd.logpdf(ys[:, None]), one.logpdf(ys), atol=1e-10)
    r = np.linspace(0, 6, 61)
    assert np.allclose(dd.radial_cdf(r), one.error_cdf(r), atol=1e-10)


def test_constant_radii_reproduce_table_e4_and_no_dominance_claim():
    """E||err|| = 2d/eps for PLM with constant radii; approximate INV is better at d = 5,
    eps = 5 (no dominance in d >= 2)."""
    for d, inv_ref in ((2, 0.896), (5, 1.992)):
        plm = ApproximateLpPLMLaw(np.zeros(d), RadiusBounds([1.0]), 5.0, p=2)
        inv = ApproximateLpPLMLaw(np.zeros(d), RadiusBounds([1.0]), 5.0, p=2, law="uniform")
        assert plm.error_mean_norm() == pytest.approx(2 * d / 5, rel=1e-3)
        assert inv.error_mean_norm() == pytest.approx(inv_ref, rel=2e-3)
    # d = 5: PLM is worse in expectation, so dominance cannot hold in d >= 2
    plm5 = ApproximateLpPLMLaw(np.zeros(5), RadiusBounds([1.0]), 5.0, p=2).error_mean_norm()
    inv5 = ApproximateLpPLMLaw(
        np.zeros(5), RadiusBounds([1.0]), 5.0, p=2, law="uniform"
    ).error_mean_norm()
    assert plm5 > inv5


def test_lipschitz_radii():
    radii = RadiusBounds.lipschitz(2.0, 1.0, levels=4, cap=4.0)
    assert list(radii.radii) == [2.0, 3.0, 4.0, 4.0, 4.0]
    mech = ApproximatePiecewiseLaplaceLaw(10.0, radii, 1.0, output_range=(0.0, 30.0))
    s = mech.sample(5000, rng=4)
    assert s.min() >= 0 and s.max() <= 30
    assert stats.kstest(s, mech.cdf).pvalue > 1e-3

"""PLM and INV as distributions (paper 002, Sec. 3-4) and the exact error functionals.

The error functionals and the worst case of equal pieces are derived in
docs/piecewise-laplace.md, "Exact error laws".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privest.errors import ValidationError
from privest.mechanisms.inverse_sensitivity import GridInverseSensitivityLaw, InverseSensitivityLaw
from privest.mechanisms.laws.piecewise import log_k, texp_moments
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.mechanisms.profiles.reaches import ReachProfile, count_profile, median_profile


def score_def31(prof: ReachProfile, y: float) -> float:
    """s(y; x) straight from Def. 3.1 (an independent code path from the mechanism's)."""
    up, dn, c = prof.upper, prof.lower, prof.center
    if y == c:
        return 1.0
    if y > c:
        lvl = next(i for i in range(1, up.size) if up[i] >= y)
        return lvl + (y - up[lvl - 1]) / (up[lvl] - up[lvl - 1])
    lvl = next(i for i in range(1, dn.size) if dn[i] <= y)
    return lvl + (dn[lvl - 1] - y) / (dn[lvl - 1] - dn[lvl])


def _data(seed: int, n: int = 15, ties: bool = False) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=n)
    return np.clip(np.round(x, 1) if ties else x, -4, 4)


@pytest.mark.parametrize("seed,ties,eps", [(0, False, 1.0), (1, True, 0.5), (2, True, 3.0)])
def test_density_matches_definition_and_integrates_to_one(seed, ties, eps):
    """quad of exp(-eps s/2) (s from Def. 3.1) gives Z = K W; the density integrates to 1."""
    prof = median_profile(_data(seed, ties=ties), (-4, 4))
    mech = PiecewiseLaplaceLaw(prof, eps)
    pieces = prof.pieces()
    w = np.sum(np.exp(-eps * pieces["level"] / 2) * pieces["length"])
    bp = np.unique(np.concatenate([prof.upper, prof.lower]))
    z = sum(
        integrate.quad(lambda y: math.exp(-eps * score_def31(prof, y) / 2), lo, hi)[0]
        for lo, hi in zip(bp[:-1], bp[1:], strict=True)
    )
    assert z == pytest.approx(math.exp(log_k(eps)) * w, rel=1e-9)
    total = sum(
        integrate.quad(lambda y: float(mech.pdf(y)), lo, hi)[0]
        for lo, hi in zip(bp[:-1], bp[1:], strict=True)
    )
    assert total == pytest.approx(1.0, abs=1e-9)
    ys = np.random.default_rng(seed).uniform(-4, 4, 200)
    expected = np.array([-eps * score_def31(prof, y) / 2 for y in ys]) - math.log(z)
    assert np.allclose(mech.logpdf(ys), expected, atol=1e-9)
    assert mech.score(prof.center) == pytest.approx(1.0)
    assert mech.logpdf(4.5) == -np.inf


@pytest.mark.parametrize("cls", [PiecewiseLaplaceLaw, InverseSensitivityLaw])
@pytest.mark.parametrize("rho", [0.0, 0.05])
def test_sampler_matches_cdf_and_piece_law(cls, rho):
    """KS of 2e4 draws against the closed-form CDF; chi-square of piece frequencies."""
    prof = median_profile(_data(4, n=25, ties=True), (-4, 4))
    mech = cls(prof, 1.5, rho=rho)
    draws = mech.sample(20_000, rng=12)
    assert stats.kstest(draws, mech.cdf).pvalue > 1e-3
    dens = mech.density
    idx = np.clip(np.searchsorted(dens.left, draws, side="right") - 1, 0, dens.prob.size - 1)
    observed = np.bincount(idx, minlength=dens.prob.size)
    expected = dens.prob * draws.size
    big = expected >= 5  # pool small cells
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    keep = exp > 0
    assert stats.chisquare(obs[keep], exp[keep]).pvalue > 1e-3


def test_same_piece_law_for_plm_and_inv():
    """both samplers pick pieces with the same probabilities (chi-square, two samples)."""
    prof = median_profile(_data(5, n=21), (-4, 4))
    plm, inv = PiecewiseLaplaceLaw(prof, 2.0), InverseSensitivityLaw(prof, 2.0)
    assert np.allclose(plm.density.prob, inv.density.prob)
    a, b = plm.sample(20_000, rng=1), inv.sample(20_000, rng=2)
    edges = np.unique(np.concatenate([prof.upper, prof.lower]))
    ca, cb = np.histogram(a, edges)[0], np.histogram(b, edges)[0]
    keep = (ca + cb) >= 10
    table = np.vstack([np.append(ca[keep], ca[~keep].sum()), np.append(cb[keep], cb[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_density_geometry():
    """ratio inner/outer end of each piece is e^{eps/2}; continuity; skipped pieces jump."""
    eps = 1.3
    x = np.array([-1.0, -0.5, 0.0, 0.2, 0.7, 0.7, 1.5])  # U_2 = U_1 = 0.7: a skipped piece
    prof = median_profile(x, (-2, 2))
    mech = PiecewiseLaplaceLaw(prof, eps)
    d = mech.density
    inner = d.inner + d.side * 1e-13 * d.width
    outer = d.inner + d.side * (1 - 1e-13) * d.width
    assert np.allclose(mech.logpdf(inner) - mech.logpdf(outer), eps / 2, atol=1e-9)
    tiny = 1e-12
    assert mech.logpdf(0.7 - tiny) - mech.logpdf(0.7 + tiny) == pytest.approx(eps / 2, abs=1e-9)
    for b in (-0.5, 0.0, 1.5):  # boundaries between positive-length pieces
        assert mech.logpdf(b - tiny) == pytest.approx(mech.logpdf(b + tiny), abs=1e-9)
    assert mech.logpdf(0.2) - mech.logpdf(0.2 + tiny) == pytest.approx(0.0, abs=1e-9)
    ties = PiecewiseLaplaceLaw(median_profile(np.array([0.0, 0.3, 0.3, 0.3, 1.0]), (-2, 2)), eps)
    # the median 0.3 is tied: both first pieces have length 0, score jumps from 1 to 2
    assert ties.logpdf(0.3) - ties.logpdf(0.3 + tiny) == pytest.approx(eps / 2, abs=1e-9)
    assert ties.logpdf(0.3) - ties.logpdf(0.3 - tiny) == pytest.approx(eps / 2, abs=1e-9)


def test_count_profile_is_truncated_laplace():
    """the count PLM is Lap(k, 2/eps) restricted to [0, n] and renormalised."""
    eps, n, k = 0.7, 30, 12
    mech = PiecewiseLaplaceLaw(count_profile(np.r_[np.ones(k), np.zeros(n - k)]), eps)
    lap = stats.laplace(k, 2 / eps)
    ys = np.linspace(0.01, n - 0.01, 500)
    mass = lap.cdf(n) - lap.cdf(0)
    assert np.allclose(mech.logpdf(ys), lap.logpdf(ys) - math.log(mass), atol=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0, 10.0])
def test_worst_case_table_e3_and_moments(eps):
    """(m1, m2) values and the worst case of equal pieces far from the bounds: E|err| is
    2 Delta/eps for PLM and (1/(1 - r) - 1/2) Delta for INV, r = e^{-eps/2}."""
    table = {
        0.1: (0.49583, 0.32917, 20.000, 20.004),
        0.5: (0.47919, 0.31270, 4.000, 4.021),
        1.0: (0.45851, 0.29253, 2.000, 2.0415),
        2.0: (0.41802, 0.25407, 1.000, 1.082),
        5.0: (0.31057, 0.15903, 0.400, 0.589),
        10.0: (0.19322, 0.07050, 0.200, 0.507),
    }
    m1, m2, plm_ref, inv_ref = table[eps]
    assert texp_moments(eps) == pytest.approx((m1, m2), abs=1e-5)
    big = 40_000  # count far from the ends: truncation mass exp(-eps*big/2) is nil
    half = int(min(big // 2, 4000 / eps))
    ind = np.r_[np.ones(big // 2), np.zeros(big - big // 2)]
    prof = count_profile(ind).truncated(half)
    plm, inv = PiecewiseLaplaceLaw(prof, eps), InverseSensitivityLaw(prof, eps)
    assert plm.error_mean_abs() == pytest.approx(plm_ref, rel=1e-3)
    assert inv.error_mean_abs() == pytest.approx(inv_ref, rel=1e-3)
    assert plm.error_mse() == pytest.approx(8 / eps**2, rel=1e-3)
    r = math.exp(-eps / 2)
    inv_mse = r * (1 + r) / (1 - r) ** 2 + r / (1 - r) + 1 / 3
    assert inv.error_mse() == pytest.approx(inv_mse, rel=1e-3)


def test_error_functionals_match_monte_carlo():
    prof = median_profile(_data(8, n=31), (-4, 4))
    for cls in (PiecewiseLaplaceLaw, InverseSensitivityLaw):
        mech = cls(prof, 1.0, rho=0.02)
        err = np.abs(mech.sample(100_000, rng=3) - prof.center)
        se1 = err.std() / math.sqrt(err.size)
        se2 = (err**2).std() / math.sqrt(err.size)
        assert abs(err.mean() - mech.error_mean_abs()) < 4 * se1
        assert abs((err**2).mean() - mech.error_mse()) < 4 * se2
        for alpha in (0.01, 0.1, 0.5):
            p = float(mech.error_cdf(alpha))
            assert abs((err <= alpha).mean() - p) < 4 * math.sqrt(p * (1 - p) / err.size) + 1e-9


def test_equivariance():
    """translation, scaling and reflection of data and bounds move the output law."""
    x = _data(9, n=13)
    base = PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=1.0, bounds=(-4, 4))
    ys = np.linspace(-3.9, 3.9, 101)
    moved = PiecewiseLaplaceLaw.for_statistic(2.5 * x + 7, "median", epsilon=1.0, bounds=(-3, 17))
    assert np.allclose(moved.cdf(2.5 * ys + 7), base.cdf(ys), atol=1e-12)
    mirrored = PiecewiseLaplaceLaw.for_statistic(-x, "median", epsilon=1.0, bounds=(-4, 4))
    assert np.allclose(mirrored.cdf(-ys), 1 - base.cdf(ys), atol=1e-12)


def test_mean_variance_sum_quantile_distributions_are_proper():
    x = np.random.default_rng(3).beta(2, 5, 40)
    for stat in ("mean", "sum", "variance", "quantile:0.9"):
        mech = PiecewiseLaplaceLaw.for_statistic(x, stat, epsilon=1.0, bounds=(0, 1))
        lo, hi = mech.support
        assert float(mech.cdf(lo - 1)) == 0.0 and float(mech.cdf(hi)) == 1.0
        assert stats.kstest(mech.sample(5000, rng=4), mech.cdf).pvalue > 1e-3


def test_grid_inverse_sensitivity():
    x = _data(10, n=11)
    prof = median_profile(x, (-4, 4))
    grid = np.linspace(-4, 4, 401)
    mech = GridInverseSensitivityLaw(prof, 1.0, grid)
    assert mech.prob.sum() == pytest.approx(1.0)
    ell = prof.path_length(grid)
    assert np.allclose(mech.log_prob - mech.log_prob.max(), -0.5 * (ell - ell.min()))
    draws = mech.sample(20_000, rng=5)
    assert np.all(np.isin(draws, grid))
    counts = np.array([(draws == g).sum() for g in grid])
    keep = mech.prob * draws.size >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(mech.prob[keep], mech.prob[~keep].sum()) * draws.size
    assert stats.chisquare(obs[exp > 0], exp[exp > 0]).pvalue > 1e-3
    assert mech.logpdf(0.0123) == -np.inf


def test_truncated_variant_is_close_to_exact():
    x = np.random.default_rng(6).normal(size=301).clip(-4, 4)
    full = PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=1.0, bounds=(-4, 4))
    cheap = PiecewiseLaplaceLaw.for_statistic(
        x, "median", epsilon=1.0, bounds=(-4, 4), truncate="auto"
    )
    assert cheap.profile.levels < full.profile.levels
    k = cheap.profile.levels  # levels >= k: the tail pieces
    tail = sum(float(m.density.prob[m.density.level >= k].sum()) for m in (cheap, full))
    # |E_cheap - E_full| <= TV * max |err| <= (tail masses) * (b - a)
    assert abs(cheap.error_mean_abs() - full.error_mean_abs()) <= tail * 8.0
    assert tail < 0.05


def test_error_functionals_by_pieces_equal_the_density_path():
    prof = median_profile(_data(11, n=40, ties=True), (-4, 4))
    for cls in (PiecewiseLaplaceLaw, InverseSensitivityLaw):
        mech = cls(prof, 0.7)
        assert mech.error_mean_abs() == pytest.approx(mech.density.error_mean_abs(), rel=1e-12)
        assert mech.error_mse() == pytest.approx(mech.density.error_mse(), rel=1e-12)


@pytest.mark.parametrize("statistic", ["median", "mean", "variance"])
def test_truncation_tail_is_honoured(statistic):
    """for_statistic(truncate=k, tail=...) keeps levels < k and adds the asked-for tail,
    for the variance too (whose reaches stop at k - 1 from the start)."""
    x = np.random.default_rng(12).beta(2, 5, 60)
    kw = {"epsilon": 1.0, "bounds": (0, 1), "truncate": 3}
    full = PiecewiseLaplaceLaw.for_statistic(x, statistic, epsilon=1.0, bounds=(0, 1)).profile
    end = PiecewiseLaplaceLaw.for_statistic(x, statistic, **kw).profile
    gs = PiecewiseLaplaceLaw.for_statistic(x, statistic, tail="gs", **kw).profile
    assert np.array_equal(end.upper[:3], full.upper[:3])
    assert np.array_equal(end.upper, np.append(full.upper[:3], full.hi))
    assert np.array_equal(end.lower, np.append(full.lower[:3], full.lo))
    step = np.diff(gs.upper[2:-1])  # for the median one GS step already reaches the end
    assert np.allclose(step, full.global_sensitivity, rtol=1e-9)
    assert gs.upper.size > 4 or statistic == "median"
    assert gs.upper[-1] == full.hi and gs.lower[-1] == full.lo
    with pytest.raises(ValidationError, match="only applies to a truncated profile"):
        PiecewiseLaplaceLaw.for_statistic(x, statistic, epsilon=1.0, bounds=(0, 1), tail="gs")

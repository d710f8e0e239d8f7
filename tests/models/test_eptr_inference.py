"""EPTRLinearRegression.results_: API, the sensitivity of the release for the standard errors
(worst-case neighbours, with a negative control), the composition of the guarantee, and the
coverage of the intervals (docs/eptr.md, "Standard errors and intervals of ePTR-OLS")."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

import privest.models.eptr_ols as eptr_ols
from privest.accounting.budget import Budget
from privest.errors import NothingReleasedWarning, ValidationError
from privest.learn.results import FitResults
from privest.models.eptr_inference import (
    float_slack,
    gram_release,
    sandwich_statistics,
)
from privest.models.eptr_ols import EPTRLinearRegression

THETA = np.array([0.5, -0.3, 0.2])


@pytest.fixture
def rng():
    return np.random.default_rng(2026)


def _data(rng, n, theta=THETA, noise=0.3):
    """Heteroscedastic rows inside ||x|| <= sqrt(3), |y| <= 3."""
    X = rng.uniform(-1, 1, (n, theta.size))
    e = noise * rng.standard_normal(n) * (0.5 + X[:, 0] ** 2)
    return X, np.clip(X @ theta + e, -3, 3)


def _model(**kw):
    kw = {"epsilon": 2.0, "x_radius": math.sqrt(3), "theta_radius": 2.0, "y_radius": 3.0, **kw}
    return EPTRLinearRegression(**kw)


def test_results_of_a_release(rng):
    X, y = _data(rng, 50_000)
    m = _model(random_state=1).fit(X, y)
    assert m.released_
    res = m.results_
    assert isinstance(res, FitResults)
    np.testing.assert_array_equal(res.params.to_numpy(), m.coef_)
    se = res.bse.to_numpy()
    assert np.all(se >= m.noise_scale_) and np.all(np.isfinite(se))
    ci = res.conf_int(0.05).to_numpy()
    assert np.all(ci[:, 0] < m.coef_) and np.all(m.coef_ < ci[:, 1])
    text = str(res.summary())
    assert f"{m.guarantee}" in text and "standard errors: 0.1 of epsilon" in text
    assert "robust sandwich" in text


def test_inference_none_spends_nothing_on_standard_errors(rng):
    X, y = _data(rng, 50_000)
    m = _model(random_state=1, inference="none").fit(X, y)
    assert m.released_ and m.results_.bse.isna().all()
    assert m._eptr_epsilon() == pytest.approx(0.9 * 2.0) and m._eptr_delta() == m.delta
    assert "inference='none'" in str(m.results_.summary())
    with pytest.raises(ValidationError, match="inference"):
        _model(inference="hc3").fit(X, y)
    with pytest.raises(ValidationError, match="c0_share"):
        _model(c0_share=0.95).fit(X, y)


def test_nothing_released_gives_no_numbers(rng):
    X, y = _data(rng, 300)
    with pytest.warns(NothingReleasedWarning):
        m = _model(random_state=1, c0=0.1).fit(X, y)
    assert not m.released_
    assert m.results_.params.isna().all() and m.results_.bse.isna().all()
    assert "released nothing" in str(m.results_.summary())


def test_estimate_near_the_sphere_claims_no_interval(rng):
    """theta_radius below the truth's norm: the estimate is projected, so pinned."""
    X, y = _data(rng, 50_000)
    m = _model(random_state=1, theta_radius=0.5).fit(X, y)
    assert m.released_
    assert m.results_.on_bound.all() and m.results_.bse.isna().all()
    text = str(m.results_.summary())
    assert "on bound" in text and "theta_radius sphere" in text
    assert "theta_bounds" not in text  # the DR fits' reason (Thm 5.3) is not this one's


def test_composition_of_the_guarantee(rng, monkeypatch):
    """The three mechanisms fit runs (c0, standard errors, ePTR) add up to the guarantee
    charged to the budget before the data are read: spied from the actual calls."""
    seen = {}
    real_gram, real_step = eptr_ols.sandwich_release, eptr_ols.eptr_step

    def gram(*args):
        seen["se"] = args[5:7]
        return real_gram(*args)

    def step(*args, **kw):
        seen["eptr"] = args[3:5]
        return real_step(*args, **kw)

    monkeypatch.setattr(eptr_ols, "sandwich_release", gram)
    monkeypatch.setattr(eptr_ols, "eptr_step", step)
    X, y = _data(rng, 50_000)
    budget = Budget(epsilon=2.0, delta=1e-6)
    m = _model(random_state=3, budget=budget, delta=1e-6).fit(X, y)
    assert m.released_
    eps_sum = m.epsilon * m.c0_share + seen["se"][0] + seen["eptr"][0]
    assert eps_sum == pytest.approx(2.0) and seen["se"][0] == pytest.approx(0.2)
    assert seen["se"][1] + seen["eptr"][1] == pytest.approx(1e-6)
    assert len(budget.spends) == 1 and budget.spent().epsilon == pytest.approx(2.0)


def _v(X, y, theta, rx, ry):
    S, M, rb = sandwich_statistics(X, y, theta, rx, ry)
    iu = np.triu_indices(X.shape[1])
    return np.concatenate([S[iu] / rx**2, M[iu] / (rx * rb) ** 2]), rb


def _worst_shift(rx, ry, theta, scale_m=None):
    """max ||v(X) - v(X')|| over neighbours that replace one record by an extreme one
    (on the sphere, |y| = R_y, signs making |r| = R_r) and over random pairs."""
    rng = np.random.default_rng(7)
    p = theta.size
    base = rng.uniform(-0.5, 0.5, (50, p)) * rx / math.sqrt(p)
    ybase = rng.uniform(-ry, ry, 50) / 2
    units = [np.eye(p)[j] for j in range(p)] + [theta / np.linalg.norm(theta)]
    units += [u / np.linalg.norm(u) for u in rng.standard_normal((6, p))]
    extremes = [(s * rx * u, -s * ry) for u in units for s in (1.0, -1.0)]
    extremes += [(rx * u, ry * rng.uniform(-1, 1)) for u in units]
    worst = 0.0
    for x_old, y_old in extremes:
        for x_new, y_new in extremes:
            X1, X2 = base.copy(), base.copy()
            y1, y2 = ybase.copy(), ybase.copy()
            X1[0], y1[0], X2[0], y2[0] = x_old, y_old, x_new, y_new
            v1, rb = _v(X1, y1, theta, rx, ry)
            v2, _ = _v(X2, y2, theta, rx, ry)
            if scale_m is not None:  # a wrong normalisation of the M block
                k = p * (p + 1) // 2
                v1[k:], v2[k:] = v1[k:] * scale_m(rb), v2[k:] * scale_m(rb)
            worst = max(worst, float(np.linalg.norm(v1 - v2)))
    return worst


def test_release_sensitivity_is_at_most_two():
    rx, ry, theta = 2.0, 3.0, np.array([0.7, -0.4, 0.2])
    worst = _worst_shift(rx, ry, theta)
    assert worst <= 2.0 * float_slack(51, 3)
    # |r| = R_r needs x along theta, so the two blocks cannot both move by sqrt(2): x along
    # theta with |r| = R_r against x' orthogonal with r' = 0 moves them by sqrt(2) and 1
    assert worst >= math.sqrt(3) * 0.99


def test_release_sensitivity_negative_control():
    """Normalising M by R_x^2 R_y^2 (forgetting the x' theta part of the residual) breaks the
    bound: the check sees it."""
    rx, ry, theta = 2.0, 3.0, np.array([0.7, -0.4, 0.2])
    worst = _worst_shift(rx, ry, theta, scale_m=lambda rb: (rb / ry) ** 2)
    assert worst > 2.0 * float_slack(51, 3) * 1.2


def _hockey_stick(eps, shift, sigma):
    a, b = shift / (2 * sigma), eps * sigma / shift
    return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)


def test_gram_release_noise_meets_its_share():
    """The Gaussian divergence at shift 2 (the sensitivity) and the mechanism's sd is within
    the share of delta; the control at half the sd is not."""
    mech = gram_release(10_000, 3, 0.2, 1e-7)
    sens = 2.0 * float_slack(10_000, 3)
    assert _hockey_stick(0.2, sens, mech.sigma) <= 1e-7
    assert _hockey_stick(0.2, sens, mech.sigma / 2) > 1e-7


def _coverage(rng, releases, n, eps):
    X0, y0 = _data(rng, 20_000, noise=1.0)  # the population
    truth = np.linalg.lstsq(X0, y0, rcond=None)[0]
    full, no_sampling = [], []
    while len(full) < releases:
        idx = rng.integers(0, len(y0), n)
        m = _model(epsilon=eps, random_state=int(rng.integers(2**32)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NothingReleasedWarning)
            m.fit(X0[idx], y0[idx])
        if not m.released_ or m.results_.on_bound.any():
            continue
        se = m.results_.bse.to_numpy()
        full.append(np.abs(m.coef_ - truth) <= 1.959964 * se)
        no_sampling.append(np.abs(m.coef_ - truth) <= 1.959964 * m.noise_scale_)
    return np.mean(full, 0), np.mean(no_sampling, 0)


@pytest.mark.slow
def test_coverage_of_the_intervals():
    """120 releases at n = 2 x 10^4, epsilon 4, where the sampling noise outweighs the ePTR
    noise: every coefficient's coverage within 3 MC SE of 0.95; the control (the
    ePTR noise alone, dropping the released sandwich) undercovers by more than that."""
    rng = np.random.default_rng(2027)
    cov, control = _coverage(rng, 120, 20_000, 4.0)
    se = math.sqrt(0.95 * 0.05 / 120)
    assert np.all(np.abs(cov - 0.95) <= 3 * se), cov
    assert np.all(control < 0.95 - 3 * se), control

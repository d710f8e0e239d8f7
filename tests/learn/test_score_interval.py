"""Score-test intervals (learn/score_interval.py): equal to the Wald interval exactly when
the Hessian and the score covariance do not depend on theta."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privest as pv
from privest.errors import SeededRandomnessWarning
from privest.learn.estimators import DRMEstimator
from privest.learn.losses import TransformedSquaredLoss
from privest.learn.score_interval import score_interval, score_statistic

Z = stats.norm.ppf(0.975)


class Quadratic:
    """An objective 0.5 (t - m)' V (t - m) with a fixed score covariance A (the protocol's
    members the score test reads)."""

    def __init__(self, m, v, a, n):
        self.m, self.v, self.a, self.n = m, v, a, n

    def derivs(self, t):
        r = t - self.m
        return 0.5 * r @ self.v @ r, self.v @ r, self.v

    def score_cov(self, t):
        return self.a


def test_score_interval_is_the_wald_interval_for_a_quadratic_objective():
    rng = np.random.default_rng(0)
    b = rng.normal(size=(3, 3))
    v = b @ b.T + np.eye(3)
    c = rng.normal(size=(3, 3))
    a = c @ c.T + 0.5 * np.eye(3)
    m, n = np.array([0.3, -1.0, 2.0]), 1000
    obj = Quadratic(m, v, a, n)
    vi = np.linalg.inv(v)
    se = np.sqrt(np.diag(vi @ a @ vi) / n)
    for j in range(3):
        lo, hi = score_interval(obj, m, j, se[j])
        np.testing.assert_allclose([lo, hi], [m[j] - Z * se[j], m[j] + Z * se[j]], rtol=1e-6)
        # the statistic at the Wald end is the normal quantile; its sign follows c - m_j
        assert score_statistic(obj, m, j, m[j] + Z * se[j])[0] == pytest.approx(Z)
        assert score_statistic(obj, m, j, m[j] - Z * se[j])[0] == pytest.approx(-Z)
    # negative control: without the nuisance projection w the interval is V_jj-based, wider
    naive = np.sqrt(a[0, 0] / n) / v[0, 0]
    assert not np.isclose(naive, se[0], rtol=1e-2)


def _mean_fit(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (20_000, 1))
    rel = pv.ZILMechanism(lam=0.5, zero_prob=0.3, bounds=(0, 1)).release(
        x, rng=pv.make_rng(seed + 1)
    )
    ident = TransformedSquaredLoss(
        lambda u: u, lambda u: np.ones_like(u), lambda u: np.zeros_like(u), name="mean"
    )
    return rel, DRMEstimator(loss=ident).fit(rel)


def test_score_interval_of_the_mean_example_is_the_estimators_wald_interval():
    """l = (theta - x)^2 on a release: one parameter, a score covariance free of theta."""
    rel, fit = _mean_fit(5)
    for alpha in (0.05, 0.2):
        np.testing.assert_allclose(
            fit.score_conf_int(rel, conf_level=1 - alpha).to_numpy(),
            fit.results_.conf_int(alpha).to_numpy(),
            rtol=1e-6,
        )
    other, _ = _mean_fit(7)
    with pytest.raises(pv.ValidationError, match="not the release"):
        fit.score_conf_int(other)
    median = DRMEstimator(loss="scalar_quantile").fit(rel)  # a check loss: no Newton refits
    with pytest.raises(pv.ValidationError, match="not twice differentiable"):
        median.score_conf_int(rel)


def test_an_end_on_the_box_is_the_box():
    obj = Quadratic(np.zeros(2), np.eye(2), np.eye(2), 100)
    box = np.array([[-0.05, 0.05], [-1.0, 1.0]])
    lo, hi = score_interval(obj, np.zeros(2), 0, 0.1, box=box)
    assert (lo, hi) == (-0.05, 0.05)


@pytest.mark.slow
def test_score_interval_covers_the_income_slope_at_the_readmes_settings():
    """The README's survey and release ((2, 0.3)-DP, zero_prob=0.1), n = 100,000: the income
    slope's score interval covers (|T(truth)| <= z: the test-inversion set covers exactly
    when the test accepts) within 2 Monte Carlo SE of 0.95; control: a false value, five
    times the truth, is accepted in fewer releases than that bound."""
    from privest.learn.losses import LogisticLoss
    from privest.learn.objective import corrected_objective
    from privest.learn.score_interval import constrained_fit

    reps, n = 20, 100_000
    truth = np.array([-4.0, 0.05, 1e-5])
    bounds = {"age": (18, 90), "income": (0, 2e5)}
    mech = pv.ZILMechanism.calibrate(epsilon=2.0, delta=0.3, zero_prob=0.1, bounds=bounds)
    box = np.array([[-10.0, 10.0]] * 3)
    rng = np.random.default_rng(2031)
    score_hits = false_hits = 0
    for _ in range(reps):
        age, income = rng.uniform(18, 90, n), np.minimum(rng.lognormal(10.5, 0.6, n), 2e5)
        y = rng.random(n) < 1 / (1 + np.exp(-(truth[0] + truth[1] * age + truth[2] * income)))
        df = pd.DataFrame({"age": age, "income": income, "y": y.astype(int)})
        with pytest.warns(SeededRandomnessWarning):
            rel = mech.release(df, rng=rng)
        obj = corrected_objective(
            rel, "y", LogisticLoss(fit_intercept=True), "dr", features=list(bounds)
        )
        theta = constrained_fit(obj, truth, None, box=box, steps=100)[0]  # nearest the truth
        score_hits += abs(score_statistic(obj, theta, 2, truth[2], box)[0]) <= Z
        false_hits += abs(score_statistic(obj, theta, 2, 5 * truth[2], box)[0]) <= Z
    mcse = np.sqrt(0.95 * 0.05 / reps)
    assert score_hits / reps >= 0.95 - 2 * mcse
    assert false_hits / reps < 0.95 - 2 * mcse  # the control fails the same bound


class TwoWells:
    """f(c, eta) = (eta^2 - 1)^2 + c eta + c^2 / 2 with a fixed score covariance: for each c
    in (-1.54, 1.54) two constrained minima in eta (a branch near +1, one near -1; the +
    branch folds at c = 8 / 3^1.5), and two global minima, (-r, r) and (r, -r), r = 1.118.
    On a branch T(c) = (eta(c) + c) / sqrt((1 + w^2) a / n), w = -1 / (12 eta^2 - 4)."""

    def __init__(self, a_over_n):
        self.n, self.a = 1, a_over_n * np.eye(2)

    def derivs(self, t):
        c, e = t
        f = (e * e - 1) ** 2 + c * e + c * c / 2
        g = np.array([e + c, 4 * e**3 - 4 * e + c])
        return f, g, np.array([[1.0, 1.0], [1.0, 12 * e * e - 4]])

    def score_cov(self, t):
        return self.a


def _branch_stat(c, a_over_n, sign):
    """T(c) on the branch whose eta has the given sign (the extreme real root of the cubic)."""
    roots = np.roots([4.0, 0.0, -4.0, c])
    e = (max if sign > 0 else min)(r.real for r in roots if abs(r.imag) < 1e-9)
    w = -1 / (12 * e * e - 4)
    return (e + c) / np.sqrt((1 + w * w) * a_over_n)


def test_the_interval_follows_the_branch_of_minima_through_the_estimate():
    """The estimate (-r, r) is on the + branch; the interval's ends are where T along that
    branch crosses z, computed independently from the cubic's root. Control: refits started
    from a fixed far point (eta = -1.5, the other well) give the other branch's T there."""
    r = np.sqrt(1.25)
    estimate, far = np.array([-r, r]), np.array([0.0, -1.5])
    obj = TwoWells(1 / 9)
    lo, hi = score_interval(obj, estimate, 0, se=0.5)
    for end in (lo, hi):
        assert abs(_branch_stat(end, 1 / 9, +1)) == pytest.approx(Z, abs=1e-3)
        assert score_statistic(obj, estimate, 0, end)[0] == pytest.approx(
            _branch_stat(end, 1 / 9, +1), rel=1e-6
        )
    # at the upper end (-0.39) both branches exist (below c = -1.54, the lower end's side,
    # only the + branch does): the other one, where refits from the far point land, rejects
    other = score_statistic(obj, far, 0, hi)[0]
    assert other == pytest.approx(_branch_stat(hi, 1 / 9, -1), rel=1e-6)
    assert abs(other) > Z + 1
    # with a noisier score, T on the + branch stays below z up to its fold: the branch ends
    # before the test rejects, so the upper end is NaN (unbounded); the other branch, which
    # refits from a fixed far point follow, would have given a finite end
    obj = TwoWells(1 / 0.64)
    lo, hi = score_interval(obj, estimate, 0, se=0.5)
    assert np.isfinite(lo) and np.isnan(hi)
    assert abs(_branch_stat(lo, 1 / 0.64, +1)) == pytest.approx(Z, abs=1e-3)
    assert max(abs(_branch_stat(c, 1 / 0.64, +1)) for c in np.linspace(-r, 1.53, 200)) < Z
    assert abs(score_statistic(obj, far, 0, 2.0)[0]) < Z < abs(score_statistic(obj, far, 0, 6.0)[0])


class _OwnDerivatives:
    """An objective's own derivs and score_cov only (the generic path of the refits)."""

    def __init__(self, obj):
        self.obj, self.n = obj, obj.n

    def derivs(self, t):
        return self.obj.derivs(t)

    def score_cov(self, t):
        return self.obj.score_cov(t)


def test_the_fused_kernel_gives_the_intervals_of_the_objectives_own_derivatives():
    """The refits of a DR logistic fit run on the batched solvers' fused kernel; the same
    intervals (NaN ends in the same places, the others within 1e-6 SE) come from the
    objective's own value, gradient and Hessian."""
    from privest.learn.inference import sandwich_cov
    from privest.learn.losses import LogisticLoss
    from privest.learn.objective import corrected_objective
    from privest.learn.score_interval import constrained_fit

    n, truth = 5_000, np.array([-4.0, 0.05, 1e-5])
    bounds = {"age": (18, 90), "income": (0, 2e5)}
    rng = np.random.default_rng(2)
    age, income = rng.uniform(18, 90, n), np.minimum(rng.lognormal(10.5, 0.6, n), 2e5)
    y = rng.random(n) < 1 / (1 + np.exp(-(truth[0] + truth[1] * age + truth[2] * income)))
    df = pd.DataFrame({"age": age, "income": income, "y": y.astype(int)})
    mech = pv.ZILMechanism.calibrate(epsilon=8.0, delta=0.3, zero_prob=0.1, bounds=bounds)
    with pytest.warns(SeededRandomnessWarning):
        rel = mech.release(df, rng=rng)
    obj = corrected_objective(
        rel, "y", LogisticLoss(fit_intercept=True), "dr", features=list(bounds)
    )
    box = np.array([[-30.0, 30.0]] * 3)
    theta = constrained_fit(obj, truth, None, box=box, steps=100)[0]
    se = np.sqrt(np.diag(sandwich_cov(obj, theta)[0]))
    fused = np.array([score_interval(obj, theta, j, se[j], box=box) for j in range(3)])
    assert obj.designs  # the kernel's designs were built: the fused path ran
    own = np.array(
        [score_interval(_OwnDerivatives(obj), theta, j, se[j], box=box) for j in range(3)]
    )
    assert (np.abs(fused) < 30).sum() >= 3  # ends to compare: not NaN, not the box's
    np.testing.assert_array_equal(np.isnan(fused), np.isnan(own))
    np.testing.assert_allclose(fused / se[:, None], own / se[:, None], rtol=0, atol=1e-6)

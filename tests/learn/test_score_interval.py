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
        theta = constrained_fit(obj, truth, None, box, steps=100)[0]  # nearest the truth
        score_hits += abs(score_statistic(obj, theta, 2, truth[2], box)[0]) <= Z
        false_hits += abs(score_statistic(obj, theta, 2, 5 * truth[2], box)[0]) <= Z
    mcse = np.sqrt(0.95 * 0.05 / reps)
    assert score_hits / reps >= 0.95 - 2 * mcse
    assert false_hits / reps < 0.95 - 2 * mcse  # the control fails the same bound

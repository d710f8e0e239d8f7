"""The two Hessian releases of the default logistic standard errors (issue 27 item 4;
privest.models.logistic_inference, docs/central-models.md, "Epsilon 1: which term is
short"): the public rule, the accounting, the points, the pooled Hessian, and the noise
term on a fixed sample by Monte Carlo (the control: the one release at theta_H fails it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import privest as pv
import privest.models.logistic as logistic_module
from privest.models import logistic_inference as li


def _binary(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    return X, (rng.random(n) < expit(0.5 + X @ np.array([1.0, -1.0]))).astype(int)


def test_the_split_rule_is_public_and_keeps_one_release_elsewhere() -> None:
    """Two classes from n x epsilon = 10^4 on (where the default gives standard errors):
    the first release gets SPLIT_FIRST of the Hessian's rho; K >= 3 classes and smaller
    n x epsilon keep the one release at theta_H."""
    assert li.split_share(10_000, 1.0, 5, 2) == li.SPLIT_FIRST > 0
    assert li.split_share(2_000, 4.0, 3, 2) == 0.0
    assert li.split_share(10_000, 0.5, 3, 2) == 0.0
    assert li.split_share(100_000, 1.0, 3, 3) == 0.0


@pytest.mark.parametrize(
    ("n", "kw", "hessians"),
    [(10_000, {}, 2), (3_000, {"inference": "sandwich"}, 1), (10_000, {"cov_type": "HC0"}, 1)],
)
def test_the_two_releases_are_inside_the_stated_guarantee(
    n: int, kw: dict, hessians: int, counted_releases
) -> None:
    """Where the rule splits, the Hessian's share SANDWICH_SHARE of rho is spent by two
    releases (SPLIT_FIRST and the rest of it), and the X'X release, the 20 gradients and the
    two together spend exactly the rho of (epsilon, delta), charged once before the data
    are read; elsewhere one release (below the rule; ``cov_type="HC0"``, whose Hessian
    shares its part with the scores)."""
    from privest.accounting.zcdp import zcdp_rho_for

    spent = counted_releases
    X, y = _binary(n, 4)
    budget = pv.Budget(1.0, 1e-6)
    est = pv.PrivateLogisticRegression(bounds=(-1, 1), budget=budget, random_state=0, **kw)
    res = est.fit(X, y).results_
    rho = zcdp_rho_for(1.0, 1e-6)
    assert sum(spent) == pytest.approx(rho, rel=1e-12) and len(budget.spends) == 1
    assert len(spent) == 21 + hessians + (kw.get("cov_type") == "HC0")
    if hessians == 2:
        h = li.SANDWICH_SHARE * rho
        assert spent[-2:] == pytest.approx([li.SPLIT_FIRST * h, (1.0 - li.SPLIT_FIRST) * h])
    assert res.bse.notna().all()


def test_the_split_leaves_the_fit_and_moves_only_results(monkeypatch) -> None:
    """The fit (``coef_``) is released before either Hessian, so the rule never changes it;
    with the split off (SPLIT_FIRST = 0) ``results_`` is the one release's."""
    X, y = _binary(10_000, 7)
    split = pv.PrivateLogisticRegression(bounds=(-1, 1), random_state=3).fit(X, y)
    monkeypatch.setattr(li, "SPLIT_FIRST", 0.0)
    one = pv.PrivateLogisticRegression(bounds=(-1, 1), random_state=3).fit(X, y)
    assert np.array_equal(split.coef_, one.coef_)
    assert np.array_equal(split.intercept_, one.intercept_)
    assert not np.array_equal(split.results_.params, one.results_.params)


def test_lead_point_is_the_newton_step_and_pooling_weighs_by_precision() -> None:
    """With the exact Hessian of a quadratic the lead point is its minimiser from any
    iterates; the pooled Hessian weighs each release by 1 / s_H^2 and has the noise sd of
    one release at the two shares' sum."""
    Hq = np.array([[30.0, 10.0], [10.0, 20.0]])
    hat = np.array([1.0, -2.0])
    thetas = np.array([[0.0, 0.0], [0.5, -1.0], [0.8, -1.5], [0.9, -1.9]])
    grads = (thetas - hat) @ Hq
    assert li.lead_point(thetas, grads, Hq, 0.01) == pytest.approx(hat)
    H1, H2 = np.eye(2), 3 * np.eye(2)
    pooled, sd = li.combine_hessians((H1, 2.0), (H2, 1.0))
    assert pooled == pytest.approx((H1 / 4 + H2) / 1.25) and sd == pytest.approx(1.25**-0.5)
    # shares 1/4, 3/4 of one rho: sd 2 s and 2 s / sqrt 3 pool to s
    assert li.combine_hessians((H1, 2.0), (H2, 2.0 / math.sqrt(3.0)))[1] == pytest.approx(1.0)


def _noise_ratio(first: float, reps: int, monkeypatch) -> np.ndarray:
    """Per coefficient, the mean squared error of the released estimate around the fixed
    sample's own maximum likelihood estimate over the mean reported privacy noise part
    (``one_step_cov(noise_only=True)``), over ``reps`` seeds of the default at epsilon 1."""
    import functools

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, [1, 8]]
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    idx = np.random.default_rng(5).integers(0, len(y), 10_000)
    X, y = X[idx], y[idx]
    mle = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    hat = np.r_[mle.intercept_, mle.coef_[0]]
    monkeypatch.setattr(li, "SPLIT_FIRST", first)
    noise_only = functools.partial(li.one_step_cov, noise_only=True)
    monkeypatch.setattr(logistic_module, "one_step_cov", noise_only)
    err, var = [], []
    with threadpool_limits(1):
        for r in range(reps):
            res = pv.PrivateLogisticRegression(bounds=(-1, 1), random_state=r).fit(X, y).results_
            err.append(res.params.to_numpy() - hat)
            var.append(res.bse.to_numpy() ** 2)
    given = ~np.isnan(var).any(axis=1)  # withheld standard errors: not in the ratio
    assert given.mean() >= 0.99
    err, var = np.array(err)[given], np.array(var)[given]
    return np.mean(np.square(err), axis=0) / np.mean(var, axis=0)


@pytest.mark.slow
def test_noise_part_matches_the_spread_around_the_samples_fit(monkeypatch) -> None:
    """Breast cancer (texture, symmetry), one resample of 10^4 records, epsilon 1, 1,000
    seeds: the released estimate's mean squared error around the sample's own fit is within
    3.5 Monte Carlo se (relative se of a variance ratio about sqrt(2 / reps)) of the reported
    noise part on every coefficient (measured 0.86, 0.96, 1.00 against 0.84-1.16: conservative
    on symmetry, docs/central-models.md); one release at theta_H
    (the path before the split) reports 18-23% too little on two coefficients and fails the
    first check (the control)."""
    reps = 1000
    tol = 3.5 * math.sqrt(2.0 / reps)
    split = _noise_ratio(li.SPLIT_FIRST, reps, monkeypatch)
    assert np.all(np.abs(split - 1.0) <= tol), (split, tol)
    one = _noise_ratio(0.0, reps, monkeypatch)
    assert np.max(one) > 1.0 + tol, (one, tol)


@pytest.mark.parametrize("steps", [2, 3, 5])
def test_short_paths_split_on_the_steps_there_are(steps: int) -> None:
    """A public ``max_iter`` shorter than the window plus SPLIT_LEAD: the lead point uses
    the steps before the window there are (max_iter >= 2: at least one); the standard
    errors are finite."""
    X, y = _binary(20_000, 9)
    est = pv.PrivateLogisticRegression(bounds=(-1, 1), max_iter=steps, random_state=0)
    res = est.fit(X, y).results_
    assert np.isfinite(res.params).all() and res.bse.notna().all()

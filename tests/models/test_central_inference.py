"""results_ of the central models: coverage of the population coefficients over many releases
on real data (docs/central-models.md, "Standard errors"), a negative control, the summary's
guarantee and ``domain=``.

Coverage: a data set shipped with scikit-learn is the population; each replication resamples
n records with replacement and fits once; the truth is the population's non-private fit.
Tolerances are Monte Carlo: 3.5 standard errors of a proportion at 0.95 over the replications,
on both sides (undercoverage and overcoverage fail).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.datasets import load_diabetes
from threadpoolctl import threadpool_limits

import privest as pv
from privest.errors import BoundsError, ValidationError
from privest.models.linear_inference import ridge_free_solve, simulated_cov

#: bmi, bp, s5: a design whose noisy Gram is well conditioned at n = 1e4, epsilon 1
DIABETES_COLS = [2, 3, 8]
Z = 1.959963984540054


def _tolerance(reps: int) -> float:
    return 3.5 * math.sqrt(0.95 * 0.05 / reps)


def _diabetes() -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[float, float], np.ndarray]:
    X, y = load_diabetes(return_X_y=True)
    X = X[:, DIABETES_COLS]
    bounds = np.column_stack([X.min(0), X.max(0)])
    D = np.column_stack([np.ones(len(y)), X])
    truth = np.linalg.lstsq(D, y, rcond=None)[0]
    return X, y, bounds, (float(y.min()), float(y.max())), truth


def _linear_coverage(n: int, epsilon: float, reps: int, seed: int) -> dict[str, np.ndarray]:
    """Per replication and coefficient: covered by the sandwich interval, by the noise-only
    interval (slopes only), and the width ratio to the non-private OLS interval."""
    X, y, bounds, y_bounds, truth = _diabetes()
    rng = np.random.default_rng(seed)
    full, noise_only, ratio = [], [], []
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        m = pv.PrivateLinearRegression(
            epsilon=epsilon, delta=1e-6, bounds=bounds, y_bounds=y_bounds, random_state=r
        ).fit(X[idx], y[idx])
        ci = m.results_.conf_int().to_numpy()
        full.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        p = X.shape[1]
        rel = m.released_stats_
        theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
        noise = simulated_cov(theta, rel, np.random.default_rng(r), sampling=False)
        se0 = np.sqrt(np.diag(noise)[:p])
        noise_only.append(np.abs(theta[:p] - truth[1:]) <= Z * se0)
        D = np.column_stack([np.ones(n), X[idx]])
        Q = np.linalg.inv(D.T @ D)
        resid = y[idx] - D @ (Q @ D.T @ y[idx])
        se_ols = np.sqrt(resid @ resid / (n - p - 1) * np.diag(Q))
        ratio.append(m.results_.bse.to_numpy() / se_ols)
    return {"full": np.array(full), "noise_only": np.array(noise_only), "ratio": np.array(ratio)}


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_linear_coverage_on_diabetes(epsilon: float) -> None:
    reps = 600
    with threadpool_limits(1):
        out = _linear_coverage(10_000, epsilon, reps, seed=27)
    cover = out["full"].mean(axis=0)
    tol = _tolerance(reps)
    assert np.all(np.abs(cover - 0.95) <= tol), (cover, tol)
    assert np.all(out["ratio"].mean(axis=0) >= 1.0)  # privacy never narrows the interval


@pytest.mark.slow
def test_noise_only_interval_undercovers() -> None:
    """Negative control: the noise-only interval (sampling ignored) misses the population
    coefficients at epsilon 8, where sampling dominates; the coverage test would catch it."""
    reps = 300
    with threadpool_limits(1):
        out = _linear_coverage(10_000, 8.0, reps, seed=5)
    assert np.all(out["noise_only"].mean(axis=0) < 0.95 - _tolerance(reps))
    assert np.all(np.abs(out["full"].mean(axis=0) - 0.95) <= _tolerance(reps))


def _logistic_fit(X: np.ndarray, y: np.ndarray, r: int, **kw) -> pv.PrivateLogisticRegression:
    kw.setdefault("inference", "bootstrap")
    kw.setdefault("method", "noisy_gd")  # the bootstrap's fit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.NoStandardErrorsWarning)
        return pv.PrivateLogisticRegression(
            epsilon=1.0, delta=1e-6, bounds=(-1, 1), random_state=r, **kw
        ).fit(X, y)


@pytest.mark.slow
def test_logistic_coverage_where_the_design_model_holds() -> None:
    """The bootstrap's machinery: normal features (its design model) and a logistic
    response, so the shrinkage of the T steps is undone on the right design. (On breast
    cancer the design model misjudges it: docs/central-models.md, measured 0.88 at n 2000.)"""
    reps, n, truth = 300, 1000, np.array([-0.5, 1.5, -1.0])
    rng = np.random.default_rng(3)
    covered = []
    with threadpool_limits(1):
        for r in range(reps):
            X = np.clip(rng.normal(0.0, 0.4, (n, 2)), -1, 1)
            y = (rng.random(n) < expit(truth[0] + X @ truth[1:])).astype(int)
            ci = _logistic_fit(X, y, r).results_.conf_int().to_numpy()
            covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    cover = np.mean(covered, axis=0)
    assert np.all(np.abs(cover - 0.95) <= _tolerance(reps)), cover


def test_summary_states_the_guarantee_and_how_it_was_spent() -> None:
    X, y, bounds, y_bounds, _ = _diabetes()
    lin = pv.PrivateLinearRegression(
        epsilon=1.0, delta=1e-6, bounds=bounds, y_bounds=y_bounds, random_state=0, method="adassp"
    ).fit(X, y)
    text = str(lin.results_.summary())
    assert str(lin.guarantee) in text and "the fit spent it" in text
    assert "noise-aware sandwich" in text
    assert list(lin.results_.params.index) == ["intercept", "x0", "x1", "x2"]
    assert lin.results_.pvalues.between(0, 1).all()
    rng = np.random.default_rng(0)
    Xl = rng.uniform(-1, 1, (3000, 2))
    yl = (rng.random(3000) < expit(Xl @ np.array([1.0, -1.0]))).astype(int)
    clf = _logistic_fit(Xl, yl, 0)
    text = str(clf.results_.summary())
    assert str(clf.guarantee) in text and "parametric bootstrap" in text


def test_inference_none_spends_nothing_on_standard_errors() -> None:
    X, y, bounds, y_bounds, _ = _diabetes()
    lin = pv.PrivateLinearRegression(
        epsilon=1.0, bounds=bounds, y_bounds=y_bounds, inference="none", random_state=0
    ).fit(X, y)
    assert lin.results_.bse.isna().all() and "yy" not in lin.released_stats_
    assert "no standard errors" in str(lin.results_.summary())
    assert lin.results_.params.iloc[1:].to_numpy() == pytest.approx(lin.coef_)
    clf = _logistic_fit(X[:, :2] / 0.2, (y > 140).astype(int), 0, inference="none")
    assert clf.results_.bse.isna().all() and not hasattr(clf, "released_gram_")


@pytest.mark.parametrize("model", ["linear", "logistic"])
def test_domain_is_the_same_as_bounds(model: str) -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (500, 2))
    if model == "linear":
        y = np.clip(X @ np.array([0.5, -0.3]) + 0.1 * rng.standard_normal(500), -2, 2)
        make = lambda **kw: pv.PrivateLinearRegression(y_bounds=(-2, 2), random_state=4, **kw)  # noqa: E731
    else:
        y = (rng.random(500) < expit(2 * X[:, 0])).astype(int)
        make = lambda **kw: pv.PrivateLogisticRegression(random_state=4, **kw)  # noqa: E731
    a = make(bounds=(-1, 1)).fit(X, y)
    b = make(domain=pv.Domain(bounds=(-1, 1))).fit(X, y)
    c = make(domain=pv.Domain(bounds=(-1, 1)), bounds=(-1, 1)).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.coef_, c.coef_)
    frame = pd.DataFrame(X, columns=["u", "v"])
    named = make(domain=pv.Domain(bounds={"v": (-1, 1), "u": (-1, 1)})).fit(frame, y)
    assert np.array_equal(a.coef_, named.coef_)
    with pytest.raises(ValidationError, match="given twice"):
        make(domain=pv.Domain(bounds=(-1, 1)), bounds=(-2, 2)).fit(X, y)
    with pytest.raises(BoundsError, match="no bounds for the column"):
        make(domain=pv.Domain(bounds={"u": (-1, 1)})).fit(frame, y)
    with pytest.raises(ValidationError, match="swap neighbours"):
        make(domain=pv.Domain(bounds=(-1, 1), neighbours="add_remove")).fit(X, y)


@pytest.mark.parametrize("model", ["linear", "logistic"])
@pytest.mark.parametrize("inference", ["with", "none"])
def test_releases_spend_exactly_the_fit_budget(
    model: str, inference: str, counted_releases
) -> None:
    """Every release (a lattice Gaussian's .release) is counted at its zCDP rho: the fit and
    the releases the standard errors need together spend the rho of (epsilon, delta), and
    the bootstrap's reruns release nothing."""
    from privest.accounting.zcdp import zcdp_rho_for

    spent = counted_releases
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (2000, 2))
    kw = {"inference": "sandwich" if model == "linear" else "bootstrap"}
    if inference == "none":
        kw = {"inference": "none"}
    if model == "linear":
        y = np.clip(X @ np.array([0.5, -0.3]) + 0.2 * rng.standard_normal(2000), -2, 2)
        est = pv.PrivateLinearRegression(
            epsilon=1.0, delta=1e-6, bounds=(-1, 1), y_bounds=(-2, 2), method="adassp", **kw
        )
    else:
        y = (rng.random(2000) < expit(X @ np.array([1.0, -1.0]))).astype(int)
        est = pv.PrivateLogisticRegression(
            epsilon=1.0, delta=1e-6, bounds=(-1, 1), method="noisy_gd", **kw
        )
    est.set_params(random_state=0).fit(X, y)
    assert sum(spent) == pytest.approx(zcdp_rho_for(1.0, 1e-6), rel=1e-12)
    # linear: AdaSSP's three releases, then y'y and the residual-weighted Gram
    expected = {"linear": 5, "logistic": 31}[model] - {"linear": 2, "logistic": 1}[model] * (
        inference == "none"
    )
    assert len(spent) == expected

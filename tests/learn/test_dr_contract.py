"""The scikit-learn contract of the release-fitting estimators (learn/estimators.py).

They take a ZILRelease, not (X, y), so scikit-learn's check_estimator does not apply; the
parts of the contract that do are checked here: NotFittedError, labels from ``predict``,
``predict_proba``, ``decision_function``, ``score``, ``classes_``, ``feature_names_in_``
from the release's columns, and a fitted state that does not carry the release.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logit
from sklearn.exceptions import NotFittedError
from sklearn.metrics import accuracy_score, r2_score

import privest as pv
from privest.learn.estimators import (
    DRHingeClassifier,
    DRLinearRegression,
    DRLogisticRegression,
    DRMEstimator,
    DRQuantileRegressor,
)


def _release(n: int, seed: int = 0) -> tuple[pv.ZILRelease, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.5 + 2 * df.x1 - 2 * df.x2)))).astype(int)
    df["income"] = 3 + 2 * df.x1 + rng.normal(0, 1, n)
    mech = pv.ZILMechanism(lam=0.2, zero_prob=0.3, bounds={"x1": (-1, 1), "x2": (-1, 1)})
    return mech.release(df, rng=seed + 1), df


@pytest.mark.parametrize(
    "cls",
    [
        DRMEstimator,
        DRLinearRegression,
        DRLogisticRegression,
        DRQuantileRegressor,
        DRHingeClassifier,
    ],
)
def test_not_fitted_error(cls):
    with pytest.raises(NotFittedError):
        cls().predict(np.zeros((2, 2)))
    with pytest.raises(NotFittedError):
        cls().summary()


def test_logistic_predicts_labels_and_probabilities():
    rel, df = _release(4000)
    fit = DRLogisticRegression(features=["x1", "x2"], inference="none").fit(rel, "y")
    X = df[["x1", "x2"]]
    proba = fit.predict_proba(X)
    labels = fit.predict(X)
    assert list(fit.classes_) == [0, 1] and set(np.unique(labels)) <= {0, 1}
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(labels, fit.classes_[(proba[:, 1] > 0.5).astype(int)])
    np.testing.assert_allclose(fit.decision_function(X), logit(proba[:, 1]), atol=1e-9)
    assert fit.score(X, df["y"]) == pytest.approx(accuracy_score(df["y"], labels))
    assert fit.score(X, df["y"]) > 0.65  # Bayes accuracy of this design is about 0.73


@pytest.mark.parametrize(("negative", "labels"), [(0, [0, 1]), (-1, [-1, 1])])
def test_hinge_predicts_the_labels_it_was_fitted_on(negative, labels):
    rel, df = _release(1500)
    y = np.where(df["y"] == 1, 1, negative)
    fit = DRHingeClassifier(features=["x1", "x2"], inference="none").fit(rel, y)
    pred = fit.predict(df[["x1", "x2"]])
    assert list(fit.classes_) == labels and set(np.unique(pred)) == set(labels)
    assert fit.score(df[["x1", "x2"]], y) > 0.6


def test_regressor_score_is_r2_and_feature_names_come_from_the_release():
    rel, df = _release(3000)
    fit = DRLinearRegression(features=["x1", "x2"], inference="none").fit(rel, "income")
    assert list(fit.feature_names_in_) == ["x1", "x2"] and fit.n_features_in_ == 2
    X = df[["x1", "x2"]]
    assert fit.score(X, df["income"]) == pytest.approx(r2_score(df["income"], fit.predict(X)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an array is taken in the release's order, quietly
        np.testing.assert_allclose(fit.predict(X.to_numpy()), fit.predict(X))
    with pytest.raises(ValueError, match="same order"):
        fit.predict(df[["x2", "x1"]])
    with pytest.raises(ValueError, match="2 features"):
        fit.predict(df[["x1"]].to_numpy())


def test_fitted_state_does_not_carry_the_release():
    """The pickle of a fit is a few KB whatever n; the release's grows with n."""
    sizes = {}
    for n in (2_000, 20_000):
        rel, _ = _release(n)
        fit = DRLinearRegression(features=["x1", "x2"]).fit(rel, "income")
        sizes[n] = (len(pickle.dumps(fit)), len(pickle.dumps(rel)))
    assert sizes[20_000][1] > 9 * sizes[2_000][1]  # negative control: data scale with n
    assert sizes[20_000][0] == pytest.approx(sizes[2_000][0], abs=64) and sizes[20_000][0] < 10_000

"""The scikit-learn contract of the IWP-SGD estimators (issue: estimators that behave like
scikit-learn): ``check_estimator`` on clean arrays (``method="oracle"``, the form that takes
(X, y)), and the same contract on a release where it applies."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from privest.learn.iwp_sgd import IWPSGDClassifier, IWPSGDRegressor
from privest.release.examples import release_examples, release_regression_examples


@parametrize_with_checks(
    [
        IWPSGDClassifier(method="oracle", progress=False),
        IWPSGDRegressor(method="oracle", progress=False),
    ]
)
def test_check_estimator(estimator, check):
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        _array_api_check_in_a_fresh_process(estimator)  # needs SCIPY_ARRAY_API at import
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on the checks' tiny data sets
        check(estimator)


def _array_api_check_in_a_fresh_process(estimator) -> None:
    """scikit-learn skips check_array_api_input unless SCIPY_ARRAY_API=1 was set before
    scipy was imported: run it in a subprocess with the variable set."""
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "from sklearn.utils.estimator_checks import check_array_api_input\n"
        "from privest.learn.iwp_sgd import IWPSGDClassifier, IWPSGDRegressor\n"
        f"est = {type(estimator).__name__}(method='oracle', progress=False)\n"
        "check_array_api_input(type(est).__name__, est, array_namespace='numpy', "
        "expect_only_array_outputs=False)\n"
        "print('ok')\n"
    )
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def _release(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    y = np.where(X @ np.array([1.0, -0.5, 0.2]) > 0, "yes", "no")
    rel = release_examples(X, y, epsilon_x=8.0, epsilon_y=2.0, delta=1e-5, bounds=(-1, 1),
                           calibration="analytic", rng=seed + 1)  # fmt: skip
    return X, y, rel


def test_release_fit_follows_the_contract_where_it_applies():
    X, y, rel = _release()
    est = IWPSGDClassifier(progress=False)
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(TypeError):
        IWPSGDClassifier("logistic")  # keyword-only parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(rel)
    assert est.n_features_in_ == 3 and not hasattr(est, "feature_names_in_")
    assert list(est.classes_) == ["no", "yes"]
    pred = est.predict(X)
    assert set(pred) <= {"no", "yes"}  # labels, not scores
    assert 0.0 <= est.score(X, y) <= 1.0
    assert est.predict_proba(X).shape == (len(X), 2)
    with pytest.raises(ValueError, match="3 features"):
        est.predict(X[:, :2])
    # a release with another number of columns cannot continue the fit
    rng = np.random.default_rng(3)
    X4 = rng.uniform(-1, 1, (500, 4))
    rel4 = release_examples(X4, np.sign(X4[:, 0]), epsilon_x=8.0, epsilon_y=2.0, delta=1e-5,
                            bounds=(-1, 1), calibration="analytic", rng=4)  # fmt: skip
    with pytest.raises(ValueError, match="expecting 3 features"):
        est.partial_fit(rel4)


def test_oracle_keeps_feature_names_and_refuses_reordered_columns():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-1, 1, (600, 3)), columns=["a", "b", "c"])
    y = (df["a"] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = IWPSGDClassifier(method="oracle", progress=False).fit(df, y, bounds=(-1, 1))
        reg = IWPSGDRegressor(method="oracle", progress=False).fit(df, df["a"].to_numpy())
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    assert list(reg.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="order"):
        est.predict(df[["c", "b", "a"]])
    with pytest.raises(ValueError, match="Only binary"):
        IWPSGDClassifier(method="oracle", progress=False).fit(df, np.arange(600) % 3)


def test_regressor_on_a_release_raises_not_fitted_and_checks_columns():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (3000, 2))
    t = np.clip(X @ np.array([0.5, -0.3]), -1, 1)
    rr = release_regression_examples(X, t, epsilon_x=8.0, epsilon_y=4.0, delta_x=5e-6,
                                     delta_y=5e-6, y_bounds=(-1, 1), bounds=(-1, 1),
                                     calibration="analytic", rng=2)  # fmt: skip
    reg = IWPSGDRegressor(progress=False)
    with pytest.raises(NotFittedError):
        reg.predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.fit(rr)
    assert reg.predict(X).shape == (3000,) and np.isfinite(reg.score(X, t))
    with pytest.raises(ValueError, match="2 features"):
        reg.predict(np.ones((3, 5)))

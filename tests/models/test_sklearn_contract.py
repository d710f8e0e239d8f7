"""The scikit-learn contract of every estimator that takes (X, y) (privest.sklearn_contract).

``parametrize_with_checks`` runs scikit-learn's own estimator checks; a check a class
cannot pass for a privacy reason is listed in its ``_sklearn_expected_failures`` (and
explained in its docstring) and runs as an expected failure. Other estimator families
add an instance to ``CONTRACT_ESTIMATORS``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, MinMaxScaler, StandardScaler
from sklearn.utils.estimator_checks import estimator_checks_generator

import privest as pv
from privest.models import EPTRKernelRegressor

#: bounds that cover scikit-learn's check data (standardised, |x| < 5) and a large epsilon:
#: the checks test the interface, not privacy, and need accurate fits (score > 0.5)
B = 5.0
CONTRACT_ESTIMATORS = [
    pv.PrivateLinearRegression(
        epsilon=1e3, bounds=(-B, B), y_bounds=(-B, B), clip=True, random_state=0
    ),
    pv.PrivateLogisticRegression(epsilon=1e3, bounds=(-B, B), clip=True, random_state=0),
    pv.EPTRBayesClassifier(  # with its results_ release (issue 27)
        epsilon=1e3,
        classes=[0, 1, 2],
        x_radius=4 * B,
        clip=True,
        random_state=0,
        inference="sandwich",
    ),
    pv.EPTRLinearRegression(  # delta 0.01 (the default before issue 30): a sure release
        epsilon=1e3,
        delta=0.01,
        x_radius=B,
        theta_radius=10,
        y_radius=B,
        clip=True,
        random_state=0,
    ),
    EPTRKernelRegressor(
        query_points=np.zeros((1, 1)),
        epsilon=50,
        bounds=(-B, B),
        y_radius=B,
        clip=True,
        random_state=0,
    ),
]


def _expected_failures(estimator) -> dict[str, str]:
    return dict(getattr(estimator, "_sklearn_expected_failures", {}))


def _checks():
    """scikit-learn's checks as ``parametrize_with_checks`` yields them (expected failures
    marked strict xfail: one that passes fails the test), without ``check_array_api_input``:
    privest does not support the array API and that check only skips unless SCIPY_ARRAY_API
    is set."""
    for est in CONTRACT_ESTIMATORS:
        for item in estimator_checks_generator(
            est,
            legacy=True,
            expected_failed_checks=_expected_failures(est),
            mark="xfail",
            xfail_strict=True,
        ):
            values, marks = (item.values, item.marks) if hasattr(item, "marks") else (item, ())
            name = getattr(values[1], "func", values[1]).__name__
            if name != "check_array_api_input":
                yield pytest.param(*values, marks=marks, id=f"{type(est).__name__}-{name}")


@pytest.mark.parametrize(("estimator", "check"), list(_checks()))
def test_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.NothingReleasedWarning)
        check(estimator)


@pytest.mark.parametrize("cls", [pv.PrivateLogisticRegression, pv.EPTRBayesClassifier])
def test_expected_failures_are_explained(cls):
    """Every check a classifier is excused from is named in its docstring."""
    for name in cls._sklearn_expected_failures:
        assert name in inspect.getdoc(cls).replace("\n", " "), name


DR_CLASSES = [
    pv.DRMEstimator,
    pv.DRLogisticRegression,
    pv.DRLinearRegression,
    pv.DRQuantileRegressor,
    pv.DRHingeClassifier,
]


@pytest.mark.parametrize(
    "cls", [type(e) for e in CONTRACT_ESTIMATORS] + DR_CLASSES, ids=lambda c: c.__name__
)
def test_parameters_are_keyword_only(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert params and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    with pytest.raises(TypeError):
        cls(1.0)


def _frame(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, (n, 2)), columns=["age", "income"])
    y = np.clip(0.5 * X["age"] - 0.3 * X["income"] + 0.1 * rng.standard_normal(n), -1, 1)
    return X, y.to_numpy()


def test_feature_names_are_checked_at_predict():
    X, y = _frame()
    m = pv.PrivateLinearRegression(
        epsilon=5.0, bounds=(-1, 1), y_bounds=(-1, 1), random_state=0
    ).fit(X, y)
    assert list(m.feature_names_in_) == ["age", "income"]
    assert m.predict(X).shape == (len(X),)
    with pytest.raises(ValueError, match="same order"):
        m.predict(X[["income", "age"]])
    with pytest.raises(NotFittedError):
        pv.PrivateLinearRegression(bounds=(-1, 1), y_bounds=(-1, 1)).predict(X)


def _linear():
    return pv.PrivateLinearRegression(
        epsilon=1.0, bounds=(-1, 1), y_bounds=(-1, 1), clip=True, random_state=0
    )


def _habit_warnings(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, pv.PrivacyHabitWarning)]


def test_data_dependent_scaler_in_pipeline_warns():
    X, y = _frame()
    for scaler in (StandardScaler(), MinMaxScaler()):
        msgs = _habit_warnings(lambda s=scaler: make_pipeline(s, _linear()).fit(X, y))
        assert len(msgs) == 1 and type(scaler).__name__ in msgs[0]
    # negative control: scaling by public constants, and the estimator alone, are quiet
    public = FunctionTransformer(lambda a: np.asarray(a) / 2.0)
    assert _habit_warnings(lambda: make_pipeline(public, _linear()).fit(X, y)) == []
    assert _habit_warnings(lambda: _linear().fit(X, y)) == []


def test_grid_search_warns_with_the_total_spent():
    X, y = _frame()
    search = GridSearchCV(_linear(), {"method": ["adassp", "eptr"]}, cv=3)
    msgs = _habit_warnings(lambda: search.fit(X, y))
    # 2 candidates x 3 folds + 1 refit = 7 fits of epsilon 1 and delta 1e-6
    assert msgs and all("7 fits" in m and "epsilon=7" in m for m in msgs)
    varied = GridSearchCV(_linear(), {"epsilon": [0.5, 1.0]}, cv=2)
    msgs = _habit_warnings(lambda: varied.fit(X, y))
    assert msgs and "5 fits" in msgs[0] and "sum of their candidates'" in msgs[0]
    msgs = _habit_warnings(lambda: cross_val_score(_linear(), X, y, cv=3))
    assert msgs and "cross-validation" in msgs[0]


def test_grid_search_spends_the_shared_budget():
    """With a budget the search's clones charge one account and the total is capped."""
    X, y = _frame()
    budget = pv.Budget(epsilon=4.0, delta=1e-5)
    est = pv.PrivateLinearRegression(
        epsilon=1.0, bounds=(-1, 1), y_bounds=(-1, 1), random_state=0, budget=budget
    )
    with pytest.warns(pv.PrivacyHabitWarning, match="budget is charged"):
        cross_val_score(est, X, y, cv=3)
    assert len(budget.spends) == 3
    with pytest.raises(pv.BudgetExceededError), warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.PrivacyHabitWarning)
        cross_val_score(est, X, y, cv=3, error_score="raise")

"""Every fit runs on the BLAS threads of privest._threads: one by default, else what
PRIVEST_BLAS_THREADS says (docs/central-models.md, "Threads")."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import privest as pv
from privest import _threads
from privest.errors import ValidationError
from privest.learn import iwp_sgd, solvers
from privest.models import eptr_bayes, eptr_nw, eptr_ols, linear, logistic


def _blas_threads() -> set[int]:
    return {
        lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers
    }


def _fit_logistic() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 3))
    y = (X[:, 0] > 0).astype(int)
    pv.PrivateLogisticRegression(epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X, y)


def _fit_linear() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 3))
    y = np.clip(X.sum(axis=1), -3, 3)
    pv.PrivateLinearRegression(epsilon=1.0, bounds=(-1, 1), y_bounds=(-3, 3), random_state=0).fit(
        X, y
    )


def _fit_dr() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 400)
    z = 0.5 * x + rng.normal(size=400)
    import pandas as pd

    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={"x": (-1, 1)})
    with pytest.warns(UserWarning):  # a seeded release: for tests only
        rel = mech.release(pd.DataFrame({"x": x, "z": z}), rng=0)
    pv.DRQuantileRegressor(features=["x"]).fit(rel, "z")


def _data(n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 2))
    return X, np.clip(X.sum(axis=1) + 0.1 * rng.normal(size=n), -2, 2)


def _fit_eptr_ols() -> None:
    X, y = _data()
    model = pv.EPTRLinearRegression(epsilon=1.0, x_radius=2, y_radius=2, c0=0.1, random_state=0)
    with warnings.catch_warnings():  # 400 rows may release nothing: the fit still ran
        warnings.simplefilter("ignore", pv.NothingReleasedWarning)
        model.fit(X, y)


def _fit_eptr_bayes() -> None:
    X, y = _data()
    model = pv.EPTRBayesClassifier(epsilon=1.0, classes=[0, 1], x_radius=2, c0=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.NothingReleasedWarning)
        model.fit(X, (y > 0).astype(int))


def _fit_eptr_nw() -> None:
    X, y = _data()
    pv.EPTRKernelRegressor(
        epsilon=1.0, query_points=[[0.0, 0.0]], y_radius=2, bounds=(-1, 1), random_state=0
    ).fit(X, y)


def _fit_iwp_classifier() -> None:
    X, y = _data()
    pv.IWPSGDClassifier(method="oracle", progress=False).fit(X, (y > 0).astype(int))


def _partial_fit_iwp() -> None:
    X, y = _data()
    pv.IWPSGDClassifier(method="oracle", progress=False).partial_fit(
        X, (y > 0).astype(int), classes=[0, 1]
    )


def _fit_iwp_regressor() -> None:
    X, y = _data()
    pv.IWPSGDRegressor(method="oracle", progress=False).fit(X, y, y_bounds=(-2, 2))


# each fit and a step inside it (looked up at run time) that records the BLAS threads
FITS = {
    "logistic": (_fit_logistic, logistic, "bounded_hessian_inverse"),
    "linear": (_fit_linear, linear, "public_design"),
    "dr": (_fit_dr, solvers, "_dispatch"),
    "eptr_ols": (_fit_eptr_ols, eptr_ols, "ols_statistics"),
    "eptr_bayes": (_fit_eptr_bayes, eptr_bayes, "bayes_statistics"),
    "eptr_nw": (_fit_eptr_nw, eptr_nw, "nw_statistics"),
    "iwp_classifier": (_fit_iwp_classifier, iwp_sgd, "finish_run"),
    "iwp_partial_fit": (_partial_fit_iwp, iwp_sgd, "finish_run"),
    "iwp_regressor": (_fit_iwp_regressor, iwp_sgd, "finish_run"),
}
# the class whose ``fit`` (or ``partial_fit``) each entry runs
FIT_CLASSES = {
    "logistic": pv.PrivateLogisticRegression,
    "linear": pv.PrivateLinearRegression,
    "dr": pv.DRMEstimator,
    "eptr_ols": pv.EPTRLinearRegression,
    "eptr_bayes": pv.EPTRBayesClassifier,
    "eptr_nw": pv.EPTRKernelRegressor,
    "iwp_classifier": pv.IWPSGDClassifier,
    "iwp_partial_fit": pv.IWPSGDClassifier,
    "iwp_regressor": pv.IWPSGDRegressor,
}


def _owner_of_fit(cls: type) -> type:
    return next(k for k in cls.__mro__ if "fit" in vars(k))


def test_every_public_fit_is_checked():
    """A new public estimator fails here until it joins FITS (and so runs in fit_threads)."""
    public = [getattr(pv, name) for name in pv.__all__]
    owners = {_owner_of_fit(c) for c in public if isinstance(c, type) and hasattr(c, "fit")}
    assert pv.DRMEstimator in owners  # control: the scan sees the estimators
    assert owners == set(FIT_CLASSES.values())


def _threads_inside(monkeypatch, which: str) -> set[int]:
    """The BLAS thread counts seen inside the fit (a step of it records them), under an
    outer limit of two threads."""
    fit, module, name = FITS[which]
    seen: set[int] = set()
    inner = getattr(module, name)

    def recording(*args, **kwargs):
        seen.update(_blas_threads())
        return inner(*args, **kwargs)

    monkeypatch.setattr(module, name, recording)
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == {2}  # control: outside a fit, the caller's limit holds
        fit()
        assert _blas_threads() == {2}  # restored after the fit
    assert seen, "the recording step did not run"
    return seen


@pytest.mark.parametrize("which", sorted(FITS))
def test_a_fit_runs_on_one_blas_thread_by_default(monkeypatch, which):
    monkeypatch.delenv(_threads.ENV_VAR, raising=False)
    assert _threads_inside(monkeypatch, which) == {1}


@pytest.mark.parametrize("which", sorted(FITS))
def test_the_environment_variable_overrides_the_default(monkeypatch, which):
    monkeypatch.setenv(_threads.ENV_VAR, "2")
    assert _threads_inside(monkeypatch, which) == {2}


def test_keep_leaves_the_callers_limit(monkeypatch):
    monkeypatch.setenv(_threads.ENV_VAR, "keep")
    assert _threads_inside(monkeypatch, "logistic") == {2}


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", ""])
def test_a_bad_value_is_refused_by_name_before_the_budget_is_charged(monkeypatch, value):
    monkeypatch.setenv(_threads.ENV_VAR, value)
    budget = pv.Budget(1.0, 1e-6)
    est = pv.PrivateLogisticRegression(epsilon=1.0, bounds=(-1, 1), budget=budget)
    with pytest.raises(ValidationError, match="PRIVEST_BLAS_THREADS"):
        est.fit(np.zeros((10, 2)), np.arange(10) % 2)
    assert len(budget.spends) == 0
    monkeypatch.setenv(_threads.ENV_VAR, "1")  # control: the same fit is charged
    est.fit(np.zeros((10, 2)), np.arange(10) % 2)
    assert len(budget.spends) == 1

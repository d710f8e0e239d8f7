"""scikit-learn-style estimators on ZIL releases (paper 000, Sections 4-6).

``DRMEstimator(loss, method)`` fits ``argmin_theta sum_i l^method(X1_i, X2_i, theta)``
over a compact box and reports sandwich (or bootstrap) standard errors and Wald CIs
(Thms 5.3 and 6.1; the estimator of the sandwich is privest's, docs/dr-estimation.md,
"Computation and inference"). Which method to choose (paper Section 6):

* ``"dr"`` works for any loss, nonsmooth and discontinuous ones included, and needs
  only delta; its variance stays bounded as the noise grows (prefer it when lam is
  large), but grows like 1/delta;
* ``"sdr"`` and ``"sl"`` need a loss twice differentiable in the noised x; SDR is the
  most efficient of the three in the linear model, and they are preferable when delta is
  small; SL uses only X2;
* ``"naive"`` ignores the noise (biased, for comparison); ``"oracle"`` fits raw data
  (experiments only).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from privest.errors import EstimationError, ValidationError
from privest.learn.design import AnalysisData, analysis_data, oracle_data
from privest.learn.inference import IndefiniteHessianError, bootstrap_cov, sandwich_cov
from privest.learn.losses import (
    HingeLoss,
    LogisticLoss,
    Loss,
    QuantileRegressionLoss,
    SquaredLoss,
    get_loss,
)
from privest.learn.losses.index import IndexLoss
from privest.learn.objective import METHODS, CorrectedObjective
from privest.learn.results import FitResults, FitSummary
from privest.learn.solvers import (
    SUBSAMPLE_ABOVE,
    SUBSAMPLE_SIZE,
    Solution,
    polish,
    solve,
    solve_path,
)
from privest.rng import resolve_rng
from privest.sklearn_contract import validate_predict_data
from privest.validation import check_bounds

__all__ = [
    "BoundaryWarning",
    "DEFAULT_THETA_BOUND",
    "DRHingeClassifier",
    "DRLinearRegression",
    "DRLogisticRegression",
    "DRMEstimator",
    "DRQuantileRegressor",
    "FitSummary",
]

#: Default parameter box: every parameter in [-10, 10] (features on O(1) scales).
DEFAULT_THETA_BOUND = 10.0


def _is_dask_release(data: Any) -> bool:
    """Whether ``data`` is a :class:`~privest.scale.DaskRelease` (without importing Dask)."""
    mod = sys.modules.get("privest.scale.dask_release")
    return mod is not None and isinstance(data, mod.DaskRelease)


class BoundaryWarning(UserWarning):
    """The estimate sits on the parameter box: widen ``theta_bounds`` or rescale the data."""


class DRMEstimator(BaseEstimator):
    """Corrected-loss M-estimator on a :class:`~privest.release.zil.ZILRelease`.

    Parameters
    ----------
    loss : a :class:`~privest.learn.losses.Loss` or a catalogue name (``get_loss``).
    method : ``"dr"`` (default), ``"sdr"``, ``"sl"``, ``"naive"`` or ``"oracle"``.
    theta_bounds : the compact parameter box: ``(lo, hi)`` for every parameter or one
        pair per parameter; default ``(-10, 10)``. The DR objective needs a box (it is
        not convex). Parameters that end on the box get no inference (NaN, "on bound")
        and a :class:`BoundaryWarning`; when more than half do, :meth:`fit` raises
        :class:`~privest.errors.EstimationError`.
    n_draws : B of the B-draw DR (an extension, docs/dr-estimation.md, "Why the corrected
        losses are unbiased"): the analyst adds B - 1 copies X1 + S_b; unbiased, lower
        variance. 1 reproduces the paper.
    inference : ``"sandwich"`` (default), ``"bootstrap"`` or ``"none"``.
    n_bootstrap : bootstrap resamples of released records.
    features : feature columns of the release (default: all but the response).
    random_state : seed or Generator for the extra DR copies and the bootstrap.

    A Dask-backed release (docs/scale-out.md) is fitted out of core and adds the
    diagnostics ``passes_`` (passes over all records), ``pass_seconds_`` (their wall time)
    and ``records_in_memory_`` (whether the release stayed in worker memory for the passes
    or was read from the store on each).
    """

    def __init__(
        self,
        *,
        loss: Loss | str = "linear",
        method: str = "dr",
        theta_bounds: Any = None,
        n_draws: int = 1,
        inference: str = "sandwich",
        n_bootstrap: int = 200,
        features: list[str] | None = None,
        random_state: Any = None,
    ) -> None:
        self.loss = loss
        self.method = method
        self.theta_bounds = theta_bounds
        self.n_draws = n_draws
        self.inference = inference
        self.n_bootstrap = n_bootstrap
        self.features = features
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _make_loss(self) -> Loss:
        return self.loss if isinstance(self.loss, Loss) else get_loss(self.loss)

    def _box(self, p: int) -> np.ndarray:
        tb = self.theta_bounds
        if tb is None:
            tb = (-DEFAULT_THETA_BOUND, DEFAULT_THETA_BOUND)
        return check_bounds(tb, p, "theta_bounds")

    def _data(self, data: Any, y: Any) -> AnalysisData:
        if self.method == "oracle":
            return oracle_data(data, y)
        return analysis_data(data, y, self.features)

    def _starts(self, loss: Loss, ad: AnalysisData, box: np.ndarray) -> list[np.ndarray]:
        """Zero (the loss's initial point), the naive fit and, for DR, the SDR fit."""
        starts = [np.clip(loss.initial_theta(ad.d), box[:, 0], box[:, 1])]
        if self.method in ("dr", "sl", "sdr"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                naive = solve(CorrectedObjective(loss, ad, "naive"), box, starts)
                starts.append(naive.theta)
                if self.method == "dr" and loss.smooth_in_x and not ad.y_noised:
                    starts.append(
                        solve(CorrectedObjective(loss, ad, "sdr"), box, [naive.theta]).theta
                    )
        return starts

    def _solve(
        self, obj: CorrectedObjective, loss: Loss, ad: AnalysisData, box: np.ndarray
    ) -> Solution:
        """Multi-start solve. On large data the starts and their runs are computed on an
        evenly spaced subsample first, and only distinct local solutions are polished on
        all records (the objective and its minimiser are those of the full data)."""
        if isinstance(loss, LogisticLoss) and self.method != "oracle":
            return self._solve_logistic(obj, loss, ad, box)
        if ad.n <= SUBSAMPLE_ABOVE or not loss.smooth_in_theta:
            return solve(obj, box, self._starts(loss, ad, box))
        rows = np.linspace(0, ad.n - 1, SUBSAMPLE_SIZE).astype(np.intp)
        sub_data, sub_obj = ad.subset(rows), obj.restricted(rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sols = [solve(sub_obj, box, [s]) for s in self._starts(loss, sub_data, box)]
        distinct: list[np.ndarray] = []
        for sol in sorted(sols, key=lambda s: s.objective):
            if all(np.max(np.abs(sol.theta - t)) > 1e-2 for t in distinct):
                distinct.append(sol.theta)
        full = solve(obj, box, distinct)
        full.starts = len(sols)
        return full

    def _solve_logistic(
        self, obj: CorrectedObjective, loss: Loss, ad: AnalysisData, box: np.ndarray
    ) -> Solution:
        """The built-in logistic loss: the batched start strategy with R = 1
        (:func:`~privest.learn.solvers.solve_path`, the paper-000 tables' code). On large
        data the path runs on an evenly spaced subsample and its fit is polished on all
        records (the objective and its minimiser are those of the full data)."""
        sdr_start = loss.smooth_in_x and not ad.y_noised
        if ad.n <= SUBSAMPLE_ABOVE:
            return solve_path(obj, box, lambda m: CorrectedObjective(loss, ad, m), sdr_start)
        rows = np.linspace(0, ad.n - 1, SUBSAMPLE_SIZE).astype(np.intp)
        sub_data = ad.subset(rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sub = solve_path(
                obj.restricted(rows),
                box,
                lambda m: CorrectedObjective(loss, sub_data, m),
                sdr_start,
            )
        full = polish(obj, box, sub.theta)
        full.starts = sub.starts
        return full

    # --------------------------------------------------------------------- fit
    def fit(self, data: Any, y: Any = None) -> DRMEstimator:
        """Fit on a release (or raw data when ``method="oracle"``); ``y`` a column or array.

        A :class:`~privest.scale.DaskRelease` is fitted out of core on its cluster
        (:func:`privest.scale.fit.fit_dask`, docs/scale-out.md).
        """
        if self.method not in METHODS:
            raise ValidationError(f"method: {self.method!r} is not one of {METHODS}")
        if self.inference not in ("sandwich", "bootstrap", "none"):
            raise ValidationError(
                f"inference: {self.inference!r}; use 'sandwich', 'bootstrap' or 'none'"
            )
        if _is_dask_release(data):
            from privest.scale.fit import fit_dask

            return fit_dask(self, data, y)
        loss = self._make_loss()
        ad = self._data(data, y)
        rng = (
            resolve_rng(self.random_state)
            if (self.n_draws > 1 or self.inference == "bootstrap")
            else None
        )
        obj = CorrectedObjective(loss, ad, self.method, self.n_draws, rng)
        box = self._box(obj.p)
        sol = self._solve(obj, loss, ad, box)
        guarantee = None if self.method == "oracle" else data.guarantee
        named = self.method != "oracle" or isinstance(data, pd.DataFrame)
        self._set_solution(loss, sol, ad, ad.n, box, guarantee, named)
        cov = None
        self.inference_ = self.inference
        if self.inference == "sandwich":
            try:
                cov, self.hessian_, self.score_cov_ = sandwich_cov(obj, sol.theta)
            except IndefiniteHessianError as exc:
                warnings.warn(f"{exc}; using the bootstrap instead", RuntimeWarning, stacklevel=2)
                self.inference_ = "bootstrap"
                rng = resolve_rng(self.random_state)
        if self.inference_ == "bootstrap":
            cov, self.bootstrap_draws_ = bootstrap_cov(
                obj, lambda o: solve(o, box, [sol.theta]).theta, self.n_bootstrap, rng
            )
        self._set_results(cov, ad, sol)
        return self

    def _set_solution(
        self,
        loss: Loss,
        sol: Solution,
        ad: AnalysisData,
        n: int,
        box: np.ndarray,
        guarantee: Any,
        named: bool = True,
    ) -> None:
        """Record the fit (``ad`` gives the names; ``n`` the number of records;
        ``named``: the columns have names, ``feature_names_in_``, as a release's do)."""
        names = loss.param_names(list(ad.feature_names))
        self._check_boundary(sol, names, box, n)
        self.loss_ = loss
        self.solution_: Solution = sol
        self.coef_ = sol.theta
        self.param_names_ = names
        self.feature_names_ = list(ad.feature_names)
        self.n_features_in_ = ad.d
        if named:
            self.feature_names_in_ = np.asarray(ad.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.at_bound_ = sol.at_bound
        self.converged_ = sol.converged
        self.objective_ = sol.objective
        self.n_ = n
        self.guarantee_ = guarantee

    def _set_results(self, cov: np.ndarray | None, ad: AnalysisData, sol: Solution) -> None:
        """The results table of a recorded fit (after :meth:`_set_solution`)."""
        names = self.param_names_
        self.cov_ = cov
        self.results_ = FitResults(
            params=pd.Series(sol.theta, index=pd.Index(names, name="parameter"), name="coef"),
            cov=cov,
            on_bound=pd.Series(sol.at_bound, index=pd.Index(names, name="parameter")),
            nobs=self.n_,
            method=self.method,
            inference=self.inference_,
            converged=sol.converged,
            model=f"{type(self).__name__} (loss {self.loss_.name})",
            target=ad.target_name,
            guarantee=self.guarantee_,
            notes=self._notes(ad, sol),
        )
        self.stderr_ = self.results_.bse.to_numpy()
        self._set_classes(ad)

    def _set_classes(self, ad: AnalysisData) -> None:
        """Classifiers set ``classes_`` from the fitted response (post-processing)."""

    def _check_boundary(self, sol: Solution, names: list[str], box: np.ndarray, n: int) -> None:
        """Raise when most parameters sit on the box; warn when some do."""
        k, p = int(sol.at_bound.sum()), sol.at_bound.size
        if k == 0:
            return
        pinned = [n for n, b in zip(names, sol.at_bound, strict=True) if b]
        if 2 * k > p:
            raise EstimationError(
                f"{k} of {p} parameters ended on the parameter box theta_bounds "
                f"({box[sol.at_bound][0].tolist()} ...): the corrected objective has no "
                f"interior minimum, so there is no estimate to report. Usual causes: the noise "
                f"is too large for n={n} (collect more records, or release with a larger "
                "epsilon), the features are on scales far from 1 (rescale them before the "
                "release, e.g. to [-1, 1]), or the true parameters lie outside the box (widen "
                "theta_bounds)"
            )
        warnings.warn(
            f"{pinned} ended on the parameter box theta_bounds: they get no standard error, "
            "z or p-value (shown as 'on bound'); widen theta_bounds, rescale the features or "
            "use more records",
            BoundaryWarning,
            stacklevel=4,
        )

    def _notes(self, ad: AnalysisData, sol: Solution) -> list[str]:
        if self.method == "oracle":
            return [f"solver: {sol.solver} ({sol.message or 'ok'})"]
        noised = [n for n, m in zip(ad.feature_names, ad.noised, strict=True) if m]
        return [
            f"release: zero_prob={ad.zero_prob:g}, noised features: {', '.join(noised) or '-'}"
            + (", noised response" if ad.y_noised else ""),
            f"solver: {sol.solver} ({sol.message or 'ok'})",
        ]

    # --------------------------------------------------------------- results
    def summary(self) -> FitSummary:
        """Coefficient table with 95% intervals; other levels: ``results_.summary(alpha)``."""
        check_is_fitted(self, "coef_")
        return self.results_.summary()

    def _features(self, X: Any) -> np.ndarray:
        """New, unnoised features (n, n_features_in_): ``NotFittedError`` before ``fit``; a
        DataFrame must carry the release's feature columns in their order (scikit-learn's
        check); an array is taken in that order."""
        if isinstance(X, pd.DataFrame):
            return validate_predict_data(self, X, "coef_")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            return validate_predict_data(self, X, "coef_")

    def predict(self, X: Any) -> np.ndarray:
        """The loss's prediction at new (unnoised) features, where it is defined."""
        x = self._features(X)
        return self.loss_.predict(x, self.coef_)


class _IndexEstimator(DRMEstimator):
    """Shared constructor of the convenience estimators (an unnoised intercept)."""

    def __init__(
        self,
        *,
        method: str = "dr",
        fit_intercept: bool = True,
        theta_bounds: Any = None,
        n_draws: int = 1,
        inference: str = "sandwich",
        n_bootstrap: int = 200,
        features: list[str] | None = None,
        random_state: Any = None,
    ) -> None:
        self.method = method
        self.fit_intercept = fit_intercept
        self.theta_bounds = theta_bounds
        self.n_draws = n_draws
        self.inference = inference
        self.n_bootstrap = n_bootstrap
        self.features = features
        self.random_state = random_state

    def _index(self, X: Any) -> np.ndarray:
        """The linear index u = b0 + x'beta at new (unnoised) features."""
        x = self._features(X)
        return IndexLoss.predict(self.loss_, x, self.coef_)


class DRLogisticRegression(ClassifierMixin, _IndexEstimator):
    """Logistic regression (y in {0, 1}) on noised features; paper Section 7.2.

    ``predict`` returns labels in ``classes_`` = [0, 1]; ``predict_proba`` the (n, 2)
    probabilities; ``score`` the accuracy (scikit-learn's classifier contract).
    """

    def _make_loss(self) -> Loss:
        return LogisticLoss(fit_intercept=self.fit_intercept)

    def _set_classes(self, ad: AnalysisData) -> None:
        self.classes_ = np.array([0, 1])

    def predict_proba(self, X: Any) -> np.ndarray:
        """(n, 2) class probabilities, columns in the order of ``classes_``."""
        x = self._features(X)
        p1 = self.loss_.predict(x, self.coef_)
        return np.column_stack([1 - p1, p1])

    def predict(self, X: Any) -> np.ndarray:
        """Labels in ``classes_`` (1 where P(y = 1 | x) > 1/2)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def decision_function(self, X: Any) -> np.ndarray:
        """The log-odds b0 + x'beta of ``classes_[1]``."""
        return self._index(X)


class DRLinearRegression(RegressorMixin, _IndexEstimator):
    """Least squares on noised features (closed forms: docs/dr-estimation.md, "Computation
    and inference")."""

    def _make_loss(self) -> Loss:
        return SquaredLoss(fit_intercept=self.fit_intercept)


class DRQuantileRegressor(RegressorMixin, _IndexEstimator):
    """Quantile (median by default) regression on noised features; paper Section 7.3. DR only."""

    def __init__(
        self,
        *,
        quantile: float = 0.5,
        method: str = "dr",
        fit_intercept: bool = True,
        theta_bounds: Any = None,
        n_draws: int = 1,
        inference: str = "sandwich",
        n_bootstrap: int = 200,
        features: list[str] | None = None,
        random_state: Any = None,
    ) -> None:
        super().__init__(
            method=method,
            fit_intercept=fit_intercept,
            theta_bounds=theta_bounds,
            n_draws=n_draws,
            inference=inference,
            n_bootstrap=n_bootstrap,
            features=features,
            random_state=random_state,
        )
        self.quantile = quantile

    def _make_loss(self) -> Loss:
        return QuantileRegressionLoss(quantile=self.quantile, fit_intercept=self.fit_intercept)


class DRHingeClassifier(ClassifierMixin, _IndexEstimator):
    """Linear SVM (hinge loss, optional ridge ``alpha``) on noised features. DR only.

    The labels are -1 and +1, or 0 and 1 (0 is fitted as -1); ``classes_`` are those of
    the response the fit used (a released column: reading it is post-processing), and
    ``predict`` returns them.
    """

    def __init__(
        self,
        *,
        alpha: float = 0.0,
        method: str = "dr",
        fit_intercept: bool = True,
        theta_bounds: Any = None,
        n_draws: int = 1,
        inference: str = "sandwich",
        n_bootstrap: int = 200,
        features: list[str] | None = None,
        random_state: Any = None,
    ) -> None:
        super().__init__(
            method=method,
            fit_intercept=fit_intercept,
            theta_bounds=theta_bounds,
            n_draws=n_draws,
            inference=inference,
            n_bootstrap=n_bootstrap,
            features=features,
            random_state=random_state,
        )
        self.alpha = alpha

    def _make_loss(self) -> Loss:
        return HingeLoss(alpha=self.alpha, fit_intercept=self.fit_intercept)

    def _set_classes(self, ad: AnalysisData) -> None:
        zero_one = ad.y1 is not None and bool(np.all(np.isin(ad.y1, (0.0, 1.0))))
        self.classes_ = np.array([0, 1]) if zero_one else np.array([-1, 1])

    def predict(self, X: Any) -> np.ndarray:
        """Labels in ``classes_`` (the second where the index u >= 0)."""
        nonnegative = self.decision_function(X) >= 0
        return self.classes_[nonnegative.astype(int)]

    def decision_function(self, X: Any) -> np.ndarray:
        """The margin b0 + x'beta (``classes_[1]`` where it is >= 0)."""
        return self._index(X)

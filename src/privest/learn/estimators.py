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

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from privest.errors import EstimationError, NoiseDominatedWarning, ValidationError
from privest.learn.design import AnalysisData
from privest.learn.fitting import fit_objective
from privest.learn.inference import (
    NOISE_RATIO_LIMIT,
    IndefiniteHessianError,
    bootstrap_cov,
    noise_dominated,
    sandwich_cov,
)
from privest.learn.losses import (
    HingeLoss,
    LogisticLoss,
    Loss,
    QuantileRegressionLoss,
    SquaredLoss,
    get_loss,
)
from privest.learn.losses.index import IndexLoss
from privest.learn.objective import METHODS, Objective, corrected_objective
from privest.learn.results import FitResults, FitSummary
from privest.learn.score_interval import score_interval
from privest.learn.solvers import Solution, solve
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
    inference : ``"sandwich"`` (default), ``"bootstrap"`` or ``"none"``. When the
        sandwich's Hessian estimate is not positive definite, the fit warns and falls back to
        the bootstrap (``n_bootstrap`` refits, with a progress bar); ``n_bootstrap=0`` turns
        this fallback off (the fit then warns and reports no standard errors).
    n_bootstrap : bootstrap resamples of released records (refits), an integer >= 0; the
        bootstrap runs only for ``inference="bootstrap"`` (then at least 2) or as the
        sandwich's fallback.
    features : feature columns of the release (default: all but the response).
    random_state : seed or Generator for the extra DR copies and the bootstrap.

    One strategy fits every release (:func:`~privest.learn.fitting.fit_objective`), with
    the objective built for where its records are (:func:`~privest.learn.objective.
    corrected_objective`). A Dask-backed release (docs/scale-out.md) is fitted out of core
    and adds the diagnostics ``passes_`` (passes over all records), ``pass_seconds_``
    (their wall time) and ``records_in_memory_`` (whether the release stayed in worker
    memory for the passes or was read from the store on each).
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

    def _check_settings(self) -> None:
        if self.method not in METHODS:
            raise ValidationError(f"method: {self.method!r} is not one of {METHODS}")
        if self.inference not in ("sandwich", "bootstrap", "none"):
            raise ValidationError(
                f"inference: {self.inference!r}; use 'sandwich', 'bootstrap' or 'none'"
            )
        nb = self.n_bootstrap
        if isinstance(nb, bool) or not isinstance(nb, (int, np.integer)) or nb < 0:
            raise ValidationError(f"n_bootstrap: {nb!r} must be an integer >= 0")
        if self.inference == "bootstrap" and nb < 2:
            raise ValidationError(
                f"n_bootstrap: {nb!r}; inference='bootstrap' needs at least 2 resamples"
            )

    # --------------------------------------------------------------------- fit
    def fit(self, data: Any, y: Any = None) -> DRMEstimator:
        """Fit on a release (or raw data when ``method="oracle"``); ``y`` a column or array.

        A release held by a backend (a :class:`~privest.scale.DaskRelease`: out of core on
        its cluster, docs/scale-out.md) is fitted by the same strategy, its objective's
        evaluations being sums over its partitions.
        """
        self._check_settings()
        loss = self._make_loss()
        rng = (
            resolve_rng(self.random_state)
            if (self.n_draws > 1 or self.inference == "bootstrap")
            else None
        )
        obj = corrected_objective(
            data, y, loss, self.method, features=self.features, n_draws=self.n_draws, rng=rng
        )
        if self.inference == "bootstrap" and not obj.in_memory:
            raise ValidationError(
                "inference='bootstrap' resamples records in memory, which a release held out "
                "of core does not allow; use 'sandwich' or 'none'"
            )
        box = self._box(obj.p)
        sol = fit_objective(obj, box)
        if obj.where:
            sol.solver = f"{sol.solver} on {obj.where}"
        guarantee = None if self.method == "oracle" else data.guarantee
        named = self.method != "oracle" or isinstance(data, pd.DataFrame)
        self._set_solution(loss, sol, obj.data, obj.n, box, guarantee, named)
        cov = self._inference(obj, sol, box, rng)
        flags = self._noise_dominated(obj)
        for name, value in obj.diagnostics().items():  # a backend's, e.g. passes_
            setattr(self, name, value)
        self._set_results(cov, obj.data, sol, flags)
        return self

    def _noise_dominated(self, obj: Objective) -> pd.Series | None:
        """The public rule on a corrected fit's sandwich intervals (docs/dr-estimation.md,
        "Which intervals to trust"): the coefficients of features whose noise dominates
        (:func:`~privest.learn.inference.noise_dominated`), warned about once; None when
        not assessed (the oracle, the naive fit, bootstrap SEs, a loss not of index form)."""
        loss = self.loss_
        if self.method not in ("dr", "sl", "sdr") or self.inference_ != "sandwich":
            return None
        if loss.form != "index":
            return None
        lead = np.zeros(int(getattr(loss, "fit_intercept", False)), dtype=bool)
        flags = np.concatenate([lead, noise_dominated(obj)]) & ~self.at_bound_
        if flags.any():
            names = [n for n, f in zip(self.param_names_, flags, strict=True) if f]
            warnings.warn(
                f"{names}: the noise variance of these features may be more than "
                f"{NOISE_RATIO_LIMIT:g} times their own variance (as the release shows it), so "
                "their Wald intervals are too short (marked * in summary()); use "
                "score_conf_int(release, y) for them (docs/dr-estimation.md, 'Which "
                "intervals to trust')",
                NoiseDominatedWarning,
                stacklevel=3,
            )
        return pd.Series(flags, index=pd.Index(self.param_names_, name="parameter"))

    def _inference(
        self, obj: Objective, sol: Solution, box: np.ndarray, rng: Any
    ) -> np.ndarray | None:
        """The covariance of the estimate (sandwich or bootstrap; None for "none")."""
        self.inference_ = self.inference
        if self.inference == "sandwich":
            try:
                cov, self.hessian_, self.score_cov_ = sandwich_cov(obj, sol.theta)
                return cov
            except IndefiniteHessianError as exc:
                if not obj.in_memory:
                    raise IndefiniteHessianError(
                        f"{exc}; the bootstrap is not available out of core: fit in memory"
                    ) from None
                if self.n_bootstrap == 0:
                    warnings.warn(
                        f"{exc}; no standard errors (n_bootstrap=0 turns the bootstrap "
                        "fallback off)",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                    self.inference_ = "none"
                    return None
                warnings.warn(
                    f"{exc}; using the bootstrap instead ({self.n_bootstrap} refits; "
                    "n_bootstrap bounds them, n_bootstrap=0 turns this fallback off)",
                    RuntimeWarning,
                    stacklevel=3,
                )
                self.inference_ = "bootstrap"
                rng = resolve_rng(self.random_state)
        if self.inference_ != "bootstrap":
            return None
        cov, self.bootstrap_draws_ = bootstrap_cov(
            obj, lambda o: solve(o, box, [sol.theta]).theta, self.n_bootstrap, rng
        )
        return cov

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

    def _set_results(
        self,
        cov: np.ndarray | None,
        ad: AnalysisData,
        sol: Solution,
        flags: pd.Series | None,
    ) -> None:
        """The results table of a recorded fit (after :meth:`_set_solution`); ``flags``
        the coefficients whose Wald interval is too short (:meth:`_noise_dominated`)."""
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
            noise_dominated=flags,
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

    def score_conf_int(self, data: Any, y: Any = None, conf_level: float = 0.95) -> pd.DataFrame:
        """Score-test intervals at ``conf_level`` (columns ``ci_lower``, ``ci_upper``):
        every value c of a coefficient that the generalised score test, with its variance
        evaluated at c, does not reject (:func:`~privest.learn.score_interval.score_interval`;
        docs/dr-estimation.md, "Coverage at the README's settings"). The fitted estimator keeps
        no record, so it takes the release (and ``y``) of the fit again; a different release
        is refused. The other coefficients at c are the constrained minimum on the branch
        through the estimate, followed by continuation from it (docs/dr-estimation.md,
        "Which branch the interval follows"). An end is NaN where that branch's refit loses
        its interior minimum on the way out (the corrected Hessian of the other parameters
        is not positive definite there, or the branch ends): the data do not bound the
        interval on that side. Parameters on the box get NaN, as in ``results_``.
        Needs a loss twice differentiable in theta (the constrained refits are Newton's).
        """
        check_is_fitted(self, "coef_")
        a = 1 - float(conf_level)
        if not 0 < a < 1:
            raise ValidationError(f"conf_level: {conf_level!r} must be in (0, 1)")
        if not self.loss_.smooth_in_theta:
            raise ValidationError(
                f"loss: {self.loss_.name} is not twice differentiable in theta; score intervals "
                "need it (use results_.conf_int)"
            )
        if self.n_draws != 1:
            raise ValidationError(
                f"n_draws: {self.n_draws}; score intervals need the fit's objective, and the "
                "extra copies of n_draws > 1 are not kept: refit with n_draws=1"
            )
        obj = corrected_objective(data, y, self.loss_, self.method, features=self.features)
        if obj.n != self.n_ or not np.isclose(obj.value(self.coef_), self.objective_, rtol=1e-9):
            raise ValidationError(
                "data: not the release (and response) this estimator was fitted on; pass the "
                "same ones, or refit"
            )
        box = self._box(obj.p)
        ends = np.full((obj.p, 2), np.nan)
        for j in np.flatnonzero(~self.at_bound_):
            se = self.stderr_[j] if np.isfinite(self.stderr_[j]) else 1e-3 * np.ptp(box[j])
            ends[j] = score_interval(obj, self.coef_, j, se, a, box)
        index = pd.Index(self.param_names_, name="parameter")
        return pd.DataFrame(ends, index=index, columns=["ci_lower", "ci_upper"])

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

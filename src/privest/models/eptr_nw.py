"""ePTR Nadaraya-Watson regression at public query points (paper 001, Section 5, Algorithm 5).

For a query x_0, with the Gaussian kernel K_h(x_0, x) = (2 pi h^2)^{-d/2} exp(-||x_0-x||^2/(2h^2))
(so |K_h| <= C_K h^-d with C_K = (2 pi)^{-d/2}):

1. x_i <- Pi_M(x_i) (clip to the public box ``bounds``), y_i <- clip(y_i, -R_f, R_f);
2. degree d_h = sum_i K_h(x_0, x_i), f_hat = clip(sum_i K_h y_i / d_h, -R_f, R_f) (0 if d_h = 0);
3. gamma = (d_h - c0 n - 2 C_K h^-d)_+ / (2 C_K h^-d)  (eq. 21);
4. alpha = 4 R_f C_K / (h^d c0 n);
5. ePTR with p = 1; the released value is clipped to [-R_f, R_f] (post-processing).

Algorithm 5 is single-query. With m query points the budget is explicit: ``budget_mode="split"``
(default) runs each query at (eps/m, delta/m), a total of (eps, delta); ``"per_query"`` runs each
at (eps, delta) as the authors' California code does, a total of (m eps, m delta) by basic
composition, which is what ``guarantee`` then reports. The bandwidth must be public (a function
of the public n and d only).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from privest._threads import fit_threads
from privest.accounting.base import ApproxDP
from privest.accounting.budget import charge
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.eptr import (
    check_eptr_parameters,
    eptr_domain,
    eptr_noise_scale,
    eptr_step,
    ptr_threshold,
    release_probability,
)
from privest.models.central import feature_bounds
from privest.rng import resolve_rng
from privest.sklearn_contract import (
    PrivateEstimatorMixin,
    validate_fit_data,
    validate_predict_data,
    warn_privacy_habits,
)
from privest.validation import as_float_matrix, check_bounds, check_positive

__all__ = ["EPTRKernelRegressor", "gaussian_kernel_matrix", "nw_local_sensitivity", "nw_statistics"]


def gaussian_kernel_matrix(queries: np.ndarray, X: np.ndarray, bandwidth: float) -> np.ndarray:
    """K_h(x_0j, x_i) for every query j and record i, shape (m, n).

    ||x_0 - x||^2 is expanded as ||x_0||^2 - 2 x_0^T x + ||x||^2 after centring both at the
    mean of the public query points, so the expansion does not cancel when the domain lies
    far from the origin. Each value is in [0, C_K h^-d], whatever the rounding.
    """
    d = X.shape[1]
    centre = queries.mean(axis=0)
    queries = queries - centre
    X = X - centre
    sq = (
        np.einsum("ij,ij->i", queries, queries)[:, None]
        - 2.0 * queries @ X.T
        + np.einsum("ij,ij->i", X, X)[None, :]
    )
    np.maximum(sq, 0.0, out=sq)
    return np.exp(-sq / (2.0 * bandwidth**2)) / (2.0 * math.pi * bandwidth**2) ** (d / 2.0)


def nw_local_sensitivity(n: int, d: int, bandwidth: float, y_radius: float, c0: float) -> float:
    """alpha = 4 R_f C_K / (h^d c0 n) with C_K = (2 pi)^{-d/2}."""
    ck = (2.0 * math.pi) ** (-d / 2.0)
    return 4.0 * y_radius * ck / (bandwidth**d * c0 * n)


def nw_statistics(
    queries: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    bandwidth: float,
    y_radius: float,
    c0: float,
) -> dict[str, np.ndarray]:
    """Steps 2-3 of Algorithm 5 on projected data (NON-PRIVATE): degree, estimate, gamma."""
    n, d = X.shape
    kmat = gaussian_kernel_matrix(queries, X, bandwidth)
    degree = kmat.sum(axis=1)
    num = kmat @ y
    safe = degree > 0
    est = np.zeros(queries.shape[0])
    est[safe] = np.clip(num[safe] / degree[safe], -y_radius, y_radius)
    kmax = (2.0 * math.pi) ** (-d / 2.0) * bandwidth ** (-d)
    gamma = np.maximum(degree - c0 * n - 2.0 * kmax, 0.0) / (2.0 * kmax)
    return {"degree": degree, "estimate": est, "gamma": gamma}


class EPTRKernelRegressor(PrivateEstimatorMixin, RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP Nadaraya-Watson estimates at public query points (Algorithm 5).

    Parameters
    ----------
    query_points : (m, d) public query points x_0 (fixed before seeing the data).
    epsilon, delta : total target with ``budget_mode="split"``; per query with "per_query".
    bandwidth : public bandwidth h; ``None`` uses ``bandwidth_scale * n^(-1/(d+4))`` (n is public).
    y_radius : R_f; responses are clipped to [-R_f, R_f].
    c0 : public degree level (may depend on h); release needs d_h(x_0) well above c0 n.
    bounds : public box of the features (Pi_M of Algorithm 5): (lo, hi), d pairs, or a
        mapping column -> pair for a DataFrame; or ``domain.bounds``. Neither: the unit box
        [0, 1]^d.
    budget_mode : "split" (default) or "per_query" (module docstring).
    bottom : "uniform" (default; Unif[-R_f, R_f], as in the simulations) or a public number
        (e.g. 0, the midpoint). Unreleased queries get it; ``released_`` says which.
    clip : True clips records to ``bounds`` and responses to R_f (Algorithm 5, step 1);
        False (default) raises :class:`BoundsError` for records outside them. The number clipped is
        data-dependent: only the non-private :meth:`explain` reports it (``n_clipped``).
    random_state : None (secure randomness), an int seed or a Generator.
    budget : a :class:`~privest.Budget` charged ``guarantee`` at each ``fit``, before the
        data are read (refused fits release nothing); shared, never copied, by
        ``sklearn.base.clone``, so a grid search spends from it once per fit.
    domain : a :class:`~privest.Domain` (docs/domain.md) giving the features' ``bounds``
        (instead of, or agreeing with, ``bounds=``); swap neighbours only (Algorithm 5's
        guarantee replaces one record, n public): add/remove or a person unit is refused.

    Fitted: ``query_points_``, ``estimates_``, ``released_`` (bool per query), ``bandwidth_``,
    ``local_sensitivity_``, ``noise_scale_``, ``threshold_``, ``guarantee_``.

    Not a predictor of new points: ``predict`` answers only at the public ``query_points``
    fixed before the fit (their number of columns is public too), because an answer
    anywhere else would be a new, separately budgeted release. scikit-learn's
    ``check_estimator`` therefore fails every check that fits data of another number of
    columns or predicts elsewhere; they are listed in ``_sklearn_expected_failures``
    with that reason. The input validation, ``NotFittedError``, cloning, parameters and
    tags checks pass.
    """

    _sklearn_expected_failures: ClassVar[dict[str, str]] = dict.fromkeys(
        (
            "check_fit_score_takes_y",
            "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters",
            "check_estimators_fit_returns_self",
            "check_readonly_memmap_input",
            "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit",
            "check_estimators_dtypes",
            "check_dtype_object",
            "check_pipeline_consistency",
            "check_estimators_nan_inf",
            "check_estimators_pickle",
            "check_f_contiguous_array_estimator",
            "check_regressors_train",
            "check_regressor_data_not_an_array",
            "check_regressors_no_decision_function",
            "check_supervised_y_2d",
            "check_regressors_int",
            "check_methods_sample_order_invariance",
            "check_methods_subset_invariance",
            "check_fit2d_1sample",
            "check_fit2d_1feature",
            "check_dict_unchanged",
            "check_fit_idempotent",
            "check_fit_check_is_fitted",
            "check_n_features_in",
            "check_fit2d_predict1d",
        ),
        "answers only at the public query_points fixed before the fit",
    )

    def __init__(
        self,
        *,
        query_points: Any = None,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        bandwidth: float | None = None,
        bandwidth_scale: float = 0.2,
        y_radius: float = 1.0,
        c0: float = 0.3,
        bounds: Any = None,
        budget_mode: str = "split",
        bottom: Any = "uniform",
        clip: bool = False,
        random_state: Any = None,
        budget: Any = None,
        domain: Any = None,
    ):
        self.query_points = query_points
        self.epsilon = epsilon
        self.delta = delta
        self.bandwidth = bandwidth
        self.bandwidth_scale = bandwidth_scale
        self.y_radius = y_radius
        self.c0 = c0
        self.bounds = bounds
        self.budget_mode = budget_mode
        self.bottom = bottom
        self.clip = clip
        self.random_state = random_state
        self.budget = budget
        self.domain = domain

    def _queries(self) -> np.ndarray:
        if self.query_points is None:
            raise ValidationError("query_points: the public query points x_0 are required")
        return as_float_matrix(self.query_points, "query_points")

    def _per_query_budget(self, m: int) -> tuple[float, float]:
        if self.budget_mode == "split":
            return check_eptr_parameters(self.epsilon / m, self.delta / m)
        if self.budget_mode == "per_query":
            return check_eptr_parameters(self.epsilon, self.delta)
        raise ValidationError(
            f"budget_mode: {self.budget_mode!r}; accepted: 'split' or 'per_query'"
        )

    @property
    def guarantee(self) -> ApproxDP:
        """(eps, delta) with "split"; (m eps, m delta) with "per_query" (basic composition),
        under swap neighbours (a ``domain`` with another relation, or with bounds other than
        ``bounds=``, is refused here, before any data)."""
        eptr_domain(self.domain, "EPTRKernelRegressor", "resolution", bounds=self.bounds)
        m = self._queries().shape[0]
        if self.budget_mode == "per_query" and m > 1:
            return ApproxDP(m * self.epsilon, min(m * self.delta, 1.0 - 1e-12))
        return ApproxDP(self.epsilon, self.delta)

    def _box(self, d: int) -> np.ndarray:
        """The public feature box, (d, 2): ``bounds=`` or ``domain.bounds``, else the unit
        box."""
        box = feature_bounds(self.domain, self.bounds, getattr(self, "feature_names_in_", None))
        return check_bounds((0.0, 1.0) if box is None else box, d, "bounds")

    def _check(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        queries = self._queries()
        X, y = validate_fit_data(self, X, y)
        if queries.shape[1] != X.shape[1]:
            raise ValidationError(
                f"query_points: have {queries.shape[1]} columns; X has {X.shape[1]}"
            )
        check_positive(self.y_radius, "y_radius")
        check_positive(self.c0, "c0")
        box = self._box(X.shape[1])
        outside = np.any((X < box[:, 0]) | (X > box[:, 1]), axis=1)
        outside |= np.abs(y) > self.y_radius
        if outside.any() and not self.clip:
            raise BoundsError(
                f"X/y: some records lie outside the public bounds {box.tolist()} or have "
                f"|y| > {self.y_radius}; pass clip=True to clip them "
                "(Algorithm 5, step 1)"
            )
        Xc = np.clip(X, box[:, 0], box[:, 1])
        yc = np.clip(y, -self.y_radius, self.y_radius)
        return queries, Xc, yc, int(outside.sum())

    def _bandwidth(self, n: int, d: int) -> float:
        if self.bandwidth is not None:
            return check_positive(self.bandwidth, "bandwidth")
        return check_positive(self.bandwidth_scale, "bandwidth_scale") * n ** (-1.0 / (d + 4))

    def fit(self, X: Any, y: Any) -> EPTRKernelRegressor:
        """Run Algorithm 5 at every query point; ``released_[j]`` says which passed."""
        with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
            warn_privacy_habits(self, self.guarantee.eps, self.guarantee.dlt)
            charge(self.budget, self.guarantee, label=type(self).__name__, mechanism="ePTR-NW")
            queries, X, y, _ = self._check(X, y)
            n, d = X.shape
            m = queries.shape[0]
            eps_q, delta_q = self._per_query_budget(m)
            numeric = isinstance(self.bottom, (int, float, np.integer, np.floating)) and not (
                isinstance(self.bottom, bool)
            )
            if not (
                (isinstance(self.bottom, str) and self.bottom == "uniform")
                or (numeric and math.isfinite(float(self.bottom)))
            ):
                raise ValidationError(
                    f"bottom: {self.bottom!r}; accepted: 'uniform' or a finite public number"
                )
            rng = resolve_rng(self.random_state)
            h = self._bandwidth(n, d)
            stats = nw_statistics(queries, X, y, h, self.y_radius, self.c0)
            self.local_sensitivity_ = nw_local_sensitivity(n, d, h, self.y_radius, self.c0)
            self.noise_scale_ = eptr_noise_scale(self.local_sensitivity_, eps_q, delta_q)
            self.threshold_ = ptr_threshold(eps_q, delta_q)
            released = np.zeros(m, dtype=bool)
            est = np.empty(m)
            r = self.y_radius
            for j in range(m):  # m public queries, not records
                ok, value = eptr_step(
                    stats["estimate"][j : j + 1],
                    stats["gamma"][j],
                    self.local_sensitivity_,
                    eps_q,
                    delta_q,
                    rng,
                    dim=1,
                )
                released[j] = ok
                if ok:
                    est[j] = float(np.clip(value[0], -r, r))
                elif self.bottom == "uniform":
                    est[j] = rng.uniform(-r, r)
                else:
                    est[j] = float(self.bottom)
            self.query_points_ = queries
            self.estimates_ = est
            self.released_ = released
            self.bandwidth_ = h
            self.guarantee_ = self.guarantee
            return self

    def predict(self, X: Any) -> np.ndarray:
        """The released estimate (or bottom) at each row of X, which must be a query point.

        Only the public query points fixed before fitting have estimates; any other row raises
        :class:`ValidationError` (answering it would need a new, separately budgeted release).
        """
        X = validate_predict_data(self, X, "estimates_")
        match = np.all(X[:, None, :] == self.query_points_[None, :, :], axis=2)
        found = match.any(axis=1)
        if not found.all():
            raise ValidationError(
                f"X: row {int(np.argmin(found))} is not one of the fitted query points; "
                "refit with it among query_points"
            )
        return self.estimates_[np.argmax(match, axis=1)]

    def explain(self, X: Any, y: Any) -> dict[str, Any]:
        """NON-PRIVATE audit of Algorithm 5. NEVER publish it.

        Degrees, gamma, release probabilities, unnoised estimates and ``n_clipped`` (records
        clipped to the bounds or R_f; ``fit`` keeps no such count) leak the data.
        """
        queries, Xc, yc, n_out = self._check(X, y)
        n, d = Xc.shape
        eps_q, delta_q = self._per_query_budget(queries.shape[0])
        h = self._bandwidth(n, d)
        stats = nw_statistics(queries, Xc, yc, h, self.y_radius, self.c0)
        alpha = nw_local_sensitivity(n, d, h, self.y_radius, self.c0)
        return {
            **stats,
            "bandwidth": h,
            "M": ptr_threshold(eps_q, delta_q),
            "release_probability": release_probability(stats["gamma"], eps_q, delta_q),
            "alpha": alpha,
            "noise_scale": eptr_noise_scale(alpha, eps_q, delta_q),
            "n_clipped": n_out,
        }

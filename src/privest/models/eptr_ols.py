"""ePTR ordinary least squares (paper 001, Section 4, Algorithm 4).

Steps (R_y := R_x R_theta; all radii public):

1. x_i <- Pi_{R_x}(x_i) (radial projection), y_i <- clip(y_i, -R_y, R_y);
2. S = sum_i x_i x_i^T, lambda = lambda_min(S);
3. theta_hat = Pi_{R_theta}(S^{-1} sum_i y_i x_i);
4. gamma = (lambda - c0 n - 2 R_x^2)_+ / (2 R_x^2)  (eq. 18);
5. alpha = 4 R_x^2 R_theta / (c0 n);
6. ePTR (Algorithm 2).

Privacy of the paper's alpha when ||S^{-1} X^T y|| > R_theta. The paper's derivation (eqs. 16-17)
assumes the unprojected OLS norm is at most R_theta; a direct bound without it gives only
2 alpha. We prove the paper's alpha in general as follows. On
{gamma(X) > 0}, lambda_min(S) and lambda_min(S') both exceed c0 n (Weyl). Let a, b be the
unprojected estimates on X and X'. Using the perturbation identity written around the one of
smaller norm, ||a - b|| <= (2 R_x^2 min(||a||, ||b||) + 2 R_x R_y)/(c0 n). If that minimum is
<= R_theta this is <= alpha, and the projection is non-expansive. If both norms exceed R_theta,
||Pi(a) - Pi(b)|| = R_theta ||a/|a| - b/|b||| <= R_theta ||a - b|| / sqrt(|a||b|) (since
||a - b||^2 = (|a| - |b|)^2 + |a||b| ||a/|a| - b/|b|||^2), which is again <= alpha. So
``local_sensitivity_factor=1`` (the default) is private; the brute-force and exact-divergence tests
include datasets with a large unprojected norm. A larger factor only adds noise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from privest.accounting.base import ApproxDP
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.eptr import (
    check_eptr_parameters,
    eptr_noise_scale,
    eptr_step,
    ptr_threshold,
    release_probability,
)
from privest.projection import project_rows
from privest.rng import resolve_rng
from privest.validation import as_float_matrix, as_float_vector, check_positive

__all__ = ["EPTRLinearRegression", "ols_local_sensitivity", "ols_statistics", "projected_moments"]


def ols_local_sensitivity(n: int, x_radius: float, theta_radius: float, c0: float) -> float:
    """alpha = 4 R_x^2 R_theta / (c0 n) (Algorithm 4, step 5); 0.02 at n=8000, c0=0.4, R_x=4."""
    return 4.0 * x_radius**2 * theta_radius / (c0 * n)


#: Rows per block when the projected rows are formed (about 8 MB of float64 per block).
_BLOCK_ELEMENTS = 1 << 20


def projected_moments(
    X: np.ndarray, y: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """S = sum_i x~_i x~_i^T and b = sum_i y_i x~_i over the projected rows x~_i = scale_i x_i.

    Every term is built from a projected row (norm <= R_x), never as a raw X^T X corrected
    afterwards: a correction x x^T (s^2 - 1) of a row of norm 1e8 cancels catastrophically
    and breaks the Lipschitz bound on gamma. Blocks of rows keep the extra memory to one
    block; blocks with nothing to project are used in place (no copy).
    """
    n, p = X.shape
    block = max(1, _BLOCK_ELEMENTS // p)
    S = np.zeros((p, p))
    b = np.zeros(p)
    for start in range(0, n, block):
        Xb = X[start : start + block]
        sb = scale[start : start + block]
        if np.any(sb != 1.0):
            Xb = Xb * sb[:, None]
        S += Xb.T @ Xb
        b += Xb.T @ y[start : start + block]
    return (S + S.T) / 2.0, b


def ols_statistics(
    X: np.ndarray, y: np.ndarray, x_radius: float, theta_radius: float, c0: float
) -> dict[str, Any]:
    """Steps 1-4 of Algorithm 4 on raw (X, y): a dict of NON-PRIVATE quantities.

    Keys: ``gamma``, ``lambda_min``, ``estimate`` (theta_hat, projected), ``unprojected``
    (S^{-1} X^T y, or the least-squares solution when S is singular), ``n_clipped_x``,
    ``n_clipped_y`` (record counts, for :meth:`EPTRLinearRegression.explain` only). S and
    X^T y are built from the projected rows (:func:`projected_moments`), without copying X.
    """
    n, p = X.shape
    y_radius = x_radius * theta_radius
    scale, outside = project_rows(X, x_radius)
    yc = np.clip(y, -y_radius, y_radius)
    S, b = projected_moments(X, yc, scale)
    lam = float(np.linalg.eigvalsh(S)[0])
    gamma = max(lam - c0 * n - 2.0 * x_radius**2, 0.0) / (2.0 * x_radius**2)
    try:
        if lam <= 1e-12 * max(float(np.trace(S)), 1.0):
            raise np.linalg.LinAlgError
        unproj = np.linalg.solve(S, b)
    except np.linalg.LinAlgError:
        unproj = np.linalg.lstsq(S, b, rcond=None)[0]
    norm = float(np.linalg.norm(unproj))
    est = unproj * (theta_radius / norm) if norm > theta_radius else unproj.copy()
    return {
        "gamma": gamma,
        "lambda_min": lam,
        "estimate": est,
        "unprojected": unproj,
        "n_clipped_x": int(outside.sum()),
        "n_clipped_y": int(np.count_nonzero(np.abs(y) > y_radius)),
    }


class EPTRLinearRegression(RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP least squares by efficient PTR (Algorithm 4 of paper 001).

    No intercept (as in the paper): append a public constant column to fit one.

    Parameters
    ----------
    epsilon, delta : privacy target; delta in (0, 1) (the paper uses 0.01; theory wants
        delta <= n^-3).
    x_radius : R_x, public radius of the feature rows (rows outside are projected onto it).
    theta_radius : R_theta, public radius of the coefficient vector; responses are clipped to
        R_y = R_x R_theta.
    c0 : public eigenvalue level: release needs lambda_min(X^T X) well above c0 n. Theory:
        c0 <= 1/(4 C_x^2) where the feature covariance has eigenvalues >= C_x^-2.
    local_sensitivity_factor : multiplies the paper's alpha; 1 is private (module docstring).
    bottom : coefficients used when nothing is released (public; default zeros, the paper's
        simulation choice). ``predict`` then predicts with them; check ``released_``.
    clip : True projects records onto the public radii (Algorithm 4, step 1); False raises
        :class:`BoundsError` instead. How many were projected is data-dependent, so only
        the non-private :meth:`explain` reports it.
    random_state : None (secure randomness), an int seed or a Generator.

    Fitted attributes: ``coef_``, ``released_``, ``local_sensitivity_``, ``noise_scale_``,
    ``threshold_`` (M), ``guarantee_``: all public (data-dependent diagnostics are in
    ``explain``).
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        delta: float = 0.01,
        x_radius: float = 1.0,
        theta_radius: float = 1.0,
        c0: float = 0.1,
        local_sensitivity_factor: float = 1.0,
        bottom: Any = None,
        clip: bool = False,
        random_state: Any = None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.x_radius = x_radius
        self.theta_radius = theta_radius
        self.c0 = c0
        self.local_sensitivity_factor = local_sensitivity_factor
        self.bottom = bottom
        self.clip = clip
        self.random_state = random_state

    @property
    def guarantee(self) -> ApproxDP:
        """(epsilon, delta)-DP (Theorem 4.1)."""
        return ApproxDP(self.epsilon, self.delta)

    def _check(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        check_eptr_parameters(self.epsilon, self.delta)
        for name in ("x_radius", "theta_radius", "c0", "local_sensitivity_factor"):
            check_positive(getattr(self, name), name)
        if self.local_sensitivity_factor < 1:
            raise ValidationError(
                f"local_sensitivity_factor: {self.local_sensitivity_factor} < 1 would break "
                "the guarantee"
            )
        X = as_float_matrix(X, "X")
        y = as_float_vector(y, "y")
        if y.shape[0] != X.shape[0]:
            raise ValidationError(f"y: has {y.shape[0]} values for {X.shape[0]} rows of X")
        if not self.clip:
            y_radius = self.x_radius * self.theta_radius
            if project_rows(X, self.x_radius)[1].any() or np.any(np.abs(y) > y_radius):
                raise BoundsError(
                    f"X/y: some records lie outside the public bounds ||x|| <= {self.x_radius}, "
                    f"|y| <= {y_radius}; pass clip=True to project them (Algorithm 4, step 1)"
                )
        return X, y

    def _bottom(self, p: int) -> np.ndarray:
        if self.bottom is None:
            return np.zeros(p)
        b = np.atleast_1d(np.asarray(self.bottom, dtype=float))
        if b.size == 1:
            b = np.full(p, b[0])
        if b.shape != (p,) or not np.all(np.isfinite(b)):
            raise ValidationError(f"bottom: must be a finite scalar or {p} public coefficients")
        return b

    def fit(self, X: Any, y: Any) -> EPTRLinearRegression:
        """Run Algorithm 4 once; ``released_`` says whether the test passed."""
        X, y = self._check(X, y)
        n, p = X.shape
        bottom = self._bottom(p)
        stats = ols_statistics(X, y, self.x_radius, self.theta_radius, self.c0)
        self.local_sensitivity_ = self.local_sensitivity_factor * ols_local_sensitivity(
            n, self.x_radius, self.theta_radius, self.c0
        )
        self.noise_scale_ = eptr_noise_scale(self.local_sensitivity_, self.epsilon, self.delta)
        self.threshold_ = ptr_threshold(self.epsilon, self.delta)
        released, value = eptr_step(
            stats["estimate"],
            stats["gamma"],
            self.local_sensitivity_,
            self.epsilon,
            self.delta,
            resolve_rng(self.random_state),
            dim=p,
        )
        self.released_ = released
        self.coef_ = value if released else bottom
        self.n_features_in_ = p
        self.guarantee_ = self.guarantee
        return self

    def predict(self, X: Any) -> np.ndarray:
        """X @ coef_ (the bottom coefficients when nothing was released; see ``released_``)."""
        check_is_fitted(self, "coef_")
        X = as_float_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValidationError(f"X: has {X.shape[1]} columns; fitted on {self.n_features_in_}")
        return X @ self.coef_

    def explain(self, X: Any, y: Any) -> dict[str, Any]:
        """NON-PRIVATE audit of Algorithm 4 on (X, y). NEVER publish the result.

        gamma, lambda_min, M, release probability, alpha, noise sd, the unnoised estimate and
        the record counts ``n_clipped_x`` (rows projected onto R_x) and ``n_clipped_y``
        (responses clipped to R_y) are functions of the private data; ``fit`` keeps none of
        them (Algorithm 2 publishes only the noised estimate or the bottom).
        """
        X, y = self._check(X, y)
        n = X.shape[0]
        stats = ols_statistics(X, y, self.x_radius, self.theta_radius, self.c0)
        alpha = self.local_sensitivity_factor * ols_local_sensitivity(
            n, self.x_radius, self.theta_radius, self.c0
        )
        return {
            **stats,
            "M": ptr_threshold(self.epsilon, self.delta),
            "release_probability": float(
                release_probability(stats["gamma"], self.epsilon, self.delta)
            ),
            "alpha": alpha,
            "noise_scale": eptr_noise_scale(alpha, self.epsilon, self.delta),
        }

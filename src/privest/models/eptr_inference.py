"""Standard errors of :class:`~privest.models.eptr_ols.EPTRLinearRegression` from released
quantities only (docs/eptr.md, "Standard errors and intervals of ePTR-OLS").

The released estimate is theta_rel = Pi_{R_theta}(theta_hat) + sigma zeta, theta_hat =
S^-1 X'y on the projected rows, zeta ~ N(0, I) (Algorithm 4 of paper 001) with sigma
public. Inside the ball, theta_rel - theta_0 ~= S^-1 sum_i x_i r_i + sigma zeta: its
covariance is the heteroscedasticity-robust sandwich S^-1 M S^-1 (White's HC0, M = sum_i
r_i^2 x_i x_i', the records an iid sample) plus sigma^2 I. Neither S nor M is released by
ePTR, so after a release, :data:`INFERENCE_SHARE` of epsilon and of delta buys one Gaussian
release of both:

* the residuals are taken at the public theta_rel: r_i = y_i - x_i' theta_rel, so
  |r_i| <= R_r = R_y + R_x ||theta_rel|| (|y| <= R_y, ||x|| <= R_x after Algorithm 4's
  step 1) is public and nothing is clipped; the release is adaptive, and basic composition
  holds for adaptively chosen mechanisms;
* the vector v = (triu(S) / R_x^2, triu(M) / (R_x^2 R_r^2)) has L2 sensitivity 2 under the
  replacement of one record: each block changes by u u' - w w' with ||u||, ||w|| <= 1, a
  difference of two rank-one PSD matrices, so ||u u' - w w'||_F^2 = ||u||^4 + ||w||^4 -
  2 (u'w)^2 <= 2 and the upper triangle has at most that Frobenius norm; summing the two
  blocks gives 2^2. A factor :func:`float_slack` covers the rounding of the sums;
* the release is the (analytic-calibrated) lattice Gaussian at (INFERENCE_SHARE epsilon,
  INFERENCE_SHARE delta).

Post-processing: S~ is floored at c0 n in its eigenvalues (a release means gamma > 0, i.e.
lambda_min(S) > c0 n, except with probability about delta), M~ is projected on the positive
semidefinite cone (conservative when its noise is large), and Cov = S~^-1 M~ S~^-1 +
sigma^2 I.

The projection Pi_{R_theta} makes the law non-normal on the sphere, so when ||theta_rel||
>= R_theta - sigma sqrt(chi2_p(0.999)) (:data:`SPHERE_LEVEL`; :func:`near_sphere`) no
interval is claimed: every coefficient is marked on the bound and has no standard error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chi2

from privest.errors import ValidationError
from privest.learn.results import FitResults
from privest.mechanisms.samplers.lattice import LatticeGaussian, lattice_gaussian
from privest.projection import project_rows

__all__ = [
    "INFERENCE_SHARE",
    "SPHERE_LEVEL",
    "eptr_ols_results",
    "eptr_results",
    "float_slack",
    "gram_release",
    "inference_share",
    "projected_moments",
    "sandwich_cov",
    "sandwich_release",
    "sandwich_statistics",
    "spent_text",
]

#: share of epsilon and of delta spent on the standard errors (``inference="sandwich"``)
INFERENCE_SHARE = 0.1
#: level of the chi-square margin that keeps an interval away from the R_theta sphere
SPHERE_LEVEL = 0.999
INFERENCES = ("sandwich", "none")


def float_slack(n: int, p: int) -> float:
    """Factor on a sensitivity that covers the rounding of sums of n bounded terms: each
    entry of S or M is off by at most n u times the sum of the terms' sizes (u = 2^-52),
    on each neighbour."""
    return 1.0 + 4.0 * n * (n + p) * 2.0**-52


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


def sandwich_statistics(
    X: np.ndarray, y: np.ndarray, theta: np.ndarray, x_radius: float, y_radius: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """NON-PRIVATE (S, M, R_r) on the projected rows and clipped responses: S = sum x x',
    M = sum r^2 x x' with r = y - x' theta clipped to the public R_r = R_y + R_x ||theta||
    (a bound it already meets, up to rounding)."""
    scale, _ = project_rows(X, x_radius)
    r_bound = y_radius + x_radius * float(np.linalg.norm(theta))
    r = np.clip(np.clip(y, -y_radius, y_radius) - (X @ theta) * scale, -r_bound, r_bound)
    S = projected_moments(X, r, scale)[0]
    M = projected_moments(X, r, scale * np.abs(r))[0]  # rows |r_i| x~_i
    return S, M, r_bound


def gram_release(n: int, p: int, epsilon: float, delta: float) -> LatticeGaussian:
    """The Gaussian mechanism of the release of v (module docstring): L2 sensitivity 2 x
    :func:`float_slack`, p (p + 1) coordinates."""
    return lattice_gaussian(epsilon, delta, 2.0 * float_slack(n, p), p * (p + 1), "analytic")


def sandwich_release(
    X: np.ndarray,
    y: np.ndarray,
    theta: np.ndarray,
    x_radius: float,
    y_radius: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float]:
    """The released v = (triu(S) / R_x^2, triu(M) / (R_x^2 R_r^2)) and the public R_r."""
    n, p = X.shape
    S, M, r_bound = sandwich_statistics(X, y, theta, x_radius, y_radius)
    iu = np.triu_indices(p)
    v = np.concatenate([S[iu] / x_radius**2, M[iu] / (x_radius * r_bound) ** 2])
    return gram_release(n, p, epsilon, delta).release(v, rng), r_bound


def _unpack(v: np.ndarray, p: int) -> np.ndarray:
    iu = np.triu_indices(p)
    A = np.zeros((p, p))
    A[iu] = v
    return A + np.triu(A, 1).T


def sandwich_cov(
    noisy: np.ndarray, p: int, x_radius: float, r_bound: float, floor: float, sigma: float
) -> np.ndarray:
    """Cov(theta_rel) from the released v (post-processing): S~ floored at ``floor`` in its
    eigenvalues, M~ on the PSD cone, S~^-1 M~ S~^-1 + sigma^2 I."""
    k = p * (p + 1) // 2
    S = _unpack(noisy[:k], p) * x_radius**2
    M = _unpack(noisy[k:], p) * (x_radius * r_bound) ** 2
    vals, vecs = np.linalg.eigh(S)
    B = (vecs / np.maximum(vals, floor)) @ vecs.T
    mv, mw = np.linalg.eigh(M)
    M = (mw * np.maximum(mv, 0.0)) @ mw.T
    cov = B @ M @ B
    return (cov + cov.T) / 2.0 + sigma**2 * np.eye(p)


def near_sphere(theta: np.ndarray, sigma: float, theta_radius: float) -> bool:
    """True when theta_rel is within sigma sqrt(chi2_p(SPHERE_LEVEL)) of the R_theta sphere:
    the projection may have acted, so no interval is claimed. If it acted, ||Pi(theta_hat)||
    = R_theta and theta_rel is off it by sigma ||zeta||, so a projected estimate escapes
    this rule with probability 1 - SPHERE_LEVEL."""
    margin = sigma * math.sqrt(chi2.ppf(SPHERE_LEVEL, theta.size))
    return float(np.linalg.norm(theta)) >= theta_radius - margin


def inference_share(inference: str) -> float:
    """The share of epsilon and of delta an ePTR model spends on its standard errors:
    :data:`INFERENCE_SHARE` under ``"sandwich"``, 0 under ``"none"``; anything else is
    refused."""
    if inference not in INFERENCES:
        raise ValidationError(f"inference: {inference!r} is not accepted; use 'sandwich' or 'none'")
    return INFERENCE_SHARE if inference == "sandwich" else 0.0


def spent_text(c0_share: float | None, inference: str) -> str:
    """How an ePTR model's guarantee is split (basic composition), for ``results_``;
    ``c0_share`` None: c0 was given (nothing spent on it)."""
    parts = [] if c0_share is None else [f"c0: {c0_share:g} of epsilon"]
    if inference_share(inference):
        parts.append(f"standard errors: {INFERENCE_SHARE:g} of epsilon and of delta")
    return "; ".join([*parts, "ePTR: the rest; the intervals are post-processing"])


def eptr_results(
    est: Any,
    params: pd.Series,
    cov: np.ndarray | None,
    on_bound: pd.Series,
    n: int,
    notes: list[str],
    *,
    method: str,
    inference: str,
    on_bound_note: str,
) -> FitResults:
    """The :class:`~privest.learn.results.FitResults` of an ePTR fit (the model's guarantee
    and budget split; ``inference`` describes the standard errors when ``est.inference``
    is ``"sandwich"``)."""
    return FitResults(
        params=params,
        cov=cov,
        on_bound=on_bound,
        nobs=n,
        method=method,
        inference=inference if est.inference == "sandwich" else "none",
        converged=True,
        model=type(est).__name__,
        guarantee=est.guarantee,
        notes=notes,
        spent=est._spent(),
        on_bound_note=on_bound_note,
    )


def eptr_ols_results(
    est: Any, params: np.ndarray | None, cov: np.ndarray | None, n: int, notes: list[str]
) -> FitResults:
    """The :class:`~privest.learn.results.FitResults` of an ePTR-OLS fit. ``params`` None:
    nothing was released (NaN coefficients, no numbers); ``cov`` None: no standard errors."""
    p = est.n_features_in_
    names = [str(v) for v in getattr(est, "feature_names_in_", [f"x{j}" for j in range(p)])]
    index = pd.Index(names, name="parameter")
    on_bound = (
        params is not None
        and cov is not None
        and near_sphere(params, est.noise_scale_, est.theta_radius)
    )
    return eptr_results(
        est,
        pd.Series(np.full(p, np.nan) if params is None else params, index=index),
        cov,
        pd.Series(on_bound, index=index),
        n,
        notes,
        method="ePTR-OLS",
        inference="robust sandwich from released X'X and residual-weighted X'X, plus the ePTR "
        "noise",
        on_bound_note=(
            "note: the released estimate lies near the theta_radius sphere, where the "
            "projection of Algorithm 4 may have acted: no interval is claimed (raise "
            "theta_radius); files hold the numbers empty (null)"
        ),
    )

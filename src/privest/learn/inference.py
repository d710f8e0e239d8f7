"""Standard errors for corrected-loss M-estimators (paper 000, Thms 5.3 and 6.1).

The paper gives the sandwich form but no estimator of it; the recipe below is privest's
(docs/dr-estimation.md, "Computation and inference").

Sandwich: sqrt(n)(theta_hat - theta_0) -> N(0, V^-1 A V^-1) with A = E[psi psi'] (psi the
per-record corrected score) and V the Hessian of the population loss. A is estimated by
the empirical (centred) covariance of the scores at theta_hat; V by the DR/SL/SDR-weighted
Hessian, unbiased for V by the same correction applied to the Hessian of the loss, or,
for losses not twice differentiable in theta (check, hinge), by symmetric finite
differences of the mean score with step n^(-1/3), and for check and hinge losses by a
corrected kernel estimate. The bootstrap over released records
costs no privacy (post-processing).

Every estimate reads the objective through its protocol
(:class:`~privest.learn.objective.Objective`): sums over blocks of records and exact
percentiles, so the same code serves a release in memory and one held by a backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from privest._threads import fit_threads
from privest.learn.losses import Loss
from privest.learn.objective import (
    SCORE_BLOCK,
    CorrectedObjective,
    Objective,
    Term,
    score_covariance,
)
from privest.progress import progress_iter

__all__ = [
    "IndefiniteHessianError",
    "SCORE_BLOCK",
    "NOISE_RATIO_LIMIT",
    "bootstrap_cov",
    "hessian_estimate",
    "noise_dominated",
    "sandwich",
    "sandwich_cov",
    "score_covariance",
]


class IndefiniteHessianError(RuntimeError):
    """The estimated V is not positive definite: the sandwich is unavailable."""


def kernel_residuals(loss: Loss, t: Term, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, r) of one term: the design and the distance to the kink (``loss.kink_distance``:
    r = y - u for the check loss, 1 - y u for the hinge)."""
    d = loss.design(t.x)
    y = loss.response(t.y, d.shape[0])
    return d, loss.kink_distance(y, d @ theta)


def first_kink_distances(obj: CorrectedObjective, theta: np.ndarray) -> np.ndarray:
    """The kink distances of the first term's records (the bandwidth's sample)."""
    return kernel_residuals(obj.loss, obj.terms[0], theta)[1]


def _kink_moments(obj: CorrectedObjective, theta: np.ndarray) -> dict[str, Any]:
    """Sum and sum of squares of the first term's kink distances."""
    r = first_kink_distances(obj, theta)
    return {"n": obj.n, "s": np.array([r.sum(), r @ r])}


def _kernel_part(obj: CorrectedObjective, theta: np.ndarray, h: float) -> dict[str, Any]:
    return {"n": obj.n, "v": kernel_sum(obj, theta, h)}


def moment_sd(moments: dict[str, Any], n: int) -> float:
    """The standard deviation from a sum and a sum of squares."""
    mean = moments["s"][0] / n
    return float(np.sqrt(max(moments["s"][1] / n - mean**2, 0.0)))


def kernel_bandwidth(sd: float, iqr: float, n: int) -> float:
    """Silverman's h = 1.06 min(sd, IQR/1.34) n^(-1/5) (sd alone if the IQR is 0)."""
    scale = min(sd, iqr / 1.34) or sd or 1.0
    return 1.06 * scale * n ** (-0.2)


def kernel_sum(obj: CorrectedObjective, theta: np.ndarray, h: float) -> np.ndarray:
    """sum_t w_t sum_i K_h(r_ti) D_ti D_ti' (Gaussian K): the kernel estimate's sum over
    ``obj``'s records, before dividing by n and adding the ridge."""
    v = np.zeros((obj.p, obj.p))
    for t in obj.terms:
        d, r = kernel_residuals(obj.loss, t, theta)
        k = np.exp(-0.5 * (r / h) ** 2) / (h * np.sqrt(2 * np.pi))
        v += t.weight * (d.T * k) @ d
    return v


def kernel_hessian(obj: Objective, theta: np.ndarray) -> np.ndarray:
    """Corrected kernel estimate of V for check and hinge losses.

    V = E[K(kink distance) D D'] is estimated term by term with the DR (or naive) weights:
    sum_t w_t (1/n) sum_i K_h(r_ti) D_ti D_ti', with r = y - u (check) or 1 - y u (hinge),
    a Gaussian kernel and h = 1.06 min(sd, IQR/1.34) n^(-1/5) from the first term's r (its
    standard deviation from sums, its quartiles exact). The DR identity applies to any
    function of x, so the estimate is unbiased for its smoothed target; the penalty's
    Hessian is added once.
    """
    sd = moment_sd(obj.reduce(_kink_moments, theta), obj.n)
    q25, q75 = obj.percentiles(first_kink_distances, np.array([25.0, 75.0]), theta)
    h = kernel_bandwidth(sd, float(q75 - q25), obj.n)
    v = obj.reduce(_kernel_part, theta, h)["v"] / obj.n + obj.loss.penalty_hess(obj.p)
    return 0.5 * (v + v.T)


def hessian_estimate(obj: Objective, theta: np.ndarray) -> np.ndarray:
    """V_hat: analytic corrected Hessian, corrected kernel estimate (check and hinge index
    losses), or central differences of the mean score (other nonsmooth losses)."""
    if obj.loss.kink != "none" and obj.loss.form == "index":
        return kernel_hessian(obj, theta)
    if obj.loss.smooth_in_theta:
        return obj.hess(theta)
    h = obj.n ** (-1.0 / 3.0)
    cols = []
    for j in range(obj.p):
        e = np.zeros(obj.p)
        e[j] = h
        cols.append((obj.grad(theta + e) - obj.grad(theta - e)) / (2 * h))
    v = np.column_stack(cols)
    return 0.5 * (v + v.T)


def sandwich_cov(obj: Objective, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cov, V_hat, A_hat): cov = V^-1 A V^-1 / n, on the BLAS threads of a fit
    (:func:`~privest._threads.fit_threads`: its products are the same n x p ones)."""
    with fit_threads():  # one BLAS thread unless PRIVEST_BLAS_THREADS says otherwise
        a = obj.score_cov(theta)
        v = hessian_estimate(obj, theta)
    return sandwich(v, a, obj.n), v, a


def sandwich(v: np.ndarray, a: np.ndarray, n: int) -> np.ndarray:
    """V^-1 A V^-1 / n, symmetrised (:class:`IndefiniteHessianError` if V is not positive
    definite)."""
    eig = np.linalg.eigvalsh(v)
    if eig.min() <= 1e-12 * max(1.0, abs(eig).max()):
        raise IndefiniteHessianError(
            f"estimated Hessian V is not positive definite (smallest eigenvalue {eig.min():.3g})"
        )
    v_inv = np.linalg.inv(v)
    cov = v_inv @ a @ v_inv / n
    return 0.5 * (cov + cov.T)


def bootstrap_cov(
    obj: CorrectedObjective,
    refit: Callable[[CorrectedObjective], np.ndarray],
    n_boot: int,
    rng: np.random.Generator,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(cov, draws): covariance of ``refit`` over ``n_boot`` resamples of released records,
    with a progress bar (rich, on stderr, gone when done) unless ``progress`` is false."""
    draws = np.empty((n_boot, obj.p))
    for b in progress_iter(range(n_boot), f"bootstrap ({n_boot} refits)", progress):
        rows = rng.integers(0, obj.n, obj.n)
        draws[b] = refit(obj.restricted(rows))
    return np.cov(draws, rowvar=False).reshape(obj.p, obj.p), draws


#: The public rule's threshold (docs/dr-estimation.md, "Which intervals to trust"): a
#: feature whose noise variance may exceed this many times its own variance has a Wald
#: interval that is too short. Calibrated on the README's survey, checked on held-out data.
NOISE_RATIO_LIMIT = 50.0


def _column_sums(obj: CorrectedObjective, center: np.ndarray | None) -> dict[str, Any]:
    """Sums of the released X1's columns (``center`` None), or of their centred squares
    and fourth powers."""
    x = obj.data.x1
    if center is None:
        return {"n": obj.n, "s": x.sum(axis=0)}
    c2 = (x - center) ** 2
    return {"n": obj.n, "s": np.stack([c2.sum(axis=0), (c2 * c2).sum(axis=0)])}


def noise_dominated(
    obj: Objective, limit: float = NOISE_RATIO_LIMIT, z: float = 1.645
) -> np.ndarray:
    """(d,) bool: features whose public noise variance may be more than ``limit`` times
    their own variance (docs/dr-estimation.md, "Which intervals to trust").

    Post-processing of the release only: the released X1's sample variance v minus the
    public variance of its noise, (1 - zero_prob) s_j^2, estimates the feature's own
    variance; the rule flags feature j when that estimate minus ``z`` standard errors
    (the sample variance's, sqrt((m4 - v^2) / n) with m4 the fourth central moment) is below
    its noise variance / ``limit``, so a feature is left unflagged only when the release
    shows its variance to be large enough. Unnoised features are never flagged.
    """
    data = obj.data
    noise = (1.0 - data.zero_prob) * data.noise_var
    n = obj.n
    mean = obj.reduce(_column_sums, None)["s"] / n
    c2, c4 = obj.reduce(_column_sums, mean)["s"] / n
    signal = c2 - noise - z * np.sqrt(np.clip(c4 - c2**2, 0.0, None) / n)
    return data.noised & (limit * signal < noise)

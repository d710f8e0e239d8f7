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
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from privest.learn.losses import HingeLoss, Loss, QuantileRegressionLoss
from privest.learn.objective import CorrectedObjective, Term

__all__ = ["IndefiniteHessianError", "bootstrap_cov", "sandwich", "sandwich_cov"]


class IndefiniteHessianError(RuntimeError):
    """The estimated V is not positive definite: the sandwich is unavailable."""


def kernel_residuals(loss: Loss, t: Term, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, r) of one term: the design and the distance to the kink, r = y - u (check) or
    1 - y u (hinge)."""
    d = loss.design(t.x)
    y = loss.response(t.y, d.shape[0])
    u = d @ theta
    return d, (1.0 - y * u if isinstance(loss, HingeLoss) else y - u)


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


def ridge_hessian(loss: Loss, p: int) -> np.ndarray:
    """The Hessian of the ridge penalty (alpha on beta, not the intercept; 0 without one)."""
    alpha = float(getattr(loss, "alpha", 0.0))
    mask = np.r_[0.0, np.ones(p - 1)] if loss.fit_intercept else np.ones(p)
    return alpha * np.diag(mask)


def _kernel_hessian(obj: CorrectedObjective, theta: np.ndarray) -> np.ndarray:
    """Corrected kernel estimate of V for check and hinge losses.

    V = E[K(kink distance) D D'] is estimated term by term with the DR (or naive) weights:
    sum_t w_t (1/n) sum_i K_h(r_ti) D_ti D_ti', with r = y - u (check) or 1 - y u (hinge),
    a Gaussian kernel and h = 1.06 min(sd, IQR/1.34) n^(-1/5) from the first term's r.
    The DR identity applies to any function of x, so the estimate is unbiased for its
    smoothed target; the ridge Hessian is added once. The out-of-core fit sums
    :func:`kernel_sum` over partitions with the same h.
    """
    r = kernel_residuals(obj.loss, obj.terms[0], theta)[1]
    q75, q25 = np.percentile(r, [75, 25])
    h = kernel_bandwidth(float(np.std(r)), float(q75 - q25), obj.n)
    v = kernel_sum(obj, theta, h) / obj.n + ridge_hessian(obj.loss, obj.p)
    return 0.5 * (v + v.T)


# rows per block of scores in score_covariance (an (n, p) array of them is never formed)
SCORE_BLOCK = 65_536


def hessian_estimate(obj: CorrectedObjective, theta: np.ndarray) -> np.ndarray:
    """V_hat: analytic corrected Hessian, corrected kernel estimate (check, hinge), or
    central differences of the mean score (other nonsmooth losses)."""
    if isinstance(obj.loss, (QuantileRegressionLoss, HingeLoss)):
        return _kernel_hessian(obj, theta)
    if obj.has_hessian():
        return obj.hess(theta)
    h = obj.n ** (-1.0 / 3.0)
    cols = []
    for j in range(obj.p):
        e = np.zeros(obj.p)
        e[j] = h
        cols.append((obj.grad(theta + e) - obj.grad(theta - e)) / (2 * h))
    v = np.column_stack(cols)
    return 0.5 * (v + v.T)


def score_covariance(
    obj: CorrectedObjective, theta: np.ndarray, block: int = SCORE_BLOCK
) -> np.ndarray:
    """A_hat = (1/n) sum_i (psi_i - psi_bar)(psi_i - psi_bar)' (Thm 5.3's middle matrix).

    On large data the scores are formed block by block of rows (cache-sized, never the whole
    (n, p) array), shifted by the first block's mean so that the one-pass formula does not
    cancel; the result equals the two-pass one up to rounding.
    """
    if obj.n <= block:
        psi = obj.scores(theta)
        psi = psi - psi.mean(axis=0)
        return psi.T @ psi / obj.n
    shift = None
    total, cross = np.zeros(obj.p), np.zeros((obj.p, obj.p))
    for start in range(0, obj.n, block):
        psi = obj.restricted(slice(start, start + block)).scores(theta)
        if shift is None:
            shift = psi.mean(axis=0)
        psi -= shift
        total += psi.sum(axis=0)
        cross += psi.T @ psi
    mean = total / obj.n
    return cross / obj.n - np.outer(mean, mean)


def sandwich_cov(
    obj: CorrectedObjective, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cov, V_hat, A_hat): cov = V^-1 A V^-1 / n."""
    a = score_covariance(obj, theta)
    v = hessian_estimate(obj, theta)
    return sandwich(v, a, obj.n), v, a


def sandwich(v: np.ndarray, a: np.ndarray, n: int) -> np.ndarray:
    """V^-1 A V^-1 / n, symmetrised (:class:`IndefiniteHessianError` if V is not positive
    definite). Also the out-of-core fit's, from per-partition sums of the scores."""
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
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(cov, draws): covariance of ``refit`` over ``n_boot`` resamples of released records."""
    draws = np.empty((n_boot, obj.p))
    from privest.progress import progress_iter

    for b in progress_iter(range(n_boot), "bootstrap", progress):
        rows = rng.integers(0, obj.n, obj.n)
        draws[b] = refit(obj.restricted(rows))
    return np.cov(draws, rowvar=False).reshape(obj.p, obj.p), draws

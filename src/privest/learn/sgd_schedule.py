"""Step schedules, public defaults and convergence checks for IWP-SGD (docs/iwp-sgd.md, Sec. 3).

Named schedules follow scikit-learn's ``SGDClassifier`` (step of batch t, 0-based):

* ``"constant"``: eta0 (paper 004, Sec. 6, the reproductions);
* ``"invscaling"``: eta0 / (t + 1)^power_t;
* ``"optimal"``: eta0 / (1 + eta0 alpha t), i.e. 1 / (alpha (t0 + t)) with t0 = 1 / (alpha eta0),
  the schedule of Thm 5.5 (step ~ 1 / (mu t) for a mu-strongly convex objective).

The defaults use only public quantities: the feature radius R of the release
(``PrivateExamples.x_radius``), sigma^2, the number of noised coordinates, the batch size
and the ridge alpha (see :func:`default_radius` and :func:`default_eta0`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import special
from sklearn.exceptions import ConvergenceWarning

from privest.errors import ValidationError
from privest.learn.losses import MarginLoss, get_margin_loss

SCHEDULES = ("constant", "invscaling", "optimal")
MIN_CONTRACTION = 3.0  # alpha * sum_t gamma_t below this: the start is not forgotten (e^-3)


def loss_name(loss: object) -> str:
    """The name a loss is shown by (its own, or the string that named it)."""
    return getattr(loss, "name", loss) if not isinstance(loss, str) else loss


def _slope(loss: str | MarginLoss) -> float:
    """|phi'(0)| of the margin loss (1 for exponential and squared, 1/2 for logistic)."""
    return get_margin_loss(loss).margin_slope()


def default_radius(loss: object, x_radius: float, alpha: float) -> float:
    """Public bound on the norm of the clean ridge optimum: |phi'(0)| R / alpha.

    The ridge objective F is alpha-strongly convex, so alpha ||theta*||^2 <=
    <grad F(theta*) - grad F(0), theta*> = -<grad F(0), theta*> <= ||grad F(0)|| ||theta*||,
    and ||grad F(0)|| = ||E phi'(0) y x|| <= |phi'(0)| R (labels in {-1, 1}, a regression
    target in [-1, 1]). Projecting on this ball leaves the clean optimum unchanged and keeps
    the iterate out of the region where the empirical IWP objective is unbounded below.
    """
    if not alpha > 0:
        raise ValidationError("theta_radius='auto' needs alpha > 0 (the bound is R / alpha)")
    return _slope(loss) * x_radius / alpha


RADIUS_Z = 4.0  # standard errors added to the estimate of ||grad F(0)|| (see release_radius)


def release_radius(
    loss: object,
    X: np.ndarray,
    y: np.ndarray,
    sigma2: float,
    epsilon_y: float,
    x_radius: float,
    alpha: float,
    y_bound: float = 1.0,
    y_noise_var: float = 0.0,
) -> float:
    """:func:`radius_from_sums` of the released features ``X`` and labels ``y``."""
    sums = {"n": X.shape[0], "yx": np.asarray(y, dtype=float) @ np.asarray(X, dtype=float)}
    return radius_from_sums(loss, sums, sigma2, epsilon_y, x_radius, alpha, y_bound, y_noise_var)


def radius_from_sums(
    loss: object,
    sums: dict,
    sigma2: float,
    epsilon_y: float,
    x_radius: float,
    alpha: float,
    y_bound: float = 1.0,
    y_noise_var: float = 0.0,
) -> float:
    """A bound on ||theta*|| read from the release itself (post-processing: free).

    ||theta*|| <= ||grad F(0)|| / alpha (see :func:`default_radius`), and grad F(0) =
    phi'(0) E[y x] for a margin loss (-E[y x] for least squares). The release gives an
    unbiased estimate: E[y~ x~] = (2 S - 1) E[y x] (labels kept with probability S,
    features with independent zero-mean noise), and the trace of the covariance of one
    term y~ x~ / (2 S - 1) is at most (R^2 + p sigma^2) (b^2 + sigma_y^2) / (2 S - 1)^2
    (|y| <= b = ``y_bound``, sigma_y^2 = ``y_noise_var`` the target's noise).
    The bound adds ``RADIUS_Z`` standard errors to ||estimate|| (Chebyshev: the clean
    optimum lies outside with probability < 1 / RADIUS_Z^2 = 6%, Gaussian limit far less)
    and never exceeds :func:`default_radius`. A tighter ball keeps the iterate away from
    the region where the IWP variance, ~ exp(sigma^2 ||theta||^2) for the exponential
    loss, explodes (paper 004, Thm 5.3 and Sec. 5.2). ``sums``: the release's n and
    ``yx`` = y~'X~ (:func:`~privest.learn.iwp_core.example_sums`).
    """
    n, p = sums["n"], sums["yx"].size
    keep = 2.0 / (1.0 + math.exp(-epsilon_y)) - 1.0 if math.isfinite(epsilon_y) else 1.0
    g = sums["yx"] / (n * keep)
    se = math.sqrt((x_radius**2 + p * sigma2) * (y_bound**2 + y_noise_var) / n) / keep
    bound = _slope(loss) * (float(np.linalg.norm(g)) + RADIUS_Z * se) / alpha
    return min(bound, default_radius(loss, x_radius, alpha) * y_bound)


def default_eta0(
    loss: object, x_radius: float, sigma2: float, p_noised: int, batch_size: int, alpha: float
) -> float:
    """A mean-square stable first step from public quantities.

    With curvature c, the batch-mean Hessian estimate of the corrected loss has mean of norm
    at most c R^2 + alpha and variance of order (c (R^2 + p sigma^2))^2 / B (the squared
    loss: x~ x~' - sigma^2 I). SGD contracts in mean square when
    eta <= 2 alpha / ((alpha + c R^2)^2 + (c (R^2 + p sigma^2))^2 / B); half of it is used.
    """
    c = get_margin_loss(loss).margin_curvature()  # |phi''(0)|: 1, 1/4 (logistic), 1
    mean = alpha + c * x_radius**2
    var = (c * (x_radius**2 + p_noised * sigma2)) ** 2 / batch_size
    return alpha / (mean**2 + var) if alpha > 0 else 1.0 / (mean**2 + var) ** 0.5


def make_schedule(
    learning_rate: str | float | Callable[[int], float],
    eta0: float,
    power_t: float,
    alpha: float,
) -> float | Callable[[int], float]:
    """The step of batch t: a float (constant) or a function of t, for :func:`sgd_replicated`."""
    if callable(learning_rate) or not isinstance(learning_rate, str):
        return learning_rate
    if learning_rate not in SCHEDULES:
        raise ValidationError(f"learning_rate: {learning_rate!r} is unknown; accepted: {SCHEDULES}")
    if not (isinstance(eta0, (int, float)) and eta0 > 0 and math.isfinite(eta0)):
        raise ValidationError(f"eta0: {eta0!r} must be a positive number")
    if learning_rate == "constant":
        return float(eta0)
    if learning_rate == "invscaling":
        if not 0 < power_t <= 1:
            raise ValidationError(f"power_t: {power_t!r} must be in (0, 1]")

        def step(t):
            return eta0 / (t + 1.0) ** power_t
    else:
        if not alpha > 0:
            raise ValidationError("learning_rate='optimal' needs alpha > 0")

        def step(t):
            return eta0 / (1.0 + eta0 * alpha * t)

    step.vectorized = True  # type: ignore[attr-defined]  # accepts an array of t
    return step


def release_curvature(X: np.ndarray, sigma2: float, noised: np.ndarray | None = None) -> float:
    """:func:`curvature_from_sums` of the released features ``X``."""
    X = np.asarray(X, dtype=float)
    return curvature_from_sums({"n": X.shape[0], "xx": X.T @ X}, sigma2, noised)


def curvature_from_sums(sums: dict, sigma2: float, noised: np.ndarray | None = None) -> float:
    """A public lower estimate of the squared loss's curvature, lambda_min(E[x x']), from the
    released features (post-processing: no privacy spent): the smallest eigenvalue of
    ``M = X'X / n - sigma2 diag(noised)`` (X~ = x + N(0, sigma2 I) on the noised coordinates,
    paper 004, App. E.2), less 4 sqrt(p) standard errors of M's entries (each about
    sqrt(2 / n) max_j E[x~_j^2], the Gaussian fourth moment), and 0 if negative. ``sums``:
    the release's n and ``xx`` = X~'X~ (:func:`~privest.learn.iwp_core.example_sums`)."""
    n, p = sums["n"], sums["xx"].shape[0]
    m = sums["xx"] / n
    se = math.sqrt(2.0 / n) * float(np.max(np.diag(m)))
    m[np.diag_indices_from(m)] -= sigma2 * (1.0 if noised is None else noised)
    return max(0.0, float(np.linalg.eigvalsh(m)[0]) - 4.0 * math.sqrt(p) * se)


def steps_to_contract(
    learning_rate: object, eta0: float, alpha: float, rate: float, target: float = MIN_CONTRACTION
) -> float | None:
    """The number of steps T with ``rate`` * (sum of the first T steps) = ``target``, for the
    named schedules with a closed-form sum (None for "invscaling" and callables).

    "optimal": sum_{t<T} eta0 / (1 + eta0 alpha t) = (psi(t0 + T) - psi(t0)) / alpha with
    t0 = 1 / (eta0 alpha) (psi the digamma function), solved for T by bisection; "constant"
    (or a number): T = target / (rate eta0)."""
    if not rate > 0:
        return None
    if not isinstance(learning_rate, str):
        if callable(learning_rate):
            return None
        eta0, learning_rate = float(learning_rate), "constant"  # type: ignore[arg-type]
    if learning_rate == "constant":
        return target / (rate * eta0)
    if learning_rate != "optimal" or not alpha > 0:
        return None
    t0 = 1.0 / (eta0 * alpha)
    need = target * alpha / rate  # psi(t0 + T) - psi(t0) >= need
    lo, hi = 0.0, 1.0
    while special.digamma(t0 + hi) - special.digamma(t0) < need:
        lo, hi = hi, 2.0 * hi
        if hi > 1e18:
            return math.inf
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if special.digamma(t0 + mid) - special.digamma(t0) < need else (lo, mid)
    return hi


def convergence_advice(steps_needed: float | None, n: int, batch_size: int, steps_done: int) -> str:
    """What to change when the start is not forgotten: the records one pass would need and
    the passes over this release that would reach the contraction (public quantities)."""
    if steps_needed is None or not math.isfinite(steps_needed):
        return "use more data, more passes (n_passes), a larger eta0 or a larger alpha"
    records = math.ceil(steps_needed * batch_size)
    passes = math.ceil(steps_needed / max(steps_done, 1))
    return (
        f"one pass at these settings needs about {records:,} records (n = {n:,}: too few "
        f"for this sigma^2 and alpha; a larger epsilon_x gives a smaller sigma^2), n_passes="
        f"{passes} reaches the contraction over this release (no privacy cost, but the passes "
        "reuse its noise and can overfit it: check a held-out loss), or a larger alpha (more "
        "shrinkage)"
    )


def check_convergence(
    theta: np.ndarray, history: np.ndarray, gamma_alpha_t: float, bound, advice: str = ""
):
    """Warn (ConvergenceWarning) if the run diverged, or if the ridge term alone cannot
    guarantee convergence (alpha * sum of steps below ``MIN_CONTRACTION``); ``advice`` (see
    :func:`convergence_advice`) says what to change."""
    norms = np.linalg.norm(history.reshape(history.shape[0], -1), axis=1)
    if not np.all(np.isfinite(theta)) or not np.all(np.isfinite(norms)):
        warnings.warn(
            "IWP-SGD diverged: the iterate is not finite; lower eta0, set theta_radius "
            "(e.g. 'auto') or raise alpha",
            ConvergenceWarning,
            stacklevel=3,
        )
        return
    if bound is not None and norms.max() > 100 * max(bound, 1.0):
        warnings.warn(
            f"IWP-SGD diverged: ||theta|| reached {norms.max():.3g}, far beyond the public "
            f"bound {bound:.3g} on the ridge optimum; lower eta0 or set theta_radius",
            ConvergenceWarning,
            stacklevel=3,
        )
        return
    if gamma_alpha_t < MIN_CONTRACTION:
        warnings.warn(
            f"IWP-SGD may not have converged: the contraction (alpha, plus the squared loss's "
            f"curvature estimated from the release) times the sum of steps is "
            f"{gamma_alpha_t:.3g} < {MIN_CONTRACTION:g}, so the fit may still be shrunk towards "
            "its start (the curvature of other losses is not counted); "
            + (advice or "use more data, more passes, a larger eta0 or a larger alpha"),
            ConvergenceWarning,
            stacklevel=3,
        )

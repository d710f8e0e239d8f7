"""The numerical core of IWP-SGD: :func:`sgd_replicated` (paper 004, Alg. 1).

theta_t = Proj(theta_{t-1} - gamma_t (mean_batch IWP_grad(theta_{t-1}) + alpha theta_{t-1})),
one pass over the release by default (Alg. 1; the sign typo of the paper's text is fixed,
A4 in docs/iwp-sgd.md, "Notes, errata and choices"). The defaults of this function are the
paper's (constant step, last iterate, no ridge, remainder batch dropped): the reproductions
in ``privest.experiments.iwp_*`` rely on them; the estimators in
:mod:`privest.learn.iwp_sgd` pass consistent defaults (docs/iwp-sgd.md, Sec. 3).

:func:`sgd_replicated` runs the loop for R replications at once (X of shape (R, n, p)): one
pair of small matrix products per batch for all replications.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from privest.errors import ValidationError
from privest.learn.iwp_losses import (
    iwp_gradient,
    iwp_regression_gradient,
    plain_gradient,
)
from privest.learn.weierstrass import ExponentialLoss, get_margin_loss, inverse_weight
from privest.validation import check_positive

__all__ = ["METHODS", "AVERAGING", "SGDPath", "sgd_replicated"]

METHODS = ("iwp", "naive", "oracle")
AVERAGING = (None, "polyak", "tail")


class SGDPath:
    """Output of :func:`sgd_replicated`: last iterate, averaged iterate and the trajectory."""

    def __init__(self, last, average, history, batches, orders, n_averaged=0, step_sum=0.0):
        self.last: np.ndarray = last  # (R, p)
        self.step_sum = step_sum  # sum of the steps taken (alpha * it: the start's decay)
        self.n_averaged = n_averaged  # iterates in ``average`` (0 = last iterate)
        self.average: np.ndarray = average  # (R, p), averaged per ``averaging``
        self.history: np.ndarray = history  # (T, R, p)
        self.batches: np.ndarray = batches  # (T,) batch index of each recorded iterate
        self.orders = orders


def _gradient_fn(
    method: str,
    task: str,
    loss: str,
    sigma2: float,
    epsilon_y: float,
    order: int | str,
    noised: np.ndarray | None = None,
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    if task == "regression":
        corrected = method == "iwp"
        return lambda th, Xb, yb: iwp_regression_gradient(th, Xb, yb, sigma2, corrected, noised)
    if method == "iwp":
        w = inverse_weight(epsilon_y)
        return lambda th, Xb, yb: iwp_gradient(
            th, Xb, yb, sigma2, epsilon_y, loss, order, w, noised
        )
    return lambda th, Xb, yb: plain_gradient(th, Xb, yb, loss)


def _fused_exponential(
    method: str,
    sigma2: float,
    epsilon_y: float,
    noised: np.ndarray | None,
    alpha: float,
    p: int,
    radius: float | None,
) -> Callable[..., float]:
    """One IWP-SGD step of the exponential loss for one replication, fused, theta in place.

    The same quantities as :func:`~privest.learn.iwp_losses.iwp_gradient` (closed form,
    Sec. 5.2) with one exponential per example (e^{m} = 1 / e^{-m}), preallocated buffers
    (``out=``), the label applied once to both exponentials so that one BLAS product gives
    both weighted sums, and no overflow scan: when an exponent overflows, a sum the step
    needs anyway is not finite, theta is left unchanged and the step returns -1; the caller
    then takes the clipping path (which warns). Arguments: theta (p,), X (B, p), y (B,),
    -y (B,), the step size and ||theta||^2; the step projects theta on the ball of radius
    ``radius`` and returns its new squared norm (one norm per step, not two).
    """
    w = inverse_weight(epsilon_y) if method == "iwp" else 1.0
    # gradient = c X'(y a) + (alpha - sigma^2 c sum b) theta_n, c = e^{-s/2} / B (Sec. 5.2),
    # a = w1 e^{m} - w e^{-m}, b = w e^{-m} + w1 e^{m}, w1 = 1 - w; the plain gradient
    # (naive, oracle) is a = -e^{-m}, b = 0
    a0, a1 = -w, 1.0 - w
    b0, b1 = (w, 1.0 - w) if method == "iwp" else (0.0, 0.0)
    s2 = sigma2 if method == "iwp" else 0.0
    half_s2 = 0.5 * s2
    r2 = math.inf if radius is None else radius * radius
    M, grad = np.empty((2, p)), np.empty(p)
    sums, thn, coef = np.empty(2), np.empty(p), np.empty(2)
    dot, exp, divide, multiply, isfinite, mexp = (
        np.dot,
        np.exp,
        np.divide,
        np.multiply,
        math.isfinite,
        math.exp,
    )
    bufs: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def buffers(nb: int) -> tuple[np.ndarray, np.ndarray]:
        bufs[nb] = (np.empty((2, nb)), np.ones(nb))
        return bufs[nb]

    def step(theta, X, y, neg_y, gamma, sq) -> float:
        nb = y.size
        Z, ones = bufs.get(nb) or buffers(nb)
        E = Z[0]
        dot(X, theta, out=E)
        multiply(E, neg_y, out=E)
        exp(E, out=E)  # e^{-m}, m = y theta'x
        divide(1.0, E, out=Z[1])
        dot(Z, ones, out=sums)  # (sum e^{-m}, sum e^{m})
        s_neg, s_pos = sums.tolist()
        if not isfinite(s_neg + s_pos):  # an exponent overflowed
            return -1.0
        if noised is not None:
            multiply(theta, noised, out=thn)
            sq = float(dot(thn, thn))
        c = mexp(-half_s2 * sq) / nb
        Z *= y
        dot(Z, X, out=M)  # (sum y e^{-m} x, sum y e^{m} x)
        coef[0] = a0 * gamma * c
        coef[1] = a1 * gamma * c
        dot(coef, M, out=grad)
        shrink = gamma * (alpha - s2 * c * (b0 * s_neg + b1 * s_pos))
        if noised is None:
            theta *= 1.0 - shrink
        else:
            multiply(thn, shrink, out=thn)
            theta -= thn
        theta -= grad
        sq = float(dot(theta, theta))
        if sq > r2:  # the projection on the ball of radius ``radius``
            theta *= radius / math.sqrt(sq)
            sq = r2
        return sq

    return step


def _check_args(method, averaging, batch_size, n, n_passes, learning_rate, alpha, radius):
    if method not in METHODS:
        raise ValidationError(f"method: {method!r} is unknown; accepted: {METHODS}")
    if averaging not in AVERAGING:
        raise ValidationError(f"averaging: {averaging!r} is unknown; accepted: {AVERAGING}")
    if not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= n:
        raise ValidationError(f"batch_size: {batch_size!r} must be an integer in [1, n={n}]")
    if not isinstance(n_passes, (int, np.integer)) or n_passes < 1:
        raise ValidationError(f"n_passes: {n_passes!r} must be a positive integer")
    if not callable(learning_rate):
        check_positive(learning_rate, "learning_rate")
    if not (isinstance(alpha, (int, float, np.integer, np.floating)) and alpha >= 0):
        raise ValidationError(f"alpha: {alpha!r} must be a real number >= 0 (ridge)")
    if radius is not None:
        check_positive(radius, "theta_radius")


def _step_array(learning_rate, start_step: int, total: int) -> np.ndarray:
    """The step of each batch of this call (a named schedule is evaluated in one call)."""
    if not callable(learning_rate):
        return np.full(total, float(learning_rate))
    if getattr(learning_rate, "vectorized", False):
        return np.asarray(learning_rate(np.arange(start_step, start_step + total)), float)
    return np.array([float(learning_rate(start_step + t)) for t in range(total)])


def sgd_replicated(
    X: np.ndarray,
    y: np.ndarray,
    *,
    method: str = "iwp",
    loss: str = "exponential",
    task: str = "classification",
    sigma2: float = 0.0,
    epsilon_y: float = math.inf,
    order: int | str = "auto",
    batch_size: int = 128,
    learning_rate: float | Callable[[int], float] = 1e-4,
    alpha: float = 0.0,
    theta_radius: float | None = None,
    n_passes: int = 1,
    averaging: str | None = None,
    theta0: np.ndarray | None = None,
    record_every: int | None = None,
    progress: bool = False,
    description: str = "IWP-SGD",
    noised: np.ndarray | None = None,
    drop_last: bool = True,
    start_step: int = 0,
    average0: tuple[np.ndarray, int] | None = None,
) -> SGDPath:
    """Run Algorithm 1 (or a baseline) on R replications at once; X (R, n, p), y (R, n).

    Batches are taken in the given order; the remainder batch is dropped (A4, the paper's
    reproductions) unless ``drop_last=False`` (the estimators: a last smaller batch). With
    ``learning_rate`` callable, the step of batch t (0-based, across passes, counted from
    ``start_step``) is lr(t). ``noised``: mask of the noised coordinates (an appended public
    intercept column is not). ``average0 = (average, count)`` continues a running average
    (``partial_fit``): every iterate of this call is then averaged.

    One function on purpose: the loop over batches keeps its state in local variables,
    because a fit's time is this loop's per-step overhead.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim == 2:
        X, y = X[None], y[None]
    R, n, p = X.shape
    _check_args(method, averaging, batch_size, n, n_passes, learning_rate, alpha, theta_radius)
    grad = _gradient_fn(method, task, loss, sigma2, epsilon_y, order, noised)
    fused = None
    if R == 1 and task == "classification" and isinstance(get_margin_loss(loss), ExponentialLoss):
        fused = _fused_exponential(method, sigma2, epsilon_y, noised, float(alpha), p, theta_radius)
    full = n // batch_size
    rest = 0 if drop_last else n - full * batch_size
    per_pass = full + (rest > 0)
    total = per_pass * n_passes
    if record_every is None:
        record_every = max(1, total // 200)
    theta = np.zeros((R, p)) if theta0 is None else np.array(np.broadcast_to(theta0, (R, p)))
    avg_sum = np.zeros_like(theta)  # sum of the averaged iterates
    n_avg = 0
    tail_start = total // 2 if averaging == "tail" else 0
    if average0 is not None and average0[1] > 0:
        n_avg, tail_start = int(average0[1]), 0
        avg_sum = np.array(average0[0], dtype=float) * n_avg
    steps = _step_array(learning_rate, start_step, total)
    Xb_all = X[:, : full * batch_size].reshape(R, full, batch_size, p)
    yb_all = y[:, : full * batch_size].reshape(R, full, batch_size)
    last = (X[:, full * batch_size :], y[:, full * batch_size :])  # the smaller last batch
    if fused is not None:  # one replication: the batches as 2-D views, made once
        neg_y = -y[0]
        neg_blocks = neg_y[: full * batch_size].reshape(full, -1)
        blocks = list(zip(Xb_all[0], yb_all[0], neg_blocks, strict=True))
        if rest:
            blocks.append((last[0][0], last[1][0], neg_y[full * batch_size :]))
        step_list = steps.tolist()
    ridge = None if not alpha else alpha * (1.0 if noised is None else noised)
    theta1 = theta[0]  # a view: every update of theta below is in place
    sq = float(theta1 @ theta1) if fused is not None else -1.0  # ||theta||^2 (fused path)
    hist = [theta.copy()]
    marks = [0]
    bar = None
    if progress and total * R * batch_size >= 2_000_000:
        from privest.progress import progress_bar

        bar = progress_bar()
        bar.start()
        task_id = bar.add_task(description, total=total)
    try:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for t in range(total):
                b = t % per_pass
                if fused is not None:  # one replication: the fused step (and projection)
                    sq = fused(theta1, *blocks[b], step_list[t], sq)
                if sq < 0.0:  # generic path (or an overflow: the clipping path warns)
                    Xb, yb = (Xb_all[:, b], yb_all[:, b]) if b < full else last
                    g = grad(theta, Xb, yb)
                    if ridge is not None:  # ridge on the noised coordinates only
                        g = g + ridge * theta
                    g *= steps[t]
                    theta -= g
                    if theta_radius is not None:
                        norms = np.sqrt(np.einsum("rp,rp->r", theta, theta))
                        if norms.max() > theta_radius:
                            theta *= np.minimum(1.0, theta_radius / norms)[:, None]
                    sq = float(theta1 @ theta1) if fused is not None else -1.0
                if averaging is not None and t >= tail_start:
                    n_avg += 1
                    avg_sum += theta
                if (t + 1) % record_every == 0 or t + 1 == total:
                    hist.append(theta.copy())
                    marks.append(t + 1)
                if bar is not None and (t + 1) % 500 == 0:
                    bar.update(task_id, completed=t + 1)
    finally:
        if bar is not None:
            bar.stop()
    avg = avg_sum / max(n_avg, 1)
    average = avg if averaging is not None else theta
    return SGDPath(
        theta, average, np.stack(hist), np.asarray(marks), order, n_avg, float(steps.sum())
    )

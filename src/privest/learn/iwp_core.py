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
    method: str, sigma2: float, epsilon_y: float, noised: np.ndarray | None, alpha: float
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray | None]:
    """Gradient + ridge of the exponential loss for one replication, in one fused pass.

    The same quantities as :func:`~privest.learn.iwp_losses.iwp_gradient` (closed form,
    Sec. 5.2) with one exponential per example instead of two (e^{m} = 1 / e^{-m}) and no
    overflow scan: when an exponent overflows, a sum it needs anyway is not finite, it
    returns None and the caller falls back to the clipping path (which warns).
    """
    w = inverse_weight(epsilon_y) if method == "iwp" else 1.0
    w1 = 1.0 - w
    ones: list[np.ndarray] = [np.ones(0)]  # sums as BLAS dot products (cheaper than .sum())

    def grad(th: np.ndarray, Xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
        theta, X, y = th[0], Xb[0], yb[0]
        thn = theta if noised is None else theta * noised
        E = X @ theta
        E *= y
        np.negative(E, out=E)
        np.exp(E, out=E)  # e^{-m}, m = y theta'x
        nb = y.size
        if ones[0].size != nb:
            ones[0] = np.ones(nb)
        o = ones[0]
        if method != "iwp":  # the plain gradient f'(m) y x, f' = -e^{-m}
            if not math.isfinite(float(E @ o)):
                return None
            return (((E * y) @ X) * (-1.0 / nb) + alpha * thn)[None]
        c = math.exp(-0.5 * sigma2 * float(thn @ thn)) / nb
        if w1 == 0.0:  # a = -c e^{-m}, b = c e^{-m}
            v, b_sum = -E, float(E @ o)
        else:  # a = c (w1 e^{m} - w e^{-m}), b = c (w e^{-m} + w1 e^{m})
            Einv = 1.0 / E
            b_sum = w * float(E @ o) + w1 * float(Einv @ o)
            Einv *= w1
            E *= w
            v = Einv - E
        if not math.isfinite(b_sum):  # an exponent overflowed
            return None
        v *= y
        g = (v @ X) * c + (alpha - sigma2 * c * b_sum) * thn
        return g[None]

    return grad


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
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim == 2:
        X, y = X[None], y[None]
    R, n, p = X.shape
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
    if theta_radius is not None:
        check_positive(theta_radius, "theta_radius")
    grad = _gradient_fn(method, task, loss, sigma2, epsilon_y, order, noised)
    fused = None
    if R == 1 and task == "classification" and isinstance(get_margin_loss(loss), ExponentialLoss):
        fused = _fused_exponential(method, sigma2, epsilon_y, noised, float(alpha))
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
    if not callable(learning_rate):
        steps = np.full(total, float(learning_rate))
    elif getattr(learning_rate, "vectorized", False):  # a named schedule: one array call
        steps = np.asarray(learning_rate(np.arange(start_step, start_step + total)), float)
    else:
        steps = np.array([float(learning_rate(start_step + t)) for t in range(total)])
    Xb_all = X[:, : full * batch_size].reshape(R, full, batch_size, p)
    yb_all = y[:, : full * batch_size].reshape(R, full, batch_size)
    last = (X[:, full * batch_size :], y[:, full * batch_size :])  # the smaller last batch
    ridge = None if not alpha else alpha * (1.0 if noised is None else noised)
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
                Xb, yb = (Xb_all[:, b], yb_all[:, b]) if b < full else last
                g = fused(theta, Xb, yb) if fused is not None else None
                if g is None:  # generic path (or an overflow: the clipping path warns)
                    g = grad(theta, Xb, yb)
                    if ridge is not None:  # ridge on the noised coordinates only
                        g = g + ridge * theta
                g *= steps[t]
                theta -= g
                if theta_radius is not None:
                    if R == 1:
                        nrm = math.sqrt(float(theta[0] @ theta[0]))
                        if nrm > theta_radius:
                            theta *= theta_radius / nrm
                    else:
                        norms = np.sqrt(np.einsum("rp,rp->r", theta, theta))
                        if norms.max() > theta_radius:
                            theta *= np.minimum(1.0, theta_radius / norms)[:, None]
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

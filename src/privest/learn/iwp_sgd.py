"""IWP-SGD: SGD on locally private examples with inverse-Weierstrass correction (paper 004, Alg. 1).

theta_t = Proj(theta_{t-1} - gamma_t (mean_batch IWP_grad(theta_{t-1}) + alpha theta_{t-1})),
one pass over the release by default (Alg. 1; the sign typo of the paper's text is fixed,
A4 in docs/iwp-sgd.md, "Notes, errata and choices"). Further passes (``n_passes > 1``)
reuse the same release: the release is already (eps, delta)-LDP and training is
post-processing, so they cost no privacy; they do reuse the same noise, so the estimate is
no longer a fresh-sample SGD (Thm 5.5 covers one pass).

Three methods share the loop, data order, batch size, step and ridge (paper 004, Sec. 6):

* ``"iwp"``: the IWP gradient on a :class:`~privest.release.examples.PrivateExamples`;
* ``"naive"``: the plain gradient on the same release (biased, Thm 4.2);
* ``"oracle"``: the plain gradient on clean arrays (non-private reference).

:func:`sgd_replicated` runs the loop for R replications at once (X of shape (R, n, p)): one
pair of small matrix products per batch for all replications.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from privest.errors import ValidationError
from privest.learn.iwp_losses import (
    iwp_gradient,
    iwp_regression_gradient,
    plain_gradient,
)
from privest.learn.weierstrass import get_margin_loss, inverse_weight
from privest.release.examples import PrivateExamples
from privest.rng import resolve_rng
from privest.validation import as_float_matrix, check_bounds, check_positive

__all__ = ["IWPSGDClassifier", "IWPSGDRegressor", "SGDPath", "sgd_replicated"]

METHODS = ("iwp", "naive", "oracle")
AVERAGING = (None, "polyak", "tail")


class SGDPath:
    """Output of :func:`sgd_replicated`: last iterate, averaged iterate and the trajectory."""

    def __init__(self, last, average, history, batches, orders):
        self.last: np.ndarray = last  # (R, p)
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
) -> SGDPath:
    """Run Algorithm 1 (or a baseline) on R replications at once; X (R, n, p), y (R, n).

    Batches are taken in the given order; the remainder batch is dropped (A4). With
    ``learning_rate`` callable, the step of batch t (0-based, across passes) is lr(t).
    ``noised``: mask of the noised coordinates (an appended public intercept column is not).
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
    per_pass = n // batch_size
    total = per_pass * n_passes
    if record_every is None:
        record_every = max(1, total // 200)
    theta = np.zeros((R, p)) if theta0 is None else np.array(np.broadcast_to(theta0, (R, p)))
    avg = np.zeros_like(theta)
    n_avg = 0
    tail_start = total // 2 if averaging == "tail" else 0
    lr_const = None if callable(learning_rate) else float(learning_rate)
    hist = [theta.copy()]
    marks = [0]
    Xb_all = X[:, : per_pass * batch_size].reshape(R, per_pass, batch_size, p)
    yb_all = y[:, : per_pass * batch_size].reshape(R, per_pass, batch_size)
    bar = None
    if progress and total * R * batch_size >= 2_000_000:
        from privest.progress import progress_bar

        bar = progress_bar()
        bar.start()
        task_id = bar.add_task(description, total=total)
    try:
        for t in range(total):
            b = t % per_pass
            g = grad(theta, Xb_all[:, b], yb_all[:, b])
            if alpha:  # ridge on the noised coordinates (not on a public intercept)
                g = g + alpha * (theta if noised is None else theta * noised)
            step = lr_const if lr_const is not None else float(learning_rate(t))
            theta = theta - step * g
            if theta_radius is not None:
                norms = np.sqrt(np.einsum("rp,rp->r", theta, theta))
                theta = theta * np.minimum(1.0, theta_radius / np.maximum(norms, 1e-300))[:, None]
            if averaging is not None and t >= tail_start:
                n_avg += 1
                avg += (theta - avg) / n_avg
            if (t + 1) % record_every == 0 or t + 1 == total:
                hist.append(theta.copy())
                marks.append(t + 1)
            if bar is not None and (t + 1) % 500 == 0:
                bar.update(task_id, completed=t + 1)
    finally:
        if bar is not None:
            bar.stop()
    average = avg if averaging is not None else theta
    return SGDPath(theta, average, np.stack(hist), np.asarray(marks), order)


class _IWPSGDBase(BaseEstimator):
    _task = "classification"

    def _check_method(self, data: Any) -> None:
        if self.method not in METHODS:
            raise ValidationError(f"method: {self.method!r} is unknown; accepted: {METHODS}")
        if self.method in ("iwp", "naive") and not isinstance(data, PrivateExamples):
            raise ValidationError(
                f"method={self.method!r} fits a PrivateExamples release (release_examples(...)); "
                "raw arrays are accepted only by method='oracle' (non-private reference)"
            )
        if self.method == "oracle" and isinstance(data, PrivateExamples):
            raise ValidationError(
                "method='oracle' is SGD on clean data: pass arrays X, y; use 'iwp' or 'naive' "
                "for a release"
            )
        if isinstance(data, PrivateExamples) and data.task != self._task:
            raise ValidationError(f"data: a {data.task} release cannot fit a {self._task} model")

    def _run(self, X, y, sigma2, eps_y, loss):
        n, p = X.shape
        noised = None
        if self.fit_intercept:  # a public constant column: not noised, not penalised
            X = np.hstack([X, np.ones((n, 1))])
            noised = np.r_[np.ones(p), 0.0]
        if self.shuffle:
            perm = resolve_rng(self.random_state).permutation(n)
            X, y = X[perm], y[perm]
        path = sgd_replicated(
            X,
            y,
            method=self.method,
            loss=loss,
            task=self._task,
            sigma2=sigma2,
            epsilon_y=eps_y,
            order=getattr(self, "order", "auto"),
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            alpha=self.alpha,
            theta_radius=self.theta_radius,
            n_passes=self.n_passes,
            averaging=self.averaging,
            record_every=self.record_every,
            progress=self.progress,
            description=f"{type(self).__name__}({self.method})",
            noised=noised,
        )
        self.coef_ = path.average[0, :p]
        self.intercept_ = float(path.average[0, p]) if self.fit_intercept else 0.0
        self.trajectory_ = path.history[:, 0]
        self.trajectory_batches_ = path.batches
        self.n_batches_ = int(path.batches[-1])
        self.n_features_in_ = p
        return self

    def summary(self) -> str:
        """Coefficients, method, loss, passes and the guarantee of the release it was fit on.

        Fitting spends no privacy (post-processing of the release).
        """
        check_is_fitted(self, "coef_")
        names = [f"x{j}" for j in range(self.coef_.size)]
        coefs = ", ".join(f"{n}={c:.4g}" for n, c in zip(names, self.coef_, strict=True))
        privacy = (
            "clean data (oracle, no privacy)"
            if self.guarantee_ is None
            else f"{self.guarantee_} (fitting spends no privacy budget: post-processing)"
        )
        return "\n".join(
            [
                f"{type(self).__name__}: method={self.method}, "
                f"loss={getattr(self, 'loss', 'squared')}, batches={self.n_batches_}",
                f"privacy: {privacy}",
                f"coef: {coefs}; intercept={self.intercept_:.4g}",
            ]
        )

    def _map(self, X: Any) -> np.ndarray:
        X = as_float_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValidationError(
                f"X: has {X.shape[1]} features; the model has {self.n_features_in_}"
            )
        b = self.bounds_
        if b is None:
            return X
        return (X - b.mean(axis=1)) / ((b[:, 1] - b[:, 0]) / 2)


class IWPSGDClassifier(ClassifierMixin, _IWPSGDBase):
    """Linear classifier trained by IWP-SGD on a locally private release (paper 004, Alg. 1).

    Parameters: ``loss`` ("exponential", "logistic", "squared" or a MarginLoss); ``method``
    ("iwp", "naive" on a release; "oracle" on clean arrays); ``order`` (truncation K for
    non-closed-form losses, int or "auto", see :func:`~privest.learn.weierstrass.choose_order`);
    ``batch_size``; ``learning_rate`` (constant or callable of the batch index); ``alpha``
    (ridge, the paper's lambda); ``theta_radius`` (L2 ball for theta, None = none);
    ``averaging`` (None = last iterate as in the paper, "polyak" = mean of all iterates,
    "tail" = mean of the second half); ``n_passes``; ``shuffle`` (one pre-shuffle with
    ``random_state``); ``record_every`` (trajectory resolution); ``progress`` (rich bar);
    ``fit_intercept`` (default False as in the paper, A7 in docs/iwp-sgd.md: a public
    constant column, not noised and not penalised, left out of every sigma^2 term).

    Learned: ``coef_``, ``intercept_`` (0 unless ``fit_intercept``), ``classes_``,
    ``trajectory_`` (recorded iterates, the intercept last when fitted),
    ``trajectory_batches_``, ``guarantee_`` (the release's LDP guarantee, None for oracle).
    ``decision_function`` / ``predict`` take clean features in the caller's units and apply
    the release's public map (``bounds_``).
    """

    def __init__(
        self,
        *,
        loss: str = "exponential",
        method: str = "iwp",
        order: int | str = "auto",
        batch_size: int = 128,
        learning_rate: float | Callable[[int], float] = 1e-4,
        alpha: float = 0.0,
        theta_radius: float | None = None,
        averaging: str | None = None,
        n_passes: int = 1,
        shuffle: bool = False,
        record_every: int | None = None,
        progress: bool = True,
        random_state: Any = None,
        fit_intercept: bool = False,
    ):
        self.fit_intercept = fit_intercept
        self.loss = loss
        self.method = method
        self.order = order
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.theta_radius = theta_radius
        self.averaging = averaging
        self.n_passes = n_passes
        self.shuffle = shuffle
        self.record_every = record_every
        self.progress = progress
        self.random_state = random_state

    def fit(self, data: PrivateExamples | Any, y: Any = None, *, bounds: Any = None):
        """Fit on a release (``iwp``/``naive``) or on clean ``data, y`` (``oracle``).

        For the oracle, ``bounds`` applies the same public box map as a release made with
        ``bounds=`` so the three fits share coordinates.
        """
        self._check_method(data)
        get_margin_loss(self.loss)
        if isinstance(data, PrivateExamples):
            self.classes_ = data.classes
            self.bounds_ = data.bounds
            self.guarantee_ = (
                data.guarantee if math.isfinite(data.epsilon_x + data.epsilon_y) else None
            )
            return self._run(data.X, data.y, data.sigma2, data.epsilon_y, self.loss)
        X = as_float_matrix(data, "X")
        yy = np.asarray(y)
        self.classes_ = np.unique(yy)
        if self.classes_.size != 2:
            raise ValidationError(f"y: needs two classes, got {self.classes_.size}")
        self.bounds_ = None if bounds is None else check_bounds(bounds, X.shape[1])
        self.n_features_in_ = X.shape[1]
        self.guarantee_ = None
        ypm = np.where(yy == self.classes_[1], 1.0, -1.0)
        return self._run(self._map(X), ypm, 0.0, math.inf, self.loss)

    def decision_function(self, X: Any) -> np.ndarray:
        return self._map(X) @ self.coef_ + self.intercept_

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class IWPSGDRegressor(RegressorMixin, _IWPSGDBase):
    """Linear regression by IWP-SGD on a release with a noised target (paper 004, App. E.2).

    Gradient x~ (theta^T x~ - y~) - sigma^2 theta (+ alpha theta); ``method="naive"`` omits the
    correction, ``"oracle"`` fits clean arrays (pass ``bounds`` and ``y_bounds`` to use
    the release's coordinates). ``predict`` returns the target in the caller's units.
    """

    _task = "regression"

    def __init__(
        self,
        *,
        method: str = "iwp",
        batch_size: int = 128,
        learning_rate: float | Callable[[int], float] = 1e-4,
        alpha: float = 0.0,
        theta_radius: float | None = None,
        averaging: str | None = None,
        n_passes: int = 1,
        shuffle: bool = False,
        record_every: int | None = None,
        progress: bool = True,
        random_state: Any = None,
        fit_intercept: bool = False,
    ):
        self.fit_intercept = fit_intercept
        self.method = method
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.theta_radius = theta_radius
        self.averaging = averaging
        self.n_passes = n_passes
        self.shuffle = shuffle
        self.record_every = record_every
        self.progress = progress
        self.random_state = random_state

    def fit(
        self,
        data: PrivateExamples | Any,
        y: Any = None,
        *,
        bounds: Any = None,
        y_bounds: tuple[float, float] | None = None,
    ):
        self._check_method(data)
        if isinstance(data, PrivateExamples):
            self.bounds_ = data.bounds
            self.y_bounds_ = data.y_bounds
            self.guarantee_ = data.guarantee if math.isfinite(data.epsilon_x) else None
            return self._run(data.X, data.y, data.sigma2, math.inf, "squared")
        X = as_float_matrix(data, "X")
        yv = np.asarray(y, dtype=float)
        self.bounds_ = None if bounds is None else check_bounds(bounds, X.shape[1])
        self.y_bounds_ = None if y_bounds is None else tuple(y_bounds)
        self.n_features_in_ = X.shape[1]
        self.guarantee_ = None
        if self.y_bounds_ is not None:
            lo, hi = self.y_bounds_
            yv = (yv - (lo + hi) / 2) / ((hi - lo) / 2)
        return self._run(self._map(X), yv, 0.0, math.inf, "squared")

    def predict(self, X: Any) -> np.ndarray:
        out = self._map(X) @ self.coef_ + self.intercept_
        if self.y_bounds_ is None:
            return out
        lo, hi = self.y_bounds_
        return out * (hi - lo) / 2 + (lo + hi) / 2

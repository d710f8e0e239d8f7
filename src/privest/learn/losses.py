"""Loss catalogue for corrected-loss M-estimation on ZIL releases.

Paper 000 (Lu, Chen & Qiu), Sections 4 and 6 define the corrected losses built from a
loss l(x, theta) and the released copies X1 = X + Z, X2 = X1 + S:

* DR   (1/delta) l(X1) + (1 - 1/delta) l(X2)           (Section 4.1; no smoothness needed)
* SL   l(X2) - (1/2) Lap_w l(X2)                        (Section 6, eq. 6.1; l in C^2 in x)
* SDR  l(X1) - ((1 - delta)/2) Lap_w l(X2)              (Section 6; l in C^2 in x)

(delta the zero proportion) where ``Lap_w l = sum_k w_k d^2 l / dx_k^2`` is the Laplacian
weighted by the noise variance ``w_k = s_k^2`` of each feature column (0 for unnoised
columns; the paper's ``lam^2 Lap_x`` when every noised column has scale lam). This module gives
the losses themselves (the examples and experiments of paper Sections 4-7):
per-row values, gradients and Hessian sums in theta, and, for losses twice differentiable
in x, the Laplacian with its theta-derivatives. Everything is vectorised over rows.

Shapes: ``x`` is the (n, d) feature matrix (never the intercept or the response; a 1-D
``x`` is read as one column), ``y`` the (n,) response or ``None``, ``theta`` the (p,)
parameter, ``noise_var`` the (d,) weights w of the Laplacian (a boolean mask reads as
weights 0/1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privest.errors import ValidationError

__all__ = [
    "LOSS_NAMES",
    "CallableLoss",
    "HingeLoss",
    "IndexLoss",
    "LogisticLoss",
    "Loss",
    "LossNotSmoothError",
    "QuantileRegressionLoss",
    "ReLUNetLoss",
    "ScalarQuantileLoss",
    "SquaredLoss",
    "TransformedSquaredLoss",
    "abs_sin_squared",
    "get_loss",
    "indicator_squared",
    "relu_squared",
]

ArrayFn = Callable[[np.ndarray], np.ndarray]


class LossNotSmoothError(ValidationError):
    """The SL/SDR corrections need Lap_x l, which this loss does not provide (Condition 4)."""


# --------------------------------------------------------------------------------------
# numerical helpers


def _sigmoid(u: np.ndarray) -> np.ndarray:
    """Logistic function without overflow for any finite u."""
    e = np.exp(-np.abs(u))
    return np.where(u >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus(u: np.ndarray) -> np.ndarray:
    """log(1 + e^u), stable for large |u|."""
    return np.logaddexp(0.0, u)


def _check_tau(quantile: Any) -> float:
    try:
        tau = float(quantile)
    except (TypeError, ValueError):
        raise ValidationError(f"quantile: {quantile!r} is not a number in (0, 1)") from None
    if not 0.0 < tau < 1.0:
        raise ValidationError(f"quantile: {quantile!r} is out of range; accepted: (0, 1)")
    return tau


def _rho(r: np.ndarray, tau: float) -> np.ndarray:
    """Check function rho_tau(r) = r (tau - 1(r < 0))."""
    return r * (tau - (r < 0))


# --------------------------------------------------------------------------------------
# base class


class Loss:
    """A loss l(x, y, theta), evaluated row by row (paper 000 Section 4.1).

    Subclasses implement :meth:`n_params` and :meth:`value`; analytic :meth:`grad`,
    :meth:`hess_sum` and the Laplacian methods are optional. Flags:
    ``smooth_in_x`` (Laplacian methods available, needed by SL/SDR),
    ``smooth_in_theta`` (analytic gradient and Hessian, continuous in theta),
    ``piecewise_linear`` (check/hinge type, for LP or 1-D scan solvers).
    """

    name: str = "loss"
    smooth_in_x: bool = False
    smooth_in_theta: bool = False
    quadratic_in_theta: bool = False  # objective quadratic in theta: one Newton step is exact
    piecewise_linear: bool = False

    # -- shapes -------------------------------------------------------------------------
    def n_params(self, d: int) -> int:
        """Number of parameters p for d feature columns."""
        raise NotImplementedError(f"{type(self).__name__} does not define n_params")

    def param_names(self, feature_names: Sequence[str]) -> list[str]:
        """Names of the p parameters (generic ``theta0``, ``theta1``, ...)."""
        p = self.n_params(len(feature_names))
        return [f"theta{j}" for j in range(p)]

    def initial_theta(self, d: int) -> np.ndarray:
        """A starting value for solvers (zeros)."""
        return np.zeros(self.n_params(d))

    def _x(self, x: Any) -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValidationError(
                f"x: has shape {arr.shape}; loss {self.name!r} expects an (n, d) feature matrix"
            )
        return arr

    def _theta(self, theta: Any, d: int) -> np.ndarray:
        th = np.asarray(theta, dtype=float)
        if th.ndim == 0:
            th = th[None]
        p = self.n_params(d)
        if th.shape != (p,):
            raise ValidationError(
                f"theta: has shape {th.shape}; loss {self.name!r} with d={d} features needs "
                f"shape ({p},)"
            )
        return th

    def _var(self, noise_var: Any, d: int) -> np.ndarray:
        """The (d,) Laplacian weights: noise variances of the feature columns (all 1: None)."""
        if noise_var is None:
            return np.ones(d)
        w = np.asarray(noise_var, dtype=float)
        if w.shape != (d,) or not np.all(w >= 0) or not np.all(np.isfinite(w)):
            raise ValidationError(
                f"noise_var: has shape {w.shape}; expected ({d},) finite weights >= 0, one "
                "per feature column (0 for unnoised columns)"
            )
        return w

    @staticmethod
    def _weights(weights: Any, n: int) -> np.ndarray:
        if weights is None:
            return np.ones(n)
        w = np.asarray(weights, dtype=float)
        if w.ndim == 0:
            return np.full(n, float(w))
        if w.shape != (n,):
            raise ValidationError(f"weights: has shape {w.shape}; expected ({n},)")
        return w

    # -- summed evaluations used by the solvers (override for speed) -------------------------
    def value_grad_sum(self, x, y, theta, weight: float = 1.0) -> tuple[float, np.ndarray]:
        """(weight * sum_i l_i, weight * sum_i grad l_i): what an optimiser needs per term."""
        return weight * float(np.sum(self.value(x, y, theta))), weight * self.grad(x, y, theta).sum(
            axis=0
        )

    def laplacian_value_grad_sum(self, x, y, theta, noise_var, weight: float = 1.0):
        """(weight * sum_i Lap_w l_i, weight * sum_i grad Lap_w l_i)."""
        return weight * float(np.sum(self.laplacian(x, y, theta, noise_var))), weight * (
            self.laplacian_grad(x, y, theta, noise_var).sum(axis=0)
        )

    # -- loss and theta-derivatives ---------------------------------------------------------
    def value(self, x: np.ndarray, y: np.ndarray | None, theta: np.ndarray) -> np.ndarray:
        """Per-row loss values, shape (n,)."""
        raise NotImplementedError(f"{type(self).__name__} does not define value")

    def grad(self, x: np.ndarray, y: np.ndarray | None, theta: np.ndarray) -> np.ndarray:
        """Per-row gradient in theta, (n, p): central finite differences of :meth:`value`.

        Step h_j = eps^(1/3) max(1, |theta_j|). For nonsmooth losses this approximates an
        a.e. derivative; subclasses override it with analytic forms.
        """
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        out = np.empty((x.shape[0], th.size))
        step = np.finfo(float).eps ** (1.0 / 3.0) * np.maximum(1.0, np.abs(th))
        for j in range(th.size):
            up, dn = th.copy(), th.copy()
            up[j] += step[j]
            dn[j] -= step[j]
            out[:, j] = (self.value(x, y, up) - self.value(x, y, dn)) / (up[j] - dn[j])
        return out

    def hess_sum(
        self,
        x: np.ndarray,
        y: np.ndarray | None,
        theta: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """(p, p) matrix sum_i w_i Hess_theta l(x_i, y_i, theta)."""
        raise NotImplementedError(
            f"loss {self.name!r} has no analytic Hessian in theta; use finite differences of "
            "the mean score or a kernel estimate"
        )

    # -- Laplacian in x (SL / SDR) ----------------------------------------------------------
    def _not_smooth(self) -> LossNotSmoothError:
        return LossNotSmoothError(
            f"loss {self.name!r} is not twice differentiable in x, so it has no Laplacian for "
            "the SL/SDR corrections; use method='dr', which needs no smoothness"
        )

    def laplacian(
        self, x: np.ndarray, y: np.ndarray | None, theta: np.ndarray, noise_var: np.ndarray
    ) -> np.ndarray:
        """(n,) weighted Laplacian sum_k w_k d^2 l / dx_k^2, w = ``noise_var``."""
        raise self._not_smooth()

    def laplacian_grad(
        self, x: np.ndarray, y: np.ndarray | None, theta: np.ndarray, noise_var: np.ndarray
    ) -> np.ndarray:
        """(n, p) gradient in theta of :meth:`laplacian`."""
        raise self._not_smooth()

    def laplacian_hess_sum(
        self,
        x: np.ndarray,
        y: np.ndarray | None,
        theta: np.ndarray,
        noise_var: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """(p, p) matrix sum_i v_i Hess_theta Lap_w l(x_i, y_i, theta), v = ``weights``."""
        raise self._not_smooth()

    def predict(self, x: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Model prediction where meaningful."""
        raise NotImplementedError(f"loss {self.name!r} has no prediction")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


# --------------------------------------------------------------------------------------
# single-index losses l = phi(y, b0 + x'beta) + penalty(theta)


class IndexLoss(Loss):
    """l(x, y, theta) = phi(y, u) + penalty(theta), u = b0 + x'beta (regression losses).

    With ``fit_intercept`` theta = [b0, beta], else theta = beta. With D = [1, x] (or x),
    W = diag(w) the Laplacian weights embedded in R^p (0 at the intercept), b = W theta and
    s = theta' W theta = sum_k w_k beta_k^2, the x-derivatives follow from the chain rule
    (d/dx_k l = beta_k phi'):

    * grad = phi'(u) D,  Hess = phi''(u) D D'
    * Lap_w l = s phi''(u)
    * grad Lap = 2 b phi''(u) + s phi'''(u) D
    * Hess Lap = 2 W phi'' + 2 phi''' (b D' + D b') + s phi'''' D D'

    (derivatives of phi in u). The penalty does not depend on x, so it needs no correction.
    """

    name = "index"

    def __init__(self, fit_intercept: bool = True) -> None:
        self.fit_intercept = bool(fit_intercept)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(fit_intercept={self.fit_intercept})"

    # phi and its derivatives in u -------------------------------------------------------
    def phi(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def dphi(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def d2phi(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def d3phi(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def d4phi(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # penalty (none by default) ----------------------------------------------------------
    def penalty(self, theta: np.ndarray) -> float:
        return 0.0

    def penalty_grad(self, theta: np.ndarray) -> np.ndarray:
        return np.zeros_like(theta)

    # plumbing ----------------------------------------------------------------------------
    def n_params(self, d: int) -> int:
        if int(d) < 1:
            raise ValidationError(f"d: {d} feature columns; need at least one")
        return int(d) + int(self.fit_intercept)

    def param_names(self, feature_names: Sequence[str]) -> list[str]:
        names = [str(f) for f in feature_names]
        return (["intercept"] if self.fit_intercept else []) + names

    def response(self, y: Any, n: int) -> np.ndarray:
        if y is None:
            raise ValidationError(f"y: loss {self.name!r} needs a response; got None")
        arr = np.asarray(y, dtype=float)
        if arr.size != n or arr.ndim > 2:
            raise ValidationError(f"y: has shape {arr.shape}; expected ({n},) to match x")
        return arr.reshape(n)

    def _prep(self, x: Any, y: Any, theta: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        return x, self.response(y, x.shape[0]), th

    def _beta(self, th: np.ndarray) -> tuple[float, np.ndarray]:
        if self.fit_intercept:
            return float(th[0]), th[1:]
        return 0.0, th

    def _u(self, x: np.ndarray, th: np.ndarray) -> np.ndarray:
        b0, beta = self._beta(th)
        return x @ beta + b0

    def design(self, x: np.ndarray) -> np.ndarray:
        """D = [1, x] with an intercept, else x."""
        if self.fit_intercept:
            return np.concatenate([np.ones((x.shape[0], 1)), x], axis=1)
        return x

    def _embed(self, th: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """b = W theta and the weights W embedded in R^p (0 at the intercept)."""
        wp = np.concatenate([[0.0], w]) if self.fit_intercept else w.copy()
        return wp * th, wp

    # the Loss interface -------------------------------------------------------------------
    def value(self, x, y, theta):
        x, y, th = self._prep(x, y, theta)
        return self.phi(y, self._u(x, th)) + self.penalty(th)

    def grad(self, x, y, theta):
        x, y, th = self._prep(x, y, theta)
        dphi = self.dphi(y, self._u(x, th))
        out = np.empty((x.shape[0], th.size))
        k = int(self.fit_intercept)
        out[:, 0] = dphi  # overwritten below when there is no intercept
        np.multiply(x, dphi[:, None], out=out[:, k:])
        pg = self.penalty_grad(th)
        if np.any(pg):
            out += pg[None, :]
        return out

    def _sum_design(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """D' v without building D."""
        xv = x.T @ v
        return np.concatenate([[v.sum()], xv]) if self.fit_intercept else xv

    def _gram(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """D' diag(v) D without building D."""
        xtvx = x.T @ (x * v[:, None])
        if not self.fit_intercept:
            return xtvx
        xv = x.T @ v
        return np.block([[np.array([[v.sum()]]), xv[None, :]], [xv[:, None], xtvx]])

    def value_grad_sum(self, x, y, theta, weight=1.0):
        x, y, th = self._prep(x, y, theta)
        u = self._u(x, th)
        n = x.shape[0]
        val = float(np.sum(self.phi(y, u))) + n * self.penalty(th)
        grad = self._sum_design(x, self.dphi(y, u)) + n * self.penalty_grad(th)
        return weight * val, weight * grad

    def laplacian_value_grad_sum(self, x, y, theta, noise_var, weight=1.0):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x, y, th = self._prep(x, y, theta)
        b, _ = self._embed(th, self._var(noise_var, x.shape[1]))
        u = self._u(x, th)
        s = float(th @ b)
        d2 = self.d2phi(y, u)
        grad = 2.0 * float(d2.sum()) * b + s * self._sum_design(x, self.d3phi(y, u))
        return weight * s * float(d2.sum()), weight * grad

    def hess_sum(self, x, y, theta, weights=None):
        if not self.smooth_in_theta:
            return super().hess_sum(x, y, theta, weights)
        x, y, th = self._prep(x, y, theta)
        w = self._weights(weights, x.shape[0])
        return self._gram(x, w * self.d2phi(y, self._u(x, th)))

    def laplacian(self, x, y, theta, noise_var):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x, y, th = self._prep(x, y, theta)
        b, _ = self._embed(th, self._var(noise_var, x.shape[1]))
        return float(th @ b) * self.d2phi(y, self._u(x, th))

    def laplacian_grad(self, x, y, theta, noise_var):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x, y, th = self._prep(x, y, theta)
        b, _ = self._embed(th, self._var(noise_var, x.shape[1]))
        u = self._u(x, th)
        s = float(th @ b)
        return 2.0 * self.d2phi(y, u)[:, None] * b[None, :] + (
            s * self.d3phi(y, u)[:, None] * self.design(x)
        )

    def laplacian_hess_sum(self, x, y, theta, noise_var, weights=None):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x, y, th = self._prep(x, y, theta)
        w = self._weights(weights, x.shape[0])
        b, ind = self._embed(th, self._var(noise_var, x.shape[1]))
        u = self._u(x, th)
        s = float(th @ b)
        v3 = self._sum_design(x, w * self.d3phi(y, u))
        out = 2.0 * float(w @ self.d2phi(y, u)) * np.diag(ind)
        out += 2.0 * (np.outer(b, v3) + np.outer(v3, b))
        if s != 0.0:
            out += s * self._gram(x, w * self.d4phi(y, u))
        return out

    def predict(self, x, theta):
        """The linear index u = b0 + x'beta."""
        x = self._x(x)
        return self._u(x, self._theta(theta, x.shape[1]))


class LogisticLoss(IndexLoss):
    """Logistic regression, l = softplus(u) - y u, y in {0, 1} (paper 000, Sec. 7.2).

    phi'' = w = s(1 - s), phi''' = w(1 - 2s), phi'''' = w(1 - 6s + 6s^2) with s = sigmoid(u),
    so Lap_x l = ||beta_J||^2 w(u). The loss is linear in y, so a real-valued (noised)
    response is also accepted.
    """

    name = "logistic"
    smooth_in_x = True
    smooth_in_theta = True

    def __init__(self, fit_intercept: bool = False) -> None:
        super().__init__(fit_intercept)

    def phi(self, y, u):
        return _softplus(u) - y * u

    def dphi(self, y, u):
        return _sigmoid(u) - y

    def d2phi(self, y, u):
        s = _sigmoid(u)
        return s * (1.0 - s)

    def d3phi(self, y, u):
        s = _sigmoid(u)
        return s * (1.0 - s) * (1.0 - 2.0 * s)

    def d4phi(self, y, u):
        s = _sigmoid(u)
        return s * (1.0 - s) * (1.0 - 6.0 * s + 6.0 * s * s)

    def predict(self, x, theta):
        """P(y = 1 | x) = sigmoid(u)."""
        return _sigmoid(super().predict(x, theta))

    def predict_class(self, x: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Class labels in {0, 1} (1 where P(y = 1 | x) >= 1/2)."""
        return (super().predict(x, theta) >= 0).astype(int)


class SquaredLoss(IndexLoss):
    """Linear least squares, l = (y - u)^2; Lap_x l = 2 ||beta_J||^2."""

    name = "linear"
    smooth_in_x = True
    smooth_in_theta = True
    quadratic_in_theta = True

    def __init__(self, fit_intercept: bool = True) -> None:
        super().__init__(fit_intercept)

    def phi(self, y, u):
        r = y - u
        return r * r

    def dphi(self, y, u):
        return 2.0 * (u - y)

    def d2phi(self, y, u):
        return np.full(np.shape(u), 2.0)

    def d3phi(self, y, u):
        return np.zeros(np.shape(u))

    def d4phi(self, y, u):
        return np.zeros(np.shape(u))


class QuantileRegressionLoss(IndexLoss):
    """Quantile regression, l = rho_tau(y - u), rho_tau(r) = r(tau - 1(r < 0)).

    Paper 000, Sec. 7.3 uses tau = 1/2. Piecewise linear and not C^2 in x: DR only.
    The gradient is the a.e. derivative -(tau - 1(y - u < 0)) D.
    """

    name = "quantile"
    piecewise_linear = True

    def __init__(self, quantile: float = 0.5, fit_intercept: bool = True) -> None:
        super().__init__(fit_intercept)
        self.quantile = _check_tau(quantile)

    def __repr__(self) -> str:
        return (
            f"QuantileRegressionLoss(quantile={self.quantile}, fit_intercept={self.fit_intercept})"
        )

    def phi(self, y, u):
        return _rho(y - u, self.quantile)

    def dphi(self, y, u):
        return -(self.quantile - (y - u < 0))


class HingeLoss(IndexLoss):
    """SVM hinge loss, l = max(0, 1 - y u) + (alpha/2) ||beta||^2 per row (mentioned in
    paper 000, Sec. 1; no experiment).

    y in {-1, +1}; labels {0, 1} are accepted and 0 is mapped to -1. The ridge penalty
    (on beta, not the intercept) does not depend on x and needs no correction. Piecewise
    linear and not C^2 in x: DR only. The gradient is the a.e. derivative.
    """

    name = "hinge"
    piecewise_linear = True

    def __init__(self, alpha: float = 0.0, fit_intercept: bool = True) -> None:
        super().__init__(fit_intercept)
        alpha = float(alpha)
        if not (np.isfinite(alpha) and alpha >= 0):
            raise ValidationError(f"alpha: {alpha!r} is out of range; accepted: finite and >= 0")
        self.alpha = alpha

    def __repr__(self) -> str:
        return f"HingeLoss(alpha={self.alpha}, fit_intercept={self.fit_intercept})"

    def response(self, y, n):
        arr = super().response(y, n)
        arr = np.where(arr == 0, -1.0, arr)
        if not np.all(np.abs(arr) == 1.0):
            bad = arr[np.abs(arr) != 1.0][0]
            raise ValidationError(
                f"y: hinge loss labels must be -1/+1 (or 0/1, with 0 read as -1); found {bad!r}"
            )
        return arr

    def phi(self, y, u):
        return np.maximum(0.0, 1.0 - y * u)

    def dphi(self, y, u):
        return -y * (1.0 - y * u > 0)

    def penalty(self, theta):
        _, beta = self._beta(theta)
        return 0.5 * self.alpha * float(beta @ beta)

    def penalty_grad(self, theta):
        g = self.alpha * theta
        if self.fit_intercept:
            g[0] = 0.0
        return g

    def predict_class(self, x: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Labels in {-1, +1} (+1 where u >= 0)."""
        return np.where(self.predict(x, theta) >= 0, 1, -1)


# --------------------------------------------------------------------------------------
# scalar losses of one noised variable (paper Section 7.1)


class TransformedSquaredLoss(Loss):
    """l(x, theta) = (theta - g(x))^2 for one column x and scalar theta (paper 000, Sec. 7.1).

    d^2 l / dx^2 = 2 g'(x)^2 - 2 (theta - g(x)) g''(x). ``g``, ``g_prime`` and ``g_second``
    map a 1-D array to a 1-D array; the loss is ``smooth_in_x`` (SL/SDR allowed) only when
    both derivatives are given. Paper Section 7.1 uses ordinary a.e. derivatives for SL; for
    nonsmooth g this makes SL biased (docs/dr-estimation.md, "Paper errata and ambiguities",
    A2). The DR estimate has the closed form mean[(1/delta) g(X1) + (1 - 1/delta) g(X2)].
    """

    smooth_in_theta = True
    quadratic_in_theta = True

    def __init__(
        self,
        g: ArrayFn,
        g_prime: ArrayFn | None = None,
        g_second: ArrayFn | None = None,
        name: str = "transformed_squared",
    ) -> None:
        if not callable(g):
            raise ValidationError(f"g: {g!r} is not callable")
        if g_second is not None and g_prime is None:
            raise ValidationError(
                "g_second: given without g_prime; the Laplacian 2 g'^2 - 2 (theta - g) g'' "
                "needs both"
            )
        self.g, self.g_prime, self.g_second = g, g_prime, g_second
        self.name = str(name)
        self.smooth_in_x = g_second is not None

    def __repr__(self) -> str:
        return f"TransformedSquaredLoss(name={self.name!r}, smooth_in_x={self.smooth_in_x})"

    def n_params(self, d: int) -> int:
        if int(d) != 1:
            raise ValidationError(f"x: loss {self.name!r} takes one feature column; got d={d}")
        return 1

    def param_names(self, feature_names: Sequence[str]) -> list[str]:
        self.n_params(len(feature_names))
        return ["theta"]

    def _eval(self, fn: ArrayFn, x1: np.ndarray) -> np.ndarray:
        out = np.asarray(fn(x1), dtype=float)
        if out.shape not in (x1.shape, ()):
            raise ValidationError(
                f"loss {self.name!r}: g (or a derivative) returned shape {out.shape} for an "
                f"input of shape {x1.shape}; it must map a 1-D array to one of the same shape"
            )
        return np.broadcast_to(out, x1.shape)

    def _prep(self, x: Any, theta: Any) -> tuple[np.ndarray, float]:
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        return x[:, 0], float(th[0])

    def value(self, x, y, theta):
        x1, t = self._prep(x, theta)
        r = t - self._eval(self.g, x1)
        return r * r

    def grad(self, x, y, theta):
        x1, t = self._prep(x, theta)
        return (2.0 * (t - self._eval(self.g, x1)))[:, None]

    def hess_sum(self, x, y, theta, weights=None):
        x1, _ = self._prep(x, theta)
        w = self._weights(weights, x1.size)
        return np.array([[2.0 * float(w.sum())]])

    def laplacian(self, x, y, theta, noise_var):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x1, t = self._prep(x, theta)
        w = self._var(noise_var, 1)[0]
        if w == 0:
            return np.zeros(x1.size)
        gp = self._eval(self.g_prime, x1)
        g2 = self._eval(self.g_second, x1)
        return w * (2.0 * gp * gp - 2.0 * (t - self._eval(self.g, x1)) * g2)

    def laplacian_grad(self, x, y, theta, noise_var):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x1, _ = self._prep(x, theta)
        w = self._var(noise_var, 1)[0]
        if w == 0:
            return np.zeros((x1.size, 1))
        return (-2.0 * w * self._eval(self.g_second, x1))[:, None]

    def laplacian_hess_sum(self, x, y, theta, noise_var, weights=None):
        if not self.smooth_in_x:
            raise self._not_smooth()
        x1, _ = self._prep(x, theta)
        self._var(noise_var, 1)
        self._weights(weights, x1.size)
        return np.zeros((1, 1))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def relu_squared() -> TransformedSquaredLoss:
    """l = (theta - max(x, 0))^2 (paper 7.1, l_1), with a.e. derivatives g' = 1(x > 0), g'' = 0.

    SL then estimates mean max(X2, 0), which is biased: for U ~ Laplace(b), b = lam/sqrt(2),
    E max(x + U, 0) - max(x, 0) = (b/2) exp(-|x|/b), which averages to
    (b^2/2)(1 - exp(-1/b)) over X ~ U(0, 1) (derived; a negative control in the tests). Use DR.
    """
    return TransformedSquaredLoss(
        _relu,
        lambda x: (x > 0).astype(float),
        lambda x: np.zeros_like(x),
        name="relu",
    )


def indicator_squared(lo: float = 0.5, hi: float = 1.0) -> TransformedSquaredLoss:
    """l = (theta - 1[lo, hi](x))^2 (paper 7.1, l_2), with a.e. derivatives g' = g'' = 0.

    SL with these derivatives estimates mean g(X2), which is biased; use DR.
    """
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValidationError(f"indicator_squared: need finite lo < hi; got ({lo}, {hi})")
    return TransformedSquaredLoss(
        lambda x: ((x >= lo) & (x <= hi)).astype(float),
        lambda x: np.zeros_like(x),
        lambda x: np.zeros_like(x),
        name="indicator",
    )


def _abs_sin(x: np.ndarray) -> np.ndarray:
    return np.abs(np.sin(2.0 * np.pi * x))


def _abs_sin_prime(x: np.ndarray) -> np.ndarray:
    return 2.0 * np.pi * np.cos(2.0 * np.pi * x) * np.sign(np.sin(2.0 * np.pi * x))


def _abs_sin_second(x: np.ndarray) -> np.ndarray:
    return -4.0 * np.pi**2 * _abs_sin(x)


def abs_sin_squared() -> TransformedSquaredLoss:
    """l = (theta - |sin 2 pi x|)^2 (paper 7.1, l_3), with a.e. g'' = -4 pi^2 g.

    The a.e. derivative misses the kinks of |sin| (delta masses of the distributional g''),
    so SL gives theta = (1 + 2 pi^2 lam^2) mean g(X2), far off (A2 in docs/dr-estimation.md).
    Use DR.
    """
    return TransformedSquaredLoss(_abs_sin, _abs_sin_prime, _abs_sin_second, name="abs_sin")


class ScalarQuantileLoss(Loss):
    """Scalar tau-quantile, l = rho_tau(x - theta) for one column x (paper 000, Sec. 5).

    Piecewise linear, DR only; the DR minimiser lies at a breakpoint.
    """

    name = "scalar_quantile"
    piecewise_linear = True

    def __init__(self, quantile: float = 0.5) -> None:
        self.quantile = _check_tau(quantile)

    def __repr__(self) -> str:
        return f"ScalarQuantileLoss(quantile={self.quantile})"

    def n_params(self, d: int) -> int:
        if int(d) != 1:
            raise ValidationError(f"x: loss {self.name!r} takes one feature column; got d={d}")
        return 1

    def param_names(self, feature_names: Sequence[str]) -> list[str]:
        self.n_params(len(feature_names))
        return [f"q{self.quantile:g}"]

    def value(self, x, y, theta):
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        return _rho(x[:, 0] - th[0], self.quantile)

    def grad(self, x, y, theta):
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        r = x[:, 0] - th[0]
        return (-(self.quantile - (r < 0)))[:, None].astype(float)


# --------------------------------------------------------------------------------------
# a user-defined nonsmooth loss: one-hidden-layer ReLU network (paper 000, Sec. 4.1)


class ReLUNetLoss(Loss):
    """f(x) = w2' relu(W1 x + b1) + b2 with ``hidden`` units; l = (y - f)^2 or logistic.

    ``task="regression"``: l = (y - f)^2; ``task="classification"``: l = softplus(f) - y f
    with y in {0, 1}. theta = [W1 (row-major, hidden x d), b1, w2, b2], p = hidden (d + 2) + 1.
    Not C^2 in x (ReLU kinks), so DR only (paper Section 4.1: "neural network models using
    the ReLU activation"). The gradient is exact backpropagation (a.e.).
    """

    name = "relu_net"

    def __init__(self, hidden: int = 8, task: str = "regression", seed: int = 0) -> None:
        if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or hidden < 1:
            raise ValidationError(f"hidden: {hidden!r} must be a positive integer")
        if task not in ("regression", "classification"):
            raise ValidationError(f"task: {task!r} must be 'regression' or 'classification'")
        self.hidden, self.task, self.seed = int(hidden), task, int(seed)

    def __repr__(self) -> str:
        return f"ReLUNetLoss(hidden={self.hidden}, task={self.task!r}, seed={self.seed})"

    def n_params(self, d: int) -> int:
        if int(d) < 1:
            raise ValidationError(f"d: {d} feature columns; need at least one")
        return self.hidden * (int(d) + 2) + 1

    def param_names(self, feature_names: Sequence[str]) -> list[str]:
        h = self.hidden
        w1 = [f"W1[{k},{f}]" for k in range(h) for f in feature_names]
        return w1 + [f"b1[{k}]" for k in range(h)] + [f"w2[{k}]" for k in range(h)] + ["b2"]

    def initial_theta(self, d: int) -> np.ndarray:
        """Small random weights from ``seed``: W1 ~ N(0, 1/d), w2 ~ N(0, 1/hidden), b = 0."""
        rng = np.random.default_rng(self.seed)
        h = self.hidden
        w1 = rng.standard_normal(h * d) / np.sqrt(d)
        w2 = rng.standard_normal(h) / np.sqrt(h)
        return np.concatenate([w1, np.zeros(h), w2, [0.0]])

    def _unpack(self, th: np.ndarray, d: int):
        h = self.hidden
        W1 = th[: h * d].reshape(h, d)
        b1 = th[h * d : h * d + h]
        w2 = th[h * d + h : h * d + 2 * h]
        return W1, b1, w2, float(th[-1])

    def _forward(self, x: np.ndarray, th: np.ndarray):
        W1, b1, w2, b2 = self._unpack(th, x.shape[1])
        a = x @ W1.T + b1
        hid = np.maximum(a, 0.0)
        return a, hid, w2, hid @ w2 + b2

    def response(self, y: Any, n: int) -> np.ndarray:
        if y is None:
            raise ValidationError(f"y: loss {self.name!r} needs a response; got None")
        arr = np.asarray(y, dtype=float)
        if arr.size != n:
            raise ValidationError(f"y: has shape {arr.shape}; expected ({n},) to match x")
        return arr.reshape(n)

    def _link(self, y: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Loss values and dl/df."""
        if self.task == "regression":
            r = f - y
            return r * r, 2.0 * r
        return _softplus(f) - y * f, _sigmoid(f) - y

    def value(self, x, y, theta):
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        f = self._forward(x, th)[3]
        return self._link(self.response(y, x.shape[0]), f)[0]

    def grad(self, x, y, theta):
        x = self._x(x)
        n, d = x.shape
        th = self._theta(theta, d)
        a, hid, w2, f = self._forward(x, th)
        dl = self._link(self.response(y, n), f)[1]
        da = (a > 0) * w2[None, :]  # df/da, (n, hidden)
        dW1 = (da[:, :, None] * x[:, None, :]).reshape(n, self.hidden * d)
        out = np.concatenate([dW1, da, hid, np.ones((n, 1))], axis=1)
        return dl[:, None] * out

    def predict(self, x, theta):
        """f(x) (regression) or P(y = 1 | x) = sigmoid(f) (classification)."""
        x = self._x(x)
        f = self._forward(x, self._theta(theta, x.shape[1]))[3]
        return f if self.task == "regression" else _sigmoid(f)


# --------------------------------------------------------------------------------------
# user-supplied losses


class CallableLoss(Loss):
    """Wrap a user function fn(x, y, theta) -> (n,) as a Loss (DR only: no Laplacian).

    ``n_params`` is p (an int) or a function d -> p. ``grad(x, y, theta) -> (n, p)`` is
    optional; without it the gradient is central finite differences of ``fn``. The output
    of ``fn`` (and ``grad``) is checked to be finite with the right shape; an exception on
    the first call is reported as a :class:`ValidationError`.
    """

    def __init__(
        self,
        fn: Callable[[np.ndarray, np.ndarray | None, np.ndarray], Any],
        n_params: int | Callable[[int], int],
        grad: Callable[[np.ndarray, np.ndarray | None, np.ndarray], Any] | None = None,
        name: str = "custom",
    ) -> None:
        if not callable(fn):
            raise ValidationError(f"fn: {fn!r} is not callable; pass fn(x, y, theta) -> (n,)")
        if grad is not None and not callable(grad):
            raise ValidationError(f"grad: {grad!r} is not callable")
        if not callable(n_params) and (
            isinstance(n_params, bool)
            or not isinstance(n_params, (int, np.integer))
            or n_params < 1
        ):
            raise ValidationError(
                f"n_params: {n_params!r} must be a positive integer or a function of d"
            )
        self.fn, self._grad_fn, self._p = fn, grad, n_params
        self.name = str(name)
        self._called = False

    def __repr__(self) -> str:
        return f"CallableLoss(name={self.name!r})"

    def n_params(self, d: int) -> int:
        if not callable(self._p):
            return int(self._p)
        p = self._p(int(d))
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValidationError(f"n_params({d}) returned {p!r}; expected a positive integer")
        return int(p)

    def _call(self, what: str, fn: Callable, x, y, th, shape: tuple[int, ...]) -> np.ndarray:
        if self._called:
            out = fn(x, y, th)
        else:
            try:
                out = fn(x, y, th)
            except Exception as exc:  # report a broken user function clearly
                raise ValidationError(
                    f"{what} of loss {self.name!r} raised {type(exc).__name__}: {exc} "
                    f"(called with x of shape {x.shape}, y={'None' if y is None else 'array'}, "
                    f"theta of shape {th.shape})"
                ) from exc
        try:
            arr = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise ValidationError(
                f"{what} of loss {self.name!r} returned {type(out).__name__}, not numbers"
            ) from None
        if arr.shape != shape:
            raise ValidationError(
                f"{what} of loss {self.name!r} returned shape {arr.shape}; expected {shape} "
                "(one value per row of x)"
            )
        if not np.all(np.isfinite(arr)):
            bad = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
            raise ValidationError(
                f"{what} of loss {self.name!r} returned a non-finite value ({arr.ravel()[bad]}) "
                f"at flat index {bad}; the loss must be finite on all of R^d"
            )
        return arr

    def value(self, x, y, theta):
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        out = self._call("fn", self.fn, x, y, th, (x.shape[0],))
        self._called = True
        return out

    def grad(self, x, y, theta):
        if self._grad_fn is None:
            return super().grad(x, y, theta)
        x = self._x(x)
        th = self._theta(theta, x.shape[1])
        return self._call("grad", self._grad_fn, x, y, th, (x.shape[0], th.size))


# --------------------------------------------------------------------------------------
# registry

_REGISTRY: dict[str, Callable[..., Loss]] = {
    "logistic": LogisticLoss,
    "linear": SquaredLoss,
    "quantile": QuantileRegressionLoss,
    "hinge": HingeLoss,
    "relu": relu_squared,
    "indicator": indicator_squared,
    "abs_sin": abs_sin_squared,
    "scalar_quantile": ScalarQuantileLoss,
    "relu_net": ReLUNetLoss,
}
LOSS_NAMES: tuple[str, ...] = tuple(_REGISTRY)


def get_loss(name: str, **kwargs: Any) -> Loss:
    """A catalogue loss by name, e.g. ``get_loss("quantile", quantile=0.25)``."""
    if name not in _REGISTRY:
        raise ValidationError(
            f"loss: {name!r} is not a known loss; choose one of {', '.join(LOSS_NAMES)} "
            "or wrap your own function with CallableLoss"
        )
    try:
        return _REGISTRY[name](**kwargs)
    except TypeError as exc:
        raise ValidationError(f"loss {name!r}: bad keyword arguments {kwargs}: {exc}") from None

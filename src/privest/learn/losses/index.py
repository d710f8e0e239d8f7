"""Single-index losses l = phi(y, b0 + x'beta) + penalty(theta): logistic, squared,
quantile regression and hinge (paper 000, Secs. 5-7).

The logistic and squared losses are also margin losses f(y theta'x) (paper 004, Sec. 5.2):
one class each serves both estimation families (the DR estimators read the index form,
IWP-SGD the margin form and its inverse Weierstrass transform)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privest.errors import ValidationError
from privest.learn.gram import weighted_gram
from privest.learn.losses.base import Loss, _check_tau, _rho, _sigmoid, _softplus
from privest.learn.losses.margin import (
    MarginLoss,
    fused_logistic_step,
    logistic_margin_derivative,
    logistic_margin_derivatives,
    squared_margin_derivative,
)

__all__ = ["HingeLoss", "IndexLoss", "LogisticLoss", "QuantileRegressionLoss", "SquaredLoss"]

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

    A kinked loss (``kink`` "check" or "hinge") is phi = rho(z) with z = a(y) + b(y) u the
    kink distance (:meth:`kink_line`) and rho(z) = s z + j (z)_+ piecewise linear,
    (s, j) = :attr:`kink_slopes` (the slope below the kink and its jump there).
    """

    name = "index"
    form = "index"

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

    def phi_derivs(self, y: np.ndarray, u: np.ndarray, orders: Sequence[int]) -> list[np.ndarray]:
        """phi^(k)(y, u) for each k in ``orders`` (0..4); losses override it to share work
        between orders (the batched solvers ask for several at once)."""
        fns = (self.phi, self.dphi, self.d2phi, self.d3phi, self.d4phi)
        return [fns[k](y, u) for k in orders]

    # kink (check and hinge losses) ----------------------------------------------------------
    @property
    def kink_slopes(self) -> tuple[float, float]:
        """(s, j): rho(z) = s z + j (z)_+ (slope s below the kink, s + j above it)."""
        raise NotImplementedError(f"loss {self.name!r} has no kink")

    def kink_line(self, y: np.ndarray) -> tuple[Any, Any]:
        """(a, b) with the kink distance z = a + b u (check: y - u; hinge: 1 - y u)."""
        raise NotImplementedError(f"loss {self.name!r} has no kink")

    def kink_distance(self, y: np.ndarray, u: np.ndarray) -> np.ndarray:
        """z = a(y) + b(y) u, where the loss has its kink (z = 0)."""
        a, b = self.kink_line(y)
        return a + b * u

    # penalty (none by default) ----------------------------------------------------------
    penalised: bool = False  # a penalty in theta (the batched objectives take none)

    def penalty(self, theta: np.ndarray) -> float:
        return 0.0

    def penalty_grad(self, theta: np.ndarray) -> np.ndarray:
        return np.zeros_like(theta)

    def penalty_hess(self, p: int) -> np.ndarray:
        """The (p, p) Hessian of the penalty (per record)."""
        return np.zeros((p, p))

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
        xtvx = weighted_gram(x, v)
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

    def _lap_prep(self, x, y, theta, noise_var):
        """(x, y, theta, b = W theta, W embedded, u, s = theta' W theta) for the Laplacian
        methods (raises when the loss is not smooth in x)."""
        if not self.smooth_in_x:
            raise self._not_smooth()
        x, y, th = self._prep(x, y, theta)
        b, ind = self._embed(th, self._var(noise_var, x.shape[1]))
        return x, y, th, b, ind, self._u(x, th), float(th @ b)

    def laplacian_value_grad_sum(self, x, y, theta, noise_var, weight=1.0):
        x, y, th, b, _, u, s = self._lap_prep(x, y, theta, noise_var)
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
        x, y, th, b, _, u, s = self._lap_prep(x, y, theta, noise_var)
        return s * self.d2phi(y, u)

    def laplacian_grad(self, x, y, theta, noise_var):
        x, y, th, b, _, u, s = self._lap_prep(x, y, theta, noise_var)
        out = np.multiply.outer(2.0 * self.d2phi(y, u), b)
        c = s * self.d3phi(y, u)  # times the design row D(x) = [1, x] or x, without building D
        k = int(self.fit_intercept)
        out[:, k:] += x * c[:, None]
        if k:
            out[:, 0] += c
        return out

    def laplacian_hess_sum(self, x, y, theta, noise_var, weights=None):
        x, y, th, b, ind, u, s = self._lap_prep(x, y, theta, noise_var)
        w = self._weights(weights, x.shape[0])
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


class LogisticLoss(IndexLoss, MarginLoss):
    """Logistic regression, l = softplus(u) - y u, y in {0, 1} (paper 000, Sec. 7.2).

    phi'' = w = s(1 - s), phi''' = w(1 - 2s), phi'''' = w(1 - 6s + 6s^2) with s = sigmoid(u),
    so Lap_x l = ||beta_J||^2 w(u). The loss is linear in y, so a real-valued (noised)
    response is also accepted.

    Margin form (paper 004): f(z) = log(1 + e^-z), z = y u with y in {-1, +1} (the same
    loss: softplus(u) - y u = f((2y - 1) u)); its inverse Weierstrass series is only
    asymptotic, truncated at K (``order="auto"``: the packaged table of App. D.7).
    """

    name = "logistic"
    smooth_in_x = True
    smooth_in_theta = True
    order_table = "logistic_truncation_bias.json"
    proba_scale = 1.0

    def __init__(self, fit_intercept: bool = False) -> None:
        super().__init__(fit_intercept)

    def phi(self, y, u):
        return _softplus(u) - y * u

    def dphi(self, y, u):
        return _sigmoid(u) - y

    def d2phi(self, y, u):
        return self.phi_derivs(y, u, (2,))[0]

    def d3phi(self, y, u):
        return self.phi_derivs(y, u, (3,))[0]

    def d4phi(self, y, u):
        return self.phi_derivs(y, u, (4,))[0]

    def phi_derivs(self, y, u, orders):
        """All requested phi^(k) from one sigmoid: with s = sigmoid(u), s- = 1 - s and
        w = s s-: phi = softplus(u) - y u = -log s- - y u, phi' = s - y, phi'' = w,
        phi''' = w (s- - s), phi'''' = w (1 - 6 w)."""
        u = np.asarray(u, dtype=float)
        sn = _sigmoid(-u)
        out: dict[int, np.ndarray] = {}
        if 0 in orders:
            out[0] = _softplus(u, sn) - y * u
        if max(orders) >= 1:
            s = 1.0 - sn
            if 1 in orders:
                out[1] = s - y
            if max(orders) >= 2:
                w = s * sn
                out[2] = w
                if 3 in orders:
                    out[3] = w * (sn - s)
                if 4 in orders:
                    out[4] = w * (1.0 - 6.0 * w)
        return [out[k] for k in orders]

    def predict(self, x, theta):
        """P(y = 1 | x) = sigmoid(u)."""
        return _sigmoid(super().predict(x, theta))

    def derivative(self, z: np.ndarray, n: int = 0) -> np.ndarray:
        return logistic_margin_derivative(np.asarray(z, dtype=float), n)

    def derivatives(self, z: np.ndarray, orders: list[int]) -> list[np.ndarray]:
        return logistic_margin_derivatives(z, orders)

    def sgd_step(self, **settings) -> Callable[..., float] | None:
        return fused_logistic_step(**settings)

    def predict_class(self, x: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Class labels in {0, 1} (1 where P(y = 1 | x) >= 1/2)."""
        return (super().predict(x, theta) >= 0).astype(int)


class SquaredLoss(IndexLoss, MarginLoss):
    """Linear least squares, l = (y - u)^2; Lap_x l = 2 ||beta_J||^2.

    Margin form (paper 004): f(z) = (z - 1)^2 / 2, z = y u, which for y in {-1, +1} is
    (y - u)^2 / 2 (half the index form: the same minimiser without a penalty); its inverse
    Weierstrass transform is exact, W_s^{-1}[f] = f - s/2 (Sec. 5.2).
    """

    name = "linear"
    smooth_in_x = True
    smooth_in_theta = True
    quadratic_in_theta = True
    inverse_weierstrass = "closed"

    def __init__(self, fit_intercept: bool = True) -> None:
        super().__init__(fit_intercept)

    def derivative(self, z: np.ndarray, n: int = 0) -> np.ndarray:
        return squared_margin_derivative(np.asarray(z, dtype=float), n)

    def iwp_closed_form(self, m, s, need_loss):
        F = 0.5 * (m - 1.0) ** 2 - s / 2.0 if need_loss else None
        return F, m - 1.0, np.ones_like(m)

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
    kink = "check"

    def __init__(self, quantile: float = 0.5, fit_intercept: bool = True) -> None:
        super().__init__(fit_intercept)
        self.quantile = _check_tau(quantile)

    def __repr__(self) -> str:
        return (
            f"QuantileRegressionLoss(quantile={self.quantile}, fit_intercept={self.fit_intercept})"
        )

    @property
    def kink_slopes(self) -> tuple[float, float]:
        return self.quantile - 1.0, 1.0

    def kink_line(self, y):
        return y, -1.0

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
    kink = "hinge"

    def __init__(self, alpha: float = 0.0, fit_intercept: bool = True) -> None:
        super().__init__(fit_intercept)
        alpha = float(alpha)
        if not (np.isfinite(alpha) and alpha >= 0):
            raise ValidationError(f"alpha: {alpha!r} is out of range; accepted: finite and >= 0")
        self.alpha = alpha

    def __repr__(self) -> str:
        return f"HingeLoss(alpha={self.alpha}, fit_intercept={self.fit_intercept})"

    @property
    def penalised(self) -> bool:  # type: ignore[override]
        return self.alpha > 0

    @property
    def kink_slopes(self) -> tuple[float, float]:
        return 0.0, 1.0

    def kink_line(self, y):
        return 1.0, -y

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

    def penalty_hess(self, p):
        mask = np.r_[0.0, np.ones(p - 1)] if self.fit_intercept else np.ones(p)
        return self.alpha * np.diag(mask)

    def predict_class(self, x: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Labels in {-1, +1} (+1 where u >= 0)."""
        return np.where(self.predict(x, theta) >= 0, 1, -1)

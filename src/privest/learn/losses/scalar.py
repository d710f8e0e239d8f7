"""Scalar losses of one noised column: transformed squared losses (ReLU, indicator,
|sin|; paper 000, Sec. 7.1) and the scalar quantile (paper 000, Sec. 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privest.errors import ValidationError
from privest.learn.losses.base import ArrayFn, Loss, _check_tau, _rho

__all__ = [
    "ScalarQuantileLoss",
    "TransformedSquaredLoss",
    "abs_sin_squared",
    "indicator_squared",
    "relu_squared",
]


def _one_column(loss: Loss, d: int) -> int:
    """The scalar losses take one feature column and have one parameter."""
    if int(d) != 1:
        raise ValidationError(f"x: loss {loss.name!r} takes one feature column; got d={d}")
    return 1


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
        return _one_column(self, d)

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
    kink = "check"
    form = "location"

    def __init__(self, quantile: float = 0.5) -> None:
        self.quantile = _check_tau(quantile)

    def __repr__(self) -> str:
        return f"ScalarQuantileLoss(quantile={self.quantile})"

    def n_params(self, d: int) -> int:
        return _one_column(self, d)

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

"""The :class:`Loss` interface of corrected-loss M-estimation (paper 000, Secs. 4 and 6)
and the numerical helpers the catalogue shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import special

from privest.errors import ValidationError

__all__ = ["Loss", "LossNotSmoothError"]

ArrayFn = Callable[[np.ndarray], np.ndarray]


class LossNotSmoothError(ValidationError):
    """The SL/SDR corrections need Lap_x l, which this loss does not provide (Condition 4)."""


# --------------------------------------------------------------------------------------
# numerical helpers


def _sigmoid(u: np.ndarray) -> np.ndarray:
    """Logistic function 1 / (1 + e^-u), without overflow for any finite u."""
    return special.expit(u)


def _softplus(u: np.ndarray, sigmoid_minus: np.ndarray | None = None) -> np.ndarray:
    """log(1 + e^u) = -log sigmoid(-u), stable for large |u|.

    ``sigmoid_minus`` is sigmoid(-u) when the caller has it already (the logistic loss's
    derivatives share it). Where sigmoid(-u) underflows (u > ~700) log(1 + e^u) is
    computed as logaddexp(0, u) instead.
    """
    u = np.asarray(u, dtype=float)
    if u.size and u.max() > 700.0:
        return np.logaddexp(0.0, u)
    sn = special.expit(-u) if sigmoid_minus is None else sigmoid_minus
    return -np.log(sn)


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
    """A loss, evaluated row by row (paper 000 Section 4.1; paper 004 Section 5.2).

    Subclasses implement :meth:`n_params` and :meth:`value`; analytic :meth:`grad`,
    :meth:`hess_sum` and the Laplacian methods are optional. What a loss can do is read
    from its capabilities (class attributes, never from its type or its name), by the
    solvers, the standard errors and the backends:

    * ``smooth_in_theta``: analytic gradient and Hessian in theta, continuous in theta;
    * ``quadratic_in_theta``: the corrected objective is quadratic (one Newton step is exact);
    * ``smooth_in_x``: twice differentiable in x, the Laplacian methods exist (SL/SDR);
    * ``kink``: ``"none"``, or the one kink of a piecewise-linear loss of the kink distance
      z = a(y) + b(y) u: ``"check"`` (rho_tau(y - u)) or ``"hinge"`` ((1 - y u)_+), with
      :meth:`kink_line` and :attr:`kink_slopes` (LP, smoothing and kernel solvers);
    * ``form``: the shape of l(x, y, theta) a solver may exploit: ``"index"`` (phi(y, b0 +
      x'beta) + penalty, :class:`~privest.learn.losses.index.IndexLoss`), ``"location"``
      (rho(x - theta) of one column: an exact breakpoint scan), ``"general"``, or ``None``
      (no per-record loss in x: a margin loss for IWP-SGD only);
    * ``inverse_weierstrass``: paper 004's inverse Weierstrass transform of the margin
      form f(y theta'x): ``"closed"`` (exact), ``"series"`` (truncated at an order K) or
      ``None`` (it does not exist: the loss is not smooth, or has no margin form);
      ``order_table``: the packaged truncation-bias table behind ``order="auto"``.
    """

    name: str = "loss"
    smooth_in_x: bool = False
    smooth_in_theta: bool = False
    quadratic_in_theta: bool = False  # objective quadratic in theta: one Newton step is exact
    kink: str = "none"
    form: str | None = "general"
    inverse_weierstrass: str | None = None
    order_table: str | None = None

    @property
    def piecewise_linear(self) -> bool:
        """A check or hinge type loss (LP or 1-D scan solvers)."""
        return self.kink != "none"

    def capabilities(self) -> dict[str, Any]:
        """The capabilities above, by name (what the solvers and backends read)."""
        keys = ("smooth_in_theta", "quadratic_in_theta", "smooth_in_x", "kink", "form")
        out = {k: getattr(self, k) for k in keys}
        out.update(inverse_weierstrass=self.inverse_weierstrass, order_table=self.order_table)
        return out

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

"""Corrected-loss objectives on a ZIL release (paper 000, Sections 4 and 6).

For a loss l(x, theta) and the released copies X1, X2, with delta the zero proportion
(``zero_prob``) and the noise ``X2 - x ~ SL(Sigma)``, ``Sigma = diag(s_k^2)`` (s_k the
noise scale of column k, ``lam (hi_k - lo_k)`` in privest, 0 for unnoised columns):

* naive  l(X1)                                          biased (attenuation)
* DR     (1/delta) l(X1) + (1 - 1/delta) l(X2)          eq (4.4); no smoothness needed
* SL     l(X2) - (1/2) Lap_Sigma l(X2)                  eq (6.1); l in C^2 in x
* SDR    l(X1) - ((1 - delta)/2) Lap_Sigma l(X2)        eq (6.2); l in C^2 in x
* oracle l(X) on raw data (experiments only).

``Lap_Sigma l = sum_k s_k^2 d^2 l / dx_k^2`` is the paper's ``lam^2 Lap_x l`` for a
diagonal noise covariance (the same derivation: the SL characteristic function
``1 / (1 + t' Sigma t / 2)`` gives ``E l(x + S) = l(x) + (1/2) Lap_Sigma l(x) + ...`` for
the quadratic part, exactly as with ``Sigma = lam^2 I``). Each is conditionally unbiased
for l(x) given the raw record (docs/dr-estimation.md). The optional B-draw DR replaces
l(X2) by the mean over X2 and B - 1 further copies X1 + S_b, S_b ~ SL(delta Sigma), drawn
by the analyst: still unbiased, with lower variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from privest.errors import ValidationError
from privest.learn.design import AnalysisData
from privest.learn.losses import Loss, LossNotSmoothError
from privest.noise import sample_sl

__all__ = ["METHODS", "CorrectedObjective", "Term", "corrected_terms"]

Method = Literal["dr", "sl", "sdr", "naive", "oracle"]
METHODS = ("dr", "sl", "sdr", "naive", "oracle")


@dataclass(frozen=True)
class Term:
    """One weighted term of an objective: ``weight * l(x, y)`` or ``weight * Lap_x l(x, y)``."""

    weight: float
    x: np.ndarray
    y: np.ndarray | None
    laplacian: bool = False


def corrected_terms(
    method: str,
    zero_prob: float,
    first: tuple[np.ndarray, np.ndarray | None],
    copies: list[tuple[np.ndarray, np.ndarray | None]],
) -> list[Term]:
    """The weighted terms of ``method``'s corrected loss (one place for eqs (4.4), (6.1), (6.2)).

    ``first`` is (X1, Y1) (the raw data for ``"oracle"``), ``copies`` the doubly random
    copies [(X2, Y2), ...] (B of them for the B-draw DR; only the first is read by SL/SDR).
    The arrays may carry leading replicate axes: the batched solvers pass (R, n, d) stacks.
    """
    d = zero_prob
    (x1, y1), (x2, y2) = first, copies[0]
    if method in ("naive", "oracle"):
        return [Term(1.0, x1, y1)]
    if method == "sl":
        return [Term(1.0, x2, y2), Term(-0.5, x2, y2, True)]
    if method == "sdr":
        return [Term(1.0, x1, y1), Term(-(1 - d) / 2, x2, y2, True)]
    b = len(copies)
    return [Term(1.0 / d, x1, y1)] + [Term((1.0 - 1.0 / d) / b, x, y) for x, y in copies]


class CorrectedObjective:
    """The per-row corrected loss of ``method`` and its derivatives in theta (means over rows)."""

    def __init__(
        self,
        loss: Loss,
        data: AnalysisData,
        method: Method = "dr",
        n_draws: int = 1,
        rng: np.random.Generator | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValidationError(f"method: {method!r} is not one of {METHODS}")
        if n_draws < 1:
            raise ValidationError(f"n_draws: {n_draws} must be >= 1")
        self.loss, self.data, self.method = loss, data, method
        if method in ("sl", "sdr"):
            if not loss.smooth_in_x:
                raise LossNotSmoothError(
                    f"method={method!r} needs the Laplacian of the loss in x, which "
                    f"{loss.name} does not provide (it is not twice differentiable in x); "
                    "use method='dr', which needs no smoothness"
                )
            if data.y_noised:
                raise ValidationError(
                    f"method={method!r} with a noised response is not supported; use 'dr'"
                )
        copies = [(data.x2, data.y2)]
        if method == "dr":
            copies += self._extra_copies(n_draws - 1, rng)
        terms = corrected_terms(method, data.zero_prob, (data.x1, data.y1), copies)
        self.terms = terms
        self.n = data.n
        self.p = loss.n_params(data.d)

    def _extra_copies(self, k: int, rng: np.random.Generator | None):
        """B - 1 further doubly random copies X1 + S_b (noised columns and response only)."""
        if k == 0:
            return []
        if rng is None:
            raise ValidationError("n_draws > 1 needs an rng for the analyst's extra copies")
        data = self.data
        cols = np.flatnonzero(data.noised)
        scales = np.append(data.noise_scale[cols], data.y_noise_scale)
        if not data.y_noised:
            scales = scales[:-1]
        scales = scales * math.sqrt(data.zero_prob)
        out = []
        for _ in range(k):
            s = sample_sl(data.n, scales.size, 1.0, rng)  # one joint SL vector per record
            s *= scales
            x = data.x1.copy()
            x[:, cols] += s[:, : cols.size]
            y = data.y1 if not data.y_noised else data.y1 + s[:, -1]
            out.append((x, y))
        return out

    def _combine(self, theta: np.ndarray, plain, laplacian, shape) -> np.ndarray:
        """sum_t w_t f_t with f = ``plain`` or, for Laplacian terms, ``laplacian``."""
        out = np.zeros(shape)
        for t in self.terms:
            f = (
                laplacian(t.x, t.y, theta, self.data.noise_var)
                if t.laplacian
                else plain(t.x, t.y, theta)
            )
            out += t.weight * f
        return out

    def rows(self, theta: np.ndarray) -> np.ndarray:
        """Per-row corrected loss (n,)."""
        return self._combine(theta, self.loss.value, self.loss.laplacian, self.n)

    def value(self, theta: np.ndarray) -> float:
        """Mean corrected loss."""
        return float(np.mean(self.rows(theta)))

    def scores(self, theta: np.ndarray) -> np.ndarray:
        """Per-row gradients psi_i (n, p) of the corrected loss (Thm 5.3)."""
        return self._combine(theta, self.loss.grad, self.loss.laplacian_grad, (self.n, self.p))

    def grad(self, theta: np.ndarray) -> np.ndarray:
        """Mean gradient (p,)."""
        return self.scores(theta).mean(axis=0)

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Mean corrected loss and its gradient from summed evaluations (the solvers' path)."""
        total, grad = 0.0, np.zeros(self.p)
        for t in self.terms:
            if t.laplacian:
                v, g = self.loss.laplacian_value_grad_sum(
                    t.x, t.y, theta, self.data.noise_var, t.weight
                )
            else:
                v, g = self.loss.value_grad_sum(t.x, t.y, theta, t.weight)
            total += v
            grad += g
        return total / self.n, grad / self.n

    def hess(self, theta: np.ndarray) -> np.ndarray:
        """Mean Hessian (p, p) of the corrected loss (the DR/SL/SDR-weighted Hessian)."""
        out = np.zeros((self.p, self.p))
        for t in self.terms:
            w = np.full(self.n, t.weight)
            h = (
                self.loss.laplacian_hess_sum(t.x, t.y, theta, self.data.noise_var, w)
                if t.laplacian
                else self.loss.hess_sum(t.x, t.y, theta, w)
            )
            out += h
        out /= self.n
        return 0.5 * (out + out.T)

    def has_hessian(self) -> bool:
        """Whether the loss gives an analytic Hessian in theta."""
        return bool(self.loss.smooth_in_theta)

    def restricted(self, rows: np.ndarray | slice) -> CorrectedObjective:
        """The objective on a subset of records (bootstrap), sharing the extra copies; a
        slice of rows gives views, not copies."""
        new = object.__new__(CorrectedObjective)
        new.loss, new.method, new.p = self.loss, self.method, self.p
        new.data = self.data.subset(rows)
        new.terms = [
            Term(t.weight, t.x[rows], None if t.y is None else t.y[rows], t.laplacian)
            for t in self.terms
        ]
        new.n = len(range(self.n)[rows]) if isinstance(rows, slice) else rows.size
        return new

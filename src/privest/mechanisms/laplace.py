"""The Laplace mechanism with global sensitivity (paper 002, Sec. 2 and 4.1; spec 1.4, 6.2).

``f(x) + Lap(GS / eps)`` is eps-DP. The piecewise Laplace mechanism reduces to
``Lap(2 GS / eps)`` when every piece has length GS (spec 2.5); both are available here
(``LaplaceMechanism(..., epsilon=eps/2)`` is the latter, with its own eps/2 guarantee).

Global sensitivities under swap neighbours with data in [a, b] (spec 5): median and any
order statistic b - a; mean (b - a)/n; sum b - a; count 1; population variance
(b - a)^2 (n - 1)/n^2. The output is unbounded; :meth:`clamp` post-processes a release
into the statistic's public range (free under DP, biased).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.errors import ValidationError
from privest.mechanisms.base import Mechanism
from privest.mechanisms.profiles import (
    parse_statistic,
    prepare_data,
    quantile_rank,
    variance_global_sensitivity,
    variance_sup,
)
from privest.rng import resolve_rng
from privest.validation import as_float_vector, check_epsilon, check_positive, check_probabilities

__all__ = ["LaplaceMechanism", "statistic_value"]


def statistic_value(
    x: Any, statistic: str, bounds: Any = None, *, q: float | None = None, clip: bool = False
) -> tuple[float, float, tuple[float, float], int]:
    """(f(x), GS, public range of f, number clipped) of a named statistic (module docstring)."""
    name, q_spec = parse_statistic(statistic)
    q = q_spec if q is None else q
    if name == "count":
        ind = as_float_vector(np.asarray(x, dtype=float), "indicators")
        if not np.all((ind == 0) | (ind == 1)):
            raise ValidationError("indicators: entries must be 0/1 or booleans (one per record)")
        return float(ind.sum()), 1.0, (0.0, float(ind.size)), 0
    if bounds is None:
        raise ValidationError(f"bounds: required for the {name} (public bounds (lo, hi))")
    arr, a, b, clipped = prepare_data(x, bounds, clip)
    n = arr.size
    if name == "variance" and n < 2:
        raise ValidationError("x: the variance needs at least 2 records (n is public)")
    if name == "median":
        return float(np.median(arr)), b - a, (a, b), clipped
    if name == "quantile":
        if q is None:
            raise ValidationError("q: the quantile level is required, e.g. q=0.9")
        m = quantile_rank(q, n)
        return float(np.partition(arr, m - 1)[m - 1]), b - a, (a, b), clipped
    if name == "mean":
        return float(min(max(arr.mean(), a), b)), (b - a) / n, (a, b), clipped
    if name == "sum":
        return float(arr.sum()), b - a, (n * a, n * b), clipped
    return (
        float(np.var(arr)),
        variance_global_sensitivity(n, a, b),
        (0.0, variance_sup(n, a, b)),
        clipped,
    )


class LaplaceMechanism(Mechanism):
    """``value + Lap(sensitivity / epsilon)``: pure eps-DP when ``sensitivity`` is the GS."""

    def __init__(
        self,
        value: float,
        sensitivity: float,
        epsilon: float,
        *,
        output_range: tuple[float, float] | None = None,
        statistic: str = "custom",
    ):
        self.value = float(value)
        if not math.isfinite(self.value):
            raise ValidationError(f"value: {value!r} must be finite")
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.epsilon = check_epsilon(epsilon)
        self.scale = self.sensitivity / self.epsilon
        self.output_range = output_range
        self.statistic = statistic
        self.n_clipped = 0

    @classmethod
    def for_statistic(
        cls,
        x: Any,
        statistic: str,
        *,
        epsilon: float,
        bounds: Any = None,
        q: float | None = None,
        clip: bool = False,
    ) -> LaplaceMechanism:
        """Laplace with the statistic's global sensitivity (module docstring)."""
        value, gs, rng, clipped = statistic_value(x, statistic, bounds, q=q, clip=clip)
        mech = cls(value, gs, epsilon, output_range=rng, statistic=statistic)
        mech.n_clipped = clipped
        return mech

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        return -np.abs(y - self.value) / self.scale - math.log(2 * self.scale)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        z = (np.asarray(y, dtype=float) - self.value) / self.scale
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        out = self.value + gen.laplace(0.0, self.scale, size)
        return float(out) if size is None else out

    def clamp(self, y: ArrayLike) -> np.ndarray:
        """Post-processing: clip releases into the statistic's public range (if known)."""
        if self.output_range is None:
            return np.asarray(y, dtype=float)
        return np.clip(y, *self.output_range)

    def error_mean_abs(self) -> float:
        return self.scale

    def error_mse(self) -> float:
        return 2 * self.scale**2

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return -np.expm1(-np.maximum(np.asarray(alpha, dtype=float), 0) / self.scale)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """p-quantiles of |err| ~ Exp(scale): -scale log(1 - p) (before any clamping)."""
        return -self.scale * np.log1p(-check_probabilities(p))

    def privacy_report(self) -> dict[str, float]:
        """eps-DP; its privacy-loss range is 2 eps wide; eps^2/2-zCDP."""
        return {
            "pure_dp": self.epsilon,
            "bounded_range": 2 * self.epsilon,
            "zcdp_rho": self.epsilon**2 / 2,
        }

    def __repr__(self) -> str:
        return f"LaplaceMechanism({self.statistic}, scale={self.scale:.4g}, eps={self.epsilon:g})"

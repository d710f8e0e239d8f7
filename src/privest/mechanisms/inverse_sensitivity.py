"""The inverse sensitivity mechanism (INV), continuous and on a grid (paper 002, Sec. 4.2).

Density (eq. M.2) proportional to ``exp(-eps * len_f(y; x) / 2)``; for sample-monotone f
(Def. 4.2), ``len_f(y; x) = ell(y; x)`` (Cor. 4.1), the path length through the reach
profile, so INV uses the same pieces as PLM with a constant density on each piece
(the same piece law as Algorithm 1, uniform inside the piece). eps-DP because len has
sensitivity 1. The rho-smooth version (AD20b) widens the zero set to [f - rho, f + rho].
The grid version is the exponential mechanism over a fixed, data-independent finite set.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.errors import ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace, _ProfileLaw
from privest.mechanisms.profiles.reaches import ReachProfile
from privest.rng import resolve_rng
from privest.validation import check_epsilon, check_probabilities

__all__ = ["GridInverseSensitivityLaw", "InverseSensitivity", "InverseSensitivityLaw"]


class InverseSensitivityLaw(_ProfileLaw):
    """Continuous INV: piece l has constant density ``exp(-eps l / 2) / Z``; pure eps-DP.

    ``InverseSensitivityLaw.for_statistic(x, "median", epsilon=1.0, bounds=(0, 100))``.
    """

    _law = "uniform"

    def privacy_report(self) -> dict[str, float]:
        """eps-DP and eps-BR (exponential mechanism with a sensitivity-1 score)."""
        return {
            "pure_dp": self.epsilon,
            "bounded_range": self.epsilon,
            "zcdp_rho": self.epsilon**2 / 8.0,
        }


class GridInverseSensitivityLaw(OutputLaw):
    """Discrete INV over a public grid: P(y) proportional to ``exp(-eps ell(y; x) / 2)``.

    The grid must be fixed before seeing the data (e.g. ``np.linspace(a, b, 1001)``). The
    output is a grid point; ``logpdf`` is the log probability mass.
    """

    def __init__(self, profile: ReachProfile, epsilon: float, grid: ArrayLike):
        from scipy.special import logsumexp

        if not isinstance(profile, ReachProfile):
            raise ValidationError(f"profile: {type(profile).__name__} is not a ReachProfile")
        self.epsilon = check_epsilon(epsilon)
        g = np.unique(np.asarray(grid, dtype=float).ravel())
        if g.size == 0 or not np.all(np.isfinite(g)):
            raise ValidationError("grid: must be a non-empty array of finite public values")
        self.grid = g
        self.profile = profile
        self.value = profile.center
        ell = profile.path_length(g)
        if not np.any(np.isfinite(ell)):
            raise ValidationError("grid: no grid point lies inside the statistic's range")
        self.log_prob = -0.5 * self.epsilon * ell
        self.log_prob -= logsumexp(self.log_prob)
        self.prob = np.exp(self.log_prob)
        self._cum = np.cumsum(self.prob)
        self._cum /= self._cum[-1]

    @classmethod
    def for_statistic(
        cls,
        x: Any,
        statistic: str,
        *,
        epsilon: float,
        grid: ArrayLike,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
    ) -> GridInverseSensitivityLaw:
        from privest.mechanisms.profiles.reaches import profile_for

        return cls(profile_for(x, statistic, bounds, quantile=quantile, clip=clip), epsilon, grid)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log probability mass at ``y`` (``-inf`` off the grid)."""
        y = np.asarray(y, dtype=float)
        i = np.clip(np.searchsorted(self.grid, y), 0, self.grid.size - 1)
        return np.where(self.grid[i] == y, self.log_prob[i], -np.inf)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        i = np.searchsorted(self.grid, y, side="right")
        return np.where(i > 0, self._cum[np.maximum(i - 1, 0)], 0.0)

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        m = int(np.prod(shape)) if shape else 1
        i = np.minimum(np.searchsorted(self._cum, gen.random(m), side="right"), self.grid.size - 1)
        out = self.grid[i]
        return float(out[0]) if size is None else out.reshape(shape)

    def error_mean_abs(self) -> float:
        return float(np.sum(self.prob * np.abs(self.grid - self.value)))

    def error_mse(self) -> float:
        return float(np.sum(self.prob * (self.grid - self.value) ** 2))

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        a = np.asarray(alpha, dtype=float)
        return np.sum(self.prob * (np.abs(self.grid - self.value) <= a[..., None]), axis=-1)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """p-quantiles of |err|: the smallest grid distance whose error CDF reaches p."""
        q = check_probabilities(p)
        dist = np.abs(self.grid - self.value)
        order = np.argsort(dist, kind="stable")
        cum = np.cumsum(self.prob[order])
        i = np.searchsorted(cum, np.minimum(q, cum[-1]), side="left")
        return dist[order][np.minimum(i, dist.size - 1)]


class InverseSensitivity(PiecewiseLaplace):
    """The continuous inverse sensitivity mechanism for a named statistic (paper 002, Sec. 4.2).

    The same pieces as :class:`PiecewiseLaplace` with a uniform density inside each piece
    (eq. M.2); pure eps-DP. ``law(x)`` is the curator's :class:`InverseSensitivityLaw`.
    """

    name = "inverse_sensitivity"
    _law_class = InverseSensitivityLaw
    _lattice_shape = "uniform"
    _lattice_shapes = ("uniform",)
    _lattice_target = "rank"

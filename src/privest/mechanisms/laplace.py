"""The Laplace mechanism with global sensitivity (paper 002, Sec. 2 and 4.1).

``f(x) + Lap(GS / eps)`` is eps-DP. The piecewise Laplace mechanism reduces to
``Lap(2 GS / eps)`` when every piece has length GS (Sec. 4.1); both are available here
(``LaplaceLaw(..., epsilon=eps/2)`` is the latter, with its own eps/2 guarantee).

Global sensitivities under swap neighbours with data in [a, b] (docs/piecewise-laplace.md,
"Reaches of each statistic"): median and any order statistic b - a; mean (b - a)/n; sum
b - a; count 1; population variance
(b - a)^2 (n - 1)/n^2. The output is unbounded; :meth:`clamp` post-processes a release
into the statistic's public range (free under DP, biased).

Float safety: ``f`` is computed exactly (:mod:`privest.mechanisms.profiles.exact`) and the noise is
discrete Laplace on a public power-of-two grid (:class:`~privest.mechanisms.samplers.lattice.
LatticeLaplace`): exactly eps-DP, and no output is impossible under a neighbour. The
``logpdf``, ``cdf`` and error functionals describe the continuous Laplace law of the same
scale, which the lattice law matches to within one grid step (a relative 2^-20 of the scale).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.domain import Domain
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.exact import exact_statistic, statistic_from_totals
from privest.mechanisms.profiles.sensitivity import global_sensitivity
from privest.mechanisms.samplers.lattice import LatticeLaplace
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng
from privest.validation import check_epsilon, check_positive, check_probabilities

__all__ = ["LaplaceLaw", "LaplaceMechanism"]


class LaplaceLaw(OutputLaw):
    """``value + Lap(sensitivity / epsilon)``: pure eps-DP when ``sensitivity`` is the GS."""

    def __init__(
        self,
        value: float | Fraction,
        sensitivity: float,
        epsilon: float,
        *,
        output_range: tuple[float, float] | None = None,
        statistic: str = "custom",
    ):
        self.exact = Fraction(value)  # raises on NaN and inf
        self.value = float(self.exact)
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.epsilon = check_epsilon(epsilon)
        self.lattice = LatticeLaplace(self.epsilon, self.sensitivity)
        self.scale = self.lattice.scale
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
        quantile: float | None = None,
        clip: bool = False,
        domain: Domain | None = None,
    ) -> LaplaceLaw:
        """Laplace with the statistic's global sensitivity under ``domain``'s neighbour
        relation (swap by default), on the exact statistic."""
        stat = exact_statistic(x, statistic, bounds, quantile=quantile, clip=clip, domain=domain)
        mech = cls(
            stat.exact,
            stat.sensitivity,
            epsilon,
            output_range=stat.output_range,
            statistic=statistic,
        )
        mech.n_clipped = stat.n_clipped
        return mech

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        return -np.abs(y - self.value) / self.scale - math.log(2 * self.scale)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        z = (np.asarray(y, dtype=float) - self.value) / self.scale
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Draws on the lattice: ``g (round(f / g) + K)``, K discrete Laplace, f exact."""
        gen = resolve_rng(rng)
        center = round(self.exact / Fraction(self.lattice.step))
        if size is None:
            return self.lattice.release_integer(center, gen, None)
        return self.lattice.release_integer(center, gen, int(np.prod(size))).reshape(size)

    def clamp(self, y: ArrayLike) -> np.ndarray:
        """Post-processing: clip releases into the statistic's public range (if known)."""
        if self.output_range is None:
            return np.asarray(y, dtype=float)
        lo, hi = self.output_range
        if type(y) is float and lo < y < hi:  # inside: np.clip would return it unchanged
            return y
        return np.clip(y, lo, hi)

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
        return f"LaplaceLaw({self.statistic}, scale={self.scale:.4g}, eps={self.epsilon:g})"


class LaplaceMechanism(StatisticMechanism):
    """``f(x) + Lap(GS / eps)`` for a named statistic with its global sensitivity.

    Pure eps-DP (paper 002, Sec. 2); the release is clipped into the statistic's public
    range (post-processing). ``law(x)`` is the curator's :class:`LaplaceLaw`.
    """

    name = "laplace"

    def noise_law(self, n: int | None = None) -> LaplaceLaw:
        """The noise alone, from public inputs (the global sensitivity on the domain; the
        mean and the variance need the public ``n``): for planning and ``auto``."""
        gs = global_sensitivity(self.spec, self.domain, n)
        return LaplaceLaw(0, gs, self.epsilon, statistic=self.spec)

    def law_from_totals(self, totals: dict[str, int]) -> LaplaceLaw:
        """The law from the exact integer totals of all the records
        (:func:`~privest.mechanisms.profiles.exact.exact_totals`, which add up over disjoint
        parts: a backend sums them over partitions)."""
        stat = statistic_from_totals(self.spec, totals, self.bounds, domain=self.domain)
        law = LaplaceLaw(
            stat.exact,
            stat.sensitivity,
            self.epsilon,
            output_range=stat.output_range,
            statistic=self.spec,
        )
        law.n_clipped = stat.n_clipped
        return law

    def law(self, x: Any) -> LaplaceLaw:
        return LaplaceLaw.for_statistic(
            x,
            self.spec,
            epsilon=self.epsilon,
            bounds=self.bounds,
            clip=self.clip,
            domain=self.domain,
        )

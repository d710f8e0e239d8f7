"""Counts on the integer lattice: the discrete Laplace (two-sided geometric) mechanism.

``c + K`` with ``P(K = k) = (1 - p)/(1 + p) p^|k|``, ``p = exp(-1/t)``, for an integer count
``c`` of sensitivity ``m`` (1 record, or at most ``m`` rows of a person) and ``t >= m/eps``
(Ghosh, Roughgarden and Sundararajan 2009; Canonne, Kamath and Steinke 2020, Alg. 2 for the
exact sampler): ``P(y | c) / P(y | c') = p^(|y - c| - |y - c'|) <= p^-m <= e^eps``, so pure
eps-DP, every output an integer, float-safe by construction. The release is clamped to the
count's public range (``[0, n]`` under swap neighbours, ``[0, inf)`` under add/remove):
post-processing. Its error law is exact (closed-form geometric sums, below), and it has a
smaller expected absolute error than Laplace noise of scale m/eps at every epsilon
(``E|K| = 2p/(1 - p^2) < t``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.exact import exact_totals
from privest.mechanisms.samplers.lattice import sample_discrete_laplace
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng

__all__ = ["DiscreteLaplace", "DiscreteLaplaceLaw", "discrete_laplace_scale"]

#: the rational scale t = T / 2^SCALE_BITS is rounded up on this grid (exact, >= m / eps)
SCALE_BITS = 10


def discrete_laplace_scale(sensitivity: int, epsilon: float) -> Fraction:
    """The least scale on the grid ``2^-SCALE_BITS Z`` (an integer above ``2^20``) that is at
    least ``sensitivity / epsilon``, so the release is exactly epsilon-DP."""
    exact = Fraction(sensitivity) / Fraction(epsilon)
    if exact >= 2**20:
        return Fraction(math.ceil(exact))
    return Fraction(math.ceil(exact * 2**SCALE_BITS), 2**SCALE_BITS)


class DiscreteLaplaceLaw(OutputLaw):
    """``clamp(c + K, lo, hi)``, K two-sided geometric of scale ``t`` (module docstring).

    ``value`` is the exact count ``c`` (the curator's view; 0 for the noise law of
    :meth:`DiscreteLaplace.noise_law`)."""

    def __init__(self, value: int, scale: Fraction, epsilon: float, lo: float, hi: float):
        self.value = float(value)
        self.count = int(value)
        self.scale = Fraction(scale)
        self.epsilon = float(epsilon)
        self.p = math.exp(-1.0 / float(self.scale))
        self.lo, self.hi = lo, hi

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        m = 1 if size is None else int(np.prod(size))
        k = sample_discrete_laplace(self.scale, m, gen)
        out = np.clip((k + self.count).astype(float), self.lo, self.hi)
        return float(out[0]) if size is None else out.reshape(size)

    def _tail(self, a: np.ndarray) -> np.ndarray:
        """P(K > a) for integers a >= 0: p^(a+1) / (1 + p)."""
        return self.p ** (a + 1.0) / (1.0 + self.p)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log probability of the integer outputs (a clamped end carries its tail)."""
        y = np.asarray(y, dtype=float)
        log_p = -1.0 / float(self.scale)
        logp = math.log((1 - self.p) / (1 + self.p)) + np.abs(y - self.count) * log_p
        dist = np.where(y == self.lo, self.count - self.lo, self.hi - self.count)
        # log P(K > d) = (d + 1) log p - log(1 + p), added at the ends
        log_tail = (np.minimum(dist, 2**53) + 1.0) * log_p - math.log1p(self.p)
        at_end = (y == self.lo) | (y == self.hi)
        out = np.where(at_end, np.logaddexp(logp, log_tail), logp)
        on = (y == np.round(y)) & (y >= self.lo) & (y <= self.hi)
        return np.where(on, out, -np.inf)

    def error_sf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|err| > a) = P(K > a) [a < hi - c] + P(K < -a) [a < c - lo], exactly."""
        a = np.floor(np.maximum(np.asarray(alpha, dtype=float), 0.0))
        tail = self._tail(a)
        up = np.where(a < self.hi - self.count, tail, 0.0)
        down = np.where(a < self.count - self.lo, tail, 0.0)
        return up + down

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return 1.0 - self.error_sf(alpha)

    def _geometric_sum(self, m: float, power: int) -> float:
        """sum_{a=0}^{m-1} w_a P(K > a), w_a = 1 (power 1) or 2a + 1 (power 2), m <= inf."""
        p = self.p
        if power == 1:
            pm = 0.0 if math.isinf(m) else p**m
            return p * (1 - pm) / ((1 - p) * (1 + p))

        # sum_{a>=0} (2a + 1) p^(a+1) / (1 + p) over a < m
        def full(m_: float) -> float:
            if math.isinf(m_):
                return p * (1 + p) / ((1 - p) ** 2 * (1 + p))
            pm = p**m_
            s0 = p * (1 - pm) / (1 - p)
            s1 = p * (p - m_ * pm + (m_ - 1) * pm * p) / (1 - p) ** 2
            return (2 * s1 + s0) / (1 + p)

        return full(m)

    def error_mean_abs(self) -> float:
        """E|err| = sum_{a >= 0} P(|err| > a), in closed form."""
        up, down = self.hi - self.count, self.count - self.lo
        return self._geometric_sum(up, 1) + self._geometric_sum(down, 1)

    def error_mse(self) -> float:
        """E err^2 = sum_{a >= 0} (2a + 1) P(|err| > a), in closed form."""
        up, down = self.hi - self.count, self.count - self.lo
        return self._geometric_sum(up, 2) + self._geometric_sum(down, 2)

    def clamp(self, y: ArrayLike) -> np.ndarray:
        """The samples are clamped already (post-processing into the public range)."""
        return np.clip(y, self.lo, self.hi)


class DiscreteLaplace(StatisticMechanism):
    """Counts with discrete Laplace noise (module docstring).

    ``DiscreteLaplace("count", epsilon=1.0).release(indicators)``. Under
    ``Domain(neighbours="add_remove", unit=..., max_rows=m)`` the sensitivity is m.
    """

    name = "discrete_laplace"

    def _sensitivity(self) -> int:
        return int(self.domain.max_rows or 1) if self.domain.neighbours == "add_remove" else 1

    def law(self, x: Any) -> DiscreteLaplaceLaw:
        """NON-PRIVATE: the exact law of the release on the indicators ``x``."""
        return self.law_from_totals(exact_totals(x, "count"))

    def law_from_totals(self, totals: dict[str, int]) -> DiscreteLaplaceLaw:
        """The law from the count's totals (``n`` records, ``t1`` of them in the set)."""
        hi = math.inf if self.domain.neighbours == "add_remove" else float(totals["n"])
        scale = discrete_laplace_scale(self._sensitivity(), self.epsilon)
        return DiscreteLaplaceLaw(int(totals["t1"]), scale, self.epsilon, 0.0, hi)

    def noise_law(self, n: int | None = None) -> DiscreteLaplaceLaw:
        """The noise alone, from public inputs (no clamping): for planning and ``auto``."""
        scale = discrete_laplace_scale(self._sensitivity(), self.epsilon)
        return DiscreteLaplaceLaw(0, scale, self.epsilon, -math.inf, math.inf)

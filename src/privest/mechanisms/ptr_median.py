"""Propose-test-release for the median / quantiles (Dwork and Lei 2009), approximate DP.

Propose a public bound B on the local sensitivity. ``gamma(x) = min{k : A_k(x) > B}`` is
the distance to a data set whose local sensitivity exceeds B (A_k of NRS07, as in
:mod:`privest.mechanisms.smooth_sensitivity`); it has
sensitivity 1. With the total budget eps split in halves: refuse (output NaN, the
explicit "bottom") if ``gamma(x) + Lap(2/eps) <= 2 ln(1/delta)/eps``; else release
``f(x) + Lap(2 B/eps)``. The whole is (eps, delta)-DP. This is the baseline the paper
criticises: a single nearby data set with large local sensitivity makes PTR refuse.

The generic PTR / ePTR of paper 001 live in ``mechanisms/ptr.py`` and ``mechanisms/eptr.py``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.accounting.base import ApproxDP, Guarantee
from privest.domain import Domain
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.reaches import sorted_data
from privest.mechanisms.samplers.lattice import LatticeLaplace
from privest.mechanisms.smooth_sensitivity import (
    local_sensitivity_at_distance,
    order_statistic_ranks,
)
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng
from privest.validation import check_epsilon, check_positive, check_probabilities, check_probability

__all__ = ["PTRMedian", "PTRMedianLaw", "distance_to_instability"]


def distance_to_instability(aug: np.ndarray, ranks: list[int], bound: float) -> float:
    """gamma = min{k : max over ranks of A_k > bound} (``inf`` if no k <= n + 1 exceeds it)."""
    n = aug.size - 2
    k, step = 0, 16
    while k <= n + 1:
        ks = np.arange(k, min(k + step, n + 2))
        a = np.max([local_sensitivity_at_distance(aug, r, ks) for r in ranks], axis=0)
        over = np.nonzero(a > bound)[0]
        if over.size:
            return float(ks[over[0]])
        k = int(ks[-1]) + 1
        step *= 2
    return math.inf


class PTRMedianLaw(OutputLaw):
    """PTR release of the median or a quantile with a proposed ``local_sensitivity`` (public)."""

    def __init__(
        self,
        x: Any,
        statistic: str = "median",
        *,
        epsilon: float,
        delta: float,
        bounds: Any,
        local_sensitivity: float,
        quantile: float | None = None,
        clip: bool = False,
    ):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_probability(delta, "delta")
        self.local_sensitivity = check_positive(local_sensitivity, "local_sensitivity")
        aug, a, b, self.n_clipped = sorted_data(x, bounds, clip)
        ranks, _ = order_statistic_ranks(statistic, aug.size - 2, quantile)
        self.statistic = statistic
        self.exact = sum(Fraction(float(aug[r])) for r in ranks) / len(ranks)
        self.value = float(self.exact)
        self.output_range = (a, b)
        self.gamma = distance_to_instability(aug, ranks, self.local_sensitivity)
        half = self.epsilon / 2
        self.threshold = math.log(1 / self.delta) / half
        # the release: Laplace at eps/2 for the proposed sensitivity, on the float-safe lattice
        self.lattice = LatticeLaplace(half, self.local_sensitivity)
        self.scale = self.lattice.scale

    @property
    def guarantee(self) -> Guarantee:
        return ApproxDP(self.epsilon, self.delta)

    @property
    def refusal_probability(self) -> float:
        """P(gamma + Lap(2/eps) <= threshold), exactly (curator's view)."""
        if math.isinf(self.gamma):
            return 0.0
        t = (self.threshold - self.gamma) * self.epsilon / 2
        return 0.5 * math.exp(t) if t < 0 else 1 - 0.5 * math.exp(-t)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log density of the released (non-refused) part; NaN (bottom) has mass
        :attr:`refusal_probability`."""
        y = np.asarray(y, dtype=float)
        keep = 1 - self.refusal_probability
        with np.errstate(divide="ignore"):
            base = math.log(keep) if keep > 0 else -math.inf
        return base - np.abs(y - self.value) / self.scale - math.log(2 * self.scale)

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Releases; NaN marks a refusal. The test releases one bit (its continuous Laplace
        draw leaks no low-order bits); the value is drawn on the float-safe lattice."""
        gen = resolve_rng(rng)
        n = 1 if size is None else int(np.prod(size))
        noisy_gamma = self.gamma + gen.laplace(0.0, 2 / self.epsilon, n)
        center = round(self.exact / Fraction(self.lattice.step))
        out = self.lattice.release_integer(center, gen, n)
        out = np.where(noisy_gamma <= self.threshold, np.nan, out)
        return float(out[0]) if size is None else out.reshape(size)

    @property
    def release_probability(self) -> float:
        """1 - :attr:`refusal_probability`."""
        return 1.0 - self.refusal_probability

    def cdf(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) <= y), exactly. The refusal (NaN, bottom) is never <= y, so the CDF rises
        to :attr:`release_probability`, not to 1: the test and the release noise are
        independent, the release given no refusal is ``f(x) + Lap(2 B/eps)``."""
        z = (np.asarray(y, dtype=float) - self.value) / self.scale
        lap = np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))
        return self.release_probability * lap

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|M(x) - f(x)| <= alpha), a refusal counting as an infinite error."""
        a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
        return self.release_probability * -np.expm1(-a / self.scale)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """p-quantiles of |M(x) - f(x)| (a refusal is an infinite error): inf for p above
        :attr:`release_probability`."""
        q = check_probabilities(p)
        keep = self.release_probability
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = -self.scale * np.log1p(-q / keep) if keep > 0 else np.full(q.shape, np.inf)
        return np.where(q < keep, inside, np.where(q == 0, 0.0, np.inf))

    def error_mean_abs(self) -> float:
        """E[|M(x) - f(x)| | released] = 2 B/eps (unconditionally infinite if refusals are
        possible; see :meth:`error_cdf` for the joint law)."""
        return self.scale

    def error_mse(self) -> float:
        """E[(M(x) - f(x))^2 | released] = 2 (2 B/eps)^2."""
        return 2.0 * self.scale**2

    def __repr__(self) -> str:
        return (
            f"PTRMedianLaw(B={self.local_sensitivity:g}, gamma={self.gamma:g}, "
            f"eps={self.epsilon:g})"
        )


class PTRMedian(StatisticMechanism):
    """Propose-test-release for the median or a quantile with a proposed ``local_sensitivity``.

    (eps, delta)-DP (paper 002's PTR baseline); ``law(x)`` is the curator's
    :class:`PTRMedianLaw`.
    """

    name = "ptr"

    def __init__(
        self,
        statistic: str = "median",
        *,
        epsilon: float,
        delta: float,
        local_sensitivity: float,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
        domain: Domain | None = None,
    ) -> None:
        super().__init__(
            statistic, epsilon=epsilon, bounds=bounds, quantile=quantile, clip=clip, domain=domain
        )
        self.delta = check_probability(delta, "delta")
        self.local_sensitivity = check_positive(local_sensitivity, "local_sensitivity")

    @property
    def guarantee(self) -> Guarantee:
        return ApproxDP(self.epsilon, self.delta)

    def law(self, x: Any) -> PTRMedianLaw:
        return PTRMedianLaw(
            x,
            self.spec,
            epsilon=self.epsilon,
            delta=self.delta,
            bounds=self.bounds,
            local_sensitivity=self.local_sensitivity,
            clip=self.clip,
        )

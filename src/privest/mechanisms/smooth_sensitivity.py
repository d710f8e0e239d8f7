"""Smooth sensitivity for the median and other order statistics (NRS07; spec 1.1, 5.1, 6.3).

Local sensitivity at distance k of x_(m) (spec 5.1):
``A_k(x) = max_{t=0..k+1} (x_(m+t) - x_(m+t-k-1))`` with indices clipped to [0, n+1]
(x_(0) = a, x_(n+1) = b). Smooth sensitivity ``S_beta(x) = max_k e^{-k beta} A_k(x)``.

Pure eps-DP release (NRS07, Lemma 2.10 / spec 6.3): ``f(x) + (4 gamma / eps) S_beta(x) Z``
with ``beta = eps / gamma`` and Z of density ``h(z) = C / (1 + |z|^gamma)``, gamma > 1
(default 4: finite variance, ``E|Z| = 1/sqrt(2)``). ``|Z|^gamma / (1 + |Z|^gamma)`` is
Beta(1/gamma, 1 - 1/gamma), which gives an exact sampler and a closed-form CDF.
Approximate-DP alternative: ``f(x) + (2/eps) S_beta(x) Lap(1)``, ``beta = eps/(2 ln(2/delta))``.

For the even-n median (average of x_(m), x_(m+1)) the max of the two order statistics'
smooth sensitivities is used: it bounds the local sensitivity of the average and is itself
beta-smooth.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from privest.accounting.base import ApproxDP, Guarantee
from privest.errors import ValidationError
from privest.mechanisms.base import Mechanism
from privest.mechanisms.profiles import parse_statistic, quantile_rank, sorted_data
from privest.rng import resolve_rng
from privest.validation import check_delta, check_epsilon, check_probabilities

__all__ = [
    "SmoothSensitivity",
    "local_sensitivity_at_distance",
    "order_statistic_ranks",
    "smooth_sensitivity",
]


def local_sensitivity_at_distance(aug: np.ndarray, rank: int, ks: ArrayLike) -> np.ndarray:
    """A_k of x_(rank) for each k in ``ks``; ``aug`` = [a, sorted x, b] (spec 5.1). O(k) each."""
    n = aug.size - 2
    ks = np.atleast_1d(np.asarray(ks, dtype=int))
    out = np.empty(ks.size)
    for i, k in enumerate(ks):
        t = np.arange(k + 2)
        hi = aug[np.minimum(rank + t, n + 1)]
        lo = aug[np.clip(rank + t - k - 1, 0, n + 1)]
        out[i] = np.max(hi - lo)
    return out


def smooth_sensitivity(aug: np.ndarray, rank: int, beta: float) -> float:
    """S_beta = max_k e^{-k beta} A_k, stopping once e^{-k beta} (b - a) cannot beat the max."""
    n = aug.size - 2
    width = aug[-1] - aug[0]
    best, k = 0.0, 0
    step = 32
    while k <= n + 1:
        ks = np.arange(k, min(k + step, n + 2))
        best = max(
            best, float(np.max(np.exp(-beta * ks) * local_sensitivity_at_distance(aug, rank, ks)))
        )
        k = int(ks[-1]) + 1
        if math.exp(-beta * k) * width <= best:
            break
        step *= 2
    return best


def order_statistic_ranks(
    statistic: str, n: int, q: float | None = None
) -> tuple[list[int], float]:
    """Ranks whose average is the statistic (1 or 2 ranks) and the quantile level used."""
    name, q_spec = parse_statistic(statistic)
    if name == "median":
        return ([n // 2, n // 2 + 1] if n % 2 == 0 else [(n + 1) // 2]), 0.5
    if name == "quantile":
        q = q_spec if q is None else q
        if q is None:
            raise ValidationError("q: the quantile level is required, e.g. q=0.9")
        return [quantile_rank(q, n)], q
    raise ValidationError(
        f"statistic: {statistic!r}; smooth sensitivity is implemented for the median and "
        "quantiles only (use the piecewise Laplace or Laplace mechanism)"
    )


def _cauchy_constant(gamma: float) -> float:
    """C with integral of C/(1+|z|^gamma) over R equal to 1."""
    return gamma * math.sin(math.pi / gamma) / (2 * math.pi)


class SmoothSensitivity(Mechanism):
    """Median / quantile with smooth-sensitivity noise (module docstring).

    ``delta = 0`` (default): pure eps-DP with the generalised Cauchy noise of exponent
    ``gamma``. ``delta > 0``: (eps, delta)-DP with Laplace noise.
    """

    def __init__(
        self,
        x: Any,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any,
        q: float | None = None,
        gamma: float = 4.0,
        delta: float = 0.0,
        clip: bool = False,
    ):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        gamma = float(gamma)
        if not gamma > 1 or not math.isfinite(gamma):
            raise ValidationError(f"gamma: {gamma!r} must be a finite number > 1")
        self.gamma = gamma
        aug, a, b, self.n_clipped = sorted_data(x, bounds, clip)
        n = aug.size - 2
        ranks, _ = order_statistic_ranks(statistic, n, q)
        self.statistic = statistic
        self.value = float(np.mean(aug[ranks]))
        self.output_range = (a, b)
        if self.delta == 0:
            self.beta = self.epsilon / gamma
        else:
            self.beta = self.epsilon / (2 * math.log(2 / self.delta))
        self.sensitivity = max(smooth_sensitivity(aug, r, self.beta) for r in ranks)
        if self.delta == 0:
            self.scale = 4 * gamma / self.epsilon * self.sensitivity
        else:
            self.scale = 2 / self.epsilon * self.sensitivity
        if self.scale <= 0:
            raise ValidationError("smooth sensitivity is 0; the data range must be positive")

    @property
    def guarantee(self) -> Guarantee:
        return ApproxDP(self.epsilon, self.delta)

    # -- standardised noise Z ------------------------------------------------------------
    def _z_logpdf(self, z: np.ndarray) -> np.ndarray:
        if self.delta > 0:
            return -np.abs(z) - math.log(2)
        g = self.gamma
        return math.log(_cauchy_constant(g)) - np.log1p(np.abs(z) ** g)

    def _z_cdf(self, z: np.ndarray) -> np.ndarray:
        if self.delta > 0:
            tail = 0.5 * np.exp(-np.abs(z))
        else:
            g = self.gamma
            u = np.abs(z) ** g
            # P(|Z| > t) = 1 - I_{t^g/(1+t^g)}(1/g, 1 - 1/g)
            tail = 0.5 * special.betaincc(1 / g, 1 - 1 / g, u / (1 + u))
        return np.where(z < 0, tail, 1 - tail)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        z = (np.asarray(y, dtype=float) - self.value) / self.scale
        return self._z_logpdf(z) - math.log(self.scale)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        return self._z_cdf((np.asarray(y, dtype=float) - self.value) / self.scale)

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        if self.delta > 0:
            z = gen.laplace(0.0, 1.0, size)
        else:
            g = self.gamma
            u = gen.beta(1 / g, 1 - 1 / g, size)
            sign = np.where(gen.random(size) < 0.5, -1.0, 1.0)
            z = sign * (u / (1 - u)) ** (1 / g)
        out = self.value + self.scale * np.asarray(z)
        return float(out) if size is None else out

    def clamp(self, y: ArrayLike) -> np.ndarray:
        """Post-processing: clip releases into the data bounds."""
        return np.clip(y, *self.output_range)

    def error_mean_abs(self) -> float:
        """scale * E|Z|: E|Z| = 2C pi / (gamma sin(2 pi/gamma)) (gamma > 2), 1 for Laplace."""
        if self.delta > 0:
            return self.scale
        g = self.gamma
        if g <= 2:
            return math.inf
        return self.scale * 2 * _cauchy_constant(g) * math.pi / (g * math.sin(2 * math.pi / g))

    def error_mse(self) -> float:
        if self.delta > 0:
            return 2 * self.scale**2
        g = self.gamma
        if g <= 3:
            return math.inf
        return self.scale**2 * 2 * _cauchy_constant(g) * math.pi / (g * math.sin(3 * math.pi / g))

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        a = np.maximum(np.asarray(alpha, dtype=float), 0) / self.scale
        return 2 * self._z_cdf(a) - 1

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """p-quantiles of |err| = scale |Z|: |Z|^g / (1 + |Z|^g) ~ Beta(1/g, 1 - 1/g), or
        |Z| ~ Exp(1) for the Laplace variant (before any clamping)."""
        q = check_probabilities(p)
        if self.delta > 0:
            return -self.scale * np.log1p(-q)
        g = self.gamma
        v = special.betaincinv(1 / g, 1 - 1 / g, q)
        with np.errstate(divide="ignore"):
            return self.scale * (v / (1 - v)) ** (1 / g)

    def __repr__(self) -> str:
        return (
            f"SmoothSensitivity({self.statistic}, S_beta={self.sensitivity:.4g}, "
            f"eps={self.epsilon:g}, delta={self.delta:g})"
        )

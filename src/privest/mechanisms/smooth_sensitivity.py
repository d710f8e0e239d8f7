"""Smooth sensitivity for the median and other order statistics (NRS07).

Nissim, Raskhodnikova and Smith (2007), the baseline paper 002 names without fixing its
noise (docs/piecewise-laplace.md, "Baselines"). Local sensitivity at distance k of x_(m):
``A_k(x) = max_{t=0..k+1} (x_(m+t) - x_(m+t-k-1))`` with indices clipped to [0, n+1]
(x_(0) = a, x_(n+1) = b). Smooth sensitivity ``S_beta(x) = max_k e^{-k beta} A_k(x)``.

Pure eps-DP release (NRS07, Lemma 2.10): ``f(x) + (4 gamma / eps) S_beta(x) Z``
with ``beta = eps / gamma`` and Z of density ``h(z) = C / (1 + |z|^gamma)``. Sliding by
``a <= eps / (4 gamma)`` costs at most ``(gamma - 1)^(1 - 1/gamma) a`` (the largest slope of
``log(1 + |z|^gamma)``) and dilation by ``e^b`` costs ``max(1, gamma - 1) |b|``, so these
constants are proven eps-DP only for ``gamma <= 6`` (this bound is 0.99 eps at 6, 1.02 eps at
7, 1.05 eps at 8; the exact worst ratio on the lattice, which the tests compute, is 0.997 eps
at 8 and exceeds eps beyond: 1.04 eps at 10, 1.07 eps at 12):
privest takes an integer ``gamma`` in 2..6 (default 4: finite variance, ``E|Z| = 1/sqrt(2)``).
Approximate-DP alternative: ``f(x) + (2/eps) S_beta(x) Lap(1)`` with the largest ``beta``
whose dilation tail is at most delta (about ``eps / (eps + 2 ln(1/delta))``).

Float safety (docs/budget.md). The release is ``g (round(f(x) / g) + K)`` on a public grid
``g = 2^k`` fixed by the bounds (and delta), with K drawn exactly in Python integers
(``mechanisms/samplers/bigint.py``): the discrete generalised Cauchy law
``P(k) ~ t^gamma / (t^gamma + |k|^gamma)``, or the discrete Laplace law ``~ exp(-|k|/t)``,
at the integer scale ``t = ceil((1 + 2^-10) c S~(x) / g)``, ``c`` the constant above and
``S~ = S_beta + 2^-30 (b - a)`` (a public floor keeps ``t`` large and ``S~`` beta-smooth).
The centre moves by at most ``S~(x) / g + 1`` grid steps between neighbours and ``g`` is at
most ``2^-11`` of the floor, so the shift in units of ``t`` is at most ``1 / c``; the integer
scales differ by at most ``e^beta (1 + 1/t_min)``, and ``beta`` is reduced by the share that
covers it. On the lattice the pmf ratios are the density ratios at lattice points (sliding)
and a normaliser ratio within ``3 / (t_min I_gamma)`` of ``t'/t`` (dilation), so the
guarantee computed by :func:`pure_epsilon_bound` / :func:`laplace_delta_bound` holds
exactly and is checked to be within the (eps, delta) claimed.

For the even-n median (average of x_(m), x_(m+1)) the max of the two order statistics'
smooth sensitivities is used: it bounds the local sensitivity of the average and is itself
beta-smooth.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.accounting.base import ApproxDP, Guarantee
from privest.domain import Domain
from privest.errors import EstimationError, ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.reaches import parse_statistic, quantile_rank, sorted_data
from privest.mechanisms.samplers.bigint import discrete_laplace_big, power_law_big
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng
from privest.validation import check_delta, check_epsilon, check_probabilities

__all__ = [
    "SmoothSensitivity",
    "SmoothSensitivityLaw",
    "local_sensitivity_at_distance",
    "order_statistic_ranks",
    "smooth_sensitivity",
]


def local_sensitivity_at_distance(aug: np.ndarray, rank: int, ks: ArrayLike) -> np.ndarray:
    """A_k of x_(rank) for each k in ``ks``; ``aug`` = [a, sorted x, b]. O(k) each."""
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
    statistic: str, n: int, quantile: float | None = None
) -> tuple[list[int], float]:
    """Ranks whose average is the statistic (1 or 2 ranks) and the quantile level used."""
    name, q_spec = parse_statistic(statistic)
    if name == "median":
        return ([n // 2, n // 2 + 1] if n % 2 == 0 else [(n + 1) // 2]), 0.5
    if name == "quantile":
        q = q_spec if quantile is None else quantile
        if q is None:
            raise ValidationError("quantile: the level is required, e.g. quantile=0.9")
        return [quantile_rank(q, n)], q
    raise ValidationError(
        f"statistic: {statistic!r}; smooth sensitivity is implemented for the median and "
        "quantiles only (use the piecewise Laplace or Laplace mechanism)"
    )


def _cauchy_constant(gamma: float) -> float:
    """C with integral of C/(1+|z|^gamma) over R equal to 1."""
    return gamma * math.sin(math.pi / gamma) / (2 * math.pi)


#: the public floor added to the smooth sensitivity, a share of the bounds' width
FLOOR_SHARE = 2.0**-30
#: the scale's margin ``1 + ETA`` over the continuous constant (covers the rounding shift)
ETA = 2.0**-10


def check_gamma(gamma: Any) -> int:
    """The generalised Cauchy exponent: an integer in 2..6 (module docstring)."""
    if isinstance(gamma, bool) or gamma not in range(2, 7):
        raise ValidationError(
            f"gamma: {gamma!r} must be an integer from 2 to 6; with the scale 4 gamma / eps and "
            "beta = eps / gamma the proven bound on the generalised Cauchy noise's cost stays "
            "within eps only up to gamma = 6 (1.02 eps at 7), and the exact lattice sampler "
            "needs gamma >= 2"
        )
    return int(gamma)


def pure_epsilon_bound(epsilon: float, gamma: int, beta: float, t_min: int) -> float:
    """The pure-DP cost on the lattice: sliding ``(gamma-1)^(1-1/gamma) eps / (4 gamma)``,
    dilation ``(gamma - 1) (beta + 1 / t_min + 2^-40)`` (the integer scales' ratio, float
    error of S included) and the normaliser error ``3 / (t_min I_gamma)``."""
    integral = 2 * (math.pi / gamma) / math.sin(math.pi / gamma)
    slide = (gamma - 1) ** (1 - 1 / gamma) * epsilon / (4 * gamma)
    dilate = max(1, gamma - 1) * (beta + 1 / t_min + 2.0**-40)
    return slide + dilate + 3 / (t_min * integral)


def laplace_delta_bound(epsilon: float, beta: float, t_min: int) -> float:
    """delta of the discrete Laplace variant: the mass, at the wider integer scale, where
    dilation costs more than eps/2, times ``e^(eps/2)`` for the slide:
    ``e^(eps/2) (1 + 1/(2 t_min)) exp(-eps / (2 (e^b - 1)))``, ``b = beta + 1/t_min + 2^-40``."""
    b = beta + 1 / t_min + 2.0**-40
    return math.exp(epsilon / 2 - epsilon / (2 * math.expm1(b))) * (1 + 1 / (2 * t_min))


def _laplace_beta(epsilon: float, delta: float, t_min: int) -> float:
    """The largest beta (up to 2^-20 relative) with ``laplace_delta_bound <= delta``."""
    extra = 2 * math.log1p(1 / (2 * t_min))
    b = math.log1p(epsilon / (epsilon + 2 * math.log(1 / delta) + extra)) * (1 - 2.0**-20)
    return b - 1 / t_min - 2.0**-40


class SmoothSensitivityLaw(OutputLaw):
    """Median / quantile with smooth-sensitivity noise on a public lattice (module docstring).

    ``delta = 0`` (default): pure eps-DP with the discrete generalised Cauchy noise of
    integer exponent ``gamma`` (2..6). ``delta > 0``: (eps, delta)-DP with discrete Laplace
    noise. ``scale = t g`` is the effective scale; ``logpdf``, ``cdf`` and the error laws are
    those of the continuous noise at that scale, which the lattice law matches to within one
    grid step (``g`` is below ``2^-40`` of the bounds' width).
    """

    def __init__(
        self,
        x: Any,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any,
        quantile: float | None = None,
        gamma: int = 4,
        delta: float = 0.0,
        clip: bool = False,
    ):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.gamma = check_gamma(gamma)
        aug, a, b, self.n_clipped = sorted_data(x, bounds, clip)
        n = aug.size - 2
        ranks, _ = order_statistic_ranks(statistic, n, quantile)
        self.statistic = statistic
        self.exact = sum(Fraction(float(aug[r])) for r in ranks) / len(ranks)
        self.value = float(self.exact)
        self.output_range = (a, b)
        # the public grid, floor and constants (data-independent)
        floor = FLOOR_SHARE * (b - a)
        spread = 1.0 if self.delta == 0 else max(1.0, math.log(2 / self.delta))
        self.step = math.ldexp(1.0, math.floor(math.log2(floor / spread)) - 11)
        c = (4 * self.gamma if self.delta == 0 else 2) / self.epsilon * (1 + ETA)
        t_min = math.ceil(c * floor / self.step)
        if self.delta == 0:
            self.beta = self.epsilon / self.gamma * (1 - 2.0**-9)
            self.epsilon_bound = pure_epsilon_bound(self.epsilon, self.gamma, self.beta, t_min)
            if self.epsilon_bound > self.epsilon:  # cannot happen for gamma in 2..6
                raise EstimationError("smooth sensitivity: the lattice's epsilon exceeds eps")
        else:
            self.beta = _laplace_beta(self.epsilon, self.delta, t_min)
            if not self.beta > 0:
                raise ValidationError("delta is too small for the smooth-sensitivity mechanism")
            self.delta_bound = laplace_delta_bound(self.epsilon, self.beta, t_min)
            if self.delta_bound > self.delta:
                raise EstimationError("smooth sensitivity: the lattice's delta exceeds delta")
        self.sensitivity = max(smooth_sensitivity(aug, r, self.beta) for r in ranks) + floor
        self.t = math.ceil(c * self.sensitivity / self.step)
        self.scale = self.t * self.step

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
            from scipy import special

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
        """Draws on the lattice: ``g (round(f / g) + K)``, K exact in Python integers."""
        gen = resolve_rng(rng)
        n = 1 if size is None else int(np.prod(size))
        if self.delta > 0:
            ks = discrete_laplace_big(self.t, n, gen)
        else:
            ks = power_law_big(self.t, self.gamma, n, gen)
        center = round(self.exact / Fraction(self.step))
        out = np.array([float(center + k) for k in ks]) * self.step
        return float(out[0]) if size is None else out.reshape(size)

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
        from scipy import special

        g = self.gamma
        v = special.betaincinv(1 / g, 1 - 1 / g, q)
        with np.errstate(divide="ignore"):
            return self.scale * (v / (1 - v)) ** (1 / g)

    def __repr__(self) -> str:
        return (
            f"SmoothSensitivityLaw({self.statistic}, S_beta={self.sensitivity:.4g}, "
            f"eps={self.epsilon:g}, delta={self.delta:g})"
        )


class SmoothSensitivity(StatisticMechanism):
    """Median or quantile with smooth-sensitivity noise (Nissim, Raskhodnikova, Smith 2007).

    ``delta = 0`` (default): pure eps-DP with generalised Cauchy noise of exponent
    ``gamma``; ``delta > 0``: (eps, delta)-DP with Laplace noise. ``law(x)`` is the
    curator's :class:`SmoothSensitivityLaw`.
    """

    name = "smooth_sensitivity"

    def __init__(
        self,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
        domain: Domain | None = None,
        gamma: int = 4,
        delta: float = 0.0,
    ) -> None:
        super().__init__(
            statistic, epsilon=epsilon, bounds=bounds, quantile=quantile, clip=clip, domain=domain
        )
        self.gamma = check_gamma(gamma)
        self.delta = check_delta(delta)

    @property
    def guarantee(self) -> Guarantee:
        return ApproxDP(self.epsilon, self.delta)

    def law(self, x: Any) -> SmoothSensitivityLaw:
        return SmoothSensitivityLaw(
            x,
            self.spec,
            epsilon=self.epsilon,
            bounds=self.bounds,
            gamma=self.gamma,
            delta=self.delta,
            clip=self.clip,
        )

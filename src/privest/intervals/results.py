"""What a private statistic knows about its own uncertainty (docs/central-inference.md).

Each object holds released values and public parameters only (no data): the point release,
the auxiliary releases bought with a stated share of epsilon, n, the bounds and the noise
laws. :class:`~privest.released.PrivateStatistic` delegates ``conf_int(alpha)`` and ``bse``
to it. ``kind`` is ``"population"`` (the quantity of the distribution the records are drawn
from, iid: sampling error and privacy noise) or ``"noise"`` (the anchors' kind: the data
set's own statistic, privacy noise only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from privest.errors import ValidationError
from privest.intervals.counts import count_interval, count_noise_halfwidth
from privest.intervals.laws import invert, laplace_nodes
from privest.intervals.noisy import noise_interval
from privest.intervals.ranks import order_se

__all__ = ["CountInference", "Interval", "MomentInference", "OrderInference", "check_alpha"]

#: nodes of the nuisance's fiducial law (docs/central-inference.md)
NUISANCE_NODES = 16


class Interval(NamedTuple):
    """A confidence interval: ``lower``, ``upper``."""

    lower: float
    upper: float


def check_alpha(alpha: Any) -> float:
    """``alpha`` in (0, 1) (the interval's level is 1 - alpha)."""
    a = float(alpha) if isinstance(alpha, (int, float, np.floating)) else math.nan
    if isinstance(alpha, bool) or not 0 < a < 1:
        raise ValidationError(f"alpha: {alpha!r} must be in (0, 1) (1 - confidence level)")
    return a


_TARGET = {
    "mean": "the mean of the population clamped to the bounds",
    "sum": "n times the mean of the population clamped to the bounds",
    "variance": "the variance of the population clamped to the bounds",
    "count": "n times the proportion of the population in the set",
}


@dataclass(frozen=True)
class MomentInference:
    """Mean, sum or variance: the point ``estimate`` with Laplace noise of ``scale``, and
    a released nuisance ``spread`` (Laplace noise ``spread_scale``, public range
    ``[0, spread_cap]``) such that the sampling variance of one record at a candidate value
    theta (on the working scale) is ``spread - (theta - centre)^2`` (module docstring of
    :mod:`privest.intervals.laws`).

    Working scale: the mean of the records (the sum divided by n) or the 1/n variance; the
    interval is reported times ``factor`` (n for the sum, n / (n - 1) for the variance).
    ``lo``, ``hi``: the working statistic's public range, into which the release is clamped.
    """

    statistic: str
    kind: str
    estimate: float
    n: int | None
    lo: float
    hi: float
    scale: float
    factor: float = 1.0
    spread: float = math.nan
    spread_scale: float = math.nan
    spread_cap: float = math.nan
    centre: float = math.nan
    split: dict[str, float] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return _TARGET[self.statistic] if self.kind == "population" else "the data's own value"

    def sd_at(self, theta: np.ndarray) -> np.ndarray:
        """Sampling sds of the working estimate at candidate values (nodes on the last axis).

        The fields ``estimate``, ``spread`` and ``centre`` may be arrays of releases (shape
        ``(R,)``, a batch of experiments): ``theta`` then has the same shape."""
        nodes = laplace_nodes(self.spread_scale, NUISANCE_NODES)
        theta = np.asarray(theta, dtype=float)[..., None]
        spread = np.asarray(self.spread, dtype=float)[..., None]
        centre = np.asarray(self.centre, dtype=float)[..., None]
        cap = np.asarray(self.spread_cap, dtype=float)[..., None]
        var = np.clip(spread - nodes - (theta - centre) ** 2, 0.0, cap)
        return np.sqrt(var / self.n)

    @property
    def work(self) -> np.ndarray:
        """The estimate on the working scale (the sum divided by n)."""
        div = self.factor if self.statistic == "sum" else 1.0
        return np.asarray(self.estimate, dtype=float) / div

    def conf_int(self, alpha: float = 0.05) -> Interval:
        """The interval (floats; arrays for a batch of releases)."""
        a = check_alpha(alpha)
        work = self.work
        if self.kind == "noise":
            half = self.scale * math.log(1 / a)
            lower, upper = noise_interval(work, half, self.lo, self.hi)
        else:
            lower, upper = invert(
                np.atleast_1d(work), self.sd_at, (self.scale,), self.lo, self.hi, a
            )
        lower, upper = lower * self.factor, upper * self.factor
        if np.ndim(work) == 0:
            return Interval(float(np.squeeze(lower)), float(np.squeeze(upper)))
        return Interval(lower, upper)

    @property
    def bse(self) -> float:
        """The sd of the error law at the estimate: sampling (mean over the nuisance nodes)
        and noise (2 scale^2); the noise alone for ``kind="noise"``."""
        var = 2 * self.scale**2
        if self.kind == "population":
            var = var + np.mean(self.sd_at(self.work) ** 2, axis=-1)
        out = np.sqrt(var) * self.factor
        return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class CountInference:
    """A count released as ``clip(C + K, 0, n)`` with discrete Laplace noise of ratio ``r``
    (:mod:`privest.intervals.counts`); no epsilon beyond the point's is needed."""

    kind: str
    estimate: float
    n: int | None  # None under add/remove neighbours (n private)
    r: float
    split: dict[str, float] = field(default_factory=dict)
    statistic: str = "count"

    @property
    def target(self) -> str:
        return _TARGET["count"] if self.kind == "population" else "the data's own count"

    @property
    def noise_variance(self) -> float:
        return 2 * self.r / (1 - self.r) ** 2

    def conf_int(self, alpha: float = 0.05) -> Interval:
        a = check_alpha(alpha)
        if self.kind == "noise":
            half = count_noise_halfwidth(self.r, a)
            top = math.inf if self.n is None else self.n
            return Interval(*noise_interval(self.estimate, half, 0.0, top))
        low, up = count_interval(self.estimate, self.n, self.r, a)
        return Interval(low * self.n, up * self.n)

    @property
    def bse(self) -> float:
        if self.kind != "population":
            return math.sqrt(self.noise_variance)
        p = min(max(self.estimate / self.n, 0.0), 1.0)
        return math.sqrt(self.n * p * (1 - p) + self.noise_variance)


@dataclass(frozen=True)
class OrderInference:
    """A median or quantile: the interval is two released order statistics (or a bound)
    at ranks planned for ``alpha`` (:mod:`privest.intervals.ranks`)."""

    statistic: str
    kind: str
    alpha: float
    lower: float
    upper: float
    lower_rank: int | None
    upper_rank: int | None
    split: dict[str, float] = field(default_factory=dict)

    @property
    def target(self) -> str:
        if self.kind == "noise":
            return "the data's own value"
        return f"the {self.statistic} of the population clamped to the bounds"

    def conf_int(self, alpha: float = 0.05) -> Interval:
        a = check_alpha(alpha)
        if not math.isclose(a, self.alpha, rel_tol=1e-9):
            raise ValidationError(
                f"alpha: {alpha!r}; the {self.statistic}'s interval is two order statistics "
                f"released for alpha={self.alpha:g}: release again with alpha={alpha!r} "
                "(it spends epsilon)"
            )
        return Interval(self.lower, self.upper)

    @property
    def bse(self) -> float:
        """The interval's half-width over z_{1 - alpha/2} (the interval is not symmetric)."""
        return order_se(self.lower, self.upper, self.alpha)

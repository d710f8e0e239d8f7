"""The output-law base classes (curator's view of a release's distribution on one data set).

A law is built from the data, so it is never published: it answers the curator's questions
about a release before it is drawn (docs/piecewise-laplace.md, "Exact error laws"). The error
of a release is ``M(x) - f(x)`` with ``f(x)`` the law's :attr:`~OutputLaw.value`. Everything
derives from the output's CDF ``F`` (and ``F(y-)``, the mass strictly below y, for laws with
atoms):

* ``error_cdf(a) = P(|M(x) - f(x)| <= a) = F(f + a) - F((f - a)-)``;
* ``error_sf(a) = 1 - error_cdf(a)``, the probability that the error exceeds a;
* ``error_mean_abs = int_0^inf error_sf(a) da``, ``error_mse = int_0^inf 2 a error_sf(a) da``;
* ``error_quantile(p) = inf {a : error_cdf(a) >= p}``.

Subclasses give ``cdf`` (and ``cdf_left`` if the law has atoms) and override a functional
only where they have a closed form.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.accounting.base import ApproxDP, Guarantee
from privest.validation import check_probabilities

__all__ = ["DiscreteOutputLaw", "OutputLaw"]


class OutputLaw(ABC):
    """The output distribution of a central mechanism on one data set (module docstring).

    Subclasses expose ``logpdf``, ``cdf`` (1-D), ``sample`` and ``guarantee``; the error
    functionals derive from ``cdf``. A law holds the data's statistic and its
    neighbourhood structure: never publish it, publish a release.
    """

    #: the privacy parameter the mechanism is run with
    epsilon: float
    #: the exact value of the statistic on the data (curator's view only)
    value: float

    @property
    def guarantee(self) -> Guarantee:
        """Pure epsilon-DP unless a subclass says otherwise."""
        return ApproxDP(self.epsilon)

    @abstractmethod
    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log density of the output at ``y`` (``-inf`` outside the support)."""

    @abstractmethod
    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Draw releases; ``rng`` is a Generator, a seed or ``None`` (secure)."""

    def pdf(self, y: ArrayLike) -> np.ndarray:
        """Density of the output at ``y``."""
        return np.exp(self.logpdf(y))

    def cdf(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) <= y)."""
        raise NotImplementedError(f"{type(self).__name__} defines no CDF")

    def cdf_left(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) < y): the CDF itself for a law without atoms."""
        return self.cdf(y)

    # -- the error law, derived from the CDF ----------------------------------------------
    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|M(x) - f(x)| <= alpha)."""
        a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
        out = self.cdf(self.value + a) - self.cdf_left(self.value - a)
        return np.clip(out, 0.0, 1.0)

    def error_sf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|M(x) - f(x)| > alpha): the chance that the error exceeds ``alpha``."""
        return 1.0 - np.asarray(self.error_cdf(alpha), dtype=float)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """The p-quantiles ``inf {a : P(|err| <= a) >= p}`` (root search on the CDF)."""
        q = check_probabilities(p)
        out = np.array([self._abs_quantile(float(t)) for t in q.ravel()])
        return out.reshape(q.shape)

    def _abs_quantile(self, target: float) -> float:
        from scipy import optimize

        if target <= 0.0 or float(self.error_cdf(0.0)) >= target:
            return 0.0
        hi = 1.0
        while float(self.error_cdf(hi)) < target:
            hi *= 2.0
            if not math.isfinite(hi):
                return math.inf
        return float(
            optimize.brentq(
                lambda a: float(self.error_cdf(a)) - target, 0.0, hi, xtol=1e-300, rtol=1e-12
            )
        )

    def _tail_integral(self, power: int) -> float:
        """int_0^inf power a^(power-1) P(|err| > a) da = E|err|^power (power 1 or 2)."""
        from scipy import integrate

        top = float(self.error_quantile(1.0 - 1e-13))
        if not math.isfinite(top):
            return math.inf
        if top == 0.0:
            return 0.0
        cuts = np.quantile(np.asarray(self.error_quantile(np.linspace(0.05, 0.95, 10))), [0.5])
        val, _ = integrate.quad(
            lambda a: power * a ** (power - 1) * float(self.error_sf(a)),
            0.0,
            top,
            points=[float(c) for c in cuts if 0 < c < top],
            limit=400,
            epsabs=0.0,
            epsrel=1e-10,
        )
        return float(val)

    def error_mean_abs(self) -> float:
        """E|M(x) - f(x)| (numerical integral of the CDF's tail unless overridden)."""
        return self._tail_integral(1)

    def error_mse(self) -> float:
        """E (M(x) - f(x))^2 (numerical integral of the CDF's tail unless overridden)."""
        return self._tail_integral(2)

    def privacy_report(self) -> dict[str, float]:
        """Privacy properties as numbers (pure DP epsilon; subclasses add more)."""
        return {"pure_dp": self.epsilon}


class DiscreteOutputLaw(OutputLaw):
    """A law on a finite set of output points: every functional exactly from the pmf.

    Subclasses give :meth:`support` (the sorted output values) and :meth:`pmf` (their
    probabilities, summing to 1).
    """

    @abstractmethod
    def support(self) -> np.ndarray:
        """The possible outputs, sorted."""

    @abstractmethod
    def pmf(self) -> np.ndarray:
        """P(M(x) = support()[i])."""

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log probability of each output ``y`` (``-inf`` off the support)."""
        y = np.asarray(y, dtype=float)
        pts = self.support()
        i = np.clip(np.searchsorted(pts, y), 0, pts.size - 1)
        with np.errstate(divide="ignore"):
            logp = np.log(self.pmf()[i])
        return np.where(pts[i] == y, logp, -np.inf)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        cum = np.cumsum(self.pmf())
        pos = np.searchsorted(self.support(), np.asarray(y, dtype=float), side="right")
        return np.where(pos > 0, cum[np.maximum(pos - 1, 0)], 0.0)

    def cdf_left(self, y: ArrayLike) -> np.ndarray:
        cum = np.cumsum(self.pmf())
        pos = np.searchsorted(self.support(), np.asarray(y, dtype=float), side="left")
        return np.where(pos > 0, cum[np.maximum(pos - 1, 0)], 0.0)

    def _abs_errors(self) -> np.ndarray:
        return np.abs(self.support() - self.value)

    def error_mean_abs(self) -> float:
        return float(np.sum(self.pmf() * self._abs_errors()))

    def error_mse(self) -> float:
        return float(np.sum(self.pmf() * self._abs_errors() ** 2))

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        q = check_probabilities(p)
        err = self._abs_errors()
        order = np.argsort(err, kind="stable")
        cum = np.cumsum(self.pmf()[order])
        i = np.searchsorted(cum, np.minimum(q, cum[-1]) - 1e-15, side="left")
        return err[order][np.minimum(i, err.size - 1)].reshape(q.shape)

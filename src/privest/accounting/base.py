"""Privacy guarantees as objects (paper 000, Section 2).

A :class:`Guarantee` answers three questions about a mechanism:

* ``delta(epsilon)``: the (eps, delta(eps)) profile, i.e. the smallest delta for which
  the mechanism is (eps, delta)-DP;
* ``epsilon(delta)``: the smallest eps with ``delta(eps) <= delta``;
* ``tradeoff(alpha)``: the trade-off function f of an f-DP guarantee (Dong, Roth and
  Su), where one is defined.

For a symmetric trade-off function f the profile is
``delta(eps) = 1 - min_alpha (f(alpha) + e^eps alpha)`` (the convex conjugate;
[000] Prop 2.1 and Thm 3.3); subclasses override it with closed forms.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from privest.accounting.profiles import approx_dp_tradeoff
from privest.validation import check_delta, check_epsilon

if TYPE_CHECKING:
    from privest.accounting.events import Event

__all__ = ["ApproxDP", "Guarantee", "approx_dp_tradeoff"]


class Guarantee(ABC):
    """Base class of every privacy guarantee."""

    #: Short human-readable name, e.g. ``"(1, 1e-06)-DP"``.
    label: str = "guarantee"

    @abstractmethod
    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        """Smallest delta such that the mechanism is (epsilon, delta)-DP."""

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon with ``self.delta(epsilon) <= delta`` (``inf`` if none)."""
        delta = check_delta(delta)
        if float(self.delta(0.0)) <= delta:
            return 0.0
        hi = 1.0
        while float(self.delta(hi)) > delta:
            hi *= 2.0
            if hi > 1e6:
                return math.inf
        from scipy import optimize  # here, not at import (a second of every command's start)

        return float(
            optimize.brentq(
                lambda e: float(self.delta(e)) - delta,
                hi / 2 if hi > 1 else 0.0,
                hi,
                xtol=1e-12,
                rtol=1e-12,
            )
        )

    def tradeoff(self, alpha: float | np.ndarray) -> np.ndarray:
        """Trade-off function f(alpha): the least type II error of any level-alpha test."""
        raise NotImplementedError(f"{self.label} defines no trade-off function")

    def event(self, epsilon: float | None = None) -> Event:
        """The privacy event accountants compose and a budget ledger stores
        (:mod:`privest.accounting.events`); ``epsilon``: for a curve, the point at which
        basic composition charges it."""
        raise NotImplementedError(f"{type(self).__name__} emits no privacy event")

    @property
    def has_tradeoff(self) -> bool:
        """Whether :meth:`tradeoff` is defined."""
        return type(self).tradeoff is not Guarantee.tradeoff

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (stored with releases)."""
        return {"type": type(self).__name__, "label": self.label}

    def profile(self, epsilons: np.ndarray | list[float]) -> list[tuple[float, float]]:
        """The (epsilon, delta(epsilon)) pairs at the given epsilons."""
        return [(float(e), float(self.delta(e))) for e in np.asarray(epsilons, dtype=float)]

    def plot(self, ax: Any = None, epsilons: Any = (0.5, 1.0, 2.0), label: str | None = None):
        """Plot the trade-off curve with the f_{eps, delta(eps)} envelopes at ``epsilons``."""
        from privest.accounting.plot import plot_guarantee

        return plot_guarantee(self, ax=ax, epsilons=epsilons, label=label)

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.label}: a privacy guarantee; .delta(epsilon), "
            ".epsilon(delta) and .tradeoff(alpha) read it>"
        )

    def _repr_html_(self) -> str:
        """Notebook view: its delta at a few epsilons and its two curves."""
        from privest.reports.reprs import guarantee_html

        return guarantee_html(self)


class ApproxDP(Guarantee):
    """Plain (epsilon, delta)-DP; pure epsilon-DP when ``delta == 0``."""

    def __init__(self, epsilon: float, delta: float = 0.0):
        self.eps = check_epsilon(epsilon, allow_zero=True)
        self.dlt = check_delta(delta)
        self.label = f"({self.eps:.4g}, {self.dlt:.3g})-DP" if self.dlt else f"{self.eps:.4g}-DP"

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        """Profile of f_{eps,delta}: delta for e >= eps, else 1 - (1-delta)(1+e^e)/(1+e^eps)."""
        e = np.asarray(epsilon, dtype=float)
        below = 1.0 - (1.0 - self.dlt) * (1.0 + np.exp(np.minimum(e, self.eps))) / (
            1.0 + math.exp(self.eps)
        )
        out = np.where(e >= self.eps, self.dlt, below)
        return float(out) if out.ndim == 0 else out

    def tradeoff(self, alpha: float | np.ndarray) -> np.ndarray:
        return approx_dp_tradeoff(alpha, self.eps, self.dlt)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "epsilon": self.eps, "delta": self.dlt}

    def event(self, epsilon: float | None = None) -> Event:
        """Pure or approximate DP at its own (epsilon, delta) (``epsilon`` is not used)."""
        from privest.accounting.events import ApproxDPEvent, PureDPEvent

        return PureDPEvent(self.eps) if self.dlt == 0 else ApproxDPEvent(self.eps, self.dlt)

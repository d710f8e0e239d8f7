"""Zero-concentrated DP (zCDP) and its conversion to (epsilon, delta)-DP.

A mechanism is rho-zCDP when every Renyi divergence of order alpha > 1 between its outputs
on neighbours is at most alpha rho (Bun and Steinke 2016). rho-zCDP composes by adding the
rho's. Pure epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun and Steinke 2016, Prop. 1.4); an
epsilon-bounded-range mechanism (exponential mechanism, piecewise Laplace) is
(epsilon^2 / 8)-zCDP (Cesar and Rogers 2021); a Gaussian or discrete Gaussian step with L2
sensitivity Delta and standard deviation sigma is (Delta^2 / (2 sigma^2))-zCDP (Canonne,
Kamath and Steinke 2020, Prop. 5 and the additivity of Renyi divergences over coordinates).

The conversion used here is the tight one of Canonne, Kamath and Steinke (2020, Cor. 13;
Balle et al. 2020, Thm. 21), computed in :mod:`privest.accounting.profiles` (re-exported
here).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privest.accounting.base import Guarantee
from privest.accounting.profiles import zcdp_delta, zcdp_epsilon, zcdp_rho_for
from privest.errors import PrivacyParameterError

__all__ = ["ZCDP", "zcdp_delta", "zcdp_epsilon", "zcdp_rho_for"]


class ZCDP(Guarantee):
    """rho-zCDP, with the (epsilon, delta) profile of the tight conversion."""

    def __init__(self, rho: float):
        if not (rho >= 0 and math.isfinite(rho)):
            raise PrivacyParameterError(f"rho: {rho!r} must be finite and >= 0")
        self.rho = float(rho)
        self.zcdp_rho = self.rho
        self.label = f"{self.rho:.4g}-zCDP"

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        e = np.asarray(epsilon, dtype=float)
        out = np.vectorize(lambda v: zcdp_delta(self.rho, float(v)), otypes=[float])(e)
        return float(out) if out.ndim == 0 else out

    def epsilon(self, delta: float) -> float:
        return zcdp_epsilon(self.rho, delta)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "rho": self.rho}

    def event(self, epsilon: float | None = None) -> Any:
        """:class:`~privest.accounting.events.ZCDPEvent`, charged at ``epsilon`` by basic
        composition."""
        from privest.accounting.events import ZCDPEvent

        return ZCDPEvent(self.rho, epsilon)

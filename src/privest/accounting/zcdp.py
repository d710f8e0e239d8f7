"""Zero-concentrated DP (zCDP) and its conversion to (epsilon, delta)-DP.

A mechanism is rho-zCDP when every Renyi divergence of order alpha > 1 between its outputs
on neighbours is at most alpha rho (Bun and Steinke 2016). rho-zCDP composes by adding the
rho's. Pure epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun and Steinke 2016, Prop. 1.4); an
epsilon-bounded-range mechanism (exponential mechanism, piecewise Laplace) is
(epsilon^2 / 8)-zCDP (Cesar and Rogers 2021); a Gaussian or discrete Gaussian step with L2
sensitivity Delta and standard deviation sigma is (Delta^2 / (2 sigma^2))-zCDP (Canonne,
Kamath and Steinke 2020, Prop. 5 and the additivity of Renyi divergences over coordinates).

The conversion used here is the tight one of Canonne, Kamath and Steinke (2020, Cor. 13;
Balle et al. 2020, Thm. 21): rho-zCDP implies (epsilon, delta)-DP with

    delta = inf over alpha > 1 of  exp((alpha - 1)(alpha rho - epsilon)) / alpha
                                   * (1 - 1/alpha)^(alpha - 1),

minimised numerically in log space (the objective is smooth and unimodal in log alpha).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from privest.accounting.base import Guarantee
from privest.errors import PrivacyParameterError
from privest.validation import check_delta

__all__ = ["ZCDP", "zcdp_delta", "zcdp_epsilon", "zcdp_rho_for"]


def _log_delta(log_alpha_minus_1: float, rho: float, epsilon: float) -> float:
    am1 = math.exp(log_alpha_minus_1)
    alpha = 1.0 + am1
    return am1 * (alpha * rho - epsilon) - math.log(alpha) + am1 * math.log1p(-1.0 / alpha)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest delta the conversion gives for rho-zCDP at ``epsilon`` (module docstring)."""
    if rho < 0 or not math.isfinite(rho):
        raise PrivacyParameterError(f"rho: {rho!r} must be finite and >= 0")
    if rho == 0:
        return 0.0
    if epsilon <= rho:  # the infimum is approached as alpha -> 1: no better than 1 - ...
        best = optimize.minimize_scalar(
            lambda la: _log_delta(la, rho, epsilon), bounds=(-30.0, 30.0), method="bounded"
        )
        return float(min(1.0, math.exp(best.fun)))
    guess = math.log(max((epsilon + rho) / (2.0 * rho) - 1.0, 1e-9))
    best = optimize.minimize_scalar(
        lambda la: _log_delta(la, rho, epsilon),
        bounds=(min(guess, 0.0) - 30.0, max(guess, 0.0) + 30.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(min(1.0, math.exp(best.fun)))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon with ``zcdp_delta(rho, epsilon) <= delta``."""
    delta = check_delta(delta)
    if rho == 0:
        return 0.0
    if delta == 0:
        return math.inf
    hi = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)) + 1.0  # Bun-Steinke bound + 1
    if zcdp_delta(rho, 0.0) <= delta:
        return 0.0
    return float(optimize.brentq(lambda e: zcdp_delta(rho, e) - delta, 0.0, hi, xtol=1e-12))


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose conversion meets (epsilon, delta) (for calibration)."""
    lo, hi = 1e-12, 1.0
    while zcdp_delta(hi, epsilon) <= delta:
        hi *= 2.0
    return float(optimize.brentq(lambda r: zcdp_delta(r, epsilon) - delta, lo, hi, xtol=1e-15))


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

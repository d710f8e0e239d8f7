"""Privacy profiles in closed form, shared by the guarantees and the events (no guarantee
class here, so that :mod:`privest.accounting.events` can use them).

* :func:`gaussian_delta`: the exact profile of the Gaussian mechanism (Balle and Wang
  2018, Thm 8); :func:`discrete_gaussian_delta`: of one coordinate of discrete Gaussian
  noise (Canonne, Kamath and Steinke 2020, Thm 7).
* :func:`zcdp_delta`, :func:`zcdp_epsilon`: the tight conversion of rho-zCDP to
  (epsilon, delta)-DP (Canonne, Kamath and Steinke 2020, Cor 13; Balle et al. 2020, Thm
  21),

      delta = inf over alpha > 1 of  exp((alpha - 1)(alpha rho - epsilon)) / alpha
                                     * (1 - 1/alpha)^(alpha - 1),

  minimised numerically in log space (the objective is smooth and unimodal in log alpha);
  :func:`zcdp_rho_for`, its inverse in rho (for calibration).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from privest.errors import PrivacyParameterError
from privest.validation import check_delta

__all__ = [
    "approx_dp_tradeoff",
    "discrete_gaussian_delta",
    "gaussian_delta",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho_for",
]


def gaussian_delta(epsilon: float, distance: float, sigma: float) -> float:
    """Exact delta(eps) of N(mu, s^2 I) vs N(mu', s^2 I) with ||mu - mu'|| = distance.

    Balle and Wang (2018) Thm 8; ``epsilon`` may be any real number (negative values are
    used by the ePTR pair audit). Returns max(0, 1 - e^eps) when ``distance == 0``.
    """
    from scipy.special import log_ndtr, ndtr

    if distance <= 0:
        return max(0.0, -math.expm1(epsilon))
    a = distance / (2.0 * sigma)
    b = epsilon * sigma / distance
    second = math.exp(epsilon + float(log_ndtr(-a - b))) if epsilon < 700 else 0.0
    return max(0.0, float(ndtr(a - b)) - second)


def discrete_gaussian_delta(epsilon: float, shift: int, sigma2: float) -> float:
    """Exact delta(eps) between N_Z(0, sigma2) and N_Z(shift, sigma2) on the integers.

    delta = sum_k max(0, p(k) - e^eps p(k - shift)), with p(k) proportional to
    exp(-k^2 / (2 sigma2)) (Canonne, Kamath and Steinke 2020, Thm. 7), summed over
    |k| <= 40 sigma + shift (the rest weighs below exp(-800)). ``shift`` is an integer
    (the largest change of the released integer between neighbours).
    """
    shift = int(abs(shift))
    if shift == 0:
        return max(0.0, -math.expm1(epsilon))
    sigma = math.sqrt(sigma2)
    top = int(math.ceil(40.0 * sigma)) + shift
    k = np.arange(-top, top + 1, dtype=float)
    log_w = -(k * k) / (2.0 * sigma2)
    log_z = float(np.logaddexp.reduce(log_w))
    # log p(k - shift) - log p(k) = (2 k shift - shift^2) / (2 sigma2)
    ratio = epsilon + (2.0 * k * shift - shift * shift) / (2.0 * sigma2)
    terms = np.exp(log_w - log_z) * -np.expm1(np.minimum(ratio, 0.0))
    return float(max(0.0, np.sum(terms[ratio < 0])))


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
    from scipy import optimize  # here, not at import: a second of imports for every command

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
    from scipy import optimize

    return float(optimize.brentq(lambda e: zcdp_delta(rho, e) - delta, 0.0, hi, xtol=1e-12))


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose conversion meets (epsilon, delta) (for calibration); a root
    search, cached since every fit and table asks it again with the same public floats."""
    return _rho_for(float(epsilon), float(delta))


@functools.lru_cache(maxsize=256)
def _rho_for(epsilon: float, delta: float) -> float:
    from scipy import optimize

    lo, hi = 1e-12, 1.0
    while zcdp_delta(hi, epsilon) <= delta:
        hi *= 2.0
    return float(optimize.brentq(lambda r: zcdp_delta(r, epsilon) - delta, lo, hi, xtol=1e-15))


def approx_dp_tradeoff(alpha: np.ndarray | float, epsilon: float, delta: float) -> np.ndarray:
    """f_{eps,delta}(alpha) = max{0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)}.

    Prop 2.1 of paper 000: (eps, delta)-DP is equivalent to f_{eps,delta}-DP.
    """
    a = np.asarray(alpha, dtype=float)
    e = math.exp(epsilon) if epsilon < 700 else math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        first = np.where(a > 0, 1.0 - delta - e * a, 1.0 - delta)
    second = math.exp(-epsilon) * (1.0 - delta - a)
    return np.maximum(0.0, np.maximum(first, second))

"""Gaussian mechanism calibration and local-DP guarantees (paper 004, Sec. 3 and App. B).

* :func:`classic_gaussian_sigma`: Dwork and Roth (2014, Thm A.1),
  sigma = Delta * sqrt(2 log(1.25/delta)) / epsilon, the calibration used by paper 004
  (sigma^2 = 8 log(1.25/delta) R^2 / eps_x^2 with Delta = 2R). It is proven for
  epsilon < 1 only (spec iwp_sgd.md, A3).
* :func:`analytic_gaussian_sigma`: the smallest sigma whose exact profile delta(eps) (Balle
  and Wang 2018, Thm 8) is <= delta, valid for every epsilon.

Both go through :func:`gaussian_sigma` (conventions ``"dwork_roth"``, ``"paper_eq3"`` of
paper 001, ``"analytic"``) and :func:`gaussian_delta`, the exact profile, used by the whole
library (the Gaussian mechanism of :mod:`privest.mechanisms.gaussian`, ePTR, paper 004's
release).
* :class:`GaussianRRGuarantee`: the exact profile of the release of paper 004 (Gaussian
  noise on the features, randomized response on the label), and :class:`LocalDP`, the
  (epsilon, delta)-LDP label it advertises.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from scipy import optimize, special
from scipy.special import log_ndtr, ndtr

from privest.accounting.base import ApproxDP, Guarantee
from privest.errors import PrivacyParameterError, ValidationError
from privest.validation import check_delta, check_epsilon, check_positive, check_probability

__all__ = [
    "Convention",
    "GaussianRRGuarantee",
    "LocalDP",
    "analytic_gaussian_sigma",
    "calibrate_gaussian_sigma",
    "c_delta",
    "classic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_sigma",
    "require_gaussian_dp",
]

Convention = Literal["dwork_roth", "paper_eq3", "analytic"]


def c_delta(delta: float) -> float:
    """c_delta = sqrt(2 ln(1.25/delta)) (spec 0); 3.107511 at delta = 0.01."""
    delta = check_probability(delta, "delta")
    return math.sqrt(2.0 * math.log(1.25 / delta))


def gaussian_sigma(
    sensitivity: float, epsilon: float, delta: float, convention: Convention = "dwork_roth"
) -> float:
    """Noise sd of the Gaussian mechanism for L2 ``sensitivity`` at (epsilon, delta)."""
    sens = check_positive(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    if convention == "dwork_roth":
        return sens * c_delta(delta) / eps
    if convention == "analytic":
        dlt = check_probability(delta, "delta")
        f = lambda log_s: gaussian_delta(eps, sens, math.exp(log_s)) - dlt  # noqa: E731
        lo, hi = math.log(sens) - 10.0, math.log(sens * c_delta(dlt) / eps) + 5.0
        return math.exp(optimize.brentq(f, lo, hi, xtol=1e-12)) * (1 + 1e-9)
    if convention == "paper_eq3":
        return 2.0 / eps * math.sqrt(math.log(1.25 / check_probability(delta, "delta"))) * sens
    raise ValidationError(
        f"convention: {convention!r} is not accepted; use 'dwork_roth', 'paper_eq3' or 'analytic'"
    )


def gaussian_delta(epsilon: float, distance: float, sigma: float) -> float:
    """Exact delta(eps) of N(mu, s^2 I) vs N(mu', s^2 I) with ||mu - mu'|| = distance.

    Balle and Wang (2018) Thm 8; ``epsilon`` may be any real number (negative values are
    used by the ePTR pair audit). Returns max(0, 1 - e^eps) when ``distance == 0``.
    """
    if distance <= 0:
        return max(0.0, -math.expm1(epsilon))
    a = distance / (2.0 * sigma)
    b = epsilon * sigma / distance
    second = math.exp(epsilon + float(log_ndtr(-a - b))) if epsilon < 700 else 0.0
    return max(0.0, float(ndtr(a - b)) - second)


def require_gaussian_dp(
    epsilon: float, delta: float, distance: float, sigma: float, what: str, remedy: str
) -> float:
    """Exact delta(eps) of a Gaussian step; :class:`PrivacyParameterError` if it exceeds delta.

    The one check behind every claimed (eps, delta) of a Gaussian step in the library: the
    classical calibration is proven for eps <= 1 only, so the exact profile (Balle and Wang
    2018, Thm 8; :func:`gaussian_delta`) decides, with a relative slack of 1e-9 for the
    rounding of the analytic calibration. ``what`` names the step and ``remedy`` says what to
    change, both in the message.
    """
    exact = gaussian_delta(epsilon, distance, sigma)
    if exact > delta * (1 + 1e-9):
        raise PrivacyParameterError(
            f"{what} has exact delta({epsilon:.4g}) = {exact:.3g} > {delta:g} (Balle and Wang "
            f"2018, Thm 8); {remedy}"
        )
    return exact


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """sigma = Delta sqrt(2 log(1.25/delta)) / epsilon (Dwork and Roth 2014, Thm A.1)."""
    return gaussian_sigma(sensitivity, epsilon, _positive_delta(delta), "dwork_roth")


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma for which the Gaussian mechanism is (epsilon, delta)-DP (Balle-Wang 2018)."""
    return gaussian_sigma(sensitivity, epsilon, _positive_delta(delta), "analytic")


def _positive_delta(delta: float) -> float:
    delta = check_delta(delta)
    if delta == 0:
        raise PrivacyParameterError("delta: 0 is out of range; the Gaussian mechanism needs > 0")
    return delta


def calibrate_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, calibration: str = "classic"
) -> float:
    """Dispatch to :func:`classic_gaussian_sigma` or :func:`analytic_gaussian_sigma`."""
    if calibration == "classic":
        return classic_gaussian_sigma(epsilon, delta, sensitivity)
    if calibration == "analytic":
        return analytic_gaussian_sigma(epsilon, delta, sensitivity)
    raise ValidationError(
        f"calibration: {calibration!r} is unknown; accepted: 'classic' (paper 004, default), "
        "'analytic' (Balle and Wang 2018)"
    )


_profile = np.vectorize(gaussian_delta, otypes=[float])


class LocalDP(ApproxDP):
    """(epsilon, delta)-local DP: each user's release is (epsilon, delta)-DP in their record."""

    def __init__(self, epsilon: float, delta: float = 0.0):
        super().__init__(epsilon, delta)
        self.label = self.label.replace("-DP", "-LDP")


class GaussianRRGuarantee(Guarantee):
    """Exact privacy profile of x -> (x + N(0, sigma^2 I), RR_{eps_y}(y)) (paper 004, Sec. 3).

    Worst-case neighbours differ by the L2 sensitivity in x and flip y. The privacy loss is
    the sum of the Gaussian loss and +-eps_y (with probabilities S and 1-S under P), so the
    hockey-stick divergence is delta(eps) = S delta_G(eps - eps_y) + (1-S) delta_G(eps + eps_y)
    with delta_G of :func:`gaussian_delta`. ``epsilon_y=inf`` means the label is public
    (no flip; then only the feature part is counted); ``sigma=0`` is not allowed.
    """

    def __init__(self, sigma: float, sensitivity: float, epsilon_y: float):
        self.sigma = check_positive(sigma, "sigma")
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.epsilon_y = float(epsilon_y)
        self.label = (
            f"Gaussian(mu={self.sensitivity / self.sigma:.4g}) + RR(eps_y={self.epsilon_y:.4g})"
        )

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        e = np.asarray(epsilon, dtype=float)
        if math.isinf(self.epsilon_y):
            out = _profile(e, self.sensitivity, self.sigma)
        else:
            keep = special.expit(self.epsilon_y)
            out = keep * _profile(e - self.epsilon_y, self.sensitivity, self.sigma) + (
                1.0 - keep
            ) * _profile(e + self.epsilon_y, self.sensitivity, self.sigma)
        return float(out) if out.ndim == 0 else out

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "sigma": self.sigma,
            "sensitivity": self.sensitivity,
            "epsilon_y": self.epsilon_y,
        }

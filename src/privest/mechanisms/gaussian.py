"""Gaussian mechanism with global L2 sensitivity (paper 001, eq. 3; baseline B0 of the ePTR spec).

``gaussian_sigma`` gives the noise scale for an (eps, delta) target:

* ``"dwork_roth"``: sigma = Delta c_delta / eps with c_delta = sqrt(2 ln(1.25/delta)), the
  classical calibration (Dwork and Roth, Thm A.1). It is proven for eps <= 1 only; the exact
  hockey-stick check :func:`gaussian_delta` shows it still holds up to eps ~ 6.77 at
  delta = 0.01, and :class:`GaussianMechanism` refuses settings where it does not hold.
* ``"paper_eq3"``: sigma = (2/eps) sqrt(ln(1.25/delta)) Delta, the paper's eq. 3, which is
  sqrt(2) times the classical one (conservative).
* ``"analytic"``: the smallest sigma whose exact delta(eps) is <= delta (Balle and Wang 2018,
  the analytic Gaussian mechanism); valid at every eps.

:func:`gaussian_delta` is the exact privacy profile of the Gaussian mechanism (Balle and Wang
2018, Thm 8): delta(eps) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D).
"""

from __future__ import annotations

import numpy as np

from privest.accounting.base import ApproxDP
from privest.accounting.gaussian import (
    Convention,
    c_delta,
    gaussian_delta,
    gaussian_sigma,
    require_gaussian_dp,
)
from privest.rng import resolve_rng
from privest.validation import check_epsilon, check_positive, check_probability

__all__ = ["GaussianMechanism", "c_delta", "gaussian_delta", "gaussian_sigma"]


class GaussianMechanism:
    """Release ``value + N(0, sigma^2 I)`` with sigma calibrated to a global L2 sensitivity.

    Parameters are public: ``sensitivity`` must bound ||f(X) - f(X')|| over all neighbours
    (for a projected estimator, the diameter of the range). Raises
    :class:`PrivacyParameterError` if the calibrated sigma does not meet (eps, delta) by the
    exact hockey-stick divergence (possible for the classical calibration at large eps).
    """

    def __init__(
        self,
        sensitivity: float,
        epsilon: float,
        delta: float,
        convention: Convention = "dwork_roth",
    ):
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_probability(delta, "delta")
        self.sigma = gaussian_sigma(self.sensitivity, self.epsilon, self.delta, convention)
        require_gaussian_dp(
            self.epsilon,
            self.delta,
            self.sensitivity,
            self.sigma,
            f"epsilon: {self.epsilon} is too large for the {convention} Gaussian calibration: "
            f"sigma={self.sigma:.4g}",
            "use a smaller epsilon",
        )
        self.guarantee = ApproxDP(self.epsilon, self.delta)

    def release(self, value: np.ndarray | float, rng: np.random.Generator | int | None = None):
        """Return ``value`` plus iid N(0, sigma^2) noise in every coordinate."""
        v = np.asarray(value, dtype=float)
        return v + self.sigma * resolve_rng(rng).standard_normal(v.shape)

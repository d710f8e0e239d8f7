"""Gaussian mechanism calibration and local-DP guarantees (paper 004, Sec. 3 and App. B).

One calibration entry point, :func:`gaussian_sigma` ``(epsilon, delta, sensitivity,
calibration)``, used by the whole library (the Gaussian mechanism, ePTR, the release of
paper 004):

* ``"classic"``: sigma = Delta sqrt(2 log(1.25/delta)) / epsilon (Dwork and Roth 2014,
  Thm A.1), the calibration of papers 001 and 004 (paper 004: sigma^2 = 8 log(1.25/delta)
  R^2 / eps_x^2 with Delta = 2R). Proven for epsilon <= 1 only, so every caller checks it
  against the exact profile (:func:`require_gaussian_dp`).
* ``"analytic"``: the smallest sigma whose exact profile delta(eps) (Balle and Wang 2018,
  Thm 8) is <= delta, valid for every epsilon.
* ``"paper_eq3"``: (2/eps) sqrt(ln(1.25/delta)) Delta, paper 001's eq. 3 (sqrt 2 times the
  classic one; kept for the reproductions).

:func:`gaussian_delta` is the exact profile.
* :class:`GaussianRRGuarantee`: the exact profile of the release of paper 004 (Gaussian
  noise on the features, randomized response on the label), and :class:`LocalDP`, the
  (epsilon, delta)-LDP label it advertises.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from privest.accounting.base import ApproxDP, Guarantee
from privest.accounting.profiles import discrete_gaussian_delta, gaussian_delta
from privest.errors import PrivacyParameterError, ValidationError
from privest.validation import check_delta, check_epsilon, check_positive, check_probability

__all__ = [
    "CALIBRATIONS",
    "Calibration",
    "GaussianRRGuarantee",
    "LocalDP",
    "LatticeGaussianGuarantee",
    "c_delta",
    "discrete_gaussian_delta",
    "gaussian_delta",
    "gaussian_sigma",
    "require_gaussian_dp",
]

Calibration = Literal["classic", "analytic", "paper_eq3"]
CALIBRATIONS: tuple[str, ...] = ("classic", "analytic", "paper_eq3")


def c_delta(delta: float) -> float:
    """c_delta = sqrt(2 ln(1.25/delta)) (Dwork and Roth 2014, Thm A.1); 3.107511 at 0.01."""
    delta = check_probability(delta, "delta")
    return math.sqrt(2.0 * math.log(1.25 / delta))


def gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, calibration: Calibration = "classic"
) -> float:
    """Noise sd of the Gaussian mechanism for L2 ``sensitivity`` at (epsilon, delta).

    ``calibration`` is ``"classic"``, ``"analytic"`` or ``"paper_eq3"`` (module docstring).
    ``delta`` must be in (0, 1).
    """
    from scipy import optimize

    eps = check_epsilon(epsilon)
    dlt = check_delta(delta, allow_zero=False)
    sens = check_positive(sensitivity, "sensitivity")
    if calibration == "classic":
        return sens * c_delta(dlt) / eps
    if calibration == "analytic":
        f = lambda log_s: gaussian_delta(eps, sens, math.exp(log_s)) - dlt  # noqa: E731
        lo, hi = math.log(sens) - 10.0, math.log(sens * c_delta(dlt) / eps) + 5.0
        return math.exp(optimize.brentq(f, lo, hi, xtol=1e-12)) * (1 + 1e-9)
    if calibration == "paper_eq3":
        return 2.0 / eps * math.sqrt(math.log(1.25 / dlt)) * sens
    raise ValidationError(
        f"calibration: {calibration!r} is not accepted; use one of {', '.join(CALIBRATIONS)}"
    )


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
        from scipy import special

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

    def event(self, epsilon: float | None = None) -> Any:
        """The Gaussian part (mu = sensitivity/sigma) composed with randomized response
        (pure eps_y-DP): the profile of :meth:`delta` is exactly that composition. At
        ``epsilon``, basic composition charges the Gaussian part at ``epsilon - eps_y``."""
        from privest.accounting.events import ComposedEvent, GaussianEvent, PureDPEvent

        mu = self.sensitivity / self.sigma
        if math.isinf(self.epsilon_y):
            return GaussianEvent(mu, epsilon)
        at = None
        if epsilon is not None:
            at = check_epsilon(epsilon) - self.epsilon_y
            if at <= 0:
                raise PrivacyParameterError(
                    f"epsilon: {epsilon!r} must exceed the label's epsilon_y={self.epsilon_y:g}"
                )
        return ComposedEvent((GaussianEvent(mu, at), PureDPEvent(self.epsilon_y)))


class LatticeGaussianGuarantee(Guarantee):
    """The guarantee of discrete Gaussian noise on a lattice (see ``mechanisms.lattice``).

    In grid units: variance ``sigma2``, and the largest change of the released integer
    vector between neighbours, ``shift`` (an integer for one coordinate; an L2 bound for
    ``dims`` > 1). One coordinate: the exact profile (:func:`discrete_gaussian_delta`).
    Several: rho-zCDP with rho = shift^2 / (2 sigma2) and its tight conversion
    (:mod:`privest.accounting.zcdp`), a valid upper bound on the exact profile.
    """

    def __init__(self, sigma2: float, shift: float, dims: int = 1):
        self.sigma2 = check_positive(sigma2, "sigma2")
        self.shift = float(shift)
        self.dims = int(dims)
        self.zcdp_rho = self.shift**2 / (2.0 * self.sigma2)
        kind = "exact" if self.dims == 1 else "zCDP bound"
        self.label = (
            f"discrete Gaussian (shift/sigma = {self.shift / math.sqrt(self.sigma2):.4g}, "
            f"{self.dims} dim, {kind})"
        )

    def delta(self, epsilon: float | np.ndarray) -> float | np.ndarray:
        from privest.accounting.profiles import zcdp_delta

        if self.dims == 1:
            fn = lambda e: discrete_gaussian_delta(e, int(self.shift), self.sigma2)  # noqa: E731
        else:
            fn = lambda e: zcdp_delta(self.zcdp_rho, e)  # noqa: E731
        e = np.asarray(epsilon, dtype=float)
        out = np.vectorize(fn, otypes=[float])(e)
        return float(out) if out.ndim == 0 else out

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "sigma2": self.sigma2,
            "shift": self.shift,
            "dims": self.dims,
            "zcdp_rho": self.zcdp_rho,
        }

    def event(self, epsilon: float | None = None) -> Any:
        """One coordinate: the exact discrete Gaussian; several: rho-zCDP (class docstring)."""
        from privest.accounting.events import DiscreteGaussianEvent, ZCDPEvent

        if self.dims == 1:
            return DiscreteGaussianEvent(self.sigma2, int(self.shift), epsilon)
        return ZCDPEvent(self.zcdp_rho, epsilon)

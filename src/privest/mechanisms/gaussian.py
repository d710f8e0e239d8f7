"""Gaussian mechanism with global L2 sensitivity (paper 001, eq. 3; baseline B0 of paper 001).

``value + noise`` with the noise of :class:`~privest.mechanisms.samplers.lattice.LatticeGaussian`:
discrete Gaussian on a public power-of-two grid, sampled exactly, so no output betrays the
low-order bits of ``value`` (docs/randomness.md). ``calibration`` (``"analytic"`` by
default, ``"classic"``, ``"paper_eq3"``) sets the continuous sigma the grid is built
around; the guarantee is then checked on the lattice itself: the exact profile for one
coordinate (Canonne, Kamath and Steinke 2020, Thm. 7), the zCDP bound for several.
:func:`gaussian_delta` is the exact profile of the continuous mechanism (Balle and Wang
2018, Thm 8), used to check the continuous calibrations.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from privest.accounting.gaussian import (
    Calibration,
    LatticeGaussianGuarantee,
    c_delta,
    gaussian_delta,
    gaussian_sigma,
    require_gaussian_dp,
)
from privest.contract import Mechanism
from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.samplers.lattice import lattice_gaussian
from privest.released import PrivateValue
from privest.rng import resolve_rng, rng_kind
from privest.validation import as_finite_array, check_delta, check_epsilon, check_positive

__all__ = ["GaussianMechanism", "c_delta", "gaussian_delta", "gaussian_sigma"]


class GaussianMechanism(Mechanism):
    """Release ``value + noise`` with Gaussian noise calibrated to a global L2 sensitivity.

    Parameters are public: ``sensitivity`` must bound ||f(X) - f(X')|| over all neighbours
    (for a projected estimator, the diameter of the range); ``dims`` is the length of the
    released vector (public; one coordinate gets the exact accounting). ``calibration``
    ``"classic"`` or ``"paper_eq3"`` raise :class:`PrivacyParameterError` where their
    continuous sigma is not (eps, delta)-DP by the exact hockey-stick divergence.
    ``.guarantee`` is the lattice's exact guarantee: its delta at ``epsilon`` is at most
    ``delta``.

    ``domain`` (a :class:`~privest.domain.Domain`, docs/domain.md) states the neighbour
    relation under which ``sensitivity`` holds: swap (the default) or add/remove, of a record
    or of a person; the caller computes the sensitivity for that relation, and the guarantee's
    label names it (``Domain.relation``). This mechanism reads no bounds or resolution (its
    only public fact about the data is ``sensitivity``), so a domain that gives them is
    refused rather than ignored.
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        sensitivity: float,
        calibration: Calibration = "analytic",
        dims: int = 1,
        *,
        domain: Domain | None = None,
    ):
        self.domain = Domain.of(domain).without(
            "the Gaussian mechanism (its public fact is sensitivity)", "bounds", "resolution"
        )
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta, allow_zero=False)
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.calibration = calibration
        continuous = gaussian_sigma(self.epsilon, self.delta, self.sensitivity, calibration)
        require_gaussian_dp(
            self.epsilon,
            self.delta,
            self.sensitivity,
            continuous,
            f"epsilon: {self.epsilon} is too large for the {calibration} Gaussian calibration: "
            f"sigma={continuous:.4g}",
            "use calibration='analytic' or a smaller epsilon",
        )
        if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or dims < 1:
            raise ValidationError(f"dims: {dims!r} must be a positive integer")
        self.dims = int(dims)
        self._noise = lattice_gaussian(
            self.epsilon, self.delta, self.sensitivity, self.dims, calibration
        )
        self.sigma = self._noise.sigma
        # the (cached, shared) lattice's guarantee, stated for the domain's relation
        self._guarantee = copy.copy(self._noise.guarantee)
        self._guarantee.label = f"{self._guarantee.label} ({self.domain.relation})"

    @property
    def guarantee(self) -> LatticeGaussianGuarantee:
        """The exact guarantee of the lattice noise (delta(epsilon) <= ``delta``), under the
        domain's neighbour relation (named in its label)."""
        return self._guarantee

    def release(
        self,
        value: Any,
        rng: np.random.Generator | int | None = None,
        *,
        budget: Any = None,
        label: str = "gaussian",
    ) -> PrivateValue:
        """``value`` (the exact query answer f(X), ``dims`` numbers) plus the noise.

        ``budget`` is charged (epsilon, delta) and the zCDP rho of the discrete Gaussian
        before ``value`` is read.
        """
        from privest.accounting.budget import charge

        charge(
            budget,
            self.guarantee,
            label=label,
            mechanism="gaussian",
            epsilon=self.epsilon,
            delta=self.delta,
        )
        gen = resolve_rng(rng)
        v = as_finite_array(value, "value")
        if v.size != self.dims:
            raise ValidationError(
                f"value: has {v.size} entries; the mechanism has dims={self.dims}"
            )
        noisy = self._noise.release(v, gen)
        return PrivateValue(noisy, self.guarantee, "gaussian", rng_kind(gen))

    def __repr__(self) -> str:
        return (
            f"GaussianMechanism(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"sensitivity={self.sensitivity:g}, calibration={self.calibration!r}, "
            f"dims={self.dims}, neighbours={self.domain.neighbours!r})"
        )

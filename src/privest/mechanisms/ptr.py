"""Classical Propose-Test-Release (paper 001, Section 2, Algorithm 1; Dwork and Lei 2009).

The user supplies D_alpha(X), the Hamming distance from X to the set of datasets whose local
sensitivity exceeds alpha (usually intractable; ePTR replaces it by a safety lower bound). The
test passes with probability

    q(X) = (delta/2) exp(eps D/2)            if ln(1/delta) > eps D / 2,
    q(X) = 1 - exp(-eps D/2) / (2 delta)     otherwise,

which is "D + Laplace(2/eps) > (2/eps) ln(1/delta)"; on a pass it outputs
theta_hat + noise_multiplier (alpha/eps) c_delta zeta.

Budget caveat (docs/eptr.md, "Notes, errata and choices"): the test spends eps/2 (pure)
and the Gaussian step at multiplier 1 spends (eps, delta), so Algorithm 1 as printed is
(1.5 eps, 1.5 delta)-DP by basic composition, not (eps, delta). ``noise_multiplier=2`` puts
the Gaussian step at (eps/2, delta), matching
ePTR's budget: (eps, 1.5 delta)-DP. ``guarantee`` reports the composed budget honestly.

The classical calibration sigma = alpha c_delta / eps' of the Gaussian step (eps' = eps /
noise_multiplier) is proven for eps' <= 1 only, so the constructor checks it with the exact
hockey-stick divergence (Balle and Wang 2018, Thm 8), as ePTR and the Gaussian mechanism do,
and refuses an (eps, noise_multiplier) whose composed guarantee would not hold. The released
estimate gets its Gaussian noise on the float-safe lattice of
:mod:`privest.mechanisms.samplers.lattice` (the test only releases one bit, pass or fail, so its
continuous Laplace draw leaks no low-order bits).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from privest.accounting.base import ApproxDP
from privest.accounting.gaussian import require_gaussian_dp
from privest.contract import Mechanism
from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.eptr import Bottom, EPTRRelease, eptr_domain, resolve_bottom
from privest.mechanisms.gaussian import c_delta
from privest.mechanisms.samplers.lattice import lattice_gaussian
from privest.rng import resolve_rng
from privest.validation import check_epsilon, check_positive, check_probability

__all__ = ["ClassicPTR", "classic_ptr_probability"]


def classic_ptr_probability(distance: float | np.ndarray, epsilon: float, delta: float) -> Any:
    """Pass probability of Algorithm 1 at D_alpha(X) = ``distance`` (vectorised)."""
    d = np.asarray(distance, dtype=float)
    x = epsilon * d / 2.0
    low = math.log(1.0 / delta) > x
    with np.errstate(over="ignore"):
        out = np.where(
            low,
            delta / 2.0 * np.exp(np.minimum(x, math.log(1.0 / delta))),
            1.0 - np.exp(-x) / (2.0 * delta),
        )
    return out


class ClassicPTR(Mechanism):
    """Algorithm 1 of paper 001 for comparison with :class:`~privest.mechanisms.eptr.EPTR`.

    ``distance_to_unsafe(data)`` must return D_alpha(X) exactly (an integer >= 0, 0 when X
    itself is unsafe). ``noise_multiplier`` 1 reproduces the paper (1.5 eps in total), 2
    matches the ePTR budget; ``guarantee`` is the composed (eps/2 + eps/multiplier, 1.5 delta).
    Raises :class:`PrivacyParameterError` when the Gaussian step is not (eps/multiplier,
    delta)-DP by its exact delta (e.g. eps = 8 at multiplier 1, or eps = 20 at 2; delta = 0.01).

    ``domain`` (a :class:`~privest.domain.Domain`) states the neighbour relation: swap only,
    as for :class:`~privest.mechanisms.eptr.EPTR` (D_alpha counts replaced records); a domain
    with add/remove neighbours, a person unit, bounds or a resolution is refused.
    """

    def __init__(
        self,
        estimator: Callable[[Any], Any],
        distance_to_unsafe: Callable[[Any], float],
        local_sensitivity: float,
        epsilon: float,
        delta: float,
        bottom: Bottom = None,
        noise_multiplier: float = 2.0,
        *,
        domain: Domain | None = None,
    ):
        self.domain = eptr_domain(domain, "classic PTR", "bounds", "resolution")
        self.estimator = estimator
        self.distance_to_unsafe = distance_to_unsafe
        self.alpha = check_positive(local_sensitivity, "local_sensitivity")
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_probability(delta, "delta")
        self.noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
        self._bottom = resolve_bottom(bottom, None)
        self.noise_scale = self.noise_multiplier * self.alpha * c_delta(self.delta) / self.epsilon
        require_gaussian_dp(
            self.epsilon / self.noise_multiplier,
            self.delta,
            self.alpha,
            self.noise_scale,
            f"epsilon: {self.epsilon} is too large for classic PTR with noise_multiplier="
            f"{self.noise_multiplier:g}: its Gaussian step",
            "use a smaller epsilon or a larger noise_multiplier",
        )
        total_eps = self.epsilon / 2.0 + self.epsilon / self.noise_multiplier
        self._guarantee = ApproxDP(total_eps, min(1.5 * self.delta, 0.999999))

    @property
    def guarantee(self) -> ApproxDP:
        """The (epsilon, delta) guarantee of one release, known before any data."""
        return self._guarantee

    def pass_probability(self, data: Any) -> float:
        """NON-PRIVATE: the pass probability at ``data``. Never publish it."""
        d = float(self.distance_to_unsafe(data))
        if not d >= 0:
            raise ValidationError(f"distance_to_unsafe: returned {d!r}; must be >= 0")
        return float(classic_ptr_probability(d, self.epsilon, self.delta))

    def release(
        self,
        data: Any,
        rng: np.random.Generator | int | None = None,
        *,
        budget: Any = None,
        label: str = "classic PTR",
    ) -> EPTRRelease:
        """Run Algorithm 1 once (threshold form: D + Lap(2/eps) > (2/eps) ln(1/delta));
        ``budget`` is charged the composed guarantee before ``data`` is read."""
        from privest.accounting.budget import charge

        charge(budget, self.guarantee, label=label, mechanism="classic_ptr")
        gen = resolve_rng(rng)
        d = float(self.distance_to_unsafe(data))
        if not d >= 0:
            raise ValidationError(f"distance_to_unsafe: returned {d!r}; must be >= 0")
        passed = d + gen.laplace(0.0, 2.0 / self.epsilon) > 2.0 / self.epsilon * math.log(
            1.0 / self.delta
        )
        if not passed:
            return EPTRRelease(False, None, self._bottom(gen), self.guarantee)
        theta = np.atleast_1d(np.asarray(self.estimator(data), dtype=float))
        step = lattice_gaussian(
            self.epsilon / self.noise_multiplier, self.delta, self.alpha, theta.size, "classic"
        )
        value = step.release(theta, gen)
        return EPTRRelease(True, value, value, self.guarantee)

"""Efficient Propose-Test-Release, the generic adapter (paper 001, Section 2, Algorithm 2).

Given an estimator theta_hat with values in R^p, a public local-sensitivity level alpha and an
alpha-safety lower bound gamma (Definition 2.1: (L) |gamma(X) - gamma(X')| <= 1 for neighbours,
(S) gamma(X) > 0 implies Delta_theta_hat(X) <= alpha), ePTR

1. sets M = 1 + (2/eps) ln(max(1/delta, 1/eps)),
2. releases with probability q(X) = expit(eps (gamma(X) - M)/2),
3. and then outputs theta_hat(X) + sigma zeta, sigma = 2 alpha c_delta / eps, zeta ~ N(0, I_p);
4. otherwise it outputs the data-independent ``bottom`` (Remark 1).

Theorem 2.2: this is (eps, delta)-DP with no model assumption, provided gamma really is an
alpha-SaLBo computed on the same (record-wise, publicly) preprocessed data as theta_hat, and
alpha, eps, delta, p and bottom are fixed before seeing the data.

:func:`eptr_pair_divergence` is the exact hockey-stick divergence of the mixed output (the
no-release atom plus a Gaussian) on a concrete neighbouring pair; the tests use it to check
Theorem 2.2 end to end.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privest.accounting.base import ApproxDP
from privest.accounting.gaussian import require_gaussian_dp
from privest.contract import Mechanism
from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.gaussian import c_delta
from privest.mechanisms.samplers.lattice import LatticeGaussian, lattice_gaussian
from privest.projection import project_rows
from privest.rng import resolve_rng
from privest.validation import check_epsilon, check_positive, check_probability

__all__ = [
    "EPTR",
    "Bottom",
    "EPTRRelease",
    "check_eptr_parameters",
    "eptr_domain",
    "eptr_coin",
    "eptr_noise",
    "eptr_noise_scale",
    "eptr_pair_divergence",
    "eptr_step",
    "project_rows",
    "ptr_threshold",
    "release_probability",
    "resolve_bottom",
]

#: A no-release output: ``None``, a fixed public point, or a sampler ``f(rng) -> point``.
Bottom = None | float | np.ndarray | Callable[[np.random.Generator], Any]


def ptr_threshold(epsilon: float, delta: float) -> float:
    """M = 1 + (2/eps) ln(max(1/delta, 1/eps)) (Algorithm 2, step 1)."""
    eps = check_epsilon(epsilon)
    dlt = check_probability(delta, "delta")
    return 1.0 + 2.0 / eps * math.log(max(1.0 / dlt, 1.0 / eps))


def release_probability(gamma: float | np.ndarray, epsilon: float, delta: float) -> Any:
    """q(X) = expit(eps (gamma - M) / 2) (Algorithm 2, step 2); vectorised over ``gamma``."""
    from scipy.special import expit

    m = ptr_threshold(epsilon, delta)
    return expit(epsilon * (np.asarray(gamma, dtype=float) - m) / 2.0)


def eptr_noise_scale(
    alpha: float, epsilon: float, delta: float, dim: int = 1, calibration: str = "classic"
) -> float:
    """The sd of the Gaussian step at budget (eps/2, delta) on the float-safe lattice
    (docs/randomness.md). ``"classic"`` (the paper): 2 alpha c_delta / eps, grown only if the
    lattice's exact (one coordinate) or zCDP (``dim`` > 1) accounting needs it; ``"analytic"``:
    the least sigma the analytic Gaussian mechanism (Balle and Wang 2018, Thm 8) and the
    lattice's accounting allow at (eps/2, delta). Either is an (eps/2, delta)-DP Gaussian
    step, which is all step (b) of the proof of Theorem 2.2 uses: on a set E of released
    values, q P(E) <= q (e^{eps/2} P'(E) + delta) <= e^eps q' P'(E) + delta."""
    check_positive(alpha, "alpha")
    return _eptr_gaussian(alpha, check_epsilon(epsilon), delta, dim, calibration).sigma


def _eptr_gaussian(
    alpha: float, epsilon: float, delta: float, dim: int, calibration: str = "classic"
) -> LatticeGaussian:
    """The Gaussian step of Algorithm 2 at (eps/2, delta) with L2 sensitivity alpha."""
    if calibration not in ("classic", "analytic"):
        raise ValidationError(
            f"calibration: {calibration!r} is not accepted; use 'classic' or 'analytic'"
        )
    return lattice_gaussian(epsilon / 2.0, delta, alpha, dim, calibration)


def check_eptr_parameters(
    epsilon: float, delta: float, calibration: str = "classic"
) -> tuple[float, float]:
    """Validate (eps, delta) and that the Gaussian step at eps/2 really is (eps/2, delta)-DP.

    The classical calibration is proven for eps/2 <= 1 only; the exact hockey-stick
    divergence shows it holds up to eps/2 ~ 6.77 at delta = 0.01 (docs/eptr.md, "Notes,
    errata and choices"). Beyond that the
    release would not meet its guarantee, so this raises :class:`PrivacyParameterError`.
    The analytic calibration meets (eps/2, delta) at every eps by construction.
    """
    eps = check_epsilon(epsilon)
    dlt = check_probability(delta, "delta")
    if calibration == "analytic":
        return eps, dlt
    require_gaussian_dp(
        eps / 2.0,
        dlt,
        1.0,
        2.0 * c_delta(dlt) / eps,  # alpha = 1 (the check is scale-free)
        f"epsilon: {eps} is too large for ePTR: its Gaussian step at eps/2",
        "use a smaller epsilon",
    )
    return eps, dlt


def eptr_domain(domain: Domain | None, who: str, *unused: str, **facts: Any) -> Domain:
    """The domain of a paper-001 mechanism or model ``who`` (:meth:`Domain.of` with the
    keyword ``facts``): swap neighbours only (the paper's neighbours replace one record,
    Section 1.3; an alpha-SaLBo moves by at most 1 under that change, Definition 2.1),
    without the facts in ``unused`` it does not read."""
    return (
        Domain.of(domain, **facts)
        .without(who, *unused)
        .swap_only(who, "paper 001's guarantee (Theorem 2.2) is for one record replaced")
    )


def resolve_bottom(bottom: Bottom, dim: int | None) -> Callable[[np.random.Generator], Any]:
    """A sampler for the no-release output; a fixed point is checked against ``dim``."""
    if bottom is None:
        return lambda rng: None
    if callable(bottom):
        return bottom
    point = np.atleast_1d(np.asarray(bottom, dtype=float))
    if point.ndim != 1 or not np.all(np.isfinite(point)):
        raise ValidationError(f"bottom: {bottom!r} must be None, a finite point or a sampler")
    if dim is not None and point.size not in (1, dim):
        raise ValidationError(f"bottom: has {point.size} coordinates; the estimate has {dim}")
    if dim is not None and point.size == 1:
        point = np.full(dim, point[0])
    return lambda rng: point.copy()


def eptr_coin(gamma: float, epsilon: float, delta: float, rng: np.random.Generator) -> bool:
    """Steps 2-3 of Algorithm 2: I ~ Bernoulli(q(gamma)), drawn as U < q with one uniform."""
    return bool(rng.random() < float(release_probability(gamma, epsilon, delta)))


def eptr_noise(
    theta_hat: Any,
    alpha: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    dim: int | None = None,
    calibration: str = "classic",
) -> np.ndarray:
    """Step 4 of Algorithm 2: theta_hat + sigma zeta on the float-safe lattice
    (:func:`eptr_noise_scale`, with its ``calibration``).

    ``dim`` is the public output dimension p; when given, theta_hat must have shape (p,).
    """
    theta = np.asarray(theta_hat, dtype=float)
    if dim is not None and theta.shape != (dim,):
        raise ValidationError(f"theta_hat: has shape {theta.shape}; expected ({dim},)")
    return _eptr_gaussian(alpha, epsilon, delta, theta.size, calibration).release(theta, rng)


def eptr_step(
    theta_hat: np.ndarray | Callable[[], Any],
    gamma: float,
    alpha: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    dim: int | None = None,
    calibration: str = "classic",
) -> tuple[bool, np.ndarray | None]:
    """Steps 2-5 of Algorithm 2 on (theta_hat, gamma): ``(released, value)``.

    The coin is flipped first (:func:`eptr_coin`); ``value`` is ``theta_hat + sigma zeta``
    when released (:func:`eptr_noise`, shape checked against the public ``dim``), else
    ``None``. ``theta_hat`` may be a zero-argument callable, then evaluated only on release.
    """
    if not eptr_coin(gamma, epsilon, delta, rng):
        return False, None
    theta = theta_hat() if callable(theta_hat) else theta_hat
    return True, eptr_noise(theta, alpha, epsilon, delta, rng, dim, calibration)


def eptr_pair_divergence(
    gamma: float,
    gamma_prime: float,
    distance: float,
    alpha: float,
    epsilon: float,
    delta: float,
    noise_scale: float | None = None,
) -> float:
    """Exact hockey-stick divergence H_{e^eps}(ePTR(X) || ePTR(X')) (of Algorithm 2's output).

    With q, q' the release probabilities, D = ||theta_hat(X) - theta_hat(X')||, s the noise sd
    and e* = eps + ln(q'/q):
    H = max(0, (1-q) - e^eps (1-q')) + q [Phi(D/(2s) - e* s/D) - e^{e*} Phi(-D/(2s) - e* s/D)].
    ePTR is (eps, delta)-DP on this pair iff H <= delta in both directions. ``noise_scale``
    overrides sigma (used by negative controls).
    """
    from scipy.special import expit, log_expit, log_ndtr, ndtr

    m = ptr_threshold(epsilon, delta)
    lq = float(log_expit(epsilon * (gamma - m) / 2.0))
    lqp = float(log_expit(epsilon * (gamma_prime - m) / 2.0))
    q, qp = math.exp(lq), math.exp(lqp)
    not_q = float(expit(-epsilon * (gamma - m) / 2.0))
    not_qp = float(expit(-epsilon * (gamma_prime - m) / 2.0))
    atom = max(0.0, not_q - math.exp(epsilon) * not_qp)
    s = eptr_noise_scale(alpha, epsilon, delta) if noise_scale is None else noise_scale
    e_star = epsilon + lqp - lq
    if distance <= 0:
        gauss = max(0.0, q - math.exp(epsilon) * qp)
    else:
        a, b = distance / (2.0 * s), e_star * s / distance
        gauss = q * float(ndtr(a - b)) - math.exp(lq + e_star + float(log_ndtr(-a - b)))
        gauss = max(0.0, gauss)
    return atom + gauss


@dataclass(frozen=True)
class EPTRRelease:
    """The public result of one ePTR run.

    ``released`` says whether the test passed; ``value`` is the noised estimate (``None`` when
    nothing was released); ``output`` is ``value`` or the data-independent bottom drawn for
    this run. It carries the guarantee and never any data-dependent diagnostic.
    """

    released: bool
    value: np.ndarray | None
    output: Any
    guarantee: ApproxDP

    def summary(self) -> str:
        if self.released:
            return f"released {np.array2string(self.value, precision=4)} under {self.guarantee}"
        return f"nothing released (bottom output {self.output!r}) under {self.guarantee}"


class EPTR(Mechanism):
    """Algorithm 2 of paper 001 around any estimator and alpha-safety lower bound.

    Parameters
    ----------
    estimator : callable ``data -> array_like`` of ``dim`` values (theta_hat).
    safety_lower_bound : callable ``data -> float >= 0``, an alpha-SaLBo of the estimator
        (Definition 2.1). Its validity is the caller's responsibility; see the tests of the
        built-in models for how to check (L) and (S) by brute force.
    local_sensitivity : alpha > 0, public (may depend on public n, p and bounds only).
    epsilon, delta : the target (eps, delta); delta in (0, 1).
    bottom : the no-release output (Remark 1): ``None`` (default), a fixed public point, or a
        sampler ``f(rng)`` of a fixed distribution. It must not depend on the data.
    dim : the output dimension p, fixed in advance (Theorem 2.2 needs p public); a released
        estimate of another shape raises. With ``dim=None`` nothing checks it, so an estimator
        whose output length varies with the data would reveal that length: pass ``dim``.
    domain : a :class:`~privest.domain.Domain` (docs/domain.md) stating the neighbour
        relation: swap only (Theorem 2.2 replaces one record, n public), so add/remove or a
        person unit is refused; bounds are the estimator's business, so a domain giving
        them is refused too.

    Order of :meth:`release`: gamma(X), then the coin, then theta_hat(X) only if the coin says
    release. A non-finite theta_hat at gamma(X) = 0 gives the no-release output (see
    :meth:`release`); at gamma(X) > 0 it means the SaLBo is invalid and raises.
    """

    def __init__(
        self,
        estimator: Callable[[Any], Any],
        safety_lower_bound: Callable[[Any], float],
        local_sensitivity: float,
        epsilon: float,
        delta: float,
        bottom: Bottom = None,
        dim: int | None = None,
        *,
        domain: Domain | None = None,
    ):
        self.domain = eptr_domain(domain, "ePTR", "bounds", "resolution")
        if not callable(estimator) or not callable(safety_lower_bound):
            raise ValidationError("estimator and safety_lower_bound must be callables of the data")
        self.estimator = estimator
        self.safety_lower_bound = safety_lower_bound
        self.alpha = check_positive(local_sensitivity, "local_sensitivity")
        self.epsilon, self.delta = check_eptr_parameters(epsilon, delta)
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ValidationError(f"dim: {dim!r} must be a positive integer")
        self.dim = dim
        self._bottom = resolve_bottom(bottom, dim)
        self.threshold = ptr_threshold(self.epsilon, self.delta)
        self.noise_scale = eptr_noise_scale(self.alpha, self.epsilon, self.delta, dim or 1)
        self._guarantee = ApproxDP(self.epsilon, self.delta)

    @property
    def guarantee(self) -> ApproxDP:
        """The (epsilon, delta) guarantee of one release, known before any data."""
        return self._guarantee

    def _raw_estimate(self, data: Any) -> np.ndarray:
        theta = np.atleast_1d(np.asarray(self.estimator(data), dtype=float))
        if theta.ndim != 1 or (self.dim is not None and theta.size != self.dim):
            raise ValidationError(
                f"estimator: returned shape {theta.shape}; expected ({self.dim or 'p'},)"
            )
        return theta

    def _estimate(self, data: Any) -> np.ndarray:
        theta = self._raw_estimate(data)
        if not np.all(np.isfinite(theta)):
            raise ValidationError("estimator: returned NaN or inf; it must be finite everywhere")
        return theta

    def _gamma(self, data: Any) -> float:
        g = float(self.safety_lower_bound(data))
        if not (g >= 0) or math.isinf(g):
            raise ValidationError(f"safety_lower_bound: returned {g!r}; must be finite and >= 0")
        return g

    def _no_release(self, gen: np.random.Generator) -> EPTRRelease:
        return EPTRRelease(False, None, self._bottom(gen), self.guarantee)

    def release(
        self,
        data: Any,
        rng: np.random.Generator | int | None = None,
        *,
        budget: Any = None,
        label: str = "ePTR",
    ) -> EPTRRelease:
        """Run Algorithm 2 once. ``rng=None`` uses secure randomness; ``budget`` is charged
        (epsilon, delta) before ``data`` is read.

        theta_hat is computed only after the coin says release. If it is then NaN or inf:

        * at gamma(X) = 0 the output is the no-release bottom. This is still (eps, delta)-DP:
          it only removes the release of probability q(0) on X, and every neighbour X' has
          gamma(X') <= 1, so q(X') <= q(0) e^{eps/2} <= delta (Algorithm 2's M): the bottom
          atom satisfies 1 <= e^eps (1 - q(X')) + delta, and a neighbour's release event has
          probability <= delta.
        * at gamma(X) > 0 the SaLBo claims theta_hat is alpha-stable at X, which a non-finite
          value cannot be: the caller's SaLBo or estimator is wrong, so this raises
          :class:`ValidationError` rather than release.
        """
        from privest.accounting.budget import charge

        charge(budget, self.guarantee, label=label, mechanism="eptr")
        gen = resolve_rng(rng)
        gamma = self._gamma(data)
        if not eptr_coin(gamma, self.epsilon, self.delta, gen):
            return self._no_release(gen)
        theta = self._raw_estimate(data)
        if not np.all(np.isfinite(theta)):
            if gamma == 0.0:
                return self._no_release(gen)
            raise ValidationError(
                "estimator: returned NaN or inf where safety_lower_bound is > 0; an "
                "alpha-SaLBo must be 0 wherever the estimator is not finite (Definition 2.1)"
            )
        value = eptr_noise(theta, self.alpha, self.epsilon, self.delta, gen, self.dim)
        return EPTRRelease(True, value, value, self.guarantee)

    def explain(self, data: Any) -> dict[str, Any]:
        """NON-PRIVATE diagnostics for auditing on test data. NEVER publish the result.

        Returns gamma(X), M, the release probability q(X), alpha, the noise sd and the
        unnoised estimate theta_hat(X): every data-dependent entry leaks the data.
        """
        g = self._gamma(data)
        return {
            "gamma": g,
            "M": self.threshold,
            "release_probability": float(release_probability(g, self.epsilon, self.delta)),
            "alpha": self.alpha,
            "noise_scale": self.noise_scale,
            "estimate": self._estimate(data),
        }

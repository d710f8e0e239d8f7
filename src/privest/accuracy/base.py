"""The predicted error of a release, from public inputs (docs/accuracy.md).

An :class:`Accuracy` holds the law of the error ``release - target`` of one released
quantity, before any data are read, and answers the curator's three questions from it:
the noise standard error (the root mean squared error, ``se``), the half-width of an
interval at level ``1 - alpha`` (the ``1 - alpha`` quantile of ``|error|``,
``half_width``), and the probability that the error exceeds a value (``error_sf(a)``).
The law is one of the output laws of :mod:`privest.mechanisms.laws` (every functional
derives from its CDF), so a prediction is exact wherever the law is, and its
``assumption`` says what it rests on otherwise: a reference shape of the data for the
instance-adaptive mechanisms (:class:`ReferenceData`), a stated design for fits.

:func:`solve_public` inverts a prediction: the least (or largest) public parameter whose
predicted half-width meets a target (``epsilon``, ``lam``, ``zero_prob``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from privest.errors import ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.validation import check_probabilities, check_probability

__all__ = [
    "Accuracy",
    "LaplaceSumLaw",
    "MixtureErrorLaw",
    "NormalErrorLaw",
    "ReferenceData",
    "check_alpha",
    "solve_public",
    "worst",
]


def check_alpha(alpha: Any) -> float:
    """The significance level: the interval's level is ``1 - alpha`` (docs/vocabulary.md)."""
    return check_probability(alpha, "alpha")


class NormalErrorLaw(OutputLaw):
    """``error ~ N(bias, sd^2)``: a Gaussian noise, or the asymptotic error of a fit
    (paper 000, Thm 5.3), or a delta-method linearisation."""

    def __init__(self, sd: float, bias: float = 0.0):
        if not (math.isfinite(sd) and sd >= 0 and math.isfinite(bias)):
            raise ValidationError(f"sd: {sd!r} and bias: {bias!r} must be finite, sd >= 0")
        self.sd, self.bias = float(sd), float(bias)
        self.value = 0.0
        self.epsilon = math.nan  # a law of the error, not of a mechanism's output

    def _z(self, y: ArrayLike) -> np.ndarray:
        return (np.asarray(y, dtype=float) - self.bias) / max(self.sd, 1e-300)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        z = self._z(y)
        return -0.5 * z * z - math.log(math.sqrt(2.0 * math.pi) * max(self.sd, 1e-300))

    def cdf(self, y: ArrayLike) -> np.ndarray:
        return special.ndtr(self._z(y))

    def sample(self, size: Any = None, rng: Any = None) -> Any:
        return self.bias + self.sd * np.random.default_rng(rng).standard_normal(size)

    def error_sf(self, alpha: ArrayLike) -> np.ndarray:
        a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
        return special.ndtr(-self._z(a)) + special.ndtr(self._z(-a))

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return 1.0 - self.error_sf(alpha)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        if self.bias != 0.0:
            return super().error_quantile(p)
        q = check_probabilities(p)
        return self.sd * special.ndtri(0.5 + 0.5 * q)

    def error_mse(self) -> float:
        return self.sd**2 + self.bias**2


class LaplaceSumLaw(OutputLaw):
    """``error = L1 + L2``, independent Laplace variables of scales ``s1``, ``s2``: the
    error of a ratio's numerator (a table cell's mean, ``sum - m count``), in closed form.

    ``P(|L1 + L2| > a) = (s1^2 e^(-a/s1) - s2^2 e^(-a/s2)) / (s1^2 - s2^2)`` (and
    ``e^(-a/s) (1 + a/(2 s))`` when ``s1 = s2 = s``), from the convolution of the two
    densities; ``E err^2 = 2 s1^2 + 2 s2^2``.
    """

    def __init__(self, s1: float, s2: float):
        s1, s2 = sorted((float(s1), float(s2)), reverse=True)
        if not (s1 > 0 and s2 >= 0 and math.isfinite(s1)):
            raise ValidationError(f"scales: ({s1!r}, {s2!r}) must be finite, the larger > 0")
        self.s1, self.s2 = s1, s2
        self.value = 0.0
        self.epsilon = math.nan

    def error_sf(self, alpha: ArrayLike) -> np.ndarray:
        a = np.maximum(np.asarray(alpha, dtype=float), 0.0)
        s1, s2 = self.s1, self.s2
        if s2 == 0.0:
            return np.exp(-a / s1)
        if abs(s1 - s2) <= 1e-9 * s1:
            return np.exp(-a / s1) * (1.0 + a / (2.0 * s1))
        return (s1**2 * np.exp(-a / s1) - s2**2 * np.exp(-a / s2)) / (s1**2 - s2**2)

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return 1.0 - self.error_sf(alpha)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        half = 0.5 * self.error_sf(np.abs(y))
        return np.where(y < 0, half, 1.0 - half)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        a = np.abs(np.asarray(y, dtype=float))
        s1, s2 = self.s1, self.s2
        if s2 == 0.0:
            return -a / s1 - math.log(2 * s1)
        if abs(s1 - s2) <= 1e-9 * s1:
            return np.log((1.0 + a / s1) / (4.0 * s1)) - a / s1
        dens = (s1 * np.exp(-a / s1) - s2 * np.exp(-a / s2)) / (2.0 * (s1**2 - s2**2))
        with np.errstate(divide="ignore"):
            return np.log(dens)

    def sample(self, size: Any = None, rng: Any = None) -> Any:
        gen = np.random.default_rng(rng)
        return gen.laplace(0.0, self.s1, size) + gen.laplace(0.0, max(self.s2, 0.0), size)

    def error_mse(self) -> float:
        return 2.0 * self.s1**2 + 2.0 * self.s2**2


class MixtureErrorLaw(OutputLaw):
    """The error law averaged over several data sets: ``P(|err| > a)`` is the mean of the
    laws' (each around its own value), as is ``E err^2``; the quantiles follow from the
    averaged CDF. The law of the error on data drawn at random from a reference shape.
    ``weights`` (default equal) weigh the laws: a law given an event whose chance varies
    over the data sets (an ePTR release, given that its test passes)."""

    def __init__(self, laws: Sequence[OutputLaw], weights: ArrayLike | None = None):
        if not laws:
            raise ValidationError("laws: at least one law is needed")
        self.laws = list(laws)
        w = np.ones(len(self.laws)) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (len(self.laws),) or not (np.all(w >= 0) and w.sum() > 0):
            raise ValidationError("weights: one number >= 0 per law, not all 0")
        self.weights = w / w.sum()
        self.value, self.epsilon = 0.0, float(self.laws[0].epsilon)

    def _mean(self, values: list[Any]) -> np.ndarray:
        return np.tensordot(self.weights, np.asarray(values, dtype=float), axes=1)

    def error_sf(self, alpha: ArrayLike) -> np.ndarray:
        return self._mean([law.error_sf(alpha) for law in self.laws])

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return 1.0 - self.error_sf(alpha)

    def error_mse(self) -> float:
        return float(self._mean([law.error_mse() for law in self.laws]))

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """The root search of the base class, then up to the exact float where the CDF
        reaches p: laws with atoms (a lattice) jump there, and a root search stops just
        below the jump, where P(|err| <= a) < p."""
        q = check_probabilities(p)
        out = np.asarray(super().error_quantile(q), dtype=float).copy()
        flat = out.reshape(-1)
        for i, (a, target) in enumerate(zip(flat, q.reshape(-1), strict=True)):
            if not math.isfinite(a) or float(self.error_cdf(a)) >= target:
                continue
            hi = a * (1 + 1e-9) + 1e-300
            while float(self.error_cdf(hi)) < target:
                hi = 2 * hi - a
            lo = a
            while np.nextafter(lo, math.inf) < hi:
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if float(self.error_cdf(mid)) >= target else (mid, hi)
            flat[i] = hi
        return out

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        logs = [law.logpdf(y + law.value) for law in self.laws]
        with np.errstate(divide="ignore"):
            return special.logsumexp(logs, axis=0, b=self.weights.reshape((-1,) + (1,) * y.ndim))

    def sample(self, size: Any = None, rng: Any = None) -> Any:
        gen = np.random.default_rng(rng)
        law = self.laws[int(gen.choice(len(self.laws), p=self.weights))]
        return np.asarray(law.sample(size, gen)) - law.value


@dataclass(frozen=True)
class ReferenceData:
    """A stated assumption about the data's spread, for the instance-adaptive mechanisms
    (piecewise Laplace, inverse sensitivity, permute-and-flip, ...) whose error depends on
    the data's gaps: the error law is computed exactly (``mech.law(x)``) on ``draws`` data
    sets drawn from this shape with fixed seeds, never on the data, and averaged
    (:class:`MixtureErrorLaw`): the law of the error for data drawn from the shape.

    ``shape="uniform"`` spreads the data over the public bounds; ``"normal"`` is a normal
    with ``mean`` (default the bounds' centre) and ``sd`` (default a sixth of their width),
    clipped to the bounds. Counts take ``share``, the assumed share of records in the set
    (default 0.5). With a lattice ``resolution`` the values are rounded to it (data on the
    lattice, e.g. integer ages, have ties).
    """

    shape: str = "uniform"
    mean: float | None = None
    sd: float | None = None
    share: float = 0.5
    draws: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        if self.shape not in ("uniform", "normal"):
            raise ValidationError(
                f"reference: shape {self.shape!r} is not accepted; use 'uniform' or 'normal'"
            )
        if self.sd is not None and not (math.isfinite(self.sd) and self.sd > 0):
            raise ValidationError(f"reference: sd {self.sd!r} must be finite and > 0")
        if self.mean is not None and not math.isfinite(self.mean):
            raise ValidationError(f"reference: mean {self.mean!r} must be finite")
        if isinstance(self.draws, bool) or not isinstance(self.draws, int) or self.draws < 1:
            raise ValidationError(f"reference: draws {self.draws!r} must be a whole number >= 1")
        check_probability(self.share, "reference share", open_low=False, open_high=False)

    @classmethod
    def of(cls, value: Any) -> ReferenceData:
        """``None`` (uniform), a shape name, a mapping of the fields, or a ReferenceData."""
        if value is None:
            return cls()
        if isinstance(value, ReferenceData):
            return value
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, dict):
            unknown = set(value) - {f for f in cls.__dataclass_fields__}
            if unknown:
                raise ValidationError(
                    f"reference: unknown fields {sorted(unknown)}; accepted: "
                    f"{', '.join(cls.__dataclass_fields__)}"
                )
            return cls(**value)
        raise ValidationError(f"reference: {value!r} is not a shape name or a mapping")

    def samples(
        self, n: int, bounds: tuple[float, float] | None, resolution: float | None = None
    ) -> list[np.ndarray]:
        """The ``draws`` reference data sets of ``n`` records (values, or 0/1 indicators
        with ``share`` ones in expectation for a count, when ``bounds`` is None)."""
        out = []
        for k in range(self.draws):
            rng = np.random.default_rng([self.seed, k])
            if bounds is None:
                out.append((rng.random(n) < self.share).astype(float))
                continue
            lo, hi = bounds
            if self.shape == "uniform":
                x = rng.uniform(lo, hi, n)
            else:
                mean = (lo + hi) / 2.0 if self.mean is None else self.mean
                sd = (hi - lo) / 6.0 if self.sd is None else self.sd
                x = np.clip(rng.normal(mean, sd, n), lo, hi)
            if resolution is not None:
                x = np.clip(np.round(x / resolution) * resolution, lo, hi)
            out.append(x)
        return out

    def spread(self, bounds: tuple[float, float]) -> str:
        """The shape on ``bounds`` in words ("uniformly over [0, 1]")."""
        lo, hi = bounds
        if self.shape == "uniform":
            return f"uniformly over [{lo:g}, {hi:g}]"
        mean = (lo + hi) / 2.0 if self.mean is None else self.mean
        sd = (hi - lo) / 6.0 if self.sd is None else self.sd
        return f"~ normal(mean {mean:g}, sd {sd:g}) clipped to [{lo:g}, {hi:g}]"

    def describe(self, bounds: tuple[float, float] | None, resolution: float | None) -> str:
        """The assumption in words, for reports."""
        if bounds is None:
            text = f"assumes a share {self.share:g} of the records in the set"
        else:
            text = f"assumes data drawn {self.spread(bounds)}"
        if resolution:
            text += f", on the lattice of step {resolution:g}"
        return text + f" (exact law averaged over {self.draws} such data sets)"


@dataclass(frozen=True)
class Accuracy:
    """The predicted error of one released quantity (module docstring).

    ``quantity`` names it (``"median"``, ``"coef age"``, ``"count per cell"``); ``law`` is
    the law of its error; ``alpha`` the significance level of ``half_width`` (an interval at
    level ``1 - alpha``); ``mechanism`` and ``n`` the mechanism and number of records the
    prediction is for; ``assumption`` what it rests on beyond the public inputs (empty when
    it is exact from them); ``plausible`` the public range of the quantity's values, when
    known (the bounds of a median, ``[0, n]`` of a count), against which warnings are set;
    ``refusal`` the chance that a propose-test-release step releases nothing.
    """

    quantity: str
    law: OutputLaw = field(repr=False)
    alpha: float = 0.05
    mechanism: str = ""
    n: Any = None
    assumption: str = ""
    plausible: tuple[float, float] | None = None
    #: the chance that nothing is released (an ePTR test refuses; the bottom is output):
    #: ``law`` is then the error's law given a release
    refusal: float | None = None

    @cached_property
    def se(self) -> float:
        """The noise standard error: sqrt(E error^2)."""
        return math.sqrt(float(self.law.error_mse()))

    @cached_property
    def half_width(self) -> float:
        """The 1 - alpha quantile of |error|: the release is within it of the target with
        probability 1 - alpha."""
        return float(self.law.error_quantile(1.0 - self.alpha))

    def error_sf(self, a: ArrayLike) -> np.ndarray | float:
        """P(|error| > a): the chance that the error exceeds ``a``."""
        out = np.asarray(self.law.error_sf(a), dtype=float)
        return float(out) if out.ndim == 0 else out

    def with_alpha(self, a: float, /) -> Accuracy:
        """The same prediction at another significance level ``alpha`` (given by position)."""
        return replace(self, alpha=check_alpha(a))

    @property
    def conf_level(self) -> float:
        return 1.0 - self.alpha

    def to_dict(self) -> dict[str, Any]:
        """The prediction as a JSON-serialisable row (``n`` a number or ``"lo-hi"``)."""
        n = self.n if self.n is None or isinstance(self.n, int) else "-".join(map(str, self.n))
        return {
            "quantity": self.quantity,
            "mechanism": self.mechanism,
            "n": n,
            "se": self.se,
            "conf_level": self.conf_level,
            "half_width": self.half_width,
            "assumption": self.assumption or "exact from the public inputs",
            "refusal": self.refusal,
        }

    def __str__(self) -> str:
        where = ", ".join(
            s for s in (self.mechanism, None if self.n is None else f"n={self.to_dict()['n']}") if s
        )
        text = (
            f"{self.quantity}: noise SE {self.se:.4g}, {self.conf_level:.0%} half-width "
            f"{self.half_width:.4g}" + (f" ({where})" if where else "")
        )
        if self.refusal is not None:
            text += f"; given a release, which is refused with probability {self.refusal:.3g}"
        return text + (f"; {self.assumption}" if self.assumption else "")


def worst(predictions: Sequence[Accuracy], n: Any) -> Accuracy:
    """The prediction with the widest interval over a range of n, labelled with the range."""
    top = max(predictions, key=lambda a: (a.half_width, a.se))
    note = f"the worst over n in [{n[0]}, {n[1]}]"
    return replace(top, n=tuple(n), assumption="; ".join(s for s in (top.assumption, note) if s))


def solve_public(
    half_width_at: Callable[[float], float],
    target: float,
    *,
    name: str,
    lo: float,
    hi: float,
    increasing: bool,
    rtol: float = 1e-3,
) -> float:
    """The public parameter value in [lo, hi] at which the predicted half-width meets
    ``target``: the least value when the half-width decreases in it (``epsilon``,
    ``zero_prob``), the largest when it increases (``lam``). Bisection on a log scale
    (the prediction may be a step function, e.g. on a lattice), to a relative ``rtol``;
    the value returned always meets the target."""
    if not (math.isfinite(target) and target > 0):
        raise ValidationError(f"half_width: {target!r} must be a finite number > 0")

    def ok(v: float) -> bool:
        return half_width_at(v) <= target

    good, bad = (lo, hi) if increasing else (hi, lo)
    if not ok(good):
        raise ValidationError(
            f"half_width: {target:g} is not reachable with {name} in [{lo:g}, {hi:g}] "
            f"(at {name}={good:g} the predicted half-width is {half_width_at(good):.4g})"
        )
    if ok(bad):
        return bad
    while abs(math.log(good / bad)) > rtol:
        mid = math.sqrt(good * bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good

"""Private statistics in one call: median, quantiles, mean, sum, count, variance (paper 002).

``private_median(x, epsilon=1.0, bounds=(0, 100))`` returns a float. Pass
``return_result=True`` for a :class:`PrivateStatistic` carrying the guarantee, the
mechanism object (``.logpdf``, ``.error_mean_abs()``...) and the clipping count.

Mechanisms: ``"piecewise_laplace"`` (paper 002), ``"inverse_sensitivity"``,
``"smooth_sensitivity"`` (median / quantiles only), ``"laplace"`` (global sensitivity),
and ``"auto"`` (default), which picks by the statistic alone, i.e. from public inputs,
so the choice spends no privacy:

* median, quantiles, variance -> piecewise Laplace: its pieces follow the data's gaps
  and are usually far shorter than the global sensitivity;
* mean, sum, count -> Laplace with global sensitivity: their pieces are nearly as long
  as GS, where PLM approaches Lap(2 GS/eps), up to twice the eps-DP Laplace error
  (spec 2.5, 7 E2-E3).

All releases are pure eps-DP under swap neighbours (fixed, public n). Bounds are public
and required (they are never read from the data); data outside them are an error unless
``clip=True``, and the number clipped is reported. Laplace and smooth-sensitivity
releases are clipped into the statistic's public range (post-processing: no privacy
cost, slight bias); PLM and INV releases lie in it already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privest.accounting.base import Guarantee
from privest.errors import ValidationError
from privest.mechanisms.base import Mechanism
from privest.mechanisms.inverse_sensitivity import InverseSensitivity
from privest.mechanisms.laplace import LaplaceMechanism
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.profiles import parse_statistic
from privest.mechanisms.smooth_sensitivity import SmoothSensitivity
from privest.rng import resolve_rng, rng_kind
from privest.validation import check_epsilon

__all__ = [
    "MECHANISMS",
    "PrivateStatistic",
    "auto_mechanism",
    "build_mechanism",
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_statistic",
    "private_sum",
    "private_variance",
    "profile_truncation",
]

MECHANISMS = (
    "auto",
    "piecewise_laplace",
    "inverse_sensitivity",
    "smooth_sensitivity",
    "laplace",
)
_AUTO = {
    "median": "piecewise_laplace",
    "quantile": "piecewise_laplace",
    "variance": "piecewise_laplace",
    "mean": "laplace",
    "sum": "laplace",
    "count": "laplace",
}


@dataclass(frozen=True)
class PrivateStatistic:
    """A private release with its provenance. ``float(result)`` is the value."""

    value: float
    statistic: str
    mechanism: str
    epsilon: float
    guarantee: Guarantee
    n: int
    n_clipped: int = 0
    bounds: tuple[float, float] | None = None
    clamped: bool = False
    randomness: str = "secure"
    mechanism_object: Mechanism | None = field(default=None, repr=False, compare=False)

    def __float__(self) -> float:
        return self.value

    def summary(self) -> str:
        """One paragraph: value, statistic, mechanism, guarantee, data handling."""
        lines = [
            f"private {self.statistic} = {self.value:.6g}  ({self.mechanism}, {self.guarantee})",
            f"  n = {self.n}, bounds = {self.bounds}, records clipped: {self.n_clipped}",
            f"  randomness: {self.randomness}",
        ]
        if self.clamped:
            lines.append("  the noisy value fell outside the public range and was clipped to it")
        return "\n".join(lines)


def auto_mechanism(statistic: str) -> str:
    """The mechanism ``"auto"`` picks for a statistic (module docstring); public inputs only."""
    name, _ = parse_statistic(statistic)
    return _AUTO[name]


def _check_mechanism(mechanism: str) -> str:
    if mechanism not in MECHANISMS:
        raise ValidationError(
            f"mechanism: {mechanism!r} is unknown; accepted: {', '.join(MECHANISMS)}"
        )
    return mechanism


#: the variance's reaches cost O(n) per level: above this n (public) PLM and INV compute
#: only the first ceil(2 ln(1e6)/eps) levels and add the range-end tail (spec 2.7)
VARIANCE_FULL_PROFILE_MAX_N = 2000


def profile_truncation(statistic: str, n: int) -> str | None:
    """``truncate=`` the ``private_*`` functions pass to PLM / INV (public inputs only)."""
    name, _ = parse_statistic(statistic)
    return "auto" if name == "variance" and n > VARIANCE_FULL_PROFILE_MAX_N else None


def build_mechanism(
    x: Any,
    statistic: str,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    q: float | None = None,
    clip: bool = False,
) -> tuple[str, Mechanism]:
    """The resolved mechanism name and the mechanism object bound to ``x``.

    Every entry point (``private_*``, ``private_statistic``, ``privest stat``) comes
    through here, so they all build the same mechanism (e.g. the truncated variance
    profile of :func:`profile_truncation` for large n).
    """
    eps = check_epsilon(epsilon)
    mech = _check_mechanism(mechanism)
    if mech == "auto":
        mech = auto_mechanism(statistic)
    kw: dict[str, Any] = {"epsilon": eps, "bounds": bounds, "q": q, "clip": clip}
    if mech in ("piecewise_laplace", "inverse_sensitivity"):
        cls = PiecewiseLaplace if mech == "piecewise_laplace" else InverseSensitivity
        truncate = profile_truncation(statistic, int(np.size(x)))
        return mech, cls.for_statistic(x, statistic, truncate=truncate, **kw)
    if mech == "laplace":
        return mech, LaplaceMechanism.for_statistic(x, statistic, **kw)
    if bounds is None:
        raise ValidationError("bounds: required (public bounds (lo, hi) of the data)")
    return mech, SmoothSensitivity(x, statistic, **kw)


def private_statistic(
    x: Any,
    statistic: str,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    q: float | None = None,
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """Release one statistic by name (``"median"``, ``"quantile:0.9"``, ``"mean"``, ...)."""
    gen = resolve_rng(rng)
    name, q_spec = parse_statistic(statistic)
    q = q_spec if q is None else q
    resolved, mech = build_mechanism(
        x, statistic, epsilon=epsilon, bounds=bounds, mechanism=mechanism, q=q, clip=clip
    )
    raw = mech.release(gen)
    value, clamped = raw, False
    if hasattr(mech, "clamp"):
        value = float(mech.clamp(raw))
        clamped = value != raw
    if not return_result:
        return value
    prof = getattr(mech, "profile", None)
    n = prof.n if prof is not None else int(np.size(x))
    n_clipped = prof.n_clipped if prof is not None else int(getattr(mech, "n_clipped", 0))
    label = f"quantile {q:g}" if name == "quantile" else name
    pair = None
    if bounds is not None and name != "count":
        lo, hi = np.asarray(bounds, dtype=float).ravel()[:2]
        pair = (float(lo), float(hi))
    return PrivateStatistic(
        value=value,
        statistic=label,
        mechanism=resolved,
        epsilon=mech.epsilon,
        guarantee=mech.guarantee,
        n=n,
        n_clipped=n_clipped,
        bounds=pair,
        clamped=clamped,
        randomness=rng_kind(gen),
        mechanism_object=mech,
    )


def private_median(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """eps-DP median of data in public ``bounds`` (average of the middle two for even n)."""
    return private_statistic(
        x,
        "median",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        return_result=return_result,
    )


def private_quantile(
    x: Any,
    q: float,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """eps-DP q-quantile: the order statistic of rank clip(ceil(q n), 1, n)."""
    return private_statistic(
        x,
        "quantile",
        q=q,
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        return_result=return_result,
    )


def private_mean(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """eps-DP mean of data in public ``bounds`` (n is public under swap neighbours)."""
    return private_statistic(
        x,
        "mean",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        return_result=return_result,
    )


def private_sum(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """eps-DP sum of data in public ``bounds``."""
    return private_statistic(
        x,
        "sum",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        return_result=return_result,
    )


def private_variance(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """eps-DP population variance (1/n) of data in public ``bounds``.

    PLM and INV compute all n levels of the reaches for n <= 2000 and otherwise levels up
    to ceil(2 ln(1e6)/eps), with the range-end tail (spec 2.7; still eps-DP), O(n) per
    level. ``private_statistic(x, "variance", ...)`` and ``privest stat`` do the same.
    """
    return private_statistic(
        x,
        "variance",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        return_result=return_result,
    )


def private_count(
    x: Any,
    *,
    epsilon: float,
    where: Callable[[np.ndarray], Any] | None = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    return_result: bool = False,
) -> float | PrivateStatistic:
    """eps-DP count of records in a set: ``x`` holds 0/1 (boolean) indicators, or
    ``where(x)`` maps the records to them. Under swap neighbours n itself is public.

    PLM is exactly Lap(2/eps) truncated to [0, n] here (spec 5.3), so ``"auto"`` uses
    Laplace(1/eps).
    """
    ind = np.asarray(x) if where is None else np.asarray(where(np.asarray(x)))
    if ind.dtype == bool:
        ind = ind.astype(float)
    return private_statistic(
        ind, "count", epsilon=epsilon, mechanism=mechanism, rng=rng, return_result=return_result
    )

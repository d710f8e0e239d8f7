"""Accuracy of the statistic mechanisms and ``private_*`` functions, before any data
(docs/accuracy.md).

The mechanism is the one :func:`~privest.models.statistics.statistic_mechanism` builds for
these public inputs (``"auto"`` resolved by its public rule, which may read n), so the
prediction is for the release a ``private_*`` call would make:

* a mechanism whose noise does not depend on the data (it has a ``noise_law``: Laplace,
  discrete Laplace) has its exact noise law from the public inputs (bounds, epsilon, the
  public n for the mean and the variance);
* an instance-adaptive mechanism (piecewise Laplace, inverse sensitivity, permute-and-flip,
  ...) has the exact law of its release, ``mech.law(x)``, on data sets drawn with fixed
  seeds from the stated shape (:class:`~privest.accuracy.base.ReferenceData`), averaged:
  the prediction is for data drawn from that shape, and says so.

Laplace releases are clipped into the statistic's public range afterwards
(post-processing), which can only shrink the error: the prediction is for the noise
before it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privest.accuracy.base import (
    Accuracy,
    MixtureErrorLaw,
    ReferenceData,
    check_alpha,
    solve_public,
    worst,
)
from privest.domain import Domain
from privest.errors import ValidationError
from privest.intervals.release import check_inference, plan_split
from privest.mechanisms.statistic import StatisticMechanism
from privest.models.statistics import statistic_mechanism
from privest.registry import parse_statistic

__all__ = ["epsilon_for_statistic", "plausible_range", "predict_statistic"]

#: epsilon is searched in this range by :func:`epsilon_for_statistic`
EPSILON_RANGE = (1e-3, 1e3)


def _n_values(n: Any) -> tuple[int | None, tuple[int, int] | None]:
    """(one n, None) or (None, (lo, hi)) for a range of n."""
    if n is None or (isinstance(n, (int, np.integer)) and not isinstance(n, bool)):
        if n is not None and n < 1:
            raise ValidationError(f"n: {n!r} must be a whole number >= 1")
        return (None if n is None else int(n)), None
    try:
        lo, hi = (int(v) for v in n)
    except (TypeError, ValueError):
        raise ValidationError(f"n: {n!r} is neither a whole number nor a (lo, hi) range") from None
    if not 1 <= lo <= hi:
        raise ValidationError(f"n: the range {n!r} must have 1 <= lo <= hi")
    return None, (lo, hi)


def plausible_range(statistic: str, bounds: Any, n: int | None) -> tuple[float, float] | None:
    """The public range of the statistic's values: the bounds for the median, quantiles and
    mean, ``[0, (hi - lo)^2 / 4]`` for the variance, ``n`` times the bounds for the sum,
    ``[0, n]`` for a count (None where it is not public)."""
    name, _ = parse_statistic(statistic)
    if name == "count":
        return None if n is None else (0.0, float(n))
    if bounds is None:
        return None
    lo, hi = bounds
    if name == "variance":
        return 0.0, (hi - lo) ** 2 / 4.0
    if name == "sum":
        return None if n is None else (n * lo, n * hi)
    return float(lo), float(hi)


def _one(mech: StatisticMechanism, n: int | None, reference: ReferenceData, alpha: float):
    noise_law = getattr(mech, "noise_law", None)
    label = mech.label
    plausible = plausible_range(mech.spec, mech.bounds, n)
    if noise_law is not None:
        return Accuracy(label, noise_law(n), alpha, mech.name, n, plausible=plausible)
    if n is None:
        raise ValidationError(
            f"n: {mech.name}'s error depends on the data; give the number of records n "
            "(or a range) to predict it on a reference sample"
        )
    res = mech.domain.resolution
    laws = [mech.law(x) for x in reference.samples(n, mech.bounds, res)]
    return Accuracy(
        label,
        MixtureErrorLaw(laws),
        alpha,
        mech.name,
        n,
        assumption=reference.describe(mech.bounds, res),
        plausible=plausible,
    )


def predict_statistic(
    statistic: str | StatisticMechanism,
    *,
    epsilon: float | None = None,
    bounds: Any = None,
    n: Any = None,
    mechanism: str = "auto",
    quantile: float | None = None,
    resolution: float | None = None,
    domain: Domain | None = None,
    reference: Any = None,
    alpha: float = 0.05,
    inference: str = "population",
    **options: Any,
) -> Accuracy:
    """The predicted error of releasing ``statistic`` (module docstring); no data read.

    ``statistic`` is a name (``"median"``, ``"quantile:0.9"``, ...) with the public inputs
    of ``private_statistic`` (``epsilon``, ``bounds``, ``mechanism``, ``resolution``,
    ``domain``, the mechanism's ``options``), or a built mechanism. ``n`` is the public
    number of records, or a ``(lo, hi)`` range (the worst prediction over it is returned).
    ``reference`` states the data's spread for instance-adaptive mechanisms
    (:class:`ReferenceData`, a shape name or a mapping; default uniform over the bounds).
    ``inference`` is that of the ``private_*`` call: with ``"population"`` (their default)
    the point is released with its share of ``epsilon`` (docs/central-inference.md), and
    the prediction is for that point.
    """
    alpha = check_alpha(alpha)
    ref = ReferenceData.of(reference)
    one_n, n_range = _n_values(n)
    if n_range is not None:
        lo, hi = n_range
        ns = sorted({lo, round(math.sqrt(lo * hi)), hi})
        preds = [
            predict_statistic(
                statistic,
                epsilon=epsilon,
                bounds=bounds,
                n=m,
                mechanism=mechanism,
                quantile=quantile,
                resolution=resolution,
                domain=domain,
                reference=ref,
                alpha=alpha,
                inference=inference,
                **options,
            )
            for m in ns
        ]
        return worst(preds, n_range)
    if isinstance(statistic, StatisticMechanism):
        return _one(statistic, one_n, ref, alpha)
    if epsilon is None:
        raise ValidationError("epsilon: required to predict the accuracy of a statistic")
    name, _ = parse_statistic(statistic)
    lattice = resolution is not None or getattr(domain, "resolution", None) is not None
    point = plan_split(name, epsilon, check_inference(inference), lattice)["point"]
    mech = statistic_mechanism(
        statistic,
        epsilon=point,
        bounds=bounds,
        mechanism=mechanism,
        quantile=quantile,
        resolution=resolution,
        n=one_n,
        domain=domain,
        **options,
    )
    return _one(mech, one_n, ref, alpha)


def epsilon_for_statistic(statistic: str, half_width: float, **public: Any) -> float:
    """The least epsilon whose predicted half-width (at ``alpha``, default 0.05) is at most
    ``half_width``, for the public inputs of :func:`predict_statistic` (searched in
    [1e-3, 1e3]; the value returned meets the target)."""
    if "epsilon" in public:
        raise ValidationError("epsilon: it is what is solved for; do not give it")

    def at(eps: float) -> float:
        return predict_statistic(statistic, epsilon=eps, **public).half_width

    return solve_public(
        at, half_width, name="epsilon", lo=EPSILON_RANGE[0], hi=EPSILON_RANGE[1], increasing=False
    )

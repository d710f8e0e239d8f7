"""Private statistics in one call: median, quantiles, mean, sum, count, variance (paper 002).

``private_median(x, epsilon=1.0, bounds=(0, 100))`` returns a
:class:`~privest.mechanisms.released.PrivateStatistic`: a ``float`` that carries its
guarantee, statistic and mechanism (``.summary()``). For the output law on a data set
(density, exact error laws; the curator's non-private view) build the mechanism and call
``law(x)``: ``statistic_mechanism("median", epsilon=1, bounds=(0, 100)).law(x)``.

Mechanisms: ``"piecewise_laplace"`` (paper 002), ``"inverse_sensitivity"``,
``"smooth_sensitivity"`` (median / quantiles only), ``"laplace"`` (global sensitivity),
``"permute_and_flip"`` and ``"two_stage"`` (median / quantiles; the latter for bounds much
wider than the data, never chosen by ``auto``), and ``"auto"`` (default), which picks by the
statistic, the bounds, the resolution and the public n, i.e. from public inputs, so the
choice spends no privacy:

* median, quantiles -> permute-and-flip (McKenna and Sheldon 2020) over the lattice
  points when a ``resolution`` is given, the bounds hold at most 2049 of them (e.g.
  integer data) and the public n is at least 1000, else piecewise Laplace with the
  staircase shape on the public lattice; both float-safe, both built on paper 002's
  interpolated-rank score, whose pieces follow the data's gaps (docs/piecewise-laplace.md,
  "Choosing the mechanism");
* mean, sum, count -> Laplace with global sensitivity: their pieces are nearly as long
  as GS, where PLM approaches Lap(2 GS/eps), up to twice the eps-DP Laplace error
  (paper 002, Sec. 4.1; docs/piecewise-laplace.md);
* variance -> Laplace with global sensitivity, float-safe on its lattice. The paper's PLM
  for the variance (``mechanism="piecewise_laplace"``) is often more accurate but still
  samples a continuous inverse CDF, whose low bits can leak (docs/budget.md): it stays
  available, and ``auto`` will return to it once it is released on a lattice.

All releases are pure eps-DP under swap neighbours (fixed, public n). Bounds are public
and required (they are never read from the data); data outside them are an error unless
``clip=True``. Laplace and smooth-sensitivity releases are clipped into the statistic's
public range (post-processing: no privacy cost, slight bias); PLM and INV releases lie in
it already.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from privest._choices import STATISTIC_MECHANISMS
from privest.accounting.budget import Budget, charge
from privest.errors import ValidationError
from privest.mechanisms.base import StatisticMechanism
from privest.mechanisms.inverse_sensitivity import InverseSensitivity
from privest.mechanisms.laplace import LaplaceMechanism
from privest.mechanisms.lattice_pf import PF_MAX_CANDIDATES, PermuteAndFlip
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.profiles import parse_statistic
from privest.mechanisms.released import PrivateStatistic
from privest.mechanisms.smooth_sensitivity import SmoothSensitivity
from privest.mechanisms.two_stage import TwoStage
from privest.validation import check_bounds

__all__ = [
    "MECHANISMS",
    "auto_depends_on_n",
    "auto_mechanism",
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_statistic",
    "private_sum",
    "private_variance",
    "statistic_mechanism",
]

_CLASSES: dict[str, type[StatisticMechanism]] = {
    "piecewise_laplace": PiecewiseLaplace,
    "inverse_sensitivity": InverseSensitivity,
    "smooth_sensitivity": SmoothSensitivity,
    "permute_and_flip": PermuteAndFlip,
    "two_stage": TwoStage,
    "laplace": LaplaceMechanism,
}
#: mechanisms that release medians and quantiles on a public lattice (take ``resolution=``)
_LATTICE = ("piecewise_laplace", "inverse_sensitivity", "permute_and_flip", "two_stage")
#: ``mechanism=`` choices; defined without numpy in :mod:`privest._choices` for the CLI
MECHANISMS = STATISTIC_MECHANISMS
_AUTO = {
    "median": "piecewise_laplace",
    "quantile": "piecewise_laplace",
    "variance": "laplace",  # float-safe; PLM variance is not yet on a lattice
    "mean": "laplace",
    "sum": "laplace",
    "count": "laplace",
}


#: ``auto`` uses permute-and-flip from this public n on (exact E|err| against the staircase
#: PLM on the same lattice, docs/piecewise-laplace.md, "Choosing the mechanism")
PF_AUTO_MIN_N = 1000


def auto_mechanism(
    statistic: str,
    *,
    bounds: Any = None,
    resolution: float | None = None,
    n: int | None = None,
) -> str:
    """The mechanism ``"auto"`` picks (module docstring); public inputs only, no data.

    Medians and quantiles: permute-and-flip when a ``resolution`` is given, the bounds hold
    at most ``PF_MAX_CANDIDATES`` lattice points (a coarse public lattice, e.g. integer
    data) and the public ``n`` is at least ``PF_AUTO_MIN_N``; else the piecewise Laplace
    staircase on the lattice.
    """
    name, _ = parse_statistic(statistic)
    if _pf_lattice(name, bounds, resolution) and n is not None and n >= PF_AUTO_MIN_N:
        return "permute_and_flip"
    return _AUTO[name]


def _pf_lattice(name: str, bounds: Any, resolution: float | None) -> bool:
    """A median/quantile on a given lattice small enough for permute-and-flip (public)."""
    if name not in ("median", "quantile") or resolution is None or bounds is None:
        return False
    ((a, b),) = check_bounds(bounds, 1).tolist()
    step = float(resolution)
    return step > 0 and math.floor(b / step) - math.ceil(a / step) + 1 <= PF_MAX_CANDIDATES


def auto_depends_on_n(statistic: str, *, bounds: Any, resolution: float | None) -> bool:
    """Whether ``auto``'s choice for these public inputs depends on the public n."""
    return _pf_lattice(parse_statistic(statistic)[0], bounds, resolution)


def statistic_mechanism(
    statistic: str,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    quantile: float | None = None,
    clip: bool = False,
    resolution: float | None = None,
    n: int | None = None,
) -> StatisticMechanism:
    """The mechanism object for ``statistic`` (by name, ``"auto"`` resolved); no data read.

    Every entry point (``private_*``, ``private_statistic``, ``privest stat``) comes
    through here, so they all build the same mechanism. ``resolution`` (PLM, INV and
    permute-and-flip medians and quantiles) is the public lattice step of the release, e.g.
    1 for integer data (docs/piecewise-laplace.md, "Lattice release"); ``n``, the public
    number of records, is read by ``auto`` only (``auto_mechanism``).
    """
    if mechanism not in MECHANISMS:
        raise ValidationError(
            f"mechanism: {mechanism!r} is unknown; accepted: {', '.join(MECHANISMS)}"
        )
    if mechanism == "auto":
        mechanism = auto_mechanism(statistic, bounds=bounds, resolution=resolution, n=n)
    extra = {}
    if resolution is not None:
        if mechanism not in _LATTICE:
            raise ValidationError(
                f"resolution: applies to the {', '.join(_LATTICE)} mechanisms; got "
                f"mechanism={mechanism!r}"
            )
        extra["resolution"] = resolution
    return _CLASSES[mechanism](
        statistic, epsilon=epsilon, bounds=bounds, quantile=quantile, clip=clip, **extra
    )


def private_statistic(
    x: Any,
    statistic: str,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    quantile: float | None = None,
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    resolution: float | None = None,
) -> PrivateStatistic:
    """Release one statistic by name (``"median"``, ``"quantile:0.9"``, ``"mean"``, ...).

    Every ``private_*`` function takes ``budget=`` (a :class:`~privest.Budget`): the spend
    is charged, or refused, before ``x`` is read (docs/budget.md).
    """
    kw = dict(epsilon=epsilon, bounds=bounds, quantile=quantile, clip=clip, resolution=resolution)
    mech = statistic_mechanism(statistic, mechanism=mechanism, **kw)
    if mechanism == "auto" and auto_depends_on_n(statistic, bounds=bounds, resolution=resolution):
        # the same guarantee whichever mechanism n picks: charge first, then read len(x)
        charge(budget, mech.guarantee, label=mech.label, mechanism="auto")
        mech = statistic_mechanism(statistic, mechanism=mechanism, n=len(x), **kw)
        return mech.release(x, rng=rng)
    return mech.release(x, rng=rng, budget=budget)


def private_median(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    resolution: float | None = None,
) -> PrivateStatistic:
    """eps-DP median of data in public ``bounds`` (average of the middle two for even n).

    PLM and INV release a point of a public lattice, sampled exactly: ``resolution`` is its
    step (e.g. 1 for integer data, whose ties are then released exactly), by default a
    power of two about 2^-24 of the bounds' width (docs/piecewise-laplace.md).
    """
    return private_statistic(
        x,
        "median",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        budget=budget,
        resolution=resolution,
    )


def private_quantile(
    x: Any,
    quantile: float,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    resolution: float | None = None,
) -> PrivateStatistic:
    """eps-DP quantile at level ``quantile`` = q: the order statistic x_(k) of rank
    k = clip(ceil(q n), 1, n); where eps min(k, n + 1 - k) < 8 the piecewise Laplace release
    aims half a rank inward, at the average of x_(k) and its inner neighbour
    (docs/piecewise-laplace.md, "Quantile convention")."""
    return private_statistic(
        x,
        "quantile",
        quantile=quantile,
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        budget=budget,
        resolution=resolution,
    )


def private_mean(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
) -> PrivateStatistic:
    """eps-DP mean of data in public ``bounds`` (n is public under swap neighbours)."""
    return private_statistic(
        x,
        "mean",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        budget=budget,
    )


def private_sum(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
) -> PrivateStatistic:
    """eps-DP sum of data in public ``bounds``."""
    return private_statistic(
        x,
        "sum",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        budget=budget,
    )


def private_variance(
    x: Any,
    *,
    epsilon: float,
    bounds: Any,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
) -> PrivateStatistic:
    """eps-DP population variance (1/n) of data in public ``bounds``.

    PLM and INV compute all n levels of the reaches for n <= 2000 and otherwise levels up
    to ceil(2 ln(1e6)/eps), with the range-end tail (paper 002, Sec. 5.2; still eps-DP),
    O(n) per level. ``private_statistic(x, "variance", ...)`` and ``privest stat`` do the
    same.
    """
    return private_statistic(
        x,
        "variance",
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        rng=rng,
        clip=clip,
        budget=budget,
    )


def private_count(
    x: Any,
    *,
    epsilon: float,
    where: Callable[[np.ndarray], Any] | None = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    budget: Budget | None = None,
) -> PrivateStatistic:
    """eps-DP count of records in a set: ``x`` holds 0/1 (boolean) indicators, or
    ``where(x)`` maps the records to them. Under swap neighbours n itself is public.

    PLM is exactly Lap(2/eps) truncated to [0, n] here (paper 002, Sec. 4.1), so ``"auto"``
    uses Laplace(1/eps).
    """
    mech = statistic_mechanism("count", epsilon=epsilon, mechanism=mechanism)
    charge(budget, mech.guarantee, label=mech.label, mechanism=mech.name)  # before x is read
    ind = np.asarray(x) if where is None else np.asarray(where(np.asarray(x)))
    if where is not None and ind.shape != np.shape(x)[:1]:
        raise ValidationError(
            f"where: returned shape {ind.shape}; expected one indicator per record, shape "
            f"{np.shape(x)[:1]}"
        )
    if ind.dtype == bool:
        ind = ind.astype(float)
    return mech.release(ind, rng=rng)

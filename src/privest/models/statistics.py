"""Private statistics in one call: median, quantiles, mean, sum, count, variance (paper 002).

``private_median(x, epsilon=1.0, bounds=(0, 100))`` returns a
:class:`~privest.released.PrivateStatistic`: a ``float`` that carries its guarantee,
statistic and mechanism (``.summary()``). For the output law on a data set (density, exact
error laws; the curator's non-private view) build the mechanism and call ``law(x)``:
``statistic_mechanism("median", epsilon=1, bounds=(0, 100)).law(x)``.

Mechanisms come from the registry (:mod:`privest.registry`; the table is in
docs/mechanisms.md); ``mechanism="auto"`` (default) picks one by a public rule
(:mod:`privest.mechanisms.auto`): the exact-error best of the data-independent noises for
the statistics that decompose over records (mean, sum, count, variance), the piecewise
Laplace staircase or permute-and-flip on a public lattice for the median and quantiles
(docs/piecewise-laplace.md, "Choosing the mechanism"). Every choice is float-safe.

By default neighbours swap one record (n public); ``domain=Domain(neighbours="add_remove",
...)`` releases the sum and the count with n private. Bounds are public and required (they
are never read from the data); data outside them are an error unless ``clip=True``.
Laplace and smooth-sensitivity releases are clipped into the statistic's public range
(post-processing: no privacy cost, slight bias); PLM and INV releases lie in it already.

Inference (docs/central-inference.md): by default (``inference="population"``) the result
also carries ``bse`` and ``conf_int(alpha)`` for the population quantity (records iid),
covering sampling error and the privacy noise; a stated share of epsilon buys what the
interval needs (the spread of a mean, two order statistics around a quantile), charged with
the rest before any data is read. ``inference="noise"`` gives the noise-only interval of the
data's own value; ``inference="none"`` spends all of epsilon on the point.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from privest.accounting.budget import Budget, charge
from privest.backends import dispatch
from privest.domain import Domain
from privest.errors import ValidationError
from privest.intervals.release import check_inference, release_with_inference
from privest.intervals.results import check_alpha
from privest.mechanisms.auto import auto_mechanism
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.statistic import StatisticMechanism
from privest.registry import load, mechanism_names, mechanism_spec
from privest.released import PrivateStatistic
from privest.rng import resolve_rng
from privest.validation import as_float_vector

__all__ = [
    "private_count",
    "private_mean",
    "private_median",
    "private_quantile",
    "private_statistic",
    "private_sum",
    "private_variance",
    "record_count",
    "statistic_law",
    "statistic_mechanism",
]


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
    domain: Domain | None = None,
    **options: Any,
) -> StatisticMechanism:
    """The mechanism object for ``statistic`` (by registered name, ``"auto"`` resolved by
    :func:`~privest.mechanisms.auto.auto_mechanism`); no data read.

    Every entry point (``private_*``, ``private_statistic``, ``privest stat``, the Dask
    backend) comes through here, so they all build the same mechanism. The public facts come
    as ``domain=`` or as ``bounds=`` and ``resolution=`` (the public lattice step of the
    lattice mechanisms, e.g. 1 for integer data; docs/piecewise-laplace.md, "Lattice
    release"); ``n``, the public number of records, is read by ``auto`` only. ``options``
    are the chosen mechanism's own public inputs (e.g. ``delta=`` and
    ``local_sensitivity=`` of ``"ptr"``; the registry's ``reads``).
    """
    if not (isinstance(mechanism, str) and (mechanism == "auto" or _registered(mechanism))):
        raise ValidationError(
            f"mechanism: {mechanism!r} is unknown; accepted: {', '.join(mechanism_names())}"
        )
    dom = _domain(domain, bounds, resolution)
    if mechanism == "auto":
        _integer_hint(statistic, dom)
        mechanism = auto_mechanism(statistic, domain=dom, epsilon=epsilon, n=n)
    spec = mechanism_spec(mechanism)
    cls = load(spec.target)
    try:
        return cls(statistic, epsilon=epsilon, quantile=quantile, clip=clip, domain=dom, **options)
    except TypeError as exc:  # a missing or unknown option of the chosen mechanism
        raise ValidationError(
            f"mechanism: {mechanism} takes the public inputs {', '.join(spec.reads)} ({exc})"
        ) from None


def _registered(mechanism: str) -> bool:
    try:
        mechanism_spec(mechanism)
    except ValidationError:
        return False
    return True


def _domain(domain: Domain | None, bounds: Any, resolution: float | None) -> Domain:
    """``Domain.of(domain, bounds=bounds, resolution=resolution)``; one pair of floats (the
    common call) is built once per process (a Domain is frozen)."""
    if domain is None and resolution is None and type(bounds) is tuple and len(bounds) == 2:
        lo, hi = bounds
        if type(lo) is float and type(hi) is float:  # the signs keep -0.0 apart from 0.0
            return _pair_domain(lo, hi, math.copysign(1.0, lo), math.copysign(1.0, hi))
    return Domain.of(domain, bounds=bounds, resolution=resolution)


@functools.lru_cache(maxsize=64)
def _pair_domain(lo: float, hi: float, lo_sign: float, hi_sign: float) -> Domain:
    return Domain(bounds=(lo, hi))


#: median/quantile bounds (lo, hi) with whole ends at most this far apart and no
#: ``resolution``: the hint of :func:`_integer_hint` (a rating scale, a small count)
INTEGER_HINT_WIDTH = 20


def _integer_hint(statistic: str, domain: Domain) -> None:
    """Warn, from public inputs only (the same for every data set), that a median or
    quantile of whole numbers wants ``resolution=1``: on the default fine lattice the point
    f(x) of tied data competes with whole gaps of lattice points (exact E|err| on a 7-point
    scale, n = 944, eps = 0.1: 0.49 against 0.0038 with ``resolution=1``;
    docs/piecewise-laplace.md, "Integer data")."""
    name = statistic.partition(":")[0].strip().lower()
    if name not in ("median", "quantile") or domain.resolution is not None:
        return
    bnds = domain.bounds
    if not (isinstance(bnds, tuple) and len(bnds) == 2 and all(isinstance(v, float) for v in bnds)):
        return  # no bounds, or not one pair: the mechanism's own check refuses what is wrong
    a, b = bnds
    if a.is_integer() and b.is_integer() and b - a <= INTEGER_HINT_WIDTH:
        warnings.warn(
            f"bounds ({a:g}, {b:g}) with no resolution: if the data are whole numbers (a "
            "rating scale, a count), pass resolution=1 (--resolution 1): ties are then "
            "released exactly and auto uses permute-and-flip, with far less error "
            "(docs/piecewise-laplace.md, 'Integer data')",
            UserWarning,
            stacklevel=3,
        )


@dispatch
def statistic_law(x: Any, mech: StatisticMechanism) -> tuple[OutputLaw, int]:
    """The curator's law of ``mech`` on the data ``x`` and the number of records: in memory
    ``mech.law(x)``; a backend registers its own for the data it holds (privest.scale: the
    same law from partition sums). NON-PRIVATE, like every law."""
    return mech.law(x), int(np.size(x))


@dispatch
def record_count(x: Any) -> int:
    """The number of records of ``x`` (public under swap neighbours; read by ``auto``)."""
    return len(x) if hasattr(type(x), "__len__") else int(np.size(x))


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
    domain: Domain | None = None,
    inference: str = "population",
    alpha: float = 0.05,
    **options: Any,
) -> PrivateStatistic:
    """Release one statistic by name (``"median"``, ``"quantile:0.9"``, ``"mean"``, ...).

    ``x`` is held in memory (an array, a Series) or by a backend (a Dask array or Series,
    with ``privest[dask]``): the same mechanism, law and, seeded, release either way. Every
    ``private_*`` function takes ``budget=`` (a :class:`~privest.Budget`): the spend is
    charged, or refused, before ``x`` is read (docs/budget.md). ``options`` are the chosen
    mechanism's own public inputs (:func:`statistic_mechanism`). ``inference``:
    ``"population"`` (default), ``"noise"`` or ``"none"`` (module docstring); ``alpha``: the
    level ``1 - alpha`` a median's or quantile's interval is released for.
    """
    check_inference(inference)
    dom = _domain(domain, bounds, resolution)
    kw = dict(
        epsilon=epsilon, quantile=quantile, clip=clip, domain=dom, mechanism=mechanism, **options
    )
    mech = statistic_mechanism(statistic, **kw)
    charge(budget, mech.guarantee, label=mech.label, mechanism=mech.name)  # before x is read
    if isinstance(x, (list, tuple)) or _is_series(x):  # the shared data check first; a
        x = as_float_vector(x, "x")  # Series' float view then sums as an array (fused passes)
    if inference != "none":
        return _with_inference(x, mech, mechanism, inference, alpha, rng, options)
    law, n = statistic_law(x, mech)
    return mech.release_from_law(law, n, resolve_rng(rng))


def _is_series(x: Any) -> bool:
    """A pandas Series (pandas imported by the caller; never imported here)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.Series)


def _with_inference(
    x: Any,
    mech: StatisticMechanism,
    mechanism: str,
    inference: str,
    alpha: float,
    rng: Any,
    options: dict[str, Any],
) -> PrivateStatistic:
    """The point and its interval's releases (:mod:`privest.intervals.release`), which
    compose to ``mech.guarantee`` (charged by the caller before ``x`` is read)."""
    dom = mech.domain
    n = record_count(x) if dom.n_public else None
    gen = resolve_rng(rng)

    def release(
        data: Any, statistic: str, *, epsilon: float, mechanism: str, totals: Any = None, **kw: Any
    ):
        one = _shared_mechanism(statistic, epsilon=epsilon, mechanism=mechanism, n=n, **kw)
        if totals is not None and hasattr(one, "law_from_totals"):  # summed in a shared pass
            law, size = one.law_from_totals(totals), totals["n"]
        else:
            law, size = statistic_law(data, one)
        return one.release_from_law(law, size, gen), one

    point, interval = release_with_inference(
        x,
        mech.statistic,
        epsilon=mech.epsilon,
        n=n,
        domain=dom,
        mechanism=mechanism,
        clip=mech.clip,
        inference=inference,
        release=release,
        quantile=mech.q if mech.statistic == "quantile" else None,
        alpha=check_alpha(alpha),
        options=options,
    )
    return PrivateStatistic(
        float(point),
        statistic=point.statistic,
        mechanism=point.mechanism,
        guarantee=mech.guarantee,
        n=point.n,
        bounds=point.bounds,
        randomness=point.randomness,
        interval=interval,
    )


#: the mechanisms whose instances hold public inputs only (no state a release changes): the
#: interval's releases share one per set of public inputs (:func:`_shared_mechanism`)
_SHAREABLE = ("laplace", "discrete_laplace")
_SHARED: dict[tuple, StatisticMechanism] = {}
_SHARED_MAX = 256


def _shared_mechanism(statistic: str, *, epsilon: Any, mechanism: str, **kw: Any) -> Any:
    """:func:`statistic_mechanism`, built once per process for each set of public inputs
    of a shareable mechanism (the types in the key keep 1, 1.0 and True apart)."""
    try:
        key = (statistic, type(epsilon), epsilon, mechanism, *sorted(kw.items()))
        key += (tuple(type(v) for _, v in key[4:]), len(mechanism_names()))
        hash(key)
    except TypeError:  # an unhashable option: built each time
        return statistic_mechanism(statistic, epsilon=epsilon, mechanism=mechanism, **kw)
    mech = _SHARED.get(key)
    if mech is None:
        mech = statistic_mechanism(statistic, epsilon=epsilon, mechanism=mechanism, **kw)
        if mech.name in _SHAREABLE:
            if len(_SHARED) >= _SHARED_MAX:
                _SHARED.clear()
            _SHARED[key] = mech
    return mech


def private_median(
    x: Any,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    resolution: float | None = None,
    domain: Domain | None = None,
    inference: str = "population",
    alpha: float = 0.05,
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
        domain=domain,
        inference=inference,
        alpha=alpha,
    )


def private_quantile(
    x: Any,
    quantile: float,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    resolution: float | None = None,
    domain: Domain | None = None,
    inference: str = "population",
    alpha: float = 0.05,
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
        domain=domain,
        inference=inference,
        alpha=alpha,
    )


def private_mean(
    x: Any,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    domain: Domain | None = None,
    inference: str = "population",
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
        domain=domain,
        inference=inference,
    )


def private_sum(
    x: Any,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    domain: Domain | None = None,
    inference: str = "population",
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
        domain=domain,
        inference=inference,
    )


def private_variance(
    x: Any,
    *,
    epsilon: float,
    bounds: Any = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    domain: Domain | None = None,
    inference: str = "population",
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
        domain=domain,
        inference=inference,
    )


def private_count(
    x: Any,
    *,
    epsilon: float,
    where: Callable[[np.ndarray], Any] | None = None,
    mechanism: str = "auto",
    rng: np.random.Generator | int | None = None,
    budget: Budget | None = None,
    domain: Domain | None = None,
    inference: str = "population",
) -> PrivateStatistic:
    """eps-DP count of records in a set: ``x`` holds 0/1 (boolean) indicators, or
    ``where(x)`` maps the records to them (one indicator per record). Under swap neighbours
    n itself is public; under ``Domain(neighbours="add_remove")`` it is not (and the count
    has only the noise-only interval, ``inference="noise"``).

    ``"auto"`` picks the integer (discrete Laplace) count: exact, and a smaller error than
    Laplace noise at every epsilon. Its interval for n times the population proportion
    needs no extra epsilon (docs/central-inference.md).
    """
    check_inference(inference)
    mech = statistic_mechanism("count", epsilon=epsilon, mechanism=mechanism, domain=domain)
    charge(budget, mech.guarantee, label=mech.label, mechanism=mech.name)  # before x is read
    ind = x if where is None else _indicators(x, where)
    if inference != "none":
        return _with_inference(ind, mech, mechanism, inference, 0.05, rng, {})
    law, n = statistic_law(ind, mech)
    return mech.release_from_law(law, n, resolve_rng(rng))


def _indicators(x: Any, where: Callable[[np.ndarray], Any]) -> np.ndarray:
    """``where(x)`` as one 0/1 entry per record (a shorter or longer answer is refused)."""
    arr = np.asarray(x)
    ind = np.asarray(where(arr))
    if ind.shape != (len(arr),):
        raise ValidationError(
            f"where: returned shape {ind.shape} for {len(arr)} records; it must give one "
            "indicator per record"
        )
    return ind.astype(float) if ind.dtype == bool else ind

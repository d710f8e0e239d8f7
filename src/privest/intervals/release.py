"""Release a statistic with what its interval needs (docs/central-inference.md).

The public rule (:func:`plan_split`, :data:`SHARES`) shares the user's epsilon between the
point release and the auxiliary releases an honest interval needs; the whole epsilon is
charged before any data is read (the caller does it), the releases compose to it
(sequential composition), and the released object says how it was split:

* mean, sum: ``spread`` = the mean of ``(x - c)^2``, c the bounds' midpoint (sensitivity
  ``(b - a)^2 / (4 n)``, a quarter of the variance's), so that the sampling variance at a
  candidate mean mu is ``spread - (mu - c)^2``;
* variance: ``centre`` = the mean, then ``fourth`` = the mean of ``((x - m)^2 - v)^2`` with m
  and v the released mean and variance (``Var (x - mu)^2`` at the candidate variance);
* median, quantile: ``bound counts`` = the numbers of records on each bound (two discrete
  Laplace counts of sensitivity 1, sharing it; most on the bound nearer the quantile),
  then ``ends`` = two order statistics at ranks planned from public inputs and those
  counts (:mod:`privest.intervals.ranks`), or the bounds where an end's noise could reach
  the data's edge or records tied on a bound; on the data's own lattice (``resolution``
  given) no counts, and ends whose ranks hold for any data;
* count: nothing (the sampling variance is a function of the proportion).

``inference="noise"`` releases the point alone (medians and quantiles: the point and two
ends planned for the noise only); ``"none"`` the point alone, with no interval. The
auxiliary releases use the Laplace mechanism (noise law public and exact) and the ends the
piecewise Laplace staircase aimed at ``x_(k)``, whatever the point's mechanism.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from privest.domain import Domain
from privest.errors import ValidationError
from privest.intervals.ranks import count_shares, endpoint_plan, tied_upper
from privest.intervals.results import CountInference, MomentInference, OrderInference
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.profiles.exact import Derived, Deviation, exact_totals_with
from privest.mechanisms.profiles.reaches import quantile_target, rank_level
from privest.mechanisms.profiles.variance import variance_sup
from privest.released import PrivateStatistic

__all__ = [
    "INFERENCE",
    "SHARES",
    "fourth_plan",
    "lattice_points",
    "moment_inference",
    "plan_split",
    "release_with_inference",
    "spread_plan",
]

#: the values of ``inference=`` on the private statistics (docs/vocabulary.md)
INFERENCE: tuple[str, ...] = ("population", "noise", "none")

#: the shares of epsilon the interval's releases take, per statistic (public; the point
#: gets the rest)
SHARES: dict[str, dict[str, float]] = {
    "mean": {"spread": 0.25},
    "sum": {"spread": 0.25},
    "variance": {"centre": 0.125, "fourth": 0.25},
    "median": {"ends": 0.5, "bound counts": 0.2},
    "quantile": {"ends": 0.5, "bound counts": 0.2},
    "count": {},
}

#: ``release(data, statistic, epsilon=, mechanism=, domain=, clip=, quantile=, totals=,
#: **options)`` -> (PrivateStatistic, mechanism): one release, no budget charged (the caller
#: charged); ``totals``: the exact totals of ``data`` for the statistic, summed already
#: (:func:`_fused_totals`), or None (the release reads ``data``)
Release = Callable[..., tuple[PrivateStatistic, Any]]


def check_inference(inference: Any) -> str:
    """``inference`` among :data:`INFERENCE`."""
    if inference not in INFERENCE:
        raise ValidationError(
            f"inference: {inference!r} is not one of {', '.join(map(repr, INFERENCE))}"
        )
    return inference


def plan_split(
    statistic: str, epsilon: float, inference: str, lattice: bool = False
) -> dict[str, float]:
    """The epsilon of each release (public): ``{"point": ..., <auxiliary>: ...}``.
    ``lattice``: a median's or quantile's data on their own lattice (a ``resolution``
    given), whose ends hold for any data (:func:`~privest.intervals.ranks.robust_miss`): no
    bound counts, their share goes to the point."""
    shares = SHARES[statistic] if inference == "population" else {}
    if inference == "noise" and statistic in ("median", "quantile"):
        shares = SHARES[statistic]
    if lattice and statistic in ("median", "quantile"):
        shares = {k: v for k, v in shares.items() if k != "bound counts"}
    out = {name: epsilon * share for name, share in shares.items()}
    return {"point": epsilon - sum(out.values()), **out}


def _records(x: Any) -> Any:
    """``x`` as something with ``.clip`` and arithmetic (arrays, Series, backend arrays)."""
    return x if hasattr(x, "clip") else np.asarray(x, dtype=float)


def _squared_deviations(x: Any, interval: tuple[float, float], centre: float) -> Any:
    """(clip(x) - centre)^2 over the records of data not held as a numpy array (a Series,
    a backend's array); an array's are summed chunk by chunk (:func:`_fused_totals`)."""
    return (_records(x).clip(*interval) - centre) ** 2


def _fused_totals(
    x: Any,
    statistic: str,
    inference: str,
    domain: Domain,
    clip: bool,
) -> tuple[dict[str, int], dict[str, int]] | None:
    """For a numpy array and a population interval of a mean, sum or variance: the exact
    totals of the point and of the first auxiliary mean (the spread, or the variance's
    centring mean) from ONE pass over the records
    (:func:`~privest.mechanisms.profiles.exact.exact_totals_with`); the same totals, so the
    same releases, as a pass each. None otherwise (each release reads the data itself)."""
    if not isinstance(x, np.ndarray) or inference != "population":
        return None
    if statistic == "variance":
        aux = Derived(None, *domain.interval())
    elif statistic in ("mean", "sum"):
        centre, cap = spread_plan(domain)
        f = Deviation(centre)
        ends = np.array(domain.interval())
        f(ends, ends)  # rounding is monotone: the largest values are at the ends
        aux = Derived(f, 0.0, cap, ends.max() <= cap)
    else:
        return None
    lo, hi = domain.interval()
    own, (aux_totals,) = exact_totals_with(x, (lo, hi), (aux,), statistic=statistic, clip=clip)
    return own, aux_totals


def _laplace_scale(mech: Any, n: int, what: str) -> float:
    """The scale of a data-independent Laplace noise law (the only kind these intervals
    read); a mechanism whose noise depends on the data is refused."""
    law = mech.noise_law(n) if hasattr(mech, "noise_law") else None
    if not isinstance(law, LaplaceLaw):
        raise ValidationError(
            f"inference: the interval of the {what} reads the noise law of its release, which "
            f"{mech.name} does not publish (its noise depends on the data); use "
            "mechanism='auto' or 'laplace', or inference='none'"
        )
    return float(law.scale)


def release_with_inference(
    x: Any,
    statistic: str,
    *,
    epsilon: float,
    n: int | None,
    domain: Domain,
    mechanism: str,
    clip: bool,
    inference: str,
    release: Release,
    quantile: float | None = None,
    alpha: float = 0.05,
    options: dict[str, Any] | None = None,
) -> tuple[PrivateStatistic, Any]:
    """The point release and the interval object (module docstring); the caller wraps them
    with the total guarantee. ``n`` is the public number of records (``None`` under
    add/remove neighbours, where only the noise-only interval exists)."""
    if inference == "population" and n is None:
        raise ValidationError(
            f"inference: under add/remove neighbours n is private, so the {statistic} has no "
            "population quantity to cover; use inference='noise' (the data's own value) or "
            "'none'"
        )
    split = plan_split(statistic, epsilon, inference, domain.resolution is not None)
    kw = dict(domain=domain, clip=clip, quantile=quantile, **(options or {}))
    if statistic in ("median", "quantile"):
        return _order(x, statistic, split, n, domain, mechanism, inference, release, alpha, kw)
    fused = _fused_totals(x, statistic, inference, domain, clip)
    own, aux_totals = fused if fused is not None else (None, None)
    point, mech = release(
        x, statistic, epsilon=split["point"], mechanism=mechanism, totals=own, **kw
    )
    if statistic == "count":
        return point, _count(point, mech, n, inference, split)
    scale = _laplace_scale(mech, n, statistic)
    aux: dict[str, float] = {}
    if inference == "population" and statistic == "variance":
        aux = _variance_fourth(x, point, split, n, domain, clip, release, aux_totals)
    elif inference == "population":
        centre, cap = spread_plan(domain)
        fuse = aux_totals is not None
        data = None if fuse else _squared_deviations(x, domain.interval(), centre)
        spread, smech = release(
            data,
            "mean",
            epsilon=split["spread"],
            mechanism="laplace",
            domain=Domain(bounds=(0.0, cap)),
            clip=True,
            totals=aux_totals,
        )
        aux = {
            "spread": float(spread),
            "spread_scale": _laplace_scale(smech, n, "spread"),
            "spread_cap": cap,
            "centre": centre,
        }
    return point, moment_inference(
        statistic, inference, float(point), n, domain, scale, split, **aux
    )


def spread_plan(domain: Domain) -> tuple[float, float]:
    """``(c, cap)``: the mean's and the sum's spread is the mean of ``(x - c)^2`` in
    ``[0, cap]``, c the bounds' midpoint (public)."""
    lo, hi = domain.interval()
    return (lo + hi) / 2, ((hi - lo) / 2) ** 2


def fourth_plan(mean: Any, variance: Any, domain: Domain) -> tuple[Any, Any]:
    """``(v, cap)``: the variance's fourth-moment release is the mean of
    ``((x - mean)^2 - v)^2`` in ``[0, cap]``, v the released variance put in its range
    (public: released values and the bounds; arrays of releases work too)."""
    lo, hi = domain.interval()
    v = np.clip(variance, 0.0, ((hi - lo) / 2) ** 2)
    reach = np.maximum(np.subtract(mean, lo), np.subtract(hi, mean))
    cap = np.maximum(v, reach**2 - v) ** 2
    if np.ndim(v) == 0:
        return float(v), float(cap)
    return v, cap


def moment_inference(
    statistic: str,
    kind: str,
    estimate: Any,
    n: int | None,
    domain: Domain,
    scale: float,
    split: dict[str, float],
    **aux: Any,
) -> MomentInference:
    """The interval object of a mean, sum or variance from its released values (``estimate``
    and, for ``kind="population"``, ``aux``: ``spread``, ``spread_scale``, ``spread_cap``,
    ``centre``); arrays of releases give a batch (benchmarks/bench_central_inference.py)."""
    lo, hi = _output_range(statistic, domain, n)
    if kind == "noise":
        return MomentInference(statistic, "noise", estimate, n, lo, hi, scale, split=split)
    if statistic == "variance":
        return MomentInference(
            statistic, kind, estimate, n, lo, hi, scale, n / (n - 1), split=split, **aux
        )
    factor = float(n) if statistic == "sum" else 1.0
    lo, hi = domain.interval()  # the working scale is the mean's
    return MomentInference(
        statistic, kind, estimate, n, lo, hi, scale / factor, factor, split=split, **aux
    )


def _output_range(statistic: str, domain: Domain, n: int | None) -> tuple[float, float]:
    """The public range a release of ``statistic`` is clamped into."""
    lo, hi = domain.interval()
    if statistic == "mean":
        return lo, hi
    if statistic == "variance":
        return 0.0, variance_sup(n, lo, hi)
    if n is None:  # the sum under add/remove: a sum of an unknown number of records
        return (-math.inf if lo < 0 else 0.0), (math.inf if hi > 0 else 0.0)
    return n * lo, n * hi


def _variance_fourth(
    x: Any,
    point: float,
    split: dict[str, float],
    n: int,
    domain: Domain,
    clip: bool,
    release: Release,
    centre_totals: dict[str, int] | None = None,
) -> dict[str, float]:
    """The centring mean (from ``centre_totals`` if the point's pass summed them), then the
    mean of ``((x - m)^2 - v)^2`` (module docstring; an array's in one chunked pass)."""
    lo, hi = domain.interval()
    m, _ = release(
        x,
        "mean",
        epsilon=split["centre"],
        mechanism="laplace",
        domain=Domain(bounds=(lo, hi)),
        clip=clip,
        totals=centre_totals,
    )
    v, cap = fourth_plan(float(m), float(point), domain)
    data, totals = None, None
    if isinstance(x, np.ndarray):  # the point's pass checked the records (clip=False)
        f = Deviation(float(m), v)
        ends = np.array([lo, hi])
        f(ends, ends)  # rounding is monotone: the largest values are at the ends or at m
        aux = Derived(f, 0.0, cap, max(ends.max(), v * v) <= cap)
        _, (totals,) = exact_totals_with(x, (lo, hi), (aux,), clip=clip, checked=True)
    else:
        data = ((_records(x).clip(lo, hi) - float(m)) ** 2 - v) ** 2
    fourth, fmech = release(
        data,
        "mean",
        epsilon=split["fourth"],
        mechanism="laplace",
        domain=Domain(bounds=(0.0, cap)),
        clip=True,
        totals=totals,
    )
    return {
        "spread": float(fourth),
        "spread_scale": _laplace_scale(fmech, n, "fourth moment"),
        "spread_cap": cap,
        "centre": v,
    }


def _count(point: Any, mech: Any, n: int | None, inference: str, split: dict) -> Any:
    law = mech.noise_law(n) if hasattr(mech, "noise_law") else None
    r = getattr(law, "p", None)
    if r is None:
        if inference == "noise" and isinstance(law, LaplaceLaw):
            top = math.inf if n is None else float(n)
            scale = float(law.scale)
            return MomentInference("count", "noise", float(point), n, 0.0, top, scale, split=split)
        raise ValidationError(
            f"inference: the count's interval reads the discrete Laplace noise law; "
            f"{mech.name} releases no integer count: use mechanism='auto' or inference='none'"
        )
    return CountInference(inference, float(point), n, float(r), split=split)


def lattice_points(domain: Domain) -> int | None:
    """The number of points of the data's own lattice (``resolution`` given: ties
    possible), for the quantile ends that hold for any data; None on the default lattice."""
    if domain.resolution is None:
        return None
    from privest.mechanisms.profiles.lattice import LatticeGrid

    grid = LatticeGrid.for_bounds(*domain.interval(), domain.resolution)
    return grid.kb - grid.ka + 1


def _tied_counts(
    x: Any, epsilon: float, n: int, q: float, domain: Domain, release: Release, alpha: float
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The numbers of records on the lower and the upper bound (after clipping), each
    released by the discrete Laplace count with its share of ``epsilon``
    (:func:`~privest.intervals.ranks.count_shares`): their upper confidence bounds
    (:func:`~privest.intervals.ranks.tied_upper`) and the released counts."""
    lo, hi = domain.interval()
    records = _records(x)
    upper, released = [], []
    for on_bound, share in zip((records <= lo, records >= hi), count_shares(q), strict=True):
        value, mech = release(
            on_bound,
            "count",
            epsilon=epsilon * share,
            mechanism="discrete_laplace",
            domain=Domain(),
        )
        released.append(int(round(float(value))))
        upper.append(tied_upper(float(value), float(mech.noise_law(n).p), n, alpha))
    return (upper[0], upper[1]), (released[0], released[1])


def _ends(x: Any, ends: Any, n: int, domain: Domain, clip: bool, release: Release) -> list:
    """The lower and the upper end: x_(rank) by the piecewise Laplace staircase with the
    end's epsilon, or the bound where the plan gives no rank."""
    lo, hi = domain.interval()
    end_kw = {"domain": domain, "clip": clip, "target": "rank"}
    values = []
    for rank, eps, bound in (
        (ends.lower_rank, ends.lower_epsilon, lo),
        (ends.upper_rank, ends.upper_epsilon, hi),
    ):
        if rank is None:
            values.append(bound)
            continue
        end_kw["quantile"] = rank_level(rank, n)  # the target is x_(rank) exactly
        value, _ = release(x, "quantile", epsilon=eps, mechanism="piecewise_laplace", **end_kw)
        values.append(float(value))
    return values


def _order(
    x: Any,
    statistic: str,
    split: dict[str, float],
    n: int,
    domain: Domain,
    mechanism: str,
    inference: str,
    release: Release,
    alpha: float,
    kw: dict[str, Any],
) -> tuple[PrivateStatistic, Any]:
    """The point, the counts of records on the bounds, then the two ends (module docstring;
    :func:`~privest.intervals.ranks.endpoint_plan` may replace an end by its bound and give
    the other all of the ends' epsilon; where no end can be released whatever the counts,
    the point gets everything, and where the counts rule both ends out, the ends' share is
    left unspent and labelled so)."""
    q = 0.5 if statistic == "median" else float(kw["quantile"])
    centre = quantile_target(q, n) / 2  # the point's target rank: (n + 1)/2 for the median
    points = lattice_points(domain)
    # none on the bounds (or, on the data's own lattice, any data)
    ends = endpoint_plan(n, q, split["ends"], alpha, inference, centre, points=points)
    if ends.lower_rank is None and ends.upper_rank is None:
        split = {"point": sum(split.values())}
    from privest.mechanisms.profiles.lattice import shared_selection

    with shared_selection(x):  # the point and the ends read their windows from one pass
        point, _ = release(x, statistic, epsilon=split["point"], mechanism=mechanism, **kw)
        if "bound counts" in split:  # the point's release has checked the records
            tied, far = _tied_counts(x, split["bound counts"], n, q, domain, release, alpha)
            ends = endpoint_plan(n, q, split["ends"], alpha, inference, centre, tied, far)
        values = _ends(x, ends, n, domain, kw["clip"], release)
    low, high = min(values), max(values)  # two independent draws may cross: sort them
    label = {k: split[k] for k in ("point", "bound counts") if k in split}
    for name, eps in (("lower end", ends.lower_epsilon), ("upper end", ends.upper_epsilon)):
        if eps > 0:
            label[name] = eps
    if "ends" in split and ends.lower_rank is None and ends.upper_rank is None:
        label["unspent"] = split["ends"]
    return point, OrderInference(
        statistic if statistic == "median" else f"quantile {q:g}",
        inference,
        alpha,
        low,
        high,
        ends.lower_rank,
        ends.upper_rank,
        split=label,
    )

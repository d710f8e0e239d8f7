"""Private statistics of data held by Dask: the backend's implementation of
:func:`privest.models.statistics.statistic_law` and ``record_count`` (paper 002).

The in-memory entry points (``private_statistic`` and the ``private_*`` functions) choose the
mechanism, charge the budget and draw the release; this module only builds the same law from
the partitions, registered for Dask arrays, Series and one-column DataFrames:

* mechanisms of statistics that decompose (Laplace, discrete Laplace: count, sum, mean,
  variance): each partition returns the exact integer totals of :func:`~privest.mechanisms.
  profiles.exact.exact_totals`; their sum is the in-memory totals exactly (integers), and the
  mechanism's own ``law_from_totals`` finishes: the same law and, seeded, the same release;
* lattice order-statistic mechanisms (piecewise Laplace and inverse sensitivity on the
  public lattice, permute-and-flip: medians and quantiles): the law reads only the snapped
  order statistics of ranks ``first .. last`` (:func:`~privest.mechanisms.profiles.lattice.
  order_window` with the mechanism's ``levels`` and rank target), found by exact distributed
  selection; the mechanism's ``law_from_profile`` finishes. Histogram passes over the
  lattice indices narrow the range that holds those ranks, then each partition returns the
  distinct indices in it with their counts.
* any other mechanism is refused with the reason (its law needs every record at once).

What moves to the client: integer totals, histogram counts, and the distinct lattice
values of the final narrow range with their counts: the range is narrowed until it holds
at most :data:`SELECT_LIMIT` records or lattice values, or until the wanted ranks span all
its buckets (then the buckets between the wanted ranks hold at most those ranks' records).
These are the neighbours of the quantile the mechanism reads, gathered on the curator's
client (central model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np

from privest.errors import ValidationError
from privest.mechanisms.profiles.exact import exact_totals
from privest.mechanisms.profiles.lattice import (
    LatticeGrid,
    _check_data,
    order_window,
    profile_from_order_statistics,
)
from privest.mechanisms.statistic import StatisticMechanism
from privest.models.statistics import record_count, statistic_law
from privest.registry import statistic_spec
from privest.scale.fit import _tree_sum
from privest.validation import check_real_data

__all__ = ["SELECT_LIMIT", "dask_partitions", "read_column", "select_order_statistics"]

#: buckets of a histogram pass
BUCKETS = 4096
#: the final range is gathered once it holds at most this many records or lattice values
SELECT_LIMIT = 1 << 16


def dask_partitions(x: Any) -> list[Any]:
    """The partitions of ``x`` as delayed 1-D inputs: a Dask array, Series or one-column
    DataFrame (:func:`read_column` reads one from Parquet)."""
    if isinstance(x, dd.DataFrame):
        if len(x.columns) != 1:
            raise ValidationError(
                f"x: the frame has {len(x.columns)} columns; select one column, e.g. frame['age']"
            )
    if isinstance(x, (dd.DataFrame, dd.Series)):
        return list(x.to_delayed())
    if x.ndim != 1:
        raise ValidationError(f"x: a 1-D Dask array is needed, got {x.ndim} dimensions")
    return list(x.to_delayed().ravel())


def read_column(path: str | Path, column: str) -> dd.Series:
    """One column of a Parquet file or folder as a Dask Series (the CLI's ``--engine dask``)."""
    return dd.read_parquet(str(path), columns=[column])[column]


def _vector(part: Any) -> np.ndarray:
    """A partition as floats; complex, text and mixed values are refused, as in memory."""
    arr = np.asarray(part)
    check_real_data(arr, "x")
    return arr.astype(float).ravel()


def _add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {k: a[k] + b[k] for k in a}


def _reduce(func: Any, parts: list[Any], *args: Any) -> Any:
    tasks = [dask.delayed(func, pure=True)(p, *args) for p in parts]
    return dask.compute(_tree_sum(tasks, _add))[0]


# ------------------------------------------------------------- count, sum, mean, variance
def _totals(part: Any, statistic: str, bounds: Any, clip: bool) -> dict[str, int]:
    arr = _vector(part)
    if arr.size == 0:
        return {"n": 0, "clipped": 0, "t1": 0, "t2": 0}
    return {"t2": 0, **exact_totals(arr, statistic, bounds, clip=clip)}


# ------------------------------------------------------------------- median, quantiles
def _histogram(
    part: Any, grid: LatticeGrid, bounds: tuple[float, float], clip: bool, lo: int, width: int
) -> dict[str, Any]:
    """Counts of the partition's lattice indices in buckets ``[lo + b w, lo + (b+1) w)``,
    the indices below ``lo`` and (first pass) n and the clipped count."""
    arr = _vector(part)
    if arr.size == 0:
        return {"n": 0, "clipped": 0, "below": 0, "counts": np.zeros(BUCKETS, np.int64)}
    arr, clipped = _check_data(arr, bounds[0], bounds[1], clip)
    k = grid.snap(arr).astype(np.int64)
    b = (k - lo) // width
    inside = (b >= 0) & (b < BUCKETS)
    return {
        "n": int(arr.size),
        "clipped": clipped,
        "below": int(np.count_nonzero(b < 0)),
        "counts": np.bincount(b[inside], minlength=BUCKETS),
    }


def _distinct(
    part: Any, grid: LatticeGrid, bounds: tuple[float, float], clip: bool, lo: int, hi: int
) -> dict[str, Any]:
    """The distinct lattice indices of the partition in ``[lo, hi]`` with their counts."""
    arr = _vector(part)
    if arr.size == 0:
        return {"values": np.zeros(0, np.int64), "counts": np.zeros(0, np.int64)}
    arr, _ = _check_data(arr, bounds[0], bounds[1], clip)
    k = grid.snap(arr).astype(np.int64)
    values, counts = np.unique(k[(k >= lo) & (k <= hi)], return_counts=True)
    return {"values": values, "counts": counts}


def _concat(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    values = np.concatenate([a["values"], b["values"]])
    counts = np.concatenate([a["counts"], b["counts"]])
    merged, inverse = np.unique(values, return_inverse=True)
    return {"values": merged, "counts": np.bincount(inverse, weights=counts).astype(np.int64)}


def select_order_statistics(
    parts: list[Any],
    grid: LatticeGrid,
    bounds: tuple[float, float],
    window: Any,
    clip: bool = False,
) -> tuple[np.ndarray, int, int, int]:
    """Exact distributed selection of snapped order statistics.

    ``window(n)`` gives the 1-based ranks ``(first, last)`` wanted once n is known. Returns
    ``(indices of x_(first) .. x_(last), n, n_clipped, passes)``: the same values as
    ``np.sort(grid.snap(x))[first - 1 : last]`` on all the records.
    """
    lo, hi, below = grid.ka, grid.kb, 0
    first = last = n = clipped = None
    passes = 0
    while True:
        width = -(-(hi - lo + 1) // BUCKETS)
        h = _reduce(_histogram, parts, grid, bounds, clip, lo, width)
        passes += 1
        if first is None:
            n, clipped = h["n"], h["clipped"]
            if n == 0:
                raise ValidationError("x: is empty; need at least one record")
            first, last = window(n)
        cum = below + np.cumsum(h["counts"])
        b1 = int(np.searchsorted(cum, first, side="left"))
        b2 = int(np.searchsorted(cum, last, side="left"))
        below = below if b1 == 0 else int(cum[b1 - 1])
        new_lo, new_hi = lo + b1 * width, min(hi, lo + (b2 + 1) * width - 1)
        stuck = (new_lo, new_hi) == (lo, hi)  # the wanted ranks span every bucket
        lo, hi = new_lo, new_hi
        held = int(cum[b2]) - below
        if stuck or held <= SELECT_LIMIT or hi - lo + 1 <= SELECT_LIMIT:
            break
    tasks = [dask.delayed(_distinct, pure=True)(p, grid, bounds, clip, lo, hi) for p in parts]
    got = dask.compute(_tree_sum(tasks, _concat))[0]
    passes += 1
    cumc = below + np.cumsum(got["counts"])
    ranks = np.arange(first, last + 1)
    return got["values"][np.searchsorted(cumc, ranks, side="left")], n, clipped, passes


# ------------------------------------------------------------------- the backend's laws
def _law_from_partitions(mech: StatisticMechanism, parts: list[Any]) -> tuple[Any, int]:
    if hasattr(mech, "law_from_totals") and statistic_spec(mech.statistic).decomposes:
        totals = _reduce(_totals, parts, mech.spec, mech.bounds, mech.clip)
        if totals["n"] == 0 and mech.domain.n_public:
            raise ValidationError("x: is empty; need at least one record")
        return mech.law_from_totals(totals), totals["n"]
    if hasattr(mech, "law_from_profile") and getattr(mech, "on_lattice", True):
        return _lattice_law(mech, parts)
    raise ValidationError(
        f"mechanism: {mech.name} for the {mech.statistic} is not available out of core (its "
        "law needs every record at once); use mechanism='auto' or one of the lattice or "
        "decomposable mechanisms (docs/scale-out.md)"
    )


def _lattice_law(mech: Any, parts: list[Any]) -> tuple[Any, int]:
    """A lattice order-statistic mechanism's law on partitioned data (module docstring)."""
    a, b = mech.bounds

    def window(n: int) -> tuple[int, int]:
        return order_window(mech.spec, None, n, mech.levels, inward=mech.inward(n))[1:]

    values, n, clipped, _ = select_order_statistics(parts, mech.grid, (a, b), window, mech.clip)
    prof = profile_from_order_statistics(
        values,
        mech.spec,
        mech.grid,
        n=n,
        levels=mech.levels,
        n_clipped=clipped,
        inward=mech.inward(n),
    )
    return mech.law_from_profile(prof), n


@statistic_law.register(da.Array)
@statistic_law.register(dd.Series)
@statistic_law.register(dd.DataFrame)
def _dask_statistic_law(x: Any, mech: StatisticMechanism) -> tuple[Any, int]:
    return _law_from_partitions(mech, dask_partitions(x))


@record_count.register(da.Array)
@record_count.register(dd.Series)
@record_count.register(dd.DataFrame)
def _dask_record_count(x: Any) -> int:
    parts = dask_partitions(x)
    return int(sum(dask.compute(*[dask.delayed(np.size)(p) for p in parts])))

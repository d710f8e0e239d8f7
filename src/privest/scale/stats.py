"""Private statistics of data held by a Dask cluster (paper 002; the in-memory mechanisms).

* count, sum, mean, variance (Laplace with global sensitivity, float-safe on its lattice):
  each partition returns the exact integer totals of :func:`~privest.mechanisms.exact.
  exact_totals`; their sum is the in-memory totals exactly (integers), so the statistic,
  the law and, for the same seed, the release are the in-memory ones.
* median and quantiles (piecewise Laplace or inverse sensitivity on the public lattice):
  the law reads only the snapped order statistics of ranks ``first .. last``
  (:func:`~privest.mechanisms.lattice_profile.order_window`). They are found by exact
  distributed selection: histogram passes over the lattice indices narrow the range that
  holds those ranks, then each partition returns the distinct indices in it with their
  counts, from which the order statistics are read exactly. Same profile, same law, same
  release for the same seed as in memory.

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
import numpy as np

from privest.accounting.budget import Budget, charge
from privest.errors import ValidationError
from privest.mechanisms.exact import exact_totals, statistic_from_totals
from privest.mechanisms.laplace import LaplaceLaw, LaplaceMechanism
from privest.mechanisms.lattice_plm import LatticeProfileLaw, truncation_levels
from privest.mechanisms.lattice_profile import (
    LatticeGrid,
    _check_data,
    order_window,
    profile_from_order_statistics,
)
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.released import PrivateStatistic
from privest.models.statistics import statistic_mechanism
from privest.rng import resolve_rng
from privest.scale.fit import _tree_sum
from privest.validation import check_real_data

__all__ = ["SELECT_LIMIT", "dask_partitions", "private_statistic_dask", "select_order_statistics"]

#: buckets of a histogram pass
BUCKETS = 4096
#: the final range is gathered once it holds at most this many records or lattice values
SELECT_LIMIT = 1 << 16


def dask_partitions(x: Any, column: str | None = None) -> list[Any]:
    """The partitions of ``x`` as delayed 1-D inputs: a Dask array, Series or one-column
    DataFrame, or a Parquet path (``column`` names the column to read)."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(x, (str, Path)):
        if not Path(x).exists():
            raise ValidationError(
                f"x: {str(x)!r} does not exist; expected a Parquet file or folder"
            )
        x = dd.read_parquet(str(x), columns=None if column is None else [column])
    if isinstance(x, dd.DataFrame):
        if column is not None:
            x = x[column]
        elif len(x.columns) != 1:
            raise ValidationError(
                f"x: the frame has columns {list(x.columns)}; name one with column="
            )
    if isinstance(x, (dd.DataFrame, dd.Series)):
        return list(x.to_delayed())
    if isinstance(x, da.Array):
        if x.ndim != 1:
            raise ValidationError(f"x: a 1-D Dask array is needed, got {x.ndim} dimensions")
        return list(x.to_delayed().ravel())
    raise ValidationError(
        f"x: got {type(x).__name__}; pass a Dask array, Series or DataFrame, or a Parquet path"
    )


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
    out = {"t2": 0, **exact_totals(arr, statistic, bounds, clip=clip)}
    return out


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


# ------------------------------------------------------------------------ entry point
def private_statistic_dask(
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
    column: str | None = None,
) -> PrivateStatistic:
    """:func:`~privest.models.statistics.private_statistic` on data held by Dask (a Dask
    array, Series or one-column DataFrame, or a Parquet path and ``column``): the same
    mechanism, law and, for the same seed, the same release as in memory (module
    docstring). Counts take 0/1 indicators."""
    mech = statistic_mechanism(
        statistic,
        epsilon=epsilon,
        bounds=bounds,
        mechanism=mechanism,
        quantile=quantile,
        clip=clip,
        resolution=resolution,
    )
    lattice = isinstance(mech, PiecewiseLaplace) and mech.on_lattice
    if not (isinstance(mech, LaplaceMechanism) or lattice):
        raise ValidationError(
            f"mechanism: {mech.name} for the {mech.statistic} is not available out of core; "
            "use mechanism='auto' (Laplace for sums, the lattice piecewise Laplace for "
            "medians and quantiles)"
        )
    charge(budget, mech.guarantee, label=mech.label, mechanism=mech.name)  # before x is read
    parts = dask_partitions(x, column)
    gen = resolve_rng(rng)
    if isinstance(mech, LaplaceMechanism):
        totals = _reduce(_totals, parts, mech._spec, mech.bounds, mech.clip)
        if totals["n"] == 0:
            raise ValidationError("x: is empty; need at least one record")
        stat = statistic_from_totals(mech._spec, totals, mech.bounds)
        law = LaplaceLaw(
            stat.exact,
            stat.sensitivity,
            mech.epsilon,
            output_range=stat.output_range,
            statistic=mech._spec,
        )
        law.n_clipped = stat.n_clipped
        return mech.release_from_law(law, totals["n"], gen)
    law, n = lattice_law_dask(mech, parts)
    return mech.release_from_law(law, n, gen)


def lattice_law_dask(mech: PiecewiseLaplace, parts: list[Any]) -> tuple[LatticeProfileLaw, int]:
    """The curator's lattice law of a median or quantile mechanism on partitioned data."""
    grid = mech.grid
    levels = truncation_levels(mech.epsilon, grid.kb - grid.ka + 1)
    a, b = (float(v) for v in np.asarray(mech.bounds).ravel())

    def window(n: int) -> tuple[int, int]:
        return order_window(mech._spec, None, n, levels, inward=mech.inward(n))[1:]

    values, n, clipped, _ = select_order_statistics(parts, grid, (a, b), window, mech.clip)
    prof = profile_from_order_statistics(
        values, mech._spec, grid, n=n, levels=levels, n_clipped=clipped, inward=mech.inward(n)
    )
    return LatticeProfileLaw(prof, mech.epsilon, mech._lattice_shape), n

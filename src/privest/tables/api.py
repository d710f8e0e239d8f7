"""``pv.tabulate``: a private table of group-by statistics, a person as the privacy unit,
with an interval on every cell (docs/tables.md).

::

    table = pv.tabulate(df, by=["region", "age_group"], unit="person_id", max_groups=3,
                        max_rows=5, aggregates={"n": "count", "income": ["mean", "median"]},
                        bounds={"income": (0, 2e5)}, epsilon=1.0, delta=1e-6)

Steps: the public plan (:mod:`privest.tables.plan`) is built and the budget charged before
the data are read; each person's contribution is bounded (:mod:`privest.tables.totals`);
the cells are selected privately unless ``keys=`` gives them (:mod:`privest.tables.
selection`); the primitives get float-safe noise (:mod:`privest.tables.noise`) and the
aggregates, their standard errors and intervals are post-processing
(:mod:`privest.tables.intervals`). The data may be a pandas DataFrame or, with the
``dask`` extra, a Dask DataFrame (the backend registers :func:`table_totals`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from privest.accounting.budget import Budget
from privest.backends import dispatch
from privest.errors import ValidationError
from privest.rng import resolve_rng, rng_kind
from privest.tables.intervals import count_cells, mean_cells, quantile_cells, sum_cells
from privest.tables.noise import release_all
from privest.tables.plan import Plan, make_plan
from privest.tables.selection import optimal_select
from privest.tables.totals import CellTotals, cell_totals

__all__ = ["PrivateTable", "release_table", "table_totals", "tabulate"]

#: the columns of each aggregate, after its name
SUFFIXES = ("", "_se", "_lower", "_upper")


class PrivateTable(pd.DataFrame):
    """A released table: one row per released cell, the keys then, per aggregate, the
    estimate and its ``_se``, ``_lower`` and ``_upper`` (a ``1 - alpha`` interval).

    ``.guarantee`` (the whole table's, per privacy unit), ``.plan`` (the public plan) and
    ``.randomness`` survive pandas operations (``_metadata``)."""

    _metadata = ["guarantee", "plan", "randomness"]

    @property
    def _constructor(self) -> type[PrivateTable]:
        return PrivateTable

    def _repr_html_(self) -> str:
        """Notebook view: the released cells with their intervals, and the guarantee."""
        from privest.reports.reprs import table_html

        return table_html(self, getattr(self, "guarantee", None))


def _public_keys(keys: Any, by: tuple[str, ...]) -> pd.DataFrame | None:
    if keys is None:
        return None
    table = keys if isinstance(keys, pd.DataFrame) else pd.DataFrame(keys, columns=list(by))
    missing = [c for c in by if c not in table.columns]
    if missing:
        raise ValidationError(f"keys: the public key table lacks the key column(s) {missing}")
    table = table[list(by)].reset_index(drop=True)
    if table.duplicated().any() or not len(table):
        raise ValidationError("keys: the public key table must list each key once (and some)")
    return table


@dispatch
def table_totals(
    data: Any, plan: Plan, keys: pd.DataFrame | None, rng: np.random.Generator, clip: bool
) -> CellTotals:
    """Bound the contributions and total each cell: in memory for a pandas DataFrame; a
    backend registers its own for the data it holds (privest.scale: Dask). NON-PRIVATE."""
    if not isinstance(data, pd.DataFrame):
        raise ValidationError(f"data: a {type(data).__name__} is not a pandas (or Dask) DataFrame")
    return cell_totals(data, plan, keys, rng, clip)


def _sorted(keys: pd.DataFrame, index: np.ndarray, public: bool) -> np.ndarray:
    """The order of the released cells ``index`` (rows of ``keys``): the public key
    table's, else by key (never the data's order of appearance, which is not public)."""
    if public:
        return np.arange(index.size)
    try:
        return np.lexsort([keys[c].to_numpy()[index] for c in reversed(keys.columns)])
    except TypeError:  # keys of mixed types: by their text
        text = keys.astype(str)
        return np.lexsort([text[c].to_numpy()[index] for c in reversed(text.columns)])


def _select(totals: CellTotals, plan: Plan, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """The cells released (their rows in ``totals``) and the primitives already drawn (the
    thresholded rows)."""
    drawn: dict[str, np.ndarray] = {}
    if plan.selection == "threshold":
        noise = plan.primitives["rows"].noise
        units = noise.to_grid(totals.rows) + noise.sample(len(totals.rows), rng)
        keep = units >= plan.threshold_units
        drawn["rows"] = units[keep].astype(float) * noise.step
    elif plan.selection == "optimal":
        keep = optimal_select(totals.people, *plan.selection_params, rng)
    else:
        return np.arange(len(totals.rows)), drawn
    return np.flatnonzero(keep), drawn


def release_table(totals: CellTotals, plan: Plan, rng: np.random.Generator) -> PrivateTable:
    """Select the cells, add the noise and finish every aggregate (module docstring)."""
    index, drawn = _select(totals, plan, rng)
    order = _sorted(totals.keys, index, plan.public_keys)
    totals = totals.take(index[order])  # one take: the selection, then the order
    if "rows" in drawn:
        drawn["rows"] = drawn["rows"][order]
    prims = plan.primitives
    noisy = [k for k, p in prims.items() if p.noise is not None and k not in drawn]
    units = [totals.rows if k == "rows" else totals.sums[k] for k in noisy]
    released = release_all([(prims[k].noise, u) for k, u in zip(noisy, units, strict=True)], rng)
    drawn.update(zip(noisy, released, strict=True))
    for key, prim in prims.items():
        if prim.kind == "point":
            drawn[key] = sample_point(totals, prim, rng)
    rows = (drawn["rows"], prims["rows"].noise) if "rows" in prims else None
    names, columns = [], []
    for agg in plan.aggregates:
        names += [agg.output + suffix for suffix in SUFFIXES]
        columns += _aggregate(agg, plan, totals, drawn, rows, rng)
    # the float columns as one new block (no column aliases an array of another), then
    # one concatenation with the keys: no insertion per column (their cost grows)
    values = pd.DataFrame(np.column_stack(columns), columns=names, index=totals.keys.index)
    out = PrivateTable(pd.concat([totals.keys, values], axis=1))
    out.guarantee, out.plan, out.randomness = plan.guarantee, plan, rng_kind(rng)
    return out


def sample_point(totals: CellTotals, prim: Any, rng: np.random.Generator) -> np.ndarray:
    from privest.mechanisms.rank_exponential import sample_rank_em

    return sample_rank_em(totals.hist[prim.column], prim.score, rng)


def _aggregate(agg, plan, totals, drawn, rows, rng) -> tuple[np.ndarray, ...]:
    prims, alpha = plan.primitives, plan.alpha
    if agg.statistic == "count":
        return count_cells(drawn["rows"], prims["rows"].noise, alpha)
    col, bounds = agg.column, plan.bounds.get(agg.column)
    if agg.statistic in ("sum", "mean"):
        key = f"centred:{col}" if rows is not None else f"sum:{col}"
        pair = (drawn[key], prims[key].noise)
        if agg.statistic == "sum":
            return sum_cells(pair[0], pair[1], alpha, bounds, rows)
        sq = prims.get(f"square:{col}")
        square = None if sq is None else (drawn[sq.key], sq.noise)
        return mean_cells(pair, rows, square, alpha, bounds)
    point = prims[f"point:{col}:{agg.quantile}"]
    lower = prims.get(f"lower:{col}:{agg.quantile}")
    ends = None if lower is None else (lower, prims[f"upper:{col}:{agg.quantile}"])
    return quantile_cells(
        (point, drawn[point.key]), ends, totals.hist[col], rows, plan.grids[col], alpha, rng
    )


def tabulate(
    data: Any,
    *,
    by: str | list[str],
    aggregates: Mapping[str, Any],
    epsilon: float,
    delta: float = 0.0,
    unit: str | None = None,
    max_groups: int | None = None,
    max_rows: int | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    keys: Any = None,
    noise: str = "auto",
    inference: str = "population",
    alpha: float = 0.05,
    resolution: Mapping[str, float] | None = None,
    clip: bool = False,
    budget: Budget | None = None,
    rng: np.random.Generator | int | None = None,
) -> PrivateTable:
    """A private table (module docstring; docs/tables.md).

    ``by``: the key columns; ``aggregates``: output name or column -> statistic(s)
    (``"count"``, ``"sum"``, ``"mean"``, ``"median"``, ``"quantile:Q"``); ``unit``: the
    person-id column (``None``: one record is the unit), with at most ``max_groups``
    cells and ``max_rows`` rows per cell per person (default 1 each); ``bounds``: public
    ``(lo, hi)`` per value column; ``keys``: a public key table (every key gets a row, no
    delta spent on selection) or ``None`` (cells selected privately, needs ``delta > 0``);
    ``noise``: ``"laplace"``, ``"gaussian"`` or ``"auto"`` (the smaller variance, public
    rule); ``inference``: ``"population"`` (intervals on every cell, at level 1 - alpha)
    or ``"none"`` (estimates only, the whole budget on them); ``resolution``: the public
    lattice step of a quantile's column. ``budget`` is charged before the data are read.
    """
    plan = make_plan(
        by=by,
        unit=unit,
        max_groups=max_groups,
        max_rows=max_rows,
        aggregates=aggregates,
        bounds=bounds,
        public_keys=keys is not None,
        epsilon=epsilon,
        delta=delta,
        noise=noise,
        inference=inference,
        alpha=alpha,
        resolution=resolution,
    )
    key_table = _public_keys(keys, plan.by)
    if budget is not None:
        if not isinstance(budget, Budget):
            raise ValidationError(f"budget: a {type(budget).__name__} is not a privest.Budget")
        label = f"table by {', '.join(plan.by)}"
        budget.charge_event(plan.event, label=label, mechanism="tabulate")
    gen = resolve_rng(rng)
    totals = table_totals(data, plan, key_table, gen, bool(clip))
    return release_table(totals, plan, gen)

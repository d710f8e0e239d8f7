"""Accuracy of a group-by table's cells before any data (docs/accuracy.md, "Tables").

The prediction reads the table's own public plan (:func:`privest.tables.plan.make_plan`,
the one :func:`privest.tabulate` releases with), so it cannot drift from the release: the
split of epsilon (and delta) over the primitives and the selection, the noise (Laplace or
Gaussian, ``noise="auto"`` choosing as the table does) and its grid. Per cell:

* a count is the noisy number of rows: its error is that noise;
* a sum is ``c rows + centred`` (``c`` the bounds' midpoint) when rows are released, else
  the noisy raw sum;
* a mean ``c + centred / rows`` is predicted to first order around a stated cell size
  ``cell_n`` and mean ``m`` (default: the bounds' centre):
  ``error ~ (e_centred - (m - c) e_rows) / cell_n``;
* a median or quantile is the exponential mechanism over the column's public lattice with
  the rank score (:mod:`privest.mechanisms.rank_exponential`, the plan's ``point``
  primitive: its epsilon share, its lattice, its sensitivity ``max_rows``). Its error
  depends on the cell's data: as for :func:`~privest.accuracy.predict_statistic`, the
  exact law of the release (:class:`~privest.mechanisms.rank_exponential.RankExponentialLaw`)
  is computed on ``draws`` cells of ``cell_n`` rows drawn with fixed seeds from the stated
  shape (``reference``, :class:`~privest.accuracy.base.ReferenceData`), and averaged.

The discrete noises are on a grid of at most 2^-10 of their scale, so their laws are taken
as the continuous Laplace or normal law of the same variance. The prediction is for a
released cell; with keys that are not public, whether a cell is released at all is the
selection's (docs/tables.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privest.accounting.events import Event
from privest.accuracy.base import (
    Accuracy,
    LaplaceSumLaw,
    MixtureErrorLaw,
    NormalErrorLaw,
    ReferenceData,
    check_alpha,
)
from privest.errors import ValidationError
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.rank_exponential import RankExponentialLaw

__all__ = ["AGGREGATES", "parse_aggregate", "predict_table"]

AGGREGATES = ("count", "sum", "mean", "median", "quantile")
#: the names of the one key column, the unit and the count in the plan built for a prediction
CELL, PERSON, COUNT = "_cell", "_person", "_count"


def parse_aggregate(spec: str) -> tuple[str, str | None]:
    """``"count"``, ``"sum:income"``, ``"median:income"``, ``"quantile:0.9:income"`` ->
    (the statistic as :func:`privest.tabulate` names it, column)."""
    kind, _, column = str(spec).partition(":")
    if kind == "quantile":
        level, _, column = column.partition(":")
        kind = f"quantile:{level}"
    if kind.partition(":")[0] not in AGGREGATES or (kind == "count") != (column == ""):
        raise ValidationError(
            f"aggregates: {spec!r} is not accepted; use count, sum:COLUMN, mean:COLUMN, "
            "median:COLUMN or quantile:Q:COLUMN"
        )
    return kind, column or None


def predict_table(
    aggregates: list[str],
    *,
    epsilon: float,
    max_groups: int,
    max_rows: int,
    cell_n: float,
    bounds: dict[str, tuple[float, float]] | None = None,
    noise: str = "auto",
    delta: float = 0.0,
    cell_mean: dict[str, float] | None = None,
    alpha: float = 0.05,
    public_keys: bool = True,
    inference: str = "population",
    resolution: dict[str, float] | None = None,
    reference: Any = None,
) -> tuple[list[Accuracy], list[Event]]:
    """The predicted error of each aggregate (``"count"``, ``"sum:C"``, ``"mean:C"``,
    ``"median:C"``, ``"quantile:Q:C"``) in one cell of ``cell_n`` rows, and the privacy
    event of the whole table, for the public inputs of :func:`privest.tabulate` (module
    docstring). ``resolution`` is the lattice step of a quantile's column (as for
    ``tabulate``); ``reference`` states the spread of a cell's values for its medians and
    quantiles (:class:`ReferenceData`, a shape name or a mapping; default uniform)."""
    from privest.tables.plan import make_plan

    alpha = check_alpha(alpha)
    ref = ReferenceData.of(reference)
    if not (isinstance(cell_n, (int, float)) and cell_n > 0 and math.isfinite(cell_n)):
        raise ValidationError(f"cell_n: {cell_n!r} must be a number > 0 (a guessed cell size)")
    specs = [parse_aggregate(a) for a in aggregates]
    wanted: dict[str, list[str]] = {}
    for kind, col in specs:
        wanted.setdefault(col or COUNT, []).append(kind)
    missing = [c for c in wanted if c != COUNT and (bounds is None or c not in bounds)]
    if missing:
        raise ValidationError(f"bounds: the public (lo, hi) of {missing} is needed")
    plan = make_plan(
        by=(CELL,),
        aggregates=wanted,
        public_keys=public_keys,
        unit=PERSON,
        max_groups=max_groups,
        max_rows=max_rows,
        bounds=None if bounds is None else {c: bounds[c] for c in wanted if c != COUNT},
        epsilon=epsilon,
        delta=delta,
        noise=noise,
        inference=inference,
        alpha=alpha,
        resolution=resolution,
    )
    prims = plan.primitives
    out = []
    for spec, (kind, col) in zip(aggregates, specs, strict=True):
        rows = prims.get("rows")
        if kind.startswith(("median", "quantile")):
            res = (resolution or {}).get(col)
            out.append(_quantile(spec, plan, kind, col, cell_n, ref, alpha, res))
            continue
        if kind == "count":
            out.append(_cell(spec, [rows.noise], [1.0], plan.noise, alpha, (0.0, cell_n), ""))
            continue
        lo, hi = bounds[col]
        c = (lo + hi) / 2.0
        if kind == "sum":
            if rows is None:
                noises, weights = [prims[f"sum:{col}"].noise], [1.0]
            else:
                noises, weights = [prims[f"centred:{col}"].noise, rows.noise], [1.0, abs(c)]
            plaus = (cell_n * min(lo, 0.0), cell_n * max(hi, 0.0))
            out.append(_cell(spec, noises, weights, plan.noise, alpha, plaus, ""))
            continue
        m = (cell_mean or {}).get(col, c)
        noises = [prims[f"centred:{col}"].noise, rows.noise]
        weights = [1.0 / cell_n, abs(m - c) / cell_n]
        note = f"first order around a cell of {cell_n:g} rows with mean {m:g}"
        out.append(_cell(spec, noises, weights, plan.noise, alpha, (lo, hi), note))
    return out, [plan.event]


def _quantile(
    spec: str,
    plan: Any,
    kind: str,
    col: str,
    cell_n: float,
    ref: ReferenceData,
    alpha: float,
    resolution: float | None,
) -> Accuracy:
    """The exact law of a cell's median or quantile on reference cells (module docstring)."""
    level = 0.5 if kind == "median" else float(kind.partition(":")[2])
    agg = next(
        a for a in plan.aggregates if a.column == col and a.quantile is not None
        and math.isclose(a.quantile, level)
    )  # fmt: skip
    score = plan.primitives[f"point:{col}:{agg.quantile}"].score
    grid = plan.grids[col]
    size = max(round(cell_n), 1)
    laws = []
    for x in ref.samples(size, plan.bounds[col], resolution):
        value = float(np.quantile(x, agg.quantile, method="inverted_cdf"))
        laws.append(RankExponentialLaw(grid.snap(x).astype(np.int64), grid, score, value))
    note = f"a cell of {size} rows: " + ref.describe(plan.bounds[col], resolution)
    return Accuracy(
        f"{spec} per cell", MixtureErrorLaw(laws), alpha, "rank_exponential", None, note,
        plan.bounds[col],
    )  # fmt: skip


def _cell(
    spec: str,
    noises: list[Any],
    weights: list[float],
    kind: str,
    alpha: float,
    plausible: tuple[float, float],
    note: str,
) -> Accuracy:
    """The error law of a weighted sum of independent cell noises (module docstring)."""
    sds = [w * math.sqrt(n.variance) for n, w in zip(noises, weights, strict=True)]
    if kind == "gaussian":
        law: Any = NormalErrorLaw(math.hypot(*sds))
    elif len(sds) == 1 or sds[1] == 0:
        law = LaplaceLaw(0, sds[0] / math.sqrt(2.0), 1.0, statistic=spec)  # Var = 2 b^2
    else:
        law = LaplaceSumLaw(sds[0] / math.sqrt(2.0), sds[1] / math.sqrt(2.0))
    return Accuracy(f"{spec} per cell", law, alpha, kind, None, note, plausible)

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
  ``error ~ (e_centred - (m - c) e_rows) / cell_n``.

The discrete noises are on a grid of at most 2^-10 of their scale, so their laws are taken
as the continuous Laplace or normal law of the same variance. The prediction is for a
released cell; with keys that are not public, whether a cell is released at all is the
selection's (docs/tables.md).
"""

from __future__ import annotations

import math
from typing import Any

from privest.accounting.events import Event
from privest.accuracy.base import Accuracy, LaplaceSumLaw, NormalErrorLaw, check_alpha
from privest.errors import ValidationError
from privest.mechanisms.laplace import LaplaceLaw

__all__ = ["AGGREGATES", "parse_aggregate", "predict_table"]

AGGREGATES = ("count", "sum", "mean")
#: the names of the one key column, the unit and the count in the plan built for a prediction
CELL, PERSON, COUNT = "_cell", "_person", "_count"


def parse_aggregate(spec: str) -> tuple[str, str | None]:
    """``"count"``, ``"sum:income"``, ``"mean:income"`` -> (aggregate, column)."""
    kind, _, column = str(spec).partition(":")
    if kind not in AGGREGATES or (kind == "count") != (column == ""):
        raise ValidationError(
            f"aggregates: {spec!r} is not accepted; use count, sum:COLUMN or mean:COLUMN"
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
) -> tuple[list[Accuracy], list[Event]]:
    """The predicted error of each aggregate (``"count"``, ``"sum:C"``, ``"mean:C"``) in
    one cell of ``cell_n`` rows, and the privacy event of the whole table, for the public
    inputs of :func:`privest.tabulate` (module docstring)."""
    from privest.tables.plan import make_plan

    alpha = check_alpha(alpha)
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
    )
    prims = plan.primitives
    out = []
    for spec, (kind, col) in zip(aggregates, specs, strict=True):
        rows = prims.get("rows")
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

"""Private tables of data held by Dask: the backend's implementation of
:func:`privest.tables.api.table_totals` (docs/tables.md, "Scale").

One pass bounds the contributions: the frame is shuffled by the person id, so each
person's rows sit in one partition, and every partition runs the in-memory bounding and
totals (:func:`privest.tables.totals.cell_totals`, the same code) with its own generator
(seeded from the caller's). The per-partition totals are integers and add up exactly
(:func:`~privest.tables.totals.merge_totals`, a tree reduction); the client then selects,
adds the noise and finishes the table as in memory. What moves to the client: per-cell
integer totals (and the quantile columns' per-cell histograms over the public lattice).
"""

from __future__ import annotations

from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from privest.errors import ValidationError
from privest.tables.api import table_totals
from privest.tables.plan import Plan
from privest.tables.totals import CellTotals, cell_totals, merge_totals

__all__ = ["FAN_IN"]

#: partitions' totals merged per task of the reduction
FAN_IN = 16


def _part(frame: pd.DataFrame, plan: Plan, keys: Any, seed: int, clip: bool) -> CellTotals:
    return cell_totals(frame, plan, keys, np.random.default_rng(seed), clip)


def _merge(parts: list[CellTotals], by: tuple[str, ...]) -> CellTotals:
    return merge_totals(list(parts), by)


@table_totals.register(dd.DataFrame)
def _dask_table_totals(
    data: dd.DataFrame, plan: Plan, keys: Any, rng: np.random.Generator, clip: bool
) -> CellTotals:
    need = [*plan.by, *([plan.unit] if plan.unit else []), *plan.columns]
    absent = [c for c in need if c not in data.columns]
    if absent:
        raise ValidationError(
            f"data: no column(s) {absent}; columns: {list(map(str, data.columns))}"
        )
    frame = data[need]
    if plan.unit is not None:  # each person's rows in one partition
        frame = frame.shuffle(on=plan.unit)
    parts = frame.to_delayed()
    seeds = rng.integers(0, 2**63, size=len(parts))
    tasks = [
        dask.delayed(_part, pure=False)(p, plan, keys, int(s), clip)
        for p, s in zip(parts, seeds, strict=True)
    ]
    while len(tasks) > 1:
        tasks = [
            dask.delayed(_merge, pure=False)(tasks[i : i + FAN_IN], plan.by)
            for i in range(0, len(tasks), FAN_IN)
        ]
    (totals,) = dask.compute(tasks[0])
    return totals

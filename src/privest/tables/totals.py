"""Contribution bounding and the exact per-cell totals of a table (docs/tables.md,
"Bounding").

**Bounding** (:func:`bound_rows`), before any noise: each person keeps at most
``max_groups`` of their cells and at most ``max_rows`` of their rows in each, chosen
uniformly at random: every (person, cell) pair and every row gets an independent random
priority and the lowest ones are kept (a groupby rank, vectorised). Which rows are kept
never depends on their values, and each person's choice depends only on their own rows and
priorities, so the bounded data of two neighbours differ by one person's bounded rows.
Persons within the limits keep everything (sampling them would keep everything too).

**Totals** (:func:`cell_totals`): per cell the number of rows, the number of people, the
sums of the snapped values (:class:`~privest.tables.plan.Primitive`: each record mapped
to an integer ``|v| <= 2^30`` on a public dyadic grid, a fixed record-wise map) and, for
quantiles, the histogram over the public lattice points. Sums are exact: the integers are
split into 21-bit limbs whose float sums stay below 2^53 (at most 2^31 rows). Totals of
disjoint parts add up (:func:`merge_totals`: the Dask backend sums them over partitions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import BoundsError, ValidationError
from privest.tables.plan import MAX_ROWS_TOTAL, Plan

__all__ = ["CellTotals", "bound_rows", "cell_codes", "cell_totals", "merge_totals"]

_LIMB = 21
#: cells x lattice points of the quantile histograms held at once
MAX_HISTOGRAM = 1 << 26


@dataclass
class CellTotals:
    """Exact totals per cell (one row of ``keys`` per cell). NON-PRIVATE: the curator's
    intermediate, never published."""

    keys: pd.DataFrame
    rows: np.ndarray
    people: np.ndarray
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    hist: dict[str, np.ndarray] = field(default_factory=dict)

    def take(self, index: np.ndarray) -> CellTotals:
        return CellTotals(
            self.keys.iloc[index].reset_index(drop=True),
            self.rows[index],
            self.people[index],
            {k: v[index] for k, v in self.sums.items()},
            {k: v[index] for k, v in self.hist.items()},
        )


def _group_rank(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The rank (0, 1, ...) of each entry within its group in a uniformly random order:
    one sort of ``group 2^32 + U``, U a random 32-bit priority per entry (groups below
    2^31)."""
    key = (groups.astype(np.int64) << 32) | rng.integers(0, 2**32, size=groups.size)
    order = np.argsort(key)
    g = groups[order]
    start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[start, g.size])
    rank = np.empty(g.size, dtype=np.int64)
    rank[order] = np.arange(g.size) - np.repeat(start, sizes)
    return rank


def bound_rows(
    cells: np.ndarray,
    persons: np.ndarray | None,
    n_cells: int,
    max_groups: int,
    max_rows: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """(rows kept, people per cell) after bounding (module docstring). ``cells``: the cell
    code of each row (-1: outside the public keys, dropped); ``persons``: the person code
    of each row, or None when one record is the unit."""
    valid = cells >= 0
    if persons is None:
        return valid, np.bincount(cells[valid], minlength=n_cells)
    rows = np.flatnonzero(valid)
    pair = persons[rows].astype(np.int64) * n_cells + cells[rows]
    codes, uniq = pd.factorize(pair, sort=False)
    p_person, p_cell = uniq // n_cells, uniq % n_cells
    keep_pair = np.ones(uniq.size, dtype=bool)
    per_person = np.bincount(p_person)
    over = np.flatnonzero(per_person[p_person] > max_groups)
    if over.size:
        keep_pair[over] = _group_rank(p_person[over], rng) < max_groups
    keep = np.zeros(cells.size, dtype=bool)
    keep[rows] = keep_pair[codes]
    per_pair = np.bincount(codes, minlength=uniq.size)
    big = np.flatnonzero(keep_pair[codes] & (per_pair[codes] > max_rows))
    if big.size:
        keep[rows[big]] = _group_rank(codes[big], rng) < max_rows
    return keep, np.bincount(p_cell[keep_pair], minlength=n_cells)


def cell_codes(df: pd.DataFrame, by: tuple[str, ...], keys: pd.DataFrame | None):
    """(cell code per row, key table): the public key table's order when given (rows with
    other keys get -1), else the keys of the data in order of first appearance."""
    if keys is not None:
        index = pd.MultiIndex.from_frame(keys[list(by)])
        return index.get_indexer(pd.MultiIndex.from_frame(df[list(by)])).astype(np.int64), keys
    if len(by) == 1:
        codes, uniq = pd.factorize(df[by[0]], sort=False, use_na_sentinel=False)
        return codes.astype(np.int64), pd.DataFrame({by[0]: uniq})
    codes = df.groupby(list(by), sort=False, dropna=False, observed=True).ngroup().to_numpy()
    first = np.unique(codes, return_index=True)[1]
    return codes.astype(np.int64), df[list(by)].iloc[first].reset_index(drop=True)


def person_codes(ids: pd.Series) -> np.ndarray:
    """Non-negative integer codes of the person ids (the ids themselves when they are
    already small non-negative integers: no hashing)."""
    if ids.dtype.kind in "iu" and len(ids):
        v = ids.to_numpy()
        if v.min() >= 0 and v.max() < 2**31:
            return v.astype(np.int64, copy=False)
    return pd.factorize(ids, sort=False)[0].astype(np.int64)


def _column(df: pd.DataFrame, col: str, a: float, b: float, clip: bool) -> np.ndarray:
    try:
        x = df[col].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise ValidationError(f"aggregates: column {col!r} is not numeric") from None
    if np.isnan(x).any():
        raise ValidationError(
            f"{col}: {int(np.isnan(x).sum())} missing value(s); drop or fill them"
        )
    outside = int(np.count_nonzero((x < a) | (x > b)))
    if outside and not clip:
        raise BoundsError(
            f"{col}: {outside} value(s) outside the public bounds ({a:g}, {b:g}); widen the "
            "bounds or pass clip=True"
        )
    return np.clip(x, a, b) if outside else x


def _exact_sums(cells: np.ndarray, v: np.ndarray, n_cells: int) -> np.ndarray:
    """Per-cell sums of int64 values below 2^31 in magnitude, exactly (two limbs)."""
    hi, lo = v >> _LIMB, v & ((1 << _LIMB) - 1)
    s_hi = np.bincount(cells, weights=hi.astype(float), minlength=n_cells)
    s_lo = np.bincount(cells, weights=lo.astype(float), minlength=n_cells)
    return (s_hi.astype(np.int64) << _LIMB) + s_lo.astype(np.int64)


def snapped(prim: Any, x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The public record-wise map of a sum-like primitive (plan: grid ``2^-p``, bound H)."""
    c = (a + b) / 2.0
    base = x if prim.kind == "sum" else x - c
    base = base * base if prim.kind == "square" else base
    v = np.rint(np.ldexp(base, prim.p)).astype(np.int64)
    low = 0 if prim.kind == "square" else -prim.bound
    return np.clip(v, low, prim.bound)


def cell_totals(
    df: pd.DataFrame, plan: Plan, keys: pd.DataFrame | None, rng: np.random.Generator, clip: bool
) -> CellTotals:
    """Bound the contributions and total each cell (module docstring), in memory."""
    need = [*plan.by, *([plan.unit] if plan.unit else []), *plan.columns]
    absent = [c for c in need if c not in df.columns]
    if absent:
        raise ValidationError(f"data: no column(s) {absent}; columns: {list(map(str, df.columns))}")
    if len(df) >= MAX_ROWS_TOTAL:
        raise ValidationError(f"data: at most {MAX_ROWS_TOTAL} rows per table in memory")
    cells, key_table = cell_codes(df, plan.by, keys)
    n_cells = len(key_table)
    persons = None
    if plan.unit is not None:
        if df[plan.unit].isna().any():
            raise ValidationError(f"unit: the column {plan.unit!r} has missing person ids")
        persons = person_codes(df[plan.unit])
    values = {c: _column(df, c, *plan.bounds[c], clip) for c in plan.columns}
    keep, people = bound_rows(cells, persons, n_cells, plan.max_groups, plan.max_rows, rng)
    kc = cells[keep]
    out = CellTotals(key_table, np.bincount(kc, minlength=n_cells), people)
    for key, prim in plan.primitives.items():
        if prim.noise is not None and prim.kind != "rows":
            v = snapped(prim, values[prim.column][keep], *plan.bounds[prim.column])
            out.sums[key] = _exact_sums(kc, v, n_cells)
    for col, grid in plan.grids.items():
        width = grid.kb - grid.ka + 1
        if n_cells * width > MAX_HISTOGRAM:
            raise ValidationError(
                f"{col}: {n_cells} cells x {width} lattice points is too many for quantiles; "
                "use a coarser resolution or fewer cells"
            )
        idx = grid.snap(values[col][keep]).astype(np.int64) - grid.ka
        flat = np.bincount(kc * width + idx, minlength=n_cells * width)
        out.hist[col] = flat.reshape(n_cells, width)
    return out


def merge_totals(parts: list[CellTotals], by: tuple[str, ...]) -> CellTotals:
    """The totals of the union of disjoint parts (integers: exact)."""
    parts = [p for p in parts if len(p.keys)] or parts[:1]
    keys = pd.concat([p.keys for p in parts], ignore_index=True)
    codes, table = cell_codes(keys, by, None)
    n = len(table)

    def add(arrays: list[np.ndarray]) -> np.ndarray:
        stacked = np.concatenate(arrays)
        out = np.zeros((n, *stacked.shape[1:]), dtype=np.int64)
        np.add.at(out, codes, stacked)
        return out

    return CellTotals(
        table,
        add([p.rows for p in parts]),
        add([p.people for p in parts]),
        {k: add([p.sums[k] for p in parts]) for k in parts[0].sums},
        {k: add([p.hist[k] for p in parts]) for k in parts[0].hist},
    )

"""Contribution bounding and the exact per-cell totals of a table (docs/tables.md,
"Bounding").

**Bounding** (:func:`bound_rows`), before any noise: each person keeps at most
``max_groups`` of their cells and at most ``max_rows`` of their rows in each kept cell, a
uniformly random subset of each (the rows grouped by one sort of their (person, cell)
codes, the subsets drawn by :func:`_keep_random`). Which rows are kept never depends on
their values, and each person's draws are independent of everyone else's, so the bounded
data of two neighbours differ by one person's bounded rows.
Persons within the limits keep everything (sampling them would keep everything too).

**Totals** (:func:`cell_totals`): per cell the number of rows, the number of people, the
sums of the snapped values (:class:`~privest.tables.plan.Primitive`: each record mapped
to an integer ``|v| <= 2^30`` on a public dyadic grid, a fixed record-wise map) and, for
quantiles, the histogram over the public lattice points. Sums are exact: float sums over
chunks of rows small enough that every partial sum is an integer below 2^53. Totals of
disjoint parts add up (:func:`merge_totals`: the Dask backend sums them over partitions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import BoundsError, ValidationError
from privest.tables.plan import MAX_ROWS_TOTAL, Plan

__all__ = ["CellTotals", "bound_rows", "cell_codes", "cell_totals", "merge_totals"]

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


#: rows per chunk of the row index added to a recoded sort key
_CHUNK = 1 << 20
#: the largest limit sampled by Floyd's algorithm (above it: by sorting random priorities)
FLOYD_LIMIT = 32


def _floyd(size: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform ``limit``-subset of ``range(size[g])`` for each group ``g`` (rows of a
    ``(groups, limit)`` array; every ``size > limit``): Floyd's algorithm (Bentley and Floyd
    1987, "Programming pearls: a sample of brilliance"), vectorised over the groups."""
    chosen = np.empty((size.size, limit), dtype=np.int64)
    for s in range(limit):
        j = size - limit + s
        t = rng.integers(0, j + 1)  # uniform on {0, ..., j} (unbiased bounded integers)
        seen = (chosen[:, :s] == t[:, None]).any(axis=1)
        chosen[:, s] = np.where(seen, j, t)
    return chosen


def _by_priority(size: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    """Which entries of consecutive groups of sizes ``size`` (all ``> limit``) are kept: the
    ``limit`` lowest of independent uniform priorities (one sort of ``group 2^s +
    priority``, values only; a group whose ``limit``-th priority is tied draws again: given
    no tie the kept set is uniform by symmetry, and exactly ``limit`` are kept)."""
    offset = np.cumsum(np.r_[0, size[:-1]])
    keep = np.zeros(int(size.sum()), dtype=bool)
    todo = np.arange(size.size)
    shift = 63 - int(size.size).bit_length()
    while todo.size:
        sizes = size[todo]
        which = np.repeat(np.arange(todo.size), sizes)
        entries = np.repeat(offset[todo] - np.cumsum(np.r_[0, sizes[:-1]]), sizes)
        entries += np.arange(which.size)
        key = (which << shift) | rng.integers(0, 1 << shift, size=which.size, dtype=np.int64)
        thr = np.sort(key)[np.cumsum(np.r_[0, sizes[:-1]]) + limit - 1]
        kept = key <= thr[which]
        keep[entries] = kept
        todo = todo[np.bincount(which, weights=kept, minlength=todo.size) > limit]
    return keep


def _choose(size: np.ndarray, limit: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform ``limit``-subset of ``range(size[g])`` for each group ``g`` (every ``size >
    limit``), as the rows of a ``(groups, limit)`` array: Floyd's algorithm for small
    limits, random priorities for large ones (a public choice: both draw a uniform
    subset)."""
    if size.size == 0:
        return np.empty((0, limit), dtype=np.int64)
    if limit <= FLOYD_LIMIT:
        return _floyd(size, limit, rng)
    offset = np.cumsum(np.r_[0, size[:-1]])
    return np.flatnonzero(_by_priority(size, limit, rng)).reshape(-1, limit) - offset[:, None]


def _keep_random(
    start: np.ndarray,
    size: np.ndarray,
    limit: int,
    rng: np.random.Generator,
    among: np.ndarray | bool = True,
) -> np.ndarray:
    """Which entries are kept: of each group in ``among`` (a mask over the groups, or all), a
    uniformly random ``limit`` of its entries (:func:`_choose`; all of a group within the
    limit); the groups are consecutive runs (``start``, ``size``) of the entries."""
    keep = np.repeat(among & (size <= limit), size)
    big = np.flatnonzero(among & (size > limit))
    if big.size:
        keep[(start[big, None] + _choose(size[big], limit, rng)).ravel()] = True
    return keep


def _sorted_key(
    persons: np.ndarray, cells: np.ndarray, n_cells: int
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """(sorted key, bits, uniq): one sort of ``pair 2^bits + row``, the pair code
    ``person 2^c + cell`` (``2^c >= n_cells``: shifts, not divisions) above the row index;
    recoded to the rank among the pairs (``uniq``: the codes) when it would not fit in 63
    bits. Packed by one compiled pass (:func:`~privest.tables.grouping.pack_keys`)."""
    from privest.tables.grouping import pack_keys

    bits = int(persons.size - 1).bit_length()
    cbits = int(n_cells - 1).bit_length()
    uniq = None
    if (int(persons.max()) + 1) << cbits >= 1 << (63 - bits):  # recode: pairs < 2^31
        pair, uniq = pd.factorize((persons << cbits) | cells.astype(np.int64), sort=True)
        key = pair.astype(np.int64) << bits
        for i in range(0, key.size, _CHUNK):  # no n-sized temporary
            key[i : i + _CHUNK] |= np.arange(i, min(i + _CHUNK, key.size))
    else:
        key = np.empty(persons.size, dtype=np.int64)
        pack_keys(persons, cells, cbits, bits, key)
    key.sort()
    return key, bits, uniq


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
    of each row (non-negative), or None when one record is the unit.

    The (person, cell) pairs are grouped by one sort of ``pair 2^b + row``
    (:func:`_sorted_key`; values only), so a person's pairs are adjacent, in the order of
    (person, cell), and their runs are found in one pass
    (:func:`~privest.tables.grouping.pair_runs`); then :func:`_keep_random` keeps
    ``max_groups`` pairs of each person and :func:`_choose` ``max_rows`` rows of each kept
    pair above it, scattered back to row order in one pass
    (:func:`~privest.tables.grouping.scatter_kept`)."""
    if persons is None:
        valid = cells >= 0
        return valid, np.bincount(cells[valid], minlength=n_cells)
    from privest.tables.grouping import count_runs, pair_runs, scatter_kept

    n = cells.size
    rows = None if n == 0 or cells.min() >= 0 else np.flatnonzero(cells >= 0)
    if rows is not None:
        persons, cells = persons[rows], cells[rows]
    if cells.size == 0:
        return np.zeros(n, dtype=bool), np.zeros(n_cells, dtype=np.int64)
    persons = persons.astype(np.int64, copy=False)
    cells = cells.astype(np.int32, copy=False)  # n_cells <= n < 2^31
    key, bits, uniq = _sorted_key(persons, cells, n_cells)
    cbits = int(n_cells - 1).bit_length()
    codes = np.empty(0, dtype=np.int64) if uniq is None else uniq.astype(np.int64, copy=False)
    n_pairs, n_persons = count_runs(key, bits, cbits, codes, uniq is not None)
    pair_start = np.empty(n_pairs + 1, dtype=np.int32)  # n < 2^31
    pair_cell = np.empty(n_pairs, dtype=np.int32)
    person_start = np.empty(n_persons + 1, dtype=np.int32)
    pair_runs(key, bits, cbits, codes, uniq is not None, pair_start, pair_cell, person_start)
    keep_pair = _keep_random(person_start[:-1], np.diff(person_start), max_groups, rng)
    size = np.diff(pair_start)
    big = np.flatnonzero(keep_pair & (size > max_rows))
    chosen = _choose(size[big], max_rows, rng)
    keep = np.zeros(cells.size, dtype=bool)
    people = np.zeros(n_cells, dtype=np.int64)
    scatter_kept(key, bits, pair_start, pair_cell, keep_pair, big, chosen, keep, people)
    del key
    if rows is not None:
        full = np.zeros(n, dtype=bool)
        full[rows[keep]] = True
        keep = full
    return keep, people


def cell_codes(df: pd.DataFrame, by: tuple[str, ...], keys: pd.DataFrame | None):
    """(cell code per row, key table): the public key table's order when given (rows with
    other keys get -1), else the keys of the data in order of first appearance."""
    if keys is not None:
        index = pd.MultiIndex.from_frame(keys[list(by)])
        return index.get_indexer(pd.MultiIndex.from_frame(df[list(by)])).astype(np.int64), keys
    codes, table, size = None, {}, 1
    for col in by:  # the codes of each column, combined arithmetically
        c, uniq = pd.factorize(df[col], sort=False, use_na_sentinel=False)
        table[col] = uniq
        if size * max(len(uniq), 1) >= 2**62:  # too many combinations: pandas' grouping
            codes = df.groupby(list(by), sort=False, dropna=False, observed=True).ngroup()
            codes = codes.to_numpy().astype(np.int64)
            first = np.unique(codes, return_index=True)[1]
            return codes, df[list(by)].iloc[first].reset_index(drop=True)
        codes = c.astype(np.int64, copy=False) if codes is None else codes * len(uniq) + c
        size *= max(len(uniq), 1)
    if len(by) == 1:
        return codes, pd.DataFrame(table)
    codes, combined = pd.factorize(codes, sort=False)  # in order of first appearance
    out = {}
    for col in reversed(by):
        n = len(table[col])
        out[col] = table[col].take(combined % n)
        combined = combined // n
    return codes.astype(np.int64), pd.DataFrame({c: out[c] for c in by})


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
    if x.size == 0 or (x.min() >= a and x.max() <= b):  # two reductions; NaN fails them
        return x
    if np.isnan(x).any():
        raise ValidationError(
            f"{col}: {int(np.isnan(x).sum())} missing value(s); drop or fill them"
        )
    if not clip:
        outside = int(np.count_nonzero((x < a) | (x > b)))
        raise BoundsError(
            f"{col}: {outside} value(s) outside the public bounds ({a:g}, {b:g}); widen the "
            "bounds or pass clip=True"
        )
    return np.clip(x, a, b)


def _exact_sums(cells: np.ndarray, v: np.ndarray, bound: int, n_cells: int) -> np.ndarray:
    """Per-cell sums of integers ``|v| <= bound`` (held as floats), exactly: float sums
    over chunks of at most ``2^53 / bound`` rows, whose partial sums are exact integers."""
    step = max(1, (1 << 53) // max(bound, 1))
    out = np.zeros(n_cells, dtype=np.int64)
    for i in range(0, v.size, step):
        part = np.bincount(cells[i : i + step], weights=v[i : i + step], minlength=n_cells)
        out += part.astype(np.int64)
    return out


def snapped(prim: Any, x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The public record-wise map of a sum-like primitive (plan: grid ``2^-p``, bound H):
    integers ``|v| <= H``, held as floats."""
    c = (a + b) / 2.0
    v = x * 1.0 if prim.kind == "sum" else x - c  # a new array, changed in place below
    if prim.kind == "square":
        np.multiply(v, v, out=v)
    if -1022 <= prim.p <= 1023:  # times a normal power of two: exact as ldexp, faster
        np.multiply(v, math.ldexp(1.0, prim.p), out=v)
    else:
        np.ldexp(v, prim.p, out=v)
    np.rint(v, out=v)
    low = 0 if prim.kind == "square" else -prim.bound
    return np.clip(v, low, prim.bound, out=v)


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
    cells = cells.astype(np.int32)  # n_cells <= rows < 2^31: half the memory held throughout
    n_cells = len(key_table)
    persons = None
    if plan.unit is not None:
        if df[plan.unit].isna().any():
            raise ValidationError(f"unit: the column {plan.unit!r} has missing person ids")
        persons = person_codes(df[plan.unit])
    values = {c: _column(df, c, *plan.bounds[c], clip) for c in plan.columns}
    keep, people = bound_rows(cells, persons, n_cells, plan.max_groups, plan.max_rows, rng)
    rows = np.flatnonzero(keep)  # then takes: faster than masks
    kc = cells.take(rows)
    kept = {c: v.take(rows) for c, v in values.items()}
    out = CellTotals(key_table, np.bincount(kc, minlength=n_cells), people)
    for key, prim in plan.primitives.items():
        if prim.noise is not None and prim.kind != "rows":
            v = snapped(prim, kept[prim.column], *plan.bounds[prim.column])
            out.sums[key] = _exact_sums(kc, v, prim.bound, n_cells)
    for col, grid in plan.grids.items():
        width = grid.kb - grid.ka + 1
        if n_cells * width > MAX_HISTOGRAM:
            raise ValidationError(
                f"{col}: {n_cells} cells x {width} lattice points is too many for quantiles; "
                "use a coarser resolution or fewer cells"
            )
        idx = grid.snap(kept[col]).astype(np.int64) - grid.ka
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

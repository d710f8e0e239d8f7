"""The compiled passes of contribution bounding (:func:`privest.tables.totals.bound_rows`;
docs/tables.md, "Bounding"): packing the (person, cell, row) sort key, finding the runs
of the sorted key, and scattering the kept rows back to row order (counting the people
of each cell on the way).

Each is one pass over the rows where array code needed several (shifts, comparisons,
``flatnonzero``, ``diff``, ``repeat`` and a boolean mask in sorted order, each over all
the rows). They read and write positions and codes only, never draw: every random choice
stays with numpy's generator in :mod:`privest.tables.totals` (``_keep_random``,
``_choose``), so seeded and secure randomness behave as everywhere else, and a seed gives
the same tables as the array code did. numba compiles them (``cache=True``: once
per installation, a few seconds; without a writable cache, once per process, with a
warning); this module is imported on first use, so importing privest does not load numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privest.compiled import jit_options

__all__ = ["count_runs", "pack_keys", "pair_runs", "scatter_kept"]


_JIT = jit_options("the table bounding kernels", "a few seconds", nogil=True)


@njit(**_JIT)
def pack_keys(persons, cells, cbits, bits, out):  # pragma: no cover - compiled
    """``out[i] = person 2^(c + b) + cell 2^b + i`` (the caller checks that it fits)."""
    shift = cbits + bits
    for i in range(out.size):
        out[i] = (persons[i] << shift) | (np.int64(cells[i]) << bits) | i


@njit(**_JIT)
def count_runs(key, bits, cbits, uniq, recoded):  # pragma: no cover - compiled
    """(pairs, persons): the numbers of runs of a sorted key (:func:`pair_runs`)."""
    pairs = persons = 0
    last_pair = last_person = -1
    for i in range(key.size):
        pair = key[i] >> bits
        if pair != last_pair:
            last_pair = pair
            pairs += 1
            person = (uniq[pair] if recoded else pair) >> cbits
            if person != last_person:
                last_person = person
                persons += 1
    return pairs, persons


@njit(**_JIT)
def pair_runs(
    key, bits, cbits, uniq, recoded, pair_start, pair_cell, person_start
):  # pragma: no cover - compiled
    """Fill the runs of a sorted key (sized by :func:`count_runs`): ``pair_start``, the
    first sorted position of each (person, cell) pair (and the end), ``pair_cell``, the
    cell of each pair, and ``person_start``, the first pair of each person (and the end).
    ``recoded``: ``key >> bits`` is the rank of the pair among ``uniq`` (the pair codes
    ``person 2^c + cell``), else the code itself. (The caller allocates: numpy, not numba,
    so that tracemalloc sees the memory.)"""
    cmask = (np.int64(1) << cbits) - 1
    p = q = 0
    last_pair = last_person = -1
    for i in range(key.size):
        pair = key[i] >> bits
        if pair != last_pair:
            last_pair = pair
            code = uniq[pair] if recoded else pair
            pair_start[p] = i
            pair_cell[p] = code & cmask
            person = code >> cbits
            if person != last_person:
                last_person = person
                person_start[q] = p
                q += 1
            p += 1
    pair_start[p] = key.size
    person_start[q] = p


@njit(**_JIT)
def scatter_kept(
    key, bits, pair_start, pair_cell, keep_pair, big, chosen, out, people
):  # pragma: no cover - compiled
    """``out[row] = True`` for the kept rows, and ``people[cell] += 1`` for each kept pair:
    every row of a kept pair, except for the kept pairs ``big`` (increasing) above the
    limit, of which only the sorted positions ``start + chosen[j]`` (row ``j`` of
    ``chosen`` for ``big[j]``)."""
    rmask = (np.int64(1) << bits) - 1
    j = 0
    for p in range(keep_pair.size):
        if not keep_pair[p]:
            continue
        people[pair_cell[p]] += 1
        start = pair_start[p]
        if j < big.size and big[j] == p:
            for c in chosen[j]:
                out[key[start + c] & rmask] = True
            j += 1
        else:
            for i in range(start, pair_start[p + 1]):
                out[key[i] & rmask] = True

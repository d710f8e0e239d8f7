"""The samplers of contribution bounding (privest.tables.totals): a uniform subset of each
group of the limit's size, by Floyd's algorithm (small limits) or by the lowest random
priorities (large limits, a tie drawn again), and the bounds that ``bound_rows`` keeps on
data large and sparse enough to take its other paths (rows outside the public keys, person
codes too large to pack beside the row index)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privest.tables.totals import FLOYD_LIMIT, _keep_random, bound_rows


def _subsets(size: int, limit: int, reps: int, rng) -> dict[tuple, int]:
    start, sizes = np.array([0, size]), np.array([size, size])
    seen: dict[tuple, int] = {}
    for _ in range(reps):
        keep = _keep_random(start, sizes, limit, rng)
        assert keep[:size].sum() == limit and keep[size:].sum() == limit
        key = tuple(np.flatnonzero(keep[:size]).tolist())
        seen[key] = seen.get(key, 0) + 1
    return seen


def test_floyd_draws_every_subset_equally_often():
    seen = _subsets(5, 3, 4000, np.random.default_rng(0))
    assert set(seen) == set(itertools.combinations(range(5), 3))
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3


def test_priorities_keep_a_uniform_subset_of_the_limits_size():
    limit, size, reps = FLOYD_LIMIT + 1, FLOYD_LIMIT + 4, 3000
    start, sizes = np.array([0, size, 2 * size]), np.array([size, 2, size])
    among = np.array([True, True, False])
    rng = np.random.default_rng(1)
    share = np.zeros(size)
    for _ in range(reps):
        keep = _keep_random(start, sizes, limit, rng, among)
        assert keep[:size].sum() == limit and keep[size : size + 2].all()
        assert not keep[size + 2 :].any()  # a group not among those kept
        share += keep[:size]
    p = limit / size
    assert np.all(np.abs(share / reps - p) < 5 * math.sqrt(p * (1 - p) / reps))


class _TiedFirst:
    """A generator whose first ``integers`` call returns zeros (every priority tied): the
    fault the redraw must absorb."""

    def __init__(self, seed: int):
        self.rng, self.calls = np.random.default_rng(seed), 0

    def integers(self, low, high=None, size=None, dtype=np.int64):
        self.calls += 1
        if self.calls == 1:
            return np.zeros(size, dtype=dtype)
        return self.rng.integers(low, high, size=size, dtype=dtype)


def test_tied_priorities_are_drawn_again():
    limit = FLOYD_LIMIT + 2
    rng = _TiedFirst(2)
    keep = _keep_random(np.array([0]), np.array([limit + 5]), limit, rng)
    assert rng.calls >= 2 and keep.sum() == limit


def _check_bounds(cells, persons, keep, people, k, m):
    df = pd.DataFrame({"c": cells, "p": persons, "keep": keep})
    df = df[df["c"] >= 0]
    pairs = df.groupby(["p", "c"])["keep"].agg(["size", "sum"]).reset_index()
    kept = pairs[pairs["sum"] > 0]
    assert np.all(kept["sum"] == np.minimum(kept["size"], m))  # min(size, m) rows per pair
    per_person = pairs.groupby("p")["c"].size()
    got = kept.groupby("p")["c"].size().reindex(per_person.index, fill_value=0)
    assert np.all(got == np.minimum(per_person, k))  # min(cells, k) cells per person
    expect = np.bincount(kept["c"], minlength=people.size)
    assert np.array_equal(people, expect)
    assert not keep[cells < 0].any()


def test_bound_rows_keeps_the_bounds_outside_keys_and_with_large_person_codes():
    rng = np.random.default_rng(3)
    n = 1 << 16  # 2^31 persons x 2^16 cells x 2^16 rows >= 2^63: the pairs are recoded
    cells = rng.integers(-1, n, n)
    persons = rng.choice(np.array([0, 5, 2**31 - 1, 2**30 + 7]), n) + rng.integers(0, 50, n)
    for k, m in ((2, 3), (40, 40)):
        keep, people = bound_rows(cells, persons, n, k, m, rng)
        _check_bounds(cells, persons, keep, people, k, m)
    small = rng.integers(0, 30, 5000)
    cells = rng.integers(0, 7, 5000)
    keep, people = bound_rows(cells, small, 7, 3, 2, rng)
    _check_bounds(cells, small, keep, people, 3, 2)


def _row_subsets(limit: int, size: int, reps: int, rng) -> dict[tuple, int]:
    """How often ``bound_rows`` keeps each subset of the ``size`` rows of one person's one
    cell (rows interleaved with persons within the limits, so the compiled scatter must
    put each kept row back in its place)."""
    persons = np.r_[np.full(size, 7), 8 + np.arange(size)]
    order = rng.permutation(persons.size)
    persons, cells = persons[order], np.zeros(persons.size, dtype=np.int32)
    mine = np.flatnonzero(persons == 7)
    seen: dict[tuple, int] = {}
    for _ in range(reps):
        keep, people = bound_rows(cells, persons, 1, 1, limit, rng)
        assert keep[persons != 7].all() and people[0] == size + 1
        key = tuple(np.flatnonzero(keep[mine]).tolist())
        seen[key] = seen.get(key, 0) + 1
    return seen


def test_bound_rows_keeps_a_uniform_subset_of_a_cells_rows():
    seen = _row_subsets(2, 5, 3000, np.random.default_rng(4))
    assert set(seen) == set(itertools.combinations(range(5), 2))
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3
    # negative control: the same test rejects a choice that favours the first row a little
    rng = np.random.default_rng(5)
    subsets = list(itertools.combinations(range(5), 2))
    weights = np.array([1.3 if 0 in s else 1.0 for s in subsets])
    biased = rng.choice(len(subsets), 3000, p=weights / weights.sum())
    assert stats.chisquare(np.bincount(biased, minlength=len(subsets))).pvalue < 1e-3


def test_bound_rows_with_a_limit_above_floyds_keeps_uniform_rows():
    limit, size, reps = FLOYD_LIMIT + 1, FLOYD_LIMIT + 4, 600
    seen = _row_subsets(limit, size, reps, np.random.default_rng(6))
    assert all(len(s) == limit for s in seen)
    share = np.zeros(size)
    for subset, count in seen.items():
        share[list(subset)] += count
    p = limit / size
    assert np.all(np.abs(share / reps - p) < 5 * math.sqrt(p * (1 - p) / reps))


def test_no_writable_numba_cache_is_said(monkeypatch):
    """No cache location: the kernels' options say so and compile without a cache
    (control: with numba's locators, ``cache=True`` and no warning)."""
    import warnings

    from privest import compiled
    from privest.errors import NoCompileCacheWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", NoCompileCacheWarning)
        assert compiled.jit_options("the table bounding kernels", "seconds")["cache"] is True

    def no_locator(**options):  # numba's error when it finds no cache location
        raise RuntimeError("cannot cache function '_cache_probe': no locator available")

    monkeypatch.setattr(compiled, "njit", no_locator)
    with pytest.warns(NoCompileCacheWarning, match="table bounding.*NUMBA_CACHE_DIR"):
        opts = compiled.jit_options("the table bounding kernels", "seconds", nogil=True)
    assert opts == {"cache": False, "nogil": True}

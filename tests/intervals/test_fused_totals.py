"""The exact sums a mean, sum or variance and its population interval read come from one
chunked pass over an array (privest.intervals.release._fused_totals): the releases must be
bit-identical to those of one pass per release (the path of data held as a pandas Series)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.intervals import release as rel
from privest.mechanisms.profiles.exact import Derived, exact_totals, exact_totals_with

# 70_001 records cross the pass's chunk of 2^16; 3 records are one short chunk
SIZES = (3, 1000, 70_001)
FUNCS = (pv.private_mean, pv.private_sum, pv.private_variance)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("clip", [False, True])
def test_one_pass_gives_the_releases_of_one_pass_each(n, func, clip, monkeypatch):
    x = np.random.default_rng(n).uniform(-1, 1, n)
    bounds = (-0.5, 0.75) if clip else (-1.0, 1.0)  # clip=True: some records are clipped
    apart = [func(pd.Series(x), epsilon=1.0, bounds=bounds, rng=s, clip=clip) for s in (0, 1)]

    def refuse(*args, **kwargs):
        raise AssertionError("an array's spread was formed as a whole array")

    monkeypatch.setattr(rel, "_squared_deviations", refuse)  # the fused path is taken
    fused = [func(x, epsilon=1.0, bounds=bounds, rng=s, clip=clip) for s in (0, 1)]
    for a, b in zip(apart, fused, strict=True):
        assert float(a) == float(b)
        assert a.bse == b.bse
        assert a.conf_int() == b.conf_int()
        assert a.interval.split == b.interval.split


def test_derived_totals_are_those_of_the_mapped_records():
    """Each Derived mean's totals equal exact_totals of the mapped (and clipped) array."""
    x = np.random.default_rng(5).uniform(-2, 3, 150_000)
    x[::7] = 3.0  # records at the end of the bounds

    def square(v, out):
        np.multiply(v, v, out=out)

    derived = (Derived(square, 0.0, 4.0), Derived(None, -2.0, 3.0))
    own, (sq, same) = exact_totals_with(x, (-2, 3), derived, statistic="variance")
    assert own == exact_totals(x, "variance", (-2, 3))
    assert sq == exact_totals(x * x, "mean", (0.0, 4.0), clip=True)
    assert sq["clipped"] == np.count_nonzero(x * x > 4.0) > 0
    assert same == exact_totals(x, "mean", (-2, 3))


def test_a_record_out_of_bounds_is_refused_by_the_shared_pass():
    x = np.random.default_rng(2).uniform(0, 1, 100_000)
    x[-1] = 1.5  # in the last chunk
    with pytest.raises(pv.BoundsError, match="clip=True"):
        pv.private_mean(x, epsilon=1.0, bounds=(0, 1), rng=0)

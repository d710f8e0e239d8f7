"""A ZIL block is scaled by one float where every column's factor is the same
(release.zil._per_column): the same products as the (d,) vector's broadcast."""

from __future__ import annotations

import numpy as np

from privest.release.zil import _snapper, _stepper


def test_one_float_factor_gives_the_vectors_products():
    values = np.random.default_rng(0).normal(size=(1000, 4)) * 3.7
    grid, step = np.full(4, 2.0**-10), np.full(4, 0.3)
    snapped, stepped = values.copy(), values.copy()
    _snapper(grid)(snapped)
    _stepper(step)(stepped)
    assert np.array_equal(snapped, np.rint(values * (1.0 / grid)) * grid)
    assert np.array_equal(stepped, np.rint(values / step) * step)
    mixed = np.array([2.0**-10, 2.0**-9, 2.0**-10, 2.0**-8])  # the vector path
    out = values.copy()
    _snapper(mixed)(out)
    assert np.array_equal(out, np.rint(values * (1.0 / mixed)) * mixed)

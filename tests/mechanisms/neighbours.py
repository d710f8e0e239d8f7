"""Exact privacy checks on every swap neighbour, shared by the lattice-mechanism tests."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import numpy as np

#: small data sets on the lattice 0..8: ties, spread, both edges, odd and even n
NEIGHBOUR_DATA = {
    "ties": [3, 3, 3, 3, 3, 4, 3],
    "spread": [0, 1, 2, 5, 8, 8, 6],
    "edges": [0, 0, 8, 8, 0, 8, 8],
    "even_ties": [2, 2, 2, 2, 5, 5],
    "even_spread": [0, 1, 4, 6, 7, 8],
}


def worst_log_ratio(
    log_pmf: Callable[[np.ndarray], np.ndarray], x: Iterable[float], values: Iterable[float]
) -> float:
    """max over the swap neighbours of ``x`` (one record -> any of ``values``) and every
    output of |log P(y|x) - log P(y|x')|; ``log_pmf(data)`` gives log P(.|data) on the
    public support, which must be finite on both sides."""
    x = np.asarray(list(x), dtype=float)
    base = log_pmf(x)
    worst = 0.0
    for i, v in itertools.product(range(len(x)), values):
        x2 = x.copy()
        x2[i] = v
        other = log_pmf(x2)
        assert np.all(np.isfinite(base)) and np.all(np.isfinite(other))  # public support
        worst = max(worst, float(np.max(np.abs(base - other))))
    return worst

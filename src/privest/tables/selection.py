"""Private partition selection: which cells of a table are released when the keys are not
public (docs/tables.md, "Selection").

A cell is a candidate only if the data hold it; it is released only if a noisy test passes,
so a cell held by one person alone appears with a probability of at most ``delta`` (over all
the cells that person touches), and a key absent from the data never appears.

* **Thresholding** (:func:`threshold`): the released noisy row count of each cell (Laplace
  or Gaussian, :mod:`privest.tables.noise`) must reach ``T``, set so that a cell holding
  one person alone (at most ``max_rows`` rows) passes with probability at most
  ``delta / max_groups``; the count itself is released with the cell, so selection costs
  no epsilon. The released table is then (eps_count + ln(1 / (1 - delta)), delta + delta_
  count)-DP: on the event that none of the person's lone cells passes (probability at least
  1 - delta, independent of the rest) the outputs are those of the noisy counts on the
  shared cells (docs/tables.md gives the proof).
* **The optimal mechanism** of Desfontaines, Voss and Gipson (2022, Thm 1 and Sec. 4):
  a cell with ``n`` people (after contribution bounding) is kept with probability
  ``p(n)``, ``p(0) = 0``, ``p(n) = min(e^eps p(n-1) + delta, 1 - e^-eps (1 - p(n-1) -
  delta), 1)``: the largest keep-probabilities of any (eps, delta)-DP selection when each
  person is in one cell. A person in up to k cells: each cell at (eps/k, delta/k), composed
  over the k cells (their Sec. 5). It uses its own epsilon (the counts it reads are not
  released).

Exactness of the optimal mechanism: ``p`` is computed in floats at ``eps (1 - 10^-9)`` and
``delta (1 - 10^-9) - 2^-50``, and each keep decision compares a uniform 53-bit integer with
``ceil(p 2^53)``: the probabilities used differ from the floats by less than 2^-53 and the
floats from the exact recursion by far less than the slack, so the (eps, delta) bounds hold.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from privest.tables.noise import CellNoise

__all__ = ["keep_probabilities", "optimal_select", "threshold"]

_SLACK = 1e-9


@lru_cache(maxsize=64)
def keep_probabilities(epsilon: float, delta: float) -> np.ndarray:
    """``p(0), p(1), ..., 1``: the optimal keep-probabilities per number of people
    (module docstring), run at the slackened (eps, delta); the last entry is 1. Cached: a
    pure function of public inputs (a loop over the counts); the array is read-only."""
    eps = epsilon * (1 - _SLACK)
    dlt = delta * (1 - _SLACK) - 2.0**-50
    if dlt <= 0:
        raise ValueError("delta: too small for partition selection (below 2^-50)")
    e, e_inv = math.exp(eps), math.exp(-eps)
    p = [0.0]
    while p[-1] < 1.0 and len(p) < 10**7:
        prev = p[-1]
        p.append(min(e * prev + dlt, 1.0 - e_inv * (1.0 - prev - dlt), 1.0))
    out = np.array(p)
    out.flags.writeable = False
    return out


def optimal_select(
    people: np.ndarray, epsilon: float, delta: float, rng: np.random.Generator
) -> np.ndarray:
    """Keep each cell with probability ``p(people)`` (module docstring): a boolean mask.

    ``epsilon``, ``delta`` are the per-cell parameters (the caller divides by max_groups)."""
    p = keep_probabilities(epsilon, delta)
    n = np.minimum(np.asarray(people, dtype=np.int64), p.size - 1)
    top = np.ceil(p * 2.0**53).astype(np.uint64)  # exact: p * 2^53 is a float below 2^53
    u = rng.integers(0, 2**53, size=n.size, dtype=np.uint64)
    return u < top[n]


def threshold(noise: CellNoise, max_rows_units: int, delta_cell: float) -> int:
    """The least grid-unit threshold ``T`` with P(c + K >= T) <= ``delta_cell`` for every
    count ``c`` of a cell one person holds alone (at most ``max_rows_units`` data units):
    a cell is released when ``round(c / g) + K >= T``."""
    worst = -(-max_rows_units // noise.ratio)  # round(c / g) <= ceil(m / g)
    j = 1
    while noise.upper_tail(j) > delta_cell:
        j = j * 2
    lo = j // 2
    while j - lo > 1:  # P(K >= j) is decreasing in j: bisect the least passing j
        mid = (lo + j) // 2
        if noise.upper_tail(mid) > delta_cell:
            lo = mid
        else:
            j = mid
    return worst + j

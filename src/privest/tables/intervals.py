"""Estimates, standard errors and intervals of a table's cells (docs/tables.md,
"Intervals"), by post-processing of the released primitives only: this module maps the
cells' released values and public noise laws to the core's interval code
(:mod:`privest.intervals`), vectorised over the cells.

Each function returns ``(estimate, se, lower, upper)`` arrays, one entry per cell, at level
``1 - alpha``:

* **count** (a total of the bounded data; noise only): the exact two-sided quantile of the
  discrete noise law, :func:`~privest.intervals.noisy.noise_interval` in ``[0, inf)``;
  covers the bounded count with probability at least 1 - alpha.
* **sum** (a total; noise only): ``c N~ + C~`` (or the raw noisy sum); the half-width adds
  the ``1 - alpha/4`` quantiles of the two noises (a union bound: at least 1 - alpha).
* **mean** (the cell's population mean; sampling and noise):
  :func:`~privest.intervals.noisy.ratio_interval`.
* **median, quantile** (the population quantile; sampling and noise): two more releases of
  the exponential mechanism at the levels of
  :func:`~privest.intervals.ranks.order_levels` (``n`` a lower confidence bound of the
  count at alpha/8, ``r`` the mechanism's rank error bound
  :func:`~privest.mechanisms.rank_exponential.rank_error_bound` at alpha/8), widened by half
  a lattice step for the snapping. An end whose level leaves (0, 1) is the public bound.
  The SE is :func:`~privest.intervals.ranks.order_se`.
"""

from __future__ import annotations

import math

import numpy as np

from privest.intervals.noisy import noise_interval, ratio_interval
from privest.intervals.ranks import order_levels, order_se
from privest.mechanisms.rank_exponential import LEVEL_BITS, rank_error_bound, sample_rank_em
from privest.tables.noise import CellNoise
from privest.tables.plan import Primitive

__all__ = ["count_cells", "mean_cells", "quantile_cells", "sum_cells"]

Cells = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def count_cells(noisy: np.ndarray, noise: CellNoise, alpha: float) -> Cells:
    se = np.full(noisy.shape, math.sqrt(noise.variance))
    est = np.maximum(noisy, 0.0)
    return est, se, *noise_interval(noisy, noise.abs_quantile(alpha), 0.0)


def sum_cells(
    centred: np.ndarray,
    noise: CellNoise,
    alpha: float,
    bounds: tuple[float, float],
    rows: tuple[np.ndarray, CellNoise] | None,
) -> Cells:
    """``rows``: the released row counts and their noise when the sum is centred."""
    a, b = bounds
    if rows is None:
        est, var, hw = centred, noise.variance, noise.abs_quantile(alpha)
    else:
        c = (a + b) / 2.0
        est = c * rows[0] + centred
        var = c * c * rows[1].variance + noise.variance
        hw = abs(c) * rows[1].abs_quantile(alpha / 2) + noise.abs_quantile(alpha / 2)
    lo_end = -math.inf if a < 0 else 0.0  # the sum's public range
    hi_end = math.inf if b > 0 else 0.0
    se = np.full(est.shape, math.sqrt(var))
    return np.clip(est, lo_end, hi_end), se, *noise_interval(est, hw, lo_end, hi_end)


def mean_cells(
    centred: tuple[np.ndarray, CellNoise],
    rows: tuple[np.ndarray, CellNoise],
    square: tuple[np.ndarray, CellNoise] | None,
    alpha: float,
    bounds: tuple[float, float],
) -> Cells:
    return ratio_interval(
        (centred[0], centred[1].variance),
        (rows[0], rows[1].variance),
        None if square is None else square[0],
        bounds,
        alpha,
    )


def quantile_cells(
    point: tuple[Primitive, np.ndarray],
    ends: tuple[Primitive, Primitive] | None,
    hist: np.ndarray,
    rows: tuple[np.ndarray, CellNoise] | None,
    grid: object,
    alpha: float,
    rng: np.random.Generator,
) -> Cells:
    """``point``: the primitive and its released lattice positions; ``ends`` are released
    here, at levels set from the released count (module docstring)."""
    prim, pos = point
    value = (pos + grid.ka) * grid.step
    nan = np.full(value.shape, np.nan)
    if ends is None or rows is None:
        return value, nan, nan, nan
    n_lo = np.maximum(rows[0] - rows[1].abs_quantile(alpha / 4), 1.0)
    lo_prim, hi_prim = ends
    score = lo_prim.score
    width = grid.kb - grid.ka + 1
    r = rank_error_bound(score.epsilon_run, score.delta_ranks, width, alpha / 8)
    levels = order_levels(prim.quantile, n_lo, r, alpha)
    one = 1 << LEVEL_BITS
    out = []
    for prim_end, level, bound in zip((lo_prim, hi_prim), levels, (grid.ka, grid.kb), strict=True):
        a = np.clip(np.rint(level * one), 1, one).astype(np.int64)
        got = sample_rank_em(hist, prim_end.score, rng, levels=a) + grid.ka
        inside = (level > 0) & (level < 1)
        out.append(np.where(inside, got, bound) * grid.step)
    lo_b, hi_b = grid.ka * grid.step, grid.kb * grid.step
    lower = np.maximum(out[0] - grid.step / 2, lo_b)
    upper = np.minimum(out[1] + grid.step / 2, hi_b)
    return value, order_se(lower, upper, alpha), lower, upper

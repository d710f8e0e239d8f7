"""Estimates, standard errors and intervals of a table's cells (docs/tables.md,
"Intervals"), by post-processing of the released primitives only.

Each function returns ``(estimate, se, lower, upper)`` arrays, one entry per cell, at level
``1 - alpha``:

* **count** (a total of the bounded data; noise only): the exact two-sided quantile ``q``
  of the discrete noise law, ``[N~ - q, N~ + q]`` (lower end at least 0); covers the
  bounded count with probability at least 1 - alpha.
* **sum** (a total; noise only): ``c N~ + C~`` (or the raw noisy sum); the half-width adds
  the ``1 - alpha/4`` quantiles of the two noises (a union bound: at least 1 - alpha).
* **mean** (the cell's population mean; sampling and noise): ``c + C~ / N~``, clipped to the
  bounds; the delta method (Casella and Berger 2002, Sec. 5.5.4) for the ratio gives the
  noise variance ``(Var C~ + (m - c)^2 Var N~) / N~^2``, and the sampling variance is
  ``s^2 / N~`` with ``s^2 = Q~ / N~ - (C~ / N~)^2`` from the released sum of squares
  (clipped to ``[0, (b - a)^2 / 4]``); a normal interval (the private spread of Du et al.
  2020, "Differentially private confidence intervals").
* **median, quantile** (the population quantile; sampling and noise): two more releases of
  the exponential mechanism at the levels ``q -+ (z sqrt(q (1 - q) n) + r + 1) / n`` with
  ``n`` a lower confidence bound of the count and ``r`` the rank error bound of the
  mechanism (:func:`~privest.mechanisms.rank_exponential.rank_error_bound`): the order-
  statistic interval of the quantile (David and Nagaraja 2003, Sec. 7.1; Drechsler et al.
  2022 for private ones), each end failing with probability at most alpha/2 (alpha/8 the
  count bound, alpha/4 the binomial rank, alpha/8 the mechanism), widened by half a
  lattice step for the snapping. An end whose level leaves (0, 1) is the public bound.
  The SE reported is the interval's width over ``2 z_(1 - alpha/2)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from privest.mechanisms.rank_exponential import LEVEL_BITS, rank_error_bound, sample_rank_em
from privest.tables.noise import CellNoise
from privest.tables.plan import Primitive

__all__ = ["count_cells", "mean_cells", "quantile_cells", "sum_cells"]

Cells = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def count_cells(noisy: np.ndarray, noise: CellNoise, alpha: float) -> Cells:
    q = noise.abs_quantile(alpha)
    se = np.full(noisy.shape, math.sqrt(noise.variance))
    est = np.maximum(noisy, 0.0)
    return est, se, np.maximum(noisy - q, 0.0), np.maximum(noisy + q, 0.0)


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
    lo_end = -math.inf if a < 0 else 0.0
    hi_end = math.inf if b > 0 else 0.0
    clip = lambda v: np.clip(v, lo_end, hi_end)  # noqa: E731 (the sum's public range)
    se = np.full(est.shape, math.sqrt(var))
    return clip(est), se, clip(est - hw), clip(est + hw)


def mean_cells(
    centred: tuple[np.ndarray, CellNoise],
    rows: tuple[np.ndarray, CellNoise],
    square: tuple[np.ndarray, CellNoise] | None,
    alpha: float,
    bounds: tuple[float, float],
) -> Cells:
    a, b = bounds
    c, half = (a + b) / 2.0, (b - a) / 2.0
    n = np.maximum(rows[0], 1.0)
    est = np.clip(c + centred[0] / n, a, b)
    noise_var = (centred[1].variance + (est - c) ** 2 * rows[1].variance) / n**2
    var = noise_var
    if square is not None:
        spread = np.clip(square[0] / n - (centred[0] / n) ** 2, 0.0, half * half)
        var = var + spread / n
    se = np.sqrt(var)
    z = stats.norm.ppf(1 - alpha / 2)
    return est, se, np.clip(est - z * se, a, b), np.clip(est + z * se, a, b)


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
    q = prim.quantile
    n_lo = np.maximum(rows[0] - rows[1].abs_quantile(alpha / 4), 1.0)
    lo_prim, hi_prim = ends
    score = lo_prim.score
    width = grid.kb - grid.ka + 1
    r = rank_error_bound(score.epsilon_run, score.delta_ranks, width, alpha / 8)
    z = stats.norm.ppf(1 - alpha / 4)
    offset = (z * np.sqrt(q * (1 - q) * n_lo) + r + 1.0) / n_lo
    one = 1 << LEVEL_BITS
    out = []
    for prim_end, level, bound in ((lo_prim, q - offset, grid.ka), (hi_prim, q + offset, grid.kb)):
        a = np.clip(np.rint(level * one), 1, one).astype(np.int64)
        got = sample_rank_em(hist, prim_end.score, rng, levels=a) + grid.ka
        inside = (level > 0) & (level < 1)
        out.append(np.where(inside, got, bound) * grid.step)
    lo_b, hi_b = grid.ka * grid.step, grid.kb * grid.step
    lower = np.maximum(out[0] - grid.step / 2, lo_b)
    upper = np.minimum(out[1] + grid.step / 2, hi_b)
    se = (upper - lower) / (2 * stats.norm.ppf(1 - alpha / 2))
    return value, se, lower, upper

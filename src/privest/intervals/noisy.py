"""Intervals of released totals and of their ratios, vectorised over many releases (the
cells of a table, docs/tables.md "Intervals"; the noise-only intervals of the statistics,
docs/central-inference.md).

* :func:`noise_interval`: a quantity released with additive noise of a public law, with
  ``|noise| <= h`` with probability at least 1 - alpha (``h`` from the law's quantile):
  ``[est - h, est + h]`` intersected with the quantity's public range. It covers the
  data's own value (noise only).
* :func:`ratio_interval`: the population mean ``m`` estimated as ``c + C~ / N~`` from a
  noisy centred sum ``C~`` (the sum of ``x - c``) and a noisy count ``N~``, clipped to the
  bounds. The delta method (Casella and Berger 2002, Sec. 5.5.4) for the ratio gives the
  noise variance ``(Var C~ + (m - c)^2 Var N~) / N~^2``; the sampling variance is
  ``s^2 / N~`` with ``s^2 = Q~ / N~ - (C~ / N~)^2`` from a noisy sum of squares ``Q~`` of
  ``x - c`` (clipped to ``[0, (b - a)^2 / 4]``); a normal interval (the private spread of
  Du et al. 2020, "Differentially private confidence intervals").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["noise_interval", "ratio_interval"]


def noise_interval(
    estimate: Any, halfwidth: Any, lo: float = -math.inf, hi: float = math.inf
) -> tuple[Any, Any]:
    """``(lower, upper)``: ``[estimate - halfwidth, estimate + halfwidth]`` clipped to the
    public range ``[lo, hi]`` (floats for floats, arrays for arrays)."""
    est = np.asarray(estimate, dtype=float)
    lower, upper = np.clip(est - halfwidth, lo, hi), np.clip(est + halfwidth, lo, hi)
    if np.ndim(lower) == 0:
        return float(lower), float(upper)
    return lower, upper


def ratio_interval(
    centred: tuple[np.ndarray, float],
    count: tuple[np.ndarray, float],
    square: np.ndarray | None,
    bounds: tuple[float, float],
    alpha: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(estimate, se, lower, upper)`` of the mean (module docstring) from ``centred`` and
    ``count`` (the released values and their noise variance) and the released sum of
    squares ``square`` (None: the noise variance alone)."""
    from scipy import special

    a, b = bounds
    c, half = (a + b) / 2.0, (b - a) / 2.0
    n = np.maximum(count[0], 1.0)
    est = np.clip(c + centred[0] / n, a, b)
    var = (centred[1] + (est - c) ** 2 * count[1]) / n**2
    if square is not None:
        spread = np.clip(square / n - (centred[0] / n) ** 2, 0.0, half * half)
        var = var + spread / n
    se = np.sqrt(var)
    z = special.ndtri(1 - alpha / 2)
    return est, se, np.clip(est - z * se, a, b), np.clip(est + z * se, a, b)

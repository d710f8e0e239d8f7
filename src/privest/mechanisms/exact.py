"""Statistics computed exactly, as rationals, for float-safe noise on a lattice.

The lattice mechanisms of :mod:`privest.mechanisms.lattice` release ``g (round(f/g) + K)``.
Their guarantee needs the integer ``round(f/g)`` to move by at most ``floor(Delta/g) + 1``
between neighbours, which fails if ``f`` is computed with a rounding error comparable to
``g`` (the precision-of-the-sum attack: a float sum of 10^8 records can be off by far more
than one grid step). So ``f`` is computed exactly here:

* mean, sum: records are snapped to a public dyadic grid ``2^-p Z`` (p from the bounds
  only, a fixed record-wise map, so neighbours stay neighbours; lossless for every record
  of magnitude at least ``2^-9 max(|a|, |b|)``) and summed exactly as integers in two int64
  limbs; the mean is the rational ``T 2^-p / n``;
* variance: the records, centred at the public midpoint, are snapped to ``2^-q Z`` with
  ``|k| < 2^31`` (a move of at most ``2^-32 (b - a)`` per record), and ``sum k`` and
  ``sum k^2`` are summed exactly; the variance is ``(n S2 - S1^2) / n^2 2^-2q``;
* median, quantiles: order statistics are data values (the mean of two for an even-n
  median is an exact rational); count: an integer.

The sensitivity returned is that of the snapped statistic (the bounds widened by the
snapping, at most one grid step of ``2^-p`` or ``2^-q``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privest.errors import ValidationError
from privest.mechanisms.profiles import (
    parse_statistic,
    prepare_data,
    quantile_rank,
    variance_global_sensitivity,
    variance_sup,
)
from privest.validation import as_float_vector

__all__ = ["ExactStatistic", "exact_statistic"]

_LIMB = 31
_MASK = (1 << _LIMB) - 1
_TWO = Fraction(2)


@dataclass(frozen=True)
class ExactStatistic:
    """A statistic's exact value, its float, its sensitivity on the snapped records, its
    public range and the number of records clipped (the curator's view)."""

    exact: Fraction
    sensitivity: float
    output_range: tuple[float, float]
    n_clipped: int

    @property
    def value(self) -> float:
        return float(self.exact)


def _exact_total(k: np.ndarray) -> int:
    """The exact sum of int64 values below 2^62 in magnitude (two limbs of 31 bits)."""
    high = int(np.sum(k >> _LIMB, dtype=np.int64))
    low = int(np.sum(k & _MASK, dtype=np.int64))
    return (high << _LIMB) + low


def _dyadic_exponent(a: float, b: float, bits: int) -> int:
    """p with ``max(|a|, |b|) 2^p < 2^bits``."""
    return min(bits - math.frexp(max(abs(a), abs(b)))[1], 1074)


def _snapped_width(a: float, b: float, p: int) -> float:
    """The width of the snapped bounds ``(round(b 2^p) - round(a 2^p)) 2^-p``."""
    return (round(math.ldexp(b, p)) - round(math.ldexp(a, p))) * math.ldexp(1.0, -p)


def exact_statistic(
    x: Any, statistic: str, bounds: Any = None, *, quantile: float | None = None, clip: bool = False
) -> ExactStatistic:
    """The exact value of a named statistic (module docstring), with its sensitivity."""
    name, q_spec = parse_statistic(statistic)
    q = q_spec if quantile is None else quantile
    if name == "count":
        ind = as_float_vector(np.asarray(x, dtype=float), "indicators")
        if not np.all((ind == 0) | (ind == 1)):
            raise ValidationError("indicators: entries must be 0/1 or booleans (one per record)")
        return ExactStatistic(Fraction(int(ind.sum())), 1.0, (0.0, float(ind.size)), 0)
    if bounds is None:
        raise ValidationError(f"bounds: required for the {name} (public bounds (lo, hi))")
    arr, a, b, clipped = prepare_data(x, bounds, clip)
    n = arr.size
    if name in ("median", "quantile"):
        if name == "quantile" and q is None:
            raise ValidationError("quantile: the level is required, e.g. quantile=0.9")
        ranks = [quantile_rank(q, n)] if name == "quantile" else sorted({(n + 1) // 2, n // 2 + 1})
        part = np.partition(arr, [r - 1 for r in ranks])
        value = sum(Fraction(float(part[r - 1])) for r in ranks) / len(ranks)
        return ExactStatistic(value, b - a, (a, b), clipped)
    if name in ("mean", "sum"):
        p = _dyadic_exponent(a, b, 62)
        total = Fraction(_exact_total(np.rint(np.ldexp(arr, p)).astype(np.int64))) / _TWO**p
        width = _snapped_width(a, b, p)
        if name == "sum":
            return ExactStatistic(total, width, (n * a, n * b), clipped)
        mean = min(max(total / n, Fraction(a)), Fraction(b))  # the snapped mean stays in range
        return ExactStatistic(mean, width / n, (a, b), clipped)
    if n < 2:
        raise ValidationError("x: the variance needs at least 2 records (n is public)")
    mid = (a + b) / 2.0
    qexp = _dyadic_exponent(b - mid, mid - a, 31)
    k = np.rint(np.ldexp(arr - mid, qexp)).astype(np.int64)
    s1 = _exact_total(k)
    s2 = _exact_total(k * k)
    var = Fraction(n * s2 - s1 * s1, n * n) / _TWO ** (2 * qexp)
    width = _snapped_width(a - mid, b - mid, qexp)
    gs = variance_global_sensitivity(n, 0.0, width)
    return ExactStatistic(var, gs, (0.0, variance_sup(n, a, b)), clipped)

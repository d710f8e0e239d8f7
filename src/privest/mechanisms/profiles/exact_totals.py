"""Exact integer sums of records snapped to a public dyadic grid: the reaches of the sum
and the mean (docs/piecewise-laplace.md, "Floating point"; paper 002, Cor. 3.1).

Cor. 3.1 must hold for the float reaches exactly, not up to rounding. The records are
first snapped to the public dyadic grid 2^-p Z (p from the bounds only, so the snapping
is a fixed record-wise map and neighbours stay neighbours). Snapping is lossless for
every record with |x| >= 2^-9 max(|a|, |b|) and moves any other record by at
most 2^-62 max(|a|, |b|). On the grid every reach is an exact integer T (held in two
int64 limbs), for which Cor. 3.1 is a theorem; each float reach is one fixed
nondecreasing map of T (correct rounding, then /n, then scaling by 2^-p, then the clip
and pin to the range), and a nondecreasing map keeps every inequality of Cor. 3.1.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MAX_EXACT_N", "ExactTotals", "grid_exponent", "snap"]

_LIMB = 31
_MASK = (1 << _LIMB) - 1
MAX_EXACT_N = 1 << 30


def grid_exponent(a: float, b: float) -> int:
    """p such that |x| 2^p < 2^62 for every x in [a, b] (records snap to 2^-p Z)."""
    return min(62 - math.frexp(max(abs(a), abs(b)))[1], 1074)


def snap(values: np.ndarray, p: int) -> np.ndarray:
    """round(x 2^p) as int64: a fixed record-wise map (module note above)."""
    return np.rint(np.ldexp(values, p)).astype(np.int64)


class ExactTotals:
    """Exact integer sums T = H 2^31 + L of snapped records, vectorised over many sums."""

    def __init__(self, k_sorted: np.ndarray):
        n = k_sorted.size
        self.h = np.zeros(n + 1, dtype=np.int64)
        self.l = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(k_sorted >> _LIMB, out=self.h[1:])  # floor division: hi limbs
        np.cumsum(k_sorted & _MASK, out=self.l[1:])  # low limbs in [0, 2^31)

    @staticmethod
    def split(value: int) -> tuple[int, int]:
        return value >> _LIMB, value & _MASK

    @staticmethod
    def to_float(h: np.ndarray, lo: np.ndarray) -> np.ndarray:
        """The correctly rounded float64 of h 2^31 + lo (so a nondecreasing map of it)."""
        h = h + (lo >> _LIMB)
        lo = lo & _MASK
        hf = h.astype(np.float64)
        rest = np.ldexp((h - hf.astype(np.int64)).astype(np.float64), _LIMB) + lo  # exact
        return np.ldexp(hf, _LIMB) + rest  # one rounding of the exact total

    @staticmethod
    def equals(h: np.ndarray, lo: np.ndarray, value: int) -> np.ndarray:
        """Elementwise h 2^31 + lo == value, exactly."""
        vh, vl = ExactTotals.split(value)
        h = h + (lo >> _LIMB)
        return (h == vh) & ((lo & _MASK) == vl)

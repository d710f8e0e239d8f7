"""Order-statistic reach profiles on a public lattice (paper 002, Sec. 3.1 and 5.2).

The median and quantile releases of the piecewise Laplace (PLM) and inverse sensitivity
(INV) mechanisms run on a public lattice ``step * Z`` (:mod:`privest.mechanisms.lattice_plm`).
This module builds their reaches there, in integers:

* the lattice: ``step = resolution`` when the caller gives one (``1`` for integer data),
  else the power of two ``2^(floor(log2(b - a)) - 24)``, coarsened if needed so that every
  lattice index in the bounds stays below ``2^52`` in magnitude (so ``index * step`` is an
  exact float for a power-of-two step); the lattice points used are ``ka .. kb`` with
  ``ka = ceil(a / step)``, ``kb = floor(b / step)``, all public;
* the data: each record is mapped to ``clip(round(x / step), ka, kb)``, one fixed
  record-wise map, so neighbours stay neighbours; order statistics of these integers are
  exact, and so is Cor. 3.1 (``U_l(x) <= U_{l+1}(x')``) for the integer reaches;
* the even-n median is the average of two order statistics: it is held doubled, in units
  of ``step / 2`` (n is public, so the output lattice is too); so is a quantile aimed half a
  rank inward (:func:`inward_target`, a public rule), whose reaches
  ``(x_(k+l) + x_(k+l+1)) / 2`` keep Cor. 3.1 like any average of two order statistics;
* truncation (paper 002, Sec. 5.2, range-end tail): levels ``l < k`` are kept and level
  ``k`` runs to the range end, ``k = ceil(2 ln(10^15 N) / eps)`` for N lattice points
  (its weight is at most 10^-15 of the point f(x)); Cor. 3.1 still holds, and
  only the ``2k + 1`` order statistics around the rank are needed (taken from one sort
  of the snapped copy: numpy's vectorised sort is faster than ``np.partition``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from privest.errors import BoundsError, ValidationError
from privest.mechanisms.profiles.reaches import (
    ReachProfile,
    parse_statistic,
    quantile_target,
    target_ranks,
)
from privest.validation import as_float_vector, check_bounds

__all__ = [
    "LatticeGrid",
    "LatticeProfile",
    "data_range",
    "lattice_from_reaches",
    "lattice_order_profile",
    "lattice_profile_of",
    "inward_target",
    "order_statistics",
    "split_by_value",
    "order_window",
    "profile_from_order_statistics",
    "selection_is_shared",
    "shared_selection",
]

#: order statistics of more records than this are preselected by value from a strided
#: sample of about _SAMPLE records (:func:`order_statistics`)
_SAMPLED, _SAMPLE = 1 << 17, 1 << 15
#: records per block of a pass through the data (:func:`split_by_value`)
_BLOCK = 1 << 16
#: default lattice: 2^GRID_BITS to 2^(GRID_BITS + 1) steps across the bounds
GRID_BITS = 24
#: lattice indices stay below 2^INDEX_BITS in magnitude
INDEX_BITS = 52
#: the rank target moves half a rank inward while eps min(k, n + 1 - k) < INWARD_BELOW
INWARD_BELOW = 8.0


def inward_target(statistic: str, quantile: float | None, n: int, epsilon: float) -> bool:
    """The public rank-target rule (n, q, eps only; docs/piecewise-laplace.md, "Quantile
    convention"): a quantile whose target (:func:`~privest.mechanisms.profiles.reaches.
    quantile_target`, rank t) is off the middle (``t != (n + 1)/2``) moves half a rank
    inward when ``eps min(t, n + 1 - t) < INWARD_BELOW``. The median (and q = 1/2, the
    same target) never moves."""
    name, q_spec = parse_statistic(statistic)
    q = q_spec if quantile is None else quantile
    if name != "quantile" or q is None or n < 2:
        return False
    twice = quantile_target(q, n)
    return twice != n + 1 and epsilon * min(twice, 2 * (n + 1) - twice) < 2 * INWARD_BELOW


@dataclass(frozen=True)
class LatticeGrid:
    """The public lattice ``step * Z`` restricted to ``[ka, kb]`` (module docstring)."""

    step: float
    ka: int
    kb: int

    @classmethod
    def for_bounds(cls, a: float, b: float, resolution: float | None = None) -> LatticeGrid:
        """The lattice of data bounds ``(a, b)``: ``resolution`` or a power of two."""
        if resolution is None:
            top = max(abs(a), abs(b))
            e_top = math.frexp(top)[1] if top > 0 else -1074
            width = b - a
            if not (width > 0 and math.isfinite(width)):
                raise ValidationError(f"bounds: ({a}, {b}) must have a finite positive width")
            e = max(math.floor(math.log2(width)) - GRID_BITS, e_top - INDEX_BITS)
            step = math.ldexp(1.0, e)
        else:
            step = float(resolution)
            if not (step > 0 and math.isfinite(step)):
                raise ValidationError(
                    f"resolution: {resolution!r} must be a finite number > 0 (e.g. 1 for "
                    "integer data)"
                )
        ka, kb = math.ceil(a / step), math.floor(b / step)
        if kb < ka:
            raise ValidationError(
                f"resolution: {step!r} leaves no lattice point inside the bounds ({a}, {b})"
            )
        if max(abs(ka), abs(kb)) >= 2**INDEX_BITS:
            raise ValidationError(
                f"resolution: {step!r} is too fine for the bounds ({a}, {b}): more than "
                f"2^{INDEX_BITS} lattice steps"
            )
        return cls(step, int(ka), int(kb))

    def snap(self, x: np.ndarray) -> np.ndarray:
        """``clip(round(x / step), ka, kb)`` (float array of integers): a record-wise map."""
        k = np.divide(x, self.step)
        np.rint(k, out=k)
        return np.clip(k, self.ka, self.kb, out=k)


@dataclass(frozen=True)
class LatticeProfile:
    """Integer reaches ``upper[l] = U_l``, ``lower[l] = D_l`` (l = 0..k) on a lattice.

    Output ``y = index * unit``; ``unit`` is the lattice step, halved for the doubled
    even-n median. ``lo``/``hi`` are the public index range, ``center`` the statistic.
    """

    center: int
    upper: np.ndarray
    lower: np.ndarray
    lo: int
    hi: int
    unit: float
    statistic: str
    n: int
    n_clipped: int = 0

    @property
    def levels(self) -> int:
        """k, the largest level stored (the range-end tail is level k)."""
        return max(self.upper.size, self.lower.size) - 1

    def to_output(self, k: Any) -> Any:
        """Lattice indices to output floats (one public map)."""
        return np.asarray(k, dtype=np.float64) * self.unit


def data_range(arr: np.ndarray) -> tuple[float, float]:
    """``(min, max)`` of the records; inside :func:`shared_selection` of them, once."""
    shared = _shared_for(arr)
    if shared is not None and shared["range"] is not None:
        return shared["range"]
    lo, hi = float(arr.min()), float(arr.max())
    if shared is not None:
        shared["range"] = (lo, hi)
    return lo, hi


def _check_data(x: Any, a: float, b: float, clip: bool) -> tuple[np.ndarray, int]:
    arr = as_float_vector(x)
    lo, hi = data_range(arr)
    outside = 0
    if lo < a or hi > b:
        outside = int(np.count_nonzero((arr < a) | (arr > b)))
        if not clip:
            raise BoundsError(
                f"x: some values lie outside the public bounds [{a:g}, {b:g}]; "
                "pass clip=True to clip them"
            )
        arr = np.clip(arr, a, b)
    return arr, outside


def lattice_order_profile(
    x: Any,
    statistic: str,
    bounds: Any,
    *,
    levels: int,
    quantile: float | None = None,
    resolution: float | None = None,
    clip: bool = False,
    inward: bool = False,
) -> LatticeProfile:
    """The truncated integer reaches of the median or a quantile (module docstring).

    ``levels`` = k: ``U_l`` for ``l < k`` are order statistics, ``U_k`` the range end.
    ``inward``: target half a rank inward (:func:`inward_target`).
    """
    ((a, b),) = check_bounds(bounds, 1).tolist()
    grid = LatticeGrid.for_bounds(float(a), float(b), resolution)
    arr, clipped = _check_data(x, a, b, clip)
    n = arr.size
    _, first, last = order_window(statistic, quantile, n, levels, inward=inward)
    # snapping is nondecreasing, so it commutes with taking order statistics
    window = grid.snap(order_statistics(arr, first, last)).astype(np.int64)
    return profile_from_order_statistics(
        window,
        statistic,
        grid,
        n=n,
        levels=levels,
        quantile=quantile,
        n_clipped=clipped,
        inward=inward,
    )


def split_by_value(x: np.ndarray, lo: float, hi: float) -> tuple[int, np.ndarray]:
    """``(the number of records below lo, the records in [lo, hi] in their order)``, in one
    pass block by block (each block stays in the cache for its comparisons)."""
    below, parts = 0, []
    for start in range(0, x.size, _BLOCK):
        block = x[start : start + _BLOCK]
        keep = block >= lo
        below += block.size - int(np.count_nonzero(keep))
        keep &= block <= hi
        parts.append(block[keep])
    return below, np.concatenate(parts) if parts else x[:0]


#: inside :func:`shared_selection`: its data's memory, the selections and the range
_SHARED: ContextVar[dict | None] = ContextVar("privest_shared_selection", default=None)


@contextmanager
def shared_selection(x: Any) -> Iterator[None]:
    """Within the block, :func:`order_statistics` of the records of ``x`` (a float64 array,
    or any view of its memory) keeps what it selected (all the records sorted, or the
    records in a band of values around a window widened by ``2 sqrt(n)`` ranks) and reads
    any later window that falls in it from there, and :func:`data_range` reads the range
    once: a median's or quantile's point and its interval's two ends select from one pass
    through the data. Other arrays (copies, a backend's partitions) are not kept. The
    caller holds ``x`` and must not change it inside the block."""
    key = _memory(x) if isinstance(x, np.ndarray) and x.dtype == np.float64 else None
    token = _SHARED.set({"key": key, "windows": [], "range": None})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _shared_for(arr: np.ndarray) -> dict | None:
    """The shared state if ``arr`` is the records of the block's data, else None."""
    shared = _SHARED.get()
    if shared is None or shared["key"] is None or _memory(arr) != shared["key"]:
        return None
    return shared


def selection_is_shared(arr: np.ndarray) -> bool:
    """Whether :func:`order_statistics` of ``arr`` runs inside :func:`shared_selection` of
    its data."""
    return _shared_for(arr) is not None


def _memory(x: np.ndarray) -> tuple:
    return (x.__array_interface__["data"][0], x.shape, x.strides, x.dtype.str)


def order_statistics(x: np.ndarray, first: int, last: int) -> np.ndarray:
    """``x_(first) .. x_(last)`` (1-based ranks, ``1 <= first <= last <= x.size``), sorted,
    by selection, exactly: above ``_SAMPLED`` records, a sorted strided sample of about
    ``_SAMPLE`` records proposes values ``v_lo <= v_hi`` around the ranks (with a wide margin
    of sample ranks); one pass counts the records below ``v_lo`` and keeps those in
    ``[v_lo, v_hi]``, and if the ranks fall among them they are selected there (ranks shift
    by the count below), else from all records. Selection: :func:`numpy.partition` at the
    two ends, then a sort of the window (benchmarks/README.md, "Two-stage median").
    Inside :func:`shared_selection` the records kept are reused by later windows."""
    shared = _shared_for(x)
    if shared is not None:
        return _shared_order_statistics(shared["windows"], x, first, last)
    n = x.size
    if n > _SAMPLED:
        below, inside = _preselect(x, first, last, 0)
        if below < first and last <= below + inside.size:
            x, first, last = inside, first - below, last - below
    part = np.partition(x, (first - 1, last - 1))
    return np.sort(part[first - 1 : last])


def _preselect(x: np.ndarray, first: int, last: int, widen: int) -> tuple[int, np.ndarray]:
    """(records below ``v_lo``, records in ``[v_lo, v_hi]``): the values a sorted strided
    sample puts around the ranks ``first - widen .. last + widen`` (:func:`order_statistics`)."""
    n = x.size
    sample = np.sort(x[:: max(1, n // _SAMPLE)])
    m, margin = sample.size, 6 * math.isqrt(_SAMPLE)
    i_lo = (first - widen - 1) * m // n - margin
    i_hi = -(-(last + widen) * m // n) + margin
    v_lo = sample[i_lo] if i_lo >= 0 else -np.inf
    v_hi = sample[i_hi] if i_hi < m else np.inf
    return split_by_value(x, v_lo, v_hi)


def _shared_order_statistics(shared: list[tuple], x: np.ndarray, first: int, last: int):
    """:func:`order_statistics` inside :func:`shared_selection`: from an entry holding the
    ranks, else from a new entry (all records sorted up to ``_SAMPLE`` records, else a band
    widened by ``2 sqrt(n)`` ranks; all records if the band misses)."""
    entry = next((e for e in shared if e[0] < first <= last <= e[0] + e[1].size), None)
    if entry is None:
        if x.size <= _SAMPLE:
            entry = (0, np.sort(x), True)
        else:
            below, kept = _preselect(x, first, last, 2 * math.isqrt(x.size))
            if not below < first <= last <= below + kept.size:
                below, kept = 0, x
            entry = (below, kept, False)
        shared.append(entry)
    below, kept, ordered = entry
    lo, hi = first - below, last - below
    if ordered:
        return kept[lo - 1 : hi].copy()
    return np.sort(np.partition(kept, (lo - 1, hi - 1))[lo - 1 : hi])


def order_window(
    statistic: str, quantile: float | None, n: int, levels: int, *, inward: bool = False
) -> tuple[list[int], int, int]:
    """``(ranks, first, last)``: the rank(s) of the median or quantile of n records and the
    1-based ranks ``first .. last`` of the order statistics its k-level profile reads.
    A quantile's target is the half rank nearest numpy's (:func:`~privest.mechanisms.
    profiles.reaches.quantile_target`): one rank, or two averaged like the even-n median;
    ``inward`` moves it half a rank toward the middle (:func:`inward_target`)."""
    name, q_spec = parse_statistic(statistic)
    if name not in ("median", "quantile"):
        raise ValidationError(
            f"statistic: {statistic!r}; the lattice profile is for medians and quantiles"
        )
    q = q_spec if quantile is None else quantile
    twice = n + 1  # the median
    if name == "quantile":
        if q is None:
            raise ValidationError("quantile: the level is required, e.g. quantile=0.9")
        twice = quantile_target(q, n)
        if inward and twice != n + 1:
            twice += 1 if twice < n + 1 else -1
    ranks = target_ranks(twice)
    k = int(levels)
    return ranks, max(1, ranks[0] - k), min(n, ranks[-1] + k)


def profile_from_order_statistics(
    window: np.ndarray,
    statistic: str,
    grid: LatticeGrid,
    *,
    n: int,
    levels: int,
    quantile: float | None = None,
    n_clipped: int = 0,
    inward: bool = False,
) -> LatticeProfile:
    """The profile from the snapped order statistics alone: ``window`` holds the lattice
    indices of x_(first) .. x_(last) (:func:`order_window`) of the n snapped records. The
    out-of-core quantiles (privest.scale) select them by distributed selection."""
    name, q_spec = parse_statistic(statistic)
    q = q_spec if quantile is None else quantile
    ranks, first, last = order_window(statistic, quantile, n, levels, inward=inward)
    window = np.asarray(window, dtype=np.int64)
    if window.shape != (last - first + 1,):
        raise ValidationError(f"window: needs the {last - first + 1} order statistics")
    k = int(levels)

    def order(r: np.ndarray) -> np.ndarray:
        """x_(r) of the snapped data with x_(0) = ka, x_(n+1) = kb (r clipped)."""
        r = np.clip(r, 0, n + 1)
        inner = window[np.clip(r - first, 0, window.size - 1)]
        return np.where(r <= 0, grid.ka, np.where(r >= n + 1, grid.kb, inner))

    lv = np.arange(k)
    if len(ranks) == 1:
        (m,) = ranks
        up, dn = order(m + lv), order(m - lv)
        lo, hi, unit = grid.ka, grid.kb, grid.step
    else:
        m = ranks[0]
        up = order(m + lv) + order(m + 1 + lv)
        dn = order(m - lv) + order(m + 1 - lv)
        lo, hi, unit = 2 * grid.ka, 2 * grid.kb, grid.step / 2
    up = np.append(up, hi).astype(np.int64)
    dn = np.append(dn, lo).astype(np.int64)
    label = "median" if name == "median" else f"quantile {q:g}"
    if name == "quantile" and len(ranks) == 2:
        label += f" (rank {ranks[0]}.5)"
    return LatticeProfile(int(up[0]), up, dn, int(lo), int(hi), unit, label, n, n_clipped)


def lattice_profile_of(mech: Any, x: Any) -> LatticeProfile:
    """The lattice profile a lattice order-statistic mechanism reads from in-memory data
    ``x``: its grid, its levels and its rank target (``mech.grid``, ``mech.levels``,
    ``mech.inward(n)``); a backend reads the same order statistics by selection."""
    n = int(np.size(x))
    return lattice_order_profile(
        x,
        mech.spec,
        mech.bounds,
        levels=mech.levels,
        resolution=mech.grid.step,
        clip=mech.clip,
        inward=mech.inward(n),
    )


def lattice_from_reaches(profile: ReachProfile, levels: int) -> LatticeProfile:
    """A float reach profile (paper 002, Sec. 3.1) moved onto the public lattice of its
    statistic's range ``[lo, hi]`` (:meth:`LatticeGrid.for_bounds`), for an exact release.

    ``f(x)`` goes to the nearest lattice point, every ``U_l`` (l >= 1) up to a lattice point
    and every ``D_l`` down, clipped to the range, after keeping the first ``levels`` levels
    with the range-end tail (Sec. 5.2). Rounding up (down) is nondecreasing, so Cor. 3.1
    (``U_l(x) <= U_{l+1}(x')``, ``D_l(x) >= D_{l+1}(x')``) carries over from the float reaches
    to the lattice ones, and ``round(f) <= ceil(U_1(x'))`` since ``f(x) <= U_1(x')``: the
    lattice mechanisms' privacy argument applies unchanged. The step is a power of two
    (division by it is exact).
    """
    grid = LatticeGrid.for_bounds(profile.lo, profile.hi)
    if profile.levels > levels:
        profile = profile.truncated(int(levels))
    g = grid.step
    center = int(min(max(round(profile.center / g), grid.ka), grid.kb))
    up = np.clip(np.ceil(profile.upper / g), grid.ka, grid.kb).astype(np.int64)
    dn = np.clip(np.floor(profile.lower / g), grid.ka, grid.kb).astype(np.int64)
    up[0] = dn[0] = center
    up[-1], dn[-1] = grid.kb, grid.ka
    up, dn = np.maximum.accumulate(up), np.minimum.accumulate(dn)
    return LatticeProfile(
        center, up, dn, grid.ka, grid.kb, g, profile.statistic, profile.n, profile.n_clipped
    )

"""Statistics computed exactly, as rationals, for float-safe noise on a lattice.

The lattice mechanisms of :mod:`privest.mechanisms.samplers.lattice` release ``g (round(f/g) + K)``.
Their guarantee needs the integer ``round(f/g)`` to move by at most ``floor(Delta/g) + 1``
between neighbours, which fails if ``f`` is computed with a rounding error comparable to
``g`` (the precision-of-the-sum attack: a float sum of 10^8 records can be off by far more
than one grid step). So ``f`` is computed exactly here:

* mean, sum: records are snapped to a public dyadic grid ``2^-p Z`` with
  ``max(|a|, |b|) 2^p < 2^41`` (p from the bounds only, a fixed record-wise map, so
  neighbours stay neighbours; it moves a record by at most ``2^-42 max(|a|, |b|)``) and
  summed exactly: in blocks of 4096 the float sum of such multiples is exact (every partial
  sum is an integer multiple below 2^53), and the block sums are added as Python integers;
  the mean is the rational ``T 2^-p / n``;
* variance: the records, centred at the public midpoint, are snapped to ``2^-q Z`` with
  ``|k| < 2^31`` (a move of at most ``2^-32 (b - a)`` per record), and ``sum k`` and
  ``sum k^2`` are summed exactly; the variance is ``(n S2 - S1^2) / n^2 2^-2q``;
* median, quantiles: order statistics are data values (the mean of two for an even-n
  median is an exact rational); count: an integer.

The pass over an array is compiled for large arrays in a long-running process
(:mod:`~privest.mechanisms.profiles.exact_kernel`): the same rounded values, added exactly
in another order, so the same integers.

The sensitivity returned is that of the snapped statistic (the bounds widened by the
snapping, at most one grid step of ``2^-p`` or ``2^-q``).
"""

from __future__ import annotations

import importlib
import math
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.profiles.reaches import (
    parse_statistic,
    prepare_data,
    quantile_target,
    target_ranks,
)
from privest.mechanisms.profiles.sensitivity import global_sensitivity
from privest.mechanisms.profiles.variance import variance_global_sensitivity, variance_sup
from privest.validation import as_float_vector, check_bounds

__all__ = [
    "Derived",
    "Deviation",
    "ExactStatistic",
    "exact_statistic",
    "exact_totals",
    "exact_totals_with",
    "statistic_from_totals",
]

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


#: records per block of the exact float sum: 4096 multiples below 2^41 sum below 2^53
_BLOCK = 4096
_GRID_BITS = 41
#: records scaled at a time (a cache-sized buffer, 512 KB)
_CHUNK = 16 * _BLOCK
_TWO64 = 1 << 64
_KERNEL_MODULE = "privest.mechanisms.profiles.exact_kernel"


def _chunks(arr: np.ndarray, a: float, b: float, check: bool = True):
    """``(chunk, buffer)`` pairs over ``arr``, each chunk checked to lie in ``[a, b]`` on
    the way (in the cache; NaN fails ``min >= a``) unless ``check=False``; ``None`` is
    yielded once, and the iteration stops, at the first chunk that does not."""
    buf = np.empty(min(arr.size, _CHUNK))
    for start in range(0, arr.size, _CHUNK):
        chunk = arr[start : start + _CHUNK]
        if check and not (chunk.min() >= a and chunk.max() <= b):
            yield None
            return
        yield chunk, buf[: chunk.size]


def _grid_sum(src: np.ndarray, v: np.ndarray, p: int) -> int:
    """``sum(round(src 2^p))`` exactly, for ``|src| 2^p < 2^41`` (module docstring), through
    the buffer ``v`` (``src`` may be ``v``): the float sums of blocks of 4096 such multiples
    are exact (below 2^53), and so is their int64 total."""
    np.multiply(src, math.ldexp(1.0, p), out=v)  # a power of two: the products are exact
    np.rint(v, out=v)
    whole = v.size - v.size % _BLOCK
    return int(v[:whole].reshape(-1, _BLOCK).sum(axis=1).astype(np.int64).sum()) + int(
        v[whole:].sum()
    )


def _moments(chunk: np.ndarray, v: np.ndarray, mid: float, q: int) -> tuple[int, int]:
    """``(sum k, sum k^2)`` exactly for ``k = round((chunk - mid) 2^q)``, ``|k| < 2^31``
    (at most 2^16 records):

    * ``sum k``: the float sum of integers below 2^31 in magnitude stays below 2^47, so
      every partial sum is exact;
    * ``T = sum k^2`` (below 2^78): its int64 sum wraps, giving ``S = T mod 2^64`` exactly,
      and the float sum of the float squares gives ``T`` within ``1.01 m u T <= 2^42`` (m
      records, unit roundoff ``u = 2^-53``; Higham 2002, Sec. 3.1 and 4.2); since
      ``2^42 < 2^63``, ``T`` is the one number ``= S mod 2^64`` within ``2^63`` of it.
    """
    np.subtract(chunk, mid, out=v)
    np.multiply(v, math.ldexp(1.0, q), out=v)  # = ldexp(chunk - mid, q): exact
    np.rint(v, out=v)
    k = v.astype(np.int64)
    t1 = int(v.sum())
    near = float(np.multiply(v, v, out=v).sum())  # T within 2^42
    np.multiply(k, k, out=k)  # wraps modulo 2^64
    wrapped = int(k.sum()) % _TWO64
    return t1, wrapped + _TWO64 * round((near - wrapped) / _TWO64)


@dataclass(frozen=True)
class Deviation:
    """The record-wise map ``(x - centre)^2``, or ``((x - centre)^2 - level)^2`` with a
    ``level``: the spread of a mean or sum and the fourth moment of a variance
    (:mod:`privest.intervals.release`). ``self(x, out)`` writes it into ``out``; the compiled
    pass (:mod:`~privest.mechanisms.profiles.exact_kernel`) does the same float operations
    in the same order."""

    centre: float
    level: float | None = None

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        np.subtract(x, self.centre, out=out)
        np.multiply(out, out, out=out)
        if self.level is not None:
            np.subtract(out, self.level, out=out)
            np.multiply(out, out, out=out)


@dataclass(frozen=True)
class Derived:
    """The mean of a record-wise map ``f(records, out)`` (a :class:`Deviation` or any
    callable; only the former runs in the compiled pass) of the (checked or clipped)
    records, with public bounds ``(lo, hi)`` into which the mapped values are clipped
    (``clip=True``); ``f=None``: the records themselves (with the records' clipped count). Its
    totals come from the pass that reads the records for another statistic
    (:func:`exact_totals_with`). ``within=True``: the caller has shown that ``f`` maps the
    records' bounds into ``[lo, hi]`` (nothing to clip, so no check)."""

    f: Any
    lo: float
    hi: float
    within: bool = False


def _derived_part(chunk: np.ndarray, v: np.ndarray, d: Derived, inside: bool) -> tuple[int, int]:
    """``(clipped, t1)`` of one chunk of a :class:`Derived` mean (through the buffer ``v``):
    the mapped values clipped into ``[lo, hi]`` as :func:`prepare_data` does (``inside``:
    the records themselves, already checked within these bounds), then their grid sum."""
    src = chunk
    if d.f is not None:
        d.f(chunk, v)
        src = v
    clipped = 0
    if not (inside or (src.min() >= d.lo and src.max() <= d.hi)):
        clipped = int(np.count_nonzero((src < d.lo) | (src > d.hi)))
        src = np.clip(src, d.lo, d.hi, out=v)
    return clipped, _grid_sum(src, v, _dyadic_exponent(d.lo, d.hi, _GRID_BITS))


#: the smallest array the compiled pass reads (at 2^10 records its fixed cost is about half
#: the numpy pass's dozen calls; benchmarks/bench_statistics.py)
KERNEL_MIN = 1 << 10
#: the records a process passes through the numpy pass before it loads the compiled one:
#: about the CPU time of importing numba and loading the cached kernel (about 1 s), so a
#: one-off release (the CLI's) never loads numba, and a long-running process pays that
#: once and at most twice what the cheaper choice would have cost (docs/central-inference.md)
KERNEL_AFTER = 1 << 27
_numpy_records = 0


def _compiled(arr: np.ndarray, derived: tuple) -> bool:
    """Whether :func:`_pass` takes the compiled loop (the totals are the same either way: the
    choice reads only public sizes, the records' layout and the process's history)."""
    global _numpy_records
    if not (
        arr.size >= KERNEL_MIN
        and arr.flags.c_contiguous
        and len(derived) <= 1
        and all(d.f is None or isinstance(d.f, Deviation) for d in derived)
    ):
        return False
    if _KERNEL_MODULE in sys.modules:
        return True
    _numpy_records += arr.size
    return _numpy_records >= KERNEL_AFTER


def _pass(
    arr: np.ndarray, a: float, b: float, statistic: str | None, derived: tuple, check: bool = True
) -> tuple | None:
    """One pass through the memory: the ``statistic``'s integer sums (:func:`_own`) and each
    :class:`Derived` mean's ``(clipped, t1)``; None if a record lies outside ``[a, b]`` or is
    NaN. Compiled (:mod:`~privest.mechanisms.profiles.exact_kernel`) for a large contiguous
    array and at most one :class:`Deviation` or records' mean; else numpy, chunk by chunk
    (in the cache). Both give the same integers (exact sums of the same rounded values)."""
    inside = [d.within or (d.f is None and d.lo <= a and b <= d.hi) for d in derived]
    if _compiled(arr, derived):
        return _compiled_pass(arr, a, b, statistic, derived, inside, check)
    own = _own(statistic, a, b)
    sums: list[int] | None = None
    parts = [[0, 0] for _ in derived]
    for item in _chunks(arr, a, b, check):
        if item is None:
            return None
        chunk, v = item
        got = own(chunk, v) if own is not None else ()
        sums = list(got) if sums is None else [s + g for s, g in zip(sums, got, strict=True)]
        for acc, d, ins in zip(parts, derived, inside, strict=True):
            clipped, t1 = _derived_part(chunk, v, d, ins)
            acc[0] += clipped
            acc[1] += t1
    return tuple(sums or ()), parts


def _own(statistic: str | None, a: float, b: float) -> Any:
    """``own(chunk, buffer)``: the tuple of integer sums of the ``statistic`` on one chunk."""
    if statistic == "variance":
        mid, qexp = _variance_grid(a, b)
        return partial(_moments, mid=mid, q=qexp)
    if statistic is not None:
        return partial(_own_sum, p=_dyadic_exponent(a, b, _GRID_BITS))
    return None


def _compiled_pass(
    arr: np.ndarray,
    a: float,
    b: float,
    statistic: str | None,
    derived: tuple,
    inside: list[bool],
    check: bool,
) -> tuple | None:
    """:func:`_pass` through the compiled loop, with the grids of the numpy pass."""
    kern = importlib.import_module(_KERNEL_MODULE)
    own = (kern.OWN_NONE, 0.0, 1.0)
    if statistic == "variance":
        mid, qexp = _variance_grid(a, b)
        own = (kern.OWN_MOMENTS, mid, math.ldexp(1.0, qexp))
    elif statistic is not None:
        own = (kern.OWN_SUM, 0.0, math.ldexp(1.0, _dyadic_exponent(a, b, _GRID_BITS)))
    spec = (kern.MAP_NONE, 0.0, 0.0, 0.0, 0.0, True, 1.0)
    if derived:
        (d,) = derived
        kind, centre, level = kern.MAP_RECORDS, 0.0, 0.0
        if d.f is not None:
            kind, centre = kern.MAP_SQUARE, float(d.f.centre)
        if d.f is not None and d.f.level is not None:
            kind, level = kern.MAP_FOURTH, float(d.f.level)
        scale = math.ldexp(1.0, _dyadic_exponent(d.lo, d.hi, _GRID_BITS))
        spec = (kind, centre, level, float(d.lo), float(d.hi), bool(inside[0]), scale)
    got = kern.kernel_totals(arr, float(a), float(b), bool(check), own, spec)
    if got is None:
        return None
    sums, part = got
    return sums, [list(part)] if derived else []


def _dyadic_exponent(a: float, b: float, bits: int) -> int:
    """p with ``max(|a|, |b|) 2^p < 2^bits``."""
    return min(bits - math.frexp(max(abs(a), abs(b)))[1], 1074)


def _snapped_width(a: float, b: float, p: int) -> float:
    """The width of the snapped bounds ``(round(b 2^p) - round(a 2^p)) 2^-p``."""
    return (round(math.ldexp(b, p)) - round(math.ldexp(a, p))) * math.ldexp(1.0, -p)


def _open_range(a: float, b: float) -> tuple[float, float]:
    """The public range of a sum of an unknown number of values in [a, b]."""
    return (-math.inf if a < 0 else 0.0, math.inf if b > 0 else 0.0)


def _mean_or_sum(
    name: str,
    total: Fraction,
    n: int,
    a: float,
    b: float,
    p: int,
    clipped: int,
    domain: Domain | None = None,
) -> ExactStatistic:
    width = _snapped_width(a, b, p)
    if domain is not None and domain.neighbours == "add_remove":  # the sum; n is private
        snapped = tuple(math.ldexp(round(math.ldexp(v, p)), -p) for v in (a, b))
        gs = global_sensitivity("sum", replace(domain, bounds=snapped))
        return ExactStatistic(total, gs, _open_range(a, b), clipped)
    if name == "sum":
        return ExactStatistic(total, width, (n * a, n * b), clipped)
    mean = min(max(total / n, Fraction(a)), Fraction(b))  # the snapped mean stays in range
    return ExactStatistic(mean, width / n, (a, b), clipped)


def exact_statistic(
    x: Any,
    statistic: str,
    bounds: Any = None,
    *,
    quantile: float | None = None,
    clip: bool = False,
    domain: Domain | None = None,
) -> ExactStatistic:
    """The exact value of a named statistic (module docstring), with its sensitivity under
    ``domain``'s neighbour relation (swap by default; add/remove for the sum and count)."""
    name, q_spec = parse_statistic(statistic)
    q = q_spec if quantile is None else quantile
    if name == "count":
        return statistic_from_totals(statistic, exact_totals(x, statistic), domain=domain)
    if bounds is None:
        raise ValidationError(f"bounds: required for the {name} (public bounds (lo, hi))")
    if name in ("mean", "sum", "variance"):
        totals = exact_totals(x, statistic, bounds, clip=clip)
        return statistic_from_totals(statistic, totals, bounds, domain=domain)
    arr, a, b, clipped = prepare_data(x, bounds, clip)  # raises for NaN or out of bounds
    n = arr.size
    if name == "quantile" and q is None:
        raise ValidationError("quantile: the level is required, e.g. quantile=0.9")
    ranks = target_ranks(quantile_target(q, n) if name == "quantile" else n + 1)
    part = np.partition(arr, [r - 1 for r in ranks])
    value = sum(Fraction(float(part[r - 1])) for r in ranks) / len(ranks)
    return ExactStatistic(value, b - a, (a, b), clipped)


def _variance_grid(a: float, b: float) -> tuple[float, int]:
    """The variance's public centre and grid exponent q (module docstring)."""
    mid = (a + b) / 2.0
    return mid, _dyadic_exponent(b - mid, mid - a, 31)


def exact_totals(
    x: Any, statistic: str, bounds: Any = None, *, clip: bool = False
) -> dict[str, int]:
    """The exact integer totals of the count, sum, mean or variance on (a part of) the data:
    ``n``, ``clipped`` and ``t1`` (and ``t2``, variance), on the module docstring's grids.
    Totals of disjoint parts add up to the totals of their union (out-of-core statistics
    sum them over partitions, exactly; :func:`statistic_from_totals` finishes)."""
    name, _ = parse_statistic(statistic)
    if name == "count":
        if isinstance(x, np.ndarray) and x.dtype == np.bool_ and x.ndim == 1 and x.size:
            return {"n": x.size, "clipped": 0, "t1": int(np.count_nonzero(x))}  # no float copy
        ind = as_float_vector(x, "indicators")
        if not np.all((ind == 0) | (ind == 1)):
            raise ValidationError("indicators: entries must be 0/1 or booleans (one per record)")
        return {"n": int(ind.size), "clipped": 0, "t1": int(ind.sum())}
    if name not in ("mean", "sum", "variance"):
        raise ValidationError(f"statistic: {statistic!r} is not a sum of records")
    return exact_totals_with(x, bounds, (), statistic=name, clip=clip)[0]


def exact_totals_with(
    x: Any,
    bounds: Any,
    derived: tuple[Derived, ...],
    *,
    statistic: str | None = None,
    clip: bool = False,
    checked: bool = False,
) -> tuple[dict[str, int], list[dict[str, int]]]:
    """:func:`exact_totals` of the ``statistic`` (``"mean"``, ``"sum"``, ``"variance"``;
    None: none) on the records in ``bounds`` and the mean totals of each :class:`Derived`
    map of them (with its bounds), in ONE pass through the memory: what a release and the
    releases of its interval read (the spread of a mean, the centring mean of a variance;
    :mod:`privest.intervals.release`). Each is equal to the totals of its own pass.
    ``checked=True``: an earlier pass of the same release checked that the records (a
    float64 array, ``clip=False``) lie in ``bounds``; this one does not check again."""
    ((a, b),) = check_bounds(bounds, 1).tolist()
    fast = isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim == 1 and x.size > 0
    arr, clipped = x, 0
    got = _pass(arr, a, b, statistic, derived, not checked) if fast and not clip else None
    if got is None:  # other types, clip=True, or bad values: the checks name the problem
        arr, a, b, clipped = prepare_data(x, bounds, clip)  # raises for NaN or out of bounds
        got = _pass(arr, a, b, statistic, derived)
    sums, parts = got
    n = int(arr.size)
    out = {"n": n, "clipped": clipped, "t1": sums[0] if sums else 0}
    if statistic == "variance":
        out["t2"] = sums[1] if sums else 0
    means = [
        {"n": n, "clipped": c + (clipped if d.f is None else 0), "t1": t1}
        for d, (c, t1) in zip(derived, parts, strict=True)
    ]
    return out, means


def _own_sum(chunk: np.ndarray, v: np.ndarray, p: int) -> tuple[int]:
    return (_grid_sum(chunk, v, p),)


def statistic_from_totals(
    statistic: str, totals: dict[str, int], bounds: Any = None, *, domain: Domain | None = None
) -> ExactStatistic:
    """The exact statistic (and its sensitivity under ``domain``'s neighbour relation) from
    :func:`exact_totals` of all the data."""
    name, _ = parse_statistic(statistic)
    n, clipped = totals["n"], totals["clipped"]
    add_remove = domain is not None and domain.neighbours == "add_remove"
    if name == "count":
        if add_remove:  # n is private: no upper end
            gs = global_sensitivity("count", domain)
            return ExactStatistic(Fraction(totals["t1"]), gs, (0.0, math.inf), 0)
        return ExactStatistic(Fraction(totals["t1"]), 1.0, (0.0, float(n)), 0)
    ((a, b),) = check_bounds(bounds, 1).tolist()
    if name in ("mean", "sum"):
        if n == 0 and not add_remove:
            raise ValidationError("x: no records")
        p = _dyadic_exponent(a, b, _GRID_BITS)
        total = Fraction(totals["t1"]) / _TWO**p
        return _mean_or_sum(name, total, n, a, b, p, clipped, domain)
    if n < 2:
        raise ValidationError("x: the variance needs at least 2 records (n is public)")
    mid, qexp = _variance_grid(a, b)
    s1, s2 = totals["t1"], totals["t2"]
    var = Fraction(n * s2 - s1 * s1, n * n) / _TWO ** (2 * qexp)
    width = _snapped_width(a - mid, b - mid, qexp)
    gs = variance_global_sensitivity(n, 0.0, width)
    return ExactStatistic(var, gs, (0.0, variance_sup(n, a, b)), clipped)

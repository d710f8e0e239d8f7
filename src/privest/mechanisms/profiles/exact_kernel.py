"""The compiled pass of :mod:`privest.mechanisms.profiles.exact`: the exact totals of a mean,
sum or variance and of one derived mean (the spread of a mean or sum, the centring mean or
the fourth moment of a variance) in one loop over the records.

Each record goes through the float operations of the numpy pass of
:mod:`~privest.mechanisms.profiles.exact` in the same order (IEEE, no fused multiply-add),
and the rounded grid values, integers, are added exactly: in float blocks of 4096 (exact in
any order, so only these additions may be reassociated and vectorised), the block sums in
int64. The totals, and so every release, are the numpy pass's to the bit
(tests/mechanisms/test_exact_kernel.py). A process imports this module (and numba) only
after many records (:data:`~privest.mechanisms.profiles.exact.KERNEL_AFTER`); it is compiled
once per installation where numba can cache (``cache=True``; docs/central-inference.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from privest.compiled import jit_options

__all__ = ["kernel_totals"]

#: records per int64 partial total: ``2^20`` grid values up to ``2^41`` (or squares up to
#: ``2^62`` split in two 32-bit halves) sum below ``2^63``
SPAN = 1 << 20

#: the own statistic: none, the grid sum (mean, sum), the two moments (variance)
OWN_NONE, OWN_SUM, OWN_MOMENTS = 0, 1, 2
#: the derived map: none, the records, ``(x - c)^2``, ``((x - c)^2 - v)^2``
MAP_NONE, MAP_RECORDS, MAP_SQUARE, MAP_FOURTH = 0, 1, 2, 3


_JIT = jit_options("the exact-sum kernel", "about 2 s", error_model="numpy", nogil=True)

#: records per float partial sum: 4096 grid values below ``2^41`` sum exactly below
#: ``2^53`` in any order, so the loop may reassociate (and vectorise) that addition alone
BLOCK = 4096


@njit(**_JIT)
def _grid(y, scale):
    """``round(y 2^p)`` for ``scale = 2^p`` (the operations of ``exact._grid_sum``)."""
    return np.rint(y * scale)


@njit(**_JIT)
def _centred(x, mid, scale):
    """``round((x - mid) 2^q)`` (the operations of ``exact._moments``)."""
    return np.rint((x - mid) * scale)


@njit(**_JIT)
def _mapped(x, kind, c, v):
    """The derived map of one record (:class:`~privest.mechanisms.profiles.exact.Deviation`'s
    operations)."""
    if kind == MAP_RECORDS:
        return x
    y = x - c
    y = y * y
    if kind == MAP_FOURTH:
        y = y - v
        y = y * y
    return y


#: The map and the rounding are strict functions (no fast-math flag on their operations);
#: only the additions of whole grid values in :func:`_body` carry ``reassoc``.
_FAST = {"fastmath": {"reassoc"}, **_JIT}


@njit(inline="always", **_FAST)
def _body(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """Partial totals per span of :data:`SPAN` records: ``ok`` (False: a record out of
    ``[a, b]`` or NaN, when ``check``), own ``t1``, ``t2`` low and high 32-bit halves, the
    derived map's ``t1``, and its clipped count. Inlined into each entry point below, whose
    constant ``own``, ``kind`` (and ``inside``) leave one branch-free loop to vectorise."""
    n = x.size
    spans = (n + SPAN - 1) // SPAN
    t1 = np.zeros(spans, np.int64)
    t2lo = np.zeros(spans, np.int64)
    t2hi = np.zeros(spans, np.int64)
    d1 = np.zeros(spans, np.int64)
    clipped = 0
    mask = np.int64(0xFFFFFFFF)
    for s in range(spans):
        bad = False
        s1, e1, lo2, hi2 = np.int64(0), np.int64(0), np.int64(0), np.int64(0)
        end = min(n, (s + 1) * SPAN)
        for start in range(s * SPAN, end, BLOCK):
            f1, g1 = 0.0, 0.0
            for i in range(start, min(end, start + BLOCK)):
                xi = x[i]
                if check:
                    bad |= not (xi >= a and xi <= b)
                if own == OWN_SUM:
                    f1 += _grid(xi, scale)
                elif own == OWN_MOMENTS:
                    r = _centred(xi, mid, scale)
                    f1 += r
                    k = np.int64(r)
                    k2 = k * k
                    lo2 += k2 & mask
                    hi2 += k2 >> 32
                if kind != MAP_NONE:
                    y = _mapped(xi, kind, c, v)
                    if not inside:  # as numpy's clip: NaN stays NaN, uncounted
                        clipped += (y < lo) + (y > hi)
                        y = lo if y < lo else y
                        y = hi if y > hi else y
                    g1 += _grid(y, dscale)
            s1 += np.int64(f1)
            e1 += np.int64(g1)
        if bad:
            return False, t1, t2lo, t2hi, d1, clipped
        t1[s], t2lo[s], t2hi[s], d1[s] = s1, lo2, hi2, e1
    return True, t1, t2lo, t2hi, d1, clipped


@njit(**_FAST)
def _pass(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """Any combination (the entry points below are the releases')."""
    return _body(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale)


@njit(**_FAST)
def _sum(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """A mean or sum alone."""
    return _body(x, a, b, check, OWN_SUM, mid, scale, MAP_NONE, c, v, lo, hi, True, dscale)


@njit(**_FAST)
def _moments(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """A variance alone."""
    return _body(x, a, b, check, OWN_MOMENTS, mid, scale, MAP_NONE, c, v, lo, hi, True, dscale)


@njit(**_FAST)
def _spread(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """A mean or sum and its spread, with nothing to clip."""
    return _body(x, a, b, check, OWN_SUM, mid, scale, MAP_SQUARE, c, v, lo, hi, True, dscale)


@njit(**_FAST)
def _centring(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """A variance and its centring mean (the records, inside their bounds)."""
    return _body(x, a, b, check, OWN_MOMENTS, mid, scale, MAP_RECORDS, c, v, lo, hi, True, dscale)


@njit(**_FAST)
def _fourth(x, a, b, check, own, mid, scale, kind, c, v, lo, hi, inside, dscale):
    """A variance's fourth moment."""
    return _body(x, a, b, check, OWN_NONE, mid, scale, MAP_FOURTH, c, v, lo, hi, inside, dscale)


#: the entry point of each ``(own, kind, inside)``
_ENTRIES = {
    (OWN_SUM, MAP_NONE, True): _sum,
    (OWN_MOMENTS, MAP_NONE, True): _moments,
    (OWN_SUM, MAP_SQUARE, True): _spread,
    (OWN_MOMENTS, MAP_RECORDS, True): _centring,
    (OWN_NONE, MAP_FOURTH, False): _fourth,
    (OWN_NONE, MAP_FOURTH, True): _fourth,
}


def kernel_totals(
    x: np.ndarray,
    a: float,
    b: float,
    check: bool,
    own: tuple[int, float, float],
    derived: tuple[int, float, float, float, float, bool, float],
) -> tuple[tuple[int, ...], tuple[int, int]] | None:
    """``(own sums, (clipped, t1))`` of the pass (:func:`_pass`) as Python integers, or None
    if a record lies outside ``[a, b]`` or is NaN (``check``). ``own``: ``(kind, mid,
    scale)``; ``derived``: ``(kind, c, v, lo, hi, inside, scale)``."""
    entry = _ENTRIES.get((own[0], derived[0], derived[5]), _pass)
    ok, t1, t2lo, t2hi, d1, clipped = entry(x, a, b, check, *own, *derived)
    if not ok:
        return None
    s1 = sum(t1.tolist())
    sums: tuple[int, ...] = ()
    if own[0] == OWN_SUM:
        sums = (s1,)
    elif own[0] == OWN_MOMENTS:
        sums = (s1, sum(t2lo.tolist()) + (sum(t2hi.tolist()) << 32))
    return sums, (int(clipped), sum(d1.tolist()))

"""Exact percentiles of per-record quantities of a Dask-backed release, by distributed
selection (docs/scale-out.md, "Nonsmooth losses").

The check and hinge DR fits (paper 000, Secs. 4 and 7.3) are the core's: smoothing
continuation on partition sums (:mod:`privest.learn.smoothing`) and the corrected kernel
Hessian (:func:`~privest.learn.inference.kernel_hessian`), whose bandwidth needs the exact
interquartile range of the kink distances. That is the one thing partition sums cannot
give; :func:`exact_percentiles` gives it (the Dask objective's ``percentiles``): each
chunk's own percentiles bracket the overall ones (else the range of all records does);
counting passes narrow each bracket until it holds at most :data:`GATHER_LIMIT` records;
the distinct values in it, with their counts, reach the client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from privest.learn.objective import CorrectedObjective

__all__ = ["GATHER_LIMIT", "exact_percentiles"]

Values = Callable[..., np.ndarray]

#: the most distinct values the selection gathers on the client; above it a
#: counting pass narrows the bracket first (released data, so a bound on memory, not privacy)
GATHER_LIMIT = 50_000
#: thresholds per counting pass
EDGES = 256


def _value_range(obj: CorrectedObjective, values: Values, *args: Any) -> dict[str, Any]:
    r = values(obj, *args)
    return {"n": obj.n, "lo": r.min() if r.size else np.inf, "hi": r.max() if r.size else -np.inf}


def _merge_range(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {"n": a["n"] + b["n"], "lo": min(a["lo"], b["lo"]), "hi": max(a["hi"], b["hi"])}


def _value_counts(obj: CorrectedObjective, edges: np.ndarray, values: Values, *args: Any) -> dict:
    """Per row of ``edges`` (m, K): the values below each edge and at most it."""
    r = np.sort(values(obj, *args))
    return {
        "n": obj.n,
        "below": np.searchsorted(r, edges, side="left"),
        "upto": np.searchsorted(r, edges, side="right"),
    }


def _value_distinct(
    obj: CorrectedObjective, lo: np.ndarray, hi: np.ndarray, values: Values, *args: Any
) -> dict:
    """Per bracket ``[lo_j, hi_j]``: the distinct values in it with their counts."""
    r = values(obj, *args)
    found = [
        np.unique(r[(r >= a) & (r <= b)], return_counts=True) for a, b in zip(lo, hi, strict=True)
    ]
    return {"n": obj.n, "found": found}


def _merge_distinct(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    found = []
    for (va, ca), (vb, cb) in zip(a["found"], b["found"], strict=True):
        values, inverse = np.unique(np.concatenate([va, vb]), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate([ca, cb]), minlength=values.size)
        found.append((values, counts.astype(np.int64)))
    return {"n": a["n"] + b["n"], "found": found}


def _chunk_percentiles(obj: CorrectedObjective, qs: np.ndarray, values: Values, *args: Any):
    r = values(obj, *args)
    return {"n": obj.n, "q": np.percentile(r, qs) if r.size else None}


def _narrow(target: Any, look: tuple, lo: np.ndarray, hi: np.ndarray, ranks: np.ndarray):
    """Counting passes over ``EDGES`` thresholds per bracket ``[lo_j, hi_j]`` (each holding
    the 0-based ranks ``ranks[:, j]``) until each holds at most GATHER_LIMIT records or stops
    shrinking (ties). Returns the brackets, the records below each, and ``ok``: False where
    a first bracket does not hold its ranks."""
    lo, hi = lo.astype(float), hi.astype(float)
    below_lo = np.zeros(lo.size, np.int64)
    ok = np.ones(lo.size, bool)
    active = np.ones(lo.size, bool)
    first = True
    while active.any():
        edges = np.linspace(lo, hi, EDGES + 1, axis=1)  # (m, EDGES + 1)
        c = target.reduce(_value_counts, edges, *look)
        for j in np.flatnonzero(active):
            below, upto = c["below"][j], c["upto"][j]
            if first and not (below[0] <= ranks[0, j] and upto[-1] > ranks[1, j]):
                ok[j] = active[j] = False
                continue
            a = int(np.flatnonzero(below <= ranks[0, j])[-1])  # last edge at or below r0
            b = int(np.flatnonzero(upto > ranks[1, j])[0])  # first edge above r1
            narrower = (edges[j, a], edges[j, b])
            if upto[-1] - below[0] <= GATHER_LIMIT or narrower == (lo[j], hi[j]):
                below_lo[j] = below[0]
                active[j] = False
                continue
            lo[j], hi[j] = narrower
        first = False
    return lo, hi, below_lo, ok


def exact_percentiles(target: Any, values: Values, qs: np.ndarray, *args: Any) -> np.ndarray:
    """``np.percentile`` (linear) of ``values(chunk objective, *args)`` over all records of
    ``target`` (a :class:`~privest.scale.fit.DaskObjective`), by distributed selection: each
    chunk's own percentiles bracket the overall ones (else the range of all records does);
    counting passes narrow each bracket until it holds at most GATHER_LIMIT records; the
    distinct values in it, with their counts, reach the client."""
    look = (values, *args)
    parts = target.map_chunks(_chunk_percentiles, qs, *look)
    qs_chunks = np.array([p["q"] for p in parts if p["n"]])
    n = target.n
    pos = np.asarray(qs, dtype=float) / 100.0 * (n - 1)
    ranks = np.floor(pos).astype(np.int64)
    ranks = np.stack([ranks, np.minimum(ranks + 1, n - 1)])
    lo, hi, below, ok = _narrow(target, look, qs_chunks.min(axis=0), qs_chunks.max(axis=0), ranks)
    if not ok.all():  # the chunks' percentiles did not bracket the overall ones
        full = target.reduce(_value_range, *look, combine=_merge_range)
        bad = ~ok
        got = _narrow(
            target,
            look,
            np.full(bad.sum(), full["lo"]),
            np.full(bad.sum(), full["hi"]),
            ranks[:, bad],
        )
        lo[bad], hi[bad], below[bad] = got[:3]
    found = target.reduce(_value_distinct, lo, hi, *look, combine=_merge_distinct)["found"]
    out = np.empty(len(qs))
    for j, (values, counts) in enumerate(found):
        cum = below[j] + np.cumsum(counts)
        v0, v1 = values[np.searchsorted(cum, ranks[:, j], side="right")]
        out[j] = v0 + (pos[j] - ranks[0, j]) * (v1 - v0)
    return out

"""Check and hinge DR fits out of core: smoothing with a vanishing bandwidth (paper 000,
Secs. 4 and 7.3; docs/scale-out.md, "Nonsmooth losses").

The in-memory solvers of the check and hinge losses (interior point, the DC algorithm with
HiGHS linear programs) need every record at once. Out of core, the kink of the loss is
smoothed by a Gaussian kernel of bandwidth h,

    rho_h(r) = r (tau - 1 + Phi(r/h)) + h phi(r/h),   (z)_+ ~ z Phi(z/h) + h phi(z/h),

whose value, gradient and Hessian are sums over records; the corrected (naive or DR)
smoothed objective is minimised by the projected, modified Newton solver on partition sums
(the smooth losses' solver), h shrinking geometrically from s to s / n (s the
scale of the kink distance: the response's standard deviation, 1 for hinge labels), each
stage warm-started at the previous one. The result is the minimiser of the smoothed
objective at the last bandwidth, not the vertex the in-memory LP finds: the measured gap
is documented in docs/scale-out.md. Starts, as in memory: the loss's initial point and
the naive fit; the lower exact objective (one more pass) is kept. Standard errors: the
in-memory corrected kernel Hessian (:func:`~privest.learn.inference.kernel_sum` summed
over partitions, the same bandwidth from the exact standard deviation and interquartile
range of the first term's kink distances, found by a distributed selection).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from privest.learn.batched.newton import newton_box
from privest.learn.inference import (
    kernel_bandwidth,
    kernel_residuals,
    kernel_sum,
    ridge_hessian,
)
from privest.learn.losses import HingeLoss, Loss
from privest.learn.objective import CorrectedObjective
from privest.learn.solvers import Solution

__all__ = ["kernel_hessian_dask", "smoothed_fit", "smoothed_sums"]

# the first bandwidth (a multiple of the kink distance's scale s), the shrink factor, and
# the last bandwidth s n^H_END
H_START, H_SHRINK, H_END = 1.0, 0.3, -1.0


def smoothed_sums(obj: CorrectedObjective, theta: np.ndarray, h: float) -> dict[str, Any]:
    """Sums over ``obj``'s records of the smoothed corrected loss: value, gradient, Hessian."""
    loss = obj.loss
    hinge = isinstance(loss, HingeLoss)
    p, n = obj.p, obj.n
    f, g, hess = 0.0, np.zeros(p), np.zeros((p, p))
    for t in obj.terms:
        d, z = kernel_residuals(loss, t, theta)
        s = z / h
        cdf, pdf = special.ndtr(s), np.exp(-0.5 * s**2) / np.sqrt(2 * np.pi)
        if hinge:  # z = 1 - y u: dz/dtheta = -y D
            y = loss.response(t.y, n)
            f += t.weight * float(np.sum(z * cdf + h * pdf))
            g -= t.weight * ((cdf * y) @ d)
        else:  # z = y - u: dz/dtheta = -D
            slope = loss.quantile - 1.0 + cdf
            f += t.weight * float(np.sum(z * slope + h * pdf))
            g -= t.weight * (slope @ d)
        hess += t.weight * (d.T * (pdf / h)) @ d
    w = sum(t.weight for t in obj.terms)  # the ridge is per record and term
    theta = np.asarray(theta, float)
    f += w * n * loss.penalty(theta)
    g += w * n * loss.penalty_grad(theta.copy())
    hess += w * n * ridge_hessian(loss, p)
    return {"n": n, "f": f, "g": g, "h": hess}


def _exact_value(obj: CorrectedObjective, theta: np.ndarray) -> dict[str, Any]:
    return {"n": obj.n, "f": float(np.sum(obj.rows(theta)))}


def _kernel_part(obj: CorrectedObjective, theta: np.ndarray, h: float) -> dict[str, Any]:
    return {"n": obj.n, "v": kernel_sum(obj, theta, h)}


def _response_moments(obj: CorrectedObjective, theta: np.ndarray) -> dict[str, Any]:
    """Sum and sum of squares of the first term's response."""
    t = obj.terms[0]
    y = obj.loss.response(t.y, obj.n)
    return {"n": obj.n, "s": np.array([y.sum(), y @ y])}


def _kink_moments(obj: CorrectedObjective, theta: np.ndarray) -> dict[str, Any]:
    """Sum and sum of squares of the first term's kink distances."""
    r = kernel_residuals(obj.loss, obj.terms[0], theta)[1]
    return {"n": obj.n, "s": np.array([r.sum(), r @ r])}


#: the most distinct kink distances the selection gathers on the client; above it a
#: counting pass narrows the bracket first (released data, so a bound on memory, not privacy)
GATHER_LIMIT = 50_000
#: thresholds per counting pass
EDGES = 256


def _kink_range(obj: CorrectedObjective, theta: np.ndarray) -> dict[str, Any]:
    r = kernel_residuals(obj.loss, obj.terms[0], theta)[1]
    return {"n": obj.n, "lo": r.min() if r.size else np.inf, "hi": r.max() if r.size else -np.inf}


def _merge_range(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {"n": a["n"] + b["n"], "lo": min(a["lo"], b["lo"]), "hi": max(a["hi"], b["hi"])}


def _kink_counts(obj: CorrectedObjective, theta: np.ndarray, edges: np.ndarray) -> dict:
    """Per row of ``edges`` (m, K): the kink distances below each edge and at most it."""
    r = np.sort(kernel_residuals(obj.loss, obj.terms[0], theta)[1])
    return {
        "n": obj.n,
        "below": np.searchsorted(r, edges, side="left"),
        "upto": np.searchsorted(r, edges, side="right"),
    }


def _kink_distinct(obj: CorrectedObjective, theta: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Per bracket ``[lo_j, hi_j]``: the distinct kink distances in it with their counts."""
    r = kernel_residuals(obj.loss, obj.terms[0], theta)[1]
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


def _kink_quantiles(obj: CorrectedObjective, theta: np.ndarray, qs: np.ndarray) -> dict:
    r = kernel_residuals(obj.loss, obj.terms[0], theta)[1]
    return {"n": obj.n, "q": np.percentile(r, qs) if r.size else None}


def _narrow(target: Any, theta: np.ndarray, lo: np.ndarray, hi: np.ndarray, ranks: np.ndarray):
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
        c = target.reduce(_kink_counts, theta, edges)
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


def exact_percentiles(target: Any, theta: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``np.percentile`` (linear) of the first term's kink distances over all records, by
    distributed selection: each chunk's own percentiles bracket the overall ones (else the
    range of all records does); counting passes narrow each bracket until it holds at most
    GATHER_LIMIT records; the distinct values in it, with their counts, reach the client."""
    parts = target.map_chunks(_kink_quantiles, theta, qs)
    qs_chunks = np.array([p["q"] for p in parts if p["n"]])
    n = target.n
    pos = np.asarray(qs, dtype=float) / 100.0 * (n - 1)
    ranks = np.floor(pos).astype(np.int64)
    ranks = np.stack([ranks, np.minimum(ranks + 1, n - 1)])
    lo, hi, below, ok = _narrow(target, theta, qs_chunks.min(axis=0), qs_chunks.max(axis=0), ranks)
    if not ok.all():  # the chunks' percentiles did not bracket the overall ones
        full = target.reduce(_kink_range, theta, combine=_merge_range)
        bad = ~ok
        got = _narrow(
            target,
            theta,
            np.full(bad.sum(), full["lo"]),
            np.full(bad.sum(), full["hi"]),
            ranks[:, bad],
        )
        lo[bad], hi[bad], below[bad] = got[:3]
    found = target.reduce(_kink_distinct, theta, lo, hi, combine=_merge_distinct)["found"]
    out = np.empty(len(qs))
    for j, (values, counts) in enumerate(found):
        cum = below[j] + np.cumsum(counts)
        v0, v1 = values[np.searchsorted(cum, ranks[:, j], side="right")]
        out[j] = v0 + (pos[j] - ranks[0, j]) * (v1 - v0)
    return out


def kernel_hessian_dask(target: Any, theta: np.ndarray) -> np.ndarray:
    """The in-memory corrected kernel Hessian (``learn.inference._kernel_hessian``) from
    partition sums: the same bandwidth (exact sd and IQR), the same kernel sums."""
    n = target.n
    sd = _sd(target.reduce(_kink_moments, theta), n)
    q25, q75 = exact_percentiles(target, theta, np.array([25.0, 75.0]))
    h = kernel_bandwidth(sd, float(q75 - q25), n)
    v = target.reduce(_kernel_part, theta, h)["v"]
    v = v / n + ridge_hessian(target.loss, target.p)
    return 0.5 * (v + v.T)


class _Smoothed:
    """The smoothed objective at bandwidth h as a batch of one for :func:`newton_box`."""

    n_reps = 1

    def __init__(self, target: Any, h: float) -> None:
        self.target, self.h = target, h
        self._cached: tuple[np.ndarray, tuple] | None = None

    def _derivs(self, theta: np.ndarray) -> tuple:
        if self._cached is None or not np.array_equal(self._cached[0], theta):
            s = self.target.reduce(smoothed_sums, theta, self.h)
            n = self.target.n
            h = s["h"] / n
            self._cached = (theta.copy(), (s["f"] / n, s["g"] / n, 0.5 * (h + h.T)))
        return self._cached[1]

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        return np.array([self._derivs(theta[0])[0]])

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f, g, h = self._derivs(theta[0])
        return np.array([f]), g[None], h[None]

    def subset(self, idx: np.ndarray) -> _Smoothed:
        return self


def bandwidths(scale: float, n: int) -> list[float]:
    """s, 0.3 s, 0.09 s, ... down to (and ending at) s / n."""
    h_min = scale * n**H_END
    hs = [H_START * scale]
    while hs[-1] * H_SHRINK > h_min:
        hs.append(hs[-1] * H_SHRINK)
    return [*hs, h_min] if hs[-1] > h_min else hs


def _continuation(target: Any, start: np.ndarray, box: np.ndarray, hs: list[float]) -> tuple:
    theta, iters = start, 0
    for h in hs:
        fit = newton_box(_Smoothed(target, h), theta[None], box[:, 0], box[:, 1])
        theta, iters = fit[0][0], iters + int(fit[2][0])
    return theta, iters, bool(fit[2][0] < 100)


def _sd(moments: dict[str, Any], n: int) -> float:
    mean = moments["s"][0] / n
    return float(np.sqrt(max(moments["s"][1] / n - mean**2, 0.0)))


def smoothed_fit(loss: Loss, objs: dict[str, Any], method: str, box: np.ndarray) -> Solution:
    """Fit ``objs[method]`` (naive or DR) by smoothing continuation from the loss's initial
    point and (DR) from the naive fit; the lower exact objective is kept."""
    target = objs[method]
    if isinstance(loss, HingeLoss):
        scale = 1.0
    else:
        scale = _sd(target.reduce(_response_moments, np.zeros(target.p)), target.n) or 1.0
    hs = bandwidths(scale, target.n)
    theta0 = np.clip(loss.initial_theta(target.header.d), box[:, 0], box[:, 1])
    naive = _continuation(objs["naive"], theta0, box, hs)
    starts = [naive] if method == "naive" else [_continuation(target, theta0, box, hs)]
    if method != "naive":
        starts.append(_continuation(target, naive[0], box, hs))
    best = None
    for theta, iters, ok in starts:
        value = target.reduce(_exact_value, theta)["f"] / target.n
        if best is None or value < best.objective:
            best = Solution(theta, value, ok, iters, "", starts=len(starts))
    assert best is not None
    best.solver = f"smoothing continuation, {len(hs)} bandwidths to {hs[-1]:.3g} (Dask)"
    return best

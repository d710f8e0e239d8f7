"""Projected, modified Newton over a box for a stack of smooth objectives (paper 000, Sec. 7.2;
docs/dr-estimation.md, "Computation and inference")."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from privest.learn.batched.design import _solve

__all__ = ["BatchedProblem", "WeightedSum", "newton_box"]


class BatchedProblem(Protocol):
    """A stack of smooth objectives, one per replicate (theta has shape (R, p))."""

    n_reps: int

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray: ...

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    def subset(self, idx: np.ndarray) -> BatchedProblem: ...


def newton_box(
    problem: BatchedProblem,
    theta0: np.ndarray,
    lo: float,
    hi: float,
    max_iter: int = 100,
    xtol: float = 1e-10,
    gtol: float = 1e-12,
    quadratic: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimise each replicate's objective over the box ``[lo, hi]^p`` by modified Newton.

    Projected Newton (Bertsekas 1982): coordinates on a bound whose gradient points outward
    are held fixed; on the free block, the Hessian is shifted by a multiple of I when it is
    not positive definite (smallest eigenvalue raised to 1e-3 of the largest absolute one);
    the step is projected on the box and halved (``quadratic=True``: shortened to the minimiser
    of the quadratic through f, the slope and the failed value, by a factor in [0.1, 0.5])
    until the replicate's own objective decreases (Armijo, c = 1e-4). A replicate stops
    when its step is below ``xtol (1 + |theta|)``, or is an unshifted Newton step below
    ``1e4 xtol (1 + |theta|)`` (taken without a line search: by quadratic convergence the
    result is then accurate to about xtol), the predicted decrease is below the objective's
    rounding, its projected gradient is below ``gtol``, or no decrease is found.

    Returns ``(theta, objective, iterations)``; ``iterations == max_iter`` marks a replicate
    that did not converge.
    """
    th = np.clip(np.array(theta0, dtype=float), lo, hi)
    n_reps, p = th.shape
    out = th.copy()
    fout = np.full(n_reps, np.nan)
    iters = np.full(n_reps, max_iter)
    ids = np.arange(n_reps)  # original replicate of each working row
    live = np.ones(n_reps, dtype=bool)
    prob = problem
    eye = np.eye(p)
    for it in range(max_iter):
        f, g, h = prob.derivs(th)
        fixed = ((th <= lo) & (g > 0)) | ((th >= hi) & (g < 0))
        free = ~fixed
        gr = np.where(free, g, 0.0)
        hr = h * (free[:, :, None] & free[:, None, :]) + fixed[:, :, None] * eye
        sane = np.isfinite(hr).all(axis=(1, 2)) & np.isfinite(gr).all(axis=1)
        hr[~sane] = eye  # overflowed replicates: a gradient step (or none) instead
        gr[~np.isfinite(gr)] = 0.0
        ev = np.linalg.eigvalsh(hr)
        scale = np.maximum(np.abs(ev).max(axis=1), 1e-12)
        shift = np.where(ev[:, 0] < 1e-8 * scale, 1e-3 * scale - ev[:, 0], 0.0)
        step = -_solve(hr + shift[:, None, None] * eye, gr)
        step[fixed] = 0.0
        width = xtol * (1.0 + np.abs(th).max(axis=1))
        # converged: a step below xtol, or a predicted decrease below the objective's rounding
        # or a pure Newton step (positive definite Hessian) below 1e-6: quadratic convergence
        # makes the point after it accurate to ~1e-12
        small = (
            (np.abs(step).max(axis=1) <= width)
            | (-np.einsum("ij,ij->i", gr, step) <= 1e-13 * (1.0 + np.abs(f)))
            | ((shift == 0.0) & (np.abs(step).max(axis=1) <= 1e4 * width))
        )
        # backtracking line search, replicate by replicate (tiny steps are taken as they are)
        new, fnew, stuck = _line_search(
            prob, th, step, f, g, live & ~small, live, lo, hi, quadratic
        )
        moved = np.abs(new - th).max(axis=1)
        done = live & (small | stuck | (moved <= width) | (np.abs(gr).max(axis=1) <= gtol))
        th = new
        took = np.flatnonzero(done & small)
        if took.size:
            fnew[took] = prob.value(th[took], took)
        out[ids[done]] = th[done]
        fout[ids[done]] = fnew[done]
        iters[ids[done]] = it + 1
        live &= ~done
        if not live.any():
            return out, fout, iters
        # drop finished replicates from the working set; a subset copies the designs and
        # their cached products (about four Gram evaluations), so only once most are done
        if live.mean() <= 0.25:
            keep = np.flatnonzero(live)
            ids, th, live = ids[keep], th[keep], live[keep]
            prob = prob.subset(keep)
    keep = np.flatnonzero(live)
    out[ids[keep]] = th[keep]
    fout[ids[keep]] = prob.value(th[keep], keep)
    return out, fout, iters


def _line_search(prob, th, step, f, g, search, live, lo, hi, quadratic):
    """Armijo backtracking (c = 1e-4) along the projected path for the replicates
    ``search``; the others in ``live`` take the full step. Returns the new points, their
    objective values (f where unchanged) and the mask of replicates with no decrease."""
    new = np.where(live[:, None], np.clip(th + step, lo, hi), th)
    fnew = f.copy()
    t = np.ones(len(th))
    pend = np.flatnonzero(search)
    for _ in range(40):
        if pend.size == 0:
            break
        cand = np.clip(th[pend] + t[pend, None] * step[pend], lo, hi)
        fc = prob.value(cand, None if len(pend) == len(th) else pend)
        dec = np.einsum("ij,ij->i", g[pend], cand - th[pend])
        ok = np.isfinite(fc) & (fc <= f[pend] + 1e-4 * np.minimum(dec, 0.0))
        new[pend[ok]] = cand[ok]
        fnew[pend[ok]] = fc[ok]
        frac = 0.5
        if quadratic:  # minimiser of the quadratic through f, the slope and fc
            curv = fc[~ok] - f[pend[~ok]] - dec[~ok]
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.clip(np.nan_to_num(-0.5 * dec[~ok] / curv, nan=0.1), 0.1, 0.5)
        pend = pend[~ok]
        t[pend] *= frac
    stuck = np.zeros(len(th), dtype=bool)
    stuck[pend] = True
    new[pend] = th[pend]
    return new, fnew, stuck


class WeightedSum:
    """sum_k w_k P_k of batched problems over the same replicates (a BatchedProblem)."""

    def __init__(self, parts: list[tuple[float, BatchedProblem]]) -> None:
        self.parts = parts
        self.n_reps = parts[0][1].n_reps

    def subset(self, idx: np.ndarray) -> WeightedSum:
        return WeightedSum([(w, p.subset(idx)) for w, p in self.parts])

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        return sum(w * p.value(theta, idx) for w, p in self.parts)

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = [np.zeros(len(theta)), np.zeros(theta.shape), 0.0]
        for w, p in self.parts:
            for k, v in enumerate(p.derivs(theta)):
                out[k] = out[k] + w * v
        return out[0], out[1], out[2]

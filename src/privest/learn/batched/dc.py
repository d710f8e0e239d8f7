"""The DC algorithm for DR median regression (paper 000, Sec. 7.3, eq. (4.4) with the check
loss), batched over replicates: exact convex steps by :func:`~privest.learn.batched.lp.l1_ipm`
(:func:`dc_median_dr`) or by a warm-started primal simplex
(:func:`~privest.learn.batched.simplex.dc_simplex_dr`); :func:`median_dr_fit` combines them."""

from __future__ import annotations

import numpy as np

from privest.learn.batched.design import Design
from privest.learn.batched.lp import l1_ipm
from privest.learn.batched.newton import newton_box
from privest.learn.batched.simplex import dc_simplex_dr, dr_median_objective

__all__ = [
    "dc_median_dr",
    "dc_simplex_dr",
    "dr_median_objective",
    "median_dr_fit",
    "smoothed_dr_start",
]


def dc_median_dr(
    d1: Design,
    d2: Design,
    y: np.ndarray,
    delta: float,
    theta0: np.ndarray,
    bound: float,
    max_outer: int = 50,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DR median regression (DC algorithm): minimise over the box |theta_j| <= bound

        F(theta) = mean[(1/delta) |y - d1'theta| + (1 - 1/delta) |y - d2'theta|]

    by the DC algorithm: with s = sign(y - d2'theta_k), the concave part is replaced by its
    tangent (an upper bound), leaving the convex problem min sum |y - d1'theta| + c'theta with
    c = (1 - delta) sum_i s_i d2_i, solved exactly by :func:`l1_ipm` over the box. F never
    increases; a replicate stops when its signs s repeat (the next step would return the
    same point) or F stops falling.

    Returns ``(theta, F(theta), outer iterations)``.
    """
    th = np.clip(theta0, -bound, bound).copy()
    fval = dr_median_objective(d1, d2, y, th, delta)
    outer = np.zeros(len(th), dtype=int)
    active = np.arange(len(th))
    signs = np.sign(y - d2.lin(th))
    for _ in range(max_outer):
        d1a, d2a = d1[active], d2[active]
        c = (1.0 - delta) * d2a.xtv(signs[active])
        new, _ = l1_ipm(d1a, y[active], c=c, theta0=th[active], bound=bound)
        new = np.clip(new, -bound, bound)
        fnew = dr_median_objective(d1a, d2a, y[active], new, delta)
        better = fnew < fval[active] - 1e-12 * (1.0 + np.abs(fval[active]))
        outer[active] += 1
        acc = active[better]
        th[acc] = new[better]
        fval[acc] = fnew[better]
        new_signs = np.sign(y[acc] - d2a[np.flatnonzero(better)].lin(th[acc]))
        changed = np.any(new_signs != signs[acc], axis=1)
        signs[acc] = new_signs
        active = acc[changed]
        if active.size == 0:
            break
    return th, fval, outer


def median_dr_fit(
    d1: Design,
    d2: Design,
    y: np.ndarray,
    delta: float,
    theta0: np.ndarray,
    bound: float,
    vertex: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """DR median regression from the naive fit ``theta0`` (a vertex of the X1 rows; any
    start when ``vertex`` gives one, e.g. the naive fit: :func:`dc_simplex_dr`): the DC
    algorithm by warm simplex (:func:`dc_simplex_dr`), and where that cannot identify a
    basis the same DC iterates with interior-point steps (:func:`dc_median_dr`).

    The estimators (R = 1) and Table 3 (R = replicates) both fit DR this way. Returns
    ``(theta, F(theta), DC steps, fell_back)``.
    """
    theta, fval, steps, ok = dc_simplex_dr(d1, d2, y, delta, theta0, bound, vertex=vertex)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        theta[bad], fval[bad], steps[bad] = dc_median_dr(
            d1[bad], d2[bad], y[bad], delta, theta0[bad], bound
        )
    return theta, fval, steps, ~ok


def smoothed_dr_start(
    d1: Design, d2: Design, y: np.ndarray, delta: float, theta0: np.ndarray, bound: float
) -> np.ndarray:
    """A start for the DC algorithm away from the naive fit's basin: minimise the DR median
    objective with each |r| smoothed by a N(0, h^2) kernel (rho_h of
    :class:`~privest.learn.batched.scl.SCLProblem`, no correction), h = 0.1, 0.01, 0.001
    sd(y), each by :func:`newton_box` from the last.

    The DC algorithm stops at a critical point, which on dense X2 kinks need not be the best
    nearby; this start often leads it to a lower one (docs/dr-estimation.md, "Computation
    and inference").
    """
    scale = float(np.mean(y.std(axis=1))) or 1.0
    theta = np.clip(theta0, -bound, bound)
    x1, x2 = np.ascontiguousarray(d1.xt), np.ascontiguousarray(d2.xt)
    for f in (0.1, 0.01, 0.001):
        prob = _SmoothedDR(x1, x2, np.ascontiguousarray(y, dtype=float), 1.0 / delta, f * scale)
        theta, _, _ = newton_box(prob, theta, -bound, bound)
    return theta


class _SmoothedDR:
    """The objective of :func:`smoothed_dr_start` as a batched problem (``newton_box``):
    a1 rho_h on X1 plus (1 - a1) rho_h on X2, each replicate by one compiled pass per copy
    (:func:`~privest.learn.batched.simplex_kernel.smoothed_dr_derivs`; the same formulas
    as two :class:`~privest.learn.batched.scl.SCLProblem` at lam = 0, weighted)."""

    def __init__(self, x1: np.ndarray, x2: np.ndarray, y: np.ndarray, a1: float, h: float):
        self.x1, self.x2, self.y, self.a1, self.h = x1, x2, y, a1, h
        self.n_reps = y.shape[0]
        self._memo: tuple[np.ndarray, list[tuple]] | None = None

    def subset(self, idx: np.ndarray) -> _SmoothedDR:
        return _SmoothedDR(self.x1[idx], self.x2[idx], self.y[idx], self.a1, self.h)

    def _each(self, theta: np.ndarray, reps, derivs: bool) -> list[tuple]:
        from privest.learn.batched.simplex_kernel import smoothed_dr_derivs

        return [
            smoothed_dr_derivs(
                self.x1[r], self.x2[r], self.y[r], np.ascontiguousarray(t), self.a1, self.h, derivs
            )
            for r, t in zip(reps, theta, strict=True)
        ]

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """A value of all replicates computes the derivatives too (the same pass, a few
        products more per record) and keeps them for a :meth:`derivs` at the same theta:
        a line search's accepted point is the next Newton step's, so each step then costs
        one compiled pass fewer (the same numbers)."""
        if idx is None:
            out = self._each(theta, range(self.n_reps), True)
            self._memo = (theta.copy(), out)
        else:
            out = self._each(theta, idx, False)
        return np.array([f for f, _, _ in out])

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        memo, self._memo = self._memo, None
        if memo is not None and np.array_equal(memo[0], theta):
            out = memo[1]
        else:
            out = self._each(theta, range(self.n_reps), True)
        return tuple(np.array([o[k] for o in out]) for k in range(3))

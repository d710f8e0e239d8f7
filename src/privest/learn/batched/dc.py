"""The DC algorithm for DR median regression (paper 000, Sec. 7.3, eq. (4.4) with the check
loss), batched over replicates: exact convex steps by :func:`~privest.learn.batched.lp.l1_ipm`
(:func:`dc_median_dr`) or by a warm-started primal simplex
(:func:`~privest.learn.batched.simplex.dc_simplex_dr`); :func:`median_dr_fit` combines them."""

from __future__ import annotations

import numpy as np

from privest.learn.batched.design import Design
from privest.learn.batched.lp import l1_ipm
from privest.learn.batched.newton import WeightedSum, newton_box
from privest.learn.batched.scl import SCLProblem
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
    d1: Design, d2: Design, y: np.ndarray, delta: float, theta0: np.ndarray, bound: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """DR median regression from the naive fit ``theta0`` (a vertex of the X1 rows): the DC
    algorithm by warm simplex (:func:`dc_simplex_dr`), and where that cannot identify a
    basis the same DC iterates with interior-point steps (:func:`dc_median_dr`).

    The estimators (R = 1) and Table 3 (R = replicates) both fit DR this way. Returns
    ``(theta, F(theta), DC steps, fell_back)``.
    """
    theta, fval, steps, ok = dc_simplex_dr(d1, d2, y, delta, theta0, bound)
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
    objective with each |r| smoothed by a N(0, h^2) kernel (rho_h of :class:`SCLProblem`,
    no correction), h = 0.1, 0.01, 0.001 sd(y), each by :func:`newton_box` from the last.

    The DC algorithm stops at a critical point, which on dense X2 kinks need not be the best
    nearby; this start often leads it to a lower one (docs/dr-estimation.md, "Computation
    and inference").
    """
    scale = float(np.mean(y.std(axis=1))) or 1.0
    theta = np.clip(theta0, -bound, bound)
    a = 1.0 / delta
    for f in (0.1, 0.01, 0.001):
        h = f * scale
        prob = WeightedSum([(a, SCLProblem(d1, y, 0.0, h)), (1.0 - a, SCLProblem(d2, y, 0.0, h))])
        theta, _, _ = newton_box(prob, theta, -bound, bound)
    return theta

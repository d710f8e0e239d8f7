"""The DC algorithm for DR median regression with warm-simplex convex steps (paper 000,
Sec. 7.3; docs/dr-estimation.md, "Computation and inference"), one compiled loop per
replicate (:mod:`privest.learn.batched.simplex_kernel`, imported on first use so that
importing the estimators does not load numba).
"""

from __future__ import annotations

import numpy as np

from privest.learn.batched.design import Design

__all__ = ["dc_simplex_dr", "dr_median_objective", "lad_simplex"]


def dr_median_objective(
    d1: Design, d2: Design, y: np.ndarray, theta: np.ndarray, delta: float
) -> np.ndarray:
    """DR median-regression objective mean[(1/delta)|r1| + (1 - 1/delta)|r2|] (times 2 rho)."""
    a1 = 1.0 / delta
    return (a1 * np.abs(y - d1.lin(theta)) + (1.0 - a1) * np.abs(y - d2.lin(theta))).mean(axis=1)


def dc_simplex_dr(
    d1: Design,
    d2: Design,
    y: np.ndarray,
    delta: float,
    theta0: np.ndarray,
    bound: float,
    max_rounds: int = 100_000,
    cand: int | None = None,
    vertex: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The DC algorithm of :func:`~privest.learn.batched.dc.dc_median_dr`, with each convex
    step solved by warm simplex.

    Same iterates as ``dc_median_dr`` (every convex step is solved exactly, and its
    solution is unique for continuous data), but far cheaper. The convex step
    ``min sum_i |y_i - d1_i'theta| + c'theta`` over the box (the 2p box rows of
    :func:`~privest.learn.batched.lp.l1_ipm`, weight M/2) has its optimum at a vertex where
    p rows have zero residual, and consecutive DC steps differ only in c, so the previous
    vertex is a good start. Each round does either one primal simplex pivot of the
    Barrodale-Roberts kind (steepest-edge choice of the leaving row, exact line search
    along the edge: a weighted median over its breakpoints) or, at an optimal vertex, one
    DC update of the signs of the X2 residuals (stopping when they repeat).

    Pivots look only at a candidate set C of the ``cand`` rows with the smallest
    |r_i| / ||d_i|| (default n/10): a row outside C has |r_i| / ||d_i|| >= tau, and a
    residual moves by at most ||d_i|| ||theta - theta_C|| from theta_C, where C was built,
    so no row outside C can be crossed while the edge stays in the ball
    ``||theta - theta_C|| < tau``; otherwise C is rebuilt (and if a fresh C is not enough,
    the pivot is done on all rows). Sign sums are updated incrementally and recomputed at
    every rebuild. ``theta0`` must be a vertex of the X1 rows (e.g. the naive LAD fit of
    ``l1_ipm``) unless ``vertex`` (R, p) gives one: the simplex then starts there, and the
    first DC step takes the X2 signs at ``theta0`` (its convex problem depends on theta0
    only through them), so the iterates are those of ``dc_median_dr`` from ``theta0``.

    Returns ``(theta, F(theta), DC steps, ok)``; ``ok`` is False where the basis could not
    be identified or ``max_rounds`` rounds (pivots and DC updates) were not enough (callers
    fall back to ``dc_median_dr``).
    """
    from privest.learn.batched.simplex_kernel import dc_one

    r_all, p, n = d1.xt.shape
    kc = min(n, cand if cand is not None else max(16 * p, n // 10))
    signs_at = np.array(theta0, dtype=float)
    theta = signs_at.copy() if vertex is None else np.array(vertex, dtype=float)
    steps = np.zeros(r_all, dtype=np.int64)
    ok = np.zeros(r_all, dtype=np.bool_)
    y = np.asarray(y, dtype=float)
    for r in range(r_all):
        x1, x2 = np.ascontiguousarray(d1.xt[r]), np.ascontiguousarray(d2.xt[r])
        steps[r], ok[r] = dc_one(
            x1, x2, y[r], float(delta), theta[r], float(bound), kc, max_rounds, signs_at[r], False
        )
    return theta, dr_median_objective(d1, d2, y, theta, delta), steps, ok


def lad_simplex(
    d: Design, y: np.ndarray, bound: float, guess: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Median (LAD) regression, min sum_i |y_i - d_i'theta| over |theta_j| <= bound, by the
    kernel of :func:`dc_simplex_dr` with no concave part (delta = 1), from the vertex of the
    p rows of smallest |residual| at ``guess`` (R, p). The same problem as
    :func:`~privest.learn.solvers.naive_l1` at tau = 1/2, solved exactly (a vertex).
    Returns ``(theta, ok)``; where not ok, callers fall back to ``naive_l1``."""
    from privest.learn.batched.simplex_kernel import dc_one

    r_all, p, n = d.xt.shape
    kc = min(n, max(16 * p, n // 10))
    theta = np.array(guess, dtype=float)
    ok = np.zeros(r_all, dtype=np.bool_)
    y = np.asarray(y, dtype=float)
    for r in range(r_all):
        x = np.ascontiguousarray(d.xt[r])
        start = theta[r].copy()
        ok[r] = dc_one(x, x, y[r], 1.0, theta[r], float(bound), kc, 100_000, start, True)[1]
    return theta, ok

"""Weighted, tilted L1 regression by a batched interior point method (paper 000, Sec. 7.3:
median regression; the convex steps of the DC algorithm)."""

from __future__ import annotations

import numpy as np

from privest.learn.batched.design import Design, _solve

__all__ = ["l1_ipm"]


def l1_ipm(
    design: Design,
    y: np.ndarray,
    w: np.ndarray | None = None,
    c: np.ndarray | None = None,
    theta0: np.ndarray | None = None,
    bound: float | None = None,
    tol: float = 1e-11,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Solve ``min_theta sum_i w_i |y_i - d_i'theta| + c'theta`` for every replicate.

    LP form: min w'(u + v) + c'theta s.t. D theta + u - v = y, u, v >= 0; dual
    max y'a s.t. D'a = c, |a_i| <= w_i. Infeasible-start primal-dual Mehrotra
    predictor-corrector (the Frisch-Newton scheme of Portnoy & Koenker 1997); each
    iteration solves one p x p system per replicate with the Gram matrix D' diag(1/Q) D.
    Stops when the complementarity gap is below ``tol`` relative to the objective and both
    residuals vanish. ``bound`` restricts theta to ``[-bound, bound]^p`` exactly, through
    the exact penalty M (max(0, theta_j - B) + max(0, -B - theta_j)) = (M/2)(|B - theta_j| +
    |-B - theta_j|) - M B: two pseudo-observations per coordinate with weight M/2, where
    M = 2 (sum_i w_i |d_ij| + |c_j|) + 1 exceeds every possible multiplier. Without a box
    the problem must be bounded (``c`` inside the zonotope ``{D'a : |a| <= w}``).

    Returns ``(theta, iterations)``. (One function of about 90 lines: the predictor and
    corrector share a dozen per-replicate arrays that are compacted together as replicates
    finish; split, they would have to travel between helpers as one state.)
    """
    r_all, p, n = design.xt.shape
    w = np.ones((r_all, n)) if w is None else w
    c = np.zeros((r_all, p)) if c is None else c
    if theta0 is None:
        theta0 = _solve(design.gram(w), design.xtv(w * y))
    if bound is not None:
        big = 2.0 * (np.einsum("rjn,rn->rj", np.abs(design.xt), w) + np.abs(c)) + 1.0
        design = design.with_box()
        y = np.concatenate([y, np.full((r_all, p), bound), np.full((r_all, p), -bound)], axis=1)
        w = np.concatenate([w, big / 2.0, big / 2.0], axis=1)
        theta0 = np.clip(theta0, -bound, bound)
    out = np.empty((r_all, p))
    iters = np.full(r_all, max_iter)
    ids = np.arange(r_all)
    live = np.ones(r_all, dtype=bool)
    th = theta0.astype(float).copy()
    res = y - design.lin(th)
    scale0 = np.abs(res).mean(axis=1, keepdims=True) + 1e-3
    u = np.maximum(res, 0.0) + scale0
    v = np.maximum(-res, 0.0) + scale0
    a = np.zeros_like(res)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for it in range(max_iter):
            su, sv = w - a, w + a
            fit = design.lin(th)
            rp = y - fit - u + v
            rd = c - design.xtv(a)
            comp = u * su + v * sv
            mu = comp.mean(axis=1) / 2.0
            pobj = (w * np.abs(y - fit)).sum(axis=1) + (c * th).sum(axis=1)
            ok = (
                live
                & (comp.sum(axis=1) <= tol * (1.0 + np.abs(pobj)))
                & (np.abs(rp).max(axis=1) <= 1e-9 * (1.0 + np.abs(y).max(axis=1)))
                & (np.abs(rd).max(axis=1) <= 1e-9 * (1.0 + w.sum(axis=1)))
            )
            out[ids[ok]] = th[ok]
            iters[ids[ok]] = it
            live &= ~ok
            if not live.any():
                return out, iters
            if live.mean() <= 0.25:  # compact once most are done (as in newton_box)
                keep = np.flatnonzero(live)
                ids, live, design = ids[keep], live[keep], design[keep]
                y, w, c, th, u, v, a = (z[keep] for z in (y, w, c, th, u, v, a))
                su, sv, rp, rd, mu = (z[keep] for z in (su, sv, rp, rd, mu))
            iq = 1.0 / (u / su + v / sv)
            gram = design.gram(iq)

            state = (design, gram, iq, u, v, su, sv, rp, rd)
            dth, da, du, dv = _ipm_direction(state, -u * su, -v * sv)
            ap = np.minimum(1.0, np.minimum(_max_step(u, du), _max_step(v, dv)))
            ad = np.minimum(1.0, np.minimum(_max_step(su, da, -1.0), _max_step(sv, da)))
            mu_aff = (
                (u + ap[:, None] * du) * (su - ad[:, None] * da)
                + (v + ap[:, None] * dv) * (sv + ad[:, None] * da)
            ).mean(axis=1) / 2.0
            smu = ((np.clip(mu_aff / mu, 0.0, 1.0) ** 3) * mu)[:, None]
            dth, da, du, dv = _ipm_direction(state, smu - u * su + du * da, smu - v * sv - dv * da)
            ap = np.minimum(1.0, 0.99995 * np.minimum(_max_step(u, du), _max_step(v, dv)))
            ad = np.minimum(1.0, 0.99995 * np.minimum(_max_step(su, da, -1.0), _max_step(sv, da)))
            th = th + ap[:, None] * dth
            u = u + ap[:, None] * du
            v = v + ap[:, None] * dv
            a = a + ad[:, None] * da
    keep = np.flatnonzero(live)
    out[ids[keep]] = th[keep]
    return out, iters


def _ipm_direction(state: tuple, ru: np.ndarray, rv: np.ndarray) -> tuple[np.ndarray, ...]:
    """Newton direction of the IPM for complementarity right-hand sides ``ru``, ``rv``."""
    design, gram, iq, u, v, su, sv, rp, rd = state
    gvec = rp - ru / su + rv / sv
    rhs = design.xtv(gvec * iq) - rd
    dth = _solve(gram, rhs)
    da = (gvec - design.lin(dth)) * iq
    return dth, da, (ru + u * da) / su, (rv - v * da) / sv


def _max_step(x: np.ndarray, dx: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """Largest alpha in (0, inf] with x + sign alpha dx >= 0, per row (x > 0): the inverse of
    the largest relative decrease, max(-sign dx / x) (two passes over the rows)."""
    m = (dx / x).min(axis=1) if sign > 0 else -(dx / x).max(axis=1)
    with np.errstate(divide="ignore"):
        return np.where(m < 0, -1.0 / m, np.inf)

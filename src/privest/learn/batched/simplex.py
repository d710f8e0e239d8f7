"""The DC algorithm for DR median regression with warm-simplex convex steps (paper 000,
Sec. 7.3; docs/dr-estimation.md, "Computation and inference"), batched over replicates.

:func:`dc_simplex_dr` runs :class:`_SimplexDC`, whose state ``st`` holds the working
replicates (those still running, compacted as they finish) and whose arrays ``ok``,
``live``, ``steps`` and ``theta`` are indexed by the original replicate.
"""

from __future__ import annotations

import numpy as np

from privest.learn.batched.design import Design, _inv, _lin, _xtv

__all__ = ["dc_simplex_dr", "dr_median_objective"]


def dr_median_objective(
    d1: Design, d2: Design, y: np.ndarray, theta: np.ndarray, delta: float
) -> np.ndarray:
    """DR median-regression objective mean[(1/delta)|r1| + (1 - 1/delta)|r2|] (times 2 rho)."""
    a1 = 1.0 / delta
    return (a1 * np.abs(y - d1.lin(theta)) + (1.0 - a1) * np.abs(y - d2.lin(theta))).mean(axis=1)


def _basis_system(
    basis: np.ndarray, xt: np.ndarray, y: np.ndarray, yps: np.ndarray, sel: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``D_B`` (k, p, p) and responses ``y_B`` of the basis (data rows < n, box rows).

    ``sel`` picks the replicates of ``xt`` and ``y`` the k bases belong to (default: all);
    only the basis entries are gathered, never a copy of the selected designs.
    """
    n, p = xt.shape[2], xt.shape[1]
    sel = np.arange(len(basis)) if sel is None else sel
    dat = basis < n
    rows = np.where(dat, basis, 0)
    cols = xt[sel[:, None, None], np.arange(p)[None, :, None], rows[:, None, :]]
    pc = np.where(dat, 0, (basis - n) % p)
    dbt = np.where(dat[:, None, :], cols, np.eye(p)[:, pc].transpose(1, 0, 2))
    yb = np.where(dat, y[sel[:, None], rows], yps[np.where(dat, 0, basis - n)])
    return dbt.transpose(0, 2, 1), yb


def _ratio_test(
    tb: np.ndarray, jd: np.ndarray, tps: np.ndarray, jps: np.ndarray, need: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Exact line search along simplex edges, one per row of the inputs.

    Breakpoints ``tb`` (m, K) with slope jumps ``jd`` and box-row breakpoints ``tps`` (m, 2p)
    with jumps ``jps``; the slope starts at ``-need`` < 0 and the search stops at the first
    breakpoint where the cumulated jumps reach ``need`` (a weighted median). The nearest 32
    breakpoints are sorted first; the rare search that goes further sorts them all. Returns
    the entering row (index < K: a row of ``tb``; K + j: box row j; -1: slope never turns),
    the step, and the rows crossed on the way (pairs of arrays: which search, which row).
    """
    m = tb.shape[0]
    enter = np.full(m, -1)
    tstar = np.zeros(m)
    crossed: list[tuple[np.ndarray, np.ndarray]] = []
    full_t = np.concatenate([tb, tps], axis=1)
    full_j = np.concatenate([jd, jps], axis=1)
    width = full_t.shape[1]
    head = min(width, 32)
    rest = np.arange(m)
    while rest.size:
        ft, fj = full_t[rest], full_j[rest]
        if head < width:
            part = np.argpartition(ft, head - 1, axis=1)[:, :head]
            order = np.take_along_axis(part, np.argsort(np.take_along_axis(ft, part, 1), 1), 1)
        else:
            order = np.argsort(ft, axis=1)
        cum = np.cumsum(np.take_along_axis(fj, order, 1), axis=1)
        hit = cum >= need[rest, None]
        pos = np.argmax(hit, axis=1)
        tr = np.arange(rest.size)
        t_hit = ft[tr, order[tr, pos]]
        resolved = hit[tr, pos] | (head == width)
        found = resolved & hit[tr, pos] & np.isfinite(t_hit)
        jj, kj = np.nonzero(found[:, None] & (np.arange(head)[None, :] < pos[:, None]))
        crossed.append((rest[jj], order[jj, kj]))
        enter[rest[found]] = order[found, pos[found]]
        tstar[rest[found]] = t_hit[found]
        rest = rest[~resolved]
        head = width
    return enter, tstar, crossed


def dc_simplex_dr(
    d1: Design,
    d2: Design,
    y: np.ndarray,
    delta: float,
    theta0: np.ndarray,
    bound: float,
    max_rounds: int = 100_000,
    cand: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The DC algorithm of :func:`~privest.learn.batched.dc.dc_median_dr`, with each convex
    step solved by warm simplex.

    Same iterates as ``dc_median_dr`` (every convex step is solved exactly, and its
    solution is unique for continuous data), but far cheaper. The convex step
    ``min sum_i |y_i - d1_i'theta| + c'theta`` over the box (the 2p box rows of
    :func:`~privest.learn.batched.lp.l1_ipm`, weight M/2) has its optimum at a vertex where
    p rows have zero residual, and consecutive DC steps differ only in c, so the previous
    vertex is a good start. Each round does, per replicate, either one primal simplex pivot
    of the Barrodale-Roberts kind (steepest-edge choice of the leaving row, exact line
    search along the edge: a weighted median over its breakpoints) or, at an optimal vertex,
    one DC update of the signs of the X2 residuals (stopping when they repeat).

    Pivots look only at a candidate set C of the ``cand`` rows with the smallest
    |r_i| / ||d_i|| (default n/10): a row outside C has |r_i| / ||d_i|| >= tau, and a
    residual moves by at most ||d_i|| ||theta - theta_C|| from theta_C, where C was built,
    so no row outside C can be crossed while the edge stays in the ball
    ``||theta - theta_C|| < tau``; otherwise C is rebuilt (and if a fresh C is not enough,
    the pivot is done on all rows). Sign sums are updated incrementally and recomputed at
    every rebuild.
    ``theta0`` must be a vertex of the X1 rows (e.g. the naive LAD fit of ``l1_ipm``).

    Returns ``(theta, F(theta), DC steps, ok)``; ``ok`` is False where the basis could not
    be identified or the round limit was hit (callers fall back to ``dc_median_dr``).
    """
    run = _SimplexDC(d1, d2, y, delta, theta0, bound, cand)
    for _ in range(max_rounds):
        if not run.round():
            break
    theta, steps, ok = run.finish()
    return theta, dr_median_objective(d1, d2, y, theta, delta), steps, ok


class _SimplexDC:
    """State and steps of :func:`dc_simplex_dr` (one method per step of a round)."""

    def __init__(self, d1, d2, y, delta, theta0, bound, cand) -> None:
        r_all, p, n = d1.xt.shape
        self.n, self.p, self.delta = n, p, delta
        self.kc = min(n, cand if cand is not None else max(16 * p, n // 10))
        big = 2.0 * (np.abs(d1.xt).sum(axis=2) + (1.0 - delta) * np.abs(d2.xt).sum(axis=2)) + 1.0
        self.yps = np.concatenate([np.full(p, bound), np.full(p, -bound)])
        self.tol = 1e-10 * n
        self.theta = np.array(theta0, dtype=float)
        self.steps = np.zeros(r_all, dtype=int)
        self.ok = np.ones(r_all, dtype=bool)
        self.live = np.ones(r_all, dtype=bool)
        st: dict[str, np.ndarray] = {
            "ids": np.arange(r_all),
            "xt1": d1.xt,
            "xt2": d2.xt,
            "y": y,
            "wps": np.concatenate([big / 2.0, big / 2.0], axis=1),
            "dnorm": np.sqrt((d1.xt**2).sum(axis=1)),
            "th": self.theta.copy(),
        }
        self.st = st
        r0 = y - _lin(d1.xt, st["th"])
        st["basis"] = np.argpartition(np.abs(r0), p - 1, axis=1)[:, :p]
        db, yb = _basis_system(st["basis"], d1.xt, y, self.yps)
        st["binv"], bad = _inv(db)
        th_b = np.einsum("rij,rj->ri", st["binv"], yb)
        scale = 1e-6 * (1 + np.abs(st["th"]).max(axis=1))
        far = bad | (np.abs(th_b - st["th"]).max(axis=1) > scale)
        self.ok[far] = False
        self.live[far] = False
        st["th"] = np.where(far[:, None], st["th"], th_b)
        s2 = np.sign(y - _lin(d2.xt, st["th"]))
        st["sign2"] = s2
        st["c"] = (1.0 - delta) * _xtv(d2.xt, s2)
        kc = self.kc
        for key, shape in (("cidx", (kc,)), ("xtc", (p, kc)), ("rc", (kc,)), ("sc", (kc,))):
            st[key] = np.zeros((r_all, *shape), dtype=int if key == "cidx" else float)
        st["dnc"] = np.zeros((r_all, kc))
        st["tau"], st["fresh"] = np.zeros(r_all), np.zeros(r_all, dtype=bool)
        st["thc"] = np.zeros((r_all, p))
        st["gsum"], st["bpos"] = np.zeros((r_all, p)), np.zeros((r_all, p), dtype=int)
        self.rebuild(np.arange(r_all))

    def _drop(self, sel: np.ndarray) -> None:
        """Working rows ``sel`` fail: the caller falls back for their replicates."""
        self.ok[self.st["ids"][sel]] = False
        self.live[self.st["ids"][sel]] = False

    def rebuild(self, sel: np.ndarray) -> None:
        """Exact residuals and signs at theta, a fresh candidate set, exact sign sums."""
        st, n, kc = self.st, self.n, self.kc
        b = st["basis"][sel]
        xs = st["xt1"][sel]
        rf = st["y"][sel] - _lin(xs, st["th"][sel])
        ri, ci = np.nonzero(b < n)
        rf[ri, b[ri, ci]] = 0.0
        a = np.abs(rf) / st["dnorm"][sel]
        if kc < n:
            part = np.argpartition(a, kc, axis=1)
            idx = part[:, :kc]
            st["tau"][sel] = np.take_along_axis(a, part[:, kc : kc + 1], 1)[:, 0]
        else:
            idx = np.broadcast_to(np.arange(n), (len(sel), n))
            st["tau"][sel] = np.inf
        st["cidx"][sel] = idx
        st["xtc"][sel] = np.take_along_axis(xs, idx[:, None, :], axis=2)
        st["rc"][sel] = np.take_along_axis(rf, idx, 1)
        st["dnc"][sel] = np.take_along_axis(st["dnorm"][sel], idx, 1)
        sf = np.sign(rf)
        st["sc"][sel] = np.take_along_axis(sf, idx, 1)
        st["gsum"][sel] = _xtv(xs, sf)
        st["thc"][sel] = st["th"][sel]
        st["fresh"][sel] = True
        match = idx[:, :, None] == b[:, None, :]  # (m, kc, p): where each basis row sits in C
        st["bpos"][sel] = np.where(match.any(axis=1), np.argmax(match, axis=1), -1)

    def refresh_basis(self, sel: np.ndarray) -> None:
        st = self.st
        db, yb = _basis_system(st["basis"][sel], st["xt1"], st["y"], self.yps, sel)
        binv, bad = _inv(db)
        st["binv"][sel] = binv
        st["th"][sel[~bad]] = np.einsum("rij,rj->ri", binv[~bad], yb[~bad])
        if bad.any():  # a near-singular basis: leave this replicate to dc_median_dr
            self._drop(sel[bad])

    def full_pivots(self, sel: np.ndarray, js: np.ndarray, sq: np.ndarray, need: np.ndarray):
        """Pivots of working rows ``sel`` looking at every row (rare), then a rebuild."""
        st, n, yps = self.st, self.n, self.yps
        xs = st["xt1"][sel]
        th = st["th"][sel]
        v = -sq[:, None] * st["binv"][sel, :, js]
        g = _lin(xs, v)
        rf = st["y"][sel] - _lin(xs, th)
        gps = np.concatenate([v, v], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tb = rf / g
            tb[~(tb > 0)] = np.inf
            tps = (yps[None, :] - np.concatenate([th, th], axis=1)) / gps
            tps[~(tps > 0)] = np.inf
        vn = np.sqrt((v * v).sum(axis=1))[:, None]
        tb[np.abs(g) <= 1e-11 * vn * st["dnorm"][sel]] = np.inf
        tps[np.abs(gps) <= 1e-11 * vn] = np.inf
        b = st["basis"][sel]
        ri, ci = np.nonzero(b < n)
        tb[ri, b[ri, ci]] = np.inf
        ri, ci = np.nonzero(b >= n)
        tps[ri, b[ri, ci] - n] = np.inf
        jps = 2.0 * st["wps"][sel] * np.abs(gps)
        enter, _, _ = _ratio_test(tb, 2.0 * np.abs(g), tps, jps, need)
        fail = enter < 0
        self._drop(sel[fail])
        st["basis"][sel[~fail], js[~fail]] = enter[~fail]  # the index is already global
        self.refresh_basis(sel)
        self.rebuild(sel)

    def round(self) -> bool:
        """Price every working replicate; DC-update the optimal ones, pivot the others.
        Returns whether any replicate is still running."""
        st, n, p = self.st, self.n, self.p
        ids = st["ids"]
        th, basis, wps = st["th"], st["basis"], st["wps"]
        r_ps = self.yps[None, :] - np.concatenate([th, th], axis=1)
        s_ps = np.sign(r_ps)
        ri, ci = np.nonzero(basis >= n)
        s_ps[ri, basis[ri, ci] - n] = 0.0
        w_b = np.ones((len(ids), p))
        w_b[ri, ci] = wps[ri, basis[ri, ci] - n]
        ws = wps * s_ps
        q = np.einsum("rij,ri->rj", st["binv"], st["c"] - st["gsum"] - ws[:, :p] - ws[:, p:])
        viol = np.abs(q) - w_b
        # steepest edge in theta: violation per unit length of the edge direction
        jstar = np.argmax(viol / np.sqrt((st["binv"] ** 2).sum(axis=1)), axis=1)
        vmax = viol[np.arange(len(ids)), jstar]
        lv = self.live[ids]
        optimal = lv & (viol.max(axis=1) <= self.tol)
        if optimal.any():
            self._dc_update(np.flatnonzero(optimal))
        pv = np.flatnonzero(lv & ~optimal)
        if pv.size:
            js = jstar[pv]
            self._pivot(pv, js, np.sign(q[pv, js]), vmax[pv], r_ps[pv])
        if not self.live.any():
            return False
        if self.live[st["ids"]].mean() <= 0.6:  # compact the working set
            keep = np.flatnonzero(self.live[st["ids"]])
            for key in st:
                st[key] = st[key][keep]
        return True

    def _dc_update(self, oi: np.ndarray) -> None:
        """At an optimal vertex: new signs of the X2 residuals; stop where they repeat."""
        st, ids = self.st, self.st["ids"]
        th = st["th"]
        new_s = np.sign(st["y"][oi] - _lin(st["xt2"][oi], th[oi]))
        same = np.all(new_s == st["sign2"][oi], axis=1)
        self.steps[ids[oi]] += 1
        self.theta[ids[oi[same]]] = th[oi[same]]
        self.live[ids[oi[same]]] = False
        ch = oi[~same]
        st["sign2"][ch] = new_s[~same]
        st["c"][ch] = (1.0 - self.delta) * _xtv(st["xt2"][ch], new_s[~same])

    def _pivot(self, pv, js, sq, need, r_ps) -> None:
        """One simplex pivot for working rows ``pv`` (leaving basis position ``js``)."""
        st = self.st
        v = -sq[:, None] * st["binv"][pv, :, js]  # D_B v = -sign(q_j) e_j
        every = pv.size == len(st["ids"])  # then views, not copies, of the working rows
        xtc = st["xtc"] if every else st["xtc"][pv]
        rc = st["rc"] if every else st["rc"][pv]
        dnc = st["dnc"] if every else st["dnc"][pv]
        gc = _lin(xtc, v)
        enter, tstar, crossed = self._edge(pv, v, gc, rc, dnc, need, r_ps)
        valid = self._within_candidates(pv, v, enter, tstar)
        stale = ~valid & ~st["fresh"][pv]
        if stale.any():  # the candidate set may miss a crossing: rebuild it
            self.rebuild(pv[stale])
        short = np.flatnonzero(~valid & ~stale)
        if short.size:  # even a fresh candidate set is too small
            self.full_pivots(pv[short], js[short], sq[short], need[short])
        for who, rows in crossed:  # sign flips of the crossed candidate rows
            keep = valid[who] & (rows < self.kc)
            who, rows = who[keep], rows[keep]
            if who.size:
                w_i = pv[who]
                s_old = st["sc"][w_i, rows]
                np.add.at(st["gsum"], w_i, -2.0 * s_old[:, None] * xtc[who, :, rows])
                st["sc"][w_i, rows] = -s_old
        vj = np.flatnonzero(valid)
        if vj.size:
            self._enter(pv, vj, js, sq, enter, tstar, gc, rc, xtc)

    def _edge(self, pv, v, gc, rc, dnc, need, r_ps):
        """Breakpoints along the edge theta + t v (candidate and box rows) and the exact
        line search over them (:func:`_ratio_test`)."""
        st, n = self.st, self.n
        vn = np.sqrt((v * v).sum(axis=1))
        agc = np.abs(gc)
        gps = np.concatenate([v, v], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            # breakpoints ahead, t > 0 (0/0 = nan and -inf dropped); rows (almost)
            # parallel to the edge are never crossed (and would make B singular)
            tb = rc / gc
            tb = np.where((tb > 0) & (agc > 1e-11 * vn[:, None] * dnc), tb, np.inf)
            tps = r_ps / gps
            tps[~(tps > 0) | (np.abs(gps) <= 1e-11 * vn[:, None])] = np.inf
        bpos = st["bpos"][pv]
        ri, ci = np.nonzero(bpos >= 0)
        tb[ri, bpos[ri, ci]] = np.inf
        bp = st["basis"][pv]
        ri, ci = np.nonzero(bp >= n)
        tps[ri, bp[ri, ci] - n] = np.inf
        jps = 2.0 * st["wps"][pv] * np.abs(gps)
        return _ratio_test(tb, 2.0 * agc, tps, jps, need)

    def _within_candidates(self, pv, v, enter, tstar) -> np.ndarray:
        """Pivots found whose step keeps ||theta + t v - theta_C|| < tau, the ball in which
        no row outside the candidate set can change sign."""
        st = self.st
        vn = np.sqrt((v * v).sum(axis=1))
        a = st["th"][pv] - st["thc"][pv]
        av, aa, tau = (a * v).sum(axis=1), (a * a).sum(axis=1), st["tau"][pv]
        with np.errstate(invalid="ignore", over="ignore"):
            root = np.sqrt(np.maximum(av * av - vn * vn * (aa - tau * tau), 0.0))
            limit = (-av + root) / (vn * vn)
        return (enter >= 0) & ((tstar < limit) | np.isinf(tau))

    def _enter(self, pv, vj, js, sq, enter, tstar, gc, rc, xtc) -> None:
        """Move the valid pivots ``vj`` along their edge: residuals, signs and sign sums of
        the candidate rows, the entering and leaving rows, the new basis."""
        st, n, kc = self.st, self.n, self.kc
        w_i = pv[vj]
        gc[vj] *= tstar[vj, None]
        st["rc"][w_i] = rc[vj] - gc[vj]
        st["fresh"][w_i] = False
        e = enter[vj]
        ed = e < kc
        we, pe = w_i[ed], e[ed]
        st["gsum"][we] -= st["sc"][we, pe][:, None] * xtc[vj[ed], :, pe]
        st["sc"][we, pe] = 0.0
        st["rc"][we, pe] = 0.0
        jv = js[vj]
        lp = st["bpos"][w_i, jv]
        ld = lp >= 0
        wl, pl = w_i[ld], lp[ld]
        st["sc"][wl, pl] = sq[vj][ld]
        st["gsum"][wl] += sq[vj][ld][:, None] * xtc[vj[ld], :, pl]
        new_rows = np.where(ed, st["cidx"][w_i, np.where(ed, e, 0)], n + e - kc)
        st["basis"][w_i, jv] = new_rows
        st["bpos"][w_i, jv] = np.where(ed, e, -1)
        self.refresh_basis(w_i)

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(theta, DC steps, ok) by original replicate; unfinished ones are not ok."""
        if self.live.any():
            self.ok[self.live] = False
            sel = self.live[self.st["ids"]]
            self.theta[self.st["ids"][sel]] = self.st["th"][sel]
        return self.theta, self.steps, self.ok

"""The DC algorithm for DR median regression (paper 000, Sec. 7.3, eq. (4.4) with the check
loss), batched over replicates: exact convex steps by :func:`~privest.learn.batched.lp.l1_ipm`
(:func:`dc_median_dr`) or by a warm-started primal simplex (:func:`dc_simplex_dr`)."""

from __future__ import annotations

import numpy as np

from privest.learn.batched.design import Design, _inv, _lin, _xtv
from privest.learn.batched.lp import l1_ipm
from privest.learn.batched.newton import WeightedSum, newton_box
from privest.learn.batched.scl import SCLProblem

__all__ = [
    "dc_median_dr",
    "dc_simplex_dr",
    "dr_median_objective",
    "median_dr_fit",
    "smoothed_dr_start",
]


def dr_median_objective(
    d1: Design, d2: Design, y: np.ndarray, theta: np.ndarray, delta: float
) -> np.ndarray:
    """DR median-regression objective mean[(1/delta)|r1| + (1 - 1/delta)|r2|] (times 2 rho)."""
    a1 = 1.0 / delta
    return (a1 * np.abs(y - d1.lin(theta)) + (1.0 - a1) * np.abs(y - d2.lin(theta))).mean(axis=1)


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
    """The DC algorithm of :func:`dc_median_dr`, with each convex step solved by warm simplex.

    Same iterates as :func:`dc_median_dr` (every convex step is solved exactly, and its
    solution is unique for continuous data), but far cheaper. The convex step
    ``min sum_i |y_i - d1_i'theta| + c'theta`` over the box (the 2p box rows of
    :func:`l1_ipm`, weight M/2) has its optimum at a vertex where p rows have zero residual,
    and consecutive DC steps differ only in c, so the previous vertex is a good start. Each
    round does, per replicate, either one primal simplex pivot of the Barrodale-Roberts kind
    (steepest-edge choice of the leaving row, exact line search along the edge: a weighted
    median over its breakpoints) or, at an optimal vertex, one DC update of the signs of the
    X2 residuals (stopping when they repeat).

    Pivots look only at a candidate set C of the ``cand`` rows with the smallest
    |r_i| / ||d_i|| (default n/10): a row outside C has |r_i| / ||d_i|| >= tau, and a
    residual moves by at most ||d_i|| ||theta - theta_C|| from theta_C, where C was built,
    so no row outside C can be crossed while the edge stays in the ball
    ``||theta - theta_C|| < tau``; otherwise C is rebuilt (and if a fresh C is not enough,
    the pivot is done on all rows). Sign sums are updated incrementally and recomputed at
    every rebuild.
    ``theta0`` must be a vertex of the X1 rows (e.g. the naive LAD fit of :func:`l1_ipm`).

    Returns ``(theta, F(theta), DC steps, ok)``; ``ok`` is False where the basis could not
    be identified or the round limit was hit (callers fall back to :func:`dc_median_dr`).
    """
    r_all, p, n = d1.xt.shape
    kc = min(n, cand if cand is not None else max(16 * p, n // 10))
    big = 2.0 * (np.abs(d1.xt).sum(axis=2) + (1.0 - delta) * np.abs(d2.xt).sum(axis=2)) + 1.0
    yps = np.concatenate([np.full(p, bound), np.full(p, -bound)])
    tol = 1e-10 * n
    th_out = np.array(theta0, dtype=float)
    steps = np.zeros(r_all, dtype=int)
    ok = np.ones(r_all, dtype=bool)
    live = np.ones(r_all, dtype=bool)
    st: dict[str, np.ndarray] = {
        "ids": np.arange(r_all),
        "xt1": d1.xt,
        "xt2": d2.xt,
        "y": y,
        "wps": np.concatenate([big / 2.0, big / 2.0], axis=1),
        "dnorm": np.sqrt((d1.xt**2).sum(axis=1)),
        "th": th_out.copy(),
    }
    r0 = y - _lin(d1.xt, st["th"])
    st["basis"] = np.argpartition(np.abs(r0), p - 1, axis=1)[:, :p]
    db, yb = _basis_system(st["basis"], d1.xt, y, yps)
    st["binv"], bad = _inv(db)
    th_b = np.einsum("rij,rj->ri", st["binv"], yb)
    far = bad | (np.abs(th_b - st["th"]).max(axis=1) > 1e-6 * (1 + np.abs(st["th"]).max(axis=1)))
    ok[far] = False
    live[far] = False
    st["th"] = np.where(far[:, None], st["th"], th_b)
    s2 = np.sign(y - _lin(d2.xt, st["th"]))
    st["sign2"] = s2
    st["c"] = (1.0 - delta) * _xtv(d2.xt, s2)
    for key, shape in (
        ("cidx", (kc,)),
        ("xtc", (p, kc)),
        ("rc", (kc,)),
        ("sc", (kc,)),
        ("dnc", (kc,)),
    ):
        st[key] = np.zeros((r_all, *shape), dtype=int if key == "cidx" else float)
    st["tau"], st["fresh"] = np.zeros(r_all), np.zeros(r_all, dtype=bool)
    st["thc"] = np.zeros((r_all, p))
    st["gsum"], st["bpos"] = np.zeros((r_all, p)), np.zeros((r_all, p), dtype=int)

    def rebuild(sel: np.ndarray) -> None:
        """Exact residuals and signs at theta, a fresh candidate set, exact sign sums."""
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

    def refresh_basis(sel: np.ndarray) -> None:
        db, yb = _basis_system(st["basis"][sel], st["xt1"], st["y"], yps, sel)
        binv, bad = _inv(db)
        st["binv"][sel] = binv
        st["th"][sel[~bad]] = np.einsum("rij,rj->ri", binv[~bad], yb[~bad])
        if bad.any():  # a near-singular basis: leave this replicate to dc_median_dr
            ok[st["ids"][sel[bad]]] = False
            live[st["ids"][sel[bad]]] = False

    def full_pivots(sel: np.ndarray, js: np.ndarray, sq: np.ndarray, need: np.ndarray) -> None:
        """Pivots of working rows ``sel`` looking at every row (rare), then a rebuild."""
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
        ok[st["ids"][sel[fail]]] = False
        live[st["ids"][sel[fail]]] = False
        st["basis"][sel[~fail], js[~fail]] = enter[~fail]  # the index is already global
        refresh_basis(sel)
        rebuild(sel)

    rebuild(np.arange(r_all))
    for _ in range(max_rounds):
        ids = st["ids"]
        k = len(ids)
        kr = np.arange(k)
        th, basis, wps = st["th"], st["basis"], st["wps"]
        r_ps = yps[None, :] - np.concatenate([th, th], axis=1)
        s_ps = np.sign(r_ps)
        ri, ci = np.nonzero(basis >= n)
        s_ps[ri, basis[ri, ci] - n] = 0.0
        w_b = np.ones((k, p))
        w_b[ri, ci] = wps[ri, basis[ri, ci] - n]
        ws = wps * s_ps
        q = np.einsum("rij,ri->rj", st["binv"], st["c"] - st["gsum"] - ws[:, :p] - ws[:, p:])
        viol = np.abs(q) - w_b
        # steepest edge in theta: violation per unit length of the edge direction
        jstar = np.argmax(viol / np.sqrt((st["binv"] ** 2).sum(axis=1)), axis=1)
        vmax = viol[kr, jstar]
        lv = live[ids]
        optimal = lv & (viol.max(axis=1) <= tol)
        if optimal.any():  # DC update of the X2 signs
            oi = np.flatnonzero(optimal)
            new_s = np.sign(st["y"][oi] - _lin(st["xt2"][oi], th[oi]))
            same = np.all(new_s == st["sign2"][oi], axis=1)
            steps[ids[oi]] += 1
            th_out[ids[oi[same]]] = th[oi[same]]
            live[ids[oi[same]]] = False
            ch = oi[~same]
            st["sign2"][ch] = new_s[~same]
            st["c"][ch] = (1.0 - delta) * _xtv(st["xt2"][ch], new_s[~same])
        pv = np.flatnonzero(lv & ~optimal)
        if pv.size:
            js = jstar[pv]
            sq = np.sign(q[pv, js])
            v = -sq[:, None] * st["binv"][pv, :, js]  # D_B v = -sign(q_j) e_j
            vn = np.sqrt((v * v).sum(axis=1))
            every = pv.size == k  # then views, not copies, of the working rows
            xtc = st["xtc"] if every else st["xtc"][pv]
            gc = _lin(xtc, v)
            agc = np.abs(gc)
            rc = st["rc"] if every else st["rc"][pv]
            dnc = st["dnc"] if every else st["dnc"][pv]
            gps = np.concatenate([v, v], axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                # breakpoints ahead, t > 0 (0/0 = nan and -inf dropped); rows (almost)
                # parallel to the edge are never crossed (and would make B singular)
                tb = rc / gc
                tb = np.where((tb > 0) & (agc > 1e-11 * vn[:, None] * dnc), tb, np.inf)
                tps = r_ps[pv] / gps
                tps[~(tps > 0) | (np.abs(gps) <= 1e-11 * vn[:, None])] = np.inf
            bpos = st["bpos"][pv]
            ri, ci = np.nonzero(bpos >= 0)
            tb[ri, bpos[ri, ci]] = np.inf
            bp = basis[pv]
            ri, ci = np.nonzero(bp >= n)
            tps[ri, bp[ri, ci] - n] = np.inf
            enter, tstar, crossed = _ratio_test(
                tb, 2.0 * agc, tps, 2.0 * wps[pv] * np.abs(gps), vmax[pv]
            )
            # largest t with ||theta + t v - theta_C|| < tau: the edge stays in the ball
            # where no row outside C can change sign
            a = th[pv] - st["thc"][pv]
            av, aa, tau = (a * v).sum(axis=1), (a * a).sum(axis=1), st["tau"][pv]
            with np.errstate(invalid="ignore", over="ignore"):
                limit = (-av + np.sqrt(np.maximum(av * av - vn * vn * (aa - tau * tau), 0.0))) / (
                    vn * vn
                )
            valid = (enter >= 0) & ((tstar < limit) | np.isinf(tau))
            stale = ~valid & ~st["fresh"][pv]
            if stale.any():  # the candidate set may miss a crossing: rebuild it
                rebuild(pv[stale])
            short = np.flatnonzero(~valid & ~stale)
            if short.size:  # even a fresh candidate set is too small
                full_pivots(pv[short], js[short], sq[short], vmax[pv[short]])
            for who, rows in crossed:  # sign flips of the crossed candidate rows
                keep = valid[who] & (rows < kc)
                who, rows = who[keep], rows[keep]
                if who.size:
                    w_i = pv[who]
                    s_old = st["sc"][w_i, rows]
                    np.add.at(st["gsum"], w_i, -2.0 * s_old[:, None] * xtc[who, :, rows])
                    st["sc"][w_i, rows] = -s_old
            vj = np.flatnonzero(valid)
            if vj.size:
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
                refresh_basis(w_i)
        if not live.any():
            break
        if live[st["ids"]].mean() <= 0.6:
            keep = np.flatnonzero(live[st["ids"]])
            for key in st:
                st[key] = st[key][keep]
    if live.any():
        ok[live] = False
        sel = live[st["ids"]]
        th_out[st["ids"][sel]] = st["th"][sel]
    fval = dr_median_objective(d1, d2, y, th_out, delta)
    return th_out, fval, steps, ok


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

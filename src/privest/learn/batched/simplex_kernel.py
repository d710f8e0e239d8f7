"""The compiled loop of :func:`~privest.learn.batched.simplex.dc_simplex_dr` (paper 000,
Sec. 7.3): the warm-simplex DC algorithm for one replicate's ``(p, n)`` designs, and the
Gaussian-smoothed DR median objective of its smoothed start (:func:`smoothed_dr_derivs`).

A pivot touches a handful of rows of a p x p basis, which array code can batch across
replicates only at the price of masks, gathers and compaction on every round; here numba
compiles the loop (``cache=True``: once per installation, about 15 s on two cores) and each
replicate's pivots run back to back.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from privest.compiled import jit_options

__all__ = ["dc_one", "smoothed_dr_derivs"]


#: Compiled once per installation where numba can cache (else once per process); IEEE
#: division (x/0 = inf, 0/0 = nan, no exception).
_JIT = jit_options("the DR median-regression kernel", "about 15 s", error_model="numpy")

#: Condition number (infinity norm) above which a basis counts as singular: the replicate
#: is then left to the interior-point DC algorithm.
MAX_COND = 1e12


@njit(**_JIT)
def _sgn(x: float) -> float:
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@njit(**_JIT)
def _residuals(x, y, th, out):
    """out = y - x' th for a (p, n) design (row-wise, contiguous in n)."""
    p, n = x.shape
    for i in range(n):
        out[i] = y[i]
    for j in range(p):
        tj = th[j]
        for i in range(n):
            out[i] -= tj * x[j, i]


@njit(**_JIT)
def _invert(a, out) -> bool:
    """Gauss-Jordan inverse with partial pivoting into ``out``; False where ``a`` is
    singular or its condition number (infinity norm) exceeds :data:`MAX_COND`."""
    p = a.shape[0]
    m = a.copy()
    out[:] = 0.0
    for i in range(p):
        out[i, i] = 1.0
    for col in range(p):
        piv = col
        for i in range(col + 1, p):
            if abs(m[i, col]) > abs(m[piv, col]):
                piv = i
        if m[piv, col] == 0.0 or not np.isfinite(m[piv, col]):
            return False
        if piv != col:
            for k in range(p):
                m[col, k], m[piv, k] = m[piv, k], m[col, k]
                out[col, k], out[piv, k] = out[piv, k], out[col, k]
        f = 1.0 / m[col, col]
        for k in range(p):
            m[col, k] *= f
            out[col, k] *= f
        for i in range(p):
            if i != col and m[i, col] != 0.0:
                g = m[i, col]
                for k in range(p):
                    m[i, k] -= g * m[col, k]
                    out[i, k] -= g * out[col, k]
    na, ni = 0.0, 0.0
    for i in range(p):
        na = max(na, np.abs(a[i]).sum())
        ni = max(ni, np.abs(out[i]).sum())
    cond = na * ni
    return bool(np.isfinite(cond) and cond <= MAX_COND)


@njit(**_JIT)
def _basis(x, y, yps, basis, binv, th) -> bool:
    """D_B^{-1} and theta = D_B^{-1} y_B of the basis rows (data rows < n, box rows
    n + k: e_{k mod p} with response ``yps[k]``); False for a near-singular basis."""
    p, n = x.shape
    db = np.zeros((p, p))
    yb = np.empty(p)
    for j in range(p):
        row = basis[j]
        if row < n:
            db[j] = x[:, row]
            yb[j] = y[row]
        else:
            db[j, (row - n) % p] = 1.0
            yb[j] = yps[row - n]
    if not _invert(db, binv):
        return False
    th[:] = binv @ yb
    return True


@njit(**_JIT)
def _line_search(t, jump, need, perm):
    """Exact line search along an edge: the first breakpoint (ascending ``t``, all finite
    and > 0) at which the cumulated jumps reach ``need``, i.e. a weighted median, found by
    three-way quickselect in O(m). Returns (its index or -1, the step, the number c of
    breakpoints crossed before it), with their indices in ``perm[:c]``."""
    m = t.shape[0]
    for k in range(m):
        perm[k] = k
    lo, hi, acc = 0, m, 0.0  # perm[:lo] lies below the answer, with jumps summing to acc
    while lo < hi:
        a, b, c = t[perm[lo]], t[perm[(lo + hi) // 2]], t[perm[hi - 1]]
        pivot = max(min(a, b), min(max(a, b), c))  # median of three
        # three-way partition of perm[lo:hi]: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) >
        lt, i, gt = lo, lo, hi - 1
        below = 0.0
        while i <= gt:
            k = perm[i]
            if t[k] < pivot:
                perm[lt], perm[i] = k, perm[lt]
                below += jump[k]
                lt += 1
                i += 1
            elif t[k] > pivot:
                perm[gt], perm[i] = k, perm[gt]
                gt -= 1
            else:
                i += 1
        if acc + below >= need:
            hi = lt
            continue
        acc += below
        for e in range(lt, gt + 1):  # ties: in their present order
            acc += jump[perm[e]]
            if acc >= need:
                return perm[e], t[perm[e]], e
        lo = gt + 1
    return -1, 0.0, 0


@njit(**_JIT)
def _box_breakpoints(v, r_ps, wps, basis, n, vn, t, jump, idx, m, offset):
    """Append the box rows' breakpoints along theta + s v (skipping basis rows) to the
    arrays ``t``, ``jump``, ``idx`` (index ``offset + k`` for box row k) from position m."""
    p = v.shape[0]
    for k in range(2 * p):
        g = v[k % p]
        if abs(g) <= 1e-11 * vn:
            continue
        tk = r_ps[k] / g
        if not tk > 0.0:
            continue
        inb = False
        for j in range(p):
            if basis[j] == n + k:
                inb = True
        if inb:
            continue
        t[m], jump[m], idx[m] = tk, 2.0 * wps[k] * abs(g), offset + k
        m += 1
    return m


@njit(**_JIT)
def _rebuild(x1, y, th, basis, dnorm, cidx, xtc, rc, sc, dnc, gsum, cb, bpos, thc, rf, a):
    """Exact residuals and signs at theta, a fresh candidate set C (the ``len(cidx)`` rows
    of smallest |r_i| / ||d_i||, the basis rows among them) built at ``thc`` = theta,
    exact sign sums ``gsum``; returns tau, the smallest |r_i| / ||d_i|| outside C (inf
    when C holds every row)."""
    p, n = x1.shape
    thc[:] = th
    kc = cidx.shape[0]
    _residuals(x1, y, th, rf)
    for j in range(p):
        if basis[j] < n:
            rf[basis[j]] = 0.0
    for i in range(n):
        a[i] = abs(rf[i]) / dnorm[i]
    if kc < n:
        tau = np.partition(a, kc)[kc]
        cnt = 0
        for i in range(n):
            if a[i] < tau:
                cidx[cnt] = i
                cnt += 1
        for i in range(n):
            if cnt == kc:
                break
            if a[i] == tau:
                cidx[cnt] = i
                cnt += 1
    else:
        tau = np.inf
        cidx[:] = np.arange(n)
    for i in range(n):
        a[i] = _sgn(rf[i])  # a now holds the signs
    for k in range(kc):
        i = cidx[k]
        xtc[k] = x1[:, i]
        rc[k], dnc[k], sc[k] = rf[i], dnorm[i], a[i]
    gsum[:] = x1 @ a
    cb[:] = False
    for j in range(p):
        bpos[j] = -1
        for k in range(kc):
            if cidx[k] == basis[j]:
                bpos[j] = k
                cb[k] = True
    return tau


@njit(**_JIT)
def _full_pivot(x1, y, th, basis, dnorm, wps, v, r_ps, need, j, rf, g, t, jump, idx, crossed):
    """Basis position ``j`` leaves along ``v`` with the line search over every row (when a
    fresh candidate set is too small); False where the slope never turns."""
    p, n = x1.shape
    vn = np.sqrt((v * v).sum())
    _residuals(x1, y, th, rf)
    g[:] = 0.0
    for jj in range(p):
        g += v[jj] * x1[jj]
    for jj in range(p):
        if basis[jj] < n:
            g[basis[jj]] = 0.0  # basis rows are not crossed
    m = 0
    for i in range(n):  # as in the candidate edge of dc_one
        ti = rf[i] / g[i]
        t[m], jump[m], idx[m] = ti, 2.0 * abs(g[i]), i
        m += (ti > 0.0) & (abs(g[i]) > 1e-11 * vn * dnorm[i])
    m = _box_breakpoints(v, r_ps, wps, basis, n, vn, t, jump, idx, m, n)
    e, _, _ = _line_search(t[:m], jump[:m], need, crossed)
    if e < 0:
        return False
    basis[j] = idx[e]
    return True


@njit(**_JIT)
def _start_basis(x1, y, th, rf, a):
    """The p rows of smallest |residual| at ``th`` (a vertex: their residuals are zero)."""
    p, n = x1.shape
    _residuals(x1, y, th, rf)
    for i in range(n):
        a[i] = abs(rf[i])
    basis = np.empty(p, np.int64)
    for j in range(p):
        best = 0
        for i in range(n):
            if a[i] < a[best]:
                best = i
        basis[j] = best
        a[best] = np.inf
    return basis


@njit(**_JIT)
def _price(c, gsum, yps, wps, th, basis, binv, n, r_ps, z):
    """Reduced costs of the basis rows: (steepest-edge leaving position, its violation,
    the largest violation, the sign of its reduced cost); ``r_ps`` gets the box rows'
    residuals."""
    p = th.shape[0]
    z[:] = c - gsum
    for k in range(2 * p):
        r_ps[k] = yps[k] - th[k % p]
        inb = False
        for j in range(p):
            inb = inb or basis[j] == n + k
        if not inb:
            z[k % p] -= wps[k] * _sgn(r_ps[k])
    q = binv.T @ z
    js, vmax, score, worst = 0, 0.0, -np.inf, -np.inf
    for j in range(p):
        viol = abs(q[j]) - (1.0 if basis[j] < n else wps[basis[j] - n])
        s = viol / np.sqrt((binv[:, j] ** 2).sum())  # steepest edge in theta
        if s > score:
            js, vmax, score = j, viol, s
        worst = max(worst, viol)
    return js, vmax, worst, _sgn(q[js])


@njit(**_JIT)
def _same_signs(x2, y, th, s2, rf) -> bool:
    """The DC update: ``s2`` becomes sign(y - X2 theta); whether it is unchanged."""
    _residuals(x2, y, th, rf)
    same = True
    for i in range(rf.shape[0]):
        si = _sgn(rf[i])
        same = same and si == s2[i]
        s2[i] = si
    return same


@njit(**_JIT)
def _candidate_edge(xtc, rc, dnc, cb, v, vn, g, t, jump, idx) -> int:
    """Slopes ``g`` of the candidate rows along v and their breakpoints ahead, compacted
    branch-free into ``t``, ``jump``, ``idx`` (t > 0; 0/0 and -inf dropped; rows (almost)
    parallel to the edge are never crossed: they would make B singular). Returns their
    number."""
    kc, p = xtc.shape
    m = 0
    for k in range(kc):
        gk = 0.0
        for jj in range(p):
            gk += xtc[k, jj] * v[jj]
        g[k] = gk
        tk = rc[k] / gk
        t[m], jump[m], idx[m] = tk, 2.0 * abs(gk), k
        m += (tk > 0.0) & (abs(gk) > 1e-11 * vn * dnc[k]) & ~cb[k]
    return m


@njit(**_JIT)
def _in_ball(th, thc, v, vn, tau, tstar) -> bool:
    """Whether theta + tstar v stays within tau of theta_C (no row outside C crossed)."""
    if np.isinf(tau):
        return True
    d = th - thc
    av, aa, vv = (d * v).sum(), (d * d).sum(), vn * vn
    root = np.sqrt(max(av * av - vv * (aa - tau * tau), 0.0))
    return tstar < (-av + root) / vv


@njit(**_JIT)
def _move(enter, js, sq, tstar, g, crossed, idx, xtc, rc, sc, gsum, cb, cidx, bpos, basis, n):
    """Along the edge by ``tstar``: signs and sign sums of the crossed candidate rows,
    residuals, the entering (candidate ``enter`` < kc, else box row enter - kc) and leaving
    rows (basis position ``js``, its residual now of sign ``sq``), the new basis."""
    kc, p = xtc.shape
    for cc in range(crossed.shape[0]):
        k = idx[crossed[cc]]
        if k < kc:
            for jj in range(p):
                gsum[jj] -= 2.0 * sc[k] * xtc[k, jj]
            sc[k] = -sc[k]
    for k in range(kc):
        rc[k] -= tstar * g[k]
    if enter < kc:
        gsum -= sc[enter] * xtc[enter]
        sc[enter], rc[enter], cb[enter] = 0.0, 0.0, True
    lp = bpos[js]
    if lp >= 0:
        sc[lp] = sq
        gsum += sq * xtc[lp]
        cb[lp] = False
    basis[js] = cidx[enter] if enter < kc else n + enter - kc
    bpos[js] = enter if enter < kc else -1


@njit(**_JIT)
def dc_one(x1, x2, y, delta, theta, bound, kc, max_rounds, s_theta, snap):
    """:func:`~privest.learn.batched.simplex.dc_simplex_dr` for one replicate: ``theta``
    (the start, a vertex of the X1 rows) is overwritten by the fit unless the basis cannot
    be identified; the first DC step takes the signs of the X2 residuals at ``s_theta``.
    With ``snap`` the start is the vertex of the p rows of smallest |residual| at
    ``theta`` (any point will do). Returns (DC steps, ok)."""
    p, n = x1.shape
    tol = 1e-10 * n
    wps, yps = np.empty(2 * p), np.empty(2 * p)
    for j in range(p):  # box rows j (theta_j <= bound) and p + j (theta_j >= -bound)
        big = 2.0 * (np.abs(x1[j]).sum() + (1.0 - delta) * np.abs(x2[j]).sum()) + 1.0
        wps[j] = wps[p + j] = big / 2.0
        yps[j], yps[p + j] = bound, -bound
    dnorm = np.sqrt((x1 * x1).sum(axis=0))
    cur = theta.copy()
    rf, a, g = np.empty(n), np.empty(n), np.empty(kc)
    t, jump = np.empty(n + 2 * p), np.empty(n + 2 * p)
    idx, crossed = np.empty(n + 2 * p, np.int64), np.empty(n + 2 * p, np.int64)
    basis = _start_basis(x1, y, cur, rf, a)
    binv, thb = np.empty((p, p)), np.empty(p)
    if not _basis(x1, y, yps, basis, binv, thb):
        return 0, False
    if not snap and np.abs(thb - cur).max() > 1e-6 * (1.0 + np.abs(cur).max()):
        return 0, False
    cur[:] = thb
    _residuals(x2, y, s_theta, rf)
    s2 = np.sign(rf)
    c = (1.0 - delta) * (x2 @ s2)
    cidx, xtc = np.empty(kc, np.int64), np.empty((kc, p))
    rc, sc, dnc, cb = np.empty(kc), np.empty(kc), np.empty(kc), np.empty(kc, np.bool_)
    gsum, bpos, thc = np.empty(p), np.empty(p, np.int64), np.empty(p)
    tau = _rebuild(x1, y, cur, basis, dnorm, cidx, xtc, rc, sc, dnc, gsum, cb, bpos, thc, rf, a)
    fresh = True
    r_ps, z, v = np.empty(2 * p), np.empty(p), np.empty(p)
    steps = 0
    for _ in range(max_rounds):
        js, vmax, worst, sq = _price(c, gsum, yps, wps, cur, basis, binv, n, r_ps, z)
        if worst <= tol:  # optimal vertex: one DC update of the X2 signs
            steps += 1
            if _same_signs(x2, y, cur, s2, rf):
                theta[:] = cur
                return steps, True
            c[:] = (1.0 - delta) * (x2 @ s2)
            continue
        v[:] = -sq * binv[:, js]  # D_B v = -sign(q_j) e_j
        vn = np.sqrt((v * v).sum())
        m = _candidate_edge(xtc, rc, dnc, cb, v, vn, g, t, jump, idx)
        m = _box_breakpoints(v, r_ps, wps, basis, n, vn, t, jump, idx, m, kc)
        e, tstar, ncross = _line_search(t[:m], jump[:m], vmax, crossed)
        if e < 0 or not _in_ball(cur, thc, v, vn, tau, tstar):
            if fresh and not (
                _full_pivot(
                    x1, y, cur, basis, dnorm, wps, v, r_ps, vmax, js, rf, a, t, jump, idx, crossed
                )
                and _basis(x1, y, yps, basis, binv, cur)
            ):
                return steps, False
            tau = _rebuild(
                x1, y, cur, basis, dnorm, cidx, xtc, rc, sc, dnc, gsum, cb, bpos, thc, rf, a
            )
            fresh = True
            continue
        c_idx = crossed[:ncross]
        _move(idx[e], js, sq, tstar, g, c_idx, idx, xtc, rc, sc, gsum, cb, cidx, bpos, basis, n)
        fresh = False
        if not _basis(x1, y, yps, basis, binv, cur):
            return steps, False
    theta[:] = cur  # the round limit: the current vertex, not ok
    return steps, False


@njit(**_JIT)
def _smoothed_copy(x, y, theta, a, h, derivs, g, hs, r) -> float:
    """a sum_i rho_h(y_i - x_i'theta), adding its gradient and upper Hessian to g, hs."""
    p, n = x.shape
    _residuals(x, y, theta, r)
    f = 0.0
    for i in range(n):
        z = r[i] / h
        if abs(z) > 40.0:  # phi(z) and Phi(-|z|) underflow to 0: the same values, cheaply
            pdf, psi = 0.0, (0.5 if z > 0.0 else -0.5)
        else:
            pdf = np.exp(-0.5 * z * z) * 0.3989422804014327  # phi(z)
            psi = 0.5 - 0.5 * math.erfc(z * 0.7071067811865476)  # rho_h'(r) = 1/2 - Phi(-z)
        f += z * psi + pdf
        if derivs:
            k = a * pdf / h  # a rho_h''(r)
            for j in range(p):
                xj = x[j, i]
                g[j] -= a * psi * xj
                if k != 0.0:
                    for m in range(j, p):
                        hs[j, m] += k * xj * x[m, i]
    return a * h * f


@njit(**_JIT)
def smoothed_dr_derivs(x1, x2, y, theta, a1, h, derivs):
    """The DR median objective with each |r| smoothed by a N(0, h^2) kernel, for one
    replicate's ``(p, n)`` designs: mean[a1 rho_h(y - x1'theta) + (1 - a1) rho_h(y -
    x2'theta)], rho_h(r) = r (1/2 - Phi(-r/h)) + h phi(r/h) (the formulas of
    :class:`~privest.learn.batched.scl.SCLProblem` at lam = 0, tau = 1/2, one pass per
    copy). Returns (value, gradient (p,), Hessian (p, p)); zeros for the last two unless
    ``derivs``."""
    p, n = x1.shape
    g, hs, r = np.zeros(p), np.zeros((p, p)), np.empty(n)
    f = _smoothed_copy(x1, y, theta, a1, h, derivs, g, hs, r)
    f += _smoothed_copy(x2, y, theta, 1.0 - a1, h, derivs, g, hs, r)
    for j in range(p):
        for m in range(j):
            hs[j, m] = hs[m, j]
    return f / n, g / n, hs / n

"""Batched solvers for the paper-000 simulation tables (zil_tables.py).

Every routine works on a stack of independent Monte Carlo replicates at once: designs are
stored as ``(R, p, n)`` arrays (replicate, coefficient, observation), so one BLAS call per
iteration forms all the ``p x p`` Gram matrices, and replicates that have converged are
dropped from the working set.

* :func:`newton_box` - damped (modified) Newton over a box for smooth, possibly non-convex
  objectives: logistic ORA/NAI (convex) and SL/SDR/DR (Sec. 7.2), the sCL loss.
* :func:`l1_ipm` - Mehrotra predictor-corrector interior point for weighted, tilted L1
  regression ``min sum_i w_i |y_i - d_i'theta| + c'theta`` (median regression, Sec. 7.3).
* :func:`dc_median_dr` - the DC algorithm for the DR median-regression objective,
  each convex step solved exactly by :func:`l1_ipm`; :func:`dc_simplex_dr` - the same
  iterates, each convex step solved by a warm-started primal simplex (much cheaper).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol

import numpy as np
from scipy import special

from privest.progress import progress_bar

__all__ = [
    "Design",
    "LogisticProblem",
    "SCLProblem",
    "dc_median_dr",
    "dc_simplex_dr",
    "dr_median_objective",
    "l1_ipm",
    "map_chunks",
    "newton_box",
    "rmse_se",
    "truncated_normal",
]

# --------------------------------------------------------------------------------------
# shared helpers


def rmse_se(err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column RMSE of ``err`` (R, k) and its Monte Carlo SE ``sd(e^2) / (2 RMSE sqrt(R))``."""
    e2 = np.asarray(err, dtype=float) ** 2
    r = e2.shape[0]
    rmse = np.sqrt(e2.mean(axis=0))
    sd = e2.std(axis=0, ddof=1) if r > 1 else np.full(e2.shape[1:], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = sd / (2.0 * rmse * math.sqrt(r))
    return rmse, se


def truncated_normal(shape: tuple[int, ...], bound: float, rng: np.random.Generator) -> np.ndarray:
    """Independent N(0, 1) draws truncated to ``[-bound, bound]`` (inverse-cdf method)."""
    lo = special.ndtr(-bound)
    u = rng.uniform(lo, 1.0 - lo, size=shape)
    return special.ndtri(u)


def map_chunks(
    func: Callable[..., Any],
    tasks: Sequence[tuple],
    workers: int = 2,
    progress: bool = True,
    description: str = "replicates",
) -> list[Any]:
    """``[func(*t) for t in tasks]``, over ``workers`` processes, with a transient progress bar.

    Results come back in task order; each task carries its own spawned generator, so the
    numbers do not depend on ``workers``.
    """
    bar = progress_bar(progress)
    results: list[Any] = [None] * len(tasks)
    if workers <= 1 or len(tasks) <= 1:
        with bar:
            job = bar.add_task(description, total=len(tasks))
            for i, t in enumerate(tasks):
                results[i] = func(*t)
                bar.advance(job)
        return results
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # submit (and so fork the workers) before the progress bar starts its thread
        futures = {pool.submit(_single_thread_call, func, t): i for i, t in enumerate(tasks)}
        with bar:
            job = bar.add_task(description, total=len(tasks))
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                bar.advance(job)
    return results


def _single_thread_call(func: Callable[..., Any], args: Iterable[Any]) -> Any:
    """Run ``func(*args)`` with one BLAS thread (two worker processes share two cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return func(*args)
    with threadpool_limits(limits=1):
        return func(*args)


def _xtv(xt: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``D' v`` per replicate: (R, p, n), (R, n) -> (R, p)."""
    return np.matmul(xt, v[:, :, None])[:, :, 0]


def _lin(xt: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``D b`` per replicate: (R, p, n), (R, p) -> (R, n)."""
    return np.matmul(b[:, None, :], xt)[:, 0, :]


def _take(a: Any, idx: np.ndarray | None) -> Any:
    if a is None or idx is None:
        return a
    return a[idx]


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched ``solve(a, b)`` (b: (R, p)); a singular or non-finite system gives a
    least-squares (minimum-norm) answer for its replicate instead of an error."""
    try:
        out = np.linalg.solve(a, b[:, :, None])[:, :, 0]
        if np.isfinite(out).all():
            return out
    except np.linalg.LinAlgError:
        out = np.empty_like(b)
    for i in range(len(a)):
        ai = np.nan_to_num(a[i], nan=0.0, posinf=0.0, neginf=0.0)
        try:
            out[i] = np.linalg.solve(ai, b[i])
        except np.linalg.LinAlgError:
            out[i] = np.linalg.lstsq(ai, b[i], rcond=None)[0]
        if not np.isfinite(out[i]).all():
            out[i] = 0.0
    return out


def _inv(a: np.ndarray, max_cond: float = 1e12) -> tuple[np.ndarray, np.ndarray]:
    """Batched inverse and a mask of the (numerically) singular matrices (identity there)."""
    a = np.array(a, dtype=float)
    bad = ~np.isfinite(a).all(axis=(1, 2))
    a[bad] = np.eye(a.shape[1])
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        inv = np.empty_like(a)
        for i in range(len(a)):
            try:
                inv[i] = np.linalg.inv(a[i])
            except np.linalg.LinAlgError:
                inv[i] = np.eye(a.shape[1])
                bad[i] = True
    cond = np.abs(a).sum(axis=2).max(axis=1) * np.abs(inv).sum(axis=2).max(axis=1)
    bad |= ~np.isfinite(cond) | (cond > max_cond)
    inv[bad] = np.eye(a.shape[1])
    return inv, bad


class Design:
    """A stack of designs ``xt`` (R, p, n) with the products ``d_ij d_ik`` cached.

    The cache turns each weighted Gram ``D' diag(w) D`` into one batched matrix-vector
    product. With ``box=True`` the design carries 2p extra identity rows (pseudo-observations
    ``e_j`` twice), used by :func:`l1_ipm` to impose ``|theta_j| <= bound`` exactly; vectors
    over rows then have length n + 2p (the n data rows first).
    """

    def __init__(self, xt: np.ndarray, box: bool = False, prods: np.ndarray | None = None):
        self.xt = xt
        self.box = box
        self.n_reps, self.p, self.n_obs = xt.shape
        self._iu = np.triu_indices(self.p)
        self._prods = prods

    @property
    def prods(self) -> np.ndarray:
        """``d_ij d_ik`` for j <= k, (R, p(p+1)/2, n), computed on first use."""
        if self._prods is None:
            prods = np.empty((self.n_reps, len(self._iu[0]), self.n_obs))
            for k, (i, j) in enumerate(zip(*self._iu, strict=True)):
                np.multiply(self.xt[:, i, :], self.xt[:, j, :], out=prods[:, k, :])
            self._prods = prods
        return self._prods

    @property
    def n_rows(self) -> int:
        return self.n_obs + (2 * self.p if self.box else 0)

    def __getitem__(self, idx: np.ndarray) -> Design:
        return Design(self.xt[idx], self.box, None if self._prods is None else self._prods[idx])

    def with_box(self, box: bool = True) -> Design:
        return Design(self.xt, box, self._prods)

    def lin(self, b: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """``D b`` for every replicate, or for replicates ``idx`` only (``b`` then has one
        row per entry of ``idx``; one matrix-vector product each, no copy of the designs)."""
        if idx is None:
            u = _lin(self.xt, b)
        else:
            u = np.empty((len(idx), self.n_obs))
            for k, i in enumerate(idx):
                np.matmul(b[k], self.xt[i], out=u[k])
        return np.concatenate([u, b, b], axis=1) if self.box else u

    def xtv(self, v: np.ndarray) -> np.ndarray:
        n, p = self.n_obs, self.p
        out = _xtv(self.xt, v[:, :n] if self.box else v)
        if self.box:
            out += v[:, n : n + p] + v[:, n + p :]
        return out

    def gram(self, w: np.ndarray) -> np.ndarray:
        n, p = self.n_obs, self.p
        flat = np.matmul(self.prods, (w[:, :n] if self.box else w)[:, :, None])[:, :, 0]
        out = np.empty((w.shape[0], p, p))
        out[:, self._iu[0], self._iu[1]] = flat
        out[:, self._iu[1], self._iu[0]] = flat
        if self.box:
            diag = np.arange(p)
            out[:, diag, diag] += w[:, n : n + p] + w[:, n + p :]
        return out


# --------------------------------------------------------------------------------------
# damped Newton over a box


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
        new = np.where(live[:, None], np.clip(th + step, lo, hi), th)
        fnew = f.copy()
        t = np.ones(len(th))
        pend = np.flatnonzero(live & ~small)
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


# --------------------------------------------------------------------------------------
# logistic regression (paper 000, Sec. 7.2)


def _softplus(u: np.ndarray) -> np.ndarray:
    """``log(1 + e^u) = -log sigma(-u)`` without overflow (sigma(-u) underflows for u > ~745)."""
    if u.size and u.max() > 700.0:
        return np.logaddexp(0.0, u)
    return -np.log(special.expit(-u))


def _sigmoid_parts(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``softplus(u), sigma(u), sigma(-u)``."""
    sn = special.expit(-u)
    if u.size and u.max() > 700.0:
        sp = np.logaddexp(0.0, u)
    else:
        sp = -np.log(sn)
    return sp, 1.0 - sn, sn


class LogisticProblem:
    """Logistic objectives of paper 000 Section 7.2 over a stack of replicates.

    ``kind``: ``"plain"`` mean l(X1) (ORA with X1 = X, NAI with X1 = X + Z);
    ``"sl"`` mean[l(X2) - (lam^2/2) Lap l(X2)]; ``"sdr"`` mean[l(X1) - ((1-delta) lam^2/2)
    Lap l(X2)]; ``"dr"`` mean[(1/delta) l(X1) + (1 - 1/delta) l(X2)]. Here
    l = softplus(x'b) - y x'b and Lap_x l = ||b||^2 w(x'b), w = sigma (1 - sigma).
    ``d1``, ``d2``: designs of X1 and X2 (R, p, n); ``y`` (R, n); no intercept.
    """

    def __init__(
        self,
        kind: str,
        d1: Design | None,
        d2: Design | None,
        y: np.ndarray,
        lam: float = 0.0,
        delta: float = 1.0,
    ) -> None:
        if kind not in ("plain", "sl", "sdr", "dr"):
            raise ValueError(f"kind: {kind!r}")
        self.kind, self.d1, self.d2, self.y = kind, d1, d2, y
        self.lam, self.delta = lam, delta
        self.n_reps, self.n = y.shape

    def subset(self, idx: np.ndarray) -> LogisticProblem:
        return LogisticProblem(
            self.kind, _take(self.d1, idx), _take(self.d2, idx), self.y[idx], self.lam, self.delta
        )

    def _coef(self) -> float:
        """Weight c of the Laplacian term: objective = ... - c ||b||^2 mean w(u2)."""
        if self.kind == "sl":
            return self.lam**2 / 2.0
        if self.kind == "sdr":
            return (1.0 - self.delta) * self.lam**2 / 2.0
        return 0.0

    def value(self, b: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        y = _take(self.y, idx)
        d1, d2 = self.d1, self.d2
        if self.kind == "plain":
            u = d1.lin(b, idx)
            return (_softplus(u) - y * u).mean(axis=1)
        if self.kind == "dr":
            u1, u2 = d1.lin(b, idx), d2.lin(b, idx)
            a = 1.0 / self.delta
            return (a * (_softplus(u1) - y * u1) + (1.0 - a) * (_softplus(u2) - y * u2)).mean(
                axis=1
            )
        u2 = d2.lin(b, idx)
        sp2, s2, sn2 = _sigmoid_parts(u2)
        lap = (b * b).sum(axis=1) * (s2 * sn2).mean(axis=1)
        if self.kind == "sl":
            base = (sp2 - y * u2).mean(axis=1)
        else:
            u1 = d1.lin(b, idx)
            base = (_softplus(u1) - y * u1).mean(axis=1)
        return base - self._coef() * lap

    def derivs(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y, n = self.y, self.n
        if self.kind in ("plain", "dr"):
            a1 = 1.0 if self.kind == "plain" else 1.0 / self.delta
            u1 = self.d1.lin(b)
            sp1, s1, sn1 = _sigmoid_parts(u1)
            f = a1 * (sp1 - y * u1).mean(axis=1)
            g = a1 * self.d1.xtv(s1 - y) / n
            h = a1 * self.d1.gram(s1 * sn1) / n
            if self.kind == "dr":
                a2 = 1.0 - a1
                u2 = self.d2.lin(b)
                sp2, s2, sn2 = _sigmoid_parts(u2)
                f = f + a2 * (sp2 - y * u2).mean(axis=1)
                g = g + a2 * self.d2.xtv(s2 - y) / n
                h = h + a2 * self.d2.gram(s2 * sn2) / n
            return f, g, h
        c = self._coef()
        q = (b * b).sum(axis=1)
        u2 = self.d2.lin(b)
        sp2, s2, sn2 = _sigmoid_parts(u2)
        w2 = s2 * sn2
        mw = w2.mean(axis=1)
        m = self.d2.xtv(w2 * (sn2 - s2)) / n  # mean w (1 - 2 sigma) x
        k = w2 * (1.0 - 6.0 * w2)  # d^2 w / du^2 = w (1 - 6 sigma + 6 sigma^2)
        f = -c * q * mw
        g = -c * (2.0 * b * mw[:, None] + q[:, None] * m)
        outer = b[:, :, None] * m[:, None, :]
        eye = np.eye(b.shape[1])
        h = -c * (2.0 * mw[:, None, None] * eye + 2.0 * (outer + outer.transpose(0, 2, 1)))
        if self.kind == "sl":
            f = f + (sp2 - y * u2).mean(axis=1)
            g = g + self.d2.xtv(s2 - y) / n
            h = h + self.d2.gram(w2 - c * q[:, None] * k) / n
        else:
            u1 = self.d1.lin(b)
            sp1, s1, sn1 = _sigmoid_parts(u1)
            f = f + (sp1 - y * u1).mean(axis=1)
            g = g + self.d1.xtv(s1 - y) / n
            h = h + (self.d1.gram(s1 * sn1) - c * q[:, None, None] * self.d2.gram(k)) / n
        return f, g, h


# --------------------------------------------------------------------------------------
# sCL: smoothed, SL-corrected check loss (docs/dr-estimation.md, "The sCL competitor")

_SQRT_2PI = math.sqrt(2.0 * math.pi)


class SCLProblem:
    """privest's reconstruction of Wang, Stefanski & Zhu (2012) on X2, tau-quantile regression.

    Per observation, with r = y - d'theta, d = (1, x2), beta = theta without the intercept:
    rho_h(r) - (lam^2 ||beta||^2 / 2) phi(r/h)/h, where rho_h(r) = r (tau - Phi(-r/h)) +
    h phi(r/h) is the check loss smoothed with a N(0, h^2) kernel (rho_h'' = phi(r/h)/h).
    The second term is the exact SL(lam^2 I) correction (X2 = X + SL(lam^2 I) noise).
    """

    def __init__(self, d2: Design, y: np.ndarray, lam: float, h: float, tau: float = 0.5):
        self.d2, self.y, self.lam, self.h, self.tau = d2, y, lam, h, tau
        self.n_reps, self.n = y.shape

    def subset(self, idx: np.ndarray) -> SCLProblem:
        return SCLProblem(self.d2[idx], self.y[idx], self.lam, self.h, self.tau)

    def value(self, theta: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        z = (_take(self.y, idx) - self.d2.lin(theta, idx)) / self.h
        pdf = np.exp(-0.5 * z * z) / _SQRT_2PI
        q = (theta[:, 1:] ** 2).sum(axis=1)
        rho = self.h * (z * (self.tau - special.ndtr(-z)) + pdf)
        return rho.mean(axis=1) - self.lam**2 / 2.0 * q * (pdf / self.h).mean(axis=1)

    def derivs(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d2, h, n = self.d2, self.h, self.n
        z = (self.y - d2.lin(theta)) / h
        pdf = np.exp(-0.5 * z * z) / _SQRT_2PI
        q = (theta[:, 1:] ** 2).sum(axis=1)
        psi = self.tau - special.ndtr(-z)  # rho_h'(r)
        c = self.lam**2 / 2.0
        k = pdf / h  # rho_h''(r), the kernel of the correction
        k1 = -(z / h) * k  # k'(r)
        k2 = (z * z - 1.0) / (h * h) * k  # k''(r)
        mk = k.mean(axis=1)
        f = h * (z * psi + pdf).mean(axis=1) - c * q * mk
        pb = theta.copy()
        pb[:, 0] = 0.0  # P theta: the slopes only
        m1 = d2.xtv(k1) / n  # mean k'(r) d
        # dr/dtheta = -d: grad rho_h(r) = -psi d; grad q k(r) = 2 k P theta - q k'(r) d
        g = -d2.xtv(psi) / n - c * (2.0 * mk[:, None] * pb - q[:, None] * m1)
        pmat = np.eye(theta.shape[1])
        pmat[0, 0] = 0.0
        outer = pb[:, :, None] * m1[:, None, :]
        hs = d2.gram(k - c * q[:, None] * k2) / n
        hs = hs - c * (2.0 * mk[:, None, None] * pmat - 2.0 * (outer + outer.transpose(0, 2, 1)))
        return f, g, hs


# --------------------------------------------------------------------------------------
# weighted, tilted L1 regression by a batched interior point method


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

    Returns ``(theta, iterations)``.
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

"""Stacks of designs for the batched solvers of paper 000's estimators (Sections 4-7).

Designs are stored as ``(R, p, n)`` arrays (replicate, coefficient, observation), so one BLAS
call per iteration forms all R ``p x p`` Gram matrices; R = 1 is one data set (the
estimators), R > 1 a stack of Monte Carlo replicates (the paper-000 tables). For R = 1 the
stored array may be the transposed view of an (n, p) design (no copy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privest.learn.gram import weighted_gram

__all__ = ["CACHE_LIMIT", "Design"]

#: Products d_ij d_ik cached per single design at most (4M: 32 MB); larger ones use BLAS.
CACHE_LIMIT = 4 * 2**20


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


class Design:
    """A stack of designs ``xt`` (R, p, n) with the products ``d_ij d_ik`` cached.

    The cache turns each weighted Gram ``D' diag(w) D`` into one batched matrix-vector
    product. A single large design (R = 1, more than :data:`CACHE_LIMIT` products) skips
    the cache: its Gram is then one matrix product.
    With ``box=True`` the design carries 2p extra identity rows (pseudo-observations
    ``e_j`` twice), used by :func:`l1_ipm` to impose ``|theta_j| <= bound`` exactly; vectors
    over rows then have length n + 2p (the n data rows first).
    """

    def __init__(
        self,
        xt: np.ndarray,
        box: bool = False,
        prods: np.ndarray | None = None,
        rows: np.ndarray | None = None,
    ):
        self.xt = xt
        self.rows = rows  # R = 1 only: the (n, p) design, xt a transposed view of it
        self.box = box
        self.n_reps, self.p, self.n_obs = xt.shape
        self._iu = np.triu_indices(self.p)
        self._prods = prods
        self._large = self.n_obs * len(self._iu[0]) > CACHE_LIMIT

    @classmethod
    def from_rows(cls, d: np.ndarray) -> Design:
        """One design (R = 1) from its (n, p) rows. A small one is stored transposed, (1, p, n),
        exactly as the tables store theirs (the same arithmetic, cached products d_ij d_ik);
        a large one keeps its rows as they are (row-major matrix products, no copy)."""
        rows = np.ascontiguousarray(d, dtype=float)
        n, p = rows.shape
        if n * p * (p + 1) // 2 <= CACHE_LIMIT:  # small: stored as the batched tables store it
            return cls(np.ascontiguousarray(rows.T)[None])
        return cls(rows.T[None], rows=rows)

    @classmethod
    def from_features(cls, x: np.ndarray, intercept: bool) -> Design:
        """Designs of a stack of feature arrays (R, n, d): ``[1, x]`` or ``x``, as (R, p, n)."""
        xt = np.asarray(x, dtype=float).transpose(0, 2, 1)
        if intercept:
            return cls(np.concatenate([np.ones((xt.shape[0], 1, xt.shape[2])), xt], axis=1))
        return cls(np.ascontiguousarray(xt))

    @property
    def prods(self) -> np.ndarray:
        """``d_ij d_ik`` for j <= k, (R, p(p+1)/2, n), computed on first use."""
        if self._prods is None:
            prods = np.empty((self.n_reps, len(self._iu[0]), self.n_obs))
            for k, (i, j) in enumerate(zip(*self._iu, strict=True)):
                np.multiply(self.xt[:, i, :], self.xt[:, j, :], out=prods[:, k, :])
            self._prods = prods
        return self._prods

    def _gram_one(self, w: np.ndarray) -> np.ndarray:
        """D' diag(w) D of a single large design (:func:`~privest.learn.gram.weighted_gram`)."""
        return weighted_gram(self.rows if self.rows is not None else self.xt[0].T, w)

    @property
    def n_rows(self) -> int:
        return self.n_obs + (2 * self.p if self.box else 0)

    def __getitem__(self, idx: np.ndarray) -> Design:
        return Design(self.xt[idx], self.box, None if self._prods is None else self._prods[idx])

    def with_box(self, box: bool = True) -> Design:
        return Design(self.xt, box, self._prods, self.rows)

    def lin(self, b: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """``D b`` for every replicate, or for replicates ``idx`` only (``b`` then has one
        row per entry of ``idx``; one matrix-vector product each, no copy of the designs)."""
        if self.rows is not None:
            u = (self.rows @ b.T).T
        elif idx is None:
            u = _lin(self.xt, b)
        else:
            u = np.empty((len(idx), self.n_obs))
            for k, i in enumerate(idx):
                np.matmul(b[k], self.xt[i], out=u[k])
        return np.concatenate([u, b, b], axis=1) if self.box else u

    def xtv(self, v: np.ndarray) -> np.ndarray:
        n, p = self.n_obs, self.p
        vd = v[:, :n] if self.box else v
        out = vd @ self.rows if self.rows is not None else _xtv(self.xt, vd)
        if self.box:
            out += v[:, n : n + p] + v[:, n + p :]
        return out

    def gram(self, w: np.ndarray) -> np.ndarray:
        n, p = self.n_obs, self.p
        if self.n_reps == 1 and self._prods is None and not self.box and self._large:
            return self._gram_one(w[0])[None]
        flat = np.matmul(self.prods, (w[:, :n] if self.box else w)[:, :, None])[:, :, 0]
        out = np.empty((w.shape[0], p, p))
        out[:, self._iu[0], self._iu[1]] = flat
        out[:, self._iu[1], self._iu[0]] = flat
        if self.box:
            diag = np.arange(p)
            out[:, diag, diag] += w[:, n : n + p] + w[:, n + p :]
        return out

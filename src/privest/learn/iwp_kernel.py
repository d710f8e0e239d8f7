"""The compiled pass of IWP-SGD's fused one-replication step (paper 004, Alg. 1; the fused
steps of :mod:`privest.learn.losses.margin`).

The batches of a block go through the float operations of the numpy fused step in the same
order: the same BLAS routines of numpy's own OpenBLAS (called through ``ctypes`` with the
arguments numpy passes, for shapes where numpy calls them: at least two rows per batch and
two features), the same libm exponential, numpy's pairwise sum, and scalar arithmetic
without fused multiply-add. The iterates are therefore the numpy path's to the bit
(tests/learn/test_iwp_kernel.py). A process imports this module (and numba) only after
many records (:data:`~privest.learn.iwp_core.KERNEL_AFTER`, docs/iwp-sgd.md); the pass is
compiled once per installation where numba can cache.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
from numba import njit
from numpy._core import _multiarray_umath

from privest.compiled import jit_options

__all__ = ["AVAILABLE", "add_reduce", "run_batches"]

_JIT = jit_options("the IWP-SGD pass", "about 3 s", error_model="numpy")

_ROW, _NOTRANS, _TRANS = 101, 111, 112  # CBLAS enums
_D, _P = ctypes.c_double, ctypes.c_void_p


def _numpy_blas() -> tuple | None:
    """numpy's own CBLAS ``dgemv``, ``dgemm``, ``ddot`` (None where they are not found)."""
    lib = ctypes.CDLL(_multiarray_umath.__file__)  # dlsym searches its BLAS too
    for prefix, suffix, integer in (
        ("scipy_cblas_", "64_", ctypes.c_int64),
        ("cblas_", "64_", ctypes.c_int64),
        ("scipy_cblas_", "", ctypes.c_int),
        ("cblas_", "", ctypes.c_int),
    ):
        try:
            gemv, gemm, ddot = (
                getattr(lib, f"{prefix}{f}{suffix}") for f in ("dgemv", "dgemm", "ddot")
            )
        except AttributeError:
            continue
        enum, i = ctypes.c_int, integer
        gemv.restype, gemm.restype, ddot.restype = None, None, _D
        gemv.argtypes = [enum, enum, i, i, _D, _P, i, _P, i, _D, _P, i]
        gemm.argtypes = [enum, enum, enum, i, i, i, _D, _P, i, _P, i, _D, _P, i]
        ddot.argtypes = [i, _P, i, _P, i]
        return gemv, gemm, ddot
    return None


_BLAS = _numpy_blas()
#: whether numpy's CBLAS was found (else the numpy fused step runs every pass)
AVAILABLE = _BLAS is not None


@njit(**_JIT)
def _block_sum(a, lo, n):
    """numpy's pairwise sum of a block ``a[lo:lo + n]``, n <= 128 (8 accumulators)."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = a[lo : lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for k in range(8):
            r[k] += a[lo + i + k]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(**_JIT)
def _half(n):
    n2 = n // 2
    return n2 - n2 % 8


@njit(**_JIT)
def add_reduce(a):
    """``np.add.reduce`` of a 1-D contiguous array: numpy's pairwise sum (blocks of at most
    128 values; above, the left half, rounded down to a multiple of 8, plus the right half),
    with an explicit stack of halves instead of recursion."""
    lo, n = np.empty(64, np.int64), np.empty(64, np.int64)
    left, acc = np.zeros(64, np.bool_), np.empty(64)  # left: its left half is summed
    top, lo[0], n[0], left[0] = 0, 0, a.size, False
    while True:
        if n[top] > 128:  # expand: the left half first
            lo[top + 1], n[top + 1], left[top + 1] = lo[top], _half(n[top]), False
            top += 1
            continue
        v = _block_sum(a, lo[top], n[top])
        top -= 1
        while top >= 0 and left[top]:  # both halves summed: the parent's value
            v = acc[top] + v
            top -= 1
        if top < 0:
            return v
        acc[top], left[top] = v, True  # now its right half
        h = _half(n[top])
        lo[top + 1], n[top + 1], left[top + 1] = lo[top] + h, n[top] - h, False
        top += 1


@njit(**_JIT)
def _mv(gemv, A, x, out):
    """``np.dot(A, x, out=out)``: A (m, n) C-contiguous, m, n >= 2."""
    m, n = A.shape
    gemv(_ROW, _NOTRANS, m, n, 1.0, A.ctypes.data, n, x.ctypes.data, 1, 0.0, out.ctypes.data, 1)


@njit(**_JIT)
def _vm(gemv, v, A, out):
    """``np.dot(v, A, out=out)``: A (m, n) C-contiguous, m, n >= 2."""
    m, n = A.shape
    gemv(_ROW, _TRANS, m, n, 1.0, A.ctypes.data, n, v.ctypes.data, 1, 0.0, out.ctypes.data, 1)


@njit(**_JIT)
def _mm(gemm, A, B, out):
    """``np.dot(A, B, out=out)``: A (m, k), B (k, n) C-contiguous, all >= 2."""
    m, k = A.shape
    n = B.shape[1]
    a, b, o = A.ctypes.data, B.ctypes.data, out.ctypes.data
    gemm(_ROW, _NOTRANS, _NOTRANS, m, n, k, 1.0, a, k, b, n, 0.0, o, n)


@njit(**_JIT)
def _project(ddot, theta, thn, has_noised, shrink, grad, r2, radius):
    """``margin._shrink_and_project``'s operations; returns the new ||theta||^2."""
    if has_noised:
        thn *= shrink
        theta -= thn
    else:
        theta *= 1.0 - shrink
    theta -= grad
    p = theta.size
    sq = ddot(p, theta.ctypes.data, 1, theta.ctypes.data, 1)
    if sq > r2:
        theta *= radius / math.sqrt(sq)
        sq = r2
    return sq


@njit(**_JIT)
def _exponential(blas, theta, X, y, neg_y, gamma, sq, fp, noised, Z, ones, M, grad, thn, coef):
    """``margin.fused_exponential_step``'s operations (``fp``: the step's constants)."""
    gemv, gemm, ddot = blas
    alpha, r2, radius = fp[0], fp[1], fp[2]
    a0, a1, b0, b1, s2, half_s2 = fp[3], fp[4], fp[5], fp[6], fp[7], fp[8]
    nb = y.size
    E = Z[0]
    _mv(gemv, X, theta, E)
    for i in range(nb):
        E[i] = math.exp(E[i] * neg_y[i])  # e^{-m}, m = y theta'x
        Z[1, i] = 1.0 / E[i]
    sums = np.empty(2)
    _mv(gemv, Z, ones, sums)
    s_neg, s_pos = sums[0], sums[1]
    if not math.isfinite(s_neg + s_pos):  # an exponent overflowed
        return -1.0
    if noised.size:
        for j in range(theta.size):
            thn[j] = theta[j] * noised[j]
        sq = ddot(thn.size, thn.ctypes.data, 1, thn.ctypes.data, 1)
    c = math.exp(-half_s2 * sq) / nb
    for i in range(nb):
        Z[0, i] *= y[i]
        Z[1, i] *= y[i]
    _mm(gemm, Z, X, M)
    coef[0] = a0 * gamma * c
    coef[1] = a1 * gamma * c
    _vm(gemv, coef, M, grad)
    shrink = gamma * (alpha - s2 * c * (b0 * s_neg + b1 * s_pos))
    return _project(ddot, theta, thn, noised.size > 0, shrink, grad, r2, radius)


@njit(**_JIT)
def _logistic(blas, theta, X, y, gamma, sq, fp, noised, series, V, AB, grad, thn, cvec, q):
    """``margin.fused_logistic_step``'s operations (``series``: the flat (a, b) matrices
    per order, their offsets, the "auto" grid and its best orders)."""
    gemv, gemm, ddot = blas
    mflat, moff, grid, bests = series
    alpha, r2, radius, sigma2 = fp[0], fp[1], fp[2], fp[9]
    nb = y.size
    S = V[1]
    _mv(gemv, X, theta, S[0])
    for i in range(nb):
        m = S[0, i] * y[i]
        S[0, i] = 1.0 / (1.0 + math.exp(-m))  # scipy's expit of m and of -m
        S[1, i] = 1.0 / (1.0 + math.exp(m))
    if noised.size:
        for j in range(theta.size):
            thn[j] = theta[j] * noised[j]
        sq = ddot(thn.size, thn.ctypes.data, 1, thn.ctypes.data, 1)
    s = sigma2 * sq
    if grid.size == 0 or s != s:  # a fixed order (bisect_left puts NaN first)
        K = bests[0]
    else:
        K = bests[min(np.searchsorted(grid, 0.5 * s), grid.size - 1)]
    c = 1.0
    for k in range(1, K + 1):
        c = c * (-s / 2.0) / k
        cvec[k] = c
    for j in range(2, 2 * K + 2):
        for r in range(2):
            for i in range(nb):
                V[j, r, i] = V[j - 1, r, i] * S[r, i]
    rows = 8 * K + 8
    mat = mflat[moff[K] : moff[K] + rows * (K + 1)].reshape(rows, K + 1)
    qk = q[:rows]
    _mv(gemv, mat, cvec[: K + 1], qk)
    _mm(gemm, qk.reshape(2, rows // 2), V[: 2 * K + 2].reshape(rows // 2, nb), AB)
    shrink = gamma * (alpha - sigma2 * (add_reduce(AB[1]) / nb))
    for i in range(nb):
        AB[0, i] *= y[i]
    _vm(gemv, AB[0], X, grad)
    grad *= gamma / nb
    return _project(ddot, theta, thn, noised.size > 0, shrink, grad, r2, radius)


@njit(**_JIT)
def _run(blas, logistic, theta, X, y, neg_y, steps, b, stop, B, sq, fp, noised, series, book,
         avg_sum, hist, marks):  # fmt: skip
    """Batches ``b`` to ``stop - 1`` (of ``B`` rows) of the fused step, with the running
    average and the recorded iterates of :func:`~privest.learn.iwp_core.sgd_block`
    (``book``: averaging on, tail start, first batch's t, record_every, total, n_avg).
    Stops before a batch whose exponent overflows (the caller takes the clipping path)."""
    p = theta.size
    averaging, tail_start, t0, record_every, total, n_avg = book
    grad, thn, coef, M = np.empty(p), np.empty(p), np.empty(2), np.empty((2, p))
    Z, ones = np.empty((2, B)), np.ones(B)
    k_top = series[3].max()
    V = np.empty((2 * k_top + 2, 2, B))
    V[0] = 1.0
    AB, cvec, q = np.empty((2, B)), np.ones(k_top + 1), np.empty(8 * k_top + 8)
    n_rec = 0
    while b < stop:
        lo = b * B
        Xb, yb = X[lo : lo + B], y[lo : lo + B]
        if logistic:
            sq = _logistic(blas, theta, Xb, yb, steps[b], sq, fp, noised, series, V, AB, grad,
                           thn, cvec, q)  # fmt: skip
        else:
            sq = _exponential(blas, theta, Xb, yb, neg_y[lo : lo + B], steps[b], sq, fp,
                              noised, Z, ones, M, grad, thn, coef)  # fmt: skip
        if sq < 0.0:
            break
        t = t0 + b
        if averaging and t >= tail_start:
            n_avg += 1
            avg_sum += theta
        if (t + 1) % record_every == 0 or t + 1 == total:
            hist[n_rec] = theta
            marks[n_rec] = t + 1
            n_rec += 1
        b += 1
    return b, sq, n_avg, n_rec


def run_batches(spec, theta, X, y, neg_y, steps, b, stop, B, sq, book, avg_sum):
    """Run the compiled pass (see :func:`_run`) from a fused step's ``kernel`` ``spec``;
    returns (next batch, ||theta||^2, n_avg, recorded iterates, their marks)."""
    logistic, fp, noised, series = spec
    t0, record_every = book[2], book[3]
    first = t0 + b  # records at t + 1 = k record_every, t in [first, t0 + stop)
    cap = (t0 + stop) // record_every - first // record_every + 1
    hist, marks = np.empty((cap, theta.size)), np.empty(cap, np.int64)
    out = _run(_BLAS, logistic, theta, X, y, neg_y, steps, b, stop, B, sq, fp, noised, series,
               book, avg_sum, hist, marks)  # fmt: skip
    b, sq, n_avg, n_rec = out
    return b, sq, n_avg, hist[:n_rec], marks[:n_rec]

"""The exact discrete Gaussian for large variances, vectorised in int64 (CKS20 Alg. 1-3).

:func:`discrete_gaussian_wide` draws the law of
:func:`~privest.mechanisms.samplers.bigint.discrete_gaussian_big` (P(k) proportional to
``exp(-k^2 / (2 sigma2))``, Canonne, Kamath and Steinke 2020, Alg. 3) for integer variances
``sigma2 < 2^60`` with numpy, a batch of candidates at a time. The acceptance test of a
candidate Y is Bernoulli(exp(-x)) with the rational ``x = (|Y| t - sigma2)^2 / (2 sigma2
t^2)``, ``t = isqrt(sigma2) + 1``; its denominator outgrows int64, so it is split exactly:

    x = whole + (hi t^2 + lo) / (2 sigma2 t^2),   0 <= hi < 2 sigma2 < 2^61,  0 <= lo < t^2 < 2^61,

(``whole``, ``hi``, ``lo`` computed once per candidate in Python integers) and each
Bernoulli(gamma / K) of Alg. 1 (gamma the fraction) is the product of two independent
draws, Bernoulli(1 / K) (``integers(0, K) == 0``) and Bernoulli(gamma): ``U < hi t^2 + lo``
for ``U = U1 t^2 + U2`` uniform on [0, 2 sigma2 t^2), with U1 uniform on [0, 2 sigma2) and
U2 on [0, t^2) (U2 is drawn only on a tie U1 = hi). Every bound passed to
``Generator.integers`` is below 2^62, so nothing overflows; the discrete Laplace candidates
``U + t V`` (Alg. 2, U < t < 2^31) stay below 2^62 unless V, the number of loop rounds of
its geometric part, reaches 2^31. A candidate with ``whole >= 2^62`` (acceptance below
exp(-2^62)) takes the Python-integer test.
"""

from __future__ import annotations

import math

import numpy as np

from privest.mechanisms.samplers.bigint import Bits

__all__ = ["WIDE_SIGMA2", "discrete_gaussian_wide", "exp_fraction"]

#: the variances (grid units) this sampler accepts: below 2^60 (t < 2^31)
WIDE_SIGMA2 = 2**60
#: Bernoulli(exp(-1)) draws per candidate and round of the geometric part
_GEOMETRIC_BLOCK = 8


def exp_fraction(
    hi: np.ndarray,
    lo: np.ndarray | None,
    den_hi: int,
    den_lo: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Bernoulli(exp(-gamma)), ``gamma = (hi den_lo + lo) / (den_hi den_lo)`` in [0, 1]
    (``lo`` None: 0), CKS20 Alg. 1: K = 1; while Bernoulli(gamma / K): K += 1; return K odd.
    Every entry still looping has the same K, so each round draws with scalar bounds."""
    out = np.empty(hi.size, dtype=bool)
    active = np.arange(hi.size)
    k = 1
    while active.size:
        if den_hi == 1 and den_lo == 1:  # gamma = hi in {0, 1}
            go = hi[active] == 1
        else:
            u1 = rng.integers(0, den_hi, size=active.size)
            go = u1 < hi[active]
            if lo is not None and den_lo > 1:
                tie = np.flatnonzero(u1 == hi[active])
                if tie.size:
                    go[tie] = rng.integers(0, den_lo, size=tie.size) < lo[active[tie]]
        if k > 1:
            go &= rng.integers(0, k, size=active.size) == 0
        out[active[~go]] = k % 2 == 1
        active = active[go]
        k += 1
    return out


def _exp1(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of Bernoulli(exp(-1))."""
    return exp_fraction(np.ones(size, dtype=np.int64), None, 1, 1, rng)


def _exp1_all(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Whether ``counts[i]`` independent Bernoulli(exp(-1)) draws all succeed, for each i."""
    alive = np.ones(counts.size, dtype=bool)
    left = counts.copy()
    while True:
        todo = np.flatnonzero(alive & (left > 0))
        if not todo.size:
            return alive
        take = np.minimum(left[todo], _GEOMETRIC_BLOCK)
        owner = np.repeat(np.arange(todo.size), take)
        failed = np.bincount(owner[~_exp1(owner.size, rng)], minlength=todo.size) > 0
        alive[todo[failed]] = False
        left[todo] -= take


def _geometric_exp1(size: int, rng: np.random.Generator) -> np.ndarray:
    """Successes of Bernoulli(exp(-1)) before the first failure, ``size`` draws; each round
    draws a block of trials per entry still counting."""
    v = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        ok = _exp1(active.size * _GEOMETRIC_BLOCK, rng).reshape(-1, _GEOMETRIC_BLOCK)
        run = np.where(ok.all(axis=1), _GEOMETRIC_BLOCK, np.argmin(ok, axis=1))
        v[active] += run
        active = active[run == _GEOMETRIC_BLOCK]
    return v


def _laplace_magnitudes(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """|Y| of the discrete Laplace(t) candidates among ``size`` proposals (CKS20 Alg. 2: U
    accepted with Bernoulli(exp(-U/t)), X = U + t V, a fair sign, (-, 0) rejected); the
    signs are drawn after the Gaussian test, which reads |Y| only."""
    u = rng.integers(0, t, size=size)
    u = u[exp_fraction(u, None, t, 1, rng)]
    x = u + t * _geometric_exp1(u.size, rng)
    neg = rng.integers(0, 2, size=x.size).astype(bool)
    return x[~(neg & (x == 0))]


def _gaussian_accept(y: np.ndarray, sigma2: int, t: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-(|Y| t - sigma2)^2 / (2 sigma2 t^2))) for magnitudes ``y`` (module
    docstring: the split of the exponent, then Alg. 1)."""
    a = y.astype(object) * t - sigma2
    num, den = a * a, 2 * sigma2 * t * t
    whole, rem = num // den, num % den
    hi, lo = rem // (t * t), rem % (t * t)
    far = np.flatnonzero(whole >= 2**62)
    whole[far] = 0
    ok = exp_fraction(hi.astype(np.int64), lo.astype(np.int64), 2 * sigma2, t * t, rng)
    ok &= _exp1_all(whole.astype(np.int64), rng)
    for i in far:  # probability below exp(-2^62): exact, in Python integers
        ok[i] = Bits(rng, block=8).bernoulli_exp(num[i], den)
    return ok


def discrete_gaussian_wide(sigma2: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws with P(k) proportional to exp(-k^2 / (2 sigma2)), integer
    ``0 < sigma2 < 2^60`` (module docstring). Each round proposes three candidates per draw
    still missing (plus 16) and keeps the accepted ones in order: the first ``size`` accepted
    of an i.i.d. sequence are i.i.d."""
    if not 0 < sigma2 < WIDE_SIGMA2:
        raise ValueError("discrete_gaussian_wide needs 0 < sigma2 < 2^60")
    t = math.isqrt(sigma2) + 1
    out: list[np.ndarray] = []
    need = size
    while need > 0:
        y = _laplace_magnitudes(t, 3 * need + 16, rng)
        y = y[_gaussian_accept(y, sigma2, t, rng)][:need]
        neg = rng.integers(0, 2, size=y.size).astype(bool)
        out.append(np.where(neg, -y, y))
        need -= y.size
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

"""The piecewise densities of paper 002's PLM and INV (Sec. 3.2 and 4.2), in general form.

The piecewise Laplace mechanism (PLM) and the continuous inverse sensitivity mechanism (INV)
draw a piece by exponential weights, then a point inside it (a truncated exponential for
PLM, a uniform for INV). :class:`PiecewiseDensity` is that two-step law: a list of
*segments*, each a sub-interval ``[z0, z1]`` of the offsets of one piece, so that the output
is ``y = inner + side * z``; its log-density is ``-eps * level / 2 - rate * z`` (``rate = 0``
for a uniform law) up to the normaliser. Everything is computed in log space. The exact
error functionals are derived in docs/piecewise-laplace.md, "Exact error laws".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.errors import ValidationError
from privest.rng import resolve_rng
from privest.validation import check_probabilities

__all__ = ["PiecewiseDensity", "abs_error_quantile", "log_k", "texp_moments"]


def _m1(c: np.ndarray) -> np.ndarray:
    """Mean of TExp on [0, 1] with rate c: 1/c - 1/(e^c - 1), stable for small c."""
    c = np.asarray(c, dtype=float)
    small = c < 1e-4
    safe = np.where(small, 1.0, c)
    with np.errstate(over="ignore"):
        exact = 1.0 / safe - 1.0 / np.expm1(safe)
    return np.where(small, 0.5 - c / 12.0, exact)


def _m2(c: np.ndarray) -> np.ndarray:
    """Second moment of TExp on [0, 1] with rate c, stable for small c."""
    c = np.asarray(c, dtype=float)
    small = c < 1e-3
    safe = np.where(small, 1.0, c)
    with np.errstate(over="ignore"):
        # (2 - (c^2 + 2c + 2) e^-c) / (c^2 (1 - e^-c))
        exact = (2.0 - (safe**2 + 2 * safe + 2) * np.exp(-safe)) / (safe**2 * -np.expm1(-safe))
    return np.where(small, 1.0 / 3.0 - c / 12.0 + c**2 / 180.0, exact)


def texp_moments(epsilon: float) -> tuple[float, float]:
    """(m1, m2): a PLM piece of length Delta has E z = Delta m1, E z^2 = Delta^2 m2.

    docs/piecewise-laplace.md, "Exact error laws" (not in paper 002).
    """
    c = epsilon / 2.0
    return float(_m1(c)), float(_m2(c))


@dataclass
class PiecewiseDensity:
    """A density made of segments of pieces (module docstring).

    Arrays, one entry per segment, sorted left to right and contiguous:
    ``left``, ``right`` (positions), ``inner`` (the piece's inner endpoint), ``side``
    (+1 if the piece lies right of its inner endpoint, -1 if left), ``z0``, ``z1``
    (offsets of the segment inside the piece), ``level`` (log-density offset
    ``-eps*level/2`` at ``z = 0``) and ``rate`` (decay per unit offset; 0 = uniform).
    ``center`` is the statistic's value, from which errors are measured.
    """

    left: np.ndarray
    right: np.ndarray
    inner: np.ndarray
    side: np.ndarray
    z0: np.ndarray
    z1: np.ndarray
    level: np.ndarray
    rate: np.ndarray
    epsilon: float
    center: float

    def __post_init__(self) -> None:
        from scipy.special import logsumexp

        width = self.z1 - self.z0
        keep = width > 0
        if not keep.all():
            for name in ("left", "right", "inner", "side", "z0", "z1", "level", "rate"):
                setattr(self, name, getattr(self, name)[keep])
            width = width[keep]
        if width.size == 0:
            raise ValidationError("the output distribution has no piece of positive length")
        self.width = width
        rw = self.rate * width
        # log of the unnormalised mass: e^{-eps l/2 - rate z0} (1 - e^{-rate w}) / rate
        with np.errstate(divide="ignore", invalid="ignore"):
            texp = -self.rate * self.z0 + np.log(-np.expm1(-rw)) - np.log(self.rate)
        uniform = np.log(width)
        self.log_mass = -0.5 * self.epsilon * self.level + np.where(self.rate > 0, texp, uniform)
        self.log_norm = float(logsumexp(self.log_mass))
        self.prob = np.exp(self.log_mass - self.log_norm)
        self.cum = np.concatenate([[0.0], np.cumsum(self.prob)])
        self.cum /= self.cum[-1]
        self.lo = float(self.left[0])
        self.hi = float(self.right[-1])

    # -- density, CDF -------------------------------------------------------------------
    def _locate(self, y: np.ndarray) -> np.ndarray:
        j = np.searchsorted(self.left, y, side="right") - 1
        return np.clip(j, 0, self.left.size - 1)

    def _offset(self, y: np.ndarray, j: np.ndarray) -> np.ndarray:
        z = self.side[j] * (y - self.inner[j])
        return np.clip(z, self.z0[j], self.z1[j])

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        j = self._locate(y)
        z = self._offset(y, j)
        out = -0.5 * self.epsilon * self.level[j] - self.rate[j] * z - self.log_norm
        return np.where((y >= self.lo) & (y <= self.hi), out, -np.inf)

    def _fraction_from_inner(self, z: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Mass of segment j between its offset z0 and z, as a fraction of the segment."""
        r, w = self.rate[j], self.width[j]
        t = z - self.z0[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            texp = np.expm1(-r * t) / np.expm1(-r * w)
            return np.clip(np.where(r > 0, texp, t / w), 0.0, 1.0)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        j = self._locate(y)
        frac = self._fraction_from_inner(self._offset(y, j), j)
        frac = np.where(self.side[j] > 0, frac, 1.0 - frac)
        out = self.cum[j] + self.prob[j] * frac
        return np.clip(np.where(y < self.lo, 0.0, np.where(y >= self.hi, 1.0, out)), 0.0, 1.0)

    # -- sampling -----------------------------------------------------------------------
    def sample_pieces(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Segment indices drawn with probabilities ``prob`` (inverse CDF on ``cum``)."""
        u = rng.random(size)
        j = np.searchsorted(self.cum, u, side="right") - 1
        return np.clip(j, 0, self.prob.size - 1)

    def sample(self, size: int | tuple[int, ...] | None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        m = int(np.prod(shape)) if shape else 1
        j = self.sample_pieces(m, gen)
        u = gen.random(m)
        r, w = self.rate[j], self.width[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            t_exp = -np.log1p(u * np.expm1(-r * w)) / r  # inverse CDF of TExp (Alg. 1, step 2)
        t = np.where(r > 0, t_exp, u * np.where(np.isfinite(w), w, 0.0))
        z = np.clip(self.z0[j] + t, self.z0[j], self.z1[j])
        y = np.clip(self.inner[j] + self.side[j] * z, self.left[j], self.right[j])
        return float(y[0]) if size is None else y.reshape(shape)

    # -- exact error functionals (docs/piecewise-laplace.md, "Exact error laws") ---------
    def _err_offsets(self) -> np.ndarray:
        """Distance from the centre to each segment's z = 0 point (|err| = o + z)."""
        return np.abs(self.inner - self.center)

    def _moments(self) -> tuple[np.ndarray, np.ndarray]:
        """E[t] and E[t^2] of the offset t = z - z0 inside each segment."""
        finite = np.isfinite(self.width)
        w = np.where(finite, self.width, 0.0)
        c = self.rate * w
        m1 = np.where(self.rate > 0, _m1(c), 0.5)
        m2 = np.where(self.rate > 0, _m2(c), 1.0 / 3.0)
        with np.errstate(divide="ignore"):
            inv = 1.0 / self.rate  # an unbounded tail is a plain exponential
        e1 = np.where(finite, w * m1, inv)
        e2 = np.where(finite, w**2 * m2, 2.0 * inv**2)
        return e1, e2

    def error_mean_abs(self) -> float:
        """E|M(x) - f(x)|, exactly."""
        o = self._err_offsets() + self.z0
        e1, _ = self._moments()
        return float(np.sum(self.prob * (o + e1)))

    def error_mse(self) -> float:
        """E (M(x) - f(x))^2, exactly."""
        o = self._err_offsets() + self.z0
        e1, e2 = self._moments()
        return float(np.sum(self.prob * (o**2 + 2 * o * e1 + e2)))

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|M(x) - f(x)| <= alpha) at each alpha, exactly."""
        a = np.asarray(alpha, dtype=float)
        o = self._err_offsets() + self.z0
        j = np.arange(self.prob.size)
        t = np.clip(a[..., None] - o, 0.0, self.width)
        frac = self._fraction_from_inner(self.z0 + t, j)
        return np.clip(np.sum(self.prob * frac, axis=-1), 0.0, 1.0)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """The p-quantiles of |M(x) - f(x)|, exactly (bisection on the closed-form CDF)."""
        o = self._err_offsets() + self.z0
        return abs_error_quantile(p, self.prob, o, self.width, self.rate, self.side)

    def breakpoints(self) -> np.ndarray:
        """Segment boundaries (where the log-density may kink or jump)."""
        return np.unique(np.concatenate([self.left, self.right]))


def abs_error_quantile(
    p: ArrayLike,
    prob: np.ndarray,
    offset: np.ndarray,
    width: np.ndarray,
    rate: np.ndarray,
    side: np.ndarray,
) -> np.ndarray:
    """Quantiles ``inf{a : P(|err| <= a) >= p}`` of a mixture of segments.

    Segment i has probability ``prob[i]`` and error ``offset[i] + t`` with t in
    ``[0, width[i]]`` of density proportional to ``exp(-rate[i] t)`` (0: uniform; an
    infinite width needs rate > 0). Segments on one ``side`` of f(x) are disjoint, so the
    CDF at a is a cumulative sum up to the segment holding a plus its part. The quantile
    lies below the end of the first segment, on either side, at which that side alone
    reaches p; only the segments before that bound enter the root search (Brent's method
    on the exact CDF, relative tolerance 1e-12).
    """
    from scipy import optimize

    q = check_probabilities(p)
    groups = []
    for sgn in (-1.0, 1.0):
        sel = side == sgn
        if sel.any():
            order = np.argsort(offset[sel], kind="stable")
            pr = prob[sel][order]
            after = np.cumsum(pr)
            groups.append(
                (offset[sel][order], width[sel][order], rate[sel][order], pr, after - pr, after)
            )
    ends = offset + width
    top = float(ends.max())
    out = np.empty(q.size)
    for i, target in enumerate(q.ravel()):
        bound = top
        for o, w, _, _, _, after in groups:
            j = int(np.searchsorted(after, target, side="left"))
            if j < o.size:
                bound = min(bound, float(o[j] + w[j]))
        if target <= 0:
            out[i] = 0.0
            continue
        finite = math.isfinite(bound)
        parts = []
        for o, w, r, pr, before, _ in groups:
            k = int(np.searchsorted(o, bound, side="right")) if finite else o.size
            parts.append((o[:k], w[:k], r[:k], pr[:k], before[:k]))

        def excess(a: float, parts: list = parts, target: float = target) -> float:
            total = 0.0
            for o, w, r, pr, before in parts:
                j = int(np.searchsorted(o, a, side="right")) - 1
                if j < 0:
                    continue
                t = min(max(a - o[j], 0.0), w[j])
                if r[j] > 0:
                    frac = math.expm1(-r[j] * t) / math.expm1(-r[j] * w[j])
                else:
                    frac = t / w[j]
                total += before[j] + pr[j] * min(max(frac, 0.0), 1.0)
            return total - target

        if not finite and target >= 1:
            out[i] = math.inf
            continue
        if not finite:  # an unbounded tail holds the quantile: double a finite bracket
            bound = max(float(ends[np.isfinite(ends)].max(initial=0.0)), 1e-300)
            while excess(bound) < 0 and math.isfinite(bound):
                bound *= 2.0
        if excess(bound) < 0:  # p beyond the total mass by rounding
            out[i] = bound
        elif excess(0.0) >= 0:
            out[i] = 0.0
        else:
            out[i] = optimize.brentq(excess, 0.0, bound, xtol=1e-300, rtol=1e-12)
    return out.reshape(q.shape)


def log_k(epsilon: float) -> float:
    """log K with K = (2/eps)(1 - e^{-eps/2}), the normaliser's factor that Algorithm 1 of
    paper 002 leaves out (docs/piecewise-laplace.md, "Exact error laws")."""
    return math.log(2.0 / epsilon) + math.log(-math.expm1(-epsilon / 2.0))

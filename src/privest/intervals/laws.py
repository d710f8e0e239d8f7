"""The error law of a private estimate: sampling error plus the exact privacy noise
(docs/central-inference.md, "How the intervals are built").

A released mean, sum or variance is ``theta + S + E``: ``S`` the sampling error, normal by
the central limit theorem with a variance that is itself estimated privately (a nuisance),
``E`` the privacy noise, whose law is public (Laplace on a lattice for the data-independent
mechanisms; its grid step is 2^-20 of the scale, so the continuous Laplace law is used).

* :func:`error_cdf`: P(S + E <= d) for ``S ~ N(0, sd^2)`` and ``E`` a sum of at most two
  independent Laplace terms, exactly (the normal-Laplace law, Reed 2006) or by Gauss-Laguerre
  quadrature over the smaller Laplace term;
* the nuisance (the spread behind ``sd``) is integrated over its fiducial law: the released
  estimate of the spread minus draws of its own (public) noise law, at the quantile nodes
  :func:`laplace_nodes` (a flat-prior posterior for a location parameter; Ferrando, Wang and
  Sheldon, AISTATS 2022, simulate the released statistic's law in the same spirit);
* :func:`invert`: the interval as the set of ``theta`` an equal-tailed test accepts, with the
  sampling variance evaluated at the candidate ``theta`` (a score interval, as Wilson's for a
  proportion) and the tails moved where the release is clamped into its public range (one
  tail cannot reject there; the other gets all of alpha, so coverage stays 1 - alpha rather
  than 1 - alpha / 2 near a bound);
* :func:`pvalue`: the same law's tail probability of the observed estimate under a null.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = [
    "error_cdf",
    "clamped_cdf",
    "clamped_diff_tails",
    "invert",
    "laplace_nodes",
    "mixture_cdf",
    "normal_laplace_cdf",
    "pvalue",
]

#: Gauss-Laguerre nodes for the second Laplace term (exact for polynomials of degree 63)
_LAGUERRE = np.polynomial.laguerre.laggauss(32)


def normal_laplace_cdf(x: np.ndarray, sd: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(Z + L <= x), ``Z ~ N(0, sd^2)``, ``L ~ Laplace(b)``; either may be 0 (broadcast).

    ``F = Phi(x/s) - (e^{s^2/2b^2 - x/b} Phi(x/s - s/b) - e^{s^2/2b^2 + x/b} Phi(-x/s - s/b))/2``
    (the normal-Laplace law, Reed 2006), in logs so that large ``s / b`` does not overflow.
    """
    from scipy import special

    x, sd, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (x, sd, b)))
    out = np.empty(x.shape)
    only_normal = b <= 0
    only_laplace = (sd <= 0) & ~only_normal
    both = ~(only_normal | only_laplace)
    if only_normal.any():
        xx, s = x[only_normal], sd[only_normal]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(s > 0, xx / s, np.where(xx >= 0, np.inf, -np.inf))
        out[only_normal] = special.ndtr(z)
    if only_laplace.any():
        z = x[only_laplace] / b[only_laplace]
        out[only_laplace] = np.where(z < 0, 0.5 * np.exp(-np.abs(z)), 1 - 0.5 * np.exp(-np.abs(z)))
    if both.any():
        xx, s, bb = x[both], sd[both], b[both]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # infinite ratios
            a, z = s / bb, xx / s
            t = xx / bb
            left, right = _log_tail(a, -z, -t), _log_tail(a, z, t)
        out[both] = special.ndtr(z) - 0.5 * np.exp(left) + 0.5 * np.exp(right)
    return np.clip(out, 0.0, 1.0)


def _log_tail(a: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """log(Phi(-u) e^{a^2 / 2 + t}), u = a + w: the two terms above (a = s/b, w = -+ x/s,
    t = -+ x/b = a w; the exponent equals (u^2 - w^2) / 2). Where
    u > 0 by the scaled complementary error function, log(erfcx(u / sqrt 2) / 2) - w^2 / 2,
    so that a tiny Laplace scale against the normal's (s/b ~ 1e13) neither overflows nor
    cancels; directly where u <= 0 (then the exponent is <= 0)."""
    from scipy import special

    u = a + w
    pos = np.maximum(u, 0.0)
    scaled = np.log(0.5 * special.erfcx(pos / math.sqrt(2.0))) - 0.5 * w * w
    direct = special.log_ndtr(-np.minimum(u, 0.0)) + 0.5 * a * a + t
    return np.where(u > 0, scaled, direct)


def error_cdf(x: np.ndarray, sd: np.ndarray, scales: tuple[np.ndarray, ...]) -> np.ndarray:
    """P(Z + L_1 + ... <= x): ``Z ~ N(0, sd^2)`` and independent ``L_i ~ Laplace(scales[i])``
    (zero, one or two terms; broadcast). Two terms: Gauss-Laguerre over the smaller scale, so
    the integrand varies on the larger scale and the quadrature converges."""
    if len(scales) == 0:
        return normal_laplace_cdf(x, sd, 0.0)
    if len(scales) == 1:
        return normal_laplace_cdf(x, sd, scales[0])
    if len(scales) != 2:
        raise ValueError("error_cdf: at most two Laplace terms")
    b1, b2 = (np.asarray(s, dtype=float) for s in scales)
    small, big = np.minimum(b1, b2), np.maximum(b1, b2)
    u, w = _LAGUERRE
    shape = (*np.broadcast_shapes(np.shape(x), np.shape(sd), small.shape), 1)
    xs = np.broadcast_to(np.asarray(x, dtype=float)[..., None], shape)
    step = small[..., None] * u
    up = normal_laplace_cdf(xs - step, np.asarray(sd)[..., None], big[..., None])
    down = normal_laplace_cdf(xs + step, np.asarray(sd)[..., None], big[..., None])
    return np.clip(0.5 * np.sum(w * (up + down), axis=-1), 0.0, 1.0)


def laplace_nodes(scale: float | np.ndarray, k: int = 16) -> np.ndarray:
    """The ``k`` midpoint quantiles of Laplace(``scale``) (last axis): equal-weight nodes of
    the fiducial law of a quantity released with that noise."""
    u = (np.arange(k) + 0.5) / k
    z = -np.sign(u - 0.5) * np.log1p(-2 * np.abs(u - 0.5))
    return np.asarray(scale, dtype=float)[..., None] * z


#: ``sd_at(theta) -> (..., K)`` sampling standard deviations at the candidate ``theta``
SdAt = Callable[[np.ndarray], np.ndarray]


def mixture_cdf(d: np.ndarray, sd: np.ndarray, scales: tuple[np.ndarray, ...]) -> np.ndarray:
    """The nuisance-mixture CDF: the mean over the K nodes (last axis of ``sd``)."""
    sc = tuple(np.asarray(s, dtype=float)[..., None] for s in scales)
    return np.mean(error_cdf(np.asarray(d)[..., None], sd, sc), axis=-1)


def _accepts(est, theta, sd_at, scales, lo, hi, alpha) -> np.ndarray:
    """Whether the clamp-aware equal-tailed test of ``theta`` accepts the release ``est``."""
    sd = sd_at(theta)
    f = mixture_cdf(est - theta, sd, scales)
    le = np.where(est >= hi, 1.0, f)  # P(M <= est); the clamped atom at hi is all of it
    ge = np.where(est <= lo, 1.0, 1.0 - f)
    low_free = mixture_cdf(lo - theta, sd, scales) > alpha / 2  # the lower tail cannot reject
    high_free = 1.0 - mixture_cdf(hi - theta, sd, scales) > alpha / 2
    a_low = np.where(high_free, alpha, alpha / 2)
    a_high = np.where(low_free, alpha, alpha / 2)
    return (low_free | (le > a_low)) & (high_free | (ge > a_high))


def invert(
    est: np.ndarray,
    sd_at: SdAt,
    scales: tuple[np.ndarray, ...],
    lo: float,
    hi: float,
    alpha: float,
    iterations: int = 44,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``theta`` in ``[lo, hi]`` that the test accepts (module docstring), found by
    bisection from the estimate outwards (vectorised over releases)."""
    est = np.asarray(est, dtype=float)
    ends = []
    for bound in (lo, hi):
        inner = est.copy()
        outer = np.full(est.shape, float(bound))
        whole = _accepts(est, outer, sd_at, scales, lo, hi, alpha)
        for _ in range(iterations):
            mid = 0.5 * (inner + outer)
            ok = _accepts(est, mid, sd_at, scales, lo, hi, alpha)
            inner, outer = np.where(ok, mid, inner), np.where(ok, outer, mid)
        ends.append(np.where(whole, float(bound), inner))
    return ends[0], ends[1]


def pvalue(
    est: np.ndarray,
    theta: np.ndarray,
    sd_at: SdAt,
    scales: tuple[np.ndarray, ...],
    alternative: str = "two-sided",
) -> np.ndarray:
    """P-value of the null ``theta`` for the release ``est`` under the error law at
    ``theta``: ``P(M >= est)`` (``"larger"``), ``P(M <= est)`` (``"smaller"``) or twice the
    smaller of the two (``"two-sided"``, at most 1)."""
    f = mixture_cdf(np.asarray(est) - theta, sd_at(np.asarray(theta, dtype=float)), scales)
    if alternative == "larger":
        return 1.0 - f
    if alternative == "smaller":
        return f
    return np.minimum(1.0, 2.0 * np.minimum(f, 1.0 - f))


#: cells of the quadrature over the second release's continuous part (clamped_diff_tails)
DIFF_CELLS = 256
#: half-width of that quadrature's window, in node sds and Laplace scales of the second
#: release (the law's mass beyond it is below 10^-13)
_WINDOW_SD, _WINDOW_SCALE = 8.0, 30.0


def clamped_cdf(m, theta, sd, scale, lo, hi, left: bool = False) -> np.ndarray:
    """``P(M <= m)`` (``P(M < m)`` with ``left``) of a release ``M = clip(theta + S + E, lo,
    hi)``: ``S`` normal with the nuisance nodes' sds ``sd`` (last axis), ``E`` Laplace of
    ``scale``. The law has an atom at each bound (docs/central-inference.md, "Tests")."""
    m = np.asarray(m, dtype=float)
    g = mixture_cdf(m - np.asarray(theta, dtype=float), sd, (scale,))
    if left:
        return np.where(m <= lo, 0.0, np.where(m > hi, 1.0, g))
    return np.where(m < lo, 0.0, np.where(m >= hi, 1.0, g))


def clamped_diff_tails(d, x: tuple, y: tuple, cells: int = DIFF_CELLS) -> tuple:
    """``(P(D <= d), P(D >= d))`` for ``D = M_x - M_y``, the difference of two independent
    clamped releases; ``x`` and ``y`` are ``(theta, sd, scale, lo, hi)`` as in
    :func:`clamped_cdf` (theta and sd batched like ``d``).

    ``P(D <= d) = E[F_x(d + M_y)]`` over ``M_y``'s law: its two atoms exactly, its
    continuous part on ``(lo_y, hi_y)`` by a Stieltjes midpoint sum over ``cells`` cells of
    the window where ``F_x(d + m)`` is neither 0 nor 1 (``m`` in ``[lo_x - d, hi_x - d]``,
    within 8 sds and 30 scales of ``theta_y``), plus ``M_y``'s mass where ``F_x`` is 1.
    ``P(D < d)`` is the same with ``F_x``'s left limit (they differ at ``D``'s atoms)."""
    tx, sdx, bx, lox, hix = x
    ty, sdy, by, loy, hiy = y
    d = np.asarray(d, dtype=float)
    ty = np.asarray(ty, dtype=float)

    def gy(m):
        return mixture_cdf(m - ty[..., None], sdy[..., None, :], (by,))

    width = _WINDOW_SD * np.max(sdy, axis=-1) + _WINDOW_SCALE * by
    a = np.clip(lox - d, loy, hiy)
    b = np.clip(hix - d, loy, hiy)
    a = np.maximum(a, ty - width)
    b = np.maximum(np.minimum(b, ty + width), a)
    edges = a[..., None] + (b - a)[..., None] * np.linspace(0.0, 1.0, cells + 1)
    mass = np.diff(gy(edges), axis=-1)
    mid = 0.5 * (edges[..., 1:] + edges[..., :-1])
    fx = mixture_cdf(
        d[..., None] + mid - np.asarray(tx, dtype=float)[..., None], sdx[..., None, :], (bx,)
    )
    inside = np.sum(fx * mass, axis=-1)
    ends = gy(
        np.stack(
            [
                np.clip(hix - d, loy, hiy),
                np.full(d.shape, float(hiy)),
                np.full(d.shape, float(loy)),
            ],
            axis=-1,
        )
    )
    ones = np.maximum(ends[..., 1] - ends[..., 0], 0.0)  # F_x(d + m) = 1 there
    atom_lo, atom_hi = ends[..., 2], 1.0 - ends[..., 1]
    out = []
    for left in (False, True):
        at = [clamped_cdf(d + edge, tx, sdx, bx, lox, hix, left) for edge in (loy, hiy)]
        out.append(atom_lo * at[0] + atom_hi * at[1] + inside + ones)
    below, strictly_below = out
    return np.clip(below, 0.0, 1.0), np.clip(1.0 - strictly_below, 0.0, 1.0)

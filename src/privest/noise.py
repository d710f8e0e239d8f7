"""Symmetric multivariate Laplace (SL) and zero-inflated SL (ZIL) noise.

Paper 000, Section 3.1. ``SL_d(Sigma)`` is the law of ``sqrt(W) Sigma^{1/2} G`` with one
``W ~ Exp(1)`` per vector shared by all coordinates and ``G ~ N(0, I_d)``; its
characteristic function is ``1 / (1 + t' Sigma t / 2)``. ``ZIL(delta, Sigma)`` is SL
noise replaced by the zero vector with probability ``delta`` (one draw per record).
Only isotropic ``Sigma = lam^2 I`` is used by the mechanism, as in the paper.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sample_sl", "sample_zil", "sl_logpdf", "sl_scales", "zil_scales"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def sl_scales(n: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """The ``n`` per-vector factors ``scale * sqrt(W)``, ``W ~ Exp(1)``, of SL_d(scale^2 I)
    draws (each multiplies a vector ``G ~ N(0, I_d)``, drawn before it)."""
    out = np.sqrt(rng.standard_exponential(n))
    out *= scale
    return out


def zil_scales(n: int, scale: float, zero_prob: float, rng: np.random.Generator) -> np.ndarray:
    """The ``n`` per-record factors of ZIL(zero_prob, scale^2 I) draws: 0 with probability
    ``zero_prob`` (one Bernoulli draw per record), else ``scale * sqrt(W)``; each multiplies
    a vector ``G ~ N(0, I_d)`` drawn after it (Algorithm 1, step 1)."""
    noised = rng.random(n) >= zero_prob
    out = np.sqrt(rng.standard_exponential(n))
    out *= scale
    out *= noised
    return out


def sample_sl(n: int, d: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of SL_d(scale^2 I): each row is ``scale * sqrt(W) * G`` (one W per row)."""
    out = rng.standard_normal((n, d))
    out *= sl_scales(n, scale, rng)[:, None]
    return out


def sample_zil(
    n: int, d: int, scale: float, zero_prob: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws of ZIL(zero_prob, scale^2 I) and the boolean mask of the zero (unnoised) rows.

    One Bernoulli draw per record decides whether the whole vector is zero
    (Algorithm 1, step 1), and one ``W ~ Exp(1)`` per record is shared by its coordinates.
    """
    mult = zil_scales(n, scale, zero_prob, rng)
    out = rng.standard_normal((n, d))
    out *= mult[:, None]
    return out, mult == 0.0


def sl_logpdf(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Log-density of SL_d(scale^2 I) at the rows of ``x`` (shape ``(n, d)``).

    f(x) = 2 (2 pi)^{-d/2} |Sigma|^{-1/2} (q/2)^{v/2} K_v(sqrt(2q)), q = x' Sigma^{-1} x,
    v = (2 - d)/2 (Kotz, Kozubowski and Podgorski). Uses ``log K_v(z) = log kve(v, z) - z``.
    The density is infinite at 0 for d >= 2.
    """
    from scipy import special

    x = np.atleast_2d(np.asarray(x, dtype=float))
    d = x.shape[1]
    v = (2.0 - d) / 2.0
    q = np.einsum("ij,ij->i", x, x) / scale**2
    z = np.sqrt(2.0 * q)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_k = np.log(special.kve(v, z)) - z
        out = np.log(2.0) - 0.5 * d * _LOG_2PI - d * np.log(scale) + 0.5 * v * np.log(q / 2.0)
        out = out + log_k
    if d == 1:  # (q/2)^{1/4} K_{1/2}(z) is finite at 0: use the Laplace density there
        b = scale / np.sqrt(2.0)
        out = np.where(q == 0, -np.log(2.0 * b), out)
    else:
        out = np.where(q == 0, np.inf, out)
    return out

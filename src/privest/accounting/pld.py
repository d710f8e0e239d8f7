"""Privacy-loss distributions: tight composition of privacy events (docs/budget.md,
"Accountants").

A mechanism's worst pair of output laws (P, Q) on neighbouring data sets is described by
the law of its privacy loss ``L = log(dQ/dP)(o)``, ``o ~ Q``, with an atom at ``+inf``
where Q puts mass that P lacks. Every pair privest composes is symmetric (T(P, Q) =
T(Q, P)), and its privacy profile is

    delta(eps) = P(L = inf) + E[(1 - e^(eps - L))_+]

(Sommer, Meiser and Mohammadi 2019, Thm 1). The loss of a composition is the sum of
independent losses, so the privacy-loss distribution (PLD) of k mechanisms is the
convolution of theirs: the tensor product of their trade-off curves (Dong, Roth and Su
2022, Thm 3.2; Koskela, Jalko and Honkela 2020 compose it by FFT, as here).

Pessimistic discretisation. Every step below replaces L by a pointwise larger loss, and
``l -> (1 - e^(eps - l))_+`` is nondecreasing, so no step can lower delta(eps) (hence none
can lower the epsilon reported at a delta):

* a finite loss is rounded **up** to the grid ``j * grid`` (l in ((j-1) grid, j grid] goes
  to j grid);
* a loss above ``LOSS_MAX`` goes to ``+inf``; a loss below ``-LOSS_MAX`` is moved up to it;
* the floating-point error of the masses is bounded and the bound added to delta: each
  bucket's mass is a difference of the distribution function or of the survival function,
  whichever is below 1/2 (relative error a few units of round-off u each); an FFT
  convolution's error is below 5 u log2(n) in the 2-norm (Higham 2002, Thm 24.2), here
  doubled, and the errors propagate through convolutions in the 1-norm (Young's
  inequality), which bounds their effect on delta.

The price: after k composed events the loss is over-stated by less than ``k * grid``, so
the reported epsilon exceeds the tight one by less than ``k * grid``; delta is over-stated
by at most k (e^(eps - LOSS_MAX) + e^(-LOSS_MAX)) (the clamps; E_Q[e^-L] <= 1 bounds the
mass below -LOSS_MAX) plus the round-off bound (below 1e-10 at the sizes used).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["LOSS_MAX", "PLD", "pld_from_atoms", "pld_from_law"]

#: losses are kept in [-LOSS_MAX, LOSS_MAX]; beyond, +inf (above) or -LOSS_MAX (below)
LOSS_MAX = 64.0
_U = 2.0**-53


def _fft_error(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """A bound on ||fl(a * b) - a * b||_2 for an FFT convolution of length ``c.size``."""
    kappa = 10.0 * _U * math.log2(max(c.size, 2))
    norms = float(np.linalg.norm(a) + np.linalg.norm(b) + np.linalg.norm(c))
    return 2.0 * kappa * norms


@dataclass(frozen=True)
class PLD:
    """A discretised privacy-loss distribution: mass ``pmf[i]`` at loss ``(start + i) *
    grid``, ``inf_mass`` at ``+inf``, and ``error``, a bound on the 1-norm of the
    floating-point error of ``pmf`` (module docstring)."""

    grid: float
    start: int
    pmf: np.ndarray
    inf_mass: float
    error: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        return (self.start + np.arange(self.pmf.size)) * self.grid

    def compose(self, other: PLD) -> PLD:
        """The PLD of the two mechanisms run one after the other (the convolution)."""
        if other.grid != self.grid:
            raise ValueError("PLD.compose: the two PLDs have different grids")
        a, b = self.pmf, other.pmf
        if min(a.size, b.size) <= 64:
            pmf = np.convolve(a, b)  # direct: sums of non-negative products
            fft = min(a.size, b.size) * _U * float(pmf.sum())
        else:
            from scipy import signal  # only here: it costs a second of imports

            pmf = np.maximum(signal.fftconvolve(a, b), 0.0)
            fft = math.sqrt(pmf.size) * _fft_error(a, b, pmf)  # 2-norm to 1-norm
        error = self.error * b.sum() + other.error * a.sum() + self.error * other.error + fft
        inf = self.inf_mass + other.inf_mass - self.inf_mass * other.inf_mass
        return _clamped(self.grid, self.start + other.start, pmf, inf, error)

    def self_compose(self, k: int) -> PLD:
        """The PLD of ``k`` runs of this mechanism (binary powers)."""
        if k < 1:
            raise ValueError(f"PLD.self_compose: k={k} must be >= 1")
        out, base = None, self
        while k:
            if k & 1:
                out = base if out is None else out.compose(base)
            k >>= 1
            if k:
                base = base.compose(base)
        return out

    def delta(self, epsilon: float) -> float:
        """delta(epsilon), never below the true profile of the pair this PLD discretises."""
        eps = float(epsilon)
        loss = self.losses
        above = loss > eps
        hinge = -np.expm1(eps - loss[above])
        total = float(np.sum(self.pmf[above] * hinge))  # pairwise sum: relative error < n u
        return min(1.0, self.inf_mass + total * (1 + self.pmf.size * _U) + self.error)

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon >= 0 with ``self.delta(epsilon) <= delta`` (inf if none).

        On [g_{k-1}, g_k], between consecutive points of 0 and the positive grid losses, the
        profile is ``inf + A - e^eps B``, with A and B the sums of p and p e^-l over the
        losses above g_{k-1}: solved there in closed form.
        """
        base = self.inf_mass + self.error
        if base > delta:
            return math.inf
        delta = base + (delta - base) / (1 + self.pmf.size * _U)  # the sums' round-off
        keep = self.losses > 0
        points = np.append(0.0, self.losses[keep])
        p = self.pmf[keep]
        above_p = np.append(np.cumsum(p[::-1])[::-1], 0.0)  # mass above each point
        above_w = np.append(np.cumsum((p * np.exp(-points[1:]))[::-1])[::-1], 0.0)
        at_points = base + above_p - np.exp(points) * above_w
        k = int(np.argmax(at_points <= delta))  # the last point is base <= delta
        if k == 0:
            return 0.0
        lo, hi = float(points[k - 1]), float(points[k])
        if above_w[k - 1] <= 0:
            return hi
        eps = math.log((base + float(above_p[k - 1]) - delta) / float(above_w[k - 1]))
        return min(max(eps, lo), hi)


def _clamped(grid: float, start: int, pmf: np.ndarray, inf: float, error: float) -> PLD:
    """Apply the clamps at +-LOSS_MAX (module docstring) and drop zero ends."""
    top = int(math.floor(LOSS_MAX / grid))
    stop = start + pmf.size  # one past the last index's loss
    if start < -top:  # move the mass below -top up to it
        cut = min(pmf.size, -top - start)
        low = float(pmf[:cut].sum())
        pmf = pmf[cut:] if cut < pmf.size else np.zeros(1)
        pmf = pmf.copy()
        pmf[0] += low
        start = -top
    if stop - 1 > top:  # mass above top goes to +inf
        keep = max(0, top - start + 1)
        inf += float(pmf[keep:].sum())
        pmf = pmf[:keep] if keep else np.zeros(1)
    nz = np.flatnonzero(pmf)
    if nz.size == 0:
        return PLD(grid, 0, np.zeros(1), min(1.0, inf), error)
    return PLD(grid, start + int(nz[0]), pmf[nz[0] : nz[-1] + 1], min(1.0, inf), error)


def _up(losses: np.ndarray, grid: float) -> np.ndarray:
    """Grid indices j with j * grid >= l, the least such (up to the last bit)."""
    j = np.ceil(losses / grid)
    return (j + (j * grid < losses)).astype(np.int64)


def pld_from_atoms(losses: np.ndarray, masses: np.ndarray, inf_mass: float, grid: float) -> PLD:
    """The PLD of a discrete loss: ``masses`` at ``losses`` (finite), ``inf_mass`` at +inf."""
    losses, masses = np.asarray(losses, float), np.asarray(masses, float)
    top = int(math.floor(LOSS_MAX / grid))
    j = _up(losses, grid)
    inf = inf_mass + float(masses[j > top].sum())
    j, m = np.maximum(j[j <= top], -top), masses[j <= top]
    if j.size == 0:
        return PLD(grid, 0, np.zeros(1), min(1.0, inf))
    start = int(j.min())
    pmf = np.bincount(j - start, weights=m)
    return _clamped(grid, start, pmf, inf, _U * (masses.size + 4) * float(pmf.sum()))


def pld_from_law(
    cdf: Callable[[np.ndarray], np.ndarray],
    sf: Callable[[np.ndarray], np.ndarray],
    lo: float,
    hi: float,
    inf_mass: float,
    grid: float,
) -> PLD:
    """The PLD of a loss whose finite part (total mass ``1 - inf_mass``) has the
    distribution function ``(1 - inf_mass) * cdf`` and survival function ``(1 - inf_mass)
    * sf``, its mass in [lo, hi] up to negligible tails: the mass below ``lo`` is moved up
    into the first bucket, the mass above ``hi`` goes to +inf (both pessimistic)."""
    top = int(math.floor(LOSS_MAX / grid))
    j_lo = max(-top, int(math.floor(max(lo, -LOSS_MAX) / grid)))
    j_hi = max(j_lo, min(top, int(math.ceil(min(hi, LOSS_MAX) / grid))))
    points = np.arange(j_lo, j_hi + 1) * grid
    F = np.clip(np.asarray(cdf(points), float), 0.0, 1.0)
    S = np.clip(np.asarray(sf(points), float), 0.0, 1.0)
    # bucket (l - grid, l] goes to l, the mass below lo to the first bucket; each mass is a
    # difference of F or of S, whichever is below 1/2 (accurate to a few u of it)
    by_cdf = np.diff(F, prepend=0.0)
    by_sf = np.append(1.0 - S[0], S[:-1] - S[1:])
    pmf = np.maximum(np.where(F <= 0.5, by_cdf, by_sf), 0.0) * (1.0 - inf_mass)
    inf = inf_mass + (1.0 - inf_mass) * float(S[-1])
    error = 32 * _U * (float(np.sum(np.minimum(F, S))) + 1.0)
    return _clamped(grid, j_lo, pmf, inf, error)

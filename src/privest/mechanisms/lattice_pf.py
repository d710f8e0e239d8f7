"""Permute-and-flip medians and quantiles over public lattice candidates, sampled exactly.

McKenna and Sheldon (2020), Alg. 1: visit the candidates in a uniformly random order and
stop at candidate r with probability ``p_r = exp(eps (q_r - q*) / (2 Delta))``, where
``q* = max_r q_r``. Here the candidates are the points of the public lattice of
:mod:`privest.mechanisms.profiles.lattice` (``resolution=``, or by default a power-of-two
step with 2^10 to 2^11 points across the bounds), and the utility is minus a
sensitivity-1 score (``Delta = 1``) built on the interpolated rank of paper 002:

* ``score="rank"``: the PLM score ``s = l + i/L`` of Def. 3.1 at the lattice point
  (:mod:`privest.mechanisms.lattice_plm`; ``|s(y;x) - s(y;x')| <= 1``, Thm. 1);
* ``score="stair"``: its staircase ``g = ceil(s - c)``, ``c = 1/(1 + e^{eps/4})``
  (also sensitivity 1: same module, "Staircase").

Both are minimal (= 1) at the point f(x), so ``q* = -1`` for every data set and
``p_r = exp(-eps' (s_r - 1) / 2)``. PF is eps-DP for any sensitivity-1 utility
(McKenna and Sheldon 2020, Thm. 1) and never has a larger expected utility loss than the
exponential mechanism with the same score (their Thm. 2).

Exact sampling: the random order is a lazy Fisher-Yates shuffle driven by uniform integers
(:class:`~privest.mechanisms.samplers.bigint.Bits`), and each flip is the exact
Bernoulli(``exp(-eps' (s_r - 1)/2)``) of Canonne, Kamath and Steinke (2020, Alg. 1) with
the rational exponent ``eps' (l L + i - L) / (2 L)``, ``eps' = eps (1 - 2^-40)``: the
released index has exactly the PF law at eps' < eps, so the guarantee is eps.

Exact law: with the candidates' arrival times i.i.d. uniform on (0, 1) (a uniform random
order), candidate r is reached when every earlier candidate was rejected, so
``P(r) = p_r int_0^1 prod_{s != r} (1 - t p_s) dt``; the integrand is a positive polynomial
of degree N - 1, integrated by Gauss-Legendre with ``N // 2 + 1`` nodes, which is exact
for it (up to float rounding; all terms positive).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.lattice_plm import (
    LatticeProfileLaw,
    run_epsilon,
    stair_fraction,
    truncation_levels,
)
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.lattice import (
    LatticeGrid,
    LatticeProfile,
    inward_target,
    lattice_order_profile,
    lattice_profile_of,
)
from privest.mechanisms.samplers.bigint import Bits
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng
from privest.validation import check_bounds, check_epsilon, check_probabilities

__all__ = ["PF_GRID_BITS", "PF_MAX_CANDIDATES", "PermuteAndFlip", "PermuteFlipLaw", "pf_grid"]

#: default candidates: 2^PF_GRID_BITS to 2^(PF_GRID_BITS + 1) lattice steps across the bounds
PF_GRID_BITS = 10
#: the exact law integrates a polynomial of degree N - 1: candidates are capped (public)
PF_MAX_CANDIDATES = 2049


def pf_grid(a: float, b: float, resolution: float | None = None) -> LatticeGrid:
    """The public candidate lattice: ``resolution`` or a power-of-two step (module docstring)."""
    if resolution is None:
        resolution = math.ldexp(1.0, math.floor(math.log2(b - a)) - PF_GRID_BITS)
    grid = LatticeGrid.for_bounds(a, b, resolution)
    if grid.kb - grid.ka + 1 > PF_MAX_CANDIDATES:
        raise ValidationError(
            f"resolution: {resolution!r} gives {grid.kb - grid.ka + 1} candidates in the "
            f"bounds ({a}, {b}); permute-and-flip takes at most {PF_MAX_CANDIDATES}"
        )
    return grid


@functools.lru_cache(maxsize=8)
def _nodes(m: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy.special import roots_legendre

    t, w = roots_legendre(m)
    return (t + 1) / 2, w / 2


class PermuteFlipLaw(OutputLaw):
    """Permute-and-flip over the lattice points ``lo .. hi`` of a profile (module docstring).

    ``PermuteFlipLaw.for_statistic(x, "median", epsilon=1, bounds=(0, 100), resolution=1)``.
    A curator's view like every law: never publish it.
    """

    def __init__(self, profile: LatticeProfile, epsilon: float, score: str = "rank"):
        if score not in ("rank", "stair"):
            raise ValidationError(f"score: {score!r} is not 'rank' or 'stair'")
        self.epsilon = check_epsilon(epsilon)
        self.eps_run = run_epsilon(self.epsilon)
        self.profile, self.unit, self.score = profile, profile.unit, score
        self.value = float(profile.center * profile.unit)
        self.index = np.arange(profile.lo, profile.hi + 1, dtype=np.int64)
        plm = LatticeProfileLaw(profile, epsilon, shape="texp")
        j, i = plm._locate(self.index)
        lvl, length = plm.level[j], plm.length[j]
        if score == "rank":  # s - 1 = (l L + i - L) / L
            num, den = lvl * length + i - length, length
        else:  # g - 1 = l + [i/L > c] - 1
            c = stair_fraction(self.epsilon)
            pairs = zip(i.tolist(), length.tolist(), strict=True)
            above = [ii * c.denominator > c.numerator * ln for ii, ln in pairs]
            num, den = lvl + np.array(above, dtype=np.int64) - 1, np.ones_like(lvl)
        self._num, self._den = num.astype(np.int64), den.astype(np.int64)
        self.log_p = -0.5 * float(self.eps_run) * self._num / self._den
        self._pmf: np.ndarray | None = None

    @classmethod
    def for_statistic(
        cls,
        x: Any,
        statistic: str,
        *,
        epsilon: float,
        bounds: Any,
        quantile: float | None = None,
        resolution: float | None = None,
        clip: bool = False,
        score: str = "rank",
    ) -> PermuteFlipLaw:
        eps = check_epsilon(epsilon)
        ((a, b),) = check_bounds(bounds, 1).tolist()
        grid = pf_grid(float(a), float(b), resolution)
        prof = lattice_order_profile(
            x,
            statistic,
            bounds,
            levels=truncation_levels(eps, grid.kb - grid.ka + 1),
            quantile=quantile,
            resolution=grid.step,
            clip=clip,
        )
        return cls(prof, eps, score)

    # -- exact sampler -----------------------------------------------------------------------
    def sample_index(self, bits: Bits) -> int:
        """One exact PF draw: lazy Fisher-Yates order, exact flips (module docstring)."""
        n = self.index.size
        e_num, e_den = self.eps_run.numerator, self.eps_run.denominator
        num, den = self._num.tolist(), self._den.tolist()
        swapped: dict[int, int] = {}
        for t in range(n):
            u = t + bits.below(n - t)
            r = swapped.get(u, u)
            swapped[u] = swapped.get(t, t)
            if bits.bernoulli_exp(e_num * num[r], 2 * e_den * den[r]):
                return int(self.index[r])
        raise AssertionError("unreachable: the point f(x) flips heads with probability 1")

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Exact draws (module docstring), as floats ``index * unit``."""
        gen = resolve_rng(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        m = int(np.prod(shape)) if shape else 1
        bits = Bits(gen, block=64 if m == 1 else 4096)
        k = np.array([self.sample_index(bits) for _ in range(m)], dtype=np.int64)
        y = self.profile.to_output(k)
        return float(y[0]) if size is None else y.reshape(shape)

    # -- the law (curator's view) -------------------------------------------------------------
    def pmf(self) -> np.ndarray:
        """P(index = lo + r) for every candidate r (Gauss-Legendre, exact for the polynomial).

        Candidates with the same flip probability share their factor: with ``c_v``
        candidates at probability ``p_v``, ``prod_s (1 - t p_s) = prod_v (1 - t p_v)^c_v``,
        so the cost is nodes x distinct probabilities (the staircase score has one per
        level), not nodes x candidates."""
        if self._pmf is None:
            log_p, inverse, counts = np.unique(self.log_p, return_inverse=True, return_counts=True)
            p = np.exp(log_p)
            t, w = _nodes(self.log_p.size // 2 + 1)
            log_terms = np.log1p(-np.outer(t, p))  # (nodes, distinct probabilities)
            log_all = (log_terms @ counts)[:, None]
            inner = (np.exp(log_all - log_terms) * w[:, None]).sum(axis=0)
            self._pmf = (p * inner)[inverse]
        return self._pmf

    def log_pmf_index(self, k: ArrayLike) -> np.ndarray:
        """log P(index = k) (``-inf`` off ``[lo, hi]``)."""
        k = np.atleast_1d(np.asarray(k, dtype=np.int64))
        inside = (k >= self.profile.lo) & (k <= self.profile.hi)
        out = np.full(k.shape, -np.inf)
        with np.errstate(divide="ignore"):
            out[inside] = np.log(self.pmf()[k[inside] - self.profile.lo])
        return out

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log probability mass at ``y`` (``-inf`` off the candidates)."""
        y = np.asarray(y, dtype=float)
        k = np.rint(y / self.unit)
        on = (k * self.unit == y) & np.isfinite(k)
        out = np.full(y.shape, -np.inf)
        if on.any():
            out[on] = self.log_pmf_index(k[on].astype(np.int64))
        return out

    def cdf(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) <= y)."""
        y = np.asarray(y, dtype=float)
        cum = np.cumsum(self.pmf())
        pos = np.searchsorted(self.index * self.unit, y, side="right")
        return np.where(pos > 0, cum[np.maximum(pos - 1, 0)], 0.0)

    def _abs_err(self) -> np.ndarray:
        return np.abs(self.index - self.profile.center) * self.unit

    def error_mean_abs(self, reference: float | None = None) -> float:
        """E|M(x) - f(x)|, or E|M(x) - reference|."""
        if reference is None:
            return float(np.sum(self.pmf() * self._abs_err()))
        return float(np.sum(self.pmf() * np.abs(self.index * self.unit - reference)))

    def error_mse(self) -> float:
        return float(np.sum(self.pmf() * self._abs_err() ** 2))

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|M(x) - f(x)| <= alpha)."""
        a = np.asarray(alpha, dtype=float)
        err, p = self._abs_err(), self.pmf()
        return np.clip((p * (err <= a[..., None] * (1 + 1e-12))).sum(axis=-1), 0.0, 1.0)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """The p-quantiles of |err| (least candidate distance d with P(|err| <= d) >= p)."""
        q = check_probabilities(p)
        err = self._abs_err()
        order = np.argsort(err, kind="stable")
        cum = np.cumsum(self.pmf()[order])
        i = np.searchsorted(cum, np.minimum(q, cum[-1]) - 1e-15, side="left")
        return err[order][np.minimum(i, err.size - 1)].reshape(q.shape)

    def privacy_report(self) -> dict[str, float]:
        return {"pure_dp": self.epsilon}

    def __repr__(self) -> str:
        return (
            f"PermuteFlipLaw({self.profile.statistic}, score={self.score!r}, "
            f"epsilon={self.epsilon:g}, unit={self.unit:g}, candidates={self.index.size})"
        )


class PermuteAndFlip(StatisticMechanism):
    """Permute-and-flip median or quantile over public lattice candidates (module docstring).

    ``PermuteAndFlip("median", epsilon=1.0, bounds=(0, 100), resolution=1).release(x)``;
    ``score="stair"`` (default) or ``"rank"``. At most ``PF_MAX_CANDIDATES`` lattice points
    in the bounds (checked before any data).
    """

    name = "permute_and_flip"

    def __init__(
        self,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
        resolution: float | None = None,
        domain: Domain | None = None,
        score: str = "stair",
    ) -> None:
        super().__init__(
            statistic,
            epsilon=epsilon,
            bounds=bounds,
            quantile=quantile,
            clip=clip,
            domain=domain,
            resolution=resolution,
        )
        resolution = self.domain.resolution
        if score not in ("rank", "stair"):
            raise ValidationError(f"score: {score!r} is not 'rank' or 'stair'")
        self.score = score
        self.grid = pf_grid(*self.bounds, resolution)  # validated before any data
        self.resolution = self.grid.step

    def law(self, x: Any) -> PermuteFlipLaw:
        """NON-PRIVATE: the exact PF law on ``x`` (:class:`PermuteFlipLaw`)."""
        return self.law_from_profile(lattice_profile_of(self, x))

    # -- the lattice seam (as the piecewise Laplace mechanism's) ----------------------------
    @property
    def levels(self) -> int:
        """The levels of the truncated lattice profile (public: epsilon and the lattice)."""
        return truncation_levels(self.epsilon, self.grid.kb - self.grid.ka + 1)

    def inward(self, n: int) -> bool:
        """The staircase's rank target (one concept, one target): half a rank inward where
        the public rule says so (:func:`~privest.mechanisms.profiles.lattice.inward_target`)."""
        return inward_target(self.spec, None, n, self.epsilon)

    def law_from_profile(self, profile: LatticeProfile) -> PermuteFlipLaw:
        """The PF law from the profile of the snapped order statistics."""
        return PermuteFlipLaw(profile, self.epsilon, self.score)

"""The piecewise Laplace mechanism (PLM), 1-D exact version (paper 002, Sec. 3 and 4).

Score (Def. 3.1): on upper piece l, ``s(y) = l + (y - U_{l-1}) / (U_l - U_{l-1})``, lower
pieces mirrored, ``s(f(x)) = 1``; the output has density ``exp(-eps s(y)/2) / Z``
(exponential mechanism, eq. M.1). Thm. 1: ``|s(y;x) - s(y;x')| <= 1`` for neighbours, so
PLM is eps-DP, and eps-bounded-range (hence eps^2/8-zCDP).

Sampler (Algorithm 1, Lemma 3.1): pick piece l with probability
``exp(-eps l/2) * length_l / W`` (log-sum-exp), then ``z ~ TExp(length_l)`` on
[0, length_l] with rate ``eps/(2 length_l)`` by inverse CDF with expm1/log1p.

Variants: rho-smoothed PLM (Sec. 4.2: score 1 on [f-rho, f+rho], never 0, which would
break privacy) and the truncated/cheap profile of Sec. 5.2 (``truncate=k``;
docs/piecewise-laplace.md, "Truncation and approximate radii").

What the paper shows, and what it does not (Sec. 4.1-4.2; docs/piecewise-laplace.md,
"When PLM helps, and when it does not"): PLM dominates continuous INV in
1-D (Thm. 2), but when every piece has the same length Delta it is exactly
``f(x) + Lap(2 Delta / eps)`` (truncated to the range), i.e. twice the noise of the
classical eps-DP Laplace mechanism ``Lap(Delta/eps)``. Under pure eps-DP accounting PLM is
not claimed to beat the Laplace mechanism; for means, sums and counts it usually does not.
The rho-smoothed PLM does not dominate rho-smoothed INV.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.domain import Domain
from privest.errors import ValidationError
from privest.mechanisms.lattice_plm import LatticeProfileLaw, truncation_levels
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.laws.piecewise import (
    PiecewiseDensity,
    abs_error_quantile,
    log_k,
    texp_moments,
)
from privest.mechanisms.profiles.lattice import (
    LatticeGrid,
    inward_target,
    lattice_from_reaches,
    lattice_profile_of,
)
from privest.mechanisms.profiles.reaches import ReachProfile, profile_for
from privest.mechanisms.statistic import StatisticMechanism
from privest.rng import resolve_rng
from privest.validation import check_epsilon

__all__ = [
    "PiecewiseLaplace",
    "PiecewiseLaplaceLaw",
    "auto_truncation_level",
    "profile_truncation",
    "segments_from_profile",
]

_TAU = 1e-6  # tail mass target of the automatic truncation level (privest's choice)


def auto_truncation_level(epsilon: float, tau: float = _TAU) -> int:
    """k = ceil(2 ln(1/tau) / eps): levels >= k carry weight <= tau per unit length.

    Sec. 5.2 of paper 002 asks for k = O(1/eps); this k is privest's choice
    (docs/piecewise-laplace.md, "Truncation and approximate radii").
    """
    return max(1, math.ceil(2.0 * math.log(1.0 / tau) / epsilon))


def segments_from_profile(
    profile: ReachProfile, epsilon: float, *, law: str, rho: float = 0.0
) -> PiecewiseDensity:
    """The piecewise density of PLM (``law="texp"``) or continuous INV (``law="uniform"``).

    With ``rho > 0`` every piece moves outward by rho and the centre [f - rho, f + rho]
    becomes one flat piece at level 1 (PLM) or 0 (INV) (paper 002, Sec. 4.2).
    """
    p = profile.pieces()
    side, length, level = p["side"], p["length"], p["level"].astype(float)
    inner = p["start"] + side * rho
    rate = 0.5 * epsilon / length if law == "texp" else np.zeros_like(length)
    c = profile.center
    if rho > 0:
        flat_level = 1.0 if law == "texp" else 0.0
        side = np.concatenate([side, [-1.0, 1.0]])
        inner = np.concatenate([inner, [c, c]])
        length = np.concatenate([length, [rho, rho]])
        level = np.concatenate([level, [flat_level, flat_level]])
        rate = np.concatenate([rate, [0.0, 0.0]])
    # the endpoints are the reaches themselves (never start + length, which can differ
    # in the last bit between neighbours and make the support data-dependent)
    outer = p["end"] + p["side"] * rho
    if rho > 0:
        outer = np.concatenate([outer, [c - rho, c + rho]])
    left = np.where(side > 0, inner, outer)
    right = np.where(side > 0, outer, inner)
    order = np.lexsort((right, left))
    return PiecewiseDensity(
        left=left[order],
        right=right[order],
        inner=inner[order],
        side=side[order],
        z0=np.zeros(order.size),
        z1=length[order],
        level=level[order],
        rate=rate[order],
        epsilon=epsilon,
        center=c,
    )


_CHUNK = 1 << 16  # pieces per chunk of the block sums (fits in cache, one buffer reused)


def _block_log_weights(reach: np.ndarray, sign: float, epsilon: float, block: int) -> np.ndarray:
    """Log weights of blocks of ``block`` consecutive levels on one side.

    Block b holds levels l_b = 1 + b*block .. l_b + block - 1 with piece lengths
    ``sign * (reach[l] - reach[l-1])``. Its weight is ``exp(-eps l_b/2) * sum_r e^{-eps r/2}
    length``; the factor relative to the block's first level stays above e^-700, so the
    sums never underflow. Computed chunk by chunk into one reused buffer.
    """
    npieces = reach.size - 1
    nb = -(-npieces // block)
    decay = np.exp(-0.5 * epsilon * np.arange(block))
    sums = np.empty(nb)
    per_chunk = max(1, _CHUNK // block)
    buf = np.empty(per_chunk * block)
    for first in range(0, nb, per_chunk):
        last = min(nb, first + per_chunk)
        lo, hi = first * block, min(npieces, last * block)
        cnt = hi - lo
        np.subtract(reach[lo + 1 : hi + 1], reach[lo:hi], out=buf[:cnt])
        if sign < 0:
            np.negative(buf[:cnt], out=buf[:cnt])
        buf[cnt : (last - first) * block] = 0.0
        sums[first:last] = buf[: (last - first) * block].reshape(-1, block) @ decay
    with np.errstate(divide="ignore"):
        return np.log(sums) - 0.5 * epsilon * (1 + block * np.arange(nb))


def sample_from_profile(
    profile: ReachProfile,
    epsilon: float,
    law: str,
    rho: float,
    size: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``size`` exact draws of PLM (``law="texp"``) or INV (``"uniform"``) from the reaches.

    Step 1 of Algorithm 1 in two stages, both exact: a block of levels by its log weight
    (log-sum-exp), then a piece inside the block by its (non-underflowing) relative weight.
    Step 2: the inverse CDF of TExp (or a uniform) inside the piece.
    """
    up, dn = profile.upper, profile.lower
    block = max(1, min(int(1400.0 / epsilon), max(up.size, dn.size) - 1))
    log_u = _block_log_weights(up, 1.0, epsilon, block)
    log_d = _block_log_weights(dn, -1.0, epsilon, block)
    log_blocks = np.concatenate([log_u, log_d])
    if rho > 0:  # the flat centre, in units of the piece masses (K for PLM, 1 for INV)
        k = math.exp(log_k(epsilon)) if law == "texp" else 1.0
        centre = 2 * rho * (math.exp(-epsilon / 2) / k if law == "texp" else 1.0)
        log_blocks = np.append(log_blocks, math.log(centre))
    cum = np.cumsum(np.exp(log_blocks - log_blocks.max()))
    b = np.searchsorted(cum, rng.random(size) * cum[-1], side="right")
    b = np.minimum(b, cum.size - 1)
    u = rng.random(size)
    out = np.empty(size)
    nu = log_u.size
    decay = np.exp(-0.5 * epsilon * np.arange(block))
    for blk in np.unique(b):
        sel = b == blk
        m = int(sel.sum())
        if blk == log_blocks.size - 1 and rho > 0:
            out[sel] = profile.center + rho * (2.0 * u[sel] - 1.0)
            continue
        upper = blk < nu
        reach, sign = (up, 1.0) if upper else (dn, -1.0)
        first = (blk if upper else blk - nu) * block  # index of the block's first piece
        length = sign * np.diff(reach[first : first + block + 1])
        rc = np.cumsum(length * decay[: length.size])
        i = np.minimum(np.searchsorted(rc, rng.random(m) * rc[-1], side="right"), length.size - 1)
        piece = first + i
        length = length[i]
        if law == "texp":
            z = -(2.0 * length / epsilon) * np.log1p(u[sel] * math.expm1(-epsilon / 2.0))
        else:
            z = u[sel] * length
        z = np.clip(z, 0.0, length)
        start, end = reach[piece] + sign * rho, reach[piece + 1] + sign * rho
        y = start + sign * z
        out[sel] = np.clip(y, np.minimum(start, end), np.maximum(start, end))
    return out


class _ProfileLaw(OutputLaw):
    """Shared code of PLM and continuous INV: a reach profile and its piecewise density."""

    _law = "texp"

    def __init__(self, profile: ReachProfile, epsilon: float, *, rho: float = 0.0):
        if not isinstance(profile, ReachProfile):
            raise ValidationError(f"profile: {type(profile).__name__} is not a ReachProfile")
        self.epsilon = check_epsilon(epsilon)
        rho = float(rho)
        if not (rho >= 0 and math.isfinite(rho)):
            raise ValidationError(f"rho: {rho!r} must be a finite number >= 0")
        self.rho = rho
        self.profile = profile
        self.value = profile.center
        self._density: PiecewiseDensity | None = None
        self._pieces_cache: dict[str, np.ndarray] | None = None

    @property
    def density(self) -> PiecewiseDensity:
        """The piecewise density (built on first use; sampling does not need it)."""
        if self._density is None:
            self._density = segments_from_profile(
                self.profile, self.epsilon, law=self._law, rho=self.rho
            )
        return self._density

    @classmethod
    def for_statistic(
        cls,
        x: Any,
        statistic: str,
        *,
        epsilon: float,
        bounds: Any = None,
        quantile: float | None = None,
        rho: float = 0.0,
        clip: bool = False,
        truncate: int | str | None = None,
        tail: str | None = None,
    ):
        """Build the mechanism for a named statistic of ``x`` with public ``bounds``.

        ``statistic`` is median, quantile (``q=`` or ``"quantile:0.9"``), mean, sum, count
        (``x`` = 0/1 indicators) or variance. ``truncate`` = k (or ``"auto"``:
        ``ceil(2 ln(1e6)/eps)``) keeps levels < k and adds ``tail`` (paper 002, Sec. 5.2):
        ``"range_end"`` (default) or ``"gs"``; for the variance only levels < k are
        computed at all. ``tail`` without ``truncate`` is an error.
        """
        eps = check_epsilon(epsilon)
        if tail is not None and truncate is None:
            raise ValidationError(
                f"tail: {tail!r} only applies to a truncated profile; pass truncate=k or 'auto'"
            )
        if truncate is not None and truncate != "auto":
            if isinstance(truncate, bool) or not isinstance(truncate, (int, np.integer)):
                raise ValidationError(f"truncate: {truncate!r} must be an integer >= 1 or 'auto'")
        k = auto_truncation_level(eps) if truncate == "auto" else truncate
        name = statistic.partition(":")[0].strip().lower() if isinstance(statistic, str) else ""
        max_level = k if name == "variance" else None
        prof = profile_for(x, statistic, bounds, quantile=quantile, clip=clip, max_level=max_level)
        if k is not None:
            prof = prof.truncated(int(k), tail=tail or "range_end")
        return cls(prof, eps, rho=rho)

    # -- distribution ----------------------------------------------------------------------
    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log density; at y = f(x) itself the score is 1 (PLM) or ell = 0 (INV) (Def. 3.1)."""
        out = self.density.logpdf(y)
        if self.rho == 0:
            at_center = -0.5 * self.epsilon * (self._law == "texp") - self.density.log_norm
            out = np.where(np.asarray(y) == self.value, at_center, out)
        return out

    def cdf(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) <= y), from the closed-form piece masses (docs/piecewise-laplace.md,
        "Exact error laws")."""
        return self.density.cdf(y)

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Exact two-step sampler (Algorithm 1) straight from the reaches, in O(#pieces)."""
        gen = resolve_rng(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        m = int(np.prod(shape)) if shape else 1
        y = sample_from_profile(self.profile, self.epsilon, self._law, self.rho, m, gen)
        return float(y[0]) if size is None else y.reshape(shape)

    @property
    def support(self) -> tuple[float, float]:
        """The data-independent output interval."""
        return self.density.lo, self.density.hi

    def breakpoints(self) -> np.ndarray:
        """Every piece endpoint (the log-density is linear between them)."""
        return self.density.breakpoints()

    # -- exact error functionals (docs/piecewise-laplace.md, "Exact error laws") ------------
    def _pieces(self) -> dict[str, np.ndarray]:
        """The profile's positive-length pieces, computed once per mechanism."""
        if self._pieces_cache is None:
            self._pieces_cache = self.profile.pieces()
        return self._pieces_cache

    def _piece_moments(self) -> tuple[np.ndarray, ...]:
        """(prob, o, len, m1, m2) per piece straight from the reaches (rho = 0)."""
        p = self._pieces()
        logw = -0.5 * self.epsilon * p["level"] + np.log(p["length"])
        prob = np.exp(logw - logw.max())
        prob /= prob.sum()
        o = np.abs(p["start"] - self.profile.center)
        if self._law == "texp":
            m1, m2 = texp_moments(self.epsilon)
        else:
            m1, m2 = 0.5, 1.0 / 3.0
        return prob, o, p["length"], m1, m2

    def error_mean_abs(self) -> float:
        """E|M(x) - f(x)| = sum_pieces (w/W) (o + Delta m1)."""
        if self.rho > 0:
            return self.density.error_mean_abs()
        prob, o, length, m1, _ = self._piece_moments()
        return float(np.sum(prob * (o + length * m1)))

    def error_mse(self) -> float:
        """E (M(x) - f(x))^2 = sum_pieces (w/W) (o^2 + 2 o Delta m1 + Delta^2 m2)."""
        if self.rho > 0:
            return self.density.error_mse()
        prob, o, length, m1, m2 = self._piece_moments()
        return float(np.sum(prob * (o**2 + 2 * o * length * m1 + length**2 * m2)))

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        """P(|M(x) - f(x)| <= alpha)."""
        return self.density.error_cdf(alpha)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """p-quantiles of |M(x) - f(x)|, exactly (the inverse of :meth:`error_cdf`)."""
        if self.rho > 0:
            return self.density.error_quantile(p)
        prob, o, length, _, _ = self._piece_moments()
        rate = 0.5 * self.epsilon / length if self._law == "texp" else np.zeros_like(length)
        return abs_error_quantile(p, prob, o, length, rate, self._pieces()["side"])

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.profile.statistic}, epsilon={self.epsilon:g}, "
            f"n={self.profile.n}, pieces={self.density.prob.size})"
        )


class PiecewiseLaplaceLaw(_ProfileLaw):
    """The piecewise Laplace mechanism (module docstring); pure eps-DP.

    ``PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=1.0, bounds=(0, 100))`` builds
    it from data; ``PiecewiseLaplaceLaw(profile, epsilon, rho=0)`` from any
    :class:`~privest.mechanisms.profiles.reaches.ReachProfile`.
    """

    _law = "texp"

    def score(self, y: ArrayLike) -> np.ndarray:
        """s(y; x) of Def. 3.1 (``-q_plm``), shifted copy outside the rho-centre (Sec. 4.2)."""
        lp = self.logpdf(y)
        return -(2.0 / self.epsilon) * (lp + self.density.log_norm)

    def privacy_report(self) -> dict[str, float]:
        """eps-DP, eps-BR and eps^2/8-zCDP (Thm. 1, Sec. 4.1). Never eps/2, whatever the data."""
        return {
            "pure_dp": self.epsilon,
            "bounded_range": self.epsilon,
            "zcdp_rho": self.epsilon**2 / 8.0,
        }


#: the variance's reaches cost O(n) per level: above this n (public) PLM and INV compute
#: only the first ceil(2 ln(1e6)/eps) levels and add the range-end tail (paper 002, Sec. 5.2
#: truncated profile; still eps-DP)
VARIANCE_FULL_PROFILE_MAX_N = 2000


def profile_truncation(statistic: str, n: int) -> str | None:
    """``truncate=`` PLM and INV use for a statistic at public n (no data is read)."""
    return "auto" if statistic == "variance" and n > VARIANCE_FULL_PROFILE_MAX_N else None


class PiecewiseLaplace(StatisticMechanism):
    """The piecewise Laplace mechanism for a named statistic (paper 002, Def. 3.1, Alg. 1).

    ``PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 100)).release(x)``; ``rho > 0``
    gives the rho-smoothed PLM (Sec. 4.2). ``law(x)`` is the curator's
    :class:`PiecewiseLaplaceLaw` (density, exact error laws). ``shape`` is the law inside
    each piece of the lattice release of medians and quantiles: ``"stair"`` (default: flat,
    then one level lower; :mod:`privest.mechanisms.lattice_plm`) or ``"texp"`` (the paper's
    truncated exponential). ``target`` is the rank a quantile release aims at: ``"auto"``
    (default: half a rank inward where eps min(k, n + 1 - k) < 8, a public rule,
    :func:`~privest.mechanisms.profiles.lattice.inward_target`), ``"rank"`` (x_(k)) or
    ``"inward"`` (docs/piecewise-laplace.md, "Quantile convention").
    """

    name = "piecewise_laplace"
    _law_class: type = PiecewiseLaplaceLaw
    #: the in-piece law of the lattice release of medians and quantiles
    _lattice_shape = "stair"
    _lattice_shapes: tuple[str, ...] = ("stair", "texp")
    #: the rank target of lattice quantile releases (lattice_plm.TARGETS)
    _lattice_target = "auto"

    def __init__(
        self,
        statistic: str = "median",
        *,
        epsilon: float,
        bounds: Any = None,
        quantile: float | None = None,
        clip: bool = False,
        rho: float = 0.0,
        resolution: float | None = None,
        domain: Domain | None = None,
        shape: str | None = None,
        target: str | None = None,
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
        if target is not None:
            if target not in ("auto", "rank", "inward"):
                raise ValidationError(f"target: {target!r} is not 'auto', 'rank' or 'inward'")
            self._lattice_target = target
        if shape is not None:
            if shape not in self._lattice_shapes:
                raise ValidationError(
                    f"shape: {shape!r} is not one of {', '.join(self._lattice_shapes)}"
                )
            self._lattice_shape = shape
        self.rho = float(rho)
        if not (self.rho >= 0 and math.isfinite(self.rho)):
            raise ValidationError(f"rho: {rho!r} must be a finite number >= 0")
        if self.rho > 0:
            raise ValidationError(
                f"rho: the rho-smoothed {self.name} (paper 002, Sec. 4.2) has no float-safe "
                "release; its law stays available for analysis "
                f"({self._law_class.__name__}.for_statistic(x, ..., rho=...))"
            )
        self.on_lattice = self.statistic in ("median", "quantile")
        if resolution is not None and not self.on_lattice:
            raise ValidationError(
                f"resolution: {resolution!r} applies to the median and quantiles (rho = 0) only"
            )
        self.resolution = resolution
        if self.on_lattice:  # validates the resolution against the bounds, before any data
            self.grid = LatticeGrid.for_bounds(*self.bounds, resolution)

    def law(self, x: Any) -> Any:
        """The output law on ``x``: for the median and quantiles (rho = 0) the lattice law
        (:class:`~privest.mechanisms.lattice_plm.LatticeProfileLaw`, exact sampling), else
        the continuous law of paper 002 (:meth:`continuous_law`)."""
        if self.on_lattice:
            return self.law_from_profile(lattice_profile_of(self, x))
        n = int(np.size(x))
        name = self.statistic
        max_level = auto_truncation_level(self.epsilon) if profile_truncation(name, n) else None
        prof = profile_for(x, self.spec, self.bounds, clip=self.clip, max_level=max_level)
        grid = LatticeGrid.for_bounds(prof.lo, prof.hi)
        levels = truncation_levels(self.epsilon, grid.kb - grid.ka + 1)
        return self.law_from_profile(lattice_from_reaches(prof, levels))

    def inward(self, n: int) -> bool:
        """Whether the lattice release of n records targets half a rank inward (public)."""
        t = self._lattice_target
        return t == "inward" or (t == "auto" and inward_target(self.spec, None, n, self.epsilon))

    # -- the lattice seam: a backend selects the order statistics, the law is built here ----
    @property
    def levels(self) -> int:
        """The levels of the truncated lattice profile (public: epsilon and the lattice)."""
        return truncation_levels(self.epsilon, self.grid.kb - self.grid.ka + 1)

    def law_from_profile(self, profile: Any) -> Any:
        """The lattice law from the profile of the snapped order statistics (in memory from
        the data, out of core from a distributed selection:
        :func:`~privest.mechanisms.profiles.lattice.profile_from_order_statistics`)."""
        return LatticeProfileLaw(profile, self.epsilon, self._lattice_shape)

    def continuous_law(self, x: Any) -> _ProfileLaw:
        """The continuous law of paper 002 (its float sampler is not float-safe: for analysis
        only; :meth:`release` draws from :meth:`law`, on a public lattice)."""
        return self._law_class.for_statistic(
            x,
            self.spec,
            epsilon=self.epsilon,
            bounds=self.bounds,
            rho=self.rho,
            clip=self.clip,
            truncate=profile_truncation(self.statistic, int(np.size(x))),
        )

"""Approximate PLM from radius-bounding functions, in 1-D and d dimensions (paper 002, Sec. 5).

Radius bounding functions (Def. 5.1): ``R_l(x) >= 0`` with ``R_l(x) <= R_{l+1}(x')`` for
neighbours and ``R_1(x) >= ||f(x) - f(x')||_p``. Cumulative radii ``Rc_l = R_1 + ... + R_l``.
Score (Sec. 5.1): with ``r = ||y - f(x)||_p`` and ``lt = min{l : Rc_l >= r}``,
``s~(y) = lt + (r - Rc_{lt-1}) / R_lt``; density ``exp(-eps s~/2)``, eps-DP (Lemma 5.2).
Approximate INV (AD20a): density ``exp(-eps lt / 2)``.

Builders (Sec. 5.2): from local-sensitivity upper bounds A_k (Cor. 5.1: ``R_l = A_l``,
``indexing="paper"``; or ``R_l = A_{l-1}``, ``"tight"``), capped at GS and truncated; from
a Lipschitz local sensitivity (Cor. 5.2: ``R_l = LS + (l - 1) Delta'``). A finite list of
radii stands for all l >= 1 by repeating its last entry, so that entry (the *tail*) must
be public: the builders take it from ``cap`` (the global sensitivity) and refuse
to run without one. Repeating a data-dependent radius such as A_K(x) breaks Def. 5.1(i)
(``R_l(x) <= R_{l+1}(x')`` fails in the tail) and the release is then not eps-DP.

1-D: symmetric pieces ``f(x) +- Rc_l`` (end of Sec. 5.1), optionally restricted to a fixed
public output interval by cutting pieces and renormalising (no clamping atoms).
d-D: polar decomposition; shell masses via regularised incomplete gamma
functions, radius by inverse CDF in the shell, direction g/||g||_p. The paper's L1
rejection sampler is kept as :meth:`ApproximateLpPLMLaw.sample_rejection_l1` for tests.
No utility claim is made for d >= 2: dominance over approximate INV fails there. The
choices made here (indexing, cap, output range, exact sampler) are explained in
docs/piecewise-laplace.md, "Truncation and approximate radii".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.errors import ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.laws.piecewise import PiecewiseDensity
from privest.rng import resolve_rng
from privest.validation import check_epsilon

__all__ = [
    "ApproximateLpPLMLaw",
    "ApproximatePiecewiseLaplaceLaw",
    "RadiusBounds",
]


@dataclass(frozen=True)
class RadiusBounds:
    """Radii R_1..R_k; R_l = R_k for every l > k (the tail).

    The tail R_k is used for every level beyond the list, for every data set, so it must
    not depend on the data (Def. 5.1(i)): a public global sensitivity, or a
    constant known to bound the radii. Build radii from data with
    :meth:`from_local_sensitivity` or :meth:`lipschitz`, which append the public ``cap``.
    """

    radii: np.ndarray

    def __post_init__(self) -> None:
        r = np.asarray(self.radii, dtype=float).ravel()
        if r.size == 0 or not np.all(np.isfinite(r)) or np.any(r < 0):
            raise ValidationError("radii: need a non-empty array of finite values >= 0")
        if r[-1] <= 0:
            raise ValidationError("radii: the last radius (repeated forever) must be > 0")
        object.__setattr__(self, "radii", r)

    @staticmethod
    def _check_cap(cap: float | None, builder: str) -> float:
        """The public tail radius; ``None`` is refused (a data-dependent tail leaks)."""
        if cap is None:
            raise ValidationError(
                f"cap: required by RadiusBounds.{builder}. The radii are truncated, and "
                "every level past the list would repeat the last, data-dependent radius, "
                "which breaks Def. 5.1(i) (R_l(x) <= R_{l+1}(x')) and with it eps-DP. Pass "
                "cap = the global sensitivity (public) as the tail (paper 002, Sec. 5.2)."
            )
        if isinstance(cap, bool) or not isinstance(cap, (int, float, np.integer, np.floating)):
            raise ValidationError(f"cap: {cap!r} must be a number > 0 (the global sensitivity)")
        cap = float(cap)
        if not (math.isfinite(cap) and cap > 0):
            raise ValidationError(f"cap: {cap!r} must be a finite number > 0")
        return cap

    @classmethod
    def from_local_sensitivity(
        cls,
        a_k: ArrayLike,
        *,
        indexing: str = "paper",
        cap: float | None = None,
    ) -> RadiusBounds:
        """R from A_0, A_1, ..., A_K (local sensitivity at distance k, or upper bounds).

        ``"paper"`` (Cor. 5.1): R_l = A_l for l = 1..K; ``"tight"``: R_l = A_{l-1} for
        l = 1..K+1. The radii are min(R_l, cap) and every later level uses ``cap``
        (capped and truncated, Sec. 5.2). ``cap`` must be the (public) global sensitivity
        and is required: without it the last A_K(x) would repeat, a data-dependent tail.
        """
        cap = cls._check_cap(cap, "from_local_sensitivity")
        a = np.asarray(a_k, dtype=float).ravel()
        if indexing not in ("paper", "tight"):
            raise ValidationError(f"indexing: {indexing!r} is not 'paper' or 'tight'")
        r = a[1:] if indexing == "paper" else a
        if r.size == 0:
            raise ValidationError("a_k: need A_0 and A_1 at least")
        return cls(np.append(np.minimum(r, cap), cap))

    @classmethod
    def lipschitz(
        cls,
        local_sensitivity: float,
        delta_prime: float,
        *,
        levels: int,
        cap: float | None = None,
    ) -> RadiusBounds:
        """Cor. 5.2: R_l = min(LS + (l - 1) Delta', cap) for l = 1..levels, then ``cap``.

        ``cap`` (the public global sensitivity) is required: repeating the last
        LS(x) + (levels - 1) Delta' would be a data-dependent tail.
        """
        cap = cls._check_cap(cap, "lipschitz")
        if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 1:
            raise ValidationError(f"levels: {levels!r} must be an integer >= 1")
        r = local_sensitivity + delta_prime * np.arange(levels)
        return cls(np.append(np.minimum(r, cap), cap))

    def cumulative(self) -> np.ndarray:
        """Rc_0 = 0, Rc_1, ..., Rc_k."""
        return np.concatenate([[0.0], np.cumsum(self.radii)])


class ApproximatePiecewiseLaplaceLaw(OutputLaw):
    """1-D approximate PLM (``law="texp"``) or approximate INV (``"uniform"``); eps-DP.

    Pieces [f + Rc_{l-1}, f + Rc_l] and mirrored, levels l = 1..k from ``radii``; the
    last radius (public: see :class:`RadiusBounds`) repeats, one unbounded exponential
    tail by memorylessness. With ``output_range=(lo, hi)`` (public) the pieces
    are cut to it and renormalised. eps-DP needs valid radii (Def. 5.1), which this
    class cannot check from one data set.
    """

    def __init__(
        self,
        value: float,
        radii: RadiusBounds,
        epsilon: float,
        *,
        output_range: tuple[float, float] | None = None,
        law: str = "texp",
    ):
        self.value = float(value)
        self.epsilon = check_epsilon(epsilon)
        if law not in ("texp", "uniform"):
            raise ValidationError(f"law: {law!r} is not 'texp' or 'uniform'")
        if not isinstance(radii, RadiusBounds):
            radii = RadiusBounds(radii)
        self.radii = radii
        self.law = law
        r = radii.radii
        rc = radii.cumulative()
        # finite pieces l = 1..k-1 and the tail l >= k (the last radius repeated forever)
        lengths = np.append(r[:-1], np.inf)
        starts = rc[:-1]
        if law == "texp":
            rate = np.append(
                0.5 * self.epsilon / np.where(r[:-1] > 0, r[:-1], 1.0), 0.5 * self.epsilon / r[-1]
            )
        else:
            # approximate INV: constant exp(-eps l / 2) per shell; the tail is a staircase,
            # kept exact by listing shells until the output range ends (needs a range)
            if output_range is None:
                raise ValidationError("output_range: required for the uniform law")
            lo, hi = output_range
            reach = max(abs(hi - self.value), abs(self.value - lo))
            extra = max(0, math.ceil((reach - rc[-1]) / r[-1]) + 1) if reach > rc[-1] else 1
            lengths = np.concatenate([r, np.full(extra, r[-1])])
            starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
            rate = np.zeros(lengths.size)
        level = np.arange(1, lengths.size + 1, dtype=float)
        self.output_range = output_range
        segs = []
        for side in (-1.0, 1.0):
            z0 = np.zeros(lengths.size)
            z1 = lengths.copy()
            if output_range is not None:
                lo, hi = output_range
                limit = (hi - self.value) if side > 0 else (self.value - lo)
                if limit < 0:
                    raise ValidationError("value: lies outside output_range")
                z1 = np.minimum(z1, np.maximum(limit - starts, 0.0))
            inner = self.value + side * starts
            segs.append((inner, np.full(lengths.size, side), z0, z1, level, rate))
        inner, side, z0, z1, level, rate = (
            np.concatenate(parts) for parts in zip(*segs, strict=True)
        )
        left = np.where(side > 0, inner + z0, inner - z1)
        right = np.where(side > 0, inner + z1, inner - z0)
        order = np.lexsort((right, left))
        self.density = PiecewiseDensity(
            left=left[order],
            right=right[order],
            inner=inner[order],
            side=side[order],
            z0=z0[order],
            z1=z1[order],
            level=level[order],
            rate=rate[order],
            epsilon=self.epsilon,
            center=self.value,
        )

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        return self.density.logpdf(y)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        return self.density.cdf(y)

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        return self.density.sample(size, rng)

    def error_mean_abs(self) -> float:
        return self.density.error_mean_abs()

    def error_mse(self) -> float:
        return self.density.error_mse()

    def error_cdf(self, alpha: ArrayLike) -> np.ndarray:
        return self.density.error_cdf(alpha)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        return self.density.error_quantile(p)

    def breakpoints(self) -> np.ndarray:
        return self.density.breakpoints()


def _lp_ball_log_volume(d: int, p: float) -> float:
    """log Vol of the unit L_p ball in R^d: d log(2 Gamma(1 + 1/p)) - log Gamma(1 + d/p)."""
    from scipy.special import gammaln

    if math.isinf(p):
        return d * math.log(2.0)
    return d * math.log(2.0 * math.gamma(1.0 + 1.0 / p)) - gammaln(1.0 + d / p)


class ApproximateLpPLMLaw(OutputLaw):
    """d-dimensional approximate PLM in the L_p norm (Sec. 5.1); eps-DP (Lemma 5.2).

    Shells ``Rc_{l-1} < r <= Rc_l`` for l = 1..k with ``R_l`` from ``radii``; the last
    radius repeats forever (its shells form one exponential tail). ``law="uniform"``
    gives approximate INV (constant density per shell) instead.
    """

    def __init__(
        self,
        value: ArrayLike,
        radii: RadiusBounds,
        epsilon: float,
        *,
        p: float = 2.0,
        law: str = "texp",
        max_uniform_shells: int = 100_000,
    ):
        self.value = np.atleast_1d(np.asarray(value, dtype=float))
        if self.value.ndim != 1 or not np.all(np.isfinite(self.value)):
            raise ValidationError("value: must be a finite vector")
        self.d = self.value.size
        self.epsilon = check_epsilon(epsilon)
        p = float(p)
        if not (p >= 1):
            raise ValidationError(f"p: {p!r} must be >= 1 (or inf)")
        self.p = p
        if not isinstance(radii, RadiusBounds):
            radii = RadiusBounds(radii)
        self.radii = radii
        if law not in ("texp", "uniform"):
            raise ValidationError(f"law: {law!r} is not 'texp' or 'uniform'")
        self.law = law
        r = radii.radii
        if law == "texp":
            self.r_in = radii.cumulative()[:-1]  # inner radius of shells 1..k (k = tail)
            self.r_out = np.append(radii.cumulative()[1:-1], np.inf)
            self.lam = 0.5 * self.epsilon / np.where(r > 0, r, 1.0)
        else:
            # INV's density only steps down by exp(-eps/2) per shell: list shells until
            # their total mass is negligible in float64 (< 1e-300 of the total).
            need = max(r.size, math.ceil(2 * 700 / self.epsilon) + r.size)
            if need > max_uniform_shells:
                raise ValidationError("too many shells for the uniform law; raise eps")
            full = np.concatenate([r, np.full(need - r.size, r[-1])])
            cum = np.concatenate([[0.0], np.cumsum(full)])
            self.r_in, self.r_out = cum[:-1], cum[1:]
            self.lam = np.zeros(full.size)
        self.level = np.arange(1, self.r_in.size + 1, dtype=float)
        keep = self.r_out > self.r_in
        self.r_in, self.r_out = self.r_in[keep], self.r_out[keep]
        self.lam, self.level = self.lam[keep], self.level[keep]
        self.log_shell = self._log_shell_masses()
        from scipy.special import logsumexp

        self.log_norm = float(logsumexp(self.log_shell))
        self.shell_prob = np.exp(self.log_shell - self.log_norm)
        self._cum = np.cumsum(self.shell_prob)
        self._cum /= self._cum[-1]

    # -- shell masses ------------------------------------------------------------------------
    def _log_radial_integral(self, i: int) -> float:
        """log of integral_{r_in}^{r_out} r^{d-1} exp(-lam (r - r_in)) dr for shell i."""
        from scipy import integrate, special

        d, lam = self.d, self.lam[i]
        r0, r1 = self.r_in[i], self.r_out[i]
        if lam == 0:
            return math.log((r1**d - r0**d) / d)
        x0, x1 = lam * r0, lam * r1
        if special.gammainc(d, x0) < 0.5:
            diff = special.gammainc(d, x1) - special.gammainc(d, x0)
        else:
            diff = special.gammaincc(d, x0) - special.gammaincc(d, x1)
        if diff > 1e-280 and math.isfinite(x0) and x0 < 600:
            return x0 + special.gammaln(d) - d * math.log(lam) + math.log(diff)
        # quadrature of the log-concave integrand after factoring out its maximum
        peak = min(max(r0, (d - 1) / lam), r1 if math.isfinite(r1) else math.inf)
        logmax = (d - 1) * math.log(peak) - lam * (peak - r0) if peak > 0 else 0.0
        f = lambda r: math.exp((d - 1) * math.log(r) - lam * (r - r0) - logmax) if r > 0 else 0.0  # noqa: E731
        val, _ = integrate.quad(f, r0, r1, limit=200)
        return logmax + math.log(val)

    def _log_shell_masses(self) -> np.ndarray:
        out = np.empty(self.r_in.size)
        for i in range(self.r_in.size):
            out[i] = -0.5 * self.epsilon * self.level[i] + self._log_radial_integral(i)
        return out

    # -- density -----------------------------------------------------------------------------
    def score(self, y: ArrayLike) -> np.ndarray:
        """s~(y) (texp) or lt(y) (uniform) at points y of shape (..., d)."""
        y = np.asarray(y, dtype=float)
        r = np.linalg.norm(y - self.value, ord=self.p, axis=-1)
        i = np.clip(np.searchsorted(self.r_out, r, side="left"), 0, self.r_in.size - 1)
        frac = self.lam[i] * (r - self.r_in[i]) / (0.5 * self.epsilon)
        s = self.level[i] + (frac if self.law == "texp" else 0.0)
        return np.where(r == 0, 1.0 if self.law == "texp" else 0.0, s)

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        const = self.log_norm + math.log(self.d) + _lp_ball_log_volume(self.d, self.p)
        return -0.5 * self.epsilon * self.score(y) - const

    def radial_cdf(self, r: ArrayLike) -> np.ndarray:
        """P(||M(x) - f(x)||_p <= r), exactly."""
        r = np.asarray(r, dtype=float)
        i = np.clip(np.searchsorted(self.r_out, r, side="left"), 0, self.r_in.size - 1)
        before = np.concatenate([[0.0], self._cum])[i]
        part = np.empty(r.shape)
        flat_r, flat_i, flat_p = r.ravel(), i.ravel(), part.ravel()
        for j in range(flat_r.size):
            k = flat_i[j]
            hi = min(max(flat_r[j], self.r_in[k]), self.r_out[k])
            flat_p[j] = self._partial(k, hi)
        return np.clip(before + self.shell_prob[i] * part, 0.0, 1.0)

    def _partial(self, i: int, r: float) -> float:
        """Fraction of shell i's mass at radius <= r."""
        from scipy import special

        d, lam, r0, r1 = self.d, self.lam[i], self.r_in[i], self.r_out[i]
        if r <= r0:
            return 0.0
        if lam == 0:
            return (r**d - r0**d) / (r1**d - r0**d)
        a0, ar, a1 = (
            special.gammainc(d, lam * r0),
            special.gammainc(d, lam * r),
            special.gammainc(d, lam * r1),
        )
        if a1 - a0 > 1e-12:
            return float((ar - a0) / (a1 - a0))
        q0, qr, q1 = (special.gammaincc(d, lam * v) for v in (r0, r, r1))
        return float((q0 - qr) / (q0 - q1)) if q0 > q1 else 1.0

    # -- sampling ----------------------------------------------------------------------------
    def _radius(self, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Inverse CDF of the radius inside shells i (Gamma(d, lam) truncated to the shell)."""
        from scipy import special

        d = self.d
        lam, r0, r1 = self.lam[i], self.r_in[i], self.r_out[i]
        out = np.empty(i.size)
        flat = lam == 0
        out[flat] = (r0[flat] ** d + u[flat] * (r1[flat] ** d - r0[flat] ** d)) ** (1 / d)
        g = ~flat
        if g.any():
            lg, a, b, ug = lam[g], r0[g], r1[g], u[g]
            p0, p1 = special.gammainc(d, lg * a), special.gammainc(d, lg * b)
            q0, q1 = special.gammaincc(d, lg * a), special.gammaincc(d, lg * b)
            lower = p0 < 0.5
            with np.errstate(divide="ignore", invalid="ignore"):
                via_p = special.gammaincinv(d, p0 + ug * (p1 - p0)) / lg
                via_q = special.gammainccinv(d, q0 - ug * (q0 - q1)) / lg
            res = np.where(lower, via_p, via_q)
            out[g] = np.clip(res, a, b)
        return out

    def _directions(self, m: int, gen: np.random.Generator) -> np.ndarray:
        """theta = g / ||g||_p with g_i of density proportional to exp(-|t|^p)."""
        d, p = self.d, self.p
        if p == 1:
            g = gen.laplace(size=(m, d))
        elif p == 2:
            g = gen.normal(size=(m, d))
        elif math.isinf(p):
            g = gen.uniform(-1, 1, size=(m, d))
        else:
            g = gen.gamma(1 / p, 1.0, size=(m, d)) ** (1 / p)
            g *= np.where(gen.random((m, d)) < 0.5, -1.0, 1.0)
        return g / np.linalg.norm(g, ord=p, axis=1, keepdims=True)

    def sample_radius(self, size: int, rng: Any = None) -> np.ndarray:
        """Radii ||M(x) - f(x)||_p: a shell by its mass, then inverse CDF inside it."""
        gen = resolve_rng(rng)
        i = np.minimum(
            np.searchsorted(self._cum, gen.random(size), side="right"), self._cum.size - 1
        )
        return self._radius(i, gen.random(size))

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        gen = resolve_rng(rng)
        m = 1 if size is None else int(np.prod(size))
        r = self.sample_radius(m, gen)
        out = self.value + r[:, None] * self._directions(m, gen)
        if size is None:
            return out[0]
        shape = (size,) if np.isscalar(size) else tuple(size)
        return out.reshape(*shape, self.d)

    def sample_rejection_l1(
        self, size: int, rng: Any = None, max_tries: int = 10_000
    ) -> np.ndarray:
        """The paper's reference sampler (p = 1, texp): shell by mass, then i.i.d. Laplace(1/lam)
        vectors until the L1 norm lands in the shell (Sec. 5.1)."""
        if self.p != 1 or self.law != "texp":
            raise ValidationError("the rejection reference sampler is for p = 1 and law='texp'")
        gen = resolve_rng(rng)
        shells = np.minimum(
            np.searchsorted(self._cum, gen.random(size), side="right"), self._cum.size - 1
        )
        out = np.empty((size, self.d))
        for j, i in enumerate(shells):
            for _ in range(max_tries):
                v = gen.laplace(0.0, 1 / self.lam[i], self.d)
                r = np.abs(v).sum()
                if self.r_in[i] < r <= self.r_out[i]:
                    out[j] = self.value + v
                    break
            else:
                raise RuntimeError("rejection sampler: no acceptance within max_tries")
        return out

    def error_mean_norm(self, n_grid: int = 4001) -> float:
        """E||M(x) - f(x)||_p by integrating the radial survival function."""
        hi = (
            float(self.r_out[np.isfinite(self.r_out)].max())
            if np.isfinite(self.r_out).any()
            else 1.0
        )
        tail_scale = 1.0 / self.lam[-1] if self.lam[-1] > 0 else 0.0
        top = hi + 60 * tail_scale + 60 * self.d * tail_scale
        grid = np.linspace(0.0, top, n_grid)
        surv = 1.0 - self.radial_cdf(grid)
        from scipy.integrate import trapezoid

        return float(trapezoid(surv, grid))

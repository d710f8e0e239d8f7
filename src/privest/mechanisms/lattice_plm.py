"""PLM and inverse sensitivity for medians and quantiles on a public lattice, sampled exactly.

Paper 002, Def. 3.1, Algorithm 1 and Sec. 4.2, restricted to the lattice of
:mod:`privest.mechanisms.profiles.lattice` (indices ``lo .. hi``, output ``index * unit``).
With the integer reaches ``U_l``, ``D_l`` (l = 0..k), upper piece l holds the lattice points
``U_{l-1} + i`` for ``i = 1 .. L``, ``L = U_l - U_{l-1}`` (lower pieces mirrored), and the
point ``f(x) = U_0`` itself is its own piece (level 0, ``L = 1``). Every lattice point in
``[lo, hi]`` lies in exactly one piece, whatever the data, so the support is public. The
score of point ``i`` of a level-l piece is

* PLM: ``s = l + i / L`` (Def. 3.1 evaluated at the lattice point; ``s(f(x)) = 1``);
* INV: ``s = l`` (the path length, eq. M.2; 0 at ``f(x)``),

and ``P(y | x) = exp(-eps' s(y; x) / 2) / Z(x)`` over the lattice points. Tied data give
zero-length pieces around ``f(x)``, so the point ``f(x)`` keeps weight ``e^{-eps'/2}`` while
its nearest competitors sit many levels down: tied values are released exactly.

Staircase (``shape="stair"``, the default of :class:`~privest.PiecewiseLaplace`). With the
public rational ``c = 1/(1 + e^{eps/4})`` (:func:`stair_fraction`), point i of a level-l
piece scores ``g = l + [i/L > c]``: the first ``m = floor(c L)`` points of each piece stay
flat at the piece's level and the rest sit one level (a factor ``e^{-eps'/2}``) lower;
``g(f(x)) = 1``. Writing the PLM score as ``s = l + i/L``, ``g = ceil(s - c)``: a
non-decreasing function of s with ``g(s + 1) = g(s) + 1``, so ``|s(y;x) - s(y;x')| <= 1``
(Thm. 1, below) gives ``|g(y;x) - g(y;x')| <= 1`` (if ``s' <= s + 1`` then
``g(s') <= g(s + 1) = g(s) + 1``, and symmetrically): g is a sensitivity-1 score and the
argument below applies to it unchanged. Each piece is two uniform runs (levels l and
l + 1), sampled like INV. This is the two-level shape of the staircase mechanism (Geng and
Viswanath 2014) applied to the PLM score; in exact calculations it lowers the expected
error by 0-34% against the truncated exponential (docs/piecewise-laplace.md).

Privacy (pure eps-DP, swap neighbours). Thm. 1 of paper 002 shows
``|s(y; x) - s(y; x')| <= 1`` for every real y (PLM), and Cor. 3.1 gives the same for the
path length (INV: if ``D_l(x) <= y <= U_l(x)`` then ``D_{l+1}(x') <= y <= U_{l+1}(x')``);
both rest only on Cor. 3.1, which the integer reaches satisfy exactly (order statistics of
one record-wise map of the data, truncated with the range-end tail). Lattice points are
real numbers, so the bound holds at each of them, and the exponential mechanism over the
fixed finite set of lattice points with a sensitivity-1 score and weight ``exp(-eps' s/2)``
has ``P(y|x) / P(y|x') <= e^{eps'/2} Z(x') / Z(x) <= e^{eps'}``.

Exact sampling (this is what makes the guarantee hold for the released float). Let
``eps' = eps (1 - 2^-40)`` (a rational: eps is a dyadic float). A draw repeats, with uniform
integers from the caller's generator (:class:`~privest.mechanisms.samplers.bigint.Bits`):

1. pick piece j with probability ``W_j / sum W``, integers
   ``W_j = floor(2^P E_l) L_j`` with ``E_l`` the correctly rounded 60-digit decimal
   ``exp(-eps' l / 2)`` (``decimal.Context.exp``) and ``P`` large enough that
   ``|W_j / (2^P e^{-eps' l/2} L_j) - 1| <= eta = 2^-90``;
2. pick ``i`` uniform in ``1 .. L_j``;
3. PLM: accept with the exact Bernoulli(``exp(-eps' i / (2 L_j))``) (Canonne, Kamath and
   Steinke 2020, Alg. 1, in Python integers); INV and the staircase (whose two runs per
   piece are pieces here, with levels l and l + 1): accept. Otherwise start again.

The accepted point has probability proportional to ``e^{-eps' s(y)/2} (1 + delta_j)`` with
``|delta_j| <= eta``, so the released law's ratio is at most
``e^{eps'} ((1 + eta)/(1 - eta))^2 <= e^{eps' + 5 eta} <= e^{eps}`` for ``eps >= 2^-40``:
the guarantee is exactly eps. Each round accepts with probability at least ``e^{-eps/2}``.
What this resists and what not: docs/budget.md, "Float safety" (timing is not covered).
"""

from __future__ import annotations

import decimal
import functools
import math
import operator
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privest.errors import ValidationError
from privest.mechanisms.laws.base import OutputLaw
from privest.mechanisms.profiles.lattice import (
    LatticeGrid,
    LatticeProfile,
    inward_target,
    lattice_order_profile,
)
from privest.mechanisms.samplers.bigint import Bits
from privest.rng import resolve_rng
from privest.validation import check_bounds, check_epsilon, check_probabilities

__all__ = ["ETA", "SHAPES", "TARGETS", "LatticeProfileLaw", "run_epsilon", "stair_fraction"]

#: in-piece shapes: PLM's truncated exponential, INV's uniform, the two-level staircase
SHAPES = ("texp", "uniform", "stair")
#: rank targets of a quantile: x_(k), half a rank inward, or the public rule choosing them
TARGETS = ("rank", "inward", "auto")

#: relative error bound of the integer piece weights
ETA = 2.0**-90
#: eps' = eps (1 - MARGIN) covers the weights' rounding
MARGIN = Fraction(1, 2**40)
#: default truncation: tail mass target (paper 002, Sec. 5.2; privest's choice). The tail
#: piece runs to the range end, so its share of E|err| is up to tau times the bounds' width:
#: 1e-6 left a floor of ~3e-4 at bounds (-1000, 1000); 1e-15 costs ~35/eps more levels
_TAU = 1e-15


def run_epsilon(epsilon: float) -> Fraction:
    """eps' = eps (1 - 2^-40), the exact rational the lattice law runs at."""
    if epsilon < 2.0**-40:
        raise ValidationError(f"epsilon: {epsilon!r} is below 2^-40, too small for the lattice")
    return Fraction(epsilon) * (1 - MARGIN)


def stair_fraction(epsilon: float) -> Fraction:
    """c = 1 / (1 + e^{eps/4}) as the exact rational of its float (public): the staircase's
    flat share of each piece (module docstring, "Staircase")."""
    return Fraction(1.0 / (1.0 + math.exp(check_epsilon(epsilon) / 4.0)))


def floor_share(length: np.ndarray, c: Fraction) -> np.ndarray:
    """``floor(L c)`` for each whole ``L >= 0``, exactly: ``c = num / 2^k`` (the rational
    of a float, :func:`stair_fraction`) in int64 arithmetic, splitting num in two so that no
    product overflows; Python integers for any other ``c`` or for ``L >= 2^31``."""
    num, den = c.numerator, c.denominator
    k = den.bit_length() - 1
    if den != 1 << k or not 0 <= num < 1 << 53 or length.size == 0 or length.max() >= 1 << 31:
        return np.array([ln * num // den for ln in length.tolist()], dtype=np.int64)
    s = min(k, 26)  # num = hi 2^s + lo: L hi < 2^58 and L lo < 2^57
    hi, lo = num >> s, num & ((1 << s) - 1)
    return (length * hi + ((length * lo) >> s)) >> (k - s)


def truncation_levels(epsilon: float, points: int) -> int:
    """k = ceil(2 ln(points / tau) / eps) (public): levels >= k merge into the range-end
    piece, whose weight is then at most tau times that of the point f(x)."""
    return max(1, math.ceil(2.0 * math.log(max(points, 1) / _TAU) / epsilon))


@functools.lru_cache(maxsize=1 << 14)
def _level_weight(num: int, den: int, level: int, bits: int) -> int:
    """``floor(2^bits E_l)``, ``E_l`` the correctly rounded 60-digit ``exp(-eps' l / 2)``
    with ``eps' = num / den`` (module docstring, step 1); public inputs only, so it is
    computed once per process for each (eps, level) and reused by every release."""
    ctx = decimal.Context(prec=60)
    x = ctx.divide(decimal.Decimal(-num * level), decimal.Decimal(2 * den))
    return int(ctx.multiply(ctx.exp(x), decimal.Decimal(2**bits)))


@functools.lru_cache(maxsize=64)
def _level_table(num: int, den: int, top: int, bits: int) -> tuple[tuple[int, ...], np.ndarray]:
    """``floor(2^bits E_l)`` for l = 0 .. top (:func:`_level_weight`) and the same over
    ``2^bits`` as floats (public inputs only: computed once per process)."""
    table = tuple(_level_weight(num, den, lv, bits) for lv in range(top + 1))
    factor = np.array([w / (1 << bits) for w in table])
    factor.flags.writeable = False
    return table, factor


class LatticeProfileLaw(OutputLaw):
    """PLM (``shape="texp"``), its staircase (``"stair"``) or INV (``"uniform"``) on a
    lattice (module docstring).

    ``LatticeProfileLaw.for_statistic(x, "median", epsilon=1, bounds=(0, 100),
    resolution=1)``. A curator's view like every law: never publish it.
    """

    def __init__(self, profile: LatticeProfile, epsilon: float, shape: str = "texp"):
        if shape not in SHAPES:
            raise ValidationError(f"shape: {shape!r} is not one of {', '.join(SHAPES)}")
        self.epsilon = check_epsilon(epsilon)
        self.eps_run = run_epsilon(self.epsilon)
        self.shape = shape
        self.profile = profile
        self.unit = profile.unit
        self.value = float(profile.center * profile.unit)
        up, dn = profile.upper, profile.lower
        du, dd = np.diff(up), -np.diff(dn)
        lu, ld = np.arange(1, du.size + 1), np.arange(1, dd.size + 1)
        ku, kd = du > 0, dd > 0
        level = np.concatenate([[0], lu[ku], ld[kd]]).astype(np.int64)
        length = np.concatenate([[1], du[ku], dd[kd]]).astype(np.int64)
        inner = np.concatenate([[profile.center - 1], up[:-1][ku], dn[:-1][kd]]).astype(np.int64)
        side = np.concatenate([[1], np.ones(ku.sum()), -np.ones(kd.sum())]).astype(np.int64)
        self._pieces = level, side  # keyed on first use by the law (:meth:`_locate`)
        if shape == "stair":
            self._split_stairs(level, length, inner, side)
        else:
            self.level, self.length, self.inner, self.side = level, length, inner, side
        self._weights: list[int] | None = None

    # -- the law's pieces and masses: computed on first use (a release reads the integer
    # weights only, :meth:`integer_weights`) ------------------------------------------------
    @functools.cached_property
    def _piece_key(self) -> dict[tuple[int, int], int]:
        """The piece index of each (level, side) pair (side 0: the centre)."""
        level, side = self._pieces
        pairs = zip(level.tolist(), side.tolist(), strict=True)
        key = {(lv, sd): j for j, (lv, sd) in enumerate(pairs)}
        key[(0, 0)] = 0
        return key

    @functools.cached_property
    def _log_c(self) -> np.ndarray:
        """The log of each piece's in-piece mass at level 0."""
        e = float(self.eps_run)
        if self.shape == "texp":
            # log sum_{i=1}^L e^{-a i} = -a + log(1 - e^{-eps/2}) - log(1 - e^{-a})
            a = 0.5 * e / self.length
            return -a + math.log(-math.expm1(-0.5 * e)) - np.log(-np.expm1(-a))
        return np.log(self.length.astype(float))

    @functools.cached_property
    def _log_mass(self) -> np.ndarray:
        return -0.5 * float(self.eps_run) * self.level + self._log_c

    @functools.cached_property
    def log_norm(self) -> float:
        """The log of the total mass of the pieces."""
        from scipy.special import logsumexp

        return float(logsumexp(self._log_mass))

    @functools.cached_property
    def prob(self) -> np.ndarray:
        """Each piece's probability."""
        return np.exp(self._log_mass - self.log_norm)

    def _split_stairs(self, level, length, inner, side) -> None:
        """Staircase: piece j splits into its first ``m_j = floor(c L_j)`` points (level l)
        and the rest (level l + 1), both uniform (module docstring, "Staircase")."""
        flat = floor_share(length, stair_fraction(self.epsilon))
        self._flat = flat
        # piece j gives its flat run (if m_j > 0), then its step down (if L_j > m_j)
        keep = np.column_stack([flat > 0, length > flat]).ravel()
        slot = np.cumsum(keep) - 1
        self._sub = tuple(np.where(keep[i::2], slot[i::2], -1).astype(np.int64) for i in (0, 1))

        def runs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
            return np.column_stack([first, second]).ravel()[keep].astype(np.int64)

        self.level, self.length = runs(level, level + 1), runs(flat, length - flat)
        self.inner, self.side = runs(inner, inner + side * flat), runs(side, side)

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
        shape: str = "texp",
        target: str = "rank",
    ) -> LatticeProfileLaw:
        """``target``: ``"rank"`` (x_(k), k = clip(ceil(q n), 1, n)), ``"inward"`` (half a
        rank inward) or ``"auto"`` (:func:`~privest.mechanisms.profiles.lattice.
        inward_target`, public: n, q, eps)."""
        eps = check_epsilon(epsilon)
        if target not in TARGETS:
            raise ValidationError(f"target: {target!r} is not one of {', '.join(TARGETS)}")
        n = int(np.size(x))
        inward = target == "inward" or (
            target == "auto" and inward_target(statistic, quantile, n, eps)
        )
        ((a, b),) = check_bounds(bounds, 1).tolist()
        grid = LatticeGrid.for_bounds(float(a), float(b), resolution)
        prof = lattice_order_profile(
            x,
            statistic,
            bounds,
            levels=truncation_levels(eps, grid.kb - grid.ka + 1),
            quantile=quantile,
            resolution=resolution,
            clip=clip,
            inward=inward,
        )
        return cls(prof, eps, shape)

    # -- exact sampler ---------------------------------------------------------------------
    def integer_weights(self) -> list[int]:
        """``W_j = floor(2^P E_l) L_j`` (module docstring, step 1)."""
        if self._weights is None:
            weight = map(self._level_table[0].__getitem__, self.level.tolist())
            self._weights = list(map(operator.mul, weight, self.length.tolist()))
        return self._weights

    def sample_index(self, bits: Bits) -> int:
        """One exact draw of the lattice index (module docstring, steps 1-3)."""
        total = self._total()
        num, den = self.eps_run.numerator, self.eps_run.denominator
        texp = self.shape == "texp"
        while True:
            j = self._piece_of(bits.below(total))
            length = int(self.length[j])
            i = bits.below(length) + 1
            if texp and not bits.bernoulli_exp(num * i, 2 * den * length):
                continue
            return int(self.inner[j]) + int(self.side[j]) * i

    # -- step 1 without the list of piece weights: a weight is ``floor(2^P E_l)`` (public:
    # eps and the level) times the piece's length, so a sum of weights is a sum over levels of
    # that factor times the lengths at the level (int64, at most the lattice's points) ---------
    @functools.cached_property
    def _bits(self) -> int:
        """P of step 1 (module docstring)."""
        return 100 + math.ceil(float(self.eps_run) * int(self.level.max()) / (2 * math.log(2))) + 1

    @property
    def _level_table(self) -> tuple[tuple[int, ...], np.ndarray]:
        """``floor(2^P E_l)`` for l = 0 .. top, and the same over ``2^P`` as floats."""
        eps = self.eps_run
        return _level_table(eps.numerator, eps.denominator, int(self.level.max()), self._bits)

    def _weight_below(self, m: int) -> int:
        """``W_0 + ... + W_{m-1}`` (:meth:`integer_weights`), exactly: the lengths add to at
        most the lattice's points, so below ``2^53`` points their float sums are exact."""
        top = int(self.level.max())
        if self.profile.hi - self.profile.lo < 1 << 53:
            sums = np.bincount(self.level[:m], weights=self.length[:m], minlength=top + 1)
            per_level = sums.astype(np.int64).tolist()
        else:
            acc = np.zeros(top + 1, dtype=np.int64)
            np.add.at(acc, self.level[:m], self.length[:m])
            per_level = acc.tolist()
        table, _ = self._level_table
        return sum(map(operator.mul, table, per_level))

    def _total(self) -> int:
        """``sum W``, and the float prefix sums of the weights over ``2^P`` that
        :meth:`_piece_of` starts from."""
        if not hasattr(self, "_total_w"):
            self._total_w = self._weight_below(self.level.size)
            _, factor = self._level_table
            self._cum_f = np.cumsum(factor[self.level] * self.length)
        return self._total_w

    def _piece_of(self, u: int) -> int:
        """``bisect_right`` of ``u`` in the prefix sums of :meth:`integer_weights`. The float
        prefix sums are within ``(size + 3) 2^-53`` of the exact ones relative to the total
        (positive terms, each rounded three times), so a ``u`` farther than
        ``(size + 4) 2^-50`` of the total from the proposed piece's ends lies in it; nearer,
        exact integer sums settle it."""
        cum, size = self._cum_f, self.level.size
        v = u / (1 << self._bits)
        j = min(int(np.searchsorted(cum, v, side="right")), size - 1)
        margin = (size + 4) * 2.0**-50 * cum[-1]
        if (j == 0 or cum[j - 1] + margin <= v) and v + margin < cum[j]:
            return j
        table, _ = self._level_table
        level, length = self.level, self.length

        def weight(i: int) -> int:
            return table[int(level[i])] * int(length[i])

        below = self._weight_below(j)  # W_0 + ... + W_{j-1}
        while j > 0 and below > u:
            j -= 1
            below -= weight(j)
        while below + weight(j) <= u:
            below += weight(j)
            j += 1
        return j

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
    def _locate(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(piece index, offset i) of lattice indices k inside [lo, hi]."""
        p = self.profile
        up, dn = p.upper, p.lower
        top = len(up) - 1
        lu = np.searchsorted(up, k, side="left")  # least l with U_l >= k
        ld = np.searchsorted(-dn, -k, side="left")  # least l with D_l <= k
        above = k > p.center
        lvl = np.clip(np.where(above, lu, ld), 0, top)
        sgn = np.where(above, 1, np.where(k < p.center, -1, 0))
        inner = np.where(above, up[np.maximum(lvl - 1, 0)], dn[np.maximum(lvl - 1, 0)])
        i = np.where(sgn == 0, 1, np.abs(k - inner))
        key = self._piece_key
        piece = np.array([key[(int(a), int(b))] for a, b in zip(lvl, sgn, strict=True)])
        piece = piece.astype(np.int64)
        if self.shape == "stair":  # the flat part (i <= m_j) or the step down
            m = self._flat[piece]
            sub_a, sub_b = self._sub
            low = i <= m
            piece = np.where(low, sub_a[piece], sub_b[piece])
            i = np.where(low, i, i - m)
        return piece, i

    def log_pmf_index(self, k: ArrayLike) -> np.ndarray:
        """log P(index = k) (``-inf`` off ``[lo, hi]``)."""
        k = np.atleast_1d(np.asarray(k, dtype=np.int64))
        p = self.profile
        inside = (k >= p.lo) & (k <= p.hi)
        out = np.full(k.shape, -np.inf)
        if inside.any():
            j, i = self._locate(k[inside])
            s = self.level[j].astype(float)
            if self.shape == "texp":
                s = s + i / self.length[j]
            out[inside] = -0.5 * float(self.eps_run) * s - self.log_norm
        return out

    def logpdf(self, y: ArrayLike) -> np.ndarray:
        """Log probability mass at ``y`` (``-inf`` off the lattice)."""
        y = np.asarray(y, dtype=float)
        k = np.rint(y / self.unit)
        on = (k * self.unit == y) & np.isfinite(k)
        out = np.full(y.shape, -np.inf)
        if on.any():
            out[on] = self.log_pmf_index(k[on].astype(np.int64))
        return out

    def _fraction(self, t: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Share of piece j's mass on its offsets 1..t (t clipped to [0, L])."""
        length = self.length[j]
        t = np.clip(t, 0, length).astype(float)
        if self.shape != "texp":
            return t / length
        a = 0.5 * float(self.eps_run) / length
        return np.expm1(-a * t) / np.expm1(-a * length)

    def cdf(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) <= y)."""
        return self._cdf_index(np.floor(np.asarray(y, dtype=float) / self.unit))

    def cdf_left(self, y: ArrayLike) -> np.ndarray:
        """P(M(x) < y): the law has atoms (its lattice points), so not the CDF itself."""
        return self._cdf_index(np.ceil(np.asarray(y, dtype=float) / self.unit) - 1.0)

    def _cdf_index(self, kk: np.ndarray) -> np.ndarray:
        """P(index <= kk) for (float) integers kk."""
        kk = np.asarray(kk, dtype=float)[..., None]
        j = np.arange(self.level.size)
        inner, side = self.inner, self.side
        up_part = self._fraction(kk - inner, j)  # side +1: points inner + 1 .. inner + t
        low_part = 1.0 - self._fraction(inner - kk - 1, j)  # side -1: points <= kk
        frac = np.where(side > 0, up_part, low_part)
        return np.clip(np.sum(self.prob * frac, axis=-1), 0.0, 1.0)

    # -- exact error laws ----------------------------------------------------------------------
    def _offsets(self) -> np.ndarray:
        """|err| of offset i in piece j is (o_j + i) * unit."""
        return (self.side * (self.inner - self.profile.center)).astype(float)

    def _offset_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """E i and Var i in each piece (closed forms, no cancellation at large L)."""
        length = self.length.astype(float)
        if self.shape != "texp":
            return (length + 1) / 2, (length**2 - 1) / 12
        h = 0.5 * float(self.eps_run)
        a = h / length
        # E i = 1 + 1/(e^a - 1) - L/(e^{aL} - 1); Var i = h(a) - L^2 h(aL), h(t) = 1/(4 sinh^2(t/2))
        mean = 1 + length * (1 / (length * np.expm1(a)) - 1 / math.expm1(h))
        var = length**2 * (
            1 / (4 * (length * np.sinh(a / 2)) ** 2) - 1 / (4 * math.sinh(h / 2) ** 2)
        )
        return mean, np.maximum(var, 0.0)

    def error_mean_abs(self, reference: float | None = None) -> float:
        """E|M(x) - f(x)|, or E|M(x) - reference| (e.g. x_(ceil(qn)) for an inward target)."""
        mean, _ = self._offset_moments()
        if reference is None:
            return float(np.sum(self.prob * (self._offsets() + mean)) * self.unit)
        # |index - t| = |o + i| per piece, o = side (inner - t); the points with o + i < 0
        # (i <= i0 = floor(-o)) add 2 (-o F(i0) - M1(i0)), F / M1 the partial mass / moment
        o = self.side * (self.inner - reference / self.unit)
        i0 = np.clip(np.floor(-o), 0, self.length)
        j = np.arange(self.level.size)
        mass = self._fraction(i0, j)
        part = np.where(i0 > 0, mass * self._partial_mean(i0, j), 0.0)
        e = o + mean + 2.0 * np.where(i0 > 0, -o * mass - part, 0.0)
        return float(np.sum(self.prob * e) * self.unit)

    def _partial_mean(self, t: np.ndarray, j: np.ndarray) -> np.ndarray:
        """E[i | i <= t] inside piece j (t >= 1): the piece mean with L replaced by t."""
        t = np.maximum(t, 1.0)
        if self.shape != "texp":
            return (t + 1) / 2
        a = 0.5 * float(self.eps_run) / self.length[j]
        return 1 + t * (1 / (t * np.expm1(a)) - 1 / np.expm1(a * t))

    def error_mse(self) -> float:
        mean, var = self._offset_moments()
        o = self._offsets()
        return float(np.sum(self.prob * ((o + mean) ** 2 + var)) * self.unit**2)

    def error_cdf(self, alpha: ArrayLike, reference: float | None = None) -> np.ndarray:
        """P(|M(x) - f(x)| <= alpha), or P(|M(x) - reference| <= alpha)."""
        a = np.asarray(alpha, dtype=float)
        if reference is not None:  # P(t - a <= index <= t + a), t = reference / unit
            t = reference / self.unit
            hi = self._cdf_index(np.floor(t + a / self.unit + 1e-9))
            lo = self._cdf_index(np.ceil(t - a / self.unit - 1e-9) - 1)
            return np.clip(hi - lo, 0.0, 1.0)
        t = np.floor(a[..., None] / self.unit + 1e-9) - self._offsets()
        frac = self._fraction(t, np.arange(self.level.size))
        return np.clip(np.sum(self.prob * frac, axis=-1), 0.0, 1.0)

    def error_quantile(self, p: ArrayLike) -> np.ndarray:
        """The p-quantiles of |err|: least lattice distance d with P(|err| <= d) >= p."""
        q = check_probabilities(p)
        top = float(
            max(self.profile.hi - self.profile.center, self.profile.center - self.profile.lo)
        )
        out = np.empty(q.size)
        for n, target in enumerate(q.ravel()):
            lo, hi = -1.0, top  # cdf(lo) < target <= cdf(hi)
            while hi - lo > 1:
                mid = math.floor((lo + hi) / 2)
                if self.error_cdf(mid * self.unit) >= target:
                    hi = mid
                else:
                    lo = mid
            out[n] = hi * self.unit
        return out.reshape(q.shape)

    def privacy_report(self) -> dict[str, float]:
        return {"pure_dp": self.epsilon, "bounded_range": self.epsilon}

    def __repr__(self) -> str:
        return (
            f"LatticeProfileLaw({self.profile.statistic}, shape={self.shape!r}, "
            f"epsilon={self.epsilon:g}, unit={self.unit:g}, pieces={self.level.size})"
        )

"""Float-safe noise: exact discrete Laplace and Gaussian noise on a public power-of-two grid.

Adding ``value + scale * Z`` in floating point leaks: the set of floats the sum can take
depends on the low-order bits of ``value``, so an output can be impossible under a
neighbouring data set (Mironov 2012). privest never releases such a sum. A central release
of a real statistic ``f(x)`` with sensitivity ``Delta`` is instead

    y = g * (round(f(x) / g) + K),   K ~ discrete Laplace or discrete Gaussian on Z,

with ``g = 2^k`` a public grid step far below the noise scale (``scale / g`` in
``[2^bits, 2^(bits+1))``), so every output is a multiple of ``g`` and every multiple of ``g``
is possible under every data set. Rounding moves ``f`` by at most ``g/2``, so the integer
``round(f/g)`` has sensitivity ``floor(Delta/g) + 1`` (plus the float error of computing
``f``, which the callers bound); the noise is calibrated to that integer sensitivity, so
the guarantee holds exactly for the integers, and ``g`` times an integer below 2^53 is an
exact float. ``K`` is drawn with integer arithmetic only (Canonne, Kamath and Steinke 2020,
Algorithms 1-3: Bernoulli(exp(-gamma)) for rational gamma, discrete Laplace, discrete
Gaussian), from the caller's generator; every draw is a bounded integer from
``Generator.integers`` (Lemire's unbiased method), vectorised over a batch.

What this resists: the floating-point attacks on the noise and on the precision of the
statistic. What it does not: timing (the samplers loop a data-independent but random
number of times; the statistic's computation time depends on the data), and any channel
outside the released number.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from privest.errors import ValidationError
from privest.mechanisms.samplers.bigint import Bits, discrete_gaussian_big, discrete_laplace_big
from privest.mechanisms.samplers.wide import WIDE_SIGMA2, discrete_gaussian_wide

__all__ = [
    "LatticeGaussian",
    "LatticeLaplace",
    "MAX_INT",
    "bernoulli_exp",
    "grid_step",
    "lattice_gaussian",
    "lattice_gaussian_zcdp",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "sample_discrete_laplace_many",
    "to_grid",
]

#: integers of the lattice stay below 2^53, so ``g * k`` is an exact float
MAX_INT = 2**53
#: up to this many draws, the samplers run in Python integers
#: (:mod:`~privest.mechanisms.samplers.bigint`): about 30 us a draw against a fixed
#: 0.5 ms of the vectorised loops (same laws, other streams)
FEW = 16


def grid_step(scale: float, bits: int) -> float:
    """The public grid step ``g = 2^k`` with ``scale / g`` in ``[2^bits, 2^(bits+1))``."""
    if not (scale > 0 and math.isfinite(scale)):
        raise ValidationError(f"noise scale {scale!r} must be finite and > 0")
    return math.ldexp(1.0, math.floor(math.log2(scale)) - bits)


def to_grid(value: np.ndarray | float, step: float) -> np.ndarray:
    """``round(value / step)`` as int64 (``step`` a power of two: the division is exact)."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.asarray(value, dtype=float) / step
    if not np.all(np.isfinite(v)) or np.any(np.abs(v) >= MAX_INT / 4):
        raise ValidationError(
            "the statistic is too large for the noise's grid (more than 2^51 grid steps); "
            "use bounds of ordinary size"
        )
    return np.rint(v).astype(np.int64)


# ------------------------------------------------------------------ exact samplers
def _bernoulli_exp_unit(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS20 Alg. 1, first part), vectorised.

    K = 1; while Bernoulli(gamma / K): K += 1; return K odd. Each Bernoulli(num / (den K))
    is ``integers(0, den K) < num``.
    """
    out = np.empty(num.shape, dtype=bool)
    k = np.ones(num.shape, dtype=np.int64)
    active = np.arange(num.size)
    while active.size:
        draw = rng.integers(0, den[active] * k[active])
        go_on = draw < num[active]
        k[active[go_on]] += 1
        done = active[~go_on]
        out[done] = (k[done] % 2) == 1
        active = active[go_on]
    return out


def bernoulli_exp(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(-num/den)) for integers num >= 0, den > 0 (CKS20 Alg. 1).

    For gamma > 1: floor(gamma) Bernoulli(exp(-1)) draws and one Bernoulli(exp(-frac)),
    all of which must succeed. ``num * K`` and ``den * K`` must fit in int64 (callers keep
    ``den`` below 2^55).
    """
    num = np.asarray(num, dtype=np.int64).ravel()
    den = np.broadcast_to(np.asarray(den, dtype=np.int64), num.shape).ravel()
    whole, frac = np.divmod(num, den)
    alive = _bernoulli_exp_unit(frac, den.copy(), rng)
    step = 0
    while True:
        todo = np.flatnonzero(alive & (whole > step))
        if not todo.size:
            return alive
        one = np.ones(todo.size, dtype=np.int64)
        alive[todo] = _bernoulli_exp_unit(one, one.copy(), rng)
        step += 1


def _geometric_exp1(m: int, rng: np.random.Generator) -> np.ndarray:
    """m draws of V = number of successes of Bernoulli(exp(-1)) before the first failure."""
    v = np.zeros(m, dtype=np.int64)
    active = np.arange(m)
    one = np.ones(m, dtype=np.int64)
    while active.size:
        ok = _bernoulli_exp_unit(one[: active.size], one[: active.size].copy(), rng)
        v[active[ok]] += 1
        active = active[ok]
    return v


def sample_discrete_laplace(
    scale: Fraction | int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``size`` exact draws with P(k) proportional to exp(-|k| / scale) (CKS20 Alg. 2).

    ``scale = t / s`` is a positive rational with ``t`` below 2^31 (:func:`_laplace_draws`).
    """
    if type(scale) is int and 0 < scale < 2**31 and size <= FEW:  # the few-draws path below
        return np.array(discrete_laplace_big(scale, size, rng, Bits(rng, block=64)), np.int64)
    return sample_discrete_laplace_many([scale], [size], rng)[0]


def sample_discrete_laplace_many(
    scales: Sequence[Fraction | int], sizes: Sequence[int], rng: np.random.Generator
) -> list[np.ndarray]:
    """``sizes[i]`` exact discrete Laplace draws of scale ``scales[i]`` for each ``i``, in
    one vectorised call (the loops' fixed cost paid once for all)."""
    pairs = []
    for scale in scales:
        scale = Fraction(scale)
        if scale <= 0 or scale.numerator >= 2**31:
            raise ValidationError(f"discrete Laplace scale {scale} must be in (0, 2^31)")
        pairs.append((scale.numerator, scale.denominator))
    sizes = [int(n) for n in sizes]
    if sum(sizes) <= FEW and all(s == 1 for _, s in pairs):
        bits = Bits(rng, block=64)
        return [
            np.array(discrete_laplace_big(t, n, rng, bits), dtype=np.int64)
            for (t, _), n in zip(pairs, sizes, strict=True)
        ]
    t = np.repeat(np.array([t for t, _ in pairs], dtype=np.int64), sizes)
    s = np.repeat(np.array([s for _, s in pairs], dtype=np.int64), sizes)
    return np.split(_laplace_draws(t, s, rng), np.cumsum(sizes)[:-1])


def _laplace_draws(t: np.ndarray, s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per entry of scale ``t / s`` (CKS20 Alg. 2). Per candidate: U ~
    Unif{0..t-1}, accepted with Bernoulli(exp(-U/t)); for an entry's first accepted U, V ~
    Geometric(1 - e^-1), Y = floor((U + t V) / s), a fair sign, and (-, 0) starts the entry
    again. Each round draws up to 8 candidates per entry still to fill (about 2048 in all,
    at least 1 each), so a few hundred draws take one or two rounds."""
    out = np.empty(t.size, dtype=np.int64)
    todo = np.arange(t.size)
    while todo.size:
        per = min(8, -(-2048 // todo.size))
        cand = np.repeat(todo, per)  # an entry's candidates are consecutive
        tc = t[cand]
        u = rng.integers(0, tc)
        ok = np.flatnonzero(bernoulli_exp(u, tc, rng))
        first = np.ones(ok.size, dtype=bool)
        np.not_equal(cand[ok[1:]], cand[ok[:-1]], out=first[1:])
        ok = ok[first]  # each entry's first accepted candidate
        entry, u = cand[ok], u[ok]
        y = (u + t[entry] * _geometric_exp1(entry.size, rng)) // s[entry]
        neg = rng.integers(0, 2, size=entry.size).astype(bool)
        good = ~(neg & (y == 0))
        out[entry[good]] = np.where(neg, -y, y)[good]
        left = np.ones(todo.size, dtype=bool)
        left[ok[good] // per] = False  # candidate j belongs to todo[j // per]
        todo = todo[left]
    return out


def sample_discrete_gaussian(sigma2: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws with P(k) proportional to exp(-k^2 / (2 sigma2)) (CKS20 Alg. 3).

    ``sigma2`` is a positive integer. Candidates Y ~ discrete Laplace(t), t =
    floor(sqrt(sigma2)) + 1, are accepted with Bernoulli(exp(-(|Y| - sigma2/t)^2 /
    (2 sigma2))), an exact rational test: vectorised in int64 below :data:`VECTOR_SIGMA2`,
    with its exponent split in two int64 parts up to 2^60
    (:func:`~privest.mechanisms.samplers.wide.discrete_gaussian_wide`), in Python integers
    above it (and for a few draws).
    """
    sigma2 = int(sigma2)
    if sigma2 <= 0:
        raise ValidationError(f"discrete Gaussian variance {sigma2} must be positive")
    if size <= FEW or sigma2 >= WIDE_SIGMA2:
        return np.array(discrete_gaussian_big(sigma2, size, rng), dtype=np.int64)
    if sigma2 >= VECTOR_SIGMA2:
        return discrete_gaussian_wide(sigma2, size, rng)
    t = math.isqrt(sigma2) + 1
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    den_value = 2 * sigma2 * t * t  # below 2^49
    while todo.size:
        y = sample_discrete_laplace(t, todo.size, rng)
        # (|Y| - sigma2/t)^2 / (2 sigma2) = (|Y| t - sigma2)^2 / (2 sigma2 t^2)
        far = np.abs(y) > 2**30 // t  # |Y| t - sigma2 would not square within int64
        ok = np.zeros(y.size, dtype=bool)
        near = ~far
        num = (np.abs(y[near]) * t - sigma2) ** 2
        ok[near] = bernoulli_exp(num, np.full(num.size, den_value, dtype=np.int64), rng)
        for i in np.flatnonzero(far):  # probability below exp(-2^20): exact, in Python ints
            num = (abs(int(y[i])) * t - sigma2) ** 2
            ok[i] = Bits(rng, block=8).bernoulli_exp(num, den_value)
        vals = y[ok]
        out[todo[: vals.size]] = vals
        todo = todo[vals.size :]
    return out


# ------------------------------------------------------------------ noise on a lattice
#: grid resolution of Laplace noise: scale / g in [2^20, 2^21)
LAPLACE_BITS = 20
#: grid resolution of Gaussian noise: sigma / g at least 2^10
GAUSSIAN_BITS = 10
#: the grid step is at most 2^-6 of the sensitivity (over sqrt(dims) for several
#: coordinates), so rounding to the grid adds at most 1.6% to the noise of the continuous
#: calibration; one coordinate accounted exactly trades this against :data:`EXACT_SIGMA2`
SHIFT_BITS = 6
#: the one-part int64 sampler's range of variances (grid units); larger ones split the
#: exponent of the acceptance test in two (:mod:`~privest.mechanisms.samplers.wide`)
VECTOR_SIGMA2 = 2**24
#: the largest variance (grid units) of one coordinate accounted exactly: the exact profile
#: sums about 80 sigma grid points at each step of the calibration's search
EXACT_SIGMA2 = 2**24


class LatticeLaplace:
    """Pure epsilon-DP Laplace noise for a statistic of sensitivity ``sensitivity``, on a grid.

    ``g = 2^k`` with ``(sensitivity / epsilon) / g`` in ``[2^20, 2^21)``; the released integer
    ``round(f / g)`` moves by at most ``shift = floor(sensitivity / g) + 1`` between
    neighbours, and the discrete Laplace scale is the integer ``t = ceil(shift / epsilon)``,
    so P(y | x) / P(y | x') <= exp(shift / t) <= exp(epsilon) for every output y: exactly
    epsilon-DP. The effective scale ``t g`` exceeds ``sensitivity / epsilon`` by a relative
    ``(1 + epsilon) / (epsilon 2^20)`` at most. ``sensitivity`` must include the float error
    of computing ``f`` (twice its bound): the callers add it.
    """

    def __init__(self, epsilon: float, sensitivity: float):
        self.epsilon = float(epsilon)
        self.sensitivity = float(sensitivity)
        self.step = grid_step(self.sensitivity / self.epsilon, LAPLACE_BITS)
        self.shift = math.floor(self.sensitivity / self.step) + 1
        self.t = math.ceil(self.shift / self.epsilon)

    @property
    def scale(self) -> float:
        """The effective Laplace scale ``t g`` of the noise."""
        return self.t * self.step

    def release_integer(
        self, center: int, rng: np.random.Generator, size: int | None
    ) -> np.ndarray | float:
        """``size`` draws of ``g (center + K)`` for an integer ``center`` computed exactly;
        ``size=None``: one, as a float (the same draw and the same float)."""
        if abs(center) >= MAX_INT / 4:
            raise ValidationError("the statistic is too large for the noise's grid")
        k = sample_discrete_laplace(self.t, 1 if size is None else size, rng)
        if size is None:  # |center + K| < 2^53: exact as a float, and g a power of two
            return float(center + int(k[0])) * self.step
        return (k + center).astype(float) * self.step

    def release(
        self, value: float | np.ndarray, rng: np.random.Generator, size: int | None = None
    ) -> np.ndarray:
        """``g (round(value / g) + K)``, K discrete Laplace(t); ``size`` draws for a scalar."""
        c = to_grid(value, self.step)
        n = c.size if size is None else int(size)
        k = sample_discrete_laplace(self.t, n, rng)
        out = ((c.ravel() if size is None else c) + k).astype(float) * self.step
        return out.reshape(c.shape) if size is None else out


class LatticeGaussian:
    """(epsilon, delta)-DP Gaussian noise for an L2 sensitivity, on a grid (float-safe).

    ``calibration`` (``"classic"``, ``"analytic"``, ``"paper_eq3"``) gives the continuous
    sigma the grid is built around. In grid units the released integer vector moves by at
    most ``shift = floor(sensitivity / g) + 1`` (one coordinate) or ``sensitivity / g +
    sqrt(dims)`` in L2 (each coordinate rounds by at most 1/2 on each side), so the noise
    exceeds the continuous calibration by the factor ``shift g / sensitivity``. The variance
    ``sigma2`` (an integer, in grid units) is then the least one whose guarantee meets
    (epsilon, delta): rho-zCDP with its tight conversion for several coordinates
    (:class:`LatticeGaussianGuarantee`; about 6-9% in sigma against the analytic continuous
    calibration), on a grid of at most 2^-6 of the sensitivity (:data:`SHIFT_BITS`); exact
    for one coordinate, on the finest grid whose variance stays within
    :data:`EXACT_SIGMA2` (sigma at most 4096 steps): within 1.6% of the continuous
    calibration while sigma is under ~40 times the sensitivity, 12% at ~300 times, 50% at
    ~1300 times, up to 2x beyond ~2000 (docs/vocabulary.md); above ~4000 times the
    sensitivity, :class:`PrivacyParameterError`.
    ``"classic"`` and ``"paper_eq3"`` keep their larger sigma when it already meets the
    target.
    """

    def __init__(
        self,
        epsilon: float,
        delta: float,
        sensitivity: float,
        dims: int = 1,
        calibration: str = "analytic",
    ):
        from privest.accounting.gaussian import LatticeGaussianGuarantee, gaussian_sigma

        self.epsilon, self.delta = float(epsilon), float(delta)
        self.sensitivity, self.dims = float(sensitivity), int(dims)
        if self.dims < 1:
            raise ValidationError(f"dims: {dims!r} must be a positive integer")
        sigma0 = gaussian_sigma(self.epsilon, self.delta, self.sensitivity, calibration)
        step = _fine_step(sigma0, self.sensitivity, self.dims)
        while True:
            if self.dims == 1:
                step = self._exact_step(step, sigma0)
            shift = self._shift(step)
            target = math.ceil((sigma0 / step) ** 2) if calibration != "analytic" else 1
            sigma2 = self._least_sigma2(shift, step, sigma0, target, LatticeGaussianGuarantee)
            if self.dims > 1 or sigma2 < EXACT_SIGMA2:
                break
            step *= 2.0  # the exact variance outgrew its range: a coarser grid
        self.step, self.shift, self.sigma2 = step, shift, sigma2
        self.guarantee = LatticeGaussianGuarantee(sigma2, shift, self.dims)

    def _exact_step(self, step: float, sigma0: float) -> float:
        """The finest grid, from ``step`` on, whose one-coordinate variance is predicted
        within :data:`EXACT_SIGMA2` (the continuous sigma at sensitivity ``shift`` grid steps,
        with a 2% margin); :class:`PrivacyParameterError` when no grid is."""
        from privest.errors import PrivacyParameterError

        ratio = sigma0 / self.sensitivity

        def fits(g: float) -> bool:
            return (1.02 * ratio * self._shift(g)) ** 2 < EXACT_SIGMA2

        if (1.02 * ratio) ** 2 >= EXACT_SIGMA2:
            raise PrivacyParameterError(
                f"epsilon, delta: ({self.epsilon:.3g}, {self.delta:.3g}) call for Gaussian noise "
                f"{ratio:.3g} times the sensitivity; one coordinate on the exact lattice accepts "
                f"at most {math.sqrt(EXACT_SIGMA2) / 1.02:.0f} times: raise epsilon or delta "
                "(docs/vocabulary.md)"
            )
        while not fits(step):
            step *= 2.0
        return step

    def _shift(self, step: float) -> float:
        if self.dims == 1:
            return float(math.floor(self.sensitivity / step) + 1)
        return self.sensitivity / step + math.sqrt(self.dims)

    def _least_sigma2(self, shift, step, sigma0, floor_sigma2, guarantee_cls) -> int:
        """The least integer variance >= ``floor_sigma2`` meeting (epsilon, delta)."""

        def excess(s2: int) -> float:  # <= 0: s2 meets the target
            d = float(guarantee_cls(s2, shift, self.dims).delta(self.epsilon))
            return math.log(max(d, 1e-300)) - math.log(self.delta)

        if self.dims > 1:
            from privest.accounting.zcdp import zcdp_rho_for

            rho = zcdp_rho_for(self.epsilon, self.delta)
            s2 = max(floor_sigma2, math.ceil(shift**2 / (2.0 * rho)))
            while excess(s2) > 0:  # guard the last bits of the root
                s2 += 1
            return s2
        # the discrete profile is close to the continuous one at sensitivity `shift` steps:
        # bracket its variance tightly, then search it by false position (the log excess is
        # smooth in the variance), bisecting when a step does not halve the bracket; each
        # evaluation sums the exact profile over about 80 sigma grid points
        from privest.accounting.gaussian import gaussian_sigma

        pred = gaussian_sigma(self.epsilon, self.delta, shift, "analytic") ** 2
        hi = max(floor_sigma2, math.ceil(pred * 1.003))
        f_hi = excess(hi)
        while f_hi > 0:
            hi = math.ceil(hi * 1.02)
            f_hi = excess(hi)
        if floor_sigma2 > 1 and excess(floor_sigma2) <= 0:
            return floor_sigma2
        lo = max(floor_sigma2, math.floor(pred * 0.997))
        f_lo = excess(lo)
        while f_lo <= 0 and lo > 1:
            lo = max(1, math.floor(lo * 0.98))
            f_lo = excess(lo)
        bisect = False
        while hi - lo > 1:  # excess(hi) <= 0 < excess(lo)
            width = hi - lo
            if bisect:
                mid = (lo + hi) // 2
            else:
                mid = lo + round(width * f_lo / (f_lo - f_hi))
            mid = min(max(mid, lo + 1), hi - 1)
            f_mid = excess(mid)
            if f_mid <= 0:
                hi, f_hi = mid, f_mid
            else:
                lo, f_lo = mid, f_mid
            bisect = not bisect and (hi - lo) * 2 > width
        return hi

    @property
    def sigma(self) -> float:
        """The effective standard deviation ``sqrt(sigma2) g`` (close to that of N_Z)."""
        return math.sqrt(self.sigma2) * self.step

    def noise(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` draws of the integer noise K (grid units), for several releases drawn in
        one batch (:meth:`release` ``noise=``): K is independent of the data, so drawing it
        ahead leaves every release's law unchanged."""
        return sample_discrete_gaussian(self.sigma2, int(size), rng)

    def release(
        self,
        value: float | np.ndarray,
        rng: np.random.Generator,
        size: int | None = None,
        noise: np.ndarray | None = None,
    ) -> np.ndarray:
        """``g (round(value / g) + K)``, K discrete Gaussian(sigma2) per coordinate: drawn
        here, or ``noise`` from :meth:`noise` (used once, one entry per coordinate)."""
        c = to_grid(value, self.step)
        n = c.size if size is None else int(size)
        if noise is None:
            k = sample_discrete_gaussian(self.sigma2, n, rng)
        elif np.shape(noise) == (n,):
            k = np.asarray(noise, dtype=np.int64)
        else:
            raise ValidationError(f"noise: shape {np.shape(noise)}; expected ({n},)")
        out = ((c.ravel() if size is None else c) + k).astype(float) * self.step
        return out.reshape(c.shape) if size is None else out


def _fine_step(sigma: float, sensitivity: float, dims: int) -> float:
    """The grid step: at most ``sigma / 2^GAUSSIAN_BITS`` and ``sensitivity / (2^SHIFT_BITS
    sqrt(dims))`` (a power of two within a factor 2 of the smaller)."""
    if not (math.isfinite(sensitivity) and math.isfinite(sigma)):
        raise ValidationError(
            f"sensitivity: {sensitivity:.3g} (noise sd {sigma:.3g}) is beyond the float "
            "range; use bounds of ordinary size"
        )
    fine = sensitivity * 2.0 ** (GAUSSIAN_BITS - SHIFT_BITS) / math.sqrt(dims)
    return grid_step(min(sigma, fine), GAUSSIAN_BITS)


@functools.lru_cache(maxsize=256)
def lattice_gaussian(
    epsilon: float, delta: float, sensitivity: float, dims: int = 1, calibration: str = "analytic"
) -> LatticeGaussian:
    """A (cached) :class:`LatticeGaussian`: its calibration sums an exact profile."""
    return LatticeGaussian(epsilon, delta, sensitivity, dims, calibration)


def lattice_gaussian_zcdp(rho: float, sensitivity: float, dims: int = 1) -> LatticeGaussian:
    """Discrete Gaussian noise on a lattice that is ``rho``-zCDP for an L2 ``sensitivity``.

    The discrete Gaussian with variance ``sigma2`` (grid units) and a shift of at most
    ``shift`` in L2 is shift^2 / (2 sigma2)-zCDP (Canonne, Kamath and Steinke 2020, Thm 14 and
    Prop. 5 for the multivariate case); ``sigma2`` is the least integer meeting ``rho``, on
    a grid of at most 2^-6 of the sensitivity per coordinate (:data:`SHIFT_BITS`), so the
    noise is within 1.6% of the continuous sigma = sensitivity / sqrt(2 rho). For
    building mechanisms that compose several releases in zCDP (``epsilon``/``delta`` of the
    object are None: its ``guarantee`` states the single release).
    """
    from privest.accounting.gaussian import LatticeGaussianGuarantee

    if not (rho > 0 and math.isfinite(rho)):
        raise ValidationError(f"rho: {rho!r} must be finite and > 0")
    if not (sensitivity > 0 and math.isfinite(sensitivity)):
        raise ValidationError(f"sensitivity: {sensitivity!r} must be finite and > 0")
    obj = LatticeGaussian.__new__(LatticeGaussian)
    obj.epsilon = obj.delta = None
    obj.sensitivity, obj.dims = float(sensitivity), int(dims)
    step = _fine_step(sensitivity / math.sqrt(2.0 * rho), obj.sensitivity, obj.dims)
    shift = obj._shift(step)
    sigma2 = math.ceil(shift**2 / (2.0 * rho))
    obj.step, obj.shift, obj.sigma2 = step, shift, sigma2
    obj.guarantee = LatticeGaussianGuarantee(sigma2, shift, obj.dims)
    return obj

"""Privacy accounting of the ZIL mechanism (paper 000, Section 3).

The ZIL mechanism adds ``ZIL(delta, lam^2 I_d)`` noise (paper notation): with probability
delta, the *zero proportion* (``zero_prob`` in privest, whose ``delta`` is always a DP
delta), a record is released exactly, otherwise it gets symmetric multivariate Laplace
noise ``SL_d(lam^2 I)``. With ``c = diam / lam`` it is ``T_{d,c,delta}``-DP (Thm 3.1),
where ``T_{d,c}`` is the trade-off between ``SL_d(I)`` and ``c e_1 + SL_d(I)`` (eq 3.2)
and ``T_{d,c,delta}`` its shrinkage (eq 3.3). privest noises each column in units of
its public range (the box mapped to the unit cube), so ``diam = sqrt(d)`` for records
and ``1`` for single attributes.

What this module computes:

* ``d = 1``: ``T_{1,c}`` is exact, ``F_L(F_L^{-1}(1 - alpha) - sqrt(2) c)`` (Section 3.2).
* any ``d``: the closed-form limit ``beta_c = lim_d T_{d,c}`` (Prop 3.2), which is also a
  lower bound ``T_{d,c} >= beta_c`` for every ``d`` (Thm 3.2(ii)), hence a valid and
  conservative guarantee; its ``(eps, delta)`` profile ``delta_c`` (Thm 3.3).
* ``d >= 2``: a Monte Carlo *estimate* of ``T_{d,c}`` (no closed form exists). It is
  not a guarantee.

Parametrisation used throughout (derived here, checked against the integral (3.8)).
In the limit experiment (3.4) the log-likelihood ratio under H0 is
``L = c X_1 / sqrt(W) - c^2 / (2 W)``. Write its threshold as ``c h`` and put
``u = h + sqrt(2 + h^2) = sqrt(2) e^s`` with ``s = asinh(h / sqrt(2))`` and
``k = c / sqrt(2)``. Then the type I and type II errors of the likelihood-ratio test are

    a_c(h) = 2 / (u^2 + 2) exp(-c u / 2),  log a = -softplus(2 s) - k e^{s}
    b_c(h) = u^2 / (u^2 + 2) exp(-c / u),  log b = -softplus(-2 s) - k e^{-s}

(``b`` is ``a`` at ``-s``: the symmetry of Prop 3.2(ii)), and ``beta_c(alpha) = b_c(h)``
at the ``h`` with ``a_c(h) = alpha``; this ``b_c`` is exactly Prop 3.2(i)'s formula. The
profile of Thm 3.3 simplifies to ``delta_c(eps) = 1 - exp(-c / u)`` at ``h = eps / c``
(the two terms ``b_c`` and ``e^eps a_c`` share the factor ``exp(-c / u)``), which also
makes the calibration of Section 3.2 (after Thm 3.3) closed-form.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from privest.errors import PrivacyParameterError, UnreachableTargetError, ValidationError
from privest.noise import sample_sl, sl_logpdf
from privest.rng import resolve_rng
from privest.validation import check_delta, check_epsilon, check_probability

__all__ = [
    "beta_c",
    "beta_c_zil",
    "beta_type1",
    "beta_type2",
    "calibrate_c",
    "calibrate_lam",
    "check_unit",
    "delta_c",
    "delta_tilde",
    "laplace_delta",
    "laplace_tradeoff",
    "laplace_tradeoff_zil",
    "tradeoff_montecarlo",
    "unit_diameters",
    "zil_loss_law",
    "UNITS",
]

_SQRT2 = math.sqrt(2.0)
ArrayLike = float | np.ndarray


# --------------------------------------------------------------------------- helpers
def _out(x: np.ndarray) -> float | np.ndarray:
    """A float for 0-d results, the array otherwise (same shape as the input)."""
    return float(x) if np.ndim(x) == 0 else x


def _check_c(c: Any, name: str = "c") -> float:
    """The shift c = diam / lam: finite and > 0."""
    if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)):
        raise PrivacyParameterError(f"{name}: {c!r} is not a real number")
    c = float(c)
    if not (c > 0) or math.isinf(c):
        raise PrivacyParameterError(f"{name}: {c!r} is out of range; accepted: finite and > 0")
    return c


def _check_zero_prob(zero_prob: Any) -> float:
    """The zero proportion of ZIL noise, in [0, 1) (0 is plain SL noise)."""
    return check_delta(zero_prob, "zero_prob")


def _as_alpha(alpha: Any) -> np.ndarray:
    """Type I errors as a float array with values in [0, 1]."""
    try:
        a = np.asarray(alpha, dtype=float)
    except (TypeError, ValueError):
        raise ValidationError(
            f"alpha: {alpha!r} is not numeric; expected values in [0, 1]"
        ) from None
    if np.any(np.isnan(a)) or np.any(a < 0) or np.any(a > 1):
        raise ValidationError("alpha: values must lie in [0, 1] (type I errors); got some outside")
    return a


def _as_eps(eps: Any) -> np.ndarray:
    """Privacy losses as a float array of values >= 0 (inf allowed: the limit)."""
    try:
        e = np.asarray(eps, dtype=float)
    except (TypeError, ValueError):
        raise PrivacyParameterError(f"epsilon: {eps!r} is not numeric") from None
    if np.any(np.isnan(e)) or np.any(e < 0):
        raise PrivacyParameterError("epsilon: values must be >= 0; got NaN or negative values")
    return e


def _check_d(d: Any) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValidationError(f"d: {d!r} must be a positive integer (number of noised attributes)")
    return int(d)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _log_a(s: np.ndarray, k: float) -> np.ndarray:
    """log a_c at s = asinh(h / sqrt 2), k = c / sqrt 2 (module docstring)."""
    with np.errstate(over="ignore"):
        return -_softplus(2.0 * s) - k * np.exp(s)


def _log_b(s: np.ndarray, k: float) -> np.ndarray:
    """log b_c at s = asinh(h / sqrt 2); equals log a_c at -s."""
    return _log_a(-s, k)


def _solve_s(log_alpha: np.ndarray, k: float) -> np.ndarray:
    """Vectorised bisection for s with log a(s) = log_alpha (log_alpha < 0, finite).

    Bracket from bounds on the two (decreasing) terms of log a:
    ``softplus(2s) >= 2s`` and ``k e^s`` give an s_hi with log a <= target;
    requiring each term <= -target/2 gives an s_lo with log a >= target.
    """
    t = -log_alpha  # > 0
    s_hi = np.minimum(t / 2.0, np.log(t / k))
    with np.errstate(over="ignore"):
        s_lo = np.minimum(0.5 * np.log(np.expm1(t / 2.0)), np.log(t / (2.0 * k)))
    for _ in range(200):
        mid = 0.5 * (s_lo + s_hi)
        above = _log_a(mid, k) > log_alpha  # a(mid) > alpha: the root lies to the right
        s_lo = np.where(above, mid, s_lo)
        s_hi = np.where(above, s_hi, mid)
        if np.all(s_hi - s_lo <= 4e-16 * np.maximum(1.0, np.abs(s_hi))):
            break
    return 0.5 * (s_lo + s_hi)


def _shrink(alpha: np.ndarray, zero_prob: float, base) -> np.ndarray:
    """Eq (3.3): (1 - z) f(alpha / (1 - z)) for alpha <= 1 - z, else 0 (z the zero proportion)."""
    keep = 1.0 - zero_prob
    inside = alpha <= keep
    scaled = np.minimum(np.where(inside, alpha, 0.0) / keep, 1.0)
    return np.where(inside, keep * np.asarray(base(scaled), dtype=float), 0.0)


# ------------------------------------------------------------------ closed forms
def beta_type1(h: ArrayLike, c: float) -> float | np.ndarray:
    """Type I error a_c(h) = 1 - F_c(c h) of the limit test (3.4) at LLR threshold c h.

    ``a_c(h) = (1 - h/r)/2 exp(-(c/2)(r + h))``, ``r = sqrt(2 + h^2)`` (Prop 3.2), evaluated
    stably via ``s = asinh(h / sqrt 2)`` (module docstring). Decreases from 1 to 0.
    """
    c = _check_c(c)
    s = np.arcsinh(np.asarray(h, dtype=float) / _SQRT2)
    return _out(np.exp(_log_a(s, c / _SQRT2)))


def beta_type2(h: ArrayLike, c: float) -> float | np.ndarray:
    """Type II error b_c(h) = (1 + h/r)/2 exp(-(c/2)(r - h)) of the limit test (3.4)."""
    c = _check_c(c)
    s = np.arcsinh(np.asarray(h, dtype=float) / _SQRT2)
    return _out(np.exp(_log_b(s, c / _SQRT2)))


def beta_c(alpha: ArrayLike, c: float) -> float | np.ndarray:
    """The asymptotic trade-off beta_c(alpha) = lim_{d->inf} T_{d,c}(alpha) (Prop 3.2).

    Solves a_c(h) = alpha for h (vectorised bisection in log space) and returns b_c(h).
    beta_c(0) = 1, beta_c(1) = 0. A lower bound on T_{d,c} for every d (Thm 3.2(ii)).
    """
    c = _check_c(c)
    a = _as_alpha(alpha)
    flat = np.atleast_1d(a).ravel()
    out = np.where(flat == 0, 1.0, 0.0)
    inner = (flat > 0) & (flat < 1)
    if np.any(inner):
        k = c / _SQRT2
        s = _solve_s(np.log(flat[inner]), k)
        out[inner] = np.exp(_log_b(s, k))
    return _out(out.reshape(a.shape))


def beta_c_zil(alpha: ArrayLike, c: float, zero_prob: float) -> float | np.ndarray:
    """The paper's beta_{c,delta}(alpha) = (1 - z) beta_c(alpha / (1 - z)) on [0, 1 - z], else 0.

    z = ``zero_prob`` (the paper's delta). The shrinkage (3.3) of beta_c; a lower bound on
    T_{d,c,delta} for every d (Thm 3.2(ii)).
    """
    c = _check_c(c)
    zero_prob = _check_zero_prob(zero_prob)
    a = _as_alpha(alpha)
    return _out(_shrink(a, zero_prob, lambda x: beta_c(x, c)))


def laplace_tradeoff(alpha: ArrayLike, c: float) -> float | np.ndarray:
    """Exact T_{1,c}(alpha) = F_L(F_L^{-1}(1 - alpha) - sqrt(2) c), F_L the standard Laplace cdf.

    Section 3.2 (after Prop 3.1): SL_1(I) is Laplace with scale 1/sqrt(2), so a shift c is a
    shift sqrt(2) c in units of the scale.
    """
    c = _check_c(c)
    a = _as_alpha(alpha)
    with np.errstate(divide="ignore", over="ignore"):
        # F_L^{-1}(1 - a): -log(2a) for a <= 1/2, log(2(1 - a)) otherwise
        x = np.where(a <= 0.5, -np.log(2.0 * a), np.log(2.0 * (1.0 - a)))
        y = x - _SQRT2 * c
        out = np.where(y < 0, 0.5 * np.exp(np.minimum(y, 0.0)), 1.0 - 0.5 * np.exp(-np.abs(y)))
    return _out(out)


def laplace_tradeoff_zil(alpha: ArrayLike, c: float, zero_prob: float) -> float | np.ndarray:
    """Exact T_{1,c,delta} (eq 3.3 applied to :func:`laplace_tradeoff`); delta = ``zero_prob``."""
    c = _check_c(c)
    zero_prob = _check_zero_prob(zero_prob)
    a = _as_alpha(alpha)
    return _out(_shrink(a, zero_prob, lambda x: laplace_tradeoff(x, c)))


def delta_c(eps: ArrayLike, c: float) -> float | np.ndarray:
    """delta_c(eps) of Thm 3.3: beta_c-DP <=> (eps, delta_c(eps))-DP for all eps >= 0.

    Thm 3.3's ``1 - e^eps (1 - F_c(eps)) - b_c(eps/c)`` simplifies to
    ``1 - exp(-c / (h + sqrt(2 + h^2)))`` with ``h = eps / c`` (module docstring).
    delta_c(0) = 1 - exp(-c/sqrt 2); delta_c(eps) ~ c^2 / (2 eps) as eps -> inf.
    """
    c = _check_c(c)
    e = _as_eps(eps)
    with np.errstate(over="ignore"):
        s = np.arcsinh(e / (_SQRT2 * c))
        out = -np.expm1(-(c / _SQRT2) * np.exp(-s))
    return _out(out + 0.0)


def laplace_delta(eps: ArrayLike, c: float) -> float | np.ndarray:
    """Exact profile of T_{1,c}: max(0, 1 - exp((eps - eps0)/2)), eps0 = sqrt(2) c.

    [derived] The LLR of Laplace(0, b) vs Laplace(c, b) is (|x| - |x - c|)/b in
    [-eps0, eps0]; for eps < eps0 the optimal test rejects above x = b (eps + eps0)/2 and
    delta(eps) = Q(reject) - e^eps P(reject) = 1 - e^{(eps - eps0)/2}.
    """
    c = _check_c(c)
    e = _as_eps(eps)
    with np.errstate(over="ignore"):
        out = np.maximum(0.0, -np.expm1((e - _SQRT2 * c) / 2.0))
    return _out(out)


def delta_tilde(
    eps: ArrayLike, c: float, zero_prob: float, exact_laplace: bool = False
) -> float | np.ndarray:
    """The DP delta of the ZIL mechanism: delta~_{c,z}(eps) = z + (1 - z) base(eps) (Thm 3.3(i)).

    z = ``zero_prob``. ``base`` is :func:`delta_c` (the beta_{c,delta} bound, any d) or, with
    ``exact_laplace=True``, :func:`laplace_delta` (exact profile of T_{1,c,delta}, d = 1).
    """
    zero_prob = _check_zero_prob(zero_prob)
    base = laplace_delta(eps, c) if exact_laplace else delta_c(eps, c)
    return _out(zero_prob + (1.0 - zero_prob) * np.asarray(base))


def _unreachable(delta: float, zero_prob: float) -> UnreachableTargetError:
    return UnreachableTargetError(
        f"delta={delta:g} cannot be reached with zero_prob={zero_prob:g}: a share zero_prob of "
        f"the records is released exactly, without noise, and that alone costs "
        f"delta >= {zero_prob:g} at every epsilon. Use zero_prob < delta, or a larger "
        f"delta > {zero_prob:g}."
    )


def calibrate_c(
    epsilon: float, delta: float, zero_prob: float, exact_laplace: bool = False
) -> float:
    """The largest c with delta~_{c,zero_prob}(epsilon) <= delta (Section 3.2, after Thm 3.3).

    Step 1 of the paper's recipe. With q = (delta - z)/(1 - z), z = ``zero_prob``, and
    g = -log(1 - q) the root is closed-form: ``c' = sqrt(2 g (epsilon + g))`` for the
    beta bound and ``c' = (epsilon + 2 g)/sqrt 2`` for the exact Laplace profile (d = 1).
    Any c <= c' also meets the target. Raises UnreachableTargetError when zero_prob >= delta.
    """
    eps = check_epsilon(epsilon)
    target = check_probability(delta, "delta")
    zero_prob = _check_zero_prob(zero_prob)
    if zero_prob >= target:
        raise _unreachable(target, zero_prob)
    g = -math.log1p(-(target - zero_prob) / (1.0 - zero_prob))
    c = (eps + 2.0 * g) / _SQRT2 if exact_laplace else math.sqrt(2.0 * g * (eps + g))
    # guard against a last-ulp overshoot of the closed form
    for _ in range(64):
        if float(delta_tilde(eps, c, zero_prob, exact_laplace)) <= target:
            break
        c = math.nextafter(c, 0.0)
    return c


def zil_loss_law(c: float, exact_laplace: bool) -> tuple[Any, Any, float, float]:
    """The privacy loss L = log(dQ/dP) under Q of the pair behind T_{1,c} or beta_c:
    ``(cdf, sf, lo, hi)``, its distribution and survival functions and a range holding its
    mass up to tails below e^-60 on the left (the right tail of beta_c is heavy).

    Exact Laplace (shift eps0 = sqrt(2) c in units of the scale): L is -eps0 with
    probability e^-eps0 / 2, eps0 with probability 1/2, and has cdf e^((l - eps0)/2) / 2 in
    between. beta_c: the limit experiment (3.4) has LLR threshold c h, so P_Q(L <= c h) =
    b_c(h) (module docstring), and 1 - b_c is computed as -expm1(log b_c).
    """
    c = _check_c(c)
    if exact_laplace:
        e0 = _SQRT2 * c

        def cdf(x: np.ndarray) -> np.ndarray:
            inner = 0.5 * np.exp(np.minimum(x - e0, 0.0) / 2.0)
            return np.where(x < -e0, 0.0, np.where(x >= e0, 1.0, inner))

        def sf(x: np.ndarray) -> np.ndarray:
            inner = 1.0 - 0.5 * np.exp(np.minimum(x - e0, 0.0) / 2.0)
            return np.where(x < -e0, 1.0, np.where(x >= e0, 0.0, inner))

        return cdf, sf, -e0, e0
    k = c / _SQRT2

    def log_b(x: np.ndarray) -> np.ndarray:
        return _log_b(np.arcsinh(np.asarray(x, dtype=float) / (_SQRT2 * c)), k)

    return (lambda x: np.exp(log_b(x))), (lambda x: -np.expm1(log_b(x))), -60.0, math.inf


#: protection units: whole records (DP/LDP) or single attributes (ADP/LADP), paper Def 2.3
UNITS = ("individual", "attribute")


def check_unit(unit: Any) -> str:
    """The protection unit, ``"individual"`` or ``"attribute"``."""
    if unit not in UNITS:
        raise ValidationError(
            f"unit: {unit!r} is not accepted; use 'individual' (DP/LDP: whole records) or "
            "'attribute' (ADP/LADP: one attribute of a record)"
        )
    return str(unit)


def unit_diameters(n_noised: int) -> tuple[float, float]:
    """(diameter of the unit cube [0, 1]^d, largest single range 1) for d noised columns.

    privest maps each noised column's public box to [0, 1] before adding noise, so two
    records differ by at most sqrt(d) in L2 and one attribute by at most 1 (Thm 3.1 with
    diam = sqrt(d) and 1).
    """
    return math.sqrt(_check_d(n_noised)), 1.0


def calibrate_lam(
    epsilon: float,
    delta: float,
    zero_prob: float,
    n_noised: int,
    unit: Literal["individual", "attribute"] = "individual",
) -> float:
    """Noise scale lam (in units of each column's range) making the release (epsilon, delta)-DP.

    Section 3.2 after Thm 3.3: c' = :func:`calibrate_c` (exact Laplace profile when one
    column is noised; beta_{c,delta} otherwise), then ``lam = sqrt(d)/c'`` for
    ``unit="individual"`` (DP/LDP) or ``lam = 1/c'`` for ``unit="attribute"`` (ADP/LADP):
    the diameters of the unit cube (:func:`unit_diameters`). Any larger lam also works.
    """
    unit = check_unit(unit)
    d = _check_d(n_noised)
    c = calibrate_c(epsilon, delta, zero_prob, exact_laplace=d == 1)
    diam, widest = unit_diameters(d)
    return (diam if unit == "individual" else widest) / c


# ----------------------------------------------------------------- Monte Carlo
def _llr(x: np.ndarray, c: float) -> np.ndarray:
    """log f(x - c e_1) - log f(x) for SL_d(I): the Neyman-Pearson statistic of (3.1)."""
    shifted = x.copy()
    shifted[:, 0] -= c
    return sl_logpdf(shifted) - sl_logpdf(x)


def tradeoff_montecarlo(
    alpha: ArrayLike,
    d: int,
    c: float,
    n_draws: int = 100_000,
    rng: np.random.Generator | int | None = None,
) -> float | np.ndarray:
    """Monte Carlo *estimate* of T_{d,c}(alpha) for d >= 2 (Section 3.2, simulation).

    Draws ``n_draws`` samples under P = SL_d(I) and under Q = c e_1 + SL_d(I), computes
    the log-likelihood ratio with the Bessel log-density, and interpolates the empirical
    ROC {(alpha_k, beta_k)}: thresholds are the P-sample LLRs, alpha_k = k / n_draws,
    beta_k = share of Q-sample LLRs <= threshold. The standard error is about
    sqrt((beta(1 - beta) + alpha(1 - alpha) T'(alpha)^2) / n_draws). An estimate, not a
    guarantee; the guaranteed bound is :func:`beta_c`. For d = 1 the exact
    :func:`laplace_tradeoff` is returned (the d = 1 LLR has atoms).
    """
    d = _check_d(d)
    c = _check_c(c)
    a = _as_alpha(alpha)
    if d == 1:
        return laplace_tradeoff(a, c)
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 10:
        raise ValidationError(f"n_draws: {n_draws!r} must be an integer >= 10")
    n = int(n_draws)
    gen = resolve_rng(rng)
    llr_p = np.sort(_llr(sample_sl(n, d, 1.0, gen), c))
    q = sample_sl(n, d, 1.0, gen)
    q[:, 0] += c
    llr_q = np.sort(_llr(q, c))
    # test "reject when LLR > t_k" with t_k the (k+1)-th largest P-value: k P-samples rejected
    thresholds = llr_p[::-1]
    roc_alpha = np.append(np.arange(n) / n, 1.0)
    roc_beta = np.append(np.searchsorted(llr_q, thresholds, side="right") / n, 0.0)
    return _out(np.interp(a, roc_alpha, roc_beta))

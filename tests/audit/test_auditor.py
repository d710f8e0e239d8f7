"""Tests of privest.audit: honest on true claims, powerful against false ones.

Tolerances come from binomial standard errors worked out in the comments, never from
the observed outcome. The per-bound Clopper-Pearson level is 1 - 0.05 / (2K) with
K <= 2 (n_thresholds + 1) = 402 tests, i.e. a one-sided z of about 3.8.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from scipy import integrate, special
from scipy.stats import norm

from privest.accounting.base import ApproxDP, Guarantee
from privest.audit import AuditResult, audit, clopper_pearson_upper
from privest.audit.auditor import _rejection_counts
from privest.errors import ValidationError
from privest.noise import sample_zil, sl_logpdf

EPS = 1.0


# ---------------------------------------------------------------------------- mechanisms
def laplace_samplers(scale: float, shift: float = 1.0):
    """M(x) = x + Lap(scale) on x = 0 and x' = shift."""

    def sample_p(n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.laplace(0.0, scale, n)

    def sample_q(n: int, rng: np.random.Generator) -> np.ndarray:
        return shift + rng.laplace(0.0, scale, n)

    return sample_p, sample_q


def laplace_llr(scale: float):
    """log q/p for Lap(0, b) vs Lap(1, b): (|y| - |y - 1|) / b, clipped to its range.

    Rounded to 1e-9: the textbook float formula leaks the lowest bits of the outputs
    (see test_float_porosity_is_detected), which the idealised claim does not cover.
    """
    bound = 1.0 / scale

    def llr(y: np.ndarray) -> np.ndarray:
        return np.round(np.clip((np.abs(y) - np.abs(y - 1.0)) / scale, -bound, bound), 9)

    return llr


class GDP(Guarantee):
    """mu-GDP (Dong, Roth and Su): G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)."""

    def __init__(self, mu: float):
        self.mu = mu
        self.label = f"{mu:g}-GDP"

    def delta(self, epsilon):
        e = np.asarray(epsilon, dtype=float)
        out = norm.cdf(-e / self.mu + self.mu / 2) - np.exp(e) * norm.cdf(
            -e / self.mu - self.mu / 2
        )
        out = np.maximum(out, 0.0)
        return float(out) if out.ndim == 0 else out

    def tradeoff(self, alpha):
        return norm.cdf(norm.ppf(1.0 - np.asarray(alpha, dtype=float)) - self.mu)


class GDPProfileOnly(GDP):
    """The same guarantee known only through its (eps, delta(eps)) profile."""

    tradeoff = Guarantee.tradeoff


def gaussian_samplers(sigma: float):
    def sample_p(n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, sigma, n)

    def sample_q(n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(1.0, sigma, n)

    return sample_p, sample_q


# ------------------------------------------------------------------------ building blocks
@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.sampled_from([-math.inf, -1.0, 0.0, 0.5, 1.0, math.inf]), max_size=30),
    t=st.sampled_from([-math.inf, -1.0, -0.3, 0.0, 0.5, 1.0, 2.0, math.inf]),
    strict=st.booleans(),
)
def test_rejection_counts_match_brute_force(scores, t, strict):
    s = np.sort(np.array(scores, dtype=float))
    got = _rejection_counts(s, np.array([t]), np.array([strict]))[0]
    want = int(np.sum(s > t)) if strict else int(np.sum(s >= t))
    assert got == want


def test_clopper_pearson_upper_closed_forms():
    n, level = 1000, 0.99
    # k = 0: U solves (1 - U)^n = 1 - level; k = n: U = 1.
    assert clopper_pearson_upper(0, n, level) == pytest.approx(1 - (1 - level) ** (1 / n))
    assert clopper_pearson_upper(n, n, level) == 1.0
    u = clopper_pearson_upper(np.arange(n + 1), n, level)
    assert np.all(np.diff(u) > 0) and np.all(u >= np.arange(n + 1) / n)


# ------------------------------------------------------------------------------- Laplace
def test_laplace_true_claim_passes_and_bound_is_tight():
    b = 1.0 / EPS
    p, q = laplace_samplers(b)
    res = audit(p, q, ApproxDP(EPS), n=200_000, llr=laplace_llr(b), rng=1)
    assert isinstance(res, AuditResult)
    assert not res.contradicts and not res.violations.any()
    # The optimal test (LLR = eps) has alpha = e^-eps / 2 = 0.18, beta = 1/2: the SE of
    # log alpha-hat is sqrt((1 - a) / (n a)) = 0.0047 and of log(1 - beta-hat) 0.0022, so
    # at z = 3.8 the bound sits near eps - 0.03; 0.7 eps is ~50 standard errors below.
    lb = res.epsilon_lower_bound(0.0)
    assert 0.7 * EPS < lb <= EPS
    assert res.epsilon_lower_bound(0.1) < lb


@pytest.mark.parametrize("use_llr", [True, False])
def test_laplace_overclaim_is_contradicted(use_llr):
    """Negative control: the same samples refute a claim of eps / 3."""
    b = 1.0 / EPS
    p, q = laplace_samplers(b)
    kw = {"llr": laplace_llr(b)} if use_llr else {}
    res = audit(p, q, ApproxDP(EPS / 3), n=100_000, rng=2, **kw)
    assert res.contradicts
    assert res.gap.max() > 0.1  # true gap at the optimal test: 1 - e^(1/3) 0.18 - 1/2 = 0.24


def test_under_noised_laplace_is_caught():
    """A mechanism claiming eps-DP but adding Lap(1 / (3 eps)) noise."""
    p, q = laplace_samplers(1.0 / (3 * EPS))
    res = audit(p, q, ApproxDP(EPS), n=100_000, rng=3)
    assert res.contradicts
    assert res.epsilon_lower_bound() > 2.0 * EPS  # true eps is 3; SE of the bound ~ 0.02


def test_laplace_raw_output_true_claim_passes():
    p, q = laplace_samplers(1.0 / EPS)
    res = audit(p, q, ApproxDP(EPS), n=100_000, rng=4)
    assert not res.contradicts
    assert res.epsilon_lower_bound() <= EPS


def test_float_porosity_is_detected():
    """Mironov (2012): x + float Laplace noise is not eps-DP in floating point.

    The unrounded LLR of a shifted output exposes its low bits: (|y| - |y - 1|) is
    exactly -1 for every output 1 + e <= 0 of M(x'), but -1 - ulp for some outputs of
    M(x), an event of positive probability under P only.
    """
    b = 1.0 / EPS
    p, q = laplace_samplers(b)
    res = audit(
        p, q, ApproxDP(EPS), n=200_000, llr=lambda y: (np.abs(y) - np.abs(y - 1)) / b, rng=1
    )
    assert res.contradicts


# ------------------------------------------------------------------------------ Gaussian
@pytest.mark.parametrize("claim_cls", [GDP, GDPProfileOnly])
def test_gaussian_true_gdp_passes(claim_cls):
    p, q = gaussian_samplers(1.0)
    claim = claim_cls(1.0)
    res = audit(p, q, claim, n=100_000, rng=5)
    assert not res.contradicts
    for delta in (1e-3, 1e-2, 0.1):
        assert res.epsilon_lower_bound(delta) <= claim.epsilon(delta)


@pytest.mark.parametrize("claim_cls", [GDP, GDPProfileOnly])
def test_under_noised_gaussian_is_caught(claim_cls):
    """Noise sigma / 3 makes the mechanism 3-GDP; at alpha = 0.05 the claimed 1-GDP curve
    is 0.74 and the true one 0.09, a gap hundreds of standard errors wide."""
    p, q = gaussian_samplers(1.0 / 3)
    claim = claim_cls(1.0)
    res = audit(p, q, claim, n=100_000, rng=6)
    assert res.contradicts
    assert res.epsilon_lower_bound(1e-2) > claim.epsilon(1e-2)


# ----------------------------------------------------------------------- atoms (±inf LLR)
P_ATOM = 0.1


def atom_samplers(scale: float, p_atom: float):
    """Release x exactly with probability p_atom, else x + Lap(scale)."""

    def make(x: float):
        def sample(n: int, rng: np.random.Generator) -> np.ndarray:
            exact = rng.random(n) < p_atom
            return np.where(exact, x, x + rng.laplace(0.0, scale, n))

        return sample

    return make(0.0), make(1.0)


def atom_llr(scale: float):
    base = laplace_llr(scale)

    def llr(y: np.ndarray) -> np.ndarray:
        out = base(y)
        out[y == 0.0] = -np.inf  # atom of M(x) only
        out[y == 1.0] = np.inf  # atom of M(x') only
        return out

    return llr


def test_atom_mechanism_true_claim_passes():
    b = 1.0 / EPS
    p, q = atom_samplers(b, P_ATOM)
    res = audit(p, q, ApproxDP(EPS, P_ATOM), n=100_000, llr=atom_llr(b), rng=7)
    assert not res.contradicts
    # The corner test {s = +inf} has alpha = 0 and beta = 1 - p: alpha_U <= log(2K / .05) / n
    # ~ 1e-4 and 1 - beta_U ~ 0.1 - 3.8 * 0.00095, so the pure-DP bound is ~ log(0.096 / 1e-4).
    assert res.epsilon_lower_bound(0.0) > 5.0
    assert res.epsilon_lower_bound(P_ATOM) <= EPS


def test_atom_mechanism_small_delta_is_caught_at_the_corner():
    b = 1.0 / EPS
    p, q = atom_samplers(b, P_ATOM)
    res = audit(p, q, ApproxDP(EPS, P_ATOM / 4), n=100_000, llr=atom_llr(b), rng=8)
    assert res.contradicts
    # The atom corner alone refutes it: "s >= +inf" has alpha = 0 and beta = 1 - p, whose
    # bounds are ~1e-4 and 0.9 + 3.8 * 0.00095, below f(alpha_U) = 0.975 - e * 1e-4.
    corner = np.isposinf(res.threshold) & ~res.strict & (res.direction == 0)
    assert corner.sum() == 1 and res.violations[corner].all()
    assert res.alpha[corner][0] == 0.0
    assert res.beta[corner][0] == pytest.approx(1 - P_ATOM, abs=5 * 0.00095)


# ----------------------------------------------------------------------------- ZIL, d = 2
ZIL_LAM, ZIL_C, ZIL_ZERO = 1.0, 1.0, 0.2
XP = np.array([ZIL_C * ZIL_LAM, 0.0])


def sl2_hockey_stick(eps: float, c: float, lam: float) -> tuple[float, float]:
    """int (q - e^eps p)_+ for SL_2(lam^2 I) at 0 (p) and c lam e_1 (q), in polar
    coordinates around c lam e_1 with the closed form density K_0(sqrt 2 r / lam) / (pi lam^2)."""

    def pdf(r):
        return special.k0(math.sqrt(2.0) * r / lam) / (math.pi * lam**2)

    def integrand(r, theta):
        dist = math.sqrt((c * lam) ** 2 + r * r + 2.0 * c * lam * r * math.cos(theta))
        return r * max(pdf(r) - math.exp(eps) * pdf(dist), 0.0)

    value, err = integrate.dblquad(integrand, 0.0, math.pi, 0.0, math.inf, epsabs=1e-9)
    return 2.0 * value, 2.0 * err


def zil_samplers():
    def sample_p(n: int, rng: np.random.Generator) -> np.ndarray:
        return sample_zil(n, 2, ZIL_LAM, ZIL_ZERO, rng)[0]

    def sample_q(n: int, rng: np.random.Generator) -> np.ndarray:
        return XP + sample_zil(n, 2, ZIL_LAM, ZIL_ZERO, rng)[0]

    return sample_p, sample_q


def zil_llr(y: np.ndarray) -> np.ndarray:
    """log q/p from sl_logpdf: +inf at the atom x' (its density is infinite there in d = 2,
    and only M(x') has mass there), -inf at the atom x."""
    with np.errstate(invalid="ignore"):
        out = sl_logpdf(y - XP, ZIL_LAM) - sl_logpdf(y, ZIL_LAM)
    out[np.all(y == 0.0, axis=1)] = -np.inf
    out[np.all(y == XP, axis=1)] = np.inf
    return np.round(out, 9)


@pytest.fixture(scope="module")
def zil_delta() -> float:
    """Exact delta(EPS) of ZIL on this pair: the atom of M(x') alone, plus the SL part."""
    h, err = sl2_hockey_stick(EPS, ZIL_C, ZIL_LAM)
    assert err < 1e-6
    # cross-check the closed-form density against privest.noise.sl_logpdf
    pt = np.array([[0.3, 0.4]])
    assert sl_logpdf(pt, ZIL_LAM)[0] == pytest.approx(
        math.log(special.k0(math.sqrt(2) * 0.5) / math.pi), rel=1e-12
    )
    return ZIL_ZERO + (1 - ZIL_ZERO) * h + 1e-6


def test_zil_exact_delta_claim_passes(zil_delta):
    p, q = zil_samplers()
    res = audit(p, q, ApproxDP(EPS, zil_delta), n=100_000, llr=zil_llr, rng=9)
    assert not res.contradicts
    assert res.epsilon_lower_bound(zil_delta) <= EPS


@pytest.mark.parametrize("factor", [1.0, 0.25])
def test_zil_understated_delta_is_caught(zil_delta, factor):
    """(EPS, zero proportion) is not valid in d = 2 (the SL density ratio is unbounded
    near x'): the claim misses (1 - delta) * H = 0.18, ~40 standard errors of 0.0016."""
    p, q = zil_samplers()
    res = audit(p, q, ApproxDP(EPS, factor * ZIL_ZERO), n=100_000, llr=zil_llr, rng=10)
    assert zil_delta - ZIL_ZERO > 0.1
    assert res.contradicts


# ---------------------------------------------------------------------- result and errors
def test_summary_and_plot():
    p, q = gaussian_samplers(1.0 / 3)
    res = audit(p, q, GDP(1.0), n=20_000, rng=11)
    text = res.summary(deltas=(0.0, 1e-3))
    assert "CONTRADICTED" in text and "1-GDP" in text and "delta = 0.001" in text
    ax = Figure().add_subplot()
    assert res.plot(ax=ax) is ax
    assert len(ax.lines) >= 4


def test_no_claim_only_estimates():
    p, q = laplace_samplers(1.0)
    res = audit(p, q, None, n=10_000, rng=12, symmetric=False)
    assert not res.contradicts and res.claimed_beta is None
    assert np.all(res.direction == 0) and res.alpha.size == res.n_tests
    assert 0 < res.epsilon_lower_bound() <= 1.0


def test_explicit_thresholds_and_reproducibility():
    p, q = laplace_samplers(1.0)
    a = audit(p, q, ApproxDP(1.0), n=5_000, thresholds=[0.0, 1.0], rng=13)
    b = audit(p, q, ApproxDP(1.0), n=5_000, thresholds=[0.0, 1.0], rng=13)
    assert a.n_tests == 6  # cuts {-inf, 0, 1, inf}: three strict and three non-strict tests
    np.testing.assert_array_equal(a.alpha_upper, b.alpha_upper)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"llr": np.asarray, "score": np.asarray}, "not both"),
        ({"n": 0}, "n:"),
        ({"conf_level": 1.0}, "conf_level"),
        ({"score": lambda y: y[:-1]}, "expected"),
        ({"score": lambda y: np.full(len(y), np.nan)}, "NaN"),
    ],
)
def test_bad_arguments(kwargs, match):
    p, q = laplace_samplers(1.0)
    with pytest.raises(ValidationError, match=match):
        audit(p, q, ApproxDP(1.0), rng=0, **{"n": 100, **kwargs})


def test_multivariate_outputs_need_a_statistic():
    p, q = zil_samplers()
    with pytest.raises(ValidationError, match="score= or llr="):
        audit(p, q, ApproxDP(1.0), n=100, rng=0)
    with pytest.raises(ValidationError, match="Guarantee"):
        audit(p, q, (1.0, 0.0), n=100, rng=0)


# ------------------------------------------------------------------------- slow checks
def test_false_contradiction_rate_is_controlled():
    """At confidence 0.8 a true claim is contradicted with probability <= 0.2 per run;
    P(Binomial(40, 0.2) >= 16) = 0.003."""
    p, q = laplace_samplers(1.0)
    llr = laplace_llr(1.0)
    hits = sum(
        audit(p, q, ApproxDP(1.0), n=20_000, llr=llr, conf_level=0.8, rng=seed).contradicts
        for seed in range(40)
    )
    assert hits <= 15


@pytest.mark.slow
def test_million_samples_audit_quickly():
    p, q = laplace_samplers(1.0)
    start = time.perf_counter()
    res = audit(p, q, ApproxDP(1.0), n=1_000_000, llr=laplace_llr(1.0), rng=14)
    assert time.perf_counter() - start < 3.0  # ~0.1 s measured; generous for slow CI
    assert not res.contradicts

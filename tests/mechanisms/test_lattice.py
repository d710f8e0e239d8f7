"""Exact samplers and float-safe lattice noise (Canonne, Kamath and Steinke 2020).

Each sampler is checked against its exact pmf by a chi-square test at a fixed seed, with a
negative control (the same draws against a slightly different law) that the test rejects.
The lattice mechanisms are checked exactly: neighbours' centres differ by at most the
shift the noise is calibrated to, and the calibrated noise meets the claimed guarantee.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privest.accounting.gaussian import (
    LatticeGaussianGuarantee,
    discrete_gaussian_delta,
    gaussian_delta,
)
from privest.accounting.zcdp import zcdp_delta, zcdp_epsilon, zcdp_rho_for
from privest.errors import ValidationError
from privest.mechanisms.profiles import exact
from privest.mechanisms.profiles.exact import exact_statistic
from privest.mechanisms.samplers.bigint import Bits, discrete_laplace_big, power_law_big
from privest.mechanisms.samplers.lattice import (
    LatticeGaussian,
    LatticeLaplace,
    bernoulli_exp,
    grid_step,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    sample_discrete_laplace_many,
    to_grid,
)

P_MIN = 1e-3  # a correct sampler fails a chi-square test at this level once in 1000 seeds


def chi_square_p(draws, pmf, support) -> float:
    """Chi-square p-value of integer ``draws`` against ``pmf`` on ``support`` (+ the rest)."""
    draws = np.asarray(draws, dtype=np.int64)
    probs = pmf(support)
    observed = np.array([np.sum(draws == k) for k in support], dtype=float)
    rest_p = max(1.0 - probs.sum(), 0.0)
    observed = np.append(observed, draws.size - observed.sum())
    expected = np.append(probs, rest_p) * draws.size
    keep = expected > 5
    obs, exp = observed[keep], expected[keep]
    exp *= obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def laplace_pmf(scale: float):
    r = math.exp(-1.0 / scale)
    return lambda k: (1 - r) / (1 + r) * r ** np.abs(k)


def gaussian_pmf(sigma2: float):
    top = int(40 * math.sqrt(sigma2)) + 1
    z = np.exp(-(np.arange(-top, top + 1) ** 2) / (2 * sigma2)).sum()
    return lambda k: np.exp(-(np.asarray(k, float) ** 2) / (2 * sigma2)) / z


def power_law_pmf(t: int, gamma: int):
    j = np.arange(1, 2_000_001, dtype=float)
    tail = 2 * t**gamma * (2_000_000.5) ** (1 - gamma) / (gamma - 1)
    z = 1 + 2 * np.sum(1 / (1 + (j / t) ** gamma)) + tail
    return lambda k: 1 / (1 + (np.abs(np.asarray(k, float)) / t) ** gamma) / z


# ------------------------------------------------------------------ Bernoulli(exp(-gamma))
@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (5, 2), (7, 7), (13, 4)])
def test_bernoulli_exp_has_the_exact_probability(num, den):
    rng = np.random.default_rng(11)
    n = 200_000
    hits = bernoulli_exp(np.full(n, num), np.full(n, den), rng)
    p = math.exp(-num / den)
    se = math.sqrt(p * (1 - p) / n) or 1e-12
    assert abs(hits.mean() - p) <= 4 * se
    big = [Bits(rng, block=64).bernoulli_exp(num, den) for _ in range(20_000)]
    assert abs(np.mean(big) - p) <= 4 * math.sqrt(p * (1 - p) / 20_000) + 1e-12


# ------------------------------------------------------------------ samplers vs pmfs
@pytest.mark.parametrize("scale", [Fraction(3), Fraction(5, 2), Fraction(1, 3)])
def test_discrete_laplace_matches_its_pmf(scale):
    draws = sample_discrete_laplace(scale, 100_000, np.random.default_rng(1))
    support = np.arange(-40, 41)
    assert chi_square_p(draws, laplace_pmf(float(scale)), support) > P_MIN
    # negative control: the same draws against a 10% wider law are rejected
    assert chi_square_p(draws, laplace_pmf(1.1 * float(scale)), support) < 1e-6


def test_several_scales_in_one_call_each_match_their_pmf():
    # small calls (a few candidates per entry, the first accepted of each entry kept), two
    # scales side by side: each block follows its own law
    rng = np.random.default_rng(4)
    blocks = [sample_discrete_laplace_many([3, Fraction(5, 2)], [40, 40], rng) for _ in range(1500)]
    support = np.arange(-40, 41)
    for i, scale in enumerate((3.0, 2.5)):
        draws = np.concatenate([b[i] for b in blocks])
        assert draws.size == 60_000
        assert chi_square_p(draws, laplace_pmf(scale), support) > P_MIN
        assert chi_square_p(draws, laplace_pmf(1.1 * scale), support) < 1e-6


def test_big_integer_discrete_laplace_matches_its_pmf():
    draws = discrete_laplace_big(3, 50_000, np.random.default_rng(2))
    support = np.arange(-40, 41)
    assert chi_square_p(draws, laplace_pmf(3.0), support) > P_MIN
    assert chi_square_p(draws, laplace_pmf(3.3), support) < 1e-6


@pytest.mark.parametrize("sigma2", [2, 9, 50])
def test_discrete_gaussian_matches_its_pmf(sigma2):
    draws = sample_discrete_gaussian(sigma2, 100_000, np.random.default_rng(3))
    top = int(6 * math.sqrt(sigma2)) + 1
    support = np.arange(-top, top + 1)
    assert chi_square_p(draws, gaussian_pmf(sigma2), support) > P_MIN
    assert chi_square_p(draws, gaussian_pmf(1.15 * sigma2), support) < 1e-6


@pytest.mark.parametrize("gamma", [2, 4, 6])
def test_power_law_matches_its_pmf(gamma):
    draws = power_law_big(3, gamma, 40_000, np.random.default_rng(4))
    support = np.arange(-30, 31)
    assert chi_square_p(draws, power_law_pmf(3, gamma), support) > P_MIN
    assert chi_square_p(draws, power_law_pmf(4, gamma), support) < 1e-6


def test_discrete_gaussian_far_tail_uses_exact_big_integers():
    # sigma2 = 1: candidates are discrete Laplace(2); all accepted draws are small
    draws = sample_discrete_gaussian(1, 50_000, np.random.default_rng(5))
    assert chi_square_p(draws, gaussian_pmf(1), np.arange(-6, 7)) > P_MIN


# ------------------------------------------------------------------ grid
def test_grid_step_is_a_power_of_two_below_the_scale():
    for scale in [1e-9, 0.3, 1.0, 7.5, 1e12]:
        g = grid_step(scale, 20)
        assert math.frexp(g)[0] == 0.5  # a power of two
        assert 2**20 <= scale / g < 2**21
    with pytest.raises(ValidationError):
        grid_step(0.0, 20)
    with pytest.raises(ValidationError):
        to_grid(1e300, 1e-10)


# ------------------------------------------------------------------ Laplace on a lattice
@pytest.mark.parametrize("epsilon,sensitivity", [(1.0, 0.02), (0.1, 3.0), (4.0, 1e-6)])
def test_lattice_laplace_is_exactly_epsilon_dp(epsilon, sensitivity):
    mech = LatticeLaplace(epsilon, sensitivity)
    assert mech.shift / mech.t <= epsilon  # P(y|x) / P(y|x') <= exp(shift / t)
    assert 1.0 <= mech.scale / (sensitivity / epsilon) <= 1 + (1 + epsilon) / (epsilon * 2**20)
    rng = np.random.default_rng(6)
    f = rng.uniform(-1, 1, 2000) * 1e3 * sensitivity
    moved = f + rng.uniform(-1, 1, f.size) * sensitivity  # every neighbour's statistic
    gap = np.abs(to_grid(f, mech.step) - to_grid(moved, mech.step))
    assert gap.max() <= mech.shift
    y = mech.release(f, rng)
    assert np.all(y / mech.step == np.rint(y / mech.step))  # on the public grid
    # negative control: a finer integer scale would not meet epsilon for the worst pair
    assert mech.shift / (mech.t - max(1, mech.t // 100)) > epsilon


# ------------------------------------------------------------------ Gaussian on a lattice
@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-8)])
def test_lattice_gaussian_meets_the_claim_exactly(epsilon, delta):
    mech = LatticeGaussian(epsilon, delta, sensitivity=0.3)
    assert mech.guarantee.delta(epsilon) <= delta
    # the least integer variance: one less fails (the calibration is tight)
    assert discrete_gaussian_delta(epsilon, int(mech.shift), mech.sigma2 - 1) > delta
    cont = gaussian_delta(epsilon, 0.3, mech.sigma)  # continuous law at the same sigma
    assert cont <= delta * 1.5
    rng = np.random.default_rng(7)
    f = rng.uniform(-5, 5, 2000)
    moved = f + rng.uniform(-0.3, 0.3, f.size)
    assert np.abs(to_grid(f, mech.step) - to_grid(moved, mech.step)).max() <= mech.shift


def test_lattice_gaussian_in_several_dimensions_bounds_the_l2_move():
    mech = LatticeGaussian(1.0, 1e-6, sensitivity=0.5, dims=4)
    rng = np.random.default_rng(8)
    f = rng.uniform(-3, 3, (1000, 4))
    d = rng.normal(size=(1000, 4))
    moved = f + 0.5 * d / np.linalg.norm(d, axis=1, keepdims=True)
    move = np.linalg.norm(to_grid(f, mech.step) - to_grid(moved, mech.step), axis=1)
    assert move.max() <= mech.shift
    assert mech.guarantee.delta(1.0) <= 1e-6
    assert LatticeGaussianGuarantee(mech.sigma2 * 0.8, mech.shift, 4).delta(1.0) > 1e-6


def test_discrete_gaussian_delta_tends_to_the_continuous_profile():
    for sigma, shift in [(2048.0, 1500), (5000.0, 10000)]:
        exact = discrete_gaussian_delta(1.0, shift, sigma**2)
        cont = gaussian_delta(1.0, shift, sigma)
        assert exact == pytest.approx(cont, rel=1e-3)
    assert discrete_gaussian_delta(0.5, 0, 4.0) == 0.0
    assert discrete_gaussian_delta(-0.5, 0, 4.0) == pytest.approx(1 - math.exp(-0.5))


# ------------------------------------------------------------------ zCDP
def test_zcdp_conversion_against_closed_forms():
    for rho in [0.01, 0.1, 0.5, 2.0]:
        for delta in [1e-3, 1e-6, 1e-9]:
            eps = zcdp_epsilon(rho, delta)
            # Bun and Steinke (2016, Prop. 1.3): eps <= rho + 2 sqrt(rho log(1/delta))
            assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
            assert zcdp_delta(rho, eps) == pytest.approx(delta, rel=1e-6)
            # the Gaussian with rho = Delta^2/(2 sigma^2) is at least as private as its bound
            sigma = 1 / math.sqrt(2 * rho)
            assert gaussian_delta(eps, 1.0, sigma) <= delta * (1 + 1e-6)
    # pure eps-DP is (eps^2 / 2)-zCDP; rho_for inverts the conversion
    rho = zcdp_rho_for(1.0, 1e-6)
    assert zcdp_delta(rho, 1.0) == pytest.approx(1e-6, rel=1e-6)
    assert zcdp_delta(rho * 1.01, 1.0) > 1e-6
    assert zcdp_delta(0.0, 0.3) == 0.0


# ------------------------------------------------------------------ exact statistics
def test_exact_statistic_beats_the_float_sum():
    big = 2.0**40  # 2^14 records at the bound sum to 2^54, where floats step by 4
    x = np.array([big] * 2**14 + [1.0])
    exact = exact_statistic(x, "sum", (-big, big)).exact
    assert exact == 2**54 + 1
    assert Fraction(float(np.sum(x))) != exact and Fraction(math.fsum(x)) != exact
    with pytest.raises(ValidationError, match="outside"):  # checked inside the exact sum
        exact_statistic(np.append(x, 2 * big), "sum", (-big, big))
    assert exact_statistic(np.append(x, 2 * big), "sum", (-big, big), clip=True).n_clipped == 1


def test_exact_totals_match_python_integers_across_chunks():
    """The one-pass totals (chunked; the variance's sum of squares from its value modulo
    2^64 and a float estimate) equal Python-integer sums on 3 chunks of records at the
    bounds (|k| near 2^31, the largest squares) and in between, for a float64 array and a
    list (the validated path). Control: the float sum of squares alone is not exact."""
    a, b = -2.99, 4.99  # half-range 3.99: |k| up to 3.99 2^29, just below 2^31
    rng = np.random.default_rng(12)
    x = rng.choice([a, b, 1.0], size=150_001) + rng.uniform(0, 1, 150_001) * (
        rng.random(150_001) < 0.3
    )
    x = np.clip(x, a, b)
    mid, q = (a + b) / 2, exact._variance_grid(a, b)[1]
    k = [int(v) for v in np.rint(np.ldexp(x - mid, q))]
    assert max(abs(v) for v in k) > 2**30.99
    want = {"t1": sum(k), "t2": sum(v * v for v in k)}
    p = exact._dyadic_exponent(a, b, exact._GRID_BITS)
    want_sum = sum(int(v) for v in np.rint(np.ldexp(x, p)))
    for data in (x, list(x)):
        got = exact.exact_totals(data, "variance", (a, b))
        assert (got["t1"], got["t2"], got["n"]) == (want["t1"], want["t2"], x.size)
        assert exact.exact_totals(data, "sum", (a, b))["t1"] == want_sum
    kf = np.array(k, dtype=float)
    assert int(np.sum(kf * kf)) != want["t2"]  # control: the float sum alone is off


@pytest.mark.parametrize("statistic", ["mean", "sum", "variance"])
def test_exact_statistic_sensitivity_covers_every_neighbour(statistic):
    rng = np.random.default_rng(9)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(2, 30))
        x = rng.choice([-2.0, 3.0, rng.uniform(-2, 3)], size=n)
        x2 = x.copy()
        x2[rng.integers(n)] = rng.choice([-2.0, 3.0])
        a = exact_statistic(x, statistic, (-2, 3))
        b = exact_statistic(x2, statistic, (-2, 3))
        worst = max(worst, abs(float(a.exact - b.exact)) / a.sensitivity)
    assert worst <= 1.0
    assert worst > 0.5  # the bound is approached: extreme neighbours were tried


def test_exact_mean_is_the_rational_mean():
    rng = np.random.default_rng(10)
    x = np.round(rng.uniform(-1, 1, 1001), 12)
    x = np.ldexp(np.rint(np.ldexp(x, 40)), -40)  # representable on the 2^-61 grid
    got = exact_statistic(x, "mean", (-1, 1)).exact
    assert got == sum(Fraction(v) for v in x) / x.size


def test_the_few_draws_path_has_the_same_laws():
    rng = np.random.default_rng(12)
    lap = np.concatenate([sample_discrete_laplace(3, 4, rng) for _ in range(10_000)])
    gau = np.concatenate([sample_discrete_gaussian(9, 4, rng) for _ in range(10_000)])
    assert chi_square_p(lap, laplace_pmf(3.0), np.arange(-40, 41)) > P_MIN
    assert chi_square_p(gau, gaussian_pmf(9), np.arange(-19, 20)) > P_MIN
    assert chi_square_p(gau, gaussian_pmf(1.15 * 9), np.arange(-19, 20)) < 1e-6


def test_the_one_pass_mean_refuses_what_the_checked_path_refuses():
    for bad in (np.array([0.1, np.nan]), np.array([0.1, np.inf]), np.array([0.1, 1.5])):
        with pytest.raises(ValidationError):
            exact_statistic(bad, "mean", (0, 1))
    x = np.random.default_rng(3).uniform(0, 1, 70_000)  # more than one chunk
    fast = exact_statistic(x, "mean", (0, 1)).exact
    assert fast == exact_statistic(list(x), "mean", (0, 1)).exact  # the checked path

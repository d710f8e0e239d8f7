"""PLM and INV medians / quantiles on a public lattice (mechanisms/lattice_plm.py).

Privacy is checked exactly: on small lattices the pmf of every lattice point is computed in
closed form for a data set and each of its neighbours (ties, breakpoints, lattice edges,
odd and even n, quantiles), and the largest log ratio must stay within eps. The mechanism
with the factor 1/2 of the exponential weights dropped is the negative control: the same
check flags it.
"""

from __future__ import annotations

import decimal
import math

import numpy as np
import pytest
from neighbours import NEIGHBOUR_DATA as DATA
from neighbours import worst_log_ratio
from scipy import stats

import privest as pv
from privest.errors import ValidationError
from privest.mechanisms.lattice_plm import ETA, LatticeProfileLaw, run_epsilon, stair_fraction
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.mechanisms.profiles.lattice import LatticeGrid

SHAPES = ["texp", "uniform", "stair"]


def law_of(x, stat="median", eps=1.0, bounds=(0, 8), resolution=1.0, shape="texp", q=None):
    return LatticeProfileLaw.for_statistic(
        np.asarray(x, dtype=float),
        stat,
        epsilon=eps,
        bounds=bounds,
        quantile=q,
        resolution=resolution,
        shape=shape,
    )


def all_log_pmf(law: LatticeProfileLaw) -> np.ndarray:
    k = np.arange(law.profile.lo, law.profile.hi + 1)
    return law.log_pmf_index(k)


def worst_ratio(x, stat, eps, shape, q=None, values=None, bounds=(0, 8), resolution=1.0):
    """max over all swap neighbours of x (one record -> any of ``values``) and all lattice
    points of |log P(y|x) - log P(y|x')|."""
    return worst_log_ratio(
        lambda d: all_log_pmf(law_of(d, stat, eps, bounds, resolution, shape, q)), x, values
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_median_is_eps_dp_on_every_neighbour(name, shape, eps):
    w = worst_ratio(DATA[name], "median", eps, shape, values=range(9))
    assert w <= eps * (1 + 1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_quantiles_are_eps_dp_with_a_half_step_lattice(shape, q):
    x = [0.5, 1.0, 1.0, 1.0, 2.5, 3.0, 4.0, 4.0]
    vals = np.arange(0, 4.01, 0.5)
    w = worst_ratio(x, "quantile", 1.0, shape, q=q, values=vals, bounds=(0, 4), resolution=0.5)
    assert w <= 1.0 * (1 + 1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_ratio_is_far_from_zero_so_the_check_bites(shape):
    """The spread data reach 0.69 eps (exact, at eps = 2): the check sees real ratios."""
    assert worst_ratio(DATA["spread"], "median", 2.0, shape, values=range(9)) > 0.6 * 2.0


@pytest.mark.parametrize("shape", SHAPES)
def test_negative_control_weights_without_the_half_are_flagged(shape):
    """The exponential mechanism with weight exp(-eps s) (the factor 1/2 dropped, i.e. a
    sensitivity-2 score) is not eps-DP: the same exact check flags it on the spread data."""
    eps = 1.0
    assert worst_ratio(DATA["spread"], "median", 2 * eps, shape, values=range(9)) > 1.2 * eps


def test_integer_weights_are_within_eta_of_the_exponential_weights():
    law = law_of(np.arange(0, 101, 3) % 40, eps=0.37, bounds=(0, 40))
    w = law.integer_weights()
    ctx = decimal.Context(prec=120)
    num, den = law.eps_run.numerator, law.eps_run.denominator
    for wj, lvl, length in zip(w, law.level.tolist(), law.length.tolist(), strict=True):
        exact = ctx.multiply(
            ctx.exp(ctx.divide(decimal.Decimal(-num * lvl), decimal.Decimal(2 * den))),
            decimal.Decimal(2**law._bits * length),
        )
        rel = abs(ctx.divide(decimal.Decimal(wj), exact) - 1)
        assert rel <= decimal.Decimal(ETA)
    assert run_epsilon(0.37) < 0.37


@pytest.mark.parametrize("shape", SHAPES)
def test_exact_sampler_follows_the_pmf(shape):
    """20,000 seeded draws against the closed-form pmf (chi-square, cells with >= 5 expected)."""
    law = law_of([1, 2, 2, 2, 3, 6, 7], eps=1.0, shape=shape)
    draws = law.sample(20_000, rng=5)
    k = np.arange(law.profile.lo, law.profile.hi + 1)
    p = np.exp(all_log_pmf(law))
    counts = np.array([(draws == v).sum() for v in k])
    assert counts.sum() == draws.size  # every draw is a lattice point in range
    assert stats.chisquare(counts, p / p.sum() * counts.sum()).pvalue > 1e-3


@pytest.mark.parametrize("shape", SHAPES)
def test_error_laws_match_enumeration(shape):
    law = law_of([0, 1, 1, 4, 6, 7, 8, 8], eps=0.8, shape=shape, bounds=(0, 12))
    k = np.arange(law.profile.lo, law.profile.hi + 1)
    p = np.exp(all_log_pmf(law))
    err = np.abs(k * law.unit - law.value)
    assert law.error_mean_abs() == pytest.approx(np.sum(p * err), rel=1e-10)
    assert law.error_mse() == pytest.approx(np.sum(p * err**2), rel=1e-10)
    for a in (0.0, 0.5, 1.0, 3.0):
        assert law.error_cdf(a) == pytest.approx(np.sum(p[err <= a]), abs=1e-12)
    assert np.allclose(law.cdf(k * law.unit), np.cumsum(p), atol=1e-12)
    # P(M < y) at a lattice point leaves its atom out (the CDF keeps it); between points equal
    assert np.allclose(law.cdf_left(k * law.unit), np.cumsum(p) - p, atol=1e-12)
    assert np.allclose(law.cdf_left((k + 0.5) * law.unit), np.cumsum(p), atol=1e-12)
    for a in np.abs(k * law.unit - law.value):  # every error the law can make, atoms included
        assert law.error_cdf(a) == pytest.approx(np.sum(p[err <= a]), abs=1e-12)
    for q in (0.2, 0.5, 0.95):
        d = law.error_quantile(q)
        assert np.sum(p[err <= d]) >= q - 1e-12 and np.sum(p[err < d]) < q


def test_large_pieces_keep_exact_moments():
    """Pieces of 2^24 points: the closed-form moments agree with the continuous PLM."""
    x = np.random.default_rng(0).normal(50, 10, 301)
    lat = LatticeProfileLaw.for_statistic(x, "median", epsilon=1.0, bounds=(0, 100))
    cont = PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=1.0, bounds=(0, 100))
    assert lat.error_mean_abs() == pytest.approx(cont.error_mean_abs(), rel=1e-4)


def test_tied_integers_are_released_exactly():
    """Integer data with heavy ties: with resolution=1 the tied median is the release with
    probability > 0.99, where the continuous PLM never hits it (error 0.48 of the step).
    On the default grid (2^-24 of the width) the point f(x) competes with whole gaps of
    2^18 points: it wins once the tie runs are long (n = 10^5 here), not at n = 1001."""
    gen = np.random.default_rng(0)
    x = gen.integers(0, 9, 1001).astype(float)
    law = law_of(x, eps=0.5, bounds=(0, 100), resolution=1.0)
    assert math.exp(law.logpdf(np.median(x))) > 0.99
    assert law.error_mean_abs() < 0.01
    cont = PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=0.5, bounds=(0, 100))
    assert cont.error_mean_abs() > 0.3
    # auto (permute-and-flip here) hits the tied median with probability > 0.99 per draw:
    # at least 18 of 20 seeded releases (a false failure has probability < 1e-4)
    rel = [
        float(pv.private_median(x, epsilon=0.5, bounds=(0, 100), resolution=1, rng=s))
        for s in range(20)
    ]
    assert sum(v == np.median(x) for v in rel) >= 18
    big = gen.integers(0, 9, 100_001).astype(float)
    fine = law_of(big, eps=0.5, bounds=(0, 100), resolution=None)
    assert math.exp(fine.logpdf(np.median(big))) > 0.99


def test_even_median_lives_on_the_half_lattice():
    law = law_of([1, 2, 5, 6], bounds=(0, 8))
    assert law.unit == 0.5 and law.value == 3.5
    draws = law.sample(500, rng=0)
    assert np.all(draws * 2 == np.rint(draws * 2)) and draws.min() >= 0 and draws.max() <= 8


def test_release_matches_the_law_and_charges_the_budget_first():
    x = np.arange(11.0)
    mech = pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 10), resolution=1)
    r = mech.release(x, rng=4)
    assert float(r) == mech.law(x).sample(None, rng=4)
    budget = pv.Budget(epsilon=1.5)
    mech.release(x, rng=1, budget=budget)
    with pytest.raises(Exception, match="budget|exceed|remain"):
        mech.release(np.array([np.nan]), rng=1, budget=budget)  # refused before x is read


def test_resolution_is_validated_before_any_data():
    with pytest.raises(ValidationError, match="resolution"):
        pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0.2, 0.8), resolution=1)
    with pytest.raises(ValidationError, match="resolution"):
        pv.private_median([1.0], epsilon=1.0, bounds=(0, 2), mechanism="laplace", resolution=1)
    with pytest.raises(ValidationError, match="resolution"):
        pv.PiecewiseLaplace("mean", epsilon=1.0, bounds=(0, 1), resolution=0.5)
    grid = LatticeGrid.for_bounds(-3.0, 1e9, None)
    assert max(abs(grid.ka), abs(grid.kb)) < 2**52 and math.log2(grid.step).is_integer()


# ------------------------------------------------------------------ the staircase shape
def test_staircase_is_flat_then_one_level_lower_in_each_piece():
    """On a long piece the pmf is flat on the first floor(c L) points and exactly
    e^{-eps'/2} lower on the rest, c = 1/(1 + e^{eps/4})."""
    eps = 2.0
    law = law_of([0, 10, 10, 10, 40, 40, 40], eps=eps, bounds=(0, 40))  # median 10
    stair = LatticeProfileLaw(law.profile, eps, shape="stair")
    up = law.profile.upper
    j = int(np.argmax(np.diff(up) > 10))  # the long level-(j+1) piece up[j] -> up[j+1]
    k = np.arange(up[j] + 1, up[j + 1] + 1)
    lp = stair.log_pmf_index(k)
    m = int(stair_fraction(eps) * k.size)
    assert 0 < m < k.size and np.ptp(lp[:m]) == 0 and np.ptp(lp[m:]) == 0
    assert lp[m - 1] - lp[m] == pytest.approx(0.5 * float(run_epsilon(eps)), rel=1e-12)
    assert stair_fraction(eps) == pytest.approx(1 / (1 + math.exp(eps / 4)), rel=1e-15)


@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_staircase_lowers_the_exact_error_on_the_default_lattice(eps):
    """Exact E|err| (no Monte Carlo): the staircase is at or below PLM's truncated
    exponential on continuous and tied data, and clearly below it at eps = 4."""
    gen = np.random.default_rng(2)
    for x in (gen.normal(50, 10, 101), gen.integers(40, 60, 1001).astype(float)):
        for stat, q in (("median", None), ("quantile", 0.1)):
            kw = dict(epsilon=eps, bounds=(0, 100), quantile=q)
            t = LatticeProfileLaw.for_statistic(x, stat, shape="texp", **kw).error_mean_abs()
            s = LatticeProfileLaw.for_statistic(x, stat, shape="stair", **kw).error_mean_abs()
            assert s <= t * (1 + 1e-12)
            if eps == 4.0 and x.size == 101:
                assert s < 0.9 * t


def test_piecewise_laplace_releases_the_staircase_by_default():
    x = np.arange(11.0)
    assert pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 10)).law(x).shape == "stair"
    law = pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 10), shape="texp").law(x)
    assert law.shape == "texp"
    with pytest.raises(ValidationError, match="shape"):
        pv.PiecewiseLaplace("median", epsilon=1.0, bounds=(0, 10), shape="uniform")
    with pytest.raises(ValidationError, match="shape"):
        pv.InverseSensitivity("median", epsilon=1.0, bounds=(0, 10), shape="stair")


def _reference_index(law, bits):
    """The former sampler (module docstring, steps 1-3): bisection of the list of the piece
    weights' prefix sums, the reference of the fast path's draws."""
    import bisect
    import itertools

    cum = list(itertools.accumulate(law.integer_weights()))
    num, den = law.eps_run.numerator, law.eps_run.denominator
    while True:
        j = bisect.bisect_right(cum, bits.below(cum[-1]))
        length = int(law.length[j])
        i = bits.below(length) + 1
        if law.shape == "texp" and not bits.bernoulli_exp(num * i, 2 * den * length):
            continue
        return int(law.inner[j]) + int(law.side[j]) * i


FAST_CASES = [  # (data, statistic, eps, bounds, resolution, shape)
    (np.linspace(-0.9, 0.8, 1001), "median", 0.25, (-1, 1), None, "stair"),
    (np.linspace(-0.9, 0.8, 1000), "median", 1.0, (-1, 1), None, "texp"),
    (np.arange(0, 101, 3) % 40, "quantile", 0.37, (0, 40), 1.0, "stair"),
    (np.r_[np.zeros(50), np.arange(30)], "quantile", 4.0, (0, 100), 0.5, "uniform"),
    (np.linspace(-900, 990, 333), "median", 60.0, (-1000, 1000), None, "stair"),
]


@pytest.mark.parametrize("case", range(len(FAST_CASES)))
def test_piece_search_is_the_bisection_of_the_integer_weights(case):
    """The sampler's piece search (float prefix sums settled by exact per-level sums) is
    ``bisect_right`` in the exact prefix sums of :meth:`integer_weights`, at every piece's
    two ends (where the float proposal alone can be off by a piece), at 0, at the total - 1
    and at random integers. Control: the float proposal alone misses some of those ends."""
    import bisect
    import itertools

    x, stat, eps, bounds, res, shape = FAST_CASES[case]
    law = law_of(x, stat, eps=eps, bounds=bounds, resolution=res, shape=shape, q=0.3)
    cum = list(itertools.accumulate(law.integer_weights()))
    assert law._total() == cum[-1]
    from privest.mechanisms.samplers.bigint import Bits

    bits = Bits(np.random.default_rng(case))
    us = {0, cum[-1] - 1} | {bits.below(cum[-1]) for _ in range(500)}
    us |= {c + d for c in cum[:-1] for d in (-1, 0, 1)}
    misses = 0
    for u in sorted(us):
        assert law._piece_of(u) == bisect.bisect_right(cum, u), u
        v = u / (1 << law._bits)
        proposal = min(int(np.searchsorted(law._cum_f, v, side="right")), len(cum) - 1)
        misses += proposal != bisect.bisect_right(cum, u)
    if len(cum) > 300:  # long float sums round: the exact settling is needed
        assert misses > 0


@pytest.mark.parametrize("case", range(len(FAST_CASES)))
def test_fast_sampler_draws_what_the_reference_sampler_draws(case):
    """Seeded draws of the fast sampler equal those of the former one (the list of weights
    bisected) on the same stream of words; control: a reference that draws its piece from
    the weights reversed gives other draws."""
    from privest.mechanisms.samplers.bigint import Bits

    x, stat, eps, bounds, res, shape = FAST_CASES[case]
    law = law_of(x, stat, eps=eps, bounds=bounds, resolution=res, shape=shape, q=0.3)
    fast = Bits(np.random.default_rng(case), block=64)
    slow = Bits(np.random.default_rng(case), block=64)
    a = [law.sample_index(fast) for _ in range(300)]
    assert a == [_reference_index(law, slow) for _ in range(300)]
    other = law_of(x, stat, eps=eps, bounds=bounds, resolution=res, shape=shape, q=0.3)
    other._weights = law.integer_weights()[::-1]
    slow = Bits(np.random.default_rng(case), block=64)
    assert a != [_reference_index(other, slow) for _ in range(300)]

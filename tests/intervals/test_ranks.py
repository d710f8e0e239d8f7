"""The ranks of a quantile interval's ends (privest.intervals.ranks): the staircase's rank
noise against a simulation of the staircase on exponential gaps, and the calibration
property of the planned ranks."""

import math

import numpy as np
import pytest
from scipy import stats

import privest as pv
from privest.intervals.ranks import (
    _piece_law,
    clear_of_edges,
    endpoint_plan,
    endpoint_ranks,
    rank_noise_cdf,
)
from privest.mechanisms.lattice_plm import stair_fraction
from privest.mechanisms.profiles.reaches import quantile_target, rank_level


@pytest.mark.parametrize("eps", [0.25, 1.0, 3.0])
def test_piece_law_matches_the_staircase_on_exponential_gaps(eps):
    """P(piece l) = E[w_l D_l / sum_j w_j D_j] for iid exponential gaps D (module
    docstring), against a direct simulation; tolerance 5 Monte Carlo SEs."""
    p, c, r = _piece_law(eps)
    rng = np.random.default_rng(0)
    w = np.exp(-eps * np.arange(1, p.size + 1) / 2) * (c + (1 - c) * r)
    d = rng.exponential(size=(20_000, 2, p.size))
    share = w * d / np.sum(w * d, axis=(1, 2), keepdims=True)
    mc = share.sum(axis=1).mean(axis=0) / 2  # per side
    se = share.sum(axis=1).std(axis=0) / 2 / math.sqrt(20_000)
    assert np.all(np.abs(mc[:6] - p[:6]) < 5 * se[:6] + 1e-12)
    assert p.sum() == pytest.approx(0.5, abs=1e-9)


def test_rank_noise_is_symmetric_continuous_and_uses_the_stair_shape():
    eps = 1.0
    y = np.linspace(-14, 14, 561)
    f = rank_noise_cdf(y, eps)
    assert np.all(np.diff(f) >= 0) and f[0] < 1e-2 and f[-1] > 1 - 1e-2
    assert np.allclose(f + rank_noise_cdf(-y, eps), 1.0)
    # inside the first piece the density steps down by e^{-eps/2} after the flat share c
    c = float(stair_fraction(eps))
    slope_flat = rank_noise_cdf(c / 2 + 1e-4, eps) - rank_noise_cdf(c / 2, eps)
    slope_step = rank_noise_cdf((1 + c) / 2 + 1e-4, eps) - rank_noise_cdf((1 + c) / 2, eps)
    assert slope_step / slope_flat == pytest.approx(math.exp(-eps / 2), rel=1e-6)


def _model_cover_lower(n, q, eps, k, draws=400_000, seed=1):
    """P(B + U - N >= k) by simulation of the model (N by inverting its CDF)."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(-80 / eps, 80 / eps, 200_001)
    noise = np.interp(rng.random(draws), rank_noise_cdf(grid, eps), grid)
    d = rng.binomial(n, q, draws) + rng.random(draws) - noise
    return float(np.mean(d >= k))


@pytest.mark.parametrize("n,q,eps", [(100, 0.5, 0.25), (1000, 0.1, 1.0), (400, 0.9, 2.0)])
def test_planned_ranks_are_the_outermost_with_enough_coverage(n, q, eps):
    level = 0.975
    k_low, k_high = endpoint_ranks(n, q, eps, level)
    se = math.sqrt(level * (1 - level) / 400_000)
    assert _model_cover_lower(n, q, eps, k_low) >= level - 4 * se
    assert _model_cover_lower(n, q, eps, k_low + 1) < level + 4 * se  # one rank in fails
    # the upper end by symmetry of the model: the (1 - q) quantile's lower end
    k_low_mirror, _ = endpoint_ranks(n, 1 - q, eps, level)
    assert k_high == pytest.approx(n + 1 - k_low_mirror, abs=1)


def test_without_noise_the_ranks_are_the_binomial_interval():
    """At a huge epsilon the ranks are the classical order-statistic interval's."""
    n, q = 200, 0.5
    k_low, k_high = endpoint_ranks(n, q, 200.0, 0.975)
    b = np.arange(n + 1)
    classical_low = int(b[stats.binom.sf(b - 1, n, q) >= 0.975].max())
    assert abs(k_low - classical_low) <= 1
    assert abs((n + 1 - k_high) - classical_low) <= 1


def test_plan_moves_an_end_to_its_bound_and_gives_the_other_everything():
    both = endpoint_plan(10_000, 0.5, 1.0, 0.05)
    assert both.lower_epsilon == both.upper_epsilon == 0.5
    one = endpoint_plan(100, 0.9, 2.0, 0.05)  # the upper end would reach past x_(n)
    assert one.upper_rank is None and one.lower_epsilon == 2.0
    assert one.lower_rank is not None
    none = endpoint_plan(100, 0.5, 0.01, 0.05)  # the noise spans the data
    assert none.lower_rank is None and none.upper_rank is None


def test_noise_only_ranks_surround_the_datas_rank():
    k_low, k_high = endpoint_ranks(1000, 0.5, 1.0, 0.975, kind="noise", center=500.5)
    assert k_low < 500.5 < k_high
    assert rank_noise_cdf(np.array([500.5 - k_low]), 1.0)[0] >= 0.975


def test_an_end_whose_noise_reaches_past_the_data_is_refused():
    """An upper end aimed at x_(n) puts half its noise past the last record (where a tied
    or empty gap to the bound drops it and the rest renormalises downwards); a lower end
    100 ranks below x_(n) at eps 0.25 reaches past it with n-fold weight. Control: the same
    ranks in the middle of 10^4 records are clear."""
    assert not clear_of_edges(100, 100, 0.125, +1)
    assert not clear_of_edges(900, 1000, 0.05, -1)
    assert clear_of_edges(5100, 10_000, 0.125, +1)
    assert clear_of_edges(4900, 10_000, 0.05, -1)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100, 101, 640, 10_000, 100_001, 10**7])
def test_rank_level_targets_exactly_that_order_statistic(n):
    """quantile_target(rank_level(k, n), n) = 2k for every rank (a sample of them at large
    n, the ends included): the interval's ends aim at x_(k), not at a half rank."""
    ks = np.arange(1, n + 1) if n <= 1000 else np.r_[1, 2, 3, np.arange(1, n + 1, n // 97), n]
    for k in ks:
        assert quantile_target(rank_level(int(k), n), n) == 2 * k


@pytest.mark.parametrize("resolution", [None, 1])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_the_released_ends_are_the_order_statistics_at_the_planned_ranks(q, resolution):
    """At eps 400 the staircase leaves its target piece with probability about e^-50, so
    each end is x_(k) itself at the planned rank (x_(k) = k - 1 here). Until the fix the
    ends of q = 0.1 and 0.9 were aimed half a rank off (the average of x_(k) and a
    neighbour: a half-integer), outside the ranks' model. ``resolution=1``: the ranks that
    hold for any data (robust_miss), the same order statistics."""
    x = np.random.default_rng(3).permutation(1000).astype(float)
    kw = dict(epsilon=400.0, bounds=(0, 1000), resolution=resolution)
    r = pv.private_quantile(x, q, rng=4, **kw)
    plan = r.interval
    assert plan.lower_rank is not None and plan.upper_rank is not None
    assert r.conf_int() == (plan.lower_rank - 1, plan.upper_rank - 1)
    # the noise-only interval is centred at the point's target rank t (numpy's position
    # rounded to a half rank), not at ceil(q n): at this eps the model's ends are the order
    # statistics just around x_(t) (each end covers x_(t) with probability 1/2 when aimed at
    # it), x_(ceil(t) - 1) and x_(floor(t) + 1); the rule for any data aims at x_(floor(t))
    # and x_(ceil(t)) themselves (its bound there: about 1e-8)
    t = quantile_target(q, 1000) / 2
    own = pv.private_quantile(x, q, rng=5, inference="noise", **kw)
    if resolution is None:
        assert own.conf_int() == (math.ceil(t) - 2, math.floor(t))
    else:
        assert own.conf_int() == (math.floor(t) - 1, math.ceil(t) - 1)

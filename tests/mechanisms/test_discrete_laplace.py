"""The discrete Laplace count (the registry's proof-of-concept mechanism): exact privacy on
neighbour pairs with a negative control, the exact error law against direct sums and
simulation, add/remove neighbours with a person's rows, and auto's choice of it."""

import math

import numpy as np
import pytest

import privest as pv
from privest.domain import Domain
from privest.mechanisms.auto import auto_mechanism
from privest.mechanisms.discrete_laplace import (
    DiscreteLaplace,
    DiscreteLaplaceLaw,
    discrete_laplace_scale,
)
from privest.mechanisms.laplace import LaplaceMechanism


def _worst_log_ratio(law_a, law_b, support):
    la, lb = law_a.logpdf(support), law_b.logpdf(support)
    assert np.all(np.isfinite(la)) and np.all(np.isfinite(lb))
    return float(np.max(np.abs(la - lb)))


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_swap_neighbours_are_eps_close_exactly(eps):
    n = 30
    mech = DiscreteLaplace("count", epsilon=eps)
    worst = 0.0
    for c in range(n):  # indicators with c ones, and a neighbour with c + 1
        a = np.r_[np.ones(c), np.zeros(n - c)]
        b = np.r_[np.ones(c + 1), np.zeros(n - c - 1)]
        worst = max(worst, _worst_log_ratio(mech.law(a), mech.law(b), np.arange(n + 1.0)))
    assert worst <= eps * (1 + 1e-9)
    assert worst >= 0.9 * eps  # the bound is nearly attained (the check is sharp)


def test_negative_control_half_the_scale_breaks_the_guarantee():
    eps, n = 1.0, 20
    half = discrete_laplace_scale(1, eps) / 2
    a = DiscreteLaplaceLaw(7, half, eps, 0.0, float(n))
    b = DiscreteLaplaceLaw(8, half, eps, 0.0, float(n))
    assert _worst_log_ratio(a, b, np.arange(n + 1.0)) > 1.5 * eps


def test_add_remove_with_a_persons_rows():
    eps, m = 1.0, 3
    dom = Domain(neighbours="add_remove", unit="pid", max_rows=m)
    mech = DiscreteLaplace("count", epsilon=eps, domain=dom)
    x = np.r_[np.ones(10), np.zeros(5)]
    y = np.r_[x, np.ones(m)]  # one more person with m rows in the set
    support = np.arange(0.0, 60.0)
    assert _worst_log_ratio(mech.law(x), mech.law(y), support) <= eps * (1 + 1e-9)
    assert math.isinf(mech.law(x).hi)  # n is private: no upper clamp
    out = mech.release(x, rng=1)
    assert out.n is None and float(out) == round(float(out))


@pytest.mark.parametrize(("count", "n"), [(0, 10), (3, 10), (10, 10), (5000, 10**4)])
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_error_law_closed_forms_equal_direct_sums(count, n, eps):
    law = DiscreteLaplace("count", epsilon=eps).law(np.r_[np.ones(count), np.zeros(n - count)])
    y = np.arange(0.0, n + 1.0)
    p = np.exp(law.logpdf(y))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    err = np.abs(y - count)
    assert law.error_mean_abs() == pytest.approx(float(np.sum(p * err)), rel=1e-10, abs=1e-14)
    assert law.error_mse() == pytest.approx(float(np.sum(p * err**2)), rel=1e-10, abs=1e-14)
    for a in (0, 1, 2.5, 7):
        assert law.error_cdf(a) == pytest.approx(float(np.sum(p[err <= a])), abs=1e-12)


def test_sampler_follows_the_law():
    law = DiscreteLaplace("count", epsilon=0.7).law(np.r_[np.ones(4), np.zeros(6)])
    draws = law.sample(40_000, rng=3)
    values, counts = np.unique(draws, return_counts=True)
    p = np.exp(law.logpdf(values))
    se = np.sqrt(p * (1 - p) / draws.size)
    assert np.all(np.abs(counts / draws.size - p) < 5 * se + 1e-4)
    assert np.mean(np.abs(draws - 4)) == pytest.approx(law.error_mean_abs(), abs=5 * 0.02)


def test_beats_laplace_and_auto_picks_it():
    for eps in (0.05, 0.5, 1.0, 4.0):
        dl = DiscreteLaplace("count", epsilon=eps).noise_law().error_mean_abs()
        lap = LaplaceMechanism("count", epsilon=eps).noise_law().error_mean_abs()
        assert dl < lap
        assert auto_mechanism("count", domain=Domain(), epsilon=eps) == "discrete_laplace"
    p = math.exp(-4.0)  # eps 4: E|K| = 2p / (1 - p^2), about 15x below Laplace's 1/4
    assert DiscreteLaplace("count", epsilon=4.0).noise_law().error_mean_abs() == pytest.approx(
        2 * p / (1 - p * p), rel=1e-3
    )
    ind = np.random.default_rng(0).random(1000) < 0.3
    out = pv.private_count(ind, epsilon=1.0, rng=2)
    assert out.mechanism == "discrete_laplace" and float(out) == round(float(out))


def test_scale_is_rational_and_never_below_the_calibration():
    for eps in (1e-7, 0.3, 1 / 3, 1.0, 7.77):
        for m in (1, 5):
            t = discrete_laplace_scale(m, eps)
            assert t >= m / eps and float(t) <= m / eps * (1 + 1e-3) + 1e-3
            assert t.numerator < 2**31 or t.denominator == 1

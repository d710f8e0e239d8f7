"""The paper-001 baselines (as in the authors' code): shapes, consistency at large eps, noise laws.

Each check has a tolerance derived from the baseline's own noise scale at the tested setting.
"""

import math

import numpy as np
import pytest
from scipy import stats

from privest.models.eptr_baselines import (
    bayes_global_sensitivity,
    dpgd,
    dpjl,
    dpnb,
    dpnbss,
    functional_mechanism,
    gaussian_baseline,
    wpe,
)


def _ols(rng, n=20_000, p=3):
    theta = np.array([0.6, -0.4, 0.2])[:p]
    X = rng.standard_normal((n, p))
    return X, X @ theta + 0.5 * rng.standard_normal(n), theta


def test_gaussian_baseline_noise_law():
    rng = np.random.default_rng(0)
    draws = np.array([gaussian_baseline(np.zeros(2), 2.0, 1.0, 0.01, rng) for _ in range(3000)])
    from privest.mechanisms.gaussian import GaussianMechanism

    # two coordinates: the lattice calibrates by zCDP, slightly above the analytic sigma
    s = GaussianMechanism(1.0, 0.01, 2.0, dims=2).sigma
    assert stats.kstest(draws.ravel() / s, "norm").pvalue > 1e-4
    assert bayes_global_sensitivity(100, 1.0) == pytest.approx(math.sqrt(2e-4 + 8))


@pytest.mark.parametrize("method", [dpjl, dpgd, functional_mechanism])
def test_regression_baselines_are_consistent_at_large_eps(method):
    rng = np.random.default_rng(1)
    X, y, theta = _ols(rng)
    if method is dpjl:
        est = np.mean([dpjl(X, y, 4.0, 4.0, 50.0, 0.01, rng, r=200) for _ in range(10)], axis=0)
    elif method is dpgd:
        est = dpgd(X, y, 4.5, 3.0, 1.0, 1e4, 0.01, rng, iterations=60, step=0.5)
    else:
        est = functional_mechanism(X, y, 4.0, 4.0, 1e5, rng)
    assert est.shape == (3,)
    assert np.linalg.norm(est - theta) < 0.1, est


def test_dpgd_and_fm_noise_grows_as_eps_shrinks():
    rng = np.random.default_rng(2)
    X, y, theta = _ols(rng, n=2000)
    for method in (
        lambda e: dpgd(X, y, 4.5, 3.0, 1.0, e, 0.01, rng),
        lambda e: functional_mechanism(X, y, 4.0, 4.0, e, rng, theta_radius=1.0),
    ):
        hi = np.mean([np.sum((method(50.0) - theta) ** 2) for _ in range(30)])
        lo = np.mean([np.sum((method(0.5) - theta) ** 2) for _ in range(30)])
        assert lo > hi


def test_naive_bayes_baselines():
    rng = np.random.default_rng(3)
    labels = rng.choice(3, size=30_000, p=[0.5, 0.3, 0.2])
    X = rng.standard_normal((30_000, 4))
    X[np.arange(30_000), labels] += 3.0
    for method in (dpnb, dpnbss):
        prior, means = method(X, labels, 3, 8.0, 1e4, 0.5, rng)
        assert prior.shape == (3,) and means.shape == (3, 4)
        assert prior.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(prior, [0.5, 0.3, 0.2], atol=0.02)
        assert np.all(np.linalg.norm(means, axis=1) <= 8.0 + 1e-9)
    # Laplace count noise: the noisy prior has the right spread at eps = 1, split 0.5
    counts = np.array(
        [dpnb(X[:1000], labels[:1000], 3, 8.0, 1.0, 0.5, rng)[0][2] for _ in range(2000)]
    )
    # prior_2 = (N_2 + e_2)/(n + e_0 + e_1 + e_2), e_k ~ Lap(4): to first order its sd is
    # sqrt(2) 4 sqrt((1 - pi_2)^2 + 2 pi_2^2) / n with pi_2 ~ 0.2 (SE of an sd from 2000 draws:
    # about 2-3%, so 15% is a loose bound)
    pi2 = np.mean(labels[:1000] == 2)
    expected = math.sqrt(2) * 4 * math.sqrt((1 - pi2) ** 2 + 2 * pi2**2) / 1000
    assert np.std(counts) == pytest.approx(expected, rel=0.15)
    noisy_scale = dpnb(X, labels, 3, 8.0, 1.0, 0.5, rng, scale_with_noisy_counts=True)
    assert noisy_scale[1].shape == (3, 4)


def test_wpe_recovers_a_smooth_function_and_is_bounded():
    rng = np.random.default_rng(4)
    x = rng.random(200_000)
    y = np.sin(2 * np.pi * x) + 0.1 * rng.standard_normal(x.size)
    est = wpe(x, y, 0.3, 1.0, 8, 1e6, rng)
    assert est == pytest.approx(math.sin(2 * math.pi * 0.3), abs=0.05)
    small = [wpe(x[:100], y[:100], 0.3, 1.0, 8, 0.5, rng) for _ in range(50)]
    assert all(-1.0 <= v <= 1.0 for v in small)
    # step function: the Haar estimate at a dyadic cell is exact (up to noise)
    xs = rng.random(100_000)
    ys = np.where(xs < 0.5, -0.5, 0.5)
    assert wpe(xs, ys, 0.75, 1.0, 3, 1e6, rng) == pytest.approx(0.5, abs=0.01)

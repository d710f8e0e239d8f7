"""The Gaussian mechanism at extreme but legal parameters answers or refuses at once
(issue 30: GaussianMechanism(1e-5, 1e-6, 1.0) gave no answer in 60 s; the lattice looped
for ever once the noise outgrew its grid)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privest as pv
from privest.accounting.gaussian import discrete_gaussian_delta, gaussian_sigma
from privest.errors import PrivacyParameterError
from privest.mechanisms.samplers.lattice import (
    VECTOR_SIGMA2,
    LatticeGaussian,
    sample_discrete_gaussian,
)


@pytest.mark.parametrize(
    "epsilon, delta, sensitivity", [(1e-4, 1e-9, 10.0), (1e-3, 1e-9, 1.0), (1e-4, 1e-6, 1.0)]
)
def test_noise_beyond_the_exact_lattice_is_refused_naming_the_parameters(
    epsilon, delta, sensitivity
):
    with pytest.raises(PrivacyParameterError, match=r"epsilon, delta: .* times the sensitivity"):
        pv.GaussianMechanism(epsilon, delta, sensitivity)


@pytest.mark.parametrize("epsilon", [1e-5, 1e-12, 1e308, 1e-300])
def test_epsilon_outside_the_accepted_range_is_refused(epsilon):
    with pytest.raises(PrivacyParameterError, match=r"accepted: \[0.0001, 1000\]"):
        pv.GaussianMechanism(epsilon, 1e-6, 1.0)


@pytest.mark.parametrize("epsilon", [0.03, 0.005, 0.002])
def test_the_refined_grid_keeps_the_exact_guarantee_and_the_least_variance(epsilon):
    """At small epsilon the grid is refined as far as the exact accounting allows; the
    guarantee is still exact and the variance the least one that meets delta."""
    mech = LatticeGaussian(epsilon, 1e-6, 1.0)
    shift = int(mech.shift)
    assert discrete_gaussian_delta(epsilon, shift, mech.sigma2) <= 1e-6
    assert discrete_gaussian_delta(epsilon, shift, mech.sigma2 - 1) > 1e-6
    continuous = gaussian_sigma(epsilon, 1e-6, 1.0, "analytic")
    assert continuous <= mech.sigma <= 1.51 * continuous  # docs/vocabulary.md: 1.5x at ~1300x


def test_one_coordinate_is_within_2_percent_where_the_noise_is_moderate():
    for epsilon in (1.0, 0.1):
        mech = pv.GaussianMechanism(epsilon, 1e-6, 1.0)
        assert mech.sigma <= 1.02 * gaussian_sigma(epsilon, 1e-6, 1.0, "analytic")


def test_variances_beyond_int64_are_sampled_in_python_integers():
    """sigma2 >= 2^24 goes to the split int64 sampler (samplers.wide; Python integers
    before): the sample sd is sigma within 4
    Monte Carlo standard errors (sd of the sd ~ sigma / sqrt(2 n)); the negative control, a
    sampler of twice the variance, is outside them."""
    sigma2, n = 4 * VECTOR_SIGMA2 + 12345, 3000
    draws = sample_discrete_gaussian(sigma2, n, np.random.default_rng(7)).astype(float)
    sigma, se = math.sqrt(sigma2), math.sqrt(sigma2 / (2 * n))
    assert abs(draws.std() - sigma) < 4 * se
    assert abs(draws.mean()) < 4 * sigma / math.sqrt(n)
    control = sample_discrete_gaussian(2 * sigma2, n, np.random.default_rng(7)).astype(float)
    assert abs(control.std() - sigma) > 4 * se


@pytest.mark.parametrize(
    "value, what",
    [("31337.25", "text"), (["1"], "text"), (1 + 2j, "complex"), (float("nan"), "NaN")],
)
def test_release_refuses_values_that_are_not_real_numbers(value, what):
    """'31337.25' was read as a number (issue 30)."""
    with pytest.raises(pv.ValidationError, match=what):
        pv.GaussianMechanism(1.0, 1e-6, 1.0).release(value, rng=0)

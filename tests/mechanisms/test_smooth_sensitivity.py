"""Smooth-sensitivity median on a lattice: the stated guarantee against the exact pmf ratios.

The lattice law at integer scale ``t`` is ``P_t(k - c)``, ``c`` the centre in grid units.
Between neighbours the centre moves by at most ``t / c0`` and the scale by a factor at most
``e^beta (1 + 1/t)`` (module docstring of ``mechanisms/smooth_sensitivity.py``). The tests
compute the worst log pmf ratio over those moves by brute force (normalisers summed, far
tail in closed form) and compare it with :func:`pure_epsilon_bound`; the negative control is
the paper's constants at ``gamma = 12``, whose exact worst ratio exceeds epsilon (1.07 eps)
and which the same computation flags.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privest.errors import ValidationError
from privest.mechanisms.smooth_sensitivity import (
    ETA,
    SmoothSensitivityLaw,
    check_gamma,
    laplace_delta_bound,
    pure_epsilon_bound,
)

J = 2**21  # lattice points summed exactly on each side; the rest in closed form


def _log_power_law(t: int, gamma: int, shift: int = 0):
    """log pmf on k = -J..J of P(k) ~ 1 / (1 + |k - shift|^g / t^g), with its normaliser."""
    k = np.arange(-J, J + 1, dtype=float)
    w = -np.log1p((np.abs(k - shift) / t) ** gamma)
    tail = 2 * t**gamma * (J + 0.5 - abs(shift)) ** (1 - gamma) / (gamma - 1)
    log_z = math.log(np.exp(w).sum() + tail)
    return w - log_z, log_z


def worst_power_law_ratio(epsilon: float, gamma: int, t: int, c0: float, beta: float) -> float:
    """Largest |log P_t(k) / P_t'(k - s)| over the extreme moves (s, t')."""
    base, log_z = _log_power_law(t, gamma)
    s_max = math.floor(t / c0)
    t_max = math.floor(t * math.exp(beta) * (1 + 1 / t))
    worst = 0.0
    for s in (0, s_max):
        for t2 in (t, t_max):
            if s == 0 and t2 == t:
                continue
            other, log_z2 = _log_power_law(t2, gamma, s)
            worst = max(worst, float(np.max(np.abs(base - other))))
            # beyond J the ratio tends monotonically to (t/t2)^gamma * Z2/Z
            limit = gamma * math.log(t / t2) + log_z2 - log_z
            worst = max(worst, abs(limit))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [2, 3, 4, 5, 6])
def test_pure_bound_covers_the_exact_lattice_ratio(gamma):
    epsilon, t_min = 1.0, 4096
    c0 = 4 * gamma / epsilon * (1 + ETA)
    beta = epsilon / gamma * (1 - 2.0**-9)
    exact = worst_power_law_ratio(epsilon, gamma, t_min, c0, beta)
    bound = pure_epsilon_bound(epsilon, gamma, beta, t_min)
    assert exact <= bound <= epsilon
    assert exact >= 0.8 * bound  # the bound is not loose by much: the test has teeth


@pytest.mark.slow
def test_negative_control_gamma_12_with_the_paper_constants_exceeds_epsilon():
    epsilon, gamma, t = 1.0, 12, 4096
    exact = worst_power_law_ratio(epsilon, gamma, t, 4 * gamma / epsilon, epsilon / gamma)
    assert exact > epsilon * 1.05


def test_gamma_outside_2_to_6_is_refused():
    for bad in [1, 7, 8, 2.5, True, "4", None]:
        with pytest.raises(ValidationError, match="gamma"):
            check_gamma(bad)
    assert [check_gamma(g) for g in range(2, 7)] == [2, 3, 4, 5, 6]
    with pytest.raises(ValidationError, match="gamma"):
        SmoothSensitivityLaw(np.zeros(10), epsilon=1.0, bounds=(-1, 1), gamma=8)


def _laplace_hockey_stick(epsilon: float, t: int, t2: int, s: int) -> float:
    """Exact delta(eps) of discrete Laplace(t) centred at 0 vs discrete Laplace(t2) at s."""
    k = np.arange(-60 * t2 - s, 60 * t2 + s + 1, dtype=float)

    def logp(scale, centre):
        r = math.exp(-1 / scale)
        return np.log((1 - r) / (1 + r)) - np.abs(k - centre) / scale

    p, q = logp(t, 0), logp(t2, s)
    both = max(
        np.sum(np.maximum(0.0, np.exp(p) - np.exp(epsilon + q))),
        np.sum(np.maximum(0.0, np.exp(q) - np.exp(epsilon + p))),
    )
    return float(both)


def test_laplace_variant_meets_its_delta_exactly():
    epsilon, delta, t_min = 1.0, 1e-6, 2000
    law = SmoothSensitivityLaw(np.linspace(0, 1, 31), epsilon=epsilon, bounds=(0, 1), delta=delta)
    beta = law.beta
    assert law.delta_bound <= delta
    c0 = 2 / epsilon * (1 + ETA)
    t2 = math.floor(t_min * math.exp(beta) * (1 + 1 / t_min))
    exact = _laplace_hockey_stick(epsilon, t_min, t2, math.floor(t_min / c0))
    assert exact <= laplace_delta_bound(epsilon, beta, t_min)
    # negative control: a dilation twice as large (beta doubled) breaks delta
    t3 = math.floor(t_min * math.exp(4 * beta))
    assert _laplace_hockey_stick(epsilon, t_min, t3, math.floor(t_min / c0)) > delta


def test_releases_lie_on_the_public_grid_and_are_pure_dp_by_the_bound():
    x = np.random.default_rng(1).normal(size=51)
    law = SmoothSensitivityLaw(x, epsilon=1.0, bounds=(-4, 4))
    y = law.sample(2000, rng=2)
    assert np.all(y / law.step == np.rint(y / law.step))
    assert law.epsilon_bound <= 1.0
    # the step is public: it depends on the bounds and delta only
    other = SmoothSensitivityLaw(x * 0.1, epsilon=1.0, bounds=(-4, 4))
    assert other.step == law.step

"""The rank target of lattice quantile releases (profiles.lattice.inward_target).

Half a rank inward of its target (the half rank nearest numpy's position), a quantile aims
at an order statistic or the average of two neighbours (like the even-n median): privacy
is checked exactly on every swap neighbour as in test_plm_lattice.py, with the
sensitivity-2 weights as the negative control; the error laws against a reference are
checked against enumeration of the pmf.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import privest as pv
from privest.mechanisms.lattice_plm import LatticeProfileLaw
from privest.mechanisms.profiles.lattice import INWARD_BELOW, inward_target

SHAPES = ["texp", "uniform", "stair"]
X = [0.5, 1.0, 1.0, 1.0, 2.5, 3.0, 4.0, 4.0]  # ties at x_(2..4), n = 8


def law_of(x, q, eps, shape, target="inward", bounds=(0, 4), resolution=0.5):
    return LatticeProfileLaw.for_statistic(
        np.asarray(x, dtype=float),
        "quantile",
        quantile=q,
        epsilon=eps,
        bounds=bounds,
        resolution=resolution,
        shape=shape,
        target=target,
    )


def log_pmf(law):
    return law.log_pmf_index(np.arange(law.profile.lo, law.profile.hi + 1))


def worst_ratio(x, q, eps, shape, target="inward"):
    """max over every swap neighbour (one record -> any half-step value in [0, 4]) and every
    lattice point of |log P(y|x) - log P(y|x')|."""
    base = log_pmf(law_of(x, q, eps, shape, target))
    worst = 0.0
    for i, v in itertools.product(range(len(x)), np.arange(0, 4.01, 0.5)):
        x2 = np.array(x, dtype=float)
        x2[i] = v
        other = log_pmf(law_of(x2, q, eps, shape, target))
        assert np.all(np.isfinite(base)) and np.all(np.isfinite(other))  # public support
        worst = max(worst, float(np.max(np.abs(base - other))))
    return worst


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("q", [0.1, 0.3, 0.9])
def test_inward_target_is_eps_dp_on_every_neighbour(shape, q):
    w = worst_ratio(X, q, 1.0, shape)
    assert 0.3 < w <= 1.0 * (1 + 1e-12)  # real ratios (> 0.3 eps), within eps


@pytest.mark.parametrize("shape", SHAPES)
def test_auto_target_is_eps_dp_where_the_rule_moves_it(shape):
    assert inward_target("quantile", 0.1, len(X), 2.0)  # eps min(k, n + 1 - k) = 2 < 8
    assert worst_ratio(X, 0.1, 2.0, shape, target="auto") <= 2.0 * (1 + 1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_negative_control_sensitivity_two_weights_are_flagged(shape):
    """Weights exp(-eps s) (a sensitivity-2 score, i.e. the law at 2 eps) claimed as eps-DP:
    the same check flags them (1.34-1.44 against the claimed 1)."""
    assert worst_ratio(X, 0.3, 2.0, shape) > 1.3 * 1.0


def test_the_rule_reads_n_q_and_eps_only():
    # the target t: the half rank nearest numpy's 1 + (n - 1) q
    assert inward_target("quantile", 0.1, 20, 1.0)  # t = 3 (2.9): 3 < 8
    assert not inward_target("quantile", 0.1, 20, 4.0)  # 4 * 3 = 12
    assert inward_target("quantile:0.9", None, 20, 2.0)  # t = 18 (18.1): 2 * 3 = 6 < 8
    assert not inward_target("quantile", 0.1, 1000, 0.1)  # t = 101 (100.9): 10.1
    assert not inward_target("median", None, 20, 0.1)  # the median never moves
    assert not inward_target("quantile", 0.5, 21, 0.1)  # k = 11 = (n + 1)/2: the middle
    assert INWARD_BELOW == 8.0


def test_inward_target_is_the_average_with_the_inner_neighbour():
    rng = np.random.default_rng(2)
    x = np.round(rng.normal(0, 2, 20), 3)
    xs = np.sort(x)
    kw = dict(epsilon=1.0, bounds=(-10, 10), resolution=0.001)
    lo = pv.PiecewiseLaplace("quantile", quantile=0.1, **kw).law(x)
    hi = pv.PiecewiseLaplace("quantile", quantile=0.9, **kw).law(x)
    assert lo.value == pytest.approx((xs[2] + xs[3]) / 2, abs=1e-9)  # t = 3 -> rank 3.5
    assert hi.value == pytest.approx((xs[16] + xs[17]) / 2, abs=1e-9)  # t = 18 -> 17.5
    far = pv.PiecewiseLaplace("quantile", quantile=0.1, **{**kw, "epsilon": 8.0}).law(x)
    assert far.value == pytest.approx(xs[2], abs=1e-9)  # 8 * 3 = 24: x_(t)
    rank = pv.PiecewiseLaplace("quantile", quantile=0.1, target="rank", **kw).law(x)
    assert rank.value == xs[2]
    # exact E|release - numpy's quantile|: half a rank inward is better here
    truth = float(np.quantile(x, 0.1))
    assert lo.error_mean_abs(reference=truth) < 0.95 * rank.error_mean_abs(reference=truth)


@pytest.mark.parametrize("shape", SHAPES)
def test_error_laws_against_a_reference_match_enumeration(shape):
    law = law_of([0, 1, 1, 4, 6, 7, 8, 8], 0.1, 0.8, shape, bounds=(0, 12), resolution=1.0)
    k = np.arange(law.profile.lo, law.profile.hi + 1)
    p = np.exp(log_pmf(law))
    for ref in (0.0, 0.5, 2.25, 7.0, law.value):
        err = np.abs(k * law.unit - ref)
        assert law.error_mean_abs(reference=ref) == pytest.approx(np.sum(p * err), rel=1e-10)
        for a in (0.0, 0.5, 1.0, 3.0):
            want = np.sum(p[err <= a + 1e-12])
            assert law.error_cdf(a, reference=ref) == pytest.approx(want, abs=1e-12)
    assert law.error_mean_abs(reference=law.value) == pytest.approx(law.error_mean_abs())

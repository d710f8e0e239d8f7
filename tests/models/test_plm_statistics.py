"""User functions private_median / quantile / mean / sum / count / variance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privest.accounting.base import ApproxDP
from privest.domain import Domain
from privest.errors import BoundsError, PrivacyParameterError, ValidationError
from privest.mechanisms.auto import auto_mechanism
from privest.mechanisms.laplace import LaplaceLaw
from privest.mechanisms.lattice_plm import truncation_levels
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.models.statistics import (
    private_count,
    private_mean,
    private_median,
    private_quantile,
    private_statistic,
    private_sum,
    private_variance,
    statistic_mechanism,
)
from privest.released import PrivateStatistic

X = np.random.default_rng(0).uniform(20, 80, 2001)
B = (0, 100)
MECHS = ["auto", "piecewise_laplace", "inverse_sensitivity", "smooth_sensitivity", "laplace"]


def _check_release_law(values: np.ndarray, mech) -> None:
    """KS against the mechanism's CDF; where it clamps, binomial checks of the two atoms
    and KS of the values inside the range against the conditional law."""
    if not hasattr(mech, "clamp"):
        assert stats.kstest(values, mech.cdf).pvalue > 1e-3
        return
    lo, hi = mech.output_range
    f_lo, f_hi = float(mech.cdf(lo)), float(mech.cdf(hi))
    for count, p in (((values == lo).sum(), f_lo), ((values == hi).sum(), 1 - f_hi)):
        assert stats.binomtest(int(count), values.size, p).pvalue > 1e-3
    inside = values[(values > lo) & (values < hi)]
    assert stats.kstest(inside, lambda y: (mech.cdf(y) - f_lo) / (f_hi - f_lo)).pvalue > 1e-3


@pytest.mark.parametrize("mechanism", MECHS)
def test_median_releases_follow_the_mechanism_law(mechanism):
    """A release is the mechanism's own draw (clamped where it clamps) for the same seed,
    and 300 seeded releases pass a KS test against that law: a wrong mechanism, scale,
    centre or clamp fails it."""
    kw = dict(epsilon=1.0, bounds=B, mechanism=mechanism, inference="none")  # the point's law
    r = private_median(X, rng=1, **kw)
    mech = statistic_mechanism("median", epsilon=1.0, bounds=B, mechanism=mechanism).law(X)
    raw = mech.sample(None, rng=1)
    expected = float(mech.clamp(raw)) if hasattr(mech, "clamp") else raw
    assert isinstance(r, float) and float(r) == expected
    values = np.array([private_median(X, rng=s, **kw) for s in range(300)])
    _check_release_law(values, mech)


def test_values_are_close_at_large_epsilon_and_reproducible():
    tol = 1.0
    assert abs(private_median(X, epsilon=5, bounds=B, rng=1) - np.median(X)) < tol
    assert abs(private_quantile(X, 0.9, epsilon=5, bounds=B, rng=1) - np.quantile(X, 0.9)) < tol
    assert abs(private_mean(X, epsilon=5, bounds=B, rng=1) - X.mean()) < tol
    assert abs(private_sum(X, epsilon=5, bounds=B, rng=1) - X.sum()) < 200
    assert abs(private_variance(X, epsilon=5, bounds=B, rng=1) - X.var()) < 30
    assert abs(private_count(X > 50, epsilon=5, rng=1) - (X > 50).sum()) < 10
    assert private_median(X, epsilon=1, bounds=B, rng=7) == private_median(
        X, epsilon=1, bounds=B, rng=7
    )


def test_release_error_matches_the_mechanism_error_functional():
    """Mean |private_median - median| over seeds agrees with E|err| within 4 MC SE."""
    mech = PiecewiseLaplaceLaw.for_statistic(X, "median", epsilon=0.5, bounds=B)
    errs = np.array(
        [
            abs(private_median(X, epsilon=0.5, bounds=B, rng=s, inference="none") - np.median(X))
            for s in range(400)
        ]
    )
    assert abs(errs.mean() - mech.error_mean_abs()) < 4 * errs.std() / math.sqrt(errs.size)


def test_result_is_a_float_that_carries_its_guarantee():
    x = np.r_[X, [-5.0, 150.0]]
    with pytest.raises(BoundsError, match="outside the public bounds"):
        private_median(x, epsilon=1, bounds=B)
    r = private_median(x, epsilon=1, bounds=B, clip=True, rng=2)
    assert isinstance(r, PrivateStatistic) and isinstance(r, float)
    assert r.n == x.size and r.mechanism == "piecewise_laplace" and r.statistic == "median"
    assert isinstance(r.guarantee, ApproxDP) and r.guarantee.eps == 1 and r.guarantee.dlt == 0
    assert r.randomness == "seeded" and float(r) == r.value
    assert type(r + 1.0) is float  # arithmetic gives plain floats: derived values lose it
    assert "1-DP" in r.summary() and "clipped" not in r.summary()  # no exact counts
    import pickle

    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.guarantee.label == r.guarantee.label
    secure = private_mean(X, epsilon=1, bounds=B)
    assert secure.randomness == "secure" and secure.mechanism == "laplace"
    # one return type for every function
    for f in (private_median, private_mean, private_sum, private_variance):
        assert isinstance(f(X, epsilon=1, bounds=B, rng=3), PrivateStatistic)
    assert isinstance(private_quantile(X, 0.9, epsilon=1, bounds=B, rng=3), PrivateStatistic)
    assert isinstance(private_count(X > 50, epsilon=1, rng=3), PrivateStatistic)


def test_auto_rule_uses_public_inputs_only():
    dom = Domain(bounds=(0, 1))
    assert auto_mechanism("median", domain=dom) == "piecewise_laplace"
    assert auto_mechanism("quantile:0.3", domain=dom) == "piecewise_laplace"
    assert auto_mechanism("variance", domain=dom) == "laplace"
    assert auto_mechanism("mean", domain=dom) == auto_mechanism("sum", domain=dom) == "laplace"
    # counts: the integer (discrete Laplace) noise has the smaller exact error at every eps
    for eps in (0.01, 0.5, 1.0, 4.0):
        assert auto_mechanism("count", domain=Domain(), epsilon=eps) == "discrete_laplace"
    # the rule is right on the worst case: for a count PLM is Lap(2/eps), twice Laplace's error
    ind = np.r_[np.ones(500), np.zeros(500)]
    plm = PiecewiseLaplaceLaw.for_statistic(ind, "count", epsilon=1.0)
    lap = LaplaceLaw.for_statistic(ind, "count", epsilon=1.0)
    assert plm.error_mean_abs() == pytest.approx(2 * lap.error_mean_abs(), rel=1e-6)


def test_laplace_release_is_clamped_into_the_range():
    """Lap(1000) around 2 on [0, 10]: nearly every release is clamped to a bound and says so."""
    kw = {"epsilon": 0.01, "bounds": (0, 10), "mechanism": "laplace"}
    x = np.array([1.0, 2.0, 3.0])
    law = statistic_mechanism("median", **kw).law(x)
    results = [private_median(x, rng=s, **kw) for s in range(50)]
    clamped = 0
    for s, r in enumerate(results):
        raw = law.sample(None, rng=s)
        assert r == min(max(raw, 0.0), 10.0)
        clamped += not 0 <= raw <= 10
    assert clamped >= 45
    assert {float(r) for r in results} >= {0.0, 10.0}


def test_validation_errors():
    with pytest.raises(BoundsError):
        private_median(X, epsilon=1, bounds=(5, 1))
    with pytest.raises(ValidationError, match="bounds: required"):
        private_median(X, epsilon=1)  # bounds are required
    with pytest.raises(PrivacyParameterError):
        private_median(X, epsilon=0, bounds=B)
    with pytest.raises(PrivacyParameterError):
        private_mean(X, epsilon=math.inf, bounds=B)
    with pytest.raises(ValidationError, match="mechanism"):
        private_median(X, epsilon=1, bounds=B, mechanism="gaussian")
    with pytest.raises(ValidationError, match="does not release the mean"):
        private_mean(X, epsilon=1, bounds=B, mechanism="smooth_sensitivity")
    with pytest.raises(ValidationError, match="q"):
        private_quantile(X, 1.5, epsilon=1, bounds=B)
    with pytest.raises(ValidationError, match="0/1"):
        private_count(X, epsilon=1)
    with pytest.raises(ValidationError, match="NaN"):
        private_median(np.r_[X, np.nan], epsilon=1, bounds=B)


def test_count_with_predicate_and_statistic_by_name():
    a = private_count(X, where=lambda v: v > 50, epsilon=2, rng=4)
    b = private_count(X > 50, epsilon=2, rng=4)
    assert a == b
    v = private_statistic(X, "quantile:0.25", epsilon=2, bounds=B, rng=5)
    assert abs(v - np.quantile(X, 0.25)) < 2


def test_variance_large_n_uses_truncated_profile():
    x = np.random.default_rng(1).uniform(0, 1, 5000)
    kw = dict(epsilon=1.0, bounds=(0, 1), mechanism="piecewise_laplace")
    r = private_variance(x, rng=6, inference="none", **kw)  # its noise law is the data's
    prof = statistic_mechanism("variance", **kw).law(x).profile
    assert prof.levels < 100 and prof.upper[-1] == prof.hi
    assert abs(r - x.var()) < 0.01


@pytest.mark.parametrize("mechanism", ["piecewise_laplace", "inverse_sensitivity"])
def test_every_variance_entry_point_builds_the_same_mechanism(mechanism):
    """private_variance, private_statistic(..., "variance") (privest stat) agree: same
    truncated profile for n > 2000, same release for the same seed."""
    x = np.random.default_rng(2).uniform(0, 1, 3000)
    kw = {"epsilon": 1.0, "bounds": (0, 1), "mechanism": mechanism}
    a = private_variance(x, rng=4, inference="none", **kw)  # data-dependent noise: no interval
    b = private_statistic(x, "variance", rng=4, inference="none", **kw)
    assert a == b and a.mechanism == b.mechanism
    law = statistic_mechanism("variance", **kw).law
    pa, pb = law(x).profile, law(x).profile
    assert pa.levels == pb.levels < 100
    assert np.array_equal(pa.upper, pb.upper) and np.array_equal(pa.lower, pb.lower)
    # at n <= 2000 all levels are computed, then the lattice release keeps the public
    # k = truncation_levels(eps, lattice points) of them with the range-end tail (Sec. 5.2)
    small = law(x[:500]).profile
    assert small.levels == truncation_levels(1.0, small.hi - small.lo + 1) > pa.levels
    assert small.upper[-1] == small.hi


def test_auto_variance_is_the_float_safe_laplace_release_at_every_entry_point():
    x = np.random.default_rng(2).uniform(0, 1, 3000)
    kw = {"epsilon": 1.0, "bounds": (0, 1)}
    a = private_variance(x, rng=4, **kw)
    b = private_statistic(x, "variance", rng=4, **kw)
    assert a == b and a.mechanism == b.mechanism == "laplace"
    step = statistic_mechanism("variance", **kw).law(x).lattice.step
    assert float(a) / step == round(float(a) / step)


@pytest.mark.parametrize("mechanism", ["auto", *MECHS[1:], "permute_and_flip", "two_stage"])
@pytest.mark.parametrize("n", [20, 21])
def test_quantile_one_half_is_the_median_release(mechanism, n):
    """One concept, one release: private_quantile(x, 0.5) is private_median(x): the same
    mechanism, target, law and (seeded) value, odd and even n. Control: q = 0.51 is
    another release."""
    x = np.round(np.random.default_rng(n).normal(50, 10, n), 2)
    kw = dict(epsilon=1.0, bounds=B, mechanism=mechanism)
    if mechanism == "permute_and_flip":
        kw["resolution"] = 0.5
    med, q50 = statistic_mechanism("median", **kw), statistic_mechanism("quantile:0.5", **kw)
    assert (
        (med.name, med.spec, med.label)
        == (q50.name, q50.spec, q50.label)
        == (
            med.name,
            "median",
            "median",
        )
    )
    assert med.law(x).value == q50.law(x).value
    assert med.law(x).value == pytest.approx(np.median(x), abs=0.25)  # up to the lattice
    for seed in (1, 2):
        a = private_median(x, rng=seed, **kw)
        b = private_quantile(x, 0.5, rng=seed, **kw)
        assert float(a) == float(b) and a.statistic == b.statistic == "median"
    other = statistic_mechanism("quantile:0.51", **kw)
    assert other.spec != "median"


def test_quantile_target_is_the_half_rank_nearest_numpy():
    """The target of a quantile is the half rank nearest numpy's default (linear) position
    1 + (n - 1) q, symmetric in q <-> 1 - q; q = 1/2 is the median for every n."""
    from privest.mechanisms.profiles.reaches import quantile_target

    for n in range(1, 60):
        assert quantile_target(0.5, n) == n + 1
        for q in (0.01, 0.1, 0.25, 0.3, 0.75, 0.9, 1.0):
            h = 1 + (n - 1) * q
            t = quantile_target(q, n) / 2
            assert abs(t - h) <= 0.25 + 1e-12
            assert q == 1.0 or (  # quantile 0 is refused: (0, 1] (docs/vocabulary.md)
                quantile_target(1 - q, n) == 2 * (n + 1) - quantile_target(q, n)
                or q in (0.1, 0.3, 0.9)  # 1 - q is not exact in floats there
            )
    # n = 640, q = 0.1 (issue 31): numpy's position 64.9 -> x_(65), not x_(ceil(q n)) = x_(64)
    assert quantile_target(0.1, 640) == 130
    x = np.random.default_rng(3).normal(50, 10, 640)
    mech = statistic_mechanism("quantile:0.1", epsilon=4.0, bounds=B, resolution=2.0**-20)
    assert mech.law(x).value == pytest.approx(np.sort(x)[64], abs=2.0**-20)


def test_integer_hint_reads_public_inputs_only():
    """A median or quantile with small whole bounds and no resolution warns (the same for
    any data, and names no data value); resolution=1, wide bounds or a chosen mechanism do
    not."""
    for data in (np.array([1.0, 2, 2, 7]), np.array([1.5, 2.25, 6.75])):
        with pytest.warns(UserWarning, match="resolution=1") as rec:
            private_median(data, epsilon=1.0, bounds=(1, 7), rng=0)
        assert all(str(v) not in str(rec[0].message) for v in ("2.25", "6.75"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.array([1.0, 2, 2, 7])
        private_median(x, epsilon=1.0, bounds=(1, 7), resolution=1, rng=0)
        private_median(x, epsilon=1.0, bounds=(0, 100), rng=0)
        private_median(x, epsilon=1.0, bounds=(1, 7), mechanism="piecewise_laplace", rng=0)
        private_mean(x, epsilon=1.0, bounds=(1, 7), rng=0)

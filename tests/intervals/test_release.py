"""The private statistics with inference (privest.intervals.release, PrivateStatistic):
the split of epsilon, the budget charged once before any data is read, the auxiliary
releases' privacy, inference='none' and 'noise', refusals, and pickling."""

import math
import pickle

import numpy as np
import pytest

import privest as pv
from privest.accounting.budget import Budget
from privest.domain import Domain
from privest.errors import BudgetExceededError, ValidationError
from privest.intervals.counts import count_noise_halfwidth
from privest.intervals.release import SHARES, fourth_plan, moment_inference, spread_plan
from privest.mechanisms.laplace import LaplaceLaw
from privest.models.statistics import statistic_mechanism

X = np.random.default_rng(0).uniform(20, 80, 500)
B = (0.0, 100.0)
CALLS = {
    "mean": lambda **k: pv.private_mean(X, epsilon=1.0, bounds=B, **k),
    "sum": lambda **k: pv.private_sum(X, epsilon=1.0, bounds=B, **k),
    "variance": lambda **k: pv.private_variance(X, epsilon=1.0, bounds=B, **k),
    "median": lambda **k: pv.private_median(X, epsilon=1.0, bounds=B, **k),
    "quantile": lambda **k: pv.private_quantile(X, 0.9, epsilon=1.0, bounds=B, **k),
    "count": lambda **k: pv.private_count(X > 50, epsilon=1.0, **k),
}
TRUTH = {
    "mean": X.mean(),
    "sum": X.sum(),
    "variance": X.var() * 500 / 499,
    "median": np.median(X),
    "quantile": np.quantile(X, 0.9),
    "count": float(np.sum(X > 50)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_split_composes_to_epsilon_and_the_interval_is_sane(name):
    r = CALLS[name](rng=1)
    assert r.inference == "population"
    assert sum(r.split.values()) == pytest.approx(1.0)
    # a quantile's ends: both, or one when the other is a bound (it then gets all of alpha),
    # after the counts of records on the bounds
    ends = set(r.split) - {"point"}
    if name in ("median", "quantile"):
        assert "bound counts" in ends
        ends = ends - {"bound counts"}
        assert ends and ends <= {"lower end", "upper end", "unspent"}
    else:
        assert ends == set(SHARES[name])
    low, high = r.conf_int()
    assert low <= high and r.bse > 0
    assert low - 10 * r.bse <= TRUTH[name] <= high + 10 * r.bse  # gross sanity only
    assert float(r.guarantee.eps) == 1.0
    text = r.summary()
    assert "interval" in text and "epsilon split" in text


@pytest.mark.parametrize("name", list(CALLS))
def test_budget_is_charged_once_with_the_total_before_reading(name):
    budget = Budget(1.0)
    CALLS[name](rng=2, budget=budget)
    (spend,) = budget.spends
    assert spend.epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        CALLS[name](rng=2, budget=budget)


def test_inference_none_is_the_mechanisms_release():
    """All of epsilon on the point: the same draw as the mechanism itself."""
    got = pv.private_mean(X, epsilon=1.0, bounds=B, rng=5, inference="none")
    mech = statistic_mechanism("mean", epsilon=1.0, bounds=B)
    assert float(got) == float(mech.release(X, rng=5))
    with pytest.raises(ValidationError, match="inference='none'"):
        got.conf_int()
    with pytest.raises(ValidationError, match="inference"):
        _ = got.bse
    assert got.split == {"point": 1.0}


def test_noise_only_interval_is_labelled_and_spends_nothing_extra():
    r = pv.private_mean(X, epsilon=1.0, bounds=B, rng=6, inference="noise")
    assert r.inference == "noise" and r.split == {"point": 1.0}
    low, high = r.conf_int(0.05)
    b = statistic_mechanism("mean", epsilon=1.0, bounds=B).noise_law(500).scale
    assert high - low == pytest.approx(2 * b * math.log(20), rel=1e-9)
    assert "noise only" in r.summary()


def test_bad_inference_and_alpha_are_refused():
    with pytest.raises(ValidationError, match="inference"):
        pv.private_mean(X, epsilon=1.0, bounds=B, inference="bootstrap")
    with pytest.raises(ValidationError, match="alpha"):
        pv.private_median(X, epsilon=1.0, bounds=B, alpha=1.5)
    r = pv.private_median(X, epsilon=1.0, bounds=B, rng=3, alpha=0.1)
    assert r.conf_int(0.1) == r.conf_int(alpha=0.1)
    with pytest.raises(ValidationError, match="released for alpha=0.1"):
        r.conf_int(0.05)


def test_add_remove_has_only_the_noise_interval():
    dom = Domain(neighbours="add_remove")
    with pytest.raises(ValidationError, match="n is private"):
        pv.private_count(X > 50, epsilon=1.0, domain=dom)
    r = pv.private_count(X > 50, epsilon=1.0, domain=dom, inference="noise", rng=1)
    half = count_noise_halfwidth(r.interval.r, 0.05)
    assert r.n is None and r.conf_int() == (max(0.0, float(r) - half), float(r) + half)
    s = pv.private_sum(
        X, epsilon=1.0, domain=Domain(bounds=B, neighbours="add_remove"), inference="noise", rng=1
    )
    assert s.conf_int().lower < float(s) < s.conf_int().upper


def test_a_data_dependent_point_mechanism_is_refused_for_moment_intervals():
    with pytest.raises(ValidationError, match="noise law"):
        pv.private_mean(X, epsilon=1.0, bounds=B, mechanism="piecewise_laplace")
    r = pv.private_mean(X, epsilon=1.0, bounds=B, mechanism="piecewise_laplace", inference="none")
    assert math.isfinite(float(r))


def test_pickle_keeps_the_interval():
    r = pv.private_quantile(X, 0.5, epsilon=1.0, bounds=B, rng=4)
    back = pickle.loads(pickle.dumps(r))
    assert back.conf_int() == r.conf_int() and back.split == r.split


def test_batch_and_single_intervals_agree():
    """MomentInference on arrays of releases (the benchmark's path) gives the same intervals
    as one release at a time."""
    dom = Domain(bounds=B)
    centre, cap = spread_plan(dom)
    est, spread = np.array([48.0, 52.5]), np.array([700.0, 650.0])
    kw = dict(spread_scale=0.9, spread_cap=cap, centre=centre)
    split = {"point": 0.75, "spread": 0.25}
    batch = moment_inference("mean", "population", est, 500, dom, 0.3, split, spread=spread, **kw)
    lo, hi = batch.conf_int(0.05)
    for i in range(2):
        one = moment_inference(
            "mean", "population", est[i], 500, dom, 0.3, split, spread=spread[i], **kw
        )
        assert one.conf_int(0.05) == pytest.approx((lo[i], hi[i]))
        assert one.bse == pytest.approx(batch.bse[i])


# -- privacy of the auxiliary releases ----------------------------------------------------
def _worst_log_ratio(data, neighbour, cap, epsilon):
    """Largest |log p(y|x) - log p(y|x')| over a grid, for the Laplace release of the mean of
    values in [0, cap] (the auxiliary releases' mechanism)."""
    mech = statistic_mechanism("mean", epsilon=epsilon, bounds=(0.0, cap), mechanism="laplace")
    a, b = mech.law(data), mech.law(neighbour)
    assert isinstance(a, LaplaceLaw)
    y = np.linspace(-cap, 2 * cap, 20_001)
    return float(np.max(np.abs(a.logpdf(y) - b.logpdf(y))))


def test_spread_values_stay_in_their_public_range_so_the_release_is_eps_dp():
    """The transformed records (x - c)^2 lie in [0, cap] for every x in the bounds, so the
    Laplace release of their mean is eps-DP (exact log-ratio check on the extreme
    neighbours). Control: centring at a bound instead of the midpoint leaves the range."""
    dom = Domain(bounds=B)
    centre, cap = spread_plan(dom)
    x = np.linspace(*B, 1001)
    assert np.all((x - centre) ** 2 <= cap)
    base = np.full(50, 50.0)
    extreme = base.copy()
    extreme[0] = B[1]
    values = lambda d: (d - centre) ** 2  # noqa: E731
    assert _worst_log_ratio(values(base), values(extreme), cap, 0.25) <= 0.25 * (1 + 1e-9)
    assert np.any((x - B[0]) ** 2 > cap)  # control: the wrong centre breaks the range


def test_fourth_moment_values_stay_in_their_public_range():
    dom = Domain(bounds=B)
    x = np.linspace(*B, 2001)
    for m, v in [(50.0, 400.0), (10.0, 0.0), (95.0, 2500.0), (30.0, 3000.0)]:
        v_c, cap = fourth_plan(m, v, dom)
        assert np.all(((x - m) ** 2 - v_c) ** 2 <= cap * (1 + 1e-12))
    # control: the variance's own range squared is too small a cap when m is off-centre
    v_c, _ = fourth_plan(10.0, 0.0, dom)
    assert np.any(((x - 10.0) ** 2 - v_c) ** 2 > (((B[1] - B[0]) / 2) ** 2) ** 2)

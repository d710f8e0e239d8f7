"""EPTRBayesClassifier.results_: API, the sensitivity of the release of the within-class sums
of squares (worst-case neighbours, with a negative control), the composition of the
guarantee, and the coverage of the intervals (docs/eptr.md, "Standard errors and intervals
of the ePTR Bayes classifier")."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import load_iris

import privest.models.eptr_bayes as eptr_bayes
from privest.accounting.budget import Budget
from privest.errors import NothingReleasedWarning, ValidationError
from privest.learn.results import FitResults
from privest.models.eptr_bayes import EPTRBayesClassifier
from privest.models.eptr_bayes_inference import square_sums, square_sums_release
from privest.models.eptr_inference import float_slack


@pytest.fixture(scope="module")
def iris():
    """Iris on [-1, 1] by the columns' range (the public box), labels 0..2."""
    d = load_iris()
    lo, hi = d.data.min(0), d.data.max(0)
    return (d.data - (lo + hi) / 2) / ((hi - lo) / 2), d.target


def _resample(iris, n, seed):
    Z, y = iris
    idx = np.random.default_rng(seed).integers(0, y.size, n)
    return Z[idx], y[idx]


def _model(**kw):
    kw = {"epsilon": 4.0, "classes": [0, 1, 2], "bounds": (-1, 1), "inference": "sandwich", **kw}
    return EPTRBayesClassifier(**kw)


def test_results_of_a_release(iris):
    X, y = _resample(iris, 20_000, 1)
    m = _model(random_state=1).fit(X, y)
    assert m.released_
    res = m.results_
    assert isinstance(res, FitResults)
    assert list(res.params.index[:3]) == [("0", "share"), ("1", "share"), ("2", "share")]
    assert res.params.size == 3 * 5
    np.testing.assert_allclose(res.params.to_numpy()[3:], m.means_.ravel())  # box centre 0
    se = res.bse.to_numpy()
    assert np.all(np.isfinite(se)) and np.all(se >= m.noise_scale_)
    truth = np.bincount(iris[1]) / iris[1].size
    ci = res.conf_int(0.05).to_numpy()[:3]
    assert np.all(ci[:, 0] < truth) and np.all(truth < ci[:, 1])
    cov = res.cov_params().to_numpy()
    assert np.isnan(cov[3, 4]) and cov[3, 7] == 0.0  # within a class: not released
    text = str(res.summary())
    assert f"{m.guarantee}" in text and "standard errors: 0.1 of epsilon and of delta" in text
    assert "within-class variances" in text and "before the floor at c0" in text


def test_means_are_reported_in_the_features_units(iris):
    """A box not centred at 0: rows are centred for the model, results_ adds the centre back."""
    X, y = _resample(iris, 20_000, 2)
    m = _model(random_state=2, bounds=(0.0, 4.0), x_radius=5.0).fit(X + 2.0, y)
    assert m.released_
    np.testing.assert_allclose(m.results_.params.to_numpy()[3:], m.means_.ravel() + 2.0)


def test_inference_none_spends_nothing_extra(iris):
    X, y = _resample(iris, 20_000, 3)
    m = _model(random_state=1, inference="none").fit(X, y)
    assert m.released_ and m.results_.bse.isna().all() and not m.results_.on_bound.any()
    assert m._eptr_epsilon() == pytest.approx(0.9 * 4.0) and m._eptr_delta() == m.delta
    assert "inference='none'" in str(m.results_.summary())
    assert EPTRBayesClassifier().inference == "none"  # the default: the classifier as before
    with pytest.raises(ValidationError, match="inference"):
        _model(inference="hc3").fit(X, y)
    with pytest.raises(ValidationError, match="c0_share"):
        _model(c0_share=0.95).fit(X, y)


def test_nothing_released_gives_no_numbers(iris):
    X, y = _resample(iris, 300, 4)
    with pytest.warns(NothingReleasedWarning):
        m = _model(epsilon=0.5, random_state=1, c0=0.3).fit(X, y)
    assert not m.released_
    assert m.results_.params.isna().all() and m.results_.bse.isna().all()
    assert "released nothing" in str(m.results_.summary())


def test_a_projected_mean_claims_no_interval(iris):
    """A small x_radius with clip=True puts the class means of the projected rows near the
    sphere: a mean released outside the ball (projected onto it) is pinned, the others and
    the shares are not; the summary says why."""
    X, y = _resample(iris, 2_000, 5)
    pinned = []
    for seed in range(12):
        m = _model(epsilon=1.0, random_state=seed, x_radius=0.3, clip=True, c0=0.2).fit(X, y)
        assert m.released_
        on = m.results_.on_bound.to_numpy()
        projected = np.linalg.norm(m.means_, axis=1) >= 0.3 * (1 - 1e-12)
        assert not on[:3].any()
        np.testing.assert_array_equal(on[3:], np.repeat(projected, 4))
        assert np.isnan(m.results_.bse.to_numpy()[on]).all()
        assert np.isfinite(m.results_.bse.to_numpy()[~on]).all()
        pinned.append(projected.any())
        if projected.any():
            assert "x_radius ball" in str(m.results_.summary())
    assert any(pinned) and not all(pinned)


def test_composition_of_the_guarantee(iris, monkeypatch):
    """The three mechanisms fit runs (c0, sums of squares, ePTR) add up to the guarantee
    charged to the budget before the data are read: spied from the actual calls."""
    seen = {}
    real_q, real_step = eptr_bayes.square_sums_release, eptr_bayes.eptr_step

    def q(*args):
        seen["se"] = args[3:5]
        return real_q(*args)

    def step(*args, **kw):
        seen["eptr"] = args[3:5]
        return real_step(*args, **kw)

    monkeypatch.setattr(eptr_bayes, "square_sums_release", q)
    monkeypatch.setattr(eptr_bayes, "eptr_step", step)
    X, y = _resample(iris, 20_000, 6)
    budget = Budget(epsilon=4.0, delta=1e-6)
    m = _model(random_state=3, budget=budget, delta=1e-6).fit(X, y)
    assert m.released_
    eps_sum = m.epsilon * m.c0_share + seen["se"][0] + seen["eptr"][0]
    assert eps_sum == pytest.approx(4.0) and seen["se"][0] == pytest.approx(0.4)
    assert seen["se"][1] + seen["eptr"][1] == pytest.approx(1e-6)
    assert len(budget.spends) == 1 and budget.spent().epsilon == pytest.approx(4.0)
    with pytest.raises(Exception, match="budget|exhaust|exceed|remain"):  # spent before data
        _model(budget=budget).fit(None, None)


def _worst_shift(rx, k, p, norm_by):
    """max ||q(X) - q(X')|| (q = Q / norm_by) over neighbours replacing one record by an
    extreme one (axes, diagonals, random directions on the R_x sphere, any class)."""
    rng = np.random.default_rng(7)
    base = rng.uniform(-0.5, 0.5, (40, p)) * rx / math.sqrt(p)
    labels = np.arange(40) % k
    units = [np.eye(p)[j] for j in range(p)] + [np.ones(p) / math.sqrt(p)]
    units += [u / np.linalg.norm(u) for u in rng.standard_normal((4, p))]
    extremes = [(s * rx * u, c) for u in units for s in (1.0, -1.0) for c in range(k)]
    worst = 0.0
    for (x1, c1), (x2, c2) in itertools.product(extremes, repeat=2):
        X1, X2, l1, l2 = base.copy(), base.copy(), labels.copy(), labels.copy()
        X1[0], l1[0], X2[0], l2[0] = x1, c1, x2, c2
        d = square_sums(X1, l1, k, rx) - square_sums(X2, l2, k, rx)
        worst = max(worst, float(np.linalg.norm(d)) / norm_by)
    return worst


def test_square_sums_sensitivity_is_sqrt2_rx_squared():
    """The bound sqrt(2) R_x^2 holds and is attained (an axis record moved to another class
    on another axis); the control normalising by R_x^2 alone (sensitivity 1) is exceeded."""
    rx, k, p = 2.0, 3, 3
    worst = _worst_shift(rx, k, p, rx**2)
    assert worst <= math.sqrt(2) * float_slack(41, p)
    assert worst >= math.sqrt(2) * (1 - 1e-9)
    assert worst > 1.0 * float_slack(41, p) * 1.2  # the control: a sensitivity of 1 is too small


def _hockey_stick(eps, shift, sigma):
    a, b = shift / (2 * sigma), eps * sigma / shift
    return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)


def test_square_sums_release_noise_meets_its_share():
    """The Gaussian divergence at shift sqrt(2) and the mechanism's sd is within the share of
    delta; the control at half the sd is not."""
    mech = square_sums_release(10_000, 3, 4, 0.4, 1e-7)
    sens = math.sqrt(2) * float_slack(10_000, 4)
    assert _hockey_stick(0.4, sens, mech.sigma) <= 1e-7
    assert _hockey_stick(0.4, sens, mech.sigma / 2) > 1e-7


@pytest.mark.slow
def test_coverage_of_the_intervals(iris):
    """300 releases at n = 3 x 10^4, epsilon 4, on resamples of iris (the population), where
    sampling and ePTR noise are of one order: the mean coverage over the 15 parameters within
    3 MC SE of 0.95 and each within 4; the controls, dropping the privacy term (sigma^2) or
    the sampling term (the noise-only interval), undercover by more than 3 MC SE."""
    Z, y0 = iris
    truth = np.concatenate(
        [np.bincount(y0) / y0.size, np.vstack([Z[y0 == c].mean(0) for c in range(3)]).ravel()]
    )
    rng = np.random.default_rng(2028)
    full, no_privacy, no_sampling = [], [], []
    while len(full) < 300:
        idx = rng.integers(0, y0.size, 30_000)
        m = _model(random_state=int(rng.integers(2**32)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NothingReleasedWarning)
            m.fit(Z[idx], y0[idx])
        if not m.released_ or m.results_.on_bound.any():
            continue
        err = np.abs(m.results_.params.to_numpy() - truth)
        se = m.results_.bse.to_numpy()
        sigma = m.noise_scale_
        full.append(err <= 1.959964 * se)
        no_privacy.append(err <= 1.959964 * np.sqrt(np.maximum(se**2 - sigma**2, 0.0)))
        no_sampling.append(err <= 1.959964 * sigma)
    cov = np.mean(full, 0)
    mc_se = math.sqrt(0.95 * 0.05 / 300)
    assert abs(cov.mean() - 0.95) <= 3 * mc_se and np.all(np.abs(cov - 0.95) <= 4 * mc_se), cov
    assert np.mean(no_privacy) < 0.95 - 3 * mc_se, np.mean(no_privacy, 0)
    assert np.mean(no_sampling) < 0.95 - 3 * mc_se, np.mean(no_sampling, 0)

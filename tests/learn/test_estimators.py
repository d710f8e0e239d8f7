"""DRMEstimator and the convenience estimators: closed forms, solvers, inference (paper 000)."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import truncnorm
from sklearn.base import clone
from sklearn.linear_model import QuantileRegressor

import privest as pv
from privest.learn import (
    CallableLoss,
    LossNotSmoothError,
    ScalarQuantileLoss,
    TransformedSquaredLoss,
    abs_sin_squared,
    indicator_squared,
    relu_squared,
)
from privest.learn.estimators import (
    BoundaryWarning,
    DRHingeClassifier,
    DRLinearRegression,
    DRLogisticRegression,
    DRMEstimator,
    DRQuantileRegressor,
)

Z_TOL = 4.0


def _linear_release(n=2000, lam=0.5, delta=0.2, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3))
    y = 0.5 + x @ np.array([1.0, -1.0, 2.0]) + rng.normal(size=n)
    # bounds of width 2: lam per unit of range is half the absolute noise scale
    rel = pv.ZILMechanism(lam=lam / 2, zero_prob=delta, bounds=[(-1, 1)] * 3).release(
        x, rng=pv.make_rng(seed + 1)
    )
    return rel, x, y


def test_least_squares_closed_forms_match_spec_6_3b():
    rel, _, y = _linear_release()
    d1 = np.column_stack([np.ones(rel.n), rel.x1])
    d2 = np.column_stack([np.ones(rel.n), rel.x2])
    delta, lam, n = rel.zero_prob, rel.noise_scale[0], rel.n
    p_mat = np.diag([0.0, 1, 1, 1])
    expected = {
        "dr": np.linalg.solve(
            d1.T @ d1 / delta + (1 - 1 / delta) * d2.T @ d2,
            d1.T @ y / delta + (1 - 1 / delta) * d2.T @ y,
        ),
        "sl": np.linalg.solve(d2.T @ d2 - n * lam**2 * p_mat, d2.T @ y),
        "sdr": np.linalg.solve(d1.T @ d1 - n * (1 - delta) * lam**2 * p_mat, d1.T @ y),
        "naive": np.linalg.solve(d1.T @ d1, d1.T @ y),
    }
    for method, coef in expected.items():
        est = DRLinearRegression(method=method).fit(rel, y)
        np.testing.assert_allclose(est.coef_, coef, rtol=1e-8, atol=1e-10)
        assert est.solution_.solver.startswith("closed form")


def test_transformed_squared_closed_forms():
    rng = np.random.default_rng(1)
    rel = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds=(0, 1)).release(
        rng.uniform(0, 1, (3000, 1)), rng=pv.make_rng(2)
    )
    g = abs_sin_squared()
    dr = DRMEstimator(loss=g, method="dr").fit(rel)
    pseudo = g.g(rel.x1[:, 0]) / 0.2 + (1 - 1 / 0.2) * g.g(rel.x2[:, 0])
    assert dr.coef_[0] == pytest.approx(pseudo.mean(), rel=1e-10)
    sl = DRMEstimator(loss=g, method="sl").fit(rel)  # A2: (1 + 2 pi^2 lam^2) mean g(X2)
    assert sl.coef_[0] == pytest.approx((1 + 2 * math.pi**2 * 0.09) * g.g(rel.x2[:, 0]).mean())


def test_scalar_quantile_scan_is_the_exact_global_minimum():
    rng = np.random.default_rng(3)
    rel = pv.ZILMechanism(lam=0.5, zero_prob=0.3, bounds=(0, 1)).release(
        rng.uniform(0, 1, (300, 1)), rng=pv.make_rng(4)
    )
    loss = ScalarQuantileLoss(quantile=0.3)
    est = DRMEstimator(loss=loss, method="dr", theta_bounds=(-3, 3), inference="none").fit(rel)
    cand = np.concatenate([rel.x1[:, 0], rel.x2[:, 0], [-3, 3]])
    cand = cand[(cand >= -3) & (cand <= 3)]

    def objective(t):
        return np.mean(
            loss.value(rel.x1, None, np.array([t])) / 0.3
            + (1 - 1 / 0.3) * loss.value(rel.x2, None, np.array([t]))
        )

    best = min(objective(t) for t in cand)
    assert objective(est.coef_[0]) == pytest.approx(best, abs=1e-12)


def test_naive_quantile_regression_matches_scikit_learn():
    rel, _, y = _linear_release(n=800, seed=5)
    ours = DRQuantileRegressor(quantile=0.7, method="naive", inference="none").fit(rel, y)
    ref = QuantileRegressor(quantile=0.7, alpha=0.0, solver="highs").fit(rel.x1, y)
    np.testing.assert_allclose(ours.coef_, np.r_[ref.intercept_, ref.coef_], atol=1e-6)


def test_dr_quantile_regression_is_a_local_minimum_no_worse_than_other_starts():
    rel, _, y = _linear_release(n=1000, seed=6)
    est = DRQuantileRegressor(method="dr", inference="none").fit(rel, y)
    rng = np.random.default_rng(7)
    obj = est.solution_.objective
    for _ in range(200):  # no nearby point does better (piecewise-linear: exact local check)
        step = rng.normal(size=4) * 10 ** rng.uniform(-6, -1)
        trial = DRQuantileRegressor(method="dr", inference="none")
        val = _dr_objective(trial, rel, y, est.coef_ + step)
        assert val >= obj - 1e-9
    assert est.converged_


def _dr_objective(est, rel, y, theta):
    from privest.learn.design import analysis_data
    from privest.learn.objective import CorrectedObjective

    return CorrectedObjective(est._make_loss(), analysis_data(rel, y), "dr").value(theta)


def test_hinge_with_ridge_solves_the_convex_problem():
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (400, 2))
    y = np.where(x @ [1.0, 1.0] + 0.2 * rng.normal(size=400) > 0, 1, -1)
    est = DRHingeClassifier(alpha=0.1, method="oracle", inference="none").fit(x, y)
    from scipy import optimize

    def objective(t):
        return np.mean(np.maximum(0, 1 - y * (t[0] + x @ t[1:]))) + 0.05 * t[1:] @ t[1:]

    ref = min(
        (
            optimize.minimize(objective, s, method="Powell", options={"xtol": 1e-10, "ftol": 1e-12})
            for s in (np.zeros(3), est.coef_)
        ),
        key=lambda r: r.fun,
    )
    assert objective(est.coef_) <= ref.fun + 1e-7
    assert np.mean(est.predict(x) == y) > 0.85


def test_sl_and_sdr_refuse_nonsmooth_losses():
    rel, _, y = _linear_release(n=200)
    for method in ("sl", "sdr"):
        with pytest.raises(LossNotSmoothError, match="method='dr'"):
            DRQuantileRegressor(method=method).fit(rel, y)


def test_fit_needs_a_release_and_reports_the_box():
    _, x, y = _linear_release(n=200)
    with pytest.raises(pv.ValidationError, match="ZILRelease"):
        DRLinearRegression().fit(x, y)
    rel, _, y = _linear_release(n=500)
    # the naive slope of x2 (about 1.27) is pinned on a box of half-width 1; the others inside
    with pytest.warns(BoundaryWarning, match="parameter box"):
        est = DRLinearRegression(method="naive", theta_bounds=(-1.0, 1.0)).fit(rel, y)
    assert est.at_bound_.tolist() == [False, False, False, True]
    res = est.results_
    assert np.isnan(res.bse.iloc[3]) and np.isnan(res.pvalues.iloc[3])
    assert np.all(np.isfinite(res.bse.iloc[:3]))
    assert np.isnan(res.conf_int().iloc[3]).all()
    assert str(est.summary()).count("on bound") == 5  # std_err, z, p, both CI ends
    # most parameters on the box: no estimate, and the error says why
    with pytest.raises(pv.EstimationError, match="4 of 4 parameters.*noise is too large"):
        DRLinearRegression(method="naive", theta_bounds=(-0.1, 0.1)).fit(rel, y)


def test_response_array_that_duplicates_a_release_column_is_refused():
    """Issue 13: releasing y with the features and passing it again as an array."""
    import pandas as pd

    rng = np.random.default_rng(30)
    df = pd.DataFrame({"a": rng.uniform(0, 1, 400), "b": rng.uniform(0, 1, 400)})
    df["y"] = (rng.random(400) < 0.5).astype(float)
    kept = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds={"a": (0, 1), "b": (0, 1)})
    noised = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds={"a": (0, 1), "y": (0, 1)})
    for mech in (kept, noised):
        rel = mech.release(df, rng=pv.make_rng(31))
        for y in (df["y"], df["y"].to_numpy()):
            with pytest.raises(pv.ValidationError, match="duplicates the release column 'y'"):
                DRLinearRegression().fit(rel, y)
        # naming the predictors is the explicit way out
        fit = DRLinearRegression(features=["a", "b"]).fit(rel, df["y"].to_numpy())
        assert fit.param_names_ == ["intercept", "a", "b"]
    # a continuous response that the release noised (exact rows sit on the output grid)
    z = np.clip(rng.normal(size=400), -5, 5)
    cont = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds={"a": (0, 1), "z": (-5, 5)})
    rel = cont.release(df[["a", "b"]].assign(z=z), rng=pv.make_rng(33))
    with pytest.raises(pv.ValidationError, match="duplicates the release column 'z'"):
        DRLinearRegression().fit(rel, z)
    # an unrelated response array is accepted
    rel = kept.release(df, rng=pv.make_rng(32))
    assert DRLinearRegression().fit(rel, rng.normal(size=400)).coef_.shape == (4,)


def test_response_clash_scan_by_blocks_counts_every_block(monkeypatch):
    """The clash scan adds its per-column counts over blocks of rows: with blocks of 7 rows
    (no block alone holds the zero_prob / 2 share of matches) the noised copy of y is still
    found, and the column it is is named; control: an unrelated array passes."""
    import pandas as pd

    from privest.learn import design

    rng = np.random.default_rng(40)
    z = np.clip(rng.normal(size=300), -5, 5)
    df = pd.DataFrame({"a": rng.uniform(0, 1, 300), "z": z, "b": rng.uniform(0, 1, 300)})
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds={"a": (0, 1), "z": (-5, 5), "b": (0, 1)})
    rel = mech.release(df, rng=pv.make_rng(41))
    monkeypatch.setattr(design, "CLASH_BLOCK", 7)
    assert design._response_clash(rel, z, z) == "z"
    with pytest.raises(pv.ValidationError, match="duplicates the release column 'z'"):
        DRLinearRegression().fit(rel, z)
    other = rng.normal(size=300)
    assert design._response_clash(rel, other, other) is None


def test_user_callable_loss_with_numerical_gradients():
    rel, x, y = _linear_release(n=3000, lam=0.3, seed=9)
    loss = CallableLoss(lambda xx, yy, th: np.abs(yy - th[0] - xx @ th[1:]), n_params=4)
    est = DRMEstimator(loss=loss, method="oracle", inference="none").fit(x, y)
    np.testing.assert_allclose(est.coef_, [0.5, 1, -1, 2], atol=0.15)


def test_summary_predict_and_sklearn_protocol():
    rel, x, y = _linear_release(n=1000)
    est = DRLinearRegression(method="dr").fit(rel, y)
    text = str(est.summary())
    for word in ("coef", "std_err", "p_value", "intercept", "method=dr", "zero_prob=0.2"):
        assert word in text
    assert str(rel.guarantee) in text  # the release's guarantee is in the header
    assert est.predict(x).shape == (1000,)
    ci = est.results_.conf_int(alpha=0.1).to_numpy()
    assert np.all(ci[:, 0] < est.coef_) and np.all(est.coef_ < ci[:, 1])
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    est.set_params(method="sdr")
    assert est.method == "sdr"


def test_release_column_as_response():
    rng = np.random.default_rng(10)
    x = rng.uniform(0, 1, (500, 2))
    data = np.column_stack([x, x.sum(axis=1) + rng.normal(size=500)])
    import pandas as pd

    df = pd.DataFrame(data, columns=["a", "b", "y"])
    rel = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={"a": (0, 1), "b": (0, 1)}).release(
        df, rng=pv.make_rng(11)
    )
    est = DRLinearRegression().fit(rel, "y")
    assert est.param_names_ == ["intercept", "a", "b"]


# ---------------------------------------------------------------- variances (mean example)
def test_mean_example_variances():
    """l = (x - theta)^2: n Var = Var X + (1-delta) lam^2/delta (DR), + lam^2 (SL),
    + (1-delta) lam^2 (SDR); the sandwich estimates them."""
    n, lam, delta = 400_000, 0.8, 0.25
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 1, (n, 1))
    rel = pv.ZILMechanism(lam=lam, zero_prob=delta, bounds=(0, 1)).release(x, rng=pv.make_rng(13))
    ident = TransformedSquaredLoss(
        lambda v: v, lambda v: np.ones_like(v), lambda v: np.zeros_like(v), name="mean"
    )
    var_x = 1 / 12
    theory = {
        "dr": var_x + (1 - delta) * lam**2 / delta,
        "sl": var_x + lam**2,
        "sdr": var_x + (1 - delta) * lam**2,
    }
    for method, v in theory.items():
        est = DRMEstimator(loss=ident, method=method).fit(rel)
        # the variance estimate has relative SE about sqrt((kurtosis - 1)/n) < 0.01 here
        assert n * est.stderr_[0] ** 2 == pytest.approx(v, rel=0.04)
        assert abs(est.coef_[0] - 0.5) < Z_TOL * math.sqrt(v / n)


@pytest.mark.slow
def test_b_draw_dr_keeps_the_mean_and_lowers_the_variance():
    reps, n, lam, delta = 300, 400, 1.0, 0.2
    loss = abs_sin_squared()
    theta0 = 2 / math.pi
    est = {1: [], 5: []}
    for r in range(reps):
        rng = np.random.default_rng(100 + r)
        rel = pv.ZILMechanism(lam=lam, zero_prob=delta, bounds=(0, 1)).release(
            rng.uniform(0, 1, (n, 1)), rng=pv.make_rng(1000 + r)
        )
        for b in est:
            fit = DRMEstimator(loss=loss, n_draws=b, inference="none", random_state=r).fit(rel)
            est[b].append(fit.coef_[0])
    e1, e5 = np.array(est[1]), np.array(est[5])
    for e in (e1, e5):
        assert abs(e.mean() - theta0) < Z_TOL * e.std() / math.sqrt(reps)
    # variance ratio: F-test at these sizes rejects equality when the ratio is < 0.75
    assert e5.var() / e1.var() < 0.75


# ---------------------------------------------------------------- coverage (Thms 5.3, 6.1)
def _coverage(hits, reps):
    rate = hits / reps
    se = math.sqrt(0.95 * 0.05 / reps)
    return rate, se


@pytest.mark.slow
@pytest.mark.parametrize(
    ("loss", "theta0"),
    [(relu_squared(), 0.5), (indicator_squared(), 0.5), (abs_sin_squared(), 2 / math.pi)],
    ids=["relu", "indicator", "abs_sin"],
)
def test_dr_coverage_on_section_7_1_losses(loss, theta0):
    reps, n, lam, delta = 600, 500, 0.94, 0.1  # setting S1 of Table 1
    hits = 0
    for r in range(reps):
        x = np.random.default_rng(r).uniform(0, 1, (n, 1))
        rel = pv.ZILMechanism(lam=lam, zero_prob=delta, bounds=(0, 1)).release(
            x, rng=pv.make_rng(r)
        )
        fit = DRMEstimator(loss=loss, method="dr").fit(rel)
        lo, hi = fit.results_.conf_int().to_numpy()[0]
        hits += lo <= theta0 <= hi
    rate, se = _coverage(hits, reps)
    assert abs(rate - 0.95) < 2 * se + 0.005, rate


@pytest.mark.slow
def test_coverage_logistic_setting_a():
    """Logistic, lam = 0.5, delta = 0.2, X ~ N(0, I_6) truncated to [-0.5, 0.5], n = 5000."""
    reps, n = 200, 5000
    hits = np.zeros(6)
    for r in range(reps):
        rng = np.random.default_rng(500 + r)
        x = truncnorm.rvs(-0.5, 0.5, size=(n, 6), random_state=rng)  # the A3 design
        y = (rng.random(n) < 1 / (1 + np.exp(-x.sum(axis=1)))).astype(float)
        rel = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=[(-0.5, 0.5)] * 6).release(
            x, rng=pv.make_rng(900 + r)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = DRLogisticRegression(method="dr", fit_intercept=False).fit(rel, y)
        ci = fit.results_.conf_int().to_numpy()
        hits += (ci[:, 0] <= 1.0) & (1.0 <= ci[:, 1])
    rate, se = _coverage(hits.mean(), reps)
    # six correlated coefficients pooled: the SE of the pooled rate is at most that of one
    assert abs(rate - 0.95) < 2 * se + 0.005, hits / reps


@pytest.mark.slow
def test_linear_model_asymptotic_variances_of_003_prop_6_1():
    """[003] Prop 6.1: AsyVar(SL) = Sx^-1 (s2 Sx + l2 |t|^2 Sx + s2 l2 I + 2 l4 |t|^2 I
    + 3 l4 t t') Sx^-1, and SL - DR = (2 - 1/delta) Sx^-1 V Sx^-1, SL - SDR = delta Sx^-1 V
    Sx^-1 with V = l2 |t|^2 Sx + s2 l2 I + 2 l4 |t|^2 I + (2 + delta) l4 t t'."""
    n, lam, delta, sigma = 400_000, 0.6, 0.3, 1.0
    theta = np.array([1.0, -0.5])
    rng = np.random.default_rng(20)
    x = rng.uniform(-1, 1, (n, 2))
    y = x @ theta + sigma * rng.normal(size=n)
    rel = pv.ZILMechanism(lam=lam / 2, zero_prob=delta, bounds=[(-1, 1)] * 2).release(
        x, rng=pv.make_rng(21)
    )
    sx = np.eye(2) / 3
    sx_inv = np.linalg.inv(sx)
    l2, l4, t2, tt = lam**2, lam**4, theta @ theta, np.outer(theta, theta)
    eye = np.eye(2)
    sl = (
        sx_inv
        @ (sigma**2 * sx + l2 * t2 * sx + sigma**2 * l2 * eye + 2 * l4 * t2 * eye + 3 * l4 * tt)
        @ sx_inv
    )
    v = l2 * t2 * sx + sigma**2 * l2 * eye + 2 * l4 * t2 * eye + (2 + delta) * l4 * tt
    theory = {
        "sl": sl,
        "dr": sl - (2 - 1 / delta) * sx_inv @ v @ sx_inv,
        "sdr": sl - delta * sx_inv @ v @ sx_inv,
    }
    for method, asy in theory.items():
        fit = DRLinearRegression(method=method, fit_intercept=False).fit(rel, y)
        # the sandwich's relative error here is a few percent (fourth moments of SL noise)
        np.testing.assert_allclose(n * np.diag(fit.cov_), np.diag(asy), rtol=0.08)
        assert np.all(np.abs(fit.coef_ - theta) < Z_TOL * np.sqrt(np.diag(asy) / n))


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dr", "sdr", "sl"])
def test_unbiased_with_coverage_when_ranges_differ_by_ten_thousand(method):
    """Issue 13: each column is noised in units of its own range, and the corrected losses
    use each column's noise variance: unbiased estimates and 95% coverage per coefficient
    with x1 in [0, 1] beside x2 in [0, 10^4]."""
    reps, n = 300, 4000
    beta = np.array([1.0, 2.0, 3e-4])
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={"x1": (0, 1), "x2": (0, 1e4)})
    est, hits = [], np.zeros(3)
    for r in range(reps):
        rng = np.random.default_rng(4000 + r)
        import pandas as pd

        x = pd.DataFrame({"x1": rng.uniform(0, 1, n), "x2": rng.uniform(0, 1e4, n)})
        y = beta[0] + x.to_numpy() @ beta[1:] + rng.normal(size=n)
        rel = mech.release(x, rng=pv.make_rng(5000 + r))
        fit = DRLinearRegression(method=method).fit(rel, y)
        est.append(fit.coef_)
        ci = fit.results_.conf_int().to_numpy()
        hits += (ci[:, 0] <= beta) & (beta <= ci[:, 1])
    est = np.array(est)
    # unbiased: the mean of the replicates is within Z_TOL Monte Carlo SEs of the truth
    mc_se = est.std(axis=0, ddof=1) / math.sqrt(reps)
    assert np.all(np.abs(est.mean(axis=0) - beta) < Z_TOL * mc_se), (est.mean(axis=0), mc_se)
    # coverage of each coefficient within 3 binomial SEs of 95% (plus the sandwich's
    # small-sample slack of 0.01)
    se = math.sqrt(0.95 * 0.05 / reps)
    assert np.all(np.abs(hits / reps - 0.95) < 3 * se + 0.01), hits / reps


def test_naive_fit_on_differing_ranges_is_biased():
    """Negative control for the test above: ignoring the noise attenuates both slopes."""
    import pandas as pd

    n = 20_000
    rng = np.random.default_rng(77)
    x = pd.DataFrame({"x1": rng.uniform(0, 1, n), "x2": rng.uniform(0, 1e4, n)})
    y = 1.0 + x.to_numpy() @ [2.0, 3e-4] + rng.normal(size=n)
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={"x1": (0, 1), "x2": (0, 1e4)})
    rel = mech.release(x, rng=pv.make_rng(78))
    naive = DRLinearRegression(method="naive").fit(rel, y).results_
    sdr = DRLinearRegression(method="sdr").fit(rel, y).results_
    # attenuation factor 1 / (1 + 12 (1 - zero_prob) lam^2) = 0.57 on each slope
    for j, b in ((1, 2.0), (2, 3e-4)):
        assert abs(naive.params.iloc[j] - b) > 10 * naive.bse.iloc[j]
        assert abs(sdr.params.iloc[j] - b) < Z_TOL * sdr.bse.iloc[j]

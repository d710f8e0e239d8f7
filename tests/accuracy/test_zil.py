"""Predicted accuracy of a ZIL release and of DR fits on it, against simulation
(paper 000; docs/accuracy.md, "The ZIL release")."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.accuracy import predict_zil, zil_parameter_for
from privest.errors import ValidationError

BOUNDS = {"a": (0.0, 1.0), "b": (-2.0, 2.0)}


def _within(pred: float, sim: np.ndarray, z: float = 4.0) -> bool:
    se = float(np.std(sim, ddof=1)) / math.sqrt(sim.size)
    return abs(float(np.mean(sim)) - pred) <= z * se


def test_one_value_and_column_means_are_predicted_exactly():
    mech = pv.ZILMechanism(0.4, 0.25, BOUNDS)
    n = 40_000
    preds = {a.quantity: a for a in predict_zil(mech, n=n)}
    x = pd.DataFrame({"a": np.full(n, 0.5), "b": np.zeros(n)})
    rel = mech.release(x, rng=3)
    for j, col in enumerate(("a", "b")):
        err = np.abs(rel.x1[:, j] - x[col].to_numpy())
        value = preds[f"value of {col}"]
        assert _within(value.error_sf(value.half_width), (err > value.half_width) * 1.0)
        assert _within(value.se**2, err**2)
        assert not _within(1.2 * value.se**2, err**2)  # negative control: 20% off is seen
        assert float(value.error_sf(0.0)) == pytest.approx(0.75)  # a quarter exactly
    # the mean of a column over n records: R releases of a small data set
    mean = predict_zil(mech, n=500)[1]
    assert mean.quantity == "mean of a"
    gen = np.random.default_rng(4)
    small = x.iloc[:500]
    errs = np.array([mech.release(small, rng=gen).x1[:, 0].mean() - 0.5 for _ in range(600)])
    assert _within(mean.se**2, errs**2)


@pytest.mark.slow
def test_dr_standard_errors_match_repeated_fits():
    """R data sets of the stated design, each released and fitted by DR: the sd of each
    estimate against the predicted (asymptotic) standard error, within 4 Monte Carlo
    standard errors of an sd."""
    mech = pv.ZILMechanism(0.3, 0.3, BOUNDS)
    n, reps = 10_000, 150
    coef, icpt, sd_y = {"a": 1.0, "b": -0.5}, 0.2, 0.5
    pred = predict_zil(mech, n=n, model="linear", coef=coef, intercept=icpt, noise_sd=sd_y)
    fit_pred = [a for a in pred if a.quantity.startswith("linear")]
    assert [a.quantity for a in fit_pred] == ["linear intercept", "linear a", "linear b"]
    gen = np.random.default_rng(5)
    est = []
    for _ in range(reps):
        x = pd.DataFrame({"a": gen.uniform(0, 1, n), "b": gen.uniform(-2, 2, n)})
        y = icpt + x.a - 0.5 * x.b + sd_y * gen.standard_normal(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = pv.DRLinearRegression(inference="none").fit(mech.release(x, rng=gen), y.values)
        est.append(np.asarray(fit.results_.params))
    sd = np.std(est, axis=0, ddof=1)
    for j, a in enumerate(fit_pred):
        assert abs(sd[j] - a.se) <= 4 * sd[j] / math.sqrt(2 * (reps - 1)), (a.quantity, sd[j])


def test_inverse_lam_and_zero_prob_meet_the_target():
    fit = dict(model="linear", coef=[1.0, -0.5], intercept=0.2, noise_sd=0.5, n_sim=20_000)
    lam = zil_parameter_for(
        0.1, solve="lam", bounds=BOUNDS, n=20_000, zero_prob=0.3, quantity="linear a", **fit
    )
    at = {a.quantity: a for a in predict_zil(pv.ZILMechanism(lam, 0.3, BOUNDS), n=20_000, **fit)}
    above = {
        a.quantity: a
        for a in predict_zil(pv.ZILMechanism(lam * 1.01, 0.3, BOUNDS), n=20_000, **fit)
    }
    assert at["linear a"].half_width <= 0.1 < above["linear a"].half_width
    zp = zil_parameter_for(0.02, solve="zero_prob", bounds=BOUNDS, n=20_000, lam=0.5)
    widest = max(a.half_width for a in predict_zil(pv.ZILMechanism(0.5, zp, BOUNDS), n=20_000))
    assert widest <= 0.02
    eps = zil_parameter_for(
        0.05,
        solve="epsilon",
        bounds=BOUNDS,
        n=20_000,
        delta=0.4,
        zero_prob=0.2,
        quantity="mean of b",
    )
    mech = pv.ZILMechanism.calibrate(eps, 0.4, 0.2, BOUNDS)
    assert {a.quantity: a for a in predict_zil(mech, n=20_000)}["mean of b"].half_width <= 0.05
    with pytest.raises(ValidationError, match="give zero_prob"):
        zil_parameter_for(0.1, solve="lam", bounds=BOUNDS, n=100)
    with pytest.raises(ValidationError, match="coef"):
        predict_zil(pv.ZILMechanism(0.5, 0.2, BOUNDS), n=100, model="linear", coef=[1.0])


def test_the_simulated_design_raises_no_release_warning():
    """The design's release is a simulation inside a prediction, never published: a
    prediction must not warn the curator about seeded randomness in a release."""
    from privest.errors import SeededRandomnessWarning

    mech = pv.ZILMechanism(0.5, 0.2, BOUNDS)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        predict_zil(mech, n=1000, model="linear", coef=[1.0, -0.5], n_sim=2000)
    assert not [w for w in seen if issubclass(w.category, SeededRandomnessWarning)]
    # negative control: the same release outside a prediction does warn
    with pytest.warns(SeededRandomnessWarning):
        mech.release(pd.DataFrame({"a": [0.5] * 10, "b": [0.0] * 10}), rng=np.random.default_rng(0))


def test_a_stated_design_moves_the_fit_prediction():
    """Features concentrated in their bounds carry less information than features spread
    over them: a narrower stated design must predict wider intervals for the slope, and a
    shape and a public reference table drawn from it must predict the same."""
    mech = pv.ZILMechanism(0.3, 0.3, BOUNDS)
    fit = dict(n=10_000, model="linear", coef={"a": 1.0, "b": -0.5}, intercept=0.2, n_sim=50_000)

    def se_b(**kw):
        return {a.quantity: a for a in predict_zil(mech, **fit, **kw)}["linear b"].se

    uniform = se_b()
    shape = {"shape": "normal", "mean": 0.5, "sd": 0.4}
    narrow = se_b(design={"b": shape})
    # Var(b) is 4/3 uniform on [-2, 2] and about 0.16 here: the noise's share of the
    # corrected design grows, so the slope's SE grows several-fold
    assert narrow > 2.5 * uniform
    gen = np.random.default_rng(8)
    table = pd.DataFrame(
        {"a": gen.uniform(0, 1, 200_000), "b": np.clip(gen.normal(0.5, 0.4, 200_000), -2, 2)}
    )
    # the two routes differ only by Monte Carlo: 50,000 simulated records each
    assert se_b(design=table) == pytest.approx(narrow, rel=0.1)
    assert se_b(design=table.to_numpy()) == pytest.approx(se_b(design=table), rel=0.1)
    words = predict_zil(mech, **fit, design={"b": shape})[-1].assumption
    assert "b ~ normal(mean 0.5, sd 0.4)" in words and "a uniformly over [0, 1]" in words


@pytest.mark.parametrize(
    ("design", "match"),
    [
        ({"c": "uniform"}, "no noised column named"),
        ({"b": "lognormal"}, "shape 'lognormal' is not accepted"),
        (pd.DataFrame({"a": [0.1, 0.2]}), r"no column\(s\) \['b'\]"),
        (np.zeros((10, 3)), "rows of the 2 noised columns"),
        (np.array([[0.1, np.nan], [0.2, 0.3]]), "missing or infinite"),
    ],
)
def test_a_bad_design_is_refused(design, match):
    mech = pv.ZILMechanism(0.3, 0.3, BOUNDS)
    with pytest.raises(ValidationError, match=match):
        predict_zil(mech, n=1000, model="linear", coef=[1.0, -0.5], design=design, n_sim=1000)

"""The public rule that marks Wald intervals of noise-dominated features as too short
(privest.learn.inference.noise_dominated; docs/dr-estimation.md, "Which intervals to trust").

Fast: the rule fires on a feature whose spread is small against its public noise and not
on one whose spread is large (the control), at the README's calibration and n = 100,000
(where a feature with a's noise ratio, about 18, is flagged with probability about 0.002);
the estimator warns once, names only the flagged coefficient and marks it in its results.
Slow: Wald coverage at the README's calibration on held-out data (white wines, which the
rule was not calibrated on): the unflagged intervals cover and the rule fires for the slope
that does not.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privest as pv
from privest.errors import SeededRandomnessWarning
from privest.learn.inference import IndefiniteHessianError, noise_dominated, sandwich_cov
from privest.learn.losses import LogisticLoss
from privest.learn.objective import corrected_objective
from privest.learn.score_interval import constrained_fit

README = {"epsilon": 2.0, "delta": 0.3, "zero_prob": 0.1}


def _release(n: int, spread_b: float, seed: int):
    """Features a ~ U(0, 1) and b ~ 0.5 + U(-spread_b, spread_b), both with bounds (0, 1),
    released at the README's calibration; y logistic in both (unnoised)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "b": 0.5 + spread_b * rng.uniform(-1, 1, n)})
    p = 1 / (1 + np.exp(-(-1 + 2 * df.a + 4 * (df.b - 0.5))))
    df["y"] = (rng.random(n) < p).astype(int)
    mech = pv.ZILMechanism.calibrate(**README, bounds={"a": (0, 1), "b": (0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededRandomnessWarning)
        return mech.release(df, rng=rng)


def test_rule_fires_on_the_noise_dominated_feature_only():
    # a's noise variance is about 18 times its variance (1/12), b's about 450 times
    rel = _release(100_000, 0.1, seed=1)
    obj = corrected_objective(rel, "y", LogisticLoss(), "dr", features=["a", "b"])
    assert noise_dominated(obj).tolist() == [False, True]
    # control: with b as spread as a, neither is flagged
    rel = _release(100_000, 0.5, seed=2)
    obj = corrected_objective(rel, "y", LogisticLoss(), "dr", features=["a", "b"])
    assert noise_dominated(obj).tolist() == [False, False]
    # a smaller limit flags a too (the rule is a threshold on the noise-to-signal ratio)
    assert noise_dominated(obj, limit=5.0).tolist() == [True, True]


def test_estimator_warns_once_and_marks_the_flagged_coefficient():
    rel = _release(100_000, 0.1, seed=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = pv.DRLogisticRegression(features=["a", "b"], theta_bounds=(-30, 30)).fit(rel, "y")
    ours = [w for w in caught if issubclass(w.category, pv.NoiseDominatedWarning)]
    assert len(ours) == 1
    message = str(ours[0].message)
    assert "'b'" in message and "'a'" not in message and "score_conf_int" in message
    assert fit.results_.noise_dominated.tolist() == [False, False, True]
    text = str(fit.summary())
    assert "b *" in text and "a *" not in text and "score_conf_int" in text
    # the flagged interval is still there (the note says which one to use instead)
    assert np.isfinite(fit.results_.conf_int().loc["b"]).all()


def test_no_warning_when_no_feature_is_noise_dominated():
    rel = _release(100_000, 0.5, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pv.NoiseDominatedWarning)
        fit = pv.DRLogisticRegression(features=["a", "b"], theta_bounds=(-30, 30)).fit(rel, "y")
    assert not fit.results_.noise_dominated.any()
    assert "*" not in str(fit.summary())
    # not assessed: the oracle (no noise) and the bootstrap
    oracle = pv.DRLogisticRegression(method="oracle").fit(
        pd.DataFrame({"a": [0.1, 0.9, 0.4, 0.7], "b": [0.3, 0.2, 0.8, 0.6]}), [0, 1, 1, 0]
    )
    assert oracle.results_.noise_dominated is None


def _wine_release(pop: pd.DataFrame, n: int, rng: np.random.Generator):
    bounds = {"alcohol": (8.0, 15.0), "sugar": (0.0, 66.0)}
    df = pop.iloc[rng.integers(0, len(pop), n)].reset_index(drop=True)
    mech = pv.ZILMechanism.calibrate(**README, bounds=bounds)
    return mech.release(df, rng=rng)


@pytest.mark.slow
def test_wald_coverage_of_unflagged_coefficients_on_held_out_wine(wine_dir):
    """White wines (held out: the rule's limit was set on the README's survey), y = quality
    >= 7 on alcohol and residual sugar, records drawn with replacement, n = 100,000 per
    release at the README's calibration; the truth is the logistic fit on all wines; the DR
    objective minimised by damped Newton from the truth (benchmarks/bench_dr_interval.py).
    Measured on 100 releases (docs/dr-estimation.md): Wald covers the intercept 0.97,
    alcohol 0.97 and sugar 0.80, and the rule flags sugar in every release and alcohol
    (noise ratio near the limit) in most. Here: the rule fires for sugar in (almost) every
    release, and the unflagged Wald intervals (the intercept's and any unflagged slope's)
    cover 0.95 within 3 Monte Carlo SE."""
    raw = pd.read_csv(wine_dir / "winequality-white.csv", sep=";")
    pop = pd.DataFrame(
        {
            "alcohol": raw["alcohol"],
            "sugar": raw["residual sugar"],
            "y": (raw["quality"] >= 7).astype(int),
        }
    )
    truth = (
        pv.DRLogisticRegression(method="oracle", theta_bounds=(-30, 30))
        .fit(pop[["alcohol", "sugar"]], pop["y"].to_numpy())
        .coef_
    )
    rng = np.random.default_rng(2026)
    box = np.array([[-30.0, 30.0]] * 3)
    z = stats.norm.ppf(0.975)
    covered, flags = [], []
    # the damped Newton's line search may try steps whose linear index overflows
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", SeededRandomnessWarning)
        for _ in range(30):
            rel = _wine_release(pop, 100_000, rng)
            obj = corrected_objective(
                rel, "y", LogisticLoss(fit_intercept=True), "dr", features=["alcohol", "sugar"]
            )
            fit = constrained_fit(obj, truth, None, box=box, steps=100)
            if fit is None:
                continue
            try:
                se = np.sqrt(np.diag(sandwich_cov(obj, fit[0])[0]))
            except IndefiniteHessianError:
                continue
            covered.append(np.abs(fit[0] - truth) <= z * se)
            flags.append(noise_dominated(obj))
    covered, flags = np.array(covered), np.array(flags)
    # the sandwich exists in most releases at this n (23 of these 30: in 7 the fit nearest
    # the truth reaches the box)
    assert len(covered) >= 20
    assert flags[:, 1].mean() >= 0.9  # sugar: its Wald interval under-covers (0.80)
    unflagged = covered[:, 1:][~flags]
    pooled = np.concatenate([covered[:, 0], unflagged])
    mcse = np.sqrt(0.95 * 0.05 / pooled.size)
    assert pooled.mean() >= 0.95 - 3 * mcse

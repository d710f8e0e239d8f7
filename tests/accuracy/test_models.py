"""Predicted accuracy of the central models against repeated fits (docs/accuracy.md).

The prediction is of the privacy noise: the spread of the private fit around the
non-private one on the same data. One data set of the stated design is drawn, the model is
fitted ``R`` times with fresh noise, and the sd of each coefficient is compared with the
predicted one within 4 Monte Carlo standard errors of an sd (``sd / sqrt(2 (R - 1))``), the
mean offset with the predicted bias within 4 standard errors of a mean.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

import privest as pv
from privest.accuracy import predict_model
from privest.accuracy.models import MM_PATHS
from privest.errors import ValidationError

R = 150


def _check(pred, fits: np.ndarray, centre: np.ndarray) -> None:
    sd = fits.std(axis=0, ddof=1)
    for j, a in enumerate(pred):
        se_sd = sd[j] / math.sqrt(2 * (R - 1))
        assert abs(sd[j] - a.law.sd) <= 4 * se_sd, (a.quantity, sd[j], a.law.sd)
        offset = fits[:, j].mean() - centre[j]
        assert abs(offset - a.law.bias) <= 4 * sd[j] / math.sqrt(R), (a.quantity, offset)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_adassp_noise_is_predicted(eps):
    rng = np.random.default_rng(1)
    n, beta, icpt = 20_000, np.array([0.5, -0.3, 0.2]), 0.1
    x = rng.uniform(-1, 1, (n, 3))
    y = np.clip(x @ beta + icpt + 0.1 * rng.normal(size=n), -1, 1)
    model = pv.PrivateLinearRegression(
        epsilon=eps, delta=1e-6, bounds=(-1, 1), y_bounds=(-1, 1), method="adassp"
    )
    pred = predict_model(model, n=n, coef=beta, intercept=icpt)
    assert [a.quantity for a in pred] == ["coef x0", "coef x1", "coef x2", "intercept"]
    fits = np.array(
        [
            np.r_[model.set_params(random_state=s).fit(x, y).coef_, model.intercept_]
            for s in range(R)
        ]
    )
    ols = np.linalg.lstsq(np.c_[x, np.ones(n)], y, rcond=None)[0]
    _check(pred, fits, ols)
    # negative control: the prediction at twice the epsilon is refused
    wrong = predict_model(model.set_params(epsilon=2 * eps), n=n, coef=beta, intercept=icpt)
    with pytest.raises(AssertionError):
        _check(wrong, fits, ols)


class _NoNoise:
    """A stand-in for the gradients' Gaussian mechanism that adds nothing."""

    def noise(self, size, rng):
        return np.zeros(size)

    def release(self, value, rng, noise=None):
        return value


@pytest.mark.slow
def test_noisy_gd_noise_is_predicted():
    rng = np.random.default_rng(2)
    n, beta, icpt = 20_000, np.array([1.0, -0.5, 0.5]), -0.3
    x = rng.uniform(-1, 1, (n, 3))
    y = (rng.random(n) < expit(x @ beta + icpt)).astype(float)
    model = pv.PrivateLogisticRegression(
        epsilon=1.0, delta=1e-6, bounds=(-1, 1), inference="none", method="noisy_gd"
    )
    pred = predict_model(model, n=n, coef=beta, intercept=icpt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = np.array(
            [
                np.r_[model.set_params(random_state=s).fit(x, y).coef_[0], model.intercept_]
                for s in range(R)
            ]
        )
        # the noiseless run: the same steps with the gradients' noise taken out
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("privest.models.logistic_fit.lattice_gaussian_zcdp", lambda *a: _NoNoise())
            exact = model.set_params(random_state=0).fit(x, y)
    # the spread is checked around the noiseless run, whose own offset from the penalised
    # optimum is the predicted bias: the optimisation's, deterministic, on the design rather
    # than on this sample (they differ by O(n^-1/2) of it: 25% is allowed, 2.5 sds of it)
    centre = np.r_[exact.coef_[0], exact.intercept_]
    xc = np.c_[x, np.ones(n)]
    opt = minimize(
        lambda th: np.mean(np.logaddexp(0, xc @ th) - y * (xc @ th)) + 0.5e-3 * th @ th,
        np.zeros(4),
        jac=lambda th: xc.T @ (expit(xc @ th) - y) / n + 1e-3 * th,
        method="BFGS",
        options={"gtol": 1e-12},
    ).x
    sd = fits.std(axis=0, ddof=1)
    for j, a in enumerate(pred):
        assert abs(sd[j] - a.law.sd) <= 4 * sd[j] / math.sqrt(2 * (R - 1)), a.quantity
        assert abs(fits[:, j].mean() - centre[j]) <= 4 * sd[j] / math.sqrt(R), a.quantity
        assert abs(centre[j] - opt[j] - a.law.bias) <= 0.25 * abs(a.law.bias) + 1e-5


def test_models_inputs_are_checked():
    lin = pv.PrivateLinearRegression(epsilon=1.0, bounds=(-1, 1), y_bounds=(-1, 1))
    two = pv.PrivateLinearRegression(epsilon=1.0, bounds=[(-1, 1)] * 2, y_bounds=(-1, 1))
    with pytest.raises(ValidationError, match="coef"):
        predict_model(two, n=1000, coef=[1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.raises(ValidationError, match="eptr"):
        predict_model(lin.set_params(method="eptr"), n=1000, coef=1.0)
    with pytest.raises(ValidationError, match="n:"):
        predict_model(lin, n=1, coef=1.0)
    one = predict_model(
        pv.PrivateLinearRegression(
            epsilon=1.0, bounds=[(-1, 1)] * 2, y_bounds=(-1, 1), fit_intercept=False
        ),
        n=1000,
        coef=[0.3, 0.1],
    )
    assert [a.quantity for a in one] == ["coef x0", "coef x1"]
    big = predict_model(lin.set_params(method="adassp"), n=100_000, coef=[0.5], alpha=0.1)
    small = predict_model(lin, n=1_000, coef=[0.5], alpha=0.1)
    assert big[0].se < small[0].se / 50  # the noise falls like 1/n


@pytest.mark.slow
@pytest.mark.parametrize(("n", "eps"), [(20_000, 0.5), (1000, 1.0)])
def test_noisy_mm_noise_is_predicted(n, eps):
    """The default method: 150 fits of one data set of the design (each with its own
    release of the Gram matrix and of the gradients) around the penalised optimum on the
    sample; at n = 1000 the noise is large enough to bias the fit away from 0 (which a
    linearisation would miss). Negative control: the prediction at twice the epsilon."""
    rng = np.random.default_rng(3)
    beta, icpt = np.array([1.0, -0.5, 0.5]), -0.3
    x = rng.uniform(-1, 1, (n, 3))
    y = (rng.random(n) < expit(x @ beta + icpt)).astype(float)
    model = pv.PrivateLogisticRegression(epsilon=eps, delta=1e-6, bounds=(-1, 1), inference="none")
    pred = predict_model(model, n=n, coef=beta, intercept=icpt)
    assert {a.mechanism for a in pred} == {"noisy_mm"}
    fits = np.array(
        [
            np.r_[model.set_params(random_state=s).fit(x, y).coef_[0], model.intercept_]
            for s in range(R)
        ]
    )
    l2 = model.l2_  # the public rule's ridge
    xc = np.c_[x, np.ones(n)]
    opt = minimize(
        lambda th: np.mean(np.logaddexp(0, xc @ th) - y * (xc @ th)) + 0.5 * l2 * th @ th,
        np.zeros(4),
        jac=lambda th: xc.T @ (expit(xc @ th) - y) / n + l2 * th,
        method="BFGS",
        options={"gtol": 1e-12},
    ).x
    # the ridge acts on the fit's scaled coordinates (x / 1 and the constant 1): the same here
    _check_simulated(pred, fits, opt)
    wrong = predict_model(model.set_params(epsilon=2 * eps), n=n, coef=beta, intercept=icpt)
    with pytest.raises(AssertionError):
        _check_simulated(wrong, fits, opt)


def _check_simulated(pred, fits: np.ndarray, centre: np.ndarray) -> None:
    """:func:`_check` for a prediction that is itself a mean over MM_PATHS seeded runs: its
    Monte Carlo SE joins the simulation's."""
    sd = fits.std(axis=0, ddof=1)
    for j, a in enumerate(pred):
        se_sd = math.hypot(sd[j] / math.sqrt(2 * (R - 1)), a.law.sd / math.sqrt(2 * MM_PATHS))
        assert abs(sd[j] - a.law.sd) <= 4 * se_sd, (a.quantity, sd[j], a.law.sd)
        se_mean = math.hypot(sd[j] / math.sqrt(R), a.law.sd / math.sqrt(MM_PATHS))
        offset = fits[:, j].mean() - centre[j]
        assert abs(offset - a.law.bias) <= 4 * se_mean, (a.quantity, offset, a.law.bias)

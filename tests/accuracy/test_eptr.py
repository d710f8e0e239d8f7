"""Predicted accuracy of the ePTR models of paper 001 and of the Gaussian mechanism against
simulation (docs/accuracy.md).

The ePTR checks fit the model on fresh data sets of the stated design: the share of fits
that release nothing is compared with the predicted refusal, and the spread of the released
coefficients around the non-private estimate (``explain``) with the predicted SE given a
release, within 4 combined Monte Carlo standard errors (the simulation's, plus the
prediction's own where it averages seeded draws). Each has a negative control.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privest.accuracy import epsilon_for_gaussian, predict_gaussian, predict_model
from privest.accuracy.eptr import DRAWS, OLS_DRAWS
from privest.errors import NothingReleasedWarning, ValidationError
from privest.mechanisms.gaussian import GaussianMechanism
from privest.models.eptr_bayes import EPTRBayesClassifier
from privest.models.eptr_nw import EPTRKernelRegressor
from privest.models.eptr_ols import EPTRLinearRegression

Z = 4.0


def _agree(pred: float, pred_se: float, sim: np.ndarray) -> bool:
    se = math.hypot(pred_se, float(np.std(sim, ddof=1)) / math.sqrt(sim.size))
    return abs(float(np.mean(sim)) - pred) <= Z * max(se, 1e-12)


def _refusal_agrees(acc, draws: int, refused: np.ndarray) -> bool:
    """The predicted refusal (a mean over ``draws`` seeded draws: its Monte Carlo SE is at
    most 0.5 / sqrt(draws)) against the share of fits that refused."""
    r = acc.refusal
    return _agree(r, math.sqrt(max(r * (1 - r), 0.25 / draws) / draws), refused * 1.0)


def _mse_agrees(acc, err: np.ndarray) -> bool:
    """E err^2 given a release against its Monte Carlo estimate (err: one coordinate of each
    released fit's noise)."""
    return _agree(acc.se**2, 0.0, err**2)


def test_gaussian_mechanism_is_predicted_exactly():
    mech = GaussianMechanism(epsilon=0.8, delta=1e-6, sensitivity=2.0, dims=3)
    acc = predict_gaussian(mech)
    assert acc.assumption == "" and acc.se == pytest.approx(mech.sigma)
    same = predict_gaussian(epsilon=0.8, delta=1e-6, sensitivity=2.0, dims=3)
    assert same.half_width == acc.half_width
    rng = np.random.default_rng(3)
    value = np.array([1.3, -40.0, 7.77])
    err = np.array([mech.release(value, rng).value - value for _ in range(7000)]).ravel()
    err = np.abs(err)
    for a in (acc.half_width, 0.5 * acc.half_width):
        assert _agree(acc.error_sf(a), 0.0, (err > a) * 1.0)
    assert _agree(acc.se**2, 0.0, err**2)
    # negative control: the mechanism at 1.2 times the epsilon is refused by the same check
    wrong = predict_gaussian(epsilon=0.96, delta=1e-6, sensitivity=2.0, dims=3)
    assert not _agree(wrong.error_sf(wrong.half_width), 0.0, (err > wrong.half_width) * 1.0)


def test_epsilon_for_a_gaussian_half_width():
    """The least epsilon meets the target and 1% less does not; the classic calibration's
    larger sigma needs more; an unreachable target says so."""
    eps = epsilon_for_gaussian(5.0, delta=1e-6, sensitivity=1.0)
    assert predict_gaussian(epsilon=eps, delta=1e-6, sensitivity=1.0).half_width <= 5.0
    assert predict_gaussian(epsilon=eps * 0.99, delta=1e-6, sensitivity=1.0).half_width > 5.0
    classic = epsilon_for_gaussian(5.0, delta=1e-6, sensitivity=1.0, calibration="classic")
    hw = predict_gaussian(epsilon=classic, delta=1e-6, sensitivity=1.0, calibration="classic")
    assert classic > eps and hw.half_width <= 5.0
    with pytest.raises(ValidationError, match="not reachable"):
        epsilon_for_gaussian(1e-4, delta=1e-6, sensitivity=1.0, calibration="classic")


def _ball(n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    z = rng.standard_normal((n, p))
    return z / np.linalg.norm(z, axis=1, keepdims=True) * rng.random((n, 1)) ** (1.0 / p)


def _fit_ols(model, n, p, reps, seed):
    """Released flags and the first coefficient's noise over fits on fresh designs."""
    rng = np.random.default_rng(seed)
    refused, err = [], []
    beta = np.array([0.4, -0.3, 0.2])[:p]
    for r in range(reps):
        x = _ball(n, p, rng)
        y = np.clip(x @ beta + 0.1 * rng.standard_normal(n), -1, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NothingReleasedWarning)
            fit = model.set_params(random_state=r + 1000 * seed).fit(x, y)
        refused.append(not fit.released_)
        if fit.released_:
            err.append(fit.coef_[0] - fit.explain(x, y)["estimate"][0])
    return np.array(refused), np.array(err)


@pytest.mark.slow
def test_eptr_ols_refusal_and_noise_are_predicted():
    """c0 near the edge of the test (lambda_min(S) / n is about 1 / (p + 2) = 0.2): the
    predicted refusal and noise against 300 fits on fresh data sets; negative controls: the
    prediction at a 10% larger n is refused for the refusal (and ``c0="auto"``'s noise at
    twice the epsilon)."""
    n, p = 2000, 3
    model = EPTRLinearRegression(epsilon=1.0, delta=1e-6, c0=0.177)
    acc = predict_model(model, n=n, n_features=p)[0]
    assert 0.1 < acc.refusal < 0.9 and acc.mechanism == "ePTR-OLS"
    refused, err = _fit_ols(model, n, p, 300, seed=1)
    assert _refusal_agrees(acc, OLS_DRAWS, refused)
    assert _mse_agrees(acc, err)
    assert not _refusal_agrees(predict_model(model, n=2200, n_features=p)[0], OLS_DRAWS, refused)
    auto = EPTRLinearRegression(epsilon=1.0, delta=1e-6)
    acc = predict_model(auto, n=n, n_features=p)[0]
    refused, err = _fit_ols(auto, n, p, 150, seed=2)
    assert _refusal_agrees(acc, OLS_DRAWS, refused)
    assert _mse_agrees(acc, err)
    wrong = predict_model(auto.set_params(epsilon=2.0), n=n, n_features=p)[0]
    assert not _mse_agrees(wrong, err)


@pytest.mark.slow
def test_eptr_bayes_refusal_and_noise_are_predicted():
    """Three classes of stated shares, ``c0="auto"`` and a fixed c0 near the edge of the
    test; negative control: the prediction for a 20% smaller n."""
    n, p, shares = 1500, 2, np.array([0.2, 0.3, 0.5])
    rng = np.random.default_rng(5)
    for c0, reps in (("auto", 150), (0.18, 250)):
        model = EPTRBayesClassifier(epsilon=1.0, delta=1e-6, classes=[0, 1, 2], x_radius=2.0, c0=c0)
        acc = predict_model(model, n=n, n_features=p, class_shares=shares)
        assert [a.quantity for a in acc[:4]] == ["prior 0", "prior 1", "prior 2", "mean 0 x0"]
        refused, err = [], []
        for r in range(reps):
            y = rng.choice(3, size=n, p=shares)
            x = rng.uniform(-1, 1, (n, p))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NothingReleasedWarning)
                fit = model.set_params(random_state=r).fit(x, y)
            refused.append(not fit.released_)
            if fit.released_:  # the means' noise before the projection (inside the ball here)
                err.append(fit.means_[0, 0] - fit.explain(x, y)["means"][0, 0])
        refused, err = np.array(refused), np.array(err)
        assert _refusal_agrees(acc[0], DRAWS, refused), c0
        assert _mse_agrees(acc[3], err), c0
        if c0 != "auto":
            assert 0.1 < acc[0].refusal < 0.9
            wrong = predict_model(model, n=1200, n_features=p, class_shares=shares)[0]
            assert not _refusal_agrees(wrong, DRAWS, refused)


def _fit_nw(model, n, reps, seed):
    """Refused flags and released-minus-unnoised values per query over fresh designs."""
    rng = np.random.default_rng(seed)
    refused, err = [], []
    for r in range(reps):
        x = rng.uniform(0, 1, (n, 1))
        y = 0.1 * np.sin(3 * x[:, 0])
        fit = model.set_params(random_state=r).fit(x, y)
        refused.append(~fit.released_)
        err.append(np.where(fit.released_, fit.estimates_ - fit.explain(x, y)["estimate"], np.nan))
    return np.array(refused), np.array(err)


@pytest.mark.slow
def test_eptr_nw_refusal_and_noise_are_predicted():
    """Query points in the middle and near the edge of the box. At n = 2200 the degree is
    near the test's edge: the refusal is checked (negative control: the prediction for an
    18% larger n). At n = 20000 every query releases and the values (|f| <= 0.1, noise sd
    below 0.1) are never clipped to [-1, 1]: the noise is checked (negative control: twice
    the epsilon)."""
    model = EPTRKernelRegressor(query_points=[[0.5], [0.05]], epsilon=2.0, delta=1e-6, c0=0.7)
    accs = predict_model(model, n=2200)
    assert all(0.05 < a.refusal < 0.95 for a in accs)
    refused, _ = _fit_nw(model, 2200, 300, seed=7)
    wrong = predict_model(model, n=2600)
    for j, acc in enumerate(accs):  # the refusal is a quadrature, exact but for the CLT
        assert _agree(acc.refusal, 0.0, refused[:, j] * 1.0), acc.quantity
        assert not _agree(wrong[j].refusal, 0.0, refused[:, j] * 1.0), acc.quantity
    accs = predict_model(model, n=20_000)
    refused, err = _fit_nw(model, 20_000, 300, seed=8)
    assert not refused.any() and np.abs(err).max() < 0.9
    wrong = predict_model(model.set_params(epsilon=4.0), n=20_000)
    for j, acc in enumerate(accs):
        assert acc.refusal < 1e-6 and _mse_agrees(acc, err[:, j])
        assert not _mse_agrees(wrong[j], err[:, j])


def test_eptr_inputs_are_checked():
    ols = EPTRLinearRegression(epsilon=1.0, delta=1e-6)
    with pytest.raises(ValidationError, match="n_features"):
        predict_model(ols, n=1000)
    assert len(predict_model(ols, n=5000, coef=[0.1, 0.2])) == 2
    bayes = EPTRBayesClassifier(epsilon=1.0, classes=[0, 1], c0=0.1)
    with pytest.raises(ValidationError, match="class_shares"):
        predict_model(bayes, n=1000, n_features=2, class_shares=[0.5, 0.6])
    with pytest.raises(ValidationError, match="c0"):
        predict_model(bayes.set_params(c0=0.6), n=1000, n_features=2)
    bayes.set_params(c0=0.1)
    tiny = EPTRBayesClassifier(epsilon=0.1, classes=[0, 1], c0="auto")
    assert predict_model(tiny, n=100, n_features=2)[0].refusal > 0.99
    row = predict_model(bayes, n=100_000, n_features=2)[0].to_dict()
    assert row["refusal"] == 0.0


@pytest.mark.parametrize("kind", ["eptr", "classic"])
def test_generic_ptr_refusal_and_noise_are_predicted(kind):
    """The generic mechanisms around a caller's estimator, at a stated safety margin: the
    share of refusals over 3,000 releases within 4 binomial SEs of ``refusal``, and the
    released values' mean square error within 4 Monte Carlo SEs of se^2; a wrong margin
    is rejected by the same check."""
    from privest.accuracy import predict_ptr
    from privest.mechanisms.eptr import EPTR, ptr_threshold
    from privest.mechanisms.ptr import ClassicPTR

    eps, delta, reps = 1.0, 1e-3, 3000
    # near each test's threshold, where refusal is neither rare nor certain
    margin = ptr_threshold(eps, delta) + 0.5 if kind == "eptr" else 2 / eps * math.log(1 / delta)
    if kind == "eptr":
        mech = EPTR(lambda d: [0.0, 0.0], lambda d: margin, 0.1, eps, delta, dim=2)
    else:
        mech = ClassicPTR(lambda d: [0.0, 0.0], lambda d: margin, 0.1, eps, delta)
    pred = predict_ptr(mech, gamma=margin, dims=2)[0]
    gen = np.random.default_rng(11)
    out = [mech.release(None, rng=gen) for _ in range(reps)]
    refused = np.mean([not r.released for r in out])
    binom_se = math.sqrt(pred.refusal * (1 - pred.refusal) / reps)
    assert 0.05 < pred.refusal < 0.95
    assert abs(refused - pred.refusal) <= 4 * binom_se
    sq = np.concatenate([r.value**2 for r in out if r.released])
    assert abs(sq.mean() - pred.se**2) <= 4 * sq.std(ddof=1) / math.sqrt(sq.size)
    wrong = predict_ptr(mech, gamma=margin + 3.0, dims=2)[0]
    assert abs(refused - wrong.refusal) > 4 * binom_se
    with pytest.raises(ValidationError, match="gamma"):
        predict_ptr(mech, gamma=-1.0)

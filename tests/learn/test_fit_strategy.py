"""One fitting strategy for every loss (read from its capabilities), and a bounded bootstrap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize

import privest as pv
from privest.errors import ValidationError
from privest.learn import estimators as est_module
from privest.learn import inference
from privest.learn.design import analysis_data
from privest.learn.inference import IndefiniteHessianError
from privest.learn.losses import registry
from privest.learn.losses.index import IndexLoss
from privest.learn.objective import CorrectedObjective


class PoissonLoss(IndexLoss):
    """Poisson regression, phi = e^u - y u: a loss the library does not ship, defined with
    its capabilities only (smooth in theta and in x)."""

    name = "poisson"
    smooth_in_x = True
    smooth_in_theta = True

    def phi(self, y, u):
        return np.exp(u) - y * u

    def dphi(self, y, u):
        return np.exp(u) - y

    def d2phi(self, y, u):
        return np.exp(u)

    d3phi = d4phi = d2phi


@pytest.fixture
def poisson(monkeypatch):
    """The loss's one registration (in a copy of the registry, undone after the test)."""
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))
    registry.register_loss(registry.LossSpec("poisson", "e^u - y u", {"dr": PoissonLoss}))


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.uniform(-1, 1, (n, 2))
    y = rng.poisson(np.exp(0.2 + x @ [0.5, -0.5])).astype(float)
    rel = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds=[(-1, 1)] * 2).release(x, rng=4)
    return rel, y


@pytest.mark.parametrize("method", ["dr", "sdr", "naive"])
def test_a_registered_loss_is_fitted_by_the_one_strategy(poisson, counts, method):
    """A new loss (its class, one registration) is fitted with no change to the solvers:
    Newton from the strategy's starts reaches a minimum of the corrected objective that no
    L-BFGS-B run from the same or a zero start improves, with sandwich standard errors."""
    rel, y = counts
    fit = pv.DRMEstimator(loss="poisson", method=method).fit(rel, y)
    obj = CorrectedObjective(PoissonLoss(), analysis_data(rel, y), method)
    for start in (fit.coef_, np.zeros(3)):
        ref = optimize.minimize(obj.value_and_grad, start, jac=True, method="L-BFGS-B")
        assert fit.objective_ <= ref.fun + 1e-10
    assert np.max(np.abs(obj.grad(fit.coef_))) < 1e-8
    assert np.all(np.isfinite(fit.stderr_)) and np.all(fit.stderr_ > 0)
    assert fit.solution_.starts == (2 if method == "dr" else 1)  # DR: from naive and SDR
    assert fit.converged_ and fit.loss_.name == "poisson"


def test_registering_a_name_twice_is_refused(poisson):
    with pytest.raises(ValidationError, match="already registered"):
        registry.register_loss(registry.LossSpec("poisson", "again", {"dr": PoissonLoss}))
    with pytest.raises(ValidationError, match="already registered"):
        registry.register_loss(registry.LossSpec("linear", "an alias", {"dr": PoissonLoss}))


def _release():
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (600, 2))
    y = (rng.random(600) < 1 / (1 + np.exp(-x.sum(axis=1)))).astype(float)
    rel = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds=[(-1, 1)] * 2).release(x, rng=9)
    return rel, y


@pytest.fixture
def indefinite(monkeypatch):
    """Fault injection: the sandwich's Hessian estimate is not positive definite."""

    def fail(obj, theta):
        raise IndefiniteHessianError("estimated Hessian V is not positive definite (injected)")

    monkeypatch.setattr(est_module, "sandwich_cov", fail)


def test_the_bootstrap_fallback_is_bounded_by_n_bootstrap(indefinite):
    rel, y = _release()
    with pytest.warns(RuntimeWarning, match=r"bootstrap instead \(7 refits.*n_bootstrap=0"):
        fit = pv.DRLogisticRegression(n_bootstrap=7, random_state=1).fit(rel, y)
    assert fit.inference_ == "bootstrap" and fit.bootstrap_draws_.shape == (7, 3)
    assert np.all(np.isfinite(fit.stderr_)) and np.all(fit.stderr_ > 0)


def test_n_bootstrap_0_turns_the_fallback_off(indefinite):
    rel, y = _release()
    with pytest.warns(RuntimeWarning, match="no standard errors"):
        fit = pv.DRLogisticRegression(n_bootstrap=0).fit(rel, y)
    assert fit.inference_ == "none" and not hasattr(fit, "bootstrap_draws_")
    assert np.all(np.isnan(fit.stderr_)) and np.all(np.isfinite(fit.coef_))


def test_without_the_fault_no_bootstrap_runs(monkeypatch):
    """Control: a positive definite Hessian, no fallback (the bootstrap runs only when asked)."""
    calls = []
    monkeypatch.setattr(est_module, "bootstrap_cov", lambda *a, **k: calls.append(a))
    rel, y = _release()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = pv.DRLogisticRegression().fit(rel, y)
    assert fit.inference_ == "sandwich" and calls == []


def test_the_bootstrap_shows_its_progress(monkeypatch):
    """The bootstrap loop runs under a progress bar sized to its refits."""
    seen = []
    real = inference.progress_iter

    def watched(items, description, enabled=True, total=None):
        seen.append((description, len(items), enabled))
        return real(items, description, False, total)

    monkeypatch.setattr(inference, "progress_iter", watched)
    rel, y = _release()
    fit = pv.DRLogisticRegression(inference="bootstrap", n_bootstrap=4, random_state=2)
    fit.fit(rel, y)
    assert seen == [("bootstrap (4 refits)", 4, True)]
    assert fit.bootstrap_draws_.shape == (4, 3)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"n_bootstrap": -1}, "n_bootstrap: -1"),
        ({"n_bootstrap": 2.5}, "n_bootstrap: 2.5"),
        ({"n_bootstrap": True}, "n_bootstrap: True"),
        ({"n_bootstrap": 1, "inference": "bootstrap"}, "at least 2"),
    ],
)
def test_n_bootstrap_is_checked(kw, match):
    rel, y = _release()
    with pytest.raises(ValidationError, match=match):
        pv.DRLogisticRegression(**kw).fit(rel, y)

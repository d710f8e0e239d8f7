"""The sandwich's middle matrix formed block by block equals the one-pass value."""

import numpy as np
import pytest

import privest as pv
from privest.learn.design import analysis_data
from privest.learn.inference import score_covariance
from privest.learn.losses import LogisticLoss, QuantileRegressionLoss
from privest.learn.objective import CorrectedObjective, index_sandwich_parts


def _objective(loss, method, n, seed, release_seed):
    """A corrected objective on a ZIL release of n records x 3 features and logistic labels."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-x.sum(axis=1)))).astype(float)
    rel = pv.ZILMechanism(lam=0.4, zero_prob=0.3, bounds=[(-1, 1)] * 3).release(x, rng=release_seed)
    return CorrectedObjective(loss, analysis_data(rel, y), method)


@pytest.mark.parametrize(
    "loss", [LogisticLoss(fit_intercept=True), QuantileRegressionLoss(fit_intercept=True)]
)
@pytest.mark.parametrize("method", ["dr", "naive"])
def test_blocked_score_covariance_equals_one_pass(loss, method):
    obj = _objective(loss, method, 5_003, 5, 2)  # n not a multiple of the block
    theta = np.array([0.2, 0.9, -0.4, 0.7])  # away from the optimum: the scores' mean is not 0
    one = score_covariance(obj, theta, block=10**9)
    blocked = score_covariance(obj, theta, block=1_000)
    np.testing.assert_allclose(blocked, one, rtol=1e-12, atol=1e-14 * np.abs(one).max())
    assert not np.allclose(one, 0.0)


@pytest.mark.parametrize("method", ["dr", "naive"])
@pytest.mark.parametrize("block", [1_000, 10**9])
def test_fused_sandwich_parts_equal_the_scores_and_hessian_apart(method, block):
    obj = _objective(LogisticLoss(fit_intercept=True), method, 5_003, 6, 3)
    theta = np.array([0.2, 0.9, -0.4, 0.7])
    a, v = index_sandwich_parts(obj, theta, block=block)
    a_apart, v_apart = score_covariance(obj, theta, block=10**9), obj.hess(theta)
    np.testing.assert_allclose(a, a_apart, rtol=1e-12, atol=1e-14 * np.abs(a_apart).max())
    np.testing.assert_allclose(v, v_apart, rtol=1e-12, atol=1e-14 * np.abs(v_apart).max())
    # score_cov keeps its Hessian for hess at the same theta, and at that theta only
    a_kept, v_kept = index_sandwich_parts(obj, theta)
    np.testing.assert_array_equal(obj.score_cov(theta), a_kept)
    other = theta + 0.1
    np.testing.assert_array_equal(obj.hess(other), CorrectedObjective.hess(obj, other))
    obj.score_cov(theta)
    np.testing.assert_array_equal(obj.hess(theta), v_kept)


@pytest.mark.parametrize("method", ["dr", "naive"])
def test_sandwich_parts_on_the_solvers_designs_equal_the_pass_over_rows(method, monkeypatch):
    """After a fit has cached its designs, the sandwich reads them (no design built, one
    product per Gram): the same A_hat and V_hat as the pass over rows, up to rounding."""
    from privest.learn import objective
    from privest.learn.solvers import batched_problem

    obj = _objective(LogisticLoss(fit_intercept=True), method, 2_001, 7, 4)
    theta = np.array([0.2, 0.9, -0.4, 0.7])
    a_rows, v_rows = index_sandwich_parts(obj, theta)  # no cached design yet: by rows
    batched_problem(obj).derivs(theta[None])  # a solver's evaluation caches the designs
    assert objective._solver_designs(obj) is not None
    monkeypatch.setattr(objective, "weighted_gram", None)  # the pass over rows would fail
    a, v = index_sandwich_parts(obj, theta)
    np.testing.assert_allclose(a, a_rows, rtol=1e-12, atol=1e-14 * np.abs(a_rows).max())
    np.testing.assert_allclose(v, v_rows, rtol=1e-12, atol=1e-14 * np.abs(v_rows).max())
    # control: at another theta the parts differ (the comparison above can fail)
    a_other, v_other = index_sandwich_parts(obj, theta + 0.3)
    assert not np.allclose(v_other, v_rows, rtol=1e-6) and not np.allclose(a_other, a_rows)

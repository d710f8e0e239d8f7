"""The sandwich's middle matrix formed block by block equals the one-pass value."""

import numpy as np
import pytest

import privest as pv
from privest.learn.design import analysis_data
from privest.learn.inference import score_covariance
from privest.learn.losses import LogisticLoss, QuantileRegressionLoss
from privest.learn.objective import CorrectedObjective


@pytest.mark.parametrize(
    "loss", [LogisticLoss(fit_intercept=True), QuantileRegressionLoss(fit_intercept=True)]
)
@pytest.mark.parametrize("method", ["dr", "naive"])
def test_blocked_score_covariance_equals_one_pass(loss, method):
    rng = np.random.default_rng(5)
    n, d = 5_003, 3  # not a multiple of the block
    x = rng.uniform(-1, 1, size=(n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-x.sum(axis=1)))).astype(float)
    rel = pv.ZILMechanism(lam=0.4, zero_prob=0.3, bounds=[(-1, 1)] * d).release(x, rng=2)
    obj = CorrectedObjective(loss, analysis_data(rel, y), method)
    theta = np.array([0.2, 0.9, -0.4, 0.7])  # away from the optimum: the scores' mean is not 0
    one = score_covariance(obj, theta, block=10**9)
    blocked = score_covariance(obj, theta, block=1_000)
    np.testing.assert_allclose(blocked, one, rtol=1e-12, atol=1e-14 * np.abs(one).max())
    assert not np.allclose(one, 0.0)

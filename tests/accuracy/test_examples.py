"""Predicted noise of a local release of examples (paper 004) against simulation
(docs/accuracy.md, "Examples for IWP-SGD")."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import privest as pv
from privest.accuracy import predict_examples
from privest.errors import ValidationError

REPS = 400


def _releases(mech, X, y, reps, seed):
    gen = np.random.default_rng(seed)
    with warnings.catch_warnings():  # a simulation: its seeded noise is never published
        warnings.simplefilter("ignore")
        return [mech.release(X, y, rng=gen) for _ in range(reps)]


def _mse_within(pred_se: float, errors: np.ndarray, z: float = 4.0) -> bool:
    """E error^2 against se^2, within z Monte Carlo SEs of the mean of squares."""
    sq = np.asarray(errors) ** 2
    return abs(sq.mean() - pred_se**2) <= z * sq.std(ddof=1) / math.sqrt(sq.size)


@pytest.mark.parametrize("eps_y", [0.5, 2.0])
def test_features_and_label_share_match_releases(eps_y):
    gen = np.random.default_rng(1)
    n, p = 300, 3
    X = gen.uniform(0, 10, (n, p))
    y = (gen.random(n) < 0.3).astype(int)
    mech = pv.ExampleMechanism(epsilon_x=2.0, epsilon_y=eps_y, delta=1e-5, bounds=(0, 10))
    pred = {a.quantity: a for a in predict_examples(mech, n=n, n_features=p)}
    rels = _releases(mech, X, y, REPS, 2)
    Z = rels[0].transform(X)
    value = np.array([r.X[0, 0] - Z[0, 0] for r in rels])
    mean = np.array([r.X[:, 1].mean() - Z[:, 1].mean() for r in rels])
    t = math.tanh(eps_y / 2)
    share = np.array([(1 + r.y.mean() / t) / 2 - y.mean() for r in rels])
    assert _mse_within(pred["value of a feature"].se, value)
    assert _mse_within(pred["mean of a feature"].se, mean)
    assert _mse_within(pred["label share"].se, share)
    # negative control: the prediction for another epsilon is rejected by the same check
    other = {a.quantity: a for a in predict_examples(
        pv.ExampleMechanism(epsilon_x=3.0, epsilon_y=2 * eps_y, delta=1e-5, bounds=(0, 10)),
        n=n, n_features=p)}  # fmt: skip
    assert not _mse_within(other["mean of a feature"].se, mean)
    assert not _mse_within(other["label share"].se, share)


def test_regression_target_and_ball_match_releases():
    gen = np.random.default_rng(3)
    n = 200
    X = gen.normal(size=(n, 4)) / 3
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1) / 2.0)[:, None]
    y = gen.uniform(-5, 5, n)
    mech = pv.RegressionExampleMechanism(
        epsilon_x=4.0, epsilon_y=1.0, delta_x=1e-5, delta_y=1e-5, y_bounds=(-5, 5), x_radius=2.0
    )
    pred = {a.quantity: a for a in predict_examples(mech, n=n)}
    rels = _releases(mech, X, y, REPS, 4)
    t = y / 5
    assert _mse_within(pred["value of the target"].se, np.array([r.y[0] - t[0] for r in rels]))
    assert _mse_within(
        pred["mean of the target"].se, np.array([r.y.mean() - t.mean() for r in rels])
    )
    assert _mse_within(
        pred["mean of a feature"].se, np.array([r.X[:, 2].mean() - X[:, 2].mean() for r in rels])
    )


def test_inputs_are_checked():
    mech = pv.ExampleMechanism(epsilon_x=2.0, epsilon_y=1.0, delta=1e-5, bounds=(0, 1))
    with pytest.raises(ValidationError, match="n_features"):
        predict_examples(mech, n=100)
    with pytest.raises(ValidationError, match="n: "):
        predict_examples(mech, n=0, n_features=2)
    boxed = pv.ExampleMechanism(epsilon_x=2.0, epsilon_y=1.0, delta=1e-5, bounds=[(0, 1)] * 3)
    assert len(predict_examples(boxed, n=100)) == 3
    with pytest.raises(ValidationError, match="the bounds give 3 pairs"):
        predict_examples(boxed, n=100, n_features=2)
    with pytest.raises(ValidationError, match="not an example mechanism"):
        predict_examples(pv.ZILMechanism(0.5, 0.2, [(0, 1)]), n=100)

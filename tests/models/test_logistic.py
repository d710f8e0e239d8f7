"""PrivateLogisticRegression (noisy full-batch GD, zCDP accounting): accuracy and privacy."""

import numpy as np
import pytest
from scipy.special import expit

from privest.accounting.zcdp import zcdp_delta, zcdp_rho_for
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.logistic import PrivateLogisticRegression


def _data(rng, n=4000, p=3):
    X = rng.uniform(-1, 1, (n, p))
    w = np.array([2.0, -1.5, 1.0])[:p]
    y = (rng.random(n) < expit(0.5 + X @ w)).astype(int)
    return X, y


def test_accuracy_close_to_the_bayes_rule_at_moderate_epsilon():
    """Bayes accuracy of the model; 20 seeds; tolerance 0.03 + 3 Monte Carlo SE."""
    rng = np.random.default_rng(1)
    X, y = _data(rng)
    Xt, yt = _data(rng, n=20000)
    bayes = np.mean((0.5 + Xt @ np.array([2.0, -1.5, 1.0]) > 0) == yt)
    accs = [
        PrivateLogisticRegression(epsilon=2.0, delta=1e-6, bounds=(-1, 1), random_state=s)
        .fit(X, y)
        .score(Xt, yt)
        for s in range(20)
    ]
    se = np.std(accs) / np.sqrt(len(accs))
    assert np.mean(accs) > bayes - 0.03 - 3 * se


def test_gradient_sum_replacement_sensitivity_is_2b_and_not_b():
    """||g(x, y; theta) - g(x', y'; theta)|| <= 2B for every theta (brute force), reached."""
    rng = np.random.default_rng(2)
    d, B = 3, 1.7
    dirs = rng.standard_normal((300, d))
    xs = B * dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    worst = 0.0
    for theta in (np.zeros(d), 50 * xs[0], -50 * xs[0], rng.standard_normal(d)):
        for y1 in (0.0, 1.0):
            g1 = (expit(xs @ theta) - y1)[:, None] * xs
            for y2 in (0.0, 1.0):
                g2 = (expit(xs @ theta) - y2)[:, None] * xs
                worst = max(worst, np.max(np.linalg.norm(g1[:, None] - g2[None], axis=2)))
    assert worst <= 2 * B * (1 + 1e-12)
    assert worst > 1.9 * B  # the add/remove bound B would be wrong under replacement


def test_steps_compose_to_the_target_and_a_negative_control_fails():
    for eps, delta, steps in [(1.0, 1e-6, 30), (8.0, 1e-6, 100), (0.5, 1e-5, 10)]:
        rho = zcdp_rho_for(eps, delta)
        mech = lattice_gaussian_zcdp(rho / steps, 2 * 3.0, 11)
        spent = steps * mech.guarantee.zcdp_rho
        assert spent <= rho * (1 + 1e-12) and zcdp_delta(spent, eps) <= delta * (1 + 1e-9)
        assert zcdp_delta(steps * spent, eps) > delta  # each step at the full rho: too much


def test_labels_attributes_and_errors():
    rng = np.random.default_rng(3)
    X, y = _data(rng, n=500)
    lab = np.where(y == 1, "yes", "no")
    m = PrivateLogisticRegression(
        epsilon=1.0, bounds=(-1, 1), classes=["no", "yes"], random_state=0
    ).fit(X, lab)
    assert set(m.predict(X)) <= {"no", "yes"} and m.coef_.shape == (1, 3)
    assert m.predict_proba(X).shape == (500, 2) and m.guarantee.eps == 1.0
    with pytest.raises(ValidationError):
        PrivateLogisticRegression(epsilon=1.0, bounds=(-1, 1)).fit(X, lab)
    with pytest.raises(BoundsError):
        PrivateLogisticRegression(epsilon=1.0).fit(X, y)
    with pytest.raises(BoundsError):
        PrivateLogisticRegression(epsilon=1.0, bounds=(-0.5, 0.5)).fit(X, y)
    with pytest.raises(ValidationError):
        PrivateLogisticRegression(epsilon=1.0, bounds=(-1, 1), method="objective").fit(X, y)


def test_a_fit_at_epsilon_1e_3_answers():
    """No hang at small epsilon (issue 30: no result in 240 s): 30 noisy gradient steps whose
    variance outgrows int64 are drawn in Python integers; the output is finite."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (200, 2))
    y = (X[:, 0] > 0).astype(float)
    model = PrivateLogisticRegression(epsilon=1e-3, bounds=(-1, 1), random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_).all()

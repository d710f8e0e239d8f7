"""PrivateLogisticRegression (noisy full-batch GD, zCDP accounting): accuracy and privacy."""

import numpy as np
import pytest
from scipy.special import expit

from privest.accounting.zcdp import zcdp_delta, zcdp_rho_for
from privest.errors import BoundsError, ValidationError
from privest.mechanisms.samplers.lattice import lattice_gaussian_zcdp
from privest.models.logistic import PrivateLogisticRegression
from privest.models.logistic_fit import gradient_sensitivity, logistic_rule


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


def test_multinomial_shapes_probabilities_and_accuracy():
    """K = 3 public labels: coef_ (3, p), probabilities rows sum to 1, accuracy well above the
    majority rate at a large epsilon (20 seeds; tolerance 3 Monte Carlo SE)."""
    rng = np.random.default_rng(5)
    W = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])

    def draw(n):
        X = rng.uniform(-1, 1, (n, 2))
        z = X @ W.T
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        return X, np.array(["a", "b", "c"])[(rng.random(n)[:, None] > p.cumsum(1)).sum(1)]

    X, y = draw(3000)
    Xt, yt = draw(5000)
    accs = []
    for s in range(20):
        m = PrivateLogisticRegression(
            epsilon=4.0, bounds=(-1, 1), classes=["a", "b", "c"], random_state=s
        ).fit(X, y)
        accs.append(m.score(Xt, yt))
    proba = m.predict_proba(Xt)
    assert m.coef_.shape == (3, 2) and m.intercept_.shape == (3,)
    assert proba.shape == (5000, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert list(m.classes_) == ["a", "b", "c"] and set(m.predict(Xt)) <= {"a", "b", "c"}
    majority = max(np.mean(yt == c) for c in "abc")
    se = np.std(accs) / np.sqrt(len(accs))
    assert np.mean(accs) > majority + 0.15 - 3 * se
    with pytest.raises(ValidationError, match="outside the public classes"):
        PrivateLogisticRegression(bounds=(-1, 1), classes=["a", "b"]).fit(X, y)
    with pytest.raises(ValidationError, match="Only binary"):
        PrivateLogisticRegression(bounds=(-1, 1)).fit(X, (X[:, 0] > 0) * 1 + (X[:, 1] > 0))


def test_multinomial_gradient_sensitivity_is_2_sqrt2_b_with_a_negative_control():
    """||(softmax - e_y) x^T - (softmax' - e_y') x'^T||_F <= 2 sqrt(2) B for every Theta; the
    binary bound 2B is exceeded, so K >= 3 needs the larger sensitivity."""
    rng = np.random.default_rng(6)
    d, K, B = 3, 4, 1.3
    dirs = rng.standard_normal((200, d))
    xs = B * dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    worst = 0.0
    for scale in (0.0, 1.0, 40.0):
        Theta = scale * rng.standard_normal((K, d))
        z = xs @ Theta.T
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        for k1 in range(K):
            g1 = (p - np.eye(K)[k1])[:, :, None] * xs[:, None, :]  # (200, K, d)
            for k2 in range(K):
                g2 = (p - np.eye(K)[k2])[:, :, None] * xs[:, None, :]
                diff = g1[:, None] - g2[None]
                worst = max(worst, np.sqrt((diff**2).sum(axis=(2, 3))).max())
    assert worst <= gradient_sensitivity(B, K) * (1 + 1e-12) == 2 * np.sqrt(2) * B * (1 + 1e-12)
    assert worst > 2 * B * 1.05  # the binary bound would under-noise the multinomial gradient


@pytest.mark.parametrize("k", [2, 3, 5])
def test_mm_releases_compose_to_the_target_and_a_negative_control_fails(k):
    """Gram share + T gradient steps = rho (zCDP addition) meets (epsilon, delta); spending
    the full rho on the gradients and again on the Gram does not."""
    for eps, delta, n, p in [(1.0, 1e-6, 1000, 4), (8.0, 1e-6, 50, 10), (0.1, 1e-5, 10**5, 2)]:
        rule = logistic_rule(n, p, k, eps, delta)
        d = p + 1
        gram = lattice_gaussian_zcdp(rule["rho_gram"], np.sqrt(2) * rule["x_radius"] ** 2, d)
        step = lattice_gaussian_zcdp(
            rule["rho_step"], gradient_sensitivity(rule["x_radius"], k), d * (1 if k == 2 else k)
        )
        spent = gram.guarantee.zcdp_rho + rule["steps"] * step.guarantee.zcdp_rho
        rho = zcdp_rho_for(eps, delta)
        assert spent <= rho * (1 + 1e-12) and zcdp_delta(spent, eps) <= delta * (1 + 1e-9)
        assert zcdp_delta(spent + rho, eps) > delta


def test_the_ridge_and_steps_are_a_public_rule_that_reads_no_data():
    """Two unrelated data sets of the same shape get the same ridge and steps, equal to
    logistic_rule(n, p, K, epsilon, delta); the rule's inputs are public only."""
    import inspect

    params = set(inspect.signature(logistic_rule).parameters)
    assert params == {"n", "p", "n_classes", "epsilon", "delta", "fit_intercept"}
    rng = np.random.default_rng(7)
    X1, y1 = _data(rng, n=800)
    X2 = rng.uniform(-1, 1, (800, 3)) ** 3
    y2 = (X2[:, 2] > 0.1).astype(int)
    fits = [
        PrivateLogisticRegression(epsilon=0.7, bounds=(-1, 1), random_state=s).fit(X, y)
        for s, (X, y) in enumerate([(X1, y1), (X2, y2)])
    ]
    rule = logistic_rule(800, 3, 2, 0.7, 1e-6)
    assert fits[0].l2_ == fits[1].l2_ == rule["l2"] > 0
    assert fits[0].n_iter_ == fits[1].n_iter_ == rule["steps"]
    assert logistic_rule(8000, 3, 2, 0.7, 1e-6)["l2"] < rule["l2"]  # less noise, less ridge


def test_previous_default_is_available_and_explicit_settings_are_honoured():
    rng = np.random.default_rng(8)
    X, y = _data(rng, n=600)
    old = PrivateLogisticRegression(bounds=(-1, 1), method="noisy_gd", random_state=0).fit(X, y)
    assert old.method_ == "noisy_gd" and old.l2_ == 1e-3 and old.n_iter_ == 30
    new = PrivateLogisticRegression(bounds=(-1, 1), l2=0.1, max_iter=7, random_state=0).fit(X, y)
    assert new.method_ == "noisy_mm" and new.l2_ == 0.1 and new.n_iter_ == 7
    for bad in ({"l2": -1.0}, {"l2": "big"}, {"max_iter": 1}, {"classes": [1, 1]}):
        with pytest.raises(ValidationError):
            PrivateLogisticRegression(bounds=(-1, 1), **bad).fit(X, y)


@pytest.mark.slow
def test_default_log_loss_beats_the_previous_default_on_breast_cancer():
    """scikit-learn's breast_cancer (features mapped to [-1, 1] by their range), 70/30 splits,
    epsilon 1: the paired log-loss difference default - previous is below 0 by 3 MC SE."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    diffs = []
    for s in range(12):
        idx = np.random.default_rng(s).permutation(y.size)
        tr, te = idx[:398], idx[398:]
        losses = []
        for method in ("auto", "noisy_gd"):
            m = PrivateLogisticRegression(
                epsilon=1.0, bounds=(-1, 1), method=method, random_state=s
            ).fit(X[tr], y[tr])
            p = np.clip(m.predict_proba(X[te])[:, 1], 1e-15, 1 - 1e-15)
            losses.append(-np.mean(y[te] * np.log(p) + (1 - y[te]) * np.log(1 - p)))
        diffs.append(losses[0] - losses[1])
    diffs = np.array(diffs)
    assert diffs.mean() + 3 * diffs.std(ddof=1) / np.sqrt(diffs.size) < 0


@pytest.mark.parametrize(
    "y, classes, match",
    [
        (np.arange(60) % 3, None, "Only binary"),  # three numeric labels
        (np.array(["a", "b", "c"] * 20), None, "Only binary"),  # three string labels
        (np.arange(60) % 2 + 1, None, "outside the public classes"),  # binary, not 0/1
        (np.array(["a", "b"] * 30), None, "outside the public classes"),
        (np.arange(60) % 3, [0, 1], "outside the public classes"),  # classes given
        (np.arange(60) % 2 * 1.0, None, None),  # float 0/1: fits
        (np.zeros(60, dtype=int), None, None),  # one class present: fits
    ],
)
def test_label_checks_name_the_error_whatever_the_label_type(y, classes, match):
    """_targets reads the label type only to name an error; each case keeps its outcome."""
    X = np.random.default_rng(0).uniform(-1, 1, (60, 2))
    model = PrivateLogisticRegression(bounds=(-1, 1), classes=classes, random_state=0)
    if match is None:
        assert model.fit(X, y).coef_.shape == (1, 2)
    else:
        with pytest.raises(ValidationError, match=match):
            model.fit(X, y)

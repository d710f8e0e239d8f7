"""ePTR-Bayes, -OLS and -NW estimators: validation, release rates, invariances, Theorem 2.3.

Paper 001, Algorithms 3-5 and Theorem 2.3. Binomial z-tests at |z| < 4; Monte Carlo
inequalities with a 3-SE margin; fixed seeds.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from privest.errors import (
    BoundsError,
    NothingReleasedWarning,
    PrivacyParameterError,
    ValidationError,
)
from privest.mechanisms.eptr import eptr_noise_scale, ptr_threshold, release_probability
from privest.models.eptr_bayes import EPTRBayesClassifier, bayes_local_sensitivity
from privest.models.eptr_nw import EPTRKernelRegressor, nw_local_sensitivity
from privest.models.eptr_ols import EPTRLinearRegression, ols_local_sensitivity
from privest.rng import make_rng


def _ols_data(rng, n=8000, p=5):
    theta = 1 / np.arange(1, p + 1)
    theta /= np.linalg.norm(theta)
    X = rng.standard_normal((n, p))
    return X, X @ theta + rng.standard_normal(n), theta


def _bayes_data(rng, n=5000, mu=(0.75, 0.15, 0.10), p=10):
    y = rng.choice(3, size=n, p=mu)
    X = rng.standard_normal((n, p))
    X[np.arange(n), y] += 3.0
    return X, y


def _nw_data(rng, n=2000):
    """x as one column (n, 1): scikit-learn estimators take 2-D X."""
    x = rng.random(n)
    y = np.sin(2 * np.pi * x) + 0.5 * np.cos(4 * np.pi * x) + 0.2 * rng.standard_normal(n)
    return x[:, None], y


def test_worked_alphas_and_noise_scales():
    assert bayes_local_sensitivity(5000, 8.0, 0.04) == pytest.approx(0.113138, abs=1e-6)
    assert eptr_noise_scale(bayes_local_sensitivity(5000, 8.0, 0.04), 1.0, 0.01) == pytest.approx(
        0.70316, abs=1e-5
    )
    assert ols_local_sensitivity(8000, 4.0, 1.0, 0.4) == pytest.approx(0.02)
    assert eptr_noise_scale(0.02, 1.0, 0.01) == pytest.approx(0.12430, abs=1e-5)
    h = 0.2 * 2000 ** (-1 / 5)
    assert h == pytest.approx(0.043734, abs=1e-6)
    assert nw_local_sensitivity(2000, 1, h, 1.0, 0.4) == pytest.approx(0.04561, abs=1e-5)
    assert eptr_noise_scale(
        nw_local_sensitivity(2000, 1, h, 1.0, 0.4), 1.0, 2000.0**-3
    ) == pytest.approx(0.6190, abs=1e-4)


def test_ols_fit_on_typical_data_matches_the_spec_sanity_values():
    rng = np.random.default_rng(1)
    X, y, theta = _ols_data(rng)
    model = EPTRLinearRegression(
        epsilon=1.5,
        delta=0.01,
        x_radius=4.0,
        theta_radius=1.0,
        c0=0.4,
        random_state=2,
        clip=True,
        constants="paper",
    )
    info = model.explain(X, y)
    assert info["lambda_min"] / 8000 == pytest.approx(0.96, abs=0.03)
    assert info["gamma"] == pytest.approx(139, rel=0.05)
    assert 0 < info["n_clipped_x"] < 0.02 * 8000
    assert model.fit(X, y) is model and model.released_
    assert np.sum((model.coef_ - theta) ** 2) < 0.2
    assert model.predict(X[:3]).shape == (3,)


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_typical_data_release_rates(eps):
    """E1, E5 with eps >= 1 and E9 with eps >= 1.5 release with probability >= 0.99."""
    rng = np.random.default_rng(int(eps * 10))
    q_ols, q_bayes, q_nw = [], [], []
    for _ in range(10):
        X, y, _ = _ols_data(rng)
        q_ols.append(
            EPTRLinearRegression(
                epsilon=eps, delta=0.01, x_radius=4.0, theta_radius=1.0, c0=0.4, clip=True
            ).explain(X, y)["release_probability"]
        )
        Xb, yb = _bayes_data(rng)
        q_bayes.append(
            EPTRBayesClassifier(
                epsilon=eps, delta=0.01, classes=[0, 1, 2], x_radius=8.0, c0=0.04, clip=True
            ).explain(Xb, yb)["release_probability"]
        )
        x, yn = _nw_data(rng)
        nw = EPTRKernelRegressor(
            query_points=[[0.5]], epsilon=max(eps, 1.5), delta=2000.0**-3, c0=0.4, clip=True
        )
        q_nw.append(float(nw.explain(x, yn)["release_probability"][0]))
    assert min(np.mean(q_ols), np.mean(q_bayes), np.mean(q_nw)) >= 0.99


def _release_frequency(fit_once, trials, gen):
    return sum(fit_once(gen) for _ in range(trials))


@pytest.mark.parametrize("kind", ["bayes", "ols", "nw"])
def test_atypical_data_releases_with_probability_q0(kind):
    """Class of size 1 / lambda_min = 0 / no points near x_0: frequency ~ q(0) (binomial)."""
    rng = np.random.default_rng(3)
    eps, delta, trials = 1.0, 0.01, 3000
    if kind == "bayes":
        X, y = _bayes_data(rng, n=300, mu=(0.6, 0.4, 0.0))
        y[0] = 2
        model = EPTRBayesClassifier(
            epsilon=eps, delta=delta, classes=[0, 1, 2], x_radius=4.0, c0=0.05, clip=True
        )
    elif kind == "ols":
        X = np.zeros((300, 3))
        X[0] = [1.0, 2.0, 0.5]
        y = np.zeros(300)
        model = EPTRLinearRegression(
            epsilon=eps, delta=delta, x_radius=4.0, theta_radius=1.0, c0=0.1, clip=True
        )
    else:
        X = rng.uniform(0.8, 1.0, (300, 1))
        y = rng.uniform(-1, 1, 300)
        model = EPTRKernelRegressor(
            query_points=[[0.2]], epsilon=eps, delta=delta, bandwidth=0.05, c0=0.3, clip=True
        )
    q0 = float(release_probability(0.0, eps, delta))
    gen = make_rng(4)

    def once(g):
        with warnings.catch_warnings():  # a Monte Carlo rate: most fits release nothing
            warnings.simplefilter("ignore", NothingReleasedWarning)
            return bool(np.all(model.set_params(random_state=g).fit(X, y).released_))

    hits = _release_frequency(once, trials, gen)
    assert abs(hits - trials * q0) / math.sqrt(trials * q0 * (1 - q0)) < 4, hits


def test_predict_and_attributes_when_nothing_is_released():
    X = np.zeros((50, 2))
    X[0] = [1.0, 1.0]
    y = np.ones(50)
    m = EPTRLinearRegression(
        epsilon=1.0,
        delta=0.01,
        x_radius=2.0,
        theta_radius=1.0,
        c0=0.1,
        bottom=[0.5, -0.5],
        random_state=1,
        clip=True,
    )
    gen = make_rng(2)
    with pytest.warns(NothingReleasedWarning, match="lambda_min"):
        m.set_params(random_state=gen).fit(X, y)
    assert not m.released_
    np.testing.assert_array_equal(m.coef_, [0.5, -0.5])
    np.testing.assert_allclose(m.predict([[1.0, 1.0]]), [0.0])
    # Bayes: fixed bottom predicts the first class everywhere
    Xb = np.random.default_rng(0).standard_normal((30, 2))
    yb = np.array([0] * 29 + [1])
    b = EPTRBayesClassifier(
        epsilon=1.0,
        delta=0.01,
        classes=[0, 1],
        x_radius=2.0,
        c0=0.2,
        bottom="fixed",
        random_state=3,
        clip=True,
    )
    with pytest.warns(NothingReleasedWarning, match="every class"):
        b.fit(Xb, yb)
    assert not b.released_ and np.all(b.predict(Xb) == 0)
    np.testing.assert_allclose(b.class_prior_, [0.5, 0.5])
    br = EPTRBayesClassifier(
        epsilon=1.0, delta=0.01, classes=["a", "b"], x_radius=2.0, c0=0.2, random_state=3, clip=True
    )
    with pytest.warns(NothingReleasedWarning, match="every class"):
        br.fit(Xb, np.where(yb == 0, "a", "b"))
    assert not br.released_ and set(br.predict(Xb)) <= {"a", "b"}
    assert np.all(np.linalg.norm(br.means_, axis=1) <= 2.0 + 1e-12)
    assert np.all(br.class_prior_ >= 0.2 / (1 + 2 * 0.2) - 1e-12)  # floored at c0, renormalised
    # NW: a public number as bottom
    nw = EPTRKernelRegressor(
        query_points=[[0.1], [0.9]],
        epsilon=1.0,
        delta=0.01,
        bandwidth=0.05,
        c0=0.3,
        bottom=0.0,
        clip=True,
    )
    nw.set_params(random_state=5).fit(np.full((40, 1), 0.5), np.ones(40))
    assert not nw.released_.any() and np.all(nw.estimates_ == 0.0)
    assert nw.predict([[0.9], [0.1]]).shape == (2,)
    with pytest.raises(ValidationError, match="query points"):
        nw.predict([[0.5]])


def test_invariances_permutation_seed_and_projection():
    rng = np.random.default_rng(6)
    X, y, _ = _ols_data(rng, n=2000, p=3)
    X[:20] *= 10  # some rows outside R_x = 4
    perm = rng.permutation(2000)
    m = EPTRLinearRegression(
        epsilon=2.0,
        delta=0.01,
        x_radius=4.0,
        theta_radius=1.0,
        c0=0.4,
        clip=True,
        constants="paper",
    )
    a, b = m.explain(X, y), m.explain(X[perm], y[perm])
    assert a["gamma"] == pytest.approx(b["gamma"], rel=1e-10)
    np.testing.assert_allclose(a["estimate"], b["estimate"], rtol=1e-9)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    Xp = X * np.minimum(1, 4.0 / norms) * (1 - 1e-12)
    c = m.explain(Xp, np.clip(y, -4, 4))
    assert a["gamma"] == pytest.approx(c["gamma"], rel=1e-10)
    np.testing.assert_allclose(a["estimate"], c["estimate"], rtol=1e-9)
    assert a["n_clipped_x"] >= 20 and c["n_clipped_x"] == 0
    f1 = clone(m).set_params(random_state=7).fit(X, y).coef_
    f2 = clone(m).set_params(random_state=7).fit(X[perm], y[perm]).coef_
    np.testing.assert_allclose(f1, f2, rtol=1e-9)
    # alpha depends only on (n, p, R, c0)
    m.fit(X, y)
    assert m.local_sensitivity_ == ols_local_sensitivity(2000, 4.0, 1.0, 0.4)
    Xb, yb = _bayes_data(rng, n=1000)
    bay = EPTRBayesClassifier(
        epsilon=2.0, delta=0.01, classes=[0, 1, 2], x_radius=8.0, c0=0.04, clip=True
    )
    e1, e2 = bay.explain(Xb, yb), bay.explain(Xb[::-1], yb[::-1])
    np.testing.assert_allclose(e1["estimate"], e2["estimate"], rtol=1e-12)
    assert e1["gamma"] == e2["gamma"]
    x, yn = _nw_data(rng, 500)
    nw = EPTRKernelRegressor(query_points=[[0.5]], epsilon=2.0, delta=0.01, c0=0.3, clip=True)
    np.testing.assert_allclose(
        nw.explain(x, yn)["estimate"], nw.explain(x[::-1], yn[::-1])["estimate"], rtol=1e-12
    )


def test_project_false_raises_for_out_of_range_records():
    X = np.array([[5.0, 0.0], [0.1, 0.2]])
    with pytest.raises(BoundsError, match="clip=True"):
        EPTRLinearRegression(
            epsilon=1.0, delta=0.01, x_radius=1.0, theta_radius=1.0, c0=0.1, clip=False
        ).fit(X, [0.0, 0.0])
    with pytest.raises(BoundsError):
        EPTRBayesClassifier(
            epsilon=1.0, delta=0.01, classes=[0, 1], x_radius=1.0, c0=0.1, clip=False
        ).fit(X, [0, 1])
    with pytest.raises(BoundsError):
        EPTRKernelRegressor(query_points=[[0.5]], epsilon=1.0, delta=0.01, c0=0.1, clip=False).fit(
            [[1.5], [0.2]], [0, 0]
        )


@pytest.mark.parametrize(
    ("model", "exc"),
    [
        (EPTRLinearRegression(epsilon=0.0, clip=True), PrivacyParameterError),
        (EPTRLinearRegression(delta=1.0, clip=True), PrivacyParameterError),
        (EPTRLinearRegression(epsilon=30.0, constants="paper", clip=True), PrivacyParameterError),
        (EPTRLinearRegression(x_radius=-1.0, clip=True), ValidationError),
        (EPTRLinearRegression(theta_radius=0.0, clip=True), ValidationError),
        (EPTRLinearRegression(c0=0.0, clip=True), ValidationError),
        (EPTRLinearRegression(local_sensitivity_factor=0.5, clip=True), ValidationError),
        (EPTRLinearRegression(bottom=[1.0, 2.0, 3.0], clip=True), ValidationError),
        (EPTRBayesClassifier(classes=None, clip=True), ValidationError),
        (EPTRBayesClassifier(classes=[0, 1], c0=0.5, clip=True), ValidationError),
        (EPTRBayesClassifier(classes=[0, 1], bottom="zero", clip=True), ValidationError),
        (EPTRBayesClassifier(classes=[0, 2], clip=True), ValidationError),  # label 1 not in classes
        (EPTRKernelRegressor(query_points=None, clip=True), ValidationError),
        (EPTRKernelRegressor(query_points=[[0.5]], budget_mode="x", clip=True), ValidationError),
        (EPTRKernelRegressor(query_points=[[0.5]], bandwidth=0.0, clip=True), ValidationError),
        (EPTRKernelRegressor(query_points=[[0.5, 0.5]], clip=True), ValidationError),
        (EPTRKernelRegressor(query_points=[[0.5]], bottom="zero", clip=True), ValidationError),
        (
            EPTRKernelRegressor(query_points=[[0.5]], bottom=float("nan"), clip=True),
            ValidationError,
        ),
    ],
)
def test_validation_errors(model, exc):
    X = np.array([[0.1, 0.2], [0.3, 0.1], [0.2, 0.2]])
    y = np.array([0, 1, 1]) if isinstance(model, EPTRBayesClassifier) else np.array([0.1, 0, 0])
    if isinstance(model, EPTRKernelRegressor):
        X = X[:, :1]
    with pytest.raises(exc):
        model.fit(X, y)


def test_nan_and_shape_errors():
    with pytest.raises(ValidationError, match="NaN"):
        EPTRLinearRegression(clip=True).fit([[np.nan, 1.0]], [1.0])
    with pytest.raises(ValidationError, match="inconsistent numbers of samples"):
        EPTRLinearRegression(clip=True).fit([[0.0, 1.0]], [1.0, 2.0])
    with pytest.warns(NothingReleasedWarning):  # 2 rows: the bottom, up front
        m = EPTRLinearRegression(random_state=1, clip=True).fit(
            [[0.1, 0.2], [0.2, 0.1]], [0.0, 0.1]
        )
    with pytest.raises(ValidationError, match="features"):
        m.predict([[1.0, 2.0, 3.0]])


def test_sklearn_conventions_and_guarantees():
    m = EPTRLinearRegression(epsilon=2.0, delta=1e-6, c0=0.3, clip=True)
    assert m.get_params()["c0"] == 0.3 and clone(m).get_params() == m.get_params()
    assert m.set_params(c0=0.2) is m and m.c0 == 0.2
    assert m.guarantee.eps == 2.0 and m.guarantee.dlt == 1e-6
    nw = EPTRKernelRegressor(query_points=[[0.1], [0.5], [0.9]], epsilon=1.0, delta=0.01, clip=True)
    assert nw.guarantee.eps == 1.0  # split: (eps, delta) in total
    nw.set_params(budget_mode="per_query")
    assert nw.guarantee.eps == 3.0 and nw.guarantee.dlt == pytest.approx(0.03)
    x, y = _nw_data(np.random.default_rng(1), 3000)
    split = EPTRKernelRegressor(
        query_points=[[0.1], [0.5], [0.9]], epsilon=3.0, delta=0.03, c0=0.3, clip=True
    )
    split.set_params(random_state=1).fit(x, y)
    assert split.threshold_ == pytest.approx(ptr_threshold(1.0, 0.01))
    assert split.guarantee_.eps == 3.0


def test_theorem_2_3_risk_decomposition_by_monte_carlo():
    """E||theta_tilde - theta||^2 <= E||theta_hat - theta||^2 + p sigma^2
    + C_bot (P(gamma < 2M) + delta), with a 3-SE margin, at a borderline release rate."""
    rng = np.random.default_rng(8)
    gen = make_rng(9)
    p, n, eps, delta = 3, 400, 2.0, 0.01
    theta = np.array([0.6, -0.4, 0.2])
    model = EPTRLinearRegression(
        epsilon=eps,
        delta=delta,
        x_radius=3.0,
        theta_radius=1.0,
        c0=0.336,
        clip=True,
        constants="paper",
        inference="none",  # Theorem 2.3 is about Algorithm 4 at the whole (eps, delta)
    )  # median gamma ~ 2M
    m_thr = ptr_threshold(eps, delta)
    err_t, err_h, below = [], [], []
    for _ in range(600):
        X = rng.standard_normal((n, p))
        y = X @ theta + rng.standard_normal(n)
        info = model.explain(X, y)
        with warnings.catch_warnings():  # gamma < 2M in some replicates: bottom, by design
            warnings.simplefilter("ignore", NothingReleasedWarning)
            fit = model.set_params(random_state=gen).fit(X, y)
        err_t.append(np.sum((fit.coef_ - theta) ** 2))
        err_h.append(np.sum((info["estimate"] - theta) ** 2))
        below.append(info["gamma"] < 2 * m_thr)
    rate = np.mean(below)
    assert 0.02 < rate < 0.98  # the bound's bottom term is exercised
    c_bot = np.sum(theta**2)
    sigma = eptr_noise_scale(ols_local_sensitivity(n, 3.0, 1.0, 0.336), eps, delta)
    bound = np.mean(err_h) + p * sigma**2 + c_bot * (rate + delta)
    se = np.std(np.asarray(err_t) - np.asarray(err_h)) / math.sqrt(len(err_t))
    assert np.mean(err_t) <= bound + 3 * se


@pytest.mark.parametrize("norm", [1e8, 1e10, 1e160])
def test_ols_one_huge_row_moves_gamma_by_at_most_one_and_the_estimate_by_alpha(norm):
    """A neighbour with one row of huge norm: (L) and (S) of Definition 2.1 must still hold.

    S used to be X^T X corrected on the projected rows, which cancels catastrophically for such
    a row (gamma off by > 1 at 1e8, 0 at 1e10, S NaN at 1e160); it is now built from the
    projected rows themselves."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 3))
    y = X @ np.array([0.5, 0.3, -0.2]) + rng.standard_normal(2000)
    model = EPTRLinearRegression(
        epsilon=1.0, delta=0.01, x_radius=1.0, theta_radius=1.0, c0=0.1, clip=True
    )
    a = model.explain(X, y)
    assert a["gamma"] > 1
    Xn = X.copy()
    Xn[0] = norm * np.array([0.6, -0.8, 0.0])
    b = model.explain(Xn, y)
    assert abs(b["gamma"] - a["gamma"]) <= 1
    assert np.linalg.norm(b["estimate"] - a["estimate"]) <= a["alpha"]
    # the huge row counts exactly as its projection onto the R_x sphere
    Xs = X.copy()
    Xs[0] = [0.6, -0.8, 0.0]
    c = model.explain(Xs, y)
    assert b["gamma"] == pytest.approx(c["gamma"], rel=1e-12)
    np.testing.assert_allclose(b["estimate"], c["estimate"], rtol=1e-12)


def test_ols_projected_gram_blocks_match_the_direct_computation(monkeypatch):
    """The block-wise S and X^T y equal the direct ones, rows outside R_x in some blocks only."""
    import privest.models.eptr_inference as ols_mod  # projected_moments lives there now

    rng = np.random.default_rng(3)
    X, y, _ = _ols_data(rng, n=1000, p=4)
    X[::97] *= 5.0
    scale = np.minimum(1.0, 3.0 / np.linalg.norm(X, axis=1))
    Xp, yc = X * scale[:, None], np.clip(y, -3, 3)
    monkeypatch.setattr(ols_mod, "_BLOCK_ELEMENTS", 4 * 64)  # 64 rows per block
    S, b = ols_mod.projected_moments(X, yc, scale)
    np.testing.assert_allclose(S, Xp.T @ Xp, rtol=1e-12)
    np.testing.assert_allclose(b, Xp.T @ yc, rtol=1e-12)
    info = EPTRLinearRegression(
        epsilon=1.0, delta=0.01, x_radius=3.0, theta_radius=1.0, c0=0.1, clip=True
    ).explain(X, y)
    assert info["lambda_min"] == pytest.approx(np.linalg.eigvalsh(Xp.T @ Xp)[0], rel=1e-10)


def test_fitted_models_keep_no_data_dependent_counts():
    """Record counts are diagnostics, reported by explain only, never by fit."""
    rng = np.random.default_rng(4)
    X, y, _ = _ols_data(rng, n=500, p=2)
    X[:7] *= 100.0  # outside R_x = 4
    ols = EPTRLinearRegression(
        epsilon=1.0, delta=0.01, x_radius=4.0, theta_radius=1.0, c0=0.1, random_state=1, clip=True
    )
    assert ols.explain(X, y)["n_clipped_x"] == 7
    Xb, yb = _bayes_data(rng, n=600)
    Xb[:5] *= 100.0
    bay = EPTRBayesClassifier(
        epsilon=1.0, delta=0.01, classes=[0, 1, 2], x_radius=8.0, c0=0.04, random_state=1, clip=True
    )
    assert bay.explain(Xb, yb)["n_clipped"] == 5
    x, yn = _nw_data(rng, 300)
    x[:3] += 2.0  # outside the domain [0, 1]
    nw = EPTRKernelRegressor(
        query_points=[[0.5]],
        epsilon=1.0,
        delta=0.01,
        y_radius=3.0,
        c0=0.3,
        random_state=1,
        clip=True,
    )
    assert nw.explain(x, yn)["n_clipped"] == 3
    for model, data in ((ols, (X, y)), (bay, (Xb, yb)), (nw, (x, yn))):
        model.fit(*data)
        counts = [k for k in vars(model) if k.startswith(("n_clipped", "n_clipped"))]
        assert counts == [], counts


def test_data_errors_name_the_public_constraint_not_the_private_values():
    bay = EPTRBayesClassifier(
        epsilon=1.0, delta=0.01, classes=["a", "b"], x_radius=1.0, c0=0.1, clip=True
    )
    with pytest.raises(ValidationError) as err:
        bay.fit(np.zeros((3, 1)), ["a", "b", "secret-label-17"])
    assert "secret-label-17" not in str(err.value) and "['a', 'b']" in str(err.value)
    nw = EPTRKernelRegressor(query_points=[[0.5]], epsilon=1.0, delta=0.01, c0=0.1, clip=False)
    x = np.array([[0.1], [0.2], [1.5], [1.7], [1.9], [0.3]])
    with pytest.raises(BoundsError) as err:
        nw.fit(x, np.zeros(6))
    msg = str(err.value)
    assert "3" not in msg and "[[0.0, 1.0]]" in msg and "clip=True" in msg
    ols = EPTRLinearRegression(
        epsilon=1.0, delta=0.01, x_radius=1.0, theta_radius=1.0, c0=0.1, clip=False
    )
    with pytest.raises(BoundsError, match=r"\|\|x\|\| <= 1.0, \|y\| <= 1.0"):
        ols.fit([[5.0, 0.0], [0.1, 0.2]], [0.0, 0.0])


def test_nw_kernel_is_translation_invariant_far_from_the_origin():
    """The expanded ||x0 - x||^2 is centred at the public queries: no cancellation at 1e8."""
    rng = np.random.default_rng(5)
    x, y = _nw_data(rng, 400)
    near = EPTRKernelRegressor(
        query_points=[[0.5]], epsilon=1.0, delta=0.01, bandwidth=0.05, c0=0.3, clip=True
    )
    far = EPTRKernelRegressor(
        query_points=[[1e8 + 0.5]],
        epsilon=1.0,
        delta=0.01,
        bandwidth=0.05,
        c0=0.3,
        bounds=(1e8, 1e8 + 1.0),
        clip=True,
    )
    a, b = near.explain(x, y), far.explain(x + 1e8, y)
    np.testing.assert_allclose(b["degree"], a["degree"], rtol=1e-4)
    np.testing.assert_allclose(b["estimate"], a["estimate"], rtol=1e-4, atol=1e-9)

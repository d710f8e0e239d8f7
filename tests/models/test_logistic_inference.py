"""results_ of the default private logistic regression (``method="noisy_mm"``): the one-step
estimate and its noise-aware sandwich (privest.models.logistic_inference;
docs/central-models.md, "Standard errors").

The algebra is checked against Monte Carlo of the recursion it linearises; coverage on a
real data set (breast cancer, the population) with tolerances of 3.5 Monte Carlo standard
errors on both sides.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import privest as pv
import privest.models.logistic as logistic_module
from privest.errors import ValidationError
from privest.models.logistic_fit import gram_preconditioner, noisy_descent
from privest.models.logistic_inference import SANDWICH_SHARE, hessian_point, one_step_cov

#: a curvature (sum scale, n = 1000) with a weak direction, and the minimiser
H = 1000 * np.array([[0.03, 0.01, -0.05], [0.01, 0.02, -0.04], [-0.05, -0.04, 0.2]])
THETA_HAT = np.array([-3.0, -2.5, -1.0])


def _quadratic_path(rng: np.random.Generator, sd_g: float, steps: int = 20, l2: float = 0.01):
    """The noisy MM recursion of the fit on the quadratic loss 1/2 (t - t^)' H (t - t^)
    (the linearisation is exact): bounded-Hessian preconditioner, ridge l2, Gaussian
    gradient noise; returns the last half of (iterates, noisy gradient sums)."""
    n = 1000
    P = np.linalg.inv(1.5 * H / n + l2 * np.eye(3))
    theta, thetas, grads = np.zeros(3), [], []
    for _ in range(steps):
        g = H @ (theta - THETA_HAT) + sd_g * rng.standard_normal(3)
        thetas.append(theta)
        grads.append(g)
        theta = theta - P @ (g / n + l2 * theta)
    return np.array(thetas[steps // 2 :]), np.array(grads[steps // 2 :])


def test_one_step_undoes_the_ridge_and_its_noise_term_matches_monte_carlo() -> None:
    """Exact Hessian: the one step lands on theta^ minus H^-1 times the mean gradient noise
    (no ridge shrinkage, though the ridge halves the weak direction), and the sandwich's
    noise term s^2 / m H^-1 H^-1 is the Monte Carlo covariance of the estimate."""
    rng = np.random.default_rng(0)
    sd_g, reps = 30.0, 4000
    est, pred = [], None
    for _ in range(reps):
        thetas, grads = _quadratic_path(rng, sd_g)
        theta, cov = one_step_cov(thetas, grads, sd_g, H, 0.0)
        est.append(theta)
        pred = cov - np.linalg.inv(H)  # less the sampling term H^-1
    est = np.array(est)
    tol = 3.5 * math.sqrt(2.0 / reps)  # relative Monte Carlo sd of a variance, 3.5 times
    sd_mean = np.sqrt(np.diag(pred) / reps)
    assert np.all(np.abs(est.mean(axis=0) - THETA_HAT) <= 3.5 * sd_mean)
    assert np.diag(np.cov(est.T)) / np.diag(pred) == pytest.approx(np.ones(3), abs=tol)
    shrunk = _quadratic_path(np.random.default_rng(1), 0.0)[0].mean(axis=0)
    assert np.max(np.abs(shrunk - THETA_HAT)) > 0.5  # the control: the fit itself is biased


def test_noise_only_cov_is_the_spread_around_the_samples_own_estimate() -> None:
    """``noise_only``: the privacy noise's part of the sandwich alone (the noise-only
    interval's), the Monte Carlo covariance of the estimate around the sample's theta^ (the
    sampling term H^-1 is not in it: the full Cov overstates that spread, the control)."""
    rng = np.random.default_rng(3)
    sd_g, reps = 30.0, 2000
    est, noise, full = [], [], []
    for _ in range(reps):
        thetas, grads = _quadratic_path(rng, sd_g)
        theta, cov = one_step_cov(thetas, grads, sd_g, H, 0.0)
        est.append(theta)
        noise.append(one_step_cov(thetas, grads, sd_g, H, 0.0, noise_only=True)[1])
        full.append(cov)
    spread = np.diag(np.cov(np.array(est).T))
    tol = 3.5 * math.sqrt(2.0 / reps)  # relative Monte Carlo sd of a variance, 3.5 times
    assert spread / np.diag(np.mean(noise, axis=0)) == pytest.approx(np.ones(3), abs=tol)
    assert np.all(spread / np.diag(np.mean(full, axis=0)) < 1.0 - tol)


def test_hessian_noise_term_matches_monte_carlo() -> None:
    """A noisy released Hessian (diagonal sd s, off-diagonal s / sqrt 2) moves the one step
    by H~^-1 E d, d the fit's distance to theta^; its covariance is the sandwich's
    s^2 / 2 H^-1 (||d||^2 I + d d') H^-1 term (first order; s small against H here)."""
    rng = np.random.default_rng(2)
    s, reps, d = 0.3, 4000, np.array([1.0, 0.8, 0.3])
    thetas = np.tile(THETA_HAT + d, (10, 1))
    grads = np.tile(H @ d, (10, 1))
    est, pred = [], []
    for _ in range(reps):
        E = np.triu(rng.standard_normal((3, 3)) * s / math.sqrt(2.0), 1)
        E = E + E.T + np.diag(s * rng.standard_normal(3))
        theta, cov = one_step_cov(thetas, grads, 0.0, H + E, s)
        est.append(theta)
        pred.append(cov - np.linalg.inv(H + E))  # less the sampling term
    ratio = np.diag(np.cov(np.array(est).T)) / np.diag(np.mean(pred, axis=0))
    assert ratio == pytest.approx(np.ones(3), abs=3.5 * math.sqrt(2.0 / reps) + 0.02)


def test_trace_is_the_released_path() -> None:
    """The path the standard errors read is the fit's: each iterate follows from the
    previous one and its released noisy gradient sum."""
    rng = np.random.default_rng(3)
    X = np.hstack([rng.uniform(-1, 1, (500, 2)), np.ones((500, 1))])
    Y = (rng.random((500, 1)) < expit(X @ np.array([[1.0], [-1.0], [0.2]]))).astype(float)
    P, trace = np.eye(3) * 2.0, {}
    out = noisy_descent(
        X, Y, x_radius=math.sqrt(3), rho_step=0.01, steps=6, precond=P, l2=0.01, rng=rng,
        trace=trace,
    )  # fmt: skip
    th, g = trace["thetas"][:, :, 0], trace["grads"][:, :, 0]
    step = th[:-1] - (g[:-1] / 500 + 0.01 * th[:-1]) @ P
    assert np.allclose(step, th[1:]) and th[0] == pytest.approx(np.zeros(3))
    last = th[-1] - P @ (g[-1] / 500 + 0.01 * th[-1])
    assert out[:, 0] == pytest.approx((th[4] + th[5] + last) / 3)  # the last half
    assert trace["sigma"] > 0


def test_hessian_point_lies_between_the_fit_and_the_minimiser() -> None:
    """The Hessian is released at the ridge-free bounded-Hessian step from the path: the
    bound H0 >= H makes it a partial Newton step, so it is closer to the maximum likelihood
    estimate than the ridge-shrunk fit, and it is the step the docstring states."""
    rng = np.random.default_rng(7)
    n = 20_000
    X = np.hstack([rng.uniform(-1, 1, (n, 2)), np.ones((n, 1))])
    Y = (rng.random((n, 1)) < expit(X @ np.array([[2.0], [-1.5], [0.5]]))).astype(float)
    mle = LogisticRegression(C=np.inf, tol=1e-10).fit(X[:, :2], Y[:, 0])
    theta_hat = np.r_[mle.coef_[0], mle.intercept_]
    l2 = 0.05  # a strong ridge: the fit is shrunk well short of the minimiser
    P = gram_preconditioner(X.T @ X, n, math.sqrt(3), 1e6, 2, l2, rng)
    trace: dict = {}
    fit = noisy_descent(
        X, Y, x_radius=math.sqrt(3), rho_step=1e4, steps=20, precond=P, l2=l2, rng=rng,
        trace=trace,
    )[:, 0]  # fmt: skip
    th, g = trace["thetas"][10:, :, 0], trace["grads"][10:, :, 0]
    at = hessian_point(th, g, P, l2, n)
    H0 = np.linalg.inv(P) - l2 * np.eye(3)
    assert at == pytest.approx(np.mean(th - g @ np.linalg.inv(H0) / n, axis=0))
    far, near = np.linalg.norm(fit - theta_hat), np.linalg.norm(at - theta_hat)
    assert far > 1.0 and near < 0.7 * far


def test_undetermined_hessian_withholds_below_the_n_epsilon_rule() -> None:
    """A converged path (the floor does not move the step) with a released Hessian whose
    smallest eigenvalue is below its noise's spectral norm: the sandwich is given by the
    floor check alone, withheld under the rule used below n x epsilon = 10^4."""
    thetas, grads = np.tile([0.5, -0.2, 0.1], (10, 1)), np.zeros((10, 3))
    Hs = np.diag([400.0, 300.0, 2.0])  # 2 < 2 sqrt(3) x 1
    theta, cov = one_step_cov(thetas, grads, 5.0, Hs, 1.0)
    assert cov is not None and theta == pytest.approx(thetas[0])
    assert one_step_cov(thetas, grads, 5.0, Hs, 1.0, determined=True)[1] is None
    assert one_step_cov(thetas, grads, 5.0, Hs * 10, 1.0, determined=True)[1] is not None


@pytest.mark.parametrize(
    ("inference", "n", "spends"),
    [
        ("auto", 10_000, True),
        ("auto", 3000, False),
        ("sandwich", 3000, True),
        ("none", 3000, False),
    ],
)
def test_the_hessian_share_is_inside_the_stated_guarantee(
    inference: str, n: int, spends: bool, counted_releases
) -> None:
    """The standard errors spend SANDWICH_SHARE of rho on the Hessian (the default only from
    n x epsilon = 10^4 on, a public rule); the X'X release, the 20 gradients
    and it together spend exactly the rho of (epsilon, delta), which is the guarantee
    charged to the budget once, before the data are read."""
    from privest.accounting.zcdp import zcdp_rho_for

    spent = counted_releases
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (n, 2))
    y = (rng.random(n) < expit(X @ np.array([1.0, -1.0]))).astype(int)
    budget = pv.Budget(1.0, 1e-6)
    est = pv.PrivateLogisticRegression(
        epsilon=1.0, delta=1e-6, bounds=(-1, 1), inference=inference, budget=budget
    )
    est.set_params(random_state=0).fit(X, y)
    rho = zcdp_rho_for(1.0, 1e-6)
    assert sum(spent) == pytest.approx(rho, rel=1e-12)
    spend = budget.spends
    assert len(spend) == 1 and (spend[0].epsilon, spend[0].delta) == (1.0, 1e-6)
    if not spends:
        assert len(spent) == 21 and est.results_.bse.isna().all()
    else:
        hessians = spent[21:]  # two releases where the split rule applies (test_logistic_split)
        assert len(hessians) == 1 + (n >= 10_000)
        assert sum(hessians) == pytest.approx(SANDWICH_SHARE * rho)
        assert est.results_.bse.notna().all()


def test_noisy_gd_and_small_multiclass_spend_nothing_on_the_sandwich(counted_releases) -> None:
    """The default spends nothing on standard errors with K = 3, nor ``"sandwich"`` below
    n x epsilon = 2 x 10^4 (results_ says why); ``"noisy_gd"`` has no sandwich."""
    spent = counted_releases
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (600, 2))
    y3 = rng.integers(0, 3, 600)
    clf = pv.PrivateLogisticRegression(bounds=(-1, 1), classes=[0, 1, 2], random_state=0)
    res = clf.fit(X, y3).results_
    assert len(spent) == 21 and res.bse.isna().all() and res.params.size == 6
    assert "three or more classes" in str(res.summary())
    spent.clear()  # below 2 x 10^4 the sandwich is not given with K >= 3: nothing spent
    res = clf.set_params(inference="sandwich").fit(X, y3).results_
    assert len(spent) == 21 and res.bse.isna().all()
    assert "need n x epsilon >= 20000" in str(res.summary())
    gd = pv.PrivateLogisticRegression(bounds=(-1, 1), method="noisy_gd", random_state=0)
    assert gd.fit(X, y3 % 2).results_.bse.isna().all()
    with pytest.raises(ValidationError, match="inference='sandwich'"):
        gd.set_params(inference="sandwich").fit(X, y3 % 2)


def test_summary_and_withheld_standard_errors() -> None:
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, (20_000, 2))
    y = (rng.random(20_000) < expit(0.5 + X @ np.array([1.0, -1.0]))).astype(int)
    clf = pv.PrivateLogisticRegression(bounds=(-1, 1), random_state=0).fit(X, y)
    text = str(clf.results_.summary())
    assert str(clf.guarantee) in text and "noise-aware sandwich" in text
    assert list(clf.results_.params.index) == ["intercept", "x0", "x1"]
    assert clf.results_.pvalues.between(0, 1).all()
    # 100 records at epsilon 0.5: the released Hessian is noise, so no standard errors
    small = pv.PrivateLogisticRegression(
        bounds=(-1, 1), epsilon=0.5, inference="sandwich", random_state=0
    )
    res = small.fit(X[:100], y[:100]).results_
    assert res.bse.isna().all() and "too noisy at this n" in str(res.summary())
    # the default does not spend on them there, and says why
    auto = pv.PrivateLogisticRegression(bounds=(-1, 1), epsilon=0.5, random_state=0)
    res = auto.fit(X[:100], y[:100]).results_
    assert res.bse.isna().all() and "n x epsilon is below" in str(res.summary())


@pytest.mark.slow
def test_coverage_on_breast_cancer() -> None:
    """Breast cancer (mean texture, mean symmetry mapped to [-1, 1]) is the population; each
    release resamples 10^4 records and fits the default once. The intervals given cover the
    population's maximum likelihood coefficients at 0.95 within Monte Carlo error (both
    sides), and are given for most releases."""
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, [1, 8]]
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    truth = np.r_[fit.intercept_, fit.coef_[0]]
    rng = np.random.default_rng(27)
    reps, covered = 300, []
    with threadpool_limits(1):
        for r in range(reps):
            idx = rng.integers(0, len(y), 10_000)
            m = pv.PrivateLogisticRegression(bounds=(-1, 1), random_state=r).fit(X[idx], y[idx])
            ci = m.results_.conf_int().to_numpy()
            if not np.isnan(ci).any():  # withheld standard errors are counted below
                covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    assert len(covered) >= 0.6 * reps
    cover = np.mean(covered, axis=0)
    tol = 3.5 * math.sqrt(0.95 * 0.05 / len(covered))
    assert np.all(np.abs(cover - 0.95) <= tol), (cover, tol)


@pytest.mark.slow
def test_small_n_epsilon_withholds_where_the_floor_check_alone_undercovers(monkeypatch) -> None:
    """Breast cancer at n = 2000, epsilon 1 with ``inference="sandwich"`` (below the
    default's n x epsilon rule): the released Hessian is mostly noise. The control, the
    floor check alone (the rule before issue 27's item 2) on the same releases, gives
    intervals in some releases and they undercover by more than 3.5 Monte Carlo standard
    errors; the current rule withholds them (at most 10% of the releases have standard
    errors, and those cover within Monte Carlo error)."""
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, [1, 8]]
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    truth = np.r_[fit.coef_[0], fit.intercept_]  # the design's order (box centre 0, scale 1)
    released: list = []

    def spy(*args, **kwargs):
        released.append(args)
        return one_step_cov(*args, **kwargs)

    monkeypatch.setattr(logistic_module, "one_step_cov", spy)
    rng = np.random.default_rng(28)
    reps, given, control = 120, [], []
    with threadpool_limits(1):
        for r in range(reps):
            idx = rng.integers(0, len(y), 2000)
            est = pv.PrivateLogisticRegression(bounds=(-1, 1), inference="sandwich")
            ci = est.set_params(random_state=r).fit(X[idx], y[idx]).results_.conf_int()
            if not ci.isna().any().any():  # (intercept, coef): the user's order
                lo, hi = ci.to_numpy().T
                given.append((lo <= np.roll(truth, 1)) & (np.roll(truth, 1) <= hi))
            theta, cov = one_step_cov(*released[-1])  # the floor check alone
            if cov is not None:
                control.append(np.abs(theta - truth) <= 1.959963984540054 * np.sqrt(np.diag(cov)))
    assert len(control) >= 20
    tol = 3.5 * math.sqrt(0.95 * 0.05 / len(control))
    assert np.min(np.mean(control, axis=0)) < 0.95 - tol  # the control: the test can fail
    assert len(given) <= 0.1 * reps
    if len(given) >= 10:
        assert np.min(np.mean(given, axis=0)) >= 0.95 - 3.5 * math.sqrt(0.0475 / len(given))


def _three_class_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    z = np.column_stack([np.zeros(n), 0.3 + X @ [1.0, -0.5], -0.2 + X @ [-0.5, 1.0]])
    u = rng.random(n)[:, None]
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return X, (u > np.cumsum(p, axis=1)).sum(axis=1)


def test_multiclass_results_spend_the_share_and_are_indexed_by_class(counted_releases) -> None:
    """K = 3: the Hessian of the contrasts is one more release (SANDWICH_SHARE of rho, inside
    the guarantee charged once); results_ has one block of (intercept, x0, x1) per class
    against the first, indexed by (class, parameter), with intervals and the guarantee."""
    from privest.accounting.zcdp import zcdp_rho_for

    spent = counted_releases
    X, y = _three_class_data(20_000, 8)
    budget = pv.Budget(1.0, 1e-6)
    labels = np.array(["a", "b", "c"])[y]
    clf = pv.PrivateLogisticRegression(
        bounds=(-1, 1), classes=["a", "b", "c"], inference="sandwich", budget=budget
    )
    res = clf.set_params(random_state=0).fit(X, labels).results_
    rho = zcdp_rho_for(1.0, 1e-6)
    assert sum(spent) == pytest.approx(rho, rel=1e-12) and len(budget.spends) == 1
    assert len(spent) == 22 and spent[-1] == pytest.approx(SANDWICH_SHARE * rho)
    assert list(res.params.index) == [
        (c, v) for c in ("b", "c") for v in ("intercept", "x0", "x1")
    ]  # fmt: skip
    assert res.conf_int().shape == (6, 2) and res.cov_params().shape == (6, 6)
    assert res.bse.notna().all() and res.pvalues.between(0, 1).all()
    text = str(res.summary())
    assert str(clf.guarantee) in text and "noise-aware sandwich" in text
    assert "against the first public class (a)" in text
    assert res.summary().rows()[0]["parameter"] == "b: intercept"  # files and notebooks
    assert "<td>c: x1</td>" in res._repr_html_()
    # the contrasts of the fit's coef_ (ridge-shrunk) are near the one-step params
    shrunk = np.column_stack([clf.intercept_, clf.coef_])
    assert np.allclose((shrunk[1:] - shrunk[0]).ravel(), res.params, atol=0.3)
    # the default spends nothing on them with three classes, and says so
    spent.clear()
    auto = clf.set_params(inference="auto", budget=None).fit(X, labels).results_
    assert len(spent) == 21 and auto.bse.isna().all() and auto.params.size == 6
    assert "three or more classes" in str(auto.summary())


def _worst_pair_released_difference(theta: np.ndarray, x: np.ndarray, x2: np.ndarray):
    """The Hessian sums noisy_hessian releases for two neighbouring data sets (one record
    replaced) at ``theta``, spied on before the noise: the L2 norm of the difference of the
    released vectors (diagonal, sqrt(2) upper triangle) and the radius the release uses."""
    from privest.models import logistic_inference as li

    seen = []

    def spy(S, radius, rho, n, rng):
        seen.append((S, radius))
        return S, 1.0

    rest = np.random.default_rng(0).uniform(-1, 1, (5, x.size))
    rest[:, -1] = 1.0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(li, "noisy_gram", spy)
        for rec in (x, x2):
            li.noisy_hessian(np.vstack([rest, rec]), theta, math.sqrt(x.size), 1.0, None)
    (S1, radius), (S2, _) = seen
    iu = np.triu_indices(S1.shape[0], 1)
    diff = S1 - S2
    return math.hypot(
        np.linalg.norm(np.diag(diff)), math.sqrt(2) * np.linalg.norm(diff[iu])
    ), radius


def test_multiclass_hessian_sensitivity_is_exact_and_the_binary_constant_is_not_enough() -> None:
    """The release's replacement sensitivity sqrt(2) radius^2 with radius = B / sqrt(2):
    never exceeded by random neighbouring records at random points (K = 3, 4), and attained
    by two orthogonal records of norm B both at softmax (0, 1/2, 1/2) (so the bound is the
    exact maximum). The control: the binary release's constant (radius B / 2, sensitivity
    sqrt(2) B^2 / 4) is exceeded by that pair."""
    B = math.sqrt(2.0)  # rows (x, 1) with |x| <= 1
    rng = np.random.default_rng(9)
    for k in (3, 4):
        for _ in range(300):
            theta = rng.normal(0, 3, (2, k))
            x, x2 = np.r_[rng.uniform(-1, 1), 1.0], np.r_[rng.uniform(-1, 1), 1.0]
            diff, radius = _worst_pair_released_difference(theta, x, x2)
            assert radius == pytest.approx(B / math.sqrt(2.0))
            assert diff <= math.sqrt(2.0) * radius**2 * (1 + 1e-12)
    theta = np.array([[0.0, 0.0, 0.0], [-60.0, 0.0, 0.0]])  # classes 1, 2 tie; class 0 ~ 0
    diff, radius = _worst_pair_released_difference(theta, np.r_[1.0, 1.0], np.r_[-1.0, 1.0])
    assert diff == pytest.approx(math.sqrt(2.0) * radius**2, rel=1e-9)  # attained
    assert diff > 1.9 * math.sqrt(2.0) * (B / 2.0) ** 2  # the control: twice the binary's
    binary, radius2 = _worst_pair_released_difference(
        np.array([[0.0], [0.0]]), np.r_[1.0, 1.0], np.r_[-1.0, 1.0]
    )  # fmt: skip
    assert radius2 == pytest.approx(B / 2.0)
    assert binary == pytest.approx(math.sqrt(2.0) * radius2**2, rel=1e-9)  # tight there too


@pytest.mark.slow
def test_multiclass_coverage_on_iris(monkeypatch) -> None:
    """Iris (sepal width mapped to [-1, 1], three species) is the population; each release
    resamples 10^4 records and fits K = 3 with ``inference="sandwich"`` at epsilon 4. The
    intervals cover the population's multinomial maximum likelihood contrasts at 0.95
    within 3.5 Monte Carlo standard errors (both sides). The control, intervals from the
    sampling term alone (H~^-1, the classical standard errors at the released Hessian) on
    the same releases, undercovers: the privacy noise term is needed."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = X[:, [1]]
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    coef = np.column_stack([fit.intercept_, fit.coef_])
    truth = (coef[1:] - coef[0]).ravel()  # per class (intercept, x): the order of results_
    released: list = []

    def spy(*args, **kwargs):
        released.append(args)
        return one_step_cov(*args, **kwargs)

    monkeypatch.setattr(logistic_module, "one_step_cov", spy)
    rng = np.random.default_rng(29)
    reps, given, control = 100, [], []
    z = 1.959963984540054
    with threadpool_limits(1):
        for r in range(reps):
            idx = rng.integers(0, len(y), 10_000)
            est = pv.PrivateLogisticRegression(
                bounds=(-1, 1), classes=[0, 1, 2], epsilon=4.0, inference="sandwich"
            )
            lo, hi = est.set_params(random_state=r).fit(X[idx], y[idx]).results_.conf_int().T.values
            if not np.isnan(lo).any():
                given.append((lo <= truth) & (truth <= hi))
                # the design's order per class is (x, const): swap to (intercept, x)
                theta = one_step_cov(*released[-1])[0].reshape(2, 2)[:, ::-1].ravel()
                plain = np.sqrt(np.diag(np.linalg.inv(released[-1][3])))
                plain = plain.reshape(2, 2)[:, ::-1].ravel()
                control.append(np.abs(theta - truth) <= z * plain)
    assert len(given) >= 0.9 * reps
    tol = 3.5 * math.sqrt(0.95 * 0.05 / len(given))
    cover = np.mean(given, axis=0)
    assert np.all(np.abs(cover - 0.95) <= tol), (cover, tol)
    assert np.min(np.mean(control, axis=0)) < 0.95 - tol  # the control: the test can fail


def test_hc0_splits_the_share_and_releases_the_scores_at_the_one_step_estimate(
    counted_releases, monkeypatch
) -> None:
    """``cov_type="HC0"`` spends the same SANDWICH_SHARE, half on the Hessian and half on
    the score outer products K (released at the one-step estimate, the point ``params``
    report), and the total is the rho of (epsilon, delta); the path is the same as the
    model-based fit's; bad ``cov_type`` values are refused naming the accepted ones."""
    from privest.accounting.zcdp import zcdp_rho_for
    from privest.models import logistic_inference as li

    spent, points = counted_releases, []
    real = li.noisy_score_gram

    def spy(Xc, Y, theta, *args):
        points.append(theta)
        return real(Xc, Y, theta, *args)

    monkeypatch.setattr(logistic_module, "noisy_score_gram", spy)
    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, (20_000, 2))
    y = (rng.random(20_000) < expit(0.5 + X @ np.array([1.0, -1.0]))).astype(int)
    rho = zcdp_rho_for(1.0, 1e-6)
    est = pv.PrivateLogisticRegression(bounds=(-1, 1), random_state=0, cov_type="HC0")
    robust = est.fit(X, y).results_
    assert len(spent) == 23 and sum(spent) == pytest.approx(rho, rel=1e-12)
    assert spent[-2:] == pytest.approx([SANDWICH_SHARE * rho / 2] * 2)
    assert "robust (HC0)" in str(robust.summary()) and robust.bse.notna().all()
    theta = points[0][:, 0]  # design (x / 1, const): params are (const, x)
    assert robust.params.to_numpy() == pytest.approx(np.r_[theta[-1], theta[:-1]])
    coef = est.coef_.copy()
    model = est.set_params(cov_type="nonrobust").fit(X, y).results_
    assert np.array_equal(est.coef_, coef)  # the same released path
    assert np.all(np.abs(robust.bse / model.bse - 1.0) < 0.2)  # well specified: close
    with pytest.raises(ValidationError, match="cov_type: 'HC1'; accepted"):
        est.set_params(cov_type="HC1").fit(X, y)


def _released_score_pair(theta: np.ndarray, x: np.ndarray, x2: np.ndarray, label: int):
    """As :func:`_worst_pair_released_difference` for the score outer products released by
    noisy_score_gram: the two neighbours differ in one record (``x`` or ``x2``, both with
    ``label``)."""
    from privest.models import logistic_inference as li

    seen = []

    def spy(S, radius, rho, n, rng):
        seen.append((S, radius))
        return S, 1.0

    k = theta.shape[1]
    rest = np.random.default_rng(0).uniform(-1, 1, (5, x.size))
    rest[:, -1] = 1.0
    labels = np.r_[np.arange(5) % max(k, 2), label]
    Y = (labels == 1)[:, None] * 1.0 if k == 1 else np.eye(k)[labels]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(li, "noisy_gram", spy)
        for rec in (x, x2):
            li.noisy_score_gram(np.vstack([rest, rec]), Y, theta, math.sqrt(x.size), 1.0, None)
    (S1, radius), (S2, _) = seen
    iu = np.triu_indices(S1.shape[0], 1)
    diff = S1 - S2
    return math.hypot(np.linalg.norm(np.diag(diff)), math.sqrt(2) * np.linalg.norm(diff[iu])), (
        radius
    )


@pytest.mark.parametrize("k", [1, 3, 4])
def test_score_sensitivity_is_exact_and_a_smaller_constant_is_not_enough(k: int) -> None:
    """K's replacement sensitivity sqrt(2) radius^2, radius B (two classes) or B sqrt(2)
    (K >= 3): never exceeded by random neighbouring records with random labels at random
    points, and reached (to 1e-9) by two orthogonal records of norm B with residual norm
    1 (two classes: label 1 where p ~ 0) or sqrt(2) (label 1 where class 2 has all the
    mass), so the bound is the exact supremum. The control: the constant of the next
    smaller radius (the Hessian's for two classes, B / 2; the binary score's, B, for
    K >= 3) is exceeded by that pair."""
    B = math.sqrt(2.0)  # rows (x, 1) with |x| <= 1
    rng = np.random.default_rng(10 + k)
    want = B if k == 1 else B * math.sqrt(2.0)
    for _ in range(200):
        theta = rng.normal(0, 3, (2, k))
        x, x2 = np.r_[rng.uniform(-1, 1), 1.0], np.r_[rng.uniform(-1, 1), 1.0]
        diff, radius = _released_score_pair(theta, x, x2, int(rng.integers(0, max(k, 2))))
        assert radius == pytest.approx(want)
        assert diff <= math.sqrt(2.0) * radius**2 * (1 + 1e-12)
    theta = np.zeros((2, k))
    theta[1, -1] = -60.0 if k == 1 else 60.0  # p ~ 0 (two classes); class K-1 ~ 1 (K >= 3)
    diff, radius = _released_score_pair(theta, np.r_[1.0, 1.0], np.r_[-1.0, 1.0], 1)
    assert diff == pytest.approx(math.sqrt(2.0) * radius**2, rel=1e-9)  # attained
    smaller = B / 2.0 if k == 1 else B
    assert diff > 1.9 * math.sqrt(2.0) * smaller**2  # the control


def _misspecified_population(N: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """x near 0 (80%: P(y = 1) = 0.95) or near +-1 (20%: 0.05), on [-1, 1]: the logistic
    fit's slope is near 0 and its model variance understates the score's ~3-fold at the
    ends (the non-private HC0 standard error of the slope is 1.7 times the classical)."""
    rng = np.random.default_rng(31)
    end = rng.random(N) < 0.2
    x = np.where(
        end, rng.choice([-1.0, 1.0], N) * rng.uniform(0.8, 1.0, N), rng.uniform(-0.2, 0.2, N)
    )
    return x[:, None], (rng.random(N) < np.where(end, 0.05, 0.95)).astype(int)


@pytest.mark.slow
def test_hc0_coverage_where_the_logistic_variance_fails() -> None:
    """On :func:`_misspecified_population` (each release resamples 10^4 records, epsilon
    4), the HC0 intervals cover the population's maximum likelihood coefficients at 0.95
    within 3.5 Monte Carlo standard errors (both sides). The control, the model-based
    (``"nonrobust"``) intervals on the same resamples and paths, undercovers."""
    X, y = _misspecified_population()
    fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    truth = np.r_[fit.intercept_, fit.coef_[0]]
    rng = np.random.default_rng(37)
    reps, given, control = 100, [], []
    with threadpool_limits(1):
        for r in range(reps):
            idx = rng.integers(0, len(y), 10_000)
            est = pv.PrivateLogisticRegression(bounds=(-1, 1), epsilon=4.0, random_state=r)
            for kind, out in (("HC0", given), ("nonrobust", control)):
                ci = est.set_params(cov_type=kind).fit(X[idx], y[idx]).results_.conf_int()
                lo, hi = ci.to_numpy().T
                if not np.isnan(lo).any():
                    out.append((lo <= truth) & (truth <= hi))
    assert len(given) >= 0.9 * reps and len(control) >= 0.9 * reps
    tol = 3.5 * math.sqrt(0.95 * 0.05 / len(given))
    cover = np.mean(given, axis=0)
    assert np.all(np.abs(cover - 0.95) <= tol), (cover, tol)
    assert np.min(np.mean(control, axis=0)) < 0.95 - tol  # the control: the test can fail

"""The standard errors of PrivateLinearRegression (privest.models.linear_inference;
docs/central-models.md, "Standard errors, intervals and Wald tests"): each covariance term
against a Monte Carlo of its law, the residual-weighted Gram's sensitivity and share, the
unstable flag, and coverage on real data (slow).

Tolerances are Monte Carlo: a variance estimated from k normal draws has relative sd
sqrt(2 / k); a coverage over r releases has sd sqrt(0.95 x 0.05 / r); 3.5 sds either side.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import load_diabetes
from threadpoolctl import threadpool_limits

import privest as pv
from privest.accounting.zcdp import zcdp_rho_for
from privest.models import inference, linear, linear_inference
from privest.models.central import public_design
from privest.models.linear_inference import (
    INFERENCE_SHARE,
    YY_SHARE,
    ridge_free_solve,
    robust_gram,
    simulated_cov,
)

Z = 1.959963984540054


def _released(S: np.ndarray, theta: np.ndarray, M: np.ndarray, sd_xx: float, sd_xy: float):
    """Released statistics with an exact M (sd_m = 0) and y'y for a unit residual variance."""
    n = 100
    yy = n + theta @ S @ theta
    rel = {"S": S, "b": S @ theta, "M": M, "floor": 1e-9, "sd_xx": sd_xx, "sd_xy": sd_xy}
    return {**rel, "n": n, "yy": yy, "sd_m": 0.0}


def test_robust_gram_shrinks_towards_the_classical_term_by_the_noise_of_m() -> None:
    """sd_m = 0 keeps the released M; a noise of M far above its heteroscedastic part
    returns sigma^2 A (sigma^2 = 1 from y'y here); in between, a convex combination."""
    S = np.array([[200.0, 20.0], [20.0, 100.0]])
    theta = np.array([0.5, -1.0])
    M = np.diag([400.0, 50.0])
    rel = _released(S, theta, M, 0.0, 0.0)
    assert np.allclose(robust_gram(theta, rel), M)
    assert np.allclose(robust_gram(theta, {**rel, "sd_m": 1e6}), S)
    mid = robust_gram(theta, {**rel, "sd_m": 50.0})
    w = (mid - S)[0, 0] / (M - S)[0, 0]
    assert 0 < w < 1 and np.allclose(mid, S + w * (M - S))


def test_simulation_is_the_first_order_sandwich_where_the_gram_is_well_determined() -> None:
    """Well-conditioned A: the simulated covariance (sampling u* ~ N(0, M) and the noises
    of X'X and X'y inside the solve) equals A^-1 (M + s_xy^2 I + s^2/2 (||t||^2 I + t t'))
    A^-1, the first-order law of the noise (module docstring)."""
    rng = np.random.default_rng(0)
    d, draws = 3, 20_000
    S = 1000.0 * (np.eye(d) + 0.3 * np.ones((d, d)))
    theta = np.array([1.0, -2.0, 0.5])
    M = 50.0 * np.diag([1.0, 2.0, 3.0])
    rel = _released(S, theta, M, sd_xx=4.0, sd_xy=6.0)
    got = simulated_cov(theta, rel, rng, draws=draws)
    A_inv = np.linalg.inv(S)
    tt = theta @ theta * np.eye(d) + np.outer(theta, theta)
    want = A_inv @ (M + 36.0 * np.eye(d) + 8.0 * tt) @ A_inv
    # the 95%-range scale of k normal draws has relative sd about 1.1 / sqrt(k)
    assert np.diag(got) == pytest.approx(np.diag(want), rel=3.5 * 2 * 1.1 / math.sqrt(draws))
    corr = got / np.sqrt(np.outer(np.diag(got), np.diag(got)))
    corr_want = want / np.sqrt(np.outer(np.diag(want), np.diag(want)))
    assert np.allclose(corr, corr_want, atol=3.5 / math.sqrt(draws))
    # negative control: without the sampling term the covariance is smaller
    noise_only = simulated_cov(theta, rel, rng, sampling=False, draws=draws)
    assert np.all(np.diag(noise_only) < 0.9 * np.diag(want))


def test_hc0_term_is_the_sampling_spread_of_least_squares_under_heteroscedasticity() -> None:
    """No privacy noise: the simulated covariance is A^-1 M A^-1 with M = sum r_i^2 x_i x_i'
    (HC0). Over fresh samples of a heteroscedastic model its mean matches the Monte Carlo
    variance of the least-squares fit, which the homoscedastic sigma^2 A^-1 misses."""
    rng = np.random.default_rng(1)
    n, reps, truth = 400, 600, np.array([0.5, 1.0])
    fits, hc, homo = [], [], []
    for r in range(reps):
        x = rng.uniform(-1, 1, n)
        X = np.column_stack([np.ones(n), x])
        y = X @ truth + np.abs(x) * 2.0 * rng.standard_normal(n)  # variance grows with |x|
        S = X.T @ X
        t = np.linalg.solve(S, X.T @ y)
        res = y - X @ t
        M = (X * res[:, None] ** 2).T @ X
        rel = _released(S, t, M, sd_xx=0.0, sd_xy=0.0)
        fits.append(t)
        hc.append(np.diag(simulated_cov(t, rel, np.random.default_rng(r), draws=2000)))
        homo.append(np.diag(res @ res / n * np.linalg.inv(S)))
    mc = np.var(fits, axis=0)
    tol = 3.5 * math.sqrt(2.0 / reps)  # relative sd of a variance from `reps` draws
    assert np.mean(hc, axis=0) == pytest.approx(mc, rel=tol)
    # negative control: the classical term misses the slope's variance by more than tol
    assert np.mean(homo, axis=0)[1] < mc[1] * (1 - tol)


def test_simulated_noise_covers_where_the_first_order_term_overstates() -> None:
    """A near-singular X'X (its smallest eigenvalue a few noise sds): over releases of the
    noise law around the true statistics, the noise-only interval of the simulation covers
    the truth within the Monte Carlo tolerance on both sides."""
    rng = np.random.default_rng(2)
    d, reps, sd = 3, 400, 1.0
    vals = np.array([8.0, 40.0, 200.0])
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    S = (Q * vals) @ Q.T
    theta0 = np.array([1.0, -1.0, 2.0])
    hits = []
    for _ in range(reps):
        E = linear_inference._sym_noise(sd, d, 1, rng)[0]
        rel = {
            "S": S + E,
            "b": S @ theta0 + sd * rng.standard_normal(d),
            "floor": sd / math.sqrt(2.0),
            "sd_xx": sd,
            "sd_xy": sd,
        }
        t = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
        se = np.sqrt(np.diag(simulated_cov(t, rel, rng, sampling=False, draws=1000)))
        hits.append(np.abs(t - theta0) <= Z * se)
    cover = np.mean(hits, axis=0)
    assert np.all(np.abs(cover - 0.95) <= 3.5 * math.sqrt(0.95 * 0.05 / reps)), cover


def _record(monkeypatch) -> list[tuple[float, float, int]]:
    """(rho, sensitivity, dims) of every lattice Gaussian the linear fit builds."""
    calls: list[tuple[float, float, int]] = []
    real = linear.lattice_gaussian_zcdp

    def recorded(rho: float, sensitivity: float, dims: int = 1):
        calls.append((rho, sensitivity, dims))
        return real(rho, sensitivity, dims)

    monkeypatch.setattr(linear, "lattice_gaussian_zcdp", recorded)
    monkeypatch.setattr(linear_inference, "lattice_gaussian_zcdp", recorded)
    monkeypatch.setattr(inference, "lattice_gaussian_zcdp", recorded)  # the Gram release
    return calls


def test_residual_gram_share_and_sensitivity(monkeypatch) -> None:
    """y'y takes YY_SHARE and M the rest of INFERENCE_SHARE of rho; M's sensitivity is
    sqrt(2) R^2 B^2 (rows r_i x_i of norm <= R B), R the stated residual clip."""
    calls = _record(monkeypatch)
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (3000, 2))
    y = np.clip(X @ np.array([0.5, -0.3]) + 0.3 * rng.standard_normal(3000), -2, 2)
    m = pv.PrivateLinearRegression(
        epsilon=1.0, delta=1e-6, bounds=(-1, 1), y_bounds=(-2, 2), method="adassp"
    ).fit(X, y)
    rho = zcdp_rho_for(1.0, 1e-6)
    (r_yy, s_yy, _), (r_m, s_m, dims) = calls[-2:]
    assert r_yy == pytest.approx(YY_SHARE * INFERENCE_SHARE * rho)
    assert r_m == pytest.approx((1 - YY_SHARE) * INFERENCE_SHARE * rho)
    assert sum(c[0] for c in calls) == pytest.approx(rho)
    B = math.sqrt(2.0 + 1.0)  # two half-widths 1 and the constant column 1
    R = m.released_stats_["residual_clip"]
    assert s_m == pytest.approx(math.sqrt(2.0) * R**2 * B**2, rel=1e-6) and dims == 6
    assert s_yy == pytest.approx(4.0, rel=1e-6)
    assert 0 < R <= 2.0 + B * np.linalg.norm(m.results_.params)  # never above the bound


def test_residual_gram_sensitivity_holds_for_worst_case_neighbours() -> None:
    """||vec M(D) - vec M(D')|| <= sqrt(2) R^2 B^2 for neighbours that swap in extreme
    rows, with the released vector (diagonal, sqrt(2) x upper triangle); negative control:
    unclipped residuals exceed it."""
    rng = np.random.default_rng(4)
    d, R = 3, 0.5
    iu = np.triu_indices(d, 1)

    def vec(X: np.ndarray, r: np.ndarray) -> np.ndarray:
        W = X * r[:, None]
        M = W.T @ W
        return np.concatenate([np.diag(M), math.sqrt(2.0) * M[iu]])

    worst = worst_unclipped = 0.0
    for _ in range(2000):
        X = rng.standard_normal((5, d))
        X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]  # ||x|| <= B = 1
        r = rng.standard_normal(5) * 2.0
        X2, r2 = X.copy(), r.copy()
        X2[0] = rng.standard_normal(d)
        X2[0] /= np.linalg.norm(X2[0])
        r2[0] = rng.choice([-1, 1]) * 3.0
        clip = lambda v: np.clip(v, -R, R)  # noqa: E731
        worst = max(worst, np.linalg.norm(vec(X, clip(r)) - vec(X2, clip(r2))))
        worst_unclipped = max(worst_unclipped, np.linalg.norm(vec(X, r) - vec(X2, r2)))
    assert worst <= math.sqrt(2.0) * R**2 * (1 + 1e-12)
    assert worst_unclipped > math.sqrt(2.0) * R**2


def test_an_unstable_gram_is_said_loudly() -> None:
    """All ten diabetes features at n = 1000, epsilon 1: the noise of X'X swamps its
    smallest eigenvalue; results_ carries the note and an UnstableIntervalWarning says so."""
    X, y = load_diabetes(return_X_y=True)
    idx = np.random.default_rng(5).integers(0, len(y), 1000)
    bounds = np.column_stack([X.min(0), X.max(0)])
    with pytest.warns(pv.UnstableIntervalWarning, match="unstable"):
        m = pv.PrivateLinearRegression(
            epsilon=1.0, bounds=bounds, y_bounds=(25, 346), method="adassp", random_state=0
        ).fit(X[idx], y[idx])
    assert any("unstable" in note for note in m.results_.notes)
    assert "unstable" in str(m.results_.summary())
    # there each variance is the larger of the simulated and the first-order one
    rel = m.released_stats_
    theta, cov, _ = linear_inference.linear_inference(rel, np.random.default_rng(9))
    sim = simulated_cov(theta, rel, np.random.default_rng(9))
    vals, vecs = np.linalg.eigh(rel["S"])
    A_inv = (vecs / np.maximum(vals, rel["floor"])) @ vecs.T
    d = theta.size
    tt = theta @ theta * np.eye(d) + np.outer(theta, theta)
    mid = robust_gram(theta, rel) + rel["sd_xy"] ** 2 * np.eye(d) + rel["sd_xx"] ** 2 / 2 * tt
    first = np.diag(A_inv @ mid @ A_inv)
    assert np.allclose(np.diag(cov), np.maximum(first, np.diag(sim)), rtol=1e-9)
    # a well-determined fit carries no such note
    big = np.random.default_rng(6).integers(0, len(y), 100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pv.UnstableIntervalWarning)
        ok = pv.PrivateLinearRegression(
            epsilon=4.0, bounds=bounds[[2, 3]], y_bounds=(25, 346), method="adassp", random_state=0
        ).fit(X[big][:, [2, 3]], y[big])
    assert not any("unstable" in note for note in ok.results_.notes)


@pytest.mark.slow
def test_linear_coverage_where_sampling_dominates() -> None:
    """Diabetes bmi, bp, s5 as the population at n = 10^4, epsilon 4: sampling dominates
    and the residual is heteroscedastic (the homoscedastic term undercovered bmi and bp,
    0.932-0.937). Both sides of the goal are checked."""
    X, y = load_diabetes(return_X_y=True)
    X = X[:, [2, 3, 8]]
    bounds = np.column_stack([X.min(0), X.max(0)])
    truth = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    reps, rng, hits = 300, np.random.default_rng(11), []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            idx = rng.integers(0, len(y), 10_000)
            m = pv.PrivateLinearRegression(
                epsilon=4.0, bounds=bounds, y_bounds=(25, 346), method="adassp", random_state=r
            ).fit(X[idx], y[idx])
            ci = m.results_.conf_int().to_numpy()
            hits.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    cover = np.mean(hits, axis=0)
    assert np.all(np.abs(cover - 0.95) <= 3.5 * math.sqrt(0.95 * 0.05 / reps)), cover


def _noise_population() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Diabetes bmi, bp, s5 and a pure-noise z orthogonal to (1, X, y) in the population:
    z's population coefficient is exactly 0 (as in benchmarks/bench_linear_inference.py)."""
    X, y = load_diabetes(return_X_y=True)
    X = X[:, [2, 3, 8]]
    z = np.random.default_rng(7).uniform(-1.0, 1.0, len(y))
    B = np.column_stack([np.ones(len(y)), X, y])
    z = z - B @ np.linalg.lstsq(B, z, rcond=None)[0]
    z *= 0.1 / np.abs(z).max()
    bounds = np.vstack([np.column_stack([X.min(0), X.max(0)]), [-0.1, 0.1]])
    return np.column_stack([X, z]), y, bounds


def _noise_fits(reps: int, n: int, epsilon: float):
    """``results_`` of ``reps`` AdaSSP fits on bootstrap samples of n records of
    :func:`_noise_population` (sample seed 300, fit seeds 0..reps-1), on one BLAS thread."""
    X, y, bounds = _noise_population()
    rng = np.random.default_rng(300)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.UnstableIntervalWarning)
        for r in range(reps):
            idx = rng.integers(0, len(y), n)
            model = pv.PrivateLinearRegression(
                epsilon=epsilon, bounds=bounds, y_bounds=(25, 346), method="adassp", random_state=r
            )
            yield model.fit(X[idx], y[idx]).results_


def test_calibrated_pvalues_follow_the_public_rule_and_are_labelled() -> None:
    """Below CALIBRATE_RATIO x the noise norm the slopes' p-values come from the simulated
    null and summary() says so (the intercept keeps the normal approximation); a
    well-determined fit keeps the normal approximation, and there the simulated null agrees
    with it (a p-value from 2,000 draws has sd <= 0.011)."""
    X, y, bounds = _noise_population()
    idx = np.random.default_rng(1).integers(0, len(y), 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.UnstableIntervalWarning)
        m = pv.PrivateLinearRegression(
            epsilon=1.0, bounds=bounds, y_bounds=(25, 346), method="adassp", random_state=0
        ).fit(X[idx], y[idx])
    res = m.results_
    assert linear_inference.calibration_needed(m.released_stats_)
    assert np.isnan(res.null_pvalues["intercept"]) and not res.null_pvalues[1:].isna().any()
    assert np.allclose(res.pvalues[1:], res.null_pvalues[1:])
    assert "p-values and intervals: simulated null" in str(res.summary())
    assert "normal approximation for intercept" in str(res.summary())
    frame = res.summary().frame  # z marked first-order; p_ci names how each row was obtained
    assert "z" not in frame and "z_first_order" in frame
    assert list(frame["p_ci"]) == ["normal"] + ["simulated"] * 4
    assert '<td class="num">simulated</td>' in res._repr_html_()
    big = np.random.default_rng(2).integers(0, len(y), 100_000)
    ok = pv.PrivateLinearRegression(
        epsilon=4.0, bounds=bounds[[0, 1]], y_bounds=(25, 346), method="adassp", random_state=0
    ).fit(X[big][:, [0, 1]], y[big])
    rel = ok.released_stats_
    assert not linear_inference.calibration_needed(rel)
    assert "p-values: normal approximation" in str(ok.results_.summary())
    assert "z" in ok.results_.summary().frame and "p_ci" not in ok.results_.summary().frame
    theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
    d = theta.size
    mid = robust_gram(theta, rel) + rel["sd_xy"] ** 2 * np.eye(d)
    inv = linear_inference._floored_inverse(rel["S"][None], rel["floor"])
    z = linear_inference._wald_z(inv, rel["b"][None], mid, rel["sd_xx"], 0)[0]
    # move bmi's estimate to about 1.5 standard errors from 0, where p is in the body
    shift = np.zeros(d)
    shift[0] = theta[0] * (1.0 - 1.5 / z)
    shifted = {**rel, "b": rel["b"] - rel["S"] @ shift}
    theta_s = theta - shift
    sim = linear_inference.calibrated_pvalues(theta_s, shifted, np.random.default_rng(3))
    mid = robust_gram(theta_s, shifted) + rel["sd_xy"] ** 2 * np.eye(d)
    z = linear_inference._wald_z(inv, shifted["b"][None], mid, rel["sd_xx"], 0)[0]
    normal = 2 * norm.sf(np.abs([z]))
    assert 0.01 < normal[0] < 0.99  # a p-value in the body, where the two can be compared
    assert abs(sim[0] - normal[0]) <= 4 * math.sqrt(0.25 / 2000), (sim[0], normal[0])


@pytest.mark.slow
def test_calibrated_wald_test_holds_its_level_where_the_normal_one_does_not() -> None:
    """Diabetes with a pure-noise z at n = 1000, epsilon 1 (every release unstable): the
    calibrated test of z's zero coefficient rejects at 0.05 within the Monte Carlo band;
    the normal approximation of the same z (the control) never rejects, below the band."""
    reps, calibrated, normal = 200, 0, 0
    for res in _noise_fits(reps, n=1000, epsilon=1.0):
        calibrated += bool(res.pvalues.iloc[-1] < 0.05)
        normal += bool(2 * norm.sf(abs(res.tvalues.iloc[-1])) < 0.05)
    band = 3.0 * math.sqrt(0.05 * 0.95 / reps)
    assert abs(calibrated / reps - 0.05) <= band, calibrated / reps
    assert normal / reps < 0.05 - band, normal / reps


def test_calibrated_intervals_agree_with_the_calibrated_pvalues() -> None:
    """Where the rule calibrates, each slope's interval inverts its simulated test: over 12
    releases (n 300 and 1000, epsilon 0.5, 1 and 4) and several levels, 0 lies in the
    interval iff p >= alpha; at alpha = p exactly 0 is in it (the closed end), just above
    p it is not; each end is accepted (p(end) >= alpha) with a rejected value within the
    bisection's tolerance beyond it. The intercept keeps the Wald interval."""
    X, y, bounds = _noise_population()
    rng = np.random.default_rng(11)
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.UnstableIntervalWarning)
        for r, (n, eps) in enumerate([(300, 0.5), (300, 1.0), (300, 4.0), (1000, 1.0)] * 3):
            idx = rng.integers(0, len(y), n)
            m = pv.PrivateLinearRegression(
                epsilon=eps, bounds=bounds, y_bounds=(25, 346), method="adassp", random_state=r
            ).fit(X[idx], y[idx])
            res = m.results_
            assert linear_inference.calibration_needed(m.released_stats_)
            p = res.pvalues.to_numpy()[1:]
            for alpha in (0.01, 0.05, 0.2, 0.5):
                ci = res.conf_int(alpha).to_numpy()
                zero_in = (ci[1:, 0] <= 0) & (0 <= ci[1:, 1])
                np.testing.assert_array_equal(zero_in, p >= alpha)
                wald = pv.learn.results.FitResults.conf_int(res, alpha).to_numpy()
                np.testing.assert_allclose(ci[0], wald[0])
                checked += zero_in.size
    assert checked == 12 * 4 * 4
    pivot = res.null_intervals
    for j, pj in enumerate(p):
        for alpha, inside in ((pj, True), (np.nextafter(pj, 1.0), False)):
            lo, hi = pivot.conf_int(alpha)[j]
            assert bool(lo <= 0 <= hi) is inside
    ends = pivot.conf_int(0.05)
    step = linear_inference.BISECT_TOL * pivot.se
    for k, side in ((0, -1.0), (1, 1.0)):
        c = ends[:, k]
        assert np.all(pivot.pvalues(c[:, None])[:, 0] >= 0.05)
        beyond = c[:, None] + side * step[:, None] * np.linspace(0.05, 1.0, 20)
        assert np.all(np.min(pivot.pvalues(beyond), axis=1) < 0.05)


@pytest.mark.slow
def test_calibrated_intervals_cover_where_the_shipped_ones_overcover() -> None:
    """Diabetes bmi, bp, s5 and a pure-noise z at n = 300, epsilon 0.5 (every release
    calibrated): the slopes' calibrated 95% intervals cover the population OLS coefficients
    at 0.95 within the Monte Carlo band, pooled over the slopes (4 x 100 intervals; the
    band's sd is the larger of the independent one and the one estimated from the releases'
    mean hits, which the slopes of a release share). The control: the Wald intervals
    coef +- 1.96 bse (the conservative standard errors) on the same releases over-cover,
    above the band's top."""
    X, y, _ = _noise_population()
    truth = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0][1:]
    reps, hits, wald = 100, [], []
    for res in _noise_fits(reps, n=300, epsilon=0.5):
        assert not res.null_pvalues[1:].isna().any()
        ci = res.conf_int().to_numpy()[1:]
        hits.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        params, se = res.params.to_numpy()[1:], res.bse.to_numpy()[1:]
        wald.append(np.abs(params - truth) <= Z * se)
    per_release = np.mean(hits, axis=1)
    independent = math.sqrt(0.95 * 0.05 / per_release.size / 4)
    sd = max(independent, per_release.std(ddof=1) / math.sqrt(reps))
    cover = float(per_release.mean())
    assert abs(cover - 0.95) <= 3.5 * sd, (cover, sd)
    assert float(np.mean(wald)) > 0.95 + 3.5 * independent, float(np.mean(wald))


def _floored_row(A: np.ndarray, floor: float, j: int) -> np.ndarray:
    """Row j of A^-1 with A's eigenvalues floored (the fit's solve), one matrix at a time."""
    vals, vecs = np.linalg.eigh(A)
    return (vecs[j] / np.maximum(vals, floor)) @ vecs.T


@pytest.mark.parametrize("other_gram", [False, True])
def test_calibrated_pivot_is_the_restricted_null_world_at_every_value(other_gram: bool) -> None:
    """The pivot's closed form in c (the simulated solve affine in the hypothesised value)
    equals the direct simulation: for theta_j = c, the restricted solve (theta_j = c, the
    rest A_kk^-1 (b_k - A_kj c)) as the world's coefficients, the same draws solved and
    studentised one by one; at values inside, near the end and far outside the interval.
    With ``world_gram`` (the benchmark's diagnostics) the world's X'X is that matrix."""
    X, y, bounds = _noise_population()
    idx = np.random.default_rng(4).integers(0, len(y), 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pv.UnstableIntervalWarning)
        m = pv.PrivateLinearRegression(
            epsilon=4.0, bounds=bounds, y_bounds=(25, 346), method="adassp", random_state=0
        ).fit(X[idx], y[idx])
    rel = m.released_stats_
    A, b, floor = rel["S"], rel["b"], rel["floor"]
    theta = ridge_free_solve(A, b, floor)
    d = theta.size
    base = A + np.diag(np.linspace(0.5, 1.5, d)) if other_gram else A
    pivot = linear_inference.calibrated_pivot(
        theta, rel, np.random.default_rng(9), 500, base if other_gram else None
    )
    rng = np.random.default_rng(9)  # the same draws, one by one
    gram = robust_gram(theta, rel)
    mid = gram + rel["sd_xy"] ** 2 * np.eye(d)
    A_sim, noise = linear_inference._simulated_releases(np.zeros(d), gram, rel, rng, 500)
    A_sim = A_sim - A + base
    for j in range(d):
        keep = np.arange(d) != j
        for c in (theta[j] / 2, theta[j] + 2 * pivot.se[j], -10 * pivot.se[j]):
            world = np.full(d, c)
            world[keep] = ridge_free_solve(A[np.ix_(keep, keep)], b[keep] - A[keep, j] * c, floor)
            est = ridge_free_solve(A_sim, base @ world + noise, floor)
            rows = np.array([_floored_row(Ak, floor, j) for Ak in A_sim])
            var = linear_inference._first_order_var(rows, est, mid, rel["sd_xx"])
            z_sim = (est[:, j] - c) / np.sqrt(var)
            z_obs = (theta[j] - c) / pivot.se[j]
            want = (1 + np.sum(np.abs(z_sim) >= abs(z_obs))) / 501
            at = np.zeros((d, 1))
            at[j] = c
            assert pivot.pvalues(at)[j, 0] == pytest.approx(want, abs=2 / 501), (j, c)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_noise_term_is_the_noise_spread_on_a_fixed_sample_at_n_1e4(epsilon: float) -> None:
    """The privacy-noise part of the linear sandwich, A^-1 (s_xy^2 I + s^2/2 (||theta||^2 I +
    theta theta')) A^-1 at the released A and solve, against the spread of the solve around
    the sample's own OLS fit over 3,000 releases of one resample (n = 10^4 of the noise
    population; docs/central-models.md, "n = 10^4: which term is short"): the mean squared
    noise part over the mean reported part is 1 within 3.5 Monte Carlo sds, sqrt(2 / k), for
    every coefficient. Control: the same term without the noise of X'X (s_xy^2 only) is
    short, so the test can fail."""
    X, y, bounds = _noise_population()
    design = public_design(bounds, np.array([25.0, 346.0]), True)
    n, k = 10_000, 3000
    idx = np.random.default_rng(11).integers(0, len(y), n)
    Xc = np.column_stack([X[idx] - design["centre"], np.full(n, design["const"])])
    yc = y[idx] - design["y_centre"]
    ols = np.linalg.solve(Xc.T @ Xc, Xc.T @ yc)
    sq, full, xy_only = [], [], []
    with threadpool_limits(1):
        for r in range(k):
            rel = linear.adassp(
                Xc, yc, design["x_radius"], design["y_radius"], epsilon, 1e-6,
                np.random.default_rng(r), INFERENCE_SHARE,
            )["released"]  # fmt: skip
            theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
            rows = linear_inference._floored_inverse(rel["S"][None], rel["floor"])[0]
            thetas = np.tile(theta, (theta.size, 1))
            mid = rel["sd_xy"] ** 2 * np.eye(theta.size)
            full.append(linear_inference._first_order_var(rows, thetas, mid, rel["sd_xx"]))
            xy_only.append(linear_inference._first_order_var(rows, thetas, mid, 0.0))
            sq.append((theta - ols) ** 2)
    tol = 3.5 * math.sqrt(2.0 / k)
    ratio = np.mean(sq, axis=0) / np.mean(full, axis=0)
    assert np.all(np.abs(ratio - 1.0) <= tol), ratio
    control = np.mean(sq, axis=0) / np.mean(xy_only, axis=0)
    assert np.any(control > 1.0 + tol), control

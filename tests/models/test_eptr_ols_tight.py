"""ePTR-OLS with the tightened constants and the private c0 (privest.models.eptr_ols).

Brute force over single replacements (random and adversarial: x' on the R_x sphere along the
eigenvector of lambda_min, y' at +-R_y) on small data sets, as in test_eptr_salbo.py:

* Lipschitz constant R_x^2 of lambda_min (and so (L) for the tight gamma);
* (S) with alpha = (R_x^2 R_theta + 2 R_x R_y) / (c0 n), with a y_radius unrelated to R_x R_theta;
* the exact divergence of the mixed output with the analytic Gaussian step is <= delta;
* negative controls: half the Lipschitz constant, half of alpha, and half the analytic sigma
  are each caught.
"""

import math
import warnings

import numpy as np
import pytest

from privest.accounting.gaussian import gaussian_sigma
from privest.errors import NothingReleasedWarning
from privest.mechanisms.eptr import eptr_noise_scale, eptr_pair_divergence
from privest.models.eptr_ols import (
    EPTRLinearRegression,
    auto_c0,
    lambda_min_sensitivity,
    ols_local_sensitivity,
    ols_statistics,
)
from privest.projection import project_rows


def _neighbours(Xp, yc, rx, rt, ry, c0, rng, L):
    """lambda_min, gamma (scale L) and theta_hat on every enumerated neighbour."""
    n, p = Xp.shape
    S, b = Xp.T @ Xp, Xp.T @ yc
    v_min = np.linalg.eigh(S)[1][:, 0]
    dirs = rng.standard_normal((30, p))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    dirs = np.vstack([dirs, v_min, -v_min, np.eye(p), -np.eye(p)])
    cand_x = np.vstack([rx * dirs, 0.5 * rx * dirs, np.zeros((1, p))])
    cand_y = np.array([-ry, 0.0, ry])
    xs = np.repeat(cand_x, cand_y.size, axis=0)
    ys = np.tile(cand_y, cand_x.shape[0])
    lams, thetas = [], []
    for i in range(n):
        Sb = S - np.outer(Xp[i], Xp[i]) + np.einsum("ci,cj->cij", xs, xs)
        bb = b - yc[i] * Xp[i] + ys[:, None] * xs
        lam = np.linalg.eigvalsh(Sb)[:, 0]
        th = np.linalg.lstsq(Sb[0], bb[0], rcond=None)[0][None, :].repeat(len(lam), 0)
        ok = lam > 1e-10
        th[ok] = np.linalg.solve(Sb[ok], bb[ok][..., None])[..., 0]
        nrm = np.linalg.norm(th, axis=1)
        big = nrm > rt
        th[big] *= (rt / nrm[big])[:, None]
        lams.append(lam)
        thetas.append(th)
    lam = np.concatenate(lams)
    return lam, np.maximum(lam - c0 * n - L, 0.0) / L, np.vstack(thetas)


def _cases(rng):
    """(X, y, R_x, R_theta, R_y): typical, large unprojected norm, 3-d, R_y != R_x R_theta."""
    X = rng.standard_normal((40, 2))
    Xs = 0.4 * rng.standard_normal((60, 2))
    X3 = rng.standard_normal((40, 3))
    return [
        (X, X @ np.array([0.6, -0.3]) + 0.3 * rng.standard_normal(40), 2.0, 1.0, 2.0),
        (Xs, np.sign(Xs[:, 0]), 1.0, 1.0, 1.0),
        (Xs, 5.0 * Xs @ np.array([3.0, 1.0]), 1.0, 0.5, 3.0),
        (X3, X3 @ np.array([0.2, 0.1, -0.4]) + rng.standard_normal(40), 2.0, 1.0, 0.7),
    ]


def _prepared(X, y, rx, ry):
    scale, _ = project_rows(X, rx)
    return X * scale[:, None], np.clip(y, -ry, ry)


def test_lambda_min_moves_by_at_most_r_x_squared_and_reaches_it():
    rng = np.random.default_rng(11)
    worst = 0.0
    for X, y, rx, rt, ry in _cases(rng):
        Xp, yc = _prepared(X, y, rx, ry)
        lam0 = np.linalg.eigvalsh(Xp.T @ Xp)[0]
        lam, _, _ = _neighbours(Xp, yc, rx, rt, ry, 0.01, rng, rx**2)
        worst = max(worst, np.max(np.abs(lam - lam0)) / rx**2)
    assert worst <= 1 + 1e-9
    assert worst > 0.5  # so a Lipschitz constant of R_x^2 / 2 would be wrong (negative control)
    assert lambda_min_sensitivity(10**4, 5, 2.0) == pytest.approx(4.0, rel=1e-6)


def test_tight_alpha_and_analytic_step_are_private_by_brute_force():
    rng = np.random.default_rng(12)
    ratios = []
    for X, y, rx, rt, ry in _cases(rng):
        Xp, yc = _prepared(X, y, rx, ry)
        n = X.shape[0]
        lam = np.linalg.eigvalsh(Xp.T @ Xp)[0]
        for target in (0.05, 0.5, 1.0):  # gamma just inside the safe set
            c0 = (lam - rx**2 * (1 + target)) / n
            assert c0 > 0
            st = ols_statistics(X, y, rx, rt, c0, ry, "tight")
            assert st["gamma"] == pytest.approx(target)
            alpha = ols_local_sensitivity(n, rx, rt, c0, ry, "tight")
            assert alpha < ols_local_sensitivity(n, rx, rt, c0, ry, "paper") or ry > rx * rt
            _, gammas, thetas = _neighbours(Xp, yc, rx, rt, ry, c0, rng, rx**2)
            assert np.all(np.abs(gammas - st["gamma"]) <= 1 + 1e-12)
            dists = np.linalg.norm(thetas - st["estimate"], axis=1)
            ratios.append(dists.max() / alpha)
            for eps in (1.0, 8.0):
                delta = 1e-6
                s = gaussian_sigma(eps / 2, delta, alpha, "analytic")
                for gp, d in zip(gammas[::7], dists[::7], strict=True):
                    for a, b in ((st["gamma"], gp), (gp, st["gamma"])):
                        h = eptr_pair_divergence(a, b, d, alpha, eps, delta, noise_scale=s)
                        assert h <= delta * (1 + 1e-9)
    assert max(ratios) <= 1 + 1e-9
    assert max(ratios) > 0.3  # the enumeration reaches a sizeable share of alpha


def test_negative_controls_half_alpha_and_half_sigma_are_caught():
    rng = np.random.default_rng(12)
    X, y, rx, rt, ry = _cases(rng)[0]
    Xp, yc = _prepared(X, y, rx, ry)
    n = X.shape[0]
    lam = np.linalg.eigvalsh(Xp.T @ Xp)[0]
    c0 = (lam - 1.05 * rx**2) / n
    st = ols_statistics(X, y, rx, rt, c0, ry, "tight")
    alpha = ols_local_sensitivity(n, rx, rt, c0, ry, "tight")
    _, gammas, thetas = _neighbours(Xp, yc, rx, rt, ry, c0, rng, rx**2)
    dists = np.linalg.norm(thetas - st["estimate"], axis=1)
    assert dists.max() > alpha / 2  # half of alpha would be violated
    eps, delta = 1.0, 1e-6
    far = int(np.argmax(dists))
    s = gaussian_sigma(eps / 2, delta, alpha, "analytic")
    # a pair at distance alpha with both gammas high: the Gaussian step decides
    ok = eptr_pair_divergence(60.0, 60.0, alpha, alpha, eps, delta, noise_scale=s)
    bad = eptr_pair_divergence(60.0, 60.0, alpha, alpha, eps, delta, noise_scale=s / 2)
    assert ok <= delta < bad
    assert dists[far] > 0


def test_analytic_step_is_smaller_than_the_classical_one():
    for eps in (0.5, 2.0, 8.0):
        a = eptr_noise_scale(1.0, eps, 1e-6, 1, "analytic")
        c = eptr_noise_scale(1.0, eps, 1e-6, 1, "classic") if eps <= 2 else math.inf
        assert a < c


def _survey_like(rng, n=4000, p=6, scale=0.3):
    X = rng.uniform(-1, 1, (n, p)) * scale
    X[:, 1] = 0.8 * X[:, 0] + 0.2 * X[:, 1]  # nearly collinear: small lambda_min
    y = X @ rng.uniform(-0.5, 0.5, p) + 0.1 * rng.standard_normal(n)
    return X, y


def test_auto_c0_outputs_the_bottom_up_front_and_warns():
    rng = np.random.default_rng(14)
    X, y = _survey_like(rng)
    m = EPTRLinearRegression(
        epsilon=1.0, delta=1e-6, x_radius=3.0, theta_radius=2.0, clip=True, random_state=1
    )
    with pytest.warns(NothingReleasedWarning, match=r"lambda_min\(X\^T X\)/n") as rec:
        m.fit(X, y)
    assert not m.released_ and m.c0_ is None and np.all(m.coef_ == 0)
    msg = str(rec[0].message)
    assert "PrivateLinearRegression" in msg and "x_radius" in msg
    assert auto_c0(-1.0, 100, 2, 1.0, 1.0, 1.0, 1.0, 1e-6) is None


def test_auto_c0_releases_on_well_conditioned_data_without_a_warning():
    rng = np.random.default_rng(15)
    n, p = 20000, 3
    X = rng.uniform(-1, 1, (n, p))
    theta = np.array([0.5, -0.3, 0.2])
    y = X @ theta + 0.2 * rng.standard_normal(n)
    m = EPTRLinearRegression(
        epsilon=2.0, delta=1e-6, x_radius=math.sqrt(p), theta_radius=1.0, y_radius=2.0,
        clip=True, random_state=3,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", NothingReleasedWarning)
        m.fit(X, y)
    assert m.released_ and 0 < m.c0_ < 1 / 3  # lambda_min / n = 1/3 for uniform features
    assert m.lambda_min_lower_ < n / 3 * 1.05
    assert np.linalg.norm(m.coef_ - theta) < 0.2
    assert m.guarantee_.eps == 2.0


def test_auto_c0_rule_is_monotone_in_the_released_bound():
    args = (20000, 3, 1.7, 1.0, 2.0, 1.8, 1e-6)
    c_small = auto_c0(0.05 * 20000, *args)
    c_large = auto_c0(0.3 * 20000, *args)
    assert c_small is not None and c_large is not None and c_small < c_large < 0.3

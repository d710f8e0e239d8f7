"""Theoretical rates of paper 001 as slope checks (Theorems 3.3 and 4.3; slow).

Log-log least-squares slopes over n in {1000, 2000, 4000, 8000, 16000} with 200 replicates per
point, tolerance +-0.15. The privacy part of the error is checked against its exact
value p sigma^2 with a 4-SE tolerance per point, then its slope.
"""

import math

import numpy as np
import pytest

from privest.mechanisms.eptr import eptr_noise_scale
from privest.models.eptr_bayes import EPTRBayesClassifier, bayes_local_sensitivity
from privest.models.eptr_nw import nw_local_sensitivity, nw_statistics
from privest.models.eptr_ols import EPTRLinearRegression, ols_local_sensitivity
from privest.rng import make_rng

NS = np.array([1000, 2000, 4000, 8000, 16000])
REPS = 200


def _slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


@pytest.mark.slow
def test_ols_privacy_part_and_total_error_rates():
    rng = np.random.default_rng(1)
    gen = make_rng(2)
    p, eps, delta = 5, 8.0, 0.01
    theta = 1 / np.arange(1, p + 1)
    theta /= np.linalg.norm(theta)
    priv, nonpriv = [], []
    for n in NS:
        m = EPTRLinearRegression(
            epsilon=eps,
            delta=delta,
            x_radius=4.0,
            theta_radius=1.0,
            c0=0.4,
            clip=True,
            constants="paper",
            inference="none",  # the rates of Algorithm 4 at the whole (eps, delta)
        )
        d_priv, d_tot, d_np = [], [], []
        for _ in range(REPS):
            X = rng.standard_normal((n, p))
            y = X @ theta + rng.standard_normal(n)
            hat = m.explain(X, y)["estimate"]
            m.set_params(random_state=gen).fit(X, y)
            assert m.released_
            d_priv.append(np.sum((m.coef_ - hat) ** 2))
            d_tot.append(np.sum((m.coef_ - theta) ** 2))
            d_np.append(np.sum((hat - theta) ** 2))
        expected = p * eptr_noise_scale(ols_local_sensitivity(n, 4.0, 1.0, 0.4), eps, delta) ** 2
        se = np.std(d_priv) / math.sqrt(REPS)
        assert abs(np.mean(d_priv) - expected) < 4 * se
        # the noise is independent of theta_hat: total = non-private + p sigma^2
        se_tot = np.std(np.asarray(d_tot) - np.asarray(d_np)) / math.sqrt(REPS)
        assert abs(np.mean(d_tot) - np.mean(d_np) - expected) < 4 * se_tot + 1e-12
        priv.append(np.mean(d_priv))
        nonpriv.append(np.mean(d_np))
    assert _slope(NS, priv) == pytest.approx(-2.0, abs=0.15)
    assert _slope(NS, nonpriv) == pytest.approx(-1.0, abs=0.15)


@pytest.mark.slow
def test_privacy_part_slope_in_eps_and_bayes_in_n():
    gen = make_rng(3)
    rng = np.random.default_rng(4)
    eps_grid = np.array([1.0, 2.0, 4.0, 8.0])
    X = rng.standard_normal((8000, 3))
    y = X @ [0.5, 0.3, -0.2] + rng.standard_normal(8000)
    priv = []
    for eps in eps_grid:
        m = EPTRLinearRegression(
            epsilon=eps,
            delta=0.01,
            x_radius=4.0,
            theta_radius=1.0,
            c0=0.4,
            clip=True,
            constants="paper",
        )
        hat = m.explain(X, y)["estimate"]
        priv.append(
            np.mean(
                [
                    np.sum((m.set_params(random_state=gen).fit(X, y).coef_ - hat) ** 2)
                    for _ in range(REPS)
                ]
            )
        )
    assert _slope(eps_grid, priv) == pytest.approx(-2.0, abs=0.15)
    bayes = []
    for n in NS:
        lab = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
        Xb = rng.standard_normal((n, 4))
        Xb[np.arange(n), lab] += 3.0
        m = EPTRBayesClassifier(
            epsilon=4.0,
            delta=0.01,
            classes=[0, 1, 2],
            x_radius=6.0,
            c0=0.1,
            bottom="fixed",
            clip=True,
        )
        hat = m.explain(Xb, lab)["estimate"]
        d = []
        for _ in range(REPS):
            m.set_params(random_state=gen).fit(Xb, lab)
            assert m.released_
            # before post-processing the noise is N(0, sigma^2 I); use the raw-scale means
            d.append(np.sum((m.means_.ravel() - hat[3:]) ** 2))
        bayes.append(np.mean(d))
    assert _slope(NS, bayes) == pytest.approx(-2.0, abs=0.15)
    # R_x ~ sqrt(p ln n) scaling of the privacy part: alpha^2 ~ p^2 (ln n)^2 for OLS (p sigma^2 ~
    # p^3 (ln n)^2) and ~ p ln n for Bayes (K (p + 1) sigma^2 ~ p^2 ln n), exactly
    for p in (2, 8):
        r = math.sqrt(p * math.log(1e4))
        assert ols_local_sensitivity(10_000, r, 1.0, 0.2) ** 2 * p == pytest.approx(
            p**3 * math.log(1e4) ** 2 * (4 / (0.2 * 1e4)) ** 2
        )
        assert bayes_local_sensitivity(10_000, r, 0.1) ** 2 == pytest.approx(
            4 / 1e8 * (2 * p * math.log(1e4) / 0.01 + 2)
        )


@pytest.mark.slow
def test_nw_rates_in_n():
    """alpha^2 ~ n^-8/5 with h ~ n^-1/5 (exact), non-private MSE slope ~ -0.8 (d = 1)."""
    rng = np.random.default_rng(5)
    h = 0.2 * NS ** (-1 / 5)
    alpha2 = np.array(
        [nw_local_sensitivity(n, 1, hh, 1.0, 0.4) ** 2 for n, hh in zip(NS, h, strict=True)]
    )
    assert _slope(NS, alpha2) == pytest.approx(-1.6, abs=1e-9)
    mse = []
    for n, hh in zip(NS, h, strict=True):
        errs = []
        for _ in range(REPS):
            x = rng.random((n, 1))
            y = np.sin(2 * np.pi * x[:, 0]) + 0.5 * np.cos(4 * np.pi * x[:, 0])
            y = y + 0.2 * rng.standard_normal(n)
            est = nw_statistics(np.array([[0.5]]), x, np.clip(y, -1, 1), hh, 1.0, 0.4)
            errs.append((est["estimate"][0] - 0.5) ** 2)
        mse.append(np.mean(errs))
    assert _slope(NS, mse) == pytest.approx(-0.8, abs=0.15)

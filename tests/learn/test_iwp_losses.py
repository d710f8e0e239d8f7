"""IWP loss and gradient: unbiasedness (Thm 5.2), naive bias (Thm 4.2), gradients, variance.

Monte Carlo over the release noise at a fixed (theta, x, y); every tolerance is 5 Monte
Carlo standard errors computed from the draws.
"""

import copy
import math

import numpy as np
import pytest
from numpy.polynomial import Polynomial
from scipy import special

from privest.errors import ValidationError
from privest.learn.iwp_losses import (
    iwp_gradient,
    iwp_loss,
    iwp_regression_gradient,
    iwp_regression_loss,
    plain_gradient,
    plain_loss,
)
from privest.learn.weierstrass import (
    MarginLoss,
    get_margin_loss,
    inverse_weierstrass_polynomial,
    inverse_weight,
    truncation_bias,
)

N_GROUPS, GROUP = 500, 1000  # 5e5 draws, gradient SE from 500 group means


def _draws(theta, x, y, sigma2, eps_y, seed):
    """(X~, y~) of shape (N_GROUPS, GROUP, p) and (N_GROUPS, GROUP) for one record."""
    rng = np.random.default_rng(seed)
    Xn = x + math.sqrt(sigma2) * rng.standard_normal((N_GROUPS, GROUP, x.size))
    keep = 1.0 if math.isinf(eps_y) else special.expit(eps_y)
    yn = np.where(rng.random((N_GROUPS, GROUP)) < keep, y, -y)
    return Xn, yn


def _check_mean(samples, truth):
    """samples (..., k): |mean - truth| <= 5 SE coordinate-wise."""
    s = samples.reshape(-1, np.size(truth))
    mean, se = s.mean(axis=0), s.std(axis=0) / math.sqrt(s.shape[0])
    assert np.all(np.abs(mean - truth) <= 5 * se + 1e-12), (mean, truth, se)


def _setting(seed, p=3):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=p)
    x = rng.uniform(-1, 1, size=p)
    return theta, x, 1.0 if rng.random() < 0.5 else -1.0


@pytest.mark.parametrize("loss", ["exponential", "squared"])
@pytest.mark.parametrize("sigma2", [0.5, 4.0, 20.0])
@pytest.mark.parametrize("eps_y", [0.5, 1.0, 3.0, math.inf])
def test_closed_form_iwp_loss_and_gradient_are_unbiased(loss, sigma2, eps_y):
    theta, x, y = _setting(int(sigma2 * 10) + (0 if math.isinf(eps_y) else int(eps_y * 7)))
    if loss == "exponential":  # keep sigma^2 ||theta||^2 <= 2 (its IWP variance ~ e^{that})
        theta = theta * math.sqrt(2.0 / sigma2) / np.linalg.norm(theta)
    Xn, yn = _draws(theta, x, y, sigma2, eps_y, seed=1)
    thetas = np.broadcast_to(theta, (N_GROUPS, theta.size))
    lval = iwp_loss(thetas, Xn, yn, sigma2, eps_y, loss)
    _check_mean(lval, plain_loss(theta, x[None], np.array([y]), loss)[0])
    g = iwp_gradient(thetas, Xn, yn, sigma2, eps_y, loss)  # (N_GROUPS, p) group means
    _check_mean(g, plain_gradient(theta, x[None], np.array([y]), loss))


def test_prototype_reference_point_for_the_exponential_gradient():
    """A prototype's reference point: p = 3, sigma^2 = 4, eps_y = 1: unbiased at 5 SE."""
    theta, x, y = np.array([0.3, -0.4, 0.5]), np.array([0.2, -0.9, 0.6]), 1.0
    Xn, yn = _draws(theta, x, y, 4.0, 1.0, seed=2)
    g = iwp_gradient(np.broadcast_to(theta, (N_GROUPS, 3)), Xn, yn, 4.0, 1.0, "exponential")
    _check_mean(g, plain_gradient(theta, x[None], np.array([y]), "exponential"))


@pytest.mark.parametrize("eps_y", [0.5, 2.0])
def test_naive_bias_matches_theorem_4_2(eps_y):
    theta, x, y = np.array([0.3, -0.2, 0.25]), np.array([0.5, 0.1, -0.7]), -1.0
    sigma2 = 4.0
    S = special.expit(eps_y)
    Xn, yn = _draws(theta, x, y, sigma2, eps_y, seed=3)
    thetas = np.broadcast_to(theta, (N_GROUPS, 3))
    m = y * theta @ x
    sq = theta @ theta
    exp_pred = math.exp(sigma2 * sq / 2) * (S * math.exp(-m) + (1 - S) * math.exp(m))
    _check_mean(plain_loss(thetas, Xn, yn, "exponential"), exp_pred)
    quad_pred = 0.5 * (m - 1) ** 2 + 2 * (1 - S) * m + sigma2 * sq / 2
    _check_mean(plain_loss(thetas, Xn, yn, "squared"), quad_pred)
    # Negative control: the same 5-SE check rejects the naive loss as an estimate of the clean one.
    with pytest.raises(AssertionError):
        _check_mean(plain_loss(thetas, Xn, yn, "exponential"), math.exp(-m))


@pytest.mark.parametrize("K", [1, 2, 3])
def test_truncated_logistic_bias_is_within_the_truncation_bound(K):
    theta, x, y = np.array([0.5, -0.3]), np.array([0.4, 0.8]), 1.0
    sigma2, eps_y = 4.0, 1.0
    t = sigma2 * theta @ theta / 2
    Xn, yn = _draws(theta, x, y, sigma2, eps_y, seed=4 + K)
    lval = iwp_loss(np.broadcast_to(theta, (N_GROUPS, 2)), Xn, yn, sigma2, eps_y, "logistic", K)
    s = lval.ravel()
    mean, se = s.mean(), s.std() / math.sqrt(s.size)
    truth = get_margin_loss("logistic")(np.array(y * theta @ x))
    # label part is exact; feature part at most bias_K(t) at each of +-m (weights S~, S~ - 1)
    w = 1 / (1 - math.exp(-eps_y))
    bound = (2 * w - 1) * truncation_bias(t, K, z_grid=np.array([y * theta @ x, -y * theta @ x]))
    assert abs(mean - truth) <= bound + 5 * se


@pytest.mark.parametrize(
    "loss,order",
    [("exponential", 1), ("squared", 1), ("logistic", 1), ("logistic", 2), ("logistic", 3)],
)
def test_iwp_gradient_is_the_gradient_of_the_iwp_loss(loss, order):
    rng = np.random.default_rng(5)
    theta = rng.normal(size=4) * 0.4
    X = rng.normal(size=(16, 4)) * 2
    y = np.where(rng.random(16) < 0.5, 1.0, -1.0)
    sigma2, eps_y = 3.0, 0.8
    g = iwp_gradient(theta, X, y, sigma2, eps_y, loss, order)
    h = 1e-6
    fd = np.array(
        [
            (
                iwp_loss(theta + h * e, X, y, sigma2, eps_y, loss, order).mean()
                - iwp_loss(theta - h * e, X, y, sigma2, eps_y, loss, order).mean()
            )
            / (2 * h)
            for e in np.eye(4)
        ]
    )
    assert np.allclose(g, fd, rtol=1e-5, atol=1e-8)


def test_regression_gradient_is_the_gradient_of_its_loss():
    rng = np.random.default_rng(6)
    theta, X, y = rng.normal(size=3), rng.normal(size=(20, 3)), rng.normal(size=20)
    g = iwp_regression_gradient(theta, X, y, 2.0)
    h = 1e-6
    fd = [
        (
            iwp_regression_loss(theta + h * e, X, y, 2.0, 0.5).mean()
            - iwp_regression_loss(theta - h * e, X, y, 2.0, 0.5).mean()
        )
        / (2 * h)
        for e in np.eye(3)
    ]
    assert np.allclose(g, fd, rtol=1e-5)


def test_no_noise_reduces_to_the_plain_loss_and_gradient():
    rng = np.random.default_rng(7)
    theta, X = rng.normal(size=3), rng.normal(size=(10, 3))
    y = np.where(rng.random(10) < 0.5, 1.0, -1.0)
    for loss in ("exponential", "squared", "logistic"):
        assert np.allclose(
            iwp_loss(theta, X, y, 0.0, math.inf, loss, 2), plain_loss(theta, X, y, loss)
        )
        assert np.allclose(
            iwp_gradient(theta, X, y, 0.0, math.inf, loss, 2), plain_gradient(theta, X, y, loss)
        )


def _var_check(values, var):
    n = values.size
    m4 = np.mean((values - values.mean()) ** 4)
    assert abs(values.var() - var) <= 5 * math.sqrt((m4 - var**2) / n), (values.var(), var)


@pytest.mark.parametrize("sigma2", [2.0, 8.0])
def test_feature_variance_matches_lemma_d2_quadratic_identity(sigma2):
    """p = 1, theta = 1, x = 0, y = 1 (Lemma D.2; A12-A13 in docs/iwp-sgd.md).

    Loss: f(x) = (x - 1)^2 / 2 has Sigma = 1, b = -1, so Var = sigma^2 + sigma^4 / 2.
    Gradient: (w - 1) w - sigma^2 has Var = sigma^2 + 2 sigma^4 (136 at sigma^2 = 8, which
    Thm 5.3's bound with C over X, 9 sigma^2 = 72, misses: A12).
    """
    rng = np.random.default_rng(8)
    n = 1_000_000
    Xn = math.sqrt(sigma2) * rng.standard_normal((n, 1, 1))
    th = np.ones((n, 1))
    lval = iwp_loss(th, Xn, np.ones((n, 1)), sigma2, math.inf, "squared").ravel()
    _var_check(lval, sigma2 + sigma2**2 / 2)
    assert abs(lval.mean() - 0.5) <= 5 * lval.std() / math.sqrt(n)
    g = iwp_gradient(th, Xn, np.ones((n, 1)), sigma2, math.inf, "squared").ravel()
    _var_check(g, sigma2 + 2 * sigma2**2)
    # Negative control: the same check rejects the loss's variance for the gradient.
    with pytest.raises(AssertionError):
        _var_check(g, sigma2 + sigma2**2 / 2)
    # A12: the measured gradient variance exceeds Thm 5.3's 9 sigma^2 iff sigma^2 > 4.
    assert (g.var() > 9 * sigma2) == (sigma2 > 4)


def test_label_only_gradient_variance_matches_lemma_d3():
    theta, x = np.array([0.6, -0.4]), np.array([0.5, 0.5])
    eps_y = 0.7
    Xn, yn = _draws(theta, x, 1.0, 0.0, eps_y, seed=9)
    per = iwp_gradient(
        np.broadcast_to(theta, (N_GROUPS * GROUP, 2)),
        Xn.reshape(-1, 1, 2),
        yn.reshape(-1, 1),
        0.0,
        eps_y,
        "exponential",
    )
    w = 1 / (1 - math.exp(-eps_y))
    gp = plain_gradient(theta, x[None], np.array([1.0]), "exponential")
    gm = plain_gradient(theta, x[None], np.array([-1.0]), "exponential")
    pred = w * (w - 1) * np.sum((gp - gm) ** 2)
    total = np.sum(per.var(axis=0))
    dev = np.sum((per - per.mean(0)) ** 2, axis=1)
    assert abs(total - pred) <= 5 * dev.std() / math.sqrt(dev.size)


def test_regression_correction_is_unbiased_and_naive_is_not():
    theta, x, yv, sigma2, sigma2_y = np.array([0.5, -1.0]), np.array([0.3, 0.7]), 0.4, 3.0, 2.0
    rng = np.random.default_rng(10)
    Xn = x + math.sqrt(sigma2) * rng.standard_normal((N_GROUPS, GROUP, 2))
    yn = yv + math.sqrt(sigma2_y) * rng.standard_normal((N_GROUPS, GROUP))
    th = np.broadcast_to(theta, (N_GROUPS, 2))
    truth = x * (theta @ x - yv)
    _check_mean(iwp_regression_gradient(th, Xn, yn, sigma2), truth)
    _check_mean(
        iwp_regression_gradient(th, Xn, yn, sigma2, corrected=False), truth + sigma2 * theta
    )
    _check_mean(iwp_regression_loss(th, Xn, yn, sigma2, sigma2_y), 0.5 * (theta @ x - yv) ** 2)


def test_public_intercept_column_is_left_out_of_the_correction():
    """A7: an un-noised constant column is left out of every sigma^2 theta term."""
    theta, x, y, sigma2, eps_y = np.array([0.3, -0.2, 0.4]), np.array([0.5, -0.5]), 1.0, 3.0, 1.0
    rng = np.random.default_rng(11)
    Xn = x + math.sqrt(sigma2) * rng.standard_normal((N_GROUPS, GROUP, 2))
    Xn = np.concatenate([Xn, np.ones((N_GROUPS, GROUP, 1))], axis=2)
    yn = np.where(rng.random((N_GROUPS, GROUP)) < special.expit(eps_y), y, -y)
    th = np.broadcast_to(theta, (N_GROUPS, 3))
    mask = np.array([1.0, 1.0, 0.0])
    xc = np.r_[x, 1.0][None]
    for loss in ("exponential", "squared"):
        g = iwp_gradient(th, Xn, yn, sigma2, eps_y, loss, noised=mask)
        _check_mean(g, plain_gradient(theta, xc, np.array([y]), loss))
        lv = iwp_loss(th, Xn, yn, sigma2, eps_y, loss, noised=mask)
        _check_mean(lv, plain_loss(theta, xc, np.array([y]), loss)[0])
    # Negative control: treating the intercept as noised biases the gradient.
    with pytest.raises(AssertionError):
        _check_mean(
            iwp_gradient(th, Xn, yn, sigma2, eps_y, "exponential"),
            plain_gradient(theta, xc, np.array([y]), "exponential"),
        )


# ------------------------------------------------------------- user-defined margin losses
def _user_exponential(name="user-exp"):
    return MarginLoss(name, lambda z, n: (-1.0) ** n * np.exp(-z))


# f(z) = z^4 / 24 + (z - 1)^2 / 2: a smooth polynomial, f^(4) = 1, so W_s^{-1} ends at K = 2.
QUARTIC = Polynomial([0.5, -1.0, 0.5, 0.0, 1.0 / 24.0])


def _user_quartic(name="quartic"):
    return MarginLoss(name, lambda z, n: QUARTIC.deriv(n)(z) if n else QUARTIC(z))


def _batch(seed=12, n=32, p=3):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=p) * 0.4
    X = rng.normal(size=(n, p)) * 1.5
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return theta, X, y


@pytest.mark.parametrize("eps_y", [0.8, math.inf])
def test_user_exponential_loss_matches_the_closed_form(eps_y):
    """A user MarginLoss from e^-z's derivatives: the order-K series, then the closed form."""
    theta, X, y = _batch()
    sigma2 = 3.0
    s = sigma2 * theta @ theta
    user = _user_exponential()
    m = y * (X @ theta)
    w = inverse_weight(eps_y)
    for K in (0, 1, 3):  # the truncated series: e^{-m} sum_{k<=K} (-s/2)^k / k!
        partial = sum((-s / 2) ** k / math.factorial(k) for k in range(K + 1))
        expect = partial * (w * np.exp(-m) + (1 - w) * np.exp(m))
        got = iwp_loss(theta, X, y, sigma2, eps_y, user, K)
        assert np.allclose(got, expect, rtol=1e-12)
    # At K = 25 the series has converged to e^{-s/2}: the closed form, loss and gradient.
    for fn in (iwp_loss, iwp_gradient):
        exact = fn(theta, X, y, sigma2, eps_y, "exponential")
        assert np.allclose(fn(theta, X, y, sigma2, eps_y, user, 25), exact, rtol=1e-12)
        # Negative control: a low order is visibly off.
        assert not np.allclose(fn(theta, X, y, sigma2, eps_y, user, 1), exact, rtol=1e-3)
    assert np.allclose(plain_loss(theta, X, y, user), plain_loss(theta, X, y, "exponential"))
    assert np.allclose(
        plain_gradient(theta, X, y, user), plain_gradient(theta, X, y, "exponential")
    )


def test_user_polynomial_loss_is_the_hermite_inverse_and_its_gradient():
    """Generic path = W_s^{-1} of the polynomial (Hermite form); gradient = FD."""
    theta, X, y = _batch(13)
    sigma2 = 2.0
    s = sigma2 * theta @ theta
    user = _user_quartic()
    m = y * (X @ theta)
    inv = inverse_weierstrass_polynomial(QUARTIC, s)
    for K in (2, 4):  # f^(6) = 0: every order >= 2 is exact
        assert np.allclose(iwp_loss(theta, X, y, sigma2, math.inf, user, K), inv(m))
    assert not np.allclose(iwp_loss(theta, X, y, sigma2, math.inf, user, 1), inv(m))
    g = iwp_gradient(theta, X, y, sigma2, 0.9, user, 2)
    h = 1e-6
    fd = [
        (
            iwp_loss(theta + h * e, X, y, sigma2, 0.9, user, 2).mean()
            - iwp_loss(theta - h * e, X, y, sigma2, 0.9, user, 2).mean()
        )
        / (2 * h)
        for e in np.eye(theta.size)
    ]
    assert np.allclose(g, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("eps_y", [1.0, math.inf])
def test_user_polynomial_loss_is_unbiased_by_monte_carlo(eps_y):
    """Thm 5.2 for a user margin loss: order K = 2 is the full series of the quartic."""
    theta, x, y = np.array([0.4, -0.3, 0.2]), np.array([0.6, -0.2, 0.8]), 1.0
    sigma2 = 4.0
    user = _user_quartic()
    Xn, yn = _draws(theta, x, y, sigma2, eps_y, seed=14)
    th = np.broadcast_to(theta, (N_GROUPS, 3))
    truth_l = plain_loss(theta, x[None], np.array([y]), user)[0]
    truth_g = plain_gradient(theta, x[None], np.array([y]), user)
    _check_mean(iwp_loss(th, Xn, yn, sigma2, eps_y, user, 2), truth_l)
    _check_mean(iwp_gradient(th, Xn, yn, sigma2, eps_y, user, 2), truth_g)
    # Negative control: order 1 drops (s/2)^2 / 2 f^(4) = s^2 / 8 (0.17 here): caught.
    with pytest.raises(AssertionError):
        _check_mean(iwp_loss(th, Xn, yn, sigma2, eps_y, user, 1), truth_l)


def test_dispatch_is_by_type_not_by_name():
    """A user loss named like a built-in gets its own truncated series, never the closed form."""
    theta, X, y = _batch(15)
    sigma2, eps_y = 2.0, 1.2
    # Quartic derivatives under the name "exponential": the quartic's series, not e^-z's.
    spoof = _user_quartic("exponential")
    quartic = _user_quartic()
    assert np.array_equal(
        iwp_loss(theta, X, y, sigma2, eps_y, spoof, 2),
        iwp_loss(theta, X, y, sigma2, eps_y, quartic, 2),
    )
    assert np.array_equal(plain_loss(theta, X, y, spoof), plain_loss(theta, X, y, quartic))
    assert np.array_equal(plain_gradient(theta, X, y, spoof), plain_gradient(theta, X, y, quartic))
    assert not np.allclose(
        iwp_loss(theta, X, y, sigma2, eps_y, spoof, 2),
        iwp_loss(theta, X, y, sigma2, eps_y, "exponential"),
    )
    # Squared-loss derivatives under the name "logistic": its series (exact from K = 1) is
    # the squared closed form, not the built-in logistic's derivatives.
    spoof = MarginLoss("logistic", get_margin_loss("squared").derivative)
    for fn in (iwp_loss, iwp_gradient):
        assert np.allclose(
            fn(theta, X, y, sigma2, eps_y, spoof, 3), fn(theta, X, y, sigma2, eps_y, "squared")
        )
    # A deep copy of a built-in (as sklearn's clone makes) keeps its closed form.
    exp_copy = copy.deepcopy(get_margin_loss("exponential"))
    assert np.array_equal(
        iwp_gradient(theta, X, y, sigma2, eps_y, exp_copy),
        iwp_gradient(theta, X, y, sigma2, eps_y, "exponential"),
    )


def test_auto_order_is_for_the_logistic_loss_only():
    theta, X, y = _batch(16)
    for user in (_user_exponential("exponential"), _user_quartic()):
        with pytest.raises(ValidationError, match="explicit integer order"):
            iwp_gradient(theta, X, y, 2.0, 1.0, user)  # order="auto" by default
        with pytest.raises(ValidationError, match="explicit integer order"):
            iwp_loss(theta, X, y, 2.0, 1.0, user, "auto")
    for bad in (-1, 1.5, "two", True):
        with pytest.raises(ValidationError, match="order"):
            iwp_loss(theta, X, y, 2.0, 1.0, _user_quartic(), bad)
    # The built-ins keep working with "auto" (closed forms ignore it; logistic reads its table).
    for loss in ("exponential", "squared", "logistic"):
        assert np.all(np.isfinite(iwp_gradient(theta, X, y, 2.0, 1.0, loss, "auto")))
    with pytest.raises(ValidationError, match="closed_form"):
        MarginLoss("mine", lambda z, n: z, closed_form=True)

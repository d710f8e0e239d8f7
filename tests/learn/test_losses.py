"""Oracles for the loss catalogue (paper 000, Sections 4-7).

Two kinds of checks:

* derivatives: every analytic gradient / Hessian / Laplacian against finite differences;
* conditional unbiasedness of the corrected losses (docs/dr-estimation.md, "Why the
  corrected losses are unbiased"): at a fixed record x, with
  X1 = x + Z, Z ~ ZIL(delta, lam^2 I) and X2 = X1 + S, S ~ SL(delta lam^2 I) on the noised
  columns, E l_DR = l(x) (any integrable loss) and E l_SL = E l_SDR = l(x) (C^2 losses).

Monte Carlo tolerance logic: a z-test on the mean of N i.i.d. pseudo-values, with the
standard error estimated from the same sample, |z| < 4.5 (two-sided p ~ 7e-6 per check,
so a few dozen checks keep the family-wise false alarm rate below 1e-3 even before the
seeds are fixed). The DR pseudo-values have variance of order Var(l)/delta^2, so delta =
0.3 and N = 2e6-4e6 give standard errors of a few 1e-3. Negative controls
show the same tests have power: the biases there are > 6-10 standard errors, and where
the bias has a closed form the tests also check it within 4.5 standard errors.
"""

import math
import warnings

import numpy as np
import pytest

from privest.errors import ValidationError
from privest.learn.losses import (
    LOSS_NAMES,
    CallableLoss,
    HingeLoss,
    LogisticLoss,
    Loss,
    LossNotSmoothError,
    QuantileRegressionLoss,
    ReLUNetLoss,
    ScalarQuantileLoss,
    SquaredLoss,
    TransformedSquaredLoss,
    abs_sin_squared,
    get_loss,
    indicator_squared,
    relu_squared,
)
from privest.noise import sample_sl, sample_zil

Z_TOL = 4.5
DELTA = 0.3
CHUNK = 500_000


# ------------------------------------------------------------------------------------
# helpers


def release(
    x: np.ndarray, delta: float, lam: float, noised: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on the rows of ``x``: one joint ZIL vector per record on the noised columns."""
    m = x.shape[0]
    k = int(noised.sum())
    z, _ = sample_zil(m, k, lam, delta, rng)
    s = sample_sl(m, k, lam * math.sqrt(delta), rng)
    x1 = x.copy()
    x1[:, noised] += z
    x2 = x1.copy()
    x2[:, noised] += s
    return x1, x2


def mc(stats, n_total: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error of the columns of ``stats(m, rng) -> (m, k)`` over n_total rows.

    Equal chunks; the pooled variance is the mean within-chunk variance plus the variance
    of the chunk means (exact for equal chunk sizes).
    """
    rng = np.random.default_rng(seed)
    means, variances = [], []
    for _ in range(n_total // CHUNK):
        v = np.asarray(stats(CHUNK, rng), dtype=float).reshape(CHUNK, -1)
        means.append(v.mean(axis=0))
        variances.append(v.var(axis=0))
    means_a, var_a = np.array(means), np.array(variances)
    var = var_a.mean(axis=0) + means_a.var(axis=0)
    return means_a.mean(axis=0), np.sqrt(var / n_total)


def zscore(mean: np.ndarray, se: np.ndarray, target) -> np.ndarray:
    return (mean - np.asarray(target, dtype=float)) / se


def dr(v1: np.ndarray, v2: np.ndarray, delta: float) -> np.ndarray:
    """DR pseudo-values (1/delta) l(X1) + (1 - 1/delta) l(X2) (paper Section 4.1)."""
    return v1 / delta + (1.0 - 1.0 / delta) * v2


def tile(x, m: int) -> np.ndarray:
    return np.tile(np.asarray(x, dtype=float), (m, 1))


def fd_theta(f, theta: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of f(theta) -> array; returns shape f.shape + (p,)."""
    cols = []
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = h
        cols.append((f(theta + e) - f(theta - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def num_laplacian(loss: Loss, x, y, theta, noise_var, h: float = 1e-3) -> np.ndarray:
    """Second differences of value() in x, weighted by the noise variance of each column."""
    w = np.asarray(noise_var, dtype=float)
    v0 = loss.value(x, y, theta)
    out = np.zeros(x.shape[0])
    for k in np.flatnonzero(w):
        xp, xm = x.copy(), x.copy()
        xp[:, k] += h
        xm[:, k] -= h
        out += w[k] * (loss.value(xp, y, theta) - 2 * v0 + loss.value(xm, y, theta)) / h**2
    return out


class PolySinLoss(Loss):
    """Test-only smooth loss in d = 2, p = 2, with an analytic Laplacian.

    l = t0 x1^3 + t1 x1^2 x2 + (x2 - t0)^2 + sin(x1 + t1 x2).
    d2/dx1^2 = 6 t0 x1 + 2 t1 x2 - sin(s);  d2/dx2^2 = 2 - t1^2 sin(s);  s = x1 + t1 x2.
    """

    name = "polysin"
    smooth_in_x = True

    def n_params(self, d):
        return 2

    def value(self, x, y, theta):
        t0, t1 = theta
        x1, x2 = x[:, 0], x[:, 1]
        return t0 * x1**3 + t1 * x1**2 * x2 + (x2 - t0) ** 2 + np.sin(x1 + t1 * x2)

    def laplacian(self, x, y, theta, noised):
        t0, t1 = theta
        x1, x2 = x[:, 0], x[:, 1]
        s = np.sin(x1 + t1 * x2)
        return noised[0] * (6 * t0 * x1 + 2 * t1 * x2 - s) + noised[1] * (2 - t1**2 * s)


# ------------------------------------------------------------------------------------
# derivatives against finite differences


def _index_case(loss, seed: int = 0):
    rng = np.random.default_rng(seed)
    n, d = 9, 4
    x = rng.normal(size=(n, d))
    if isinstance(loss, LogisticLoss):
        y = (rng.random(n) < 0.5).astype(float)
    else:
        y = rng.normal(size=n)
    theta = rng.normal(size=loss.n_params(d)) * 0.7
    w = rng.random(n) + 0.5
    return x, y, theta, w


SMOOTH_INDEX = [
    LogisticLoss(fit_intercept=False),
    LogisticLoss(fit_intercept=True),
    SquaredLoss(fit_intercept=True),
    SquaredLoss(fit_intercept=False),
]
MASKS = [
    np.array([True, False, True, True]),
    np.array([True, True, True, True]),
    np.array([0.25, 0.0, 4.0, 1e-4]),  # per-column noise variances (ranges differing 10^2)
]


@pytest.mark.parametrize("loss", SMOOTH_INDEX, ids=repr)
@pytest.mark.parametrize("mask", MASKS, ids=["partial", "all", "weighted"])
def test_index_loss_derivatives(loss, mask):
    x, y, theta, w = _index_case(loss)
    # gradient and Hessian in theta
    g = loss.grad(x, y, theta)
    np.testing.assert_allclose(g, fd_theta(lambda t: loss.value(x, y, t), theta), atol=1e-7)
    h = loss.hess_sum(x, y, theta, w)
    h_fd = fd_theta(lambda t: w @ loss.grad(x, y, t), theta)
    np.testing.assert_allclose(h, h_fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        loss.hess_sum(x, y, theta),
        fd_theta(lambda t: loss.grad(x, y, t).sum(axis=0), theta),
        rtol=1e-6,
        atol=1e-7,
    )
    # Laplacian over the noised columns and its theta-derivatives
    lap = loss.laplacian(x, y, theta, mask)
    np.testing.assert_allclose(lap, num_laplacian(loss, x, y, theta, mask), rtol=1e-5, atol=1e-6)
    lg = loss.laplacian_grad(x, y, theta, mask)
    lg_fd = fd_theta(lambda t: loss.laplacian(x, y, t, mask), theta)
    np.testing.assert_allclose(lg, lg_fd, rtol=1e-6, atol=1e-7)
    lh = loss.laplacian_hess_sum(x, y, theta, mask, w)
    lh_fd = fd_theta(lambda t: w @ loss.laplacian_grad(x, y, t, mask), theta)
    np.testing.assert_allclose(lh, lh_fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lh, lh.T, atol=1e-12)


def test_logistic_matches_spec_formulas():
    """The logistic loss of paper 000, Sec. 7.2 in closed form, no intercept, all columns noised."""
    loss = LogisticLoss()
    x, y, beta, _ = _index_case(loss, seed=3)
    u = x @ beta
    s = 1 / (1 + np.exp(-u))
    w = s * (1 - s)
    nb2 = beta @ beta
    mask = np.ones(x.shape[1], bool)
    np.testing.assert_allclose(loss.value(x, y, beta), (1 - y) * u + np.log1p(np.exp(-u)))
    np.testing.assert_allclose(loss.laplacian(x, y, beta, mask), nb2 * w)
    np.testing.assert_allclose(
        loss.laplacian_grad(x, y, beta, mask),
        2 * w[:, None] * beta + (nb2 * w * (1 - 2 * s))[:, None] * x,
    )
    hess = sum(
        2 * w[i] * np.eye(4)
        + 2 * w[i] * (1 - 2 * s[i]) * (np.outer(beta, x[i]) + np.outer(x[i], beta))
        + nb2 * w[i] * (1 - 6 * s[i] + 6 * s[i] ** 2) * np.outer(x[i], x[i])
        for i in range(x.shape[0])
    )
    np.testing.assert_allclose(loss.laplacian_hess_sum(x, y, beta, mask), hess, rtol=1e-12)


def test_squared_loss_laplacian_is_twice_noised_norm():
    loss = SquaredLoss(fit_intercept=True)
    x, y, theta, _ = _index_case(loss)
    mask = np.array([False, True, False, True])
    expect = 2 * (theta[2] ** 2 + theta[4] ** 2)
    np.testing.assert_allclose(loss.laplacian(x, y, theta, mask), expect)


def _sin_squared():
    return TransformedSquaredLoss(np.sin, np.cos, lambda x: -np.sin(x), name="sin_squared")


@pytest.mark.parametrize(
    ("factory", "xs"),
    [
        (relu_squared, [-0.7, -0.2, 0.3, 1.1]),  # away from the kink at 0
        (indicator_squared, [0.2, 0.7, 0.9, 1.4]),  # away from 0.5 and 1
        (abs_sin_squared, [0.1, 0.3, 0.6, 0.9]),  # away from multiples of 1/2
        (_sin_squared, [-1.0, 0.0, 0.4, 2.0]),
    ],
)
def test_transformed_squared_derivatives(factory, xs):
    loss = factory()
    assert loss.smooth_in_x and loss.smooth_in_theta and loss.n_params(1) == 1
    x = np.array(xs)[:, None]
    theta = np.array([0.35])
    w = np.array([1.0, 0.5, 2.0, 1.5])
    on, off = np.array([True]), np.array([False])
    np.testing.assert_allclose(
        loss.grad(x, None, theta), fd_theta(lambda t: loss.value(x, None, t), theta), atol=1e-7
    )
    np.testing.assert_allclose(loss.hess_sum(x, None, theta, w), [[2 * w.sum()]])
    np.testing.assert_allclose(
        loss.laplacian(x, None, theta, on),
        num_laplacian(loss, x, None, theta, on, h=1e-4),
        rtol=1e-5,
        atol=1e-5,
    )
    np.testing.assert_allclose(
        loss.laplacian_grad(x, None, theta, on),
        fd_theta(lambda t: loss.laplacian(x, None, t, on), theta),
        atol=1e-7,
    )
    np.testing.assert_allclose(loss.laplacian_hess_sum(x, None, theta, on, w), [[0.0]])
    np.testing.assert_array_equal(loss.laplacian(x, None, theta, off), 0.0)
    # 1-D x is read as one column
    np.testing.assert_allclose(loss.value(np.array(xs), None, theta), loss.value(x, None, theta))


def test_abs_sin_a_e_second_derivative_is_minus_4pi2_g():
    x = np.linspace(0.01, 0.99, 50)
    loss = abs_sin_squared()
    g2 = loss.g_second(x)
    np.testing.assert_allclose(g2, -4 * np.pi**2 * np.abs(np.sin(2 * np.pi * x)))


def test_test_local_polysin_laplacian():
    loss = PolySinLoss()
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 2))
    theta = np.array([0.4, -0.8])
    for mask in ([True, True], [True, False], [False, True]):
        m = np.array(mask)
        np.testing.assert_allclose(
            loss.laplacian(x, None, theta, m),
            num_laplacian(loss, x, None, theta, m),
            rtol=1e-5,
            atol=1e-5,
        )


@pytest.mark.parametrize(
    "loss",
    [
        QuantileRegressionLoss(0.3, fit_intercept=True),
        QuantileRegressionLoss(0.7, fit_intercept=False),
        HingeLoss(alpha=0.4, fit_intercept=True),
        HingeLoss(alpha=0.0, fit_intercept=False),
    ],
    ids=repr,
)
def test_piecewise_linear_index_gradients_ae(loss):
    rng = np.random.default_rng(11)
    n, d = 40, 3
    x = rng.normal(size=(n, d))
    theta = rng.normal(size=loss.n_params(d))
    y = rng.choice([-1.0, 1.0], n) if isinstance(loss, HingeLoss) else rng.normal(size=n)
    g = loss.grad(x, y, theta)
    g_fd = Loss.grad(loss, x, y, theta)  # base-class central differences
    np.testing.assert_allclose(g, g_fd, atol=1e-6)
    assert loss.piecewise_linear and not loss.smooth_in_x and not loss.smooth_in_theta


def test_scalar_quantile_value_and_gradient():
    loss = ScalarQuantileLoss(0.25)
    x = np.array([-1.0, 0.2, 0.5, 3.0])
    theta = np.array([0.3])
    r = x - 0.3
    np.testing.assert_allclose(loss.value(x, None, theta), r * (0.25 - (r < 0)))
    np.testing.assert_allclose(loss.grad(x, None, theta), Loss.grad(loss, x, None, theta))
    assert loss.param_names(["x"]) == ["q0.25"]


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_relu_net_backprop_matches_finite_differences(task):
    rng = np.random.default_rng(21)
    n, d, hidden = 30, 3, 5
    loss = ReLUNetLoss(hidden=hidden, task=task, seed=4)
    x = rng.normal(size=(n, d))
    y = (rng.random(n) < 0.5).astype(float) if task == "classification" else rng.normal(size=n)
    theta = loss.initial_theta(d) + 0.1 * rng.normal(size=loss.n_params(d))
    g = loss.grad(x, y, theta)
    assert g.shape == (n, hidden * (d + 2) + 1)
    np.testing.assert_allclose(g, fd_theta(lambda t: loss.value(x, y, t), theta), atol=1e-6)
    # the forward pass by hand
    W1 = theta[: hidden * d].reshape(hidden, d)
    b1 = theta[hidden * d : hidden * d + hidden]
    w2 = theta[hidden * d + hidden : -1]
    f = np.maximum(x @ W1.T + b1, 0) @ w2 + theta[-1]
    pred = loss.predict(x, theta)
    np.testing.assert_allclose(pred, f if task == "regression" else 1 / (1 + np.exp(-f)))
    assert len(loss.param_names(["a", "b", "c"])) == loss.n_params(d)


def test_relu_net_initial_theta_is_seeded_and_nonzero():
    a = ReLUNetLoss(hidden=4, seed=7).initial_theta(3)
    b = ReLUNetLoss(hidden=4, seed=7).initial_theta(3)
    c = ReLUNetLoss(hidden=4, seed=8).initial_theta(3)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and np.any(a != 0)
    np.testing.assert_array_equal(LogisticLoss().initial_theta(3), np.zeros(3))


def test_callable_loss_uses_given_or_finite_difference_gradient():
    fn = lambda x, y, t: (x[:, 0] - t[0]) ** 2 + t[1] * x[:, 1]  # noqa: E731
    gr = lambda x, y, t: np.column_stack([-2 * (x[:, 0] - t[0]), x[:, 1]])  # noqa: E731
    x = np.random.default_rng(2).normal(size=(8, 2))
    theta = np.array([0.3, -1.2])
    fd = CallableLoss(fn, 2)
    an = CallableLoss(fn, lambda d: d, grad=gr)
    np.testing.assert_allclose(fd.grad(x, None, theta), an.grad(x, None, theta), atol=1e-7)
    assert fd.param_names(["a", "b"]) == ["theta0", "theta1"]


# ------------------------------------------------------------------------------------
# conditional unbiasedness of the DR loss (paper Thm 5.1, record by record)

LAM1 = 1.0
THETA1 = np.array([0.4])
ONE = np.array([True])


@pytest.mark.parametrize(
    ("factory", "x0"),
    [
        (relu_squared, 0.2),
        (indicator_squared, 0.45),  # just outside [0.5, 1]: l(x) = theta^2
        (abs_sin_squared, 0.3),
        (lambda: ScalarQuantileLoss(0.3), 0.3),
    ],
    ids=["relu", "indicator", "abs_sin", "check"],
)
def test_dr_conditionally_unbiased_scalar_losses(factory, x0):
    loss = factory()

    def stats(m, rng):
        x1, x2 = release(np.full((m, 1), x0), DELTA, LAM1, ONE, rng)
        return dr(loss.value(x1, None, THETA1), loss.value(x2, None, THETA1), DELTA)

    mean, se = mc(stats, 4_000_000, seed=101)
    target = loss.value(np.array([[x0]]), None, THETA1)
    assert abs(zscore(mean, se, target)[0]) < Z_TOL


def _max_loss():
    return CallableLoss(lambda x, y, t: np.max(x, axis=1) - t[0], 1, name="max")


def _halfplane_loss():
    return CallableLoss(lambda x, y, t: (x.sum(axis=1) > 0.5) * 1.0 + 0 * t[0], 1, name="half")


@pytest.mark.parametrize(
    ("factory", "x0"),
    [(_halfplane_loss, [0.2, 0.2]), (_halfplane_loss, [0.3, 0.25]), (_max_loss, [0.1, 0.3])],
    ids=["halfplane-out", "halfplane-in", "max"],
)
def test_dr_conditionally_unbiased_discontinuous_d2(factory, x0):
    """1(x1 + x2 > .5) has a line of discontinuities; max is kinked on the diagonal."""
    loss = factory()
    theta = np.array([0.0])
    mask = np.array([True, True])

    def stats(m, rng):
        x1, x2 = release(tile(x0, m), DELTA, LAM1, mask, rng)
        return dr(loss.value(x1, None, theta), loss.value(x2, None, theta), DELTA)

    mean, se = mc(stats, 2_000_000, seed=102)
    target = loss.value(np.array([x0]), None, theta)
    assert abs(zscore(mean, se, target)[0]) < Z_TOL


@pytest.mark.parametrize(
    "loss",
    [HingeLoss(alpha=0.5), QuantileRegressionLoss(quantile=0.3)],
    ids=["hinge", "quantile_regression"],
)
def test_dr_conditionally_unbiased_index_losses(loss):
    """Fixed theta, x in R^3 with the last column unnoised, y unnoised."""
    x0 = np.array([0.3, -0.4, 0.8])
    mask = np.array([True, True, False])
    theta = np.array([0.2, 1.0, -0.5, 0.7])
    y0 = 1.0 if isinstance(loss, HingeLoss) else 0.9

    def stats(m, rng):
        x1, x2 = release(tile(x0, m), DELTA, LAM1, mask, rng)
        y = np.full(m, y0)
        return dr(loss.value(x1, y, theta), loss.value(x2, y, theta), DELTA)

    mean, se = mc(stats, 2_000_000, seed=103)
    target = loss.value(x0[None, :], np.array([y0]), theta)
    assert abs(zscore(mean, se, target)[0]) < Z_TOL


def test_dr_unbiased_population_uniform_square():
    """E l_DR = E l(X) for X ~ U[0,1]^2: E max = 2/3, P(X1 + X2 > 1/2) = 7/8."""
    mx, half = _max_loss(), _halfplane_loss()
    theta = np.array([0.0])
    mask = np.array([True, True])

    def stats(m, rng):
        x = rng.random((m, 2))
        x1, x2 = release(x, DELTA, LAM1, mask, rng)
        return np.column_stack(
            [
                dr(mx.value(x1, None, theta), mx.value(x2, None, theta), DELTA),
                dr(half.value(x1, None, theta), half.value(x2, None, theta), DELTA),
            ]
        )

    mean, se = mc(stats, 2_000_000, seed=104)
    assert np.all(np.abs(zscore(mean, se, [2 / 3, 7 / 8])) < Z_TOL)


# ------------------------------------------------------------------------------------
# SL and SDR for smooth losses (paper eqs. 6.1-6.2)


def _sl_sdr_dr(loss, x0, y0, theta, mask, lam, n_total, seed):
    """Mean and SE of the SL, SDR and DR pseudo-values at a fixed record."""

    def stats(m, rng):
        x1, x2 = release(tile(x0, m), DELTA, lam, mask, rng)
        y = None if y0 is None else np.full(m, y0)
        v1, v2 = loss.value(x1, y, theta), loss.value(x2, y, theta)
        lap2 = loss.laplacian(x2, y, theta, mask)
        sl = v2 - lam**2 / 2 * lap2
        sdr = v1 - (1 - DELTA) * lam**2 / 2 * lap2
        return np.column_stack([sl, sdr, dr(v1, v2, DELTA)])

    mean, se = mc(stats, n_total, seed)
    target = loss.value(np.asarray(x0, float)[None, :], None if y0 is None else [y0], theta)
    return zscore(mean, se, target[0])


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sl_sdr_unbiased_logistic(fit_intercept):
    loss = LogisticLoss(fit_intercept=fit_intercept)
    x0 = np.array([0.5, -0.3, 0.8])
    beta = np.array([1.0, -0.5, 0.8])
    theta = np.concatenate([[0.3], beta]) if fit_intercept else beta
    mask = np.array([True, True, fit_intercept])  # partial mask in one case
    z = _sl_sdr_dr(loss, x0, 1.0, theta, mask, 0.5, 2_000_000, seed=201)
    assert np.all(np.abs(z) < Z_TOL), z


def test_sl_sdr_unbiased_squared_loss():
    loss = SquaredLoss(fit_intercept=True)
    x0 = np.array([0.5, -0.3, 0.8])
    theta = np.array([0.3, 1.0, -0.5, 0.8])
    mask = np.array([True, False, True])
    z = _sl_sdr_dr(loss, x0, 1.2, theta, mask, 0.8, 2_000_000, seed=202)
    assert np.all(np.abs(z) < Z_TOL), z


@pytest.mark.parametrize("mask", [[True, True], [True, False]], ids=["both", "first"])
def test_sl_sdr_unbiased_polynomial_and_sine(mask):
    z = _sl_sdr_dr(
        PolySinLoss(),
        [0.4, -0.2],
        None,
        np.array([0.7, -1.1]),
        np.array(mask),
        0.5,
        2_000_000,
        seed=203,
    )
    assert np.all(np.abs(z) < Z_TOL), z


# ------------------------------------------------------------------------------------
# negative controls


def test_naive_loss_is_biased():
    """l(X1) for (theta - relu x)^2 at x = 0: E - l(0) = (1 - delta)(b^2 - theta b), b = lam/sqrt2.

    (E relu(U) = b/2 and E relu(U)^2 = b^2 for U ~ Laplace(b).)
    """
    loss = relu_squared()
    lam, theta = 1.0, np.array([0.5])
    b = lam / math.sqrt(2)

    def stats(m, rng):
        x1, _ = release(np.zeros((m, 1)), DELTA, lam, ONE, rng)
        return loss.value(x1, None, theta)

    mean, se = mc(stats, 1_000_000, seed=301)
    l0 = theta[0] ** 2
    assert zscore(mean, se, l0)[0] > 10
    assert abs(zscore(mean, se, l0 + (1 - DELTA) * (b * b - theta[0] * b))[0]) < Z_TOL


def test_dr_with_per_coordinate_zil_is_biased_for_max():
    """Independent ZIL per coordinate (and independent Laplace S) breaks the DR identity.

    Then X2 - x has independent Laplace(b) coordinates and, at x = 0 [derived]:
    E l_DR - l(x) = (1 - delta)(A1 + A2 - l(x) - E max(U1, U2)) with A_k = E max(U_k, 0)
    = b/2 and E max(U1, U2) = E|U1 - U2|/2 = 3b/4, i.e. a bias of (1 - delta) b/4.
    With the joint ZIL vector of Algorithm 1 the same statistic is unbiased.
    """
    lam = 2.0
    b = lam / math.sqrt(2)
    loss = _max_loss()
    theta = np.array([0.0])

    def stats(m, rng):
        zero = rng.random((m, 2)) < DELTA  # independent zero/non-zero per coordinate
        z = np.where(zero, 0.0, rng.laplace(scale=b, size=(m, 2)))
        s = rng.laplace(scale=b * math.sqrt(DELTA), size=(m, 2))
        x1 = z
        x2 = z + s
        bad = dr(loss.value(x1, None, theta), loss.value(x2, None, theta), DELTA)
        j1, j2 = release(np.zeros((m, 2)), DELTA, lam, np.array([True, True]), rng)
        good = dr(loss.value(j1, None, theta), loss.value(j2, None, theta), DELTA)
        return np.column_stack([bad, good])

    mean, se = mc(stats, 2_000_000, seed=302)
    z_bad, z_good = zscore(mean, se, 0.0)
    assert z_bad > 6
    assert abs(zscore(mean[0], se[0], (1 - DELTA) * b / 4)) < Z_TOL
    assert abs(z_good) < Z_TOL


@pytest.mark.parametrize("x0", [0.0, 0.5, -0.3])
def test_sl_relu_bias_at_fixed_x(x0):
    """SL with a.e. derivatives on (theta - relu x)^2 [derived].

    With U = X2 - x ~ Laplace(b), b = lam/sqrt2: E relu(x + U) - relu(x) = (b/2) e^{-|x|/b},
    so theta_SL = mean relu(X2) is off by (b/2) e^{-|x|/b} (b/2 at x = 0). The relu^2 part
    of the loss is corrected exactly (its a.e. second derivative 2 1(x > 0) is its
    distributional one), so the SL loss itself is off by -theta b e^{-|x|/b}.
    """
    lam = 1.0
    b = lam / math.sqrt(2)
    loss = relu_squared()
    theta = np.array([0.6])

    def stats(m, rng):
        _, x2 = release(np.full((m, 1), x0), DELTA, lam, ONE, rng)
        sl = loss.value(x2, None, theta) - lam**2 / 2 * loss.laplacian(x2, None, theta, ONE)
        return np.column_stack([np.maximum(x2[:, 0], 0.0), sl])

    mean, se = mc(stats, 2_000_000, seed=303)
    shift = b / 2 * math.exp(-abs(x0) / b)
    l0 = (theta[0] - max(x0, 0.0)) ** 2
    assert np.all(
        np.abs(zscore(mean, se, [max(x0, 0.0) + shift, l0 - 2 * theta[0] * shift])) < Z_TOL
    )
    assert zscore(mean, se, [max(x0, 0.0), l0])[0] > 10


def test_sl_relu_bias_population_closed_form():
    """X ~ U(0, 1): E theta_SL - theta_0 = E (b/2) e^{-X/b} = (b^2/2)(1 - e^{-1/b}) [derived].

    Paper Table 1, (delta, lam) = (0.1, 0.94): b = 0.665 gives 0.172, matching the SL RMSE 0.173.
    """
    lam = 0.94
    b = lam / math.sqrt(2)

    def stats(m, rng):
        x = rng.random((m, 1))
        _, x2 = release(x, 0.1, lam, ONE, rng)
        return np.maximum(x2[:, 0], 0.0) - x[:, 0]

    mean, se = mc(stats, 1_000_000, seed=304)
    bias = b * b / 2 * (1 - math.exp(-1 / b))
    assert abs(bias - 0.172) < 1e-3
    assert abs(zscore(mean, se, bias)[0]) < Z_TOL
    assert zscore(mean, se, 0.0)[0] > 10


# ------------------------------------------------------------------------------------
# errors and small API behaviour


@pytest.mark.parametrize(
    "loss",
    [
        QuantileRegressionLoss(),
        HingeLoss(),
        ReLUNetLoss(hidden=2),
        ScalarQuantileLoss(),
        # the indicator with g' but without g'': not smooth_in_x
        TransformedSquaredLoss(
            lambda x: ((x >= 0.5) & (x <= 1.0)) * 1.0, np.zeros_like, name="indicator_no_g2"
        ),
        CallableLoss(lambda x, y, t: x[:, 0] * t[0], 1, name="mine"),
    ],
    ids=repr,
)
def test_laplacian_of_nonsmooth_loss_raises(loss):
    assert not loss.smooth_in_x
    d = 1 if isinstance(loss, (ScalarQuantileLoss, TransformedSquaredLoss, CallableLoss)) else 2
    x = np.ones((3, d))
    y = np.ones(3)
    theta = np.zeros(loss.n_params(d))
    mask = np.ones(d, bool)
    for call in (
        lambda: loss.laplacian(x, y, theta, mask),
        lambda: loss.laplacian_grad(x, y, theta, mask),
        lambda: loss.laplacian_hess_sum(x, y, theta, mask),
    ):
        with pytest.raises(LossNotSmoothError, match="use method='dr'") as info:
            call()
        assert loss.name in str(info.value)
    assert issubclass(LossNotSmoothError, ValidationError)
    assert issubclass(LossNotSmoothError, ValueError)


def test_transformed_loss_needs_g_prime_with_g_second_and_one_column():
    with pytest.raises(ValidationError, match="g_prime"):
        TransformedSquaredLoss(np.sin, g_second=np.sin)
    with pytest.raises(ValidationError, match="one feature column"):
        relu_squared().value(np.ones((3, 2)), None, np.zeros(1))
    with pytest.raises(ValidationError, match="same shape"):
        TransformedSquaredLoss(lambda x: x[:, None]).value(np.ones(3), None, np.zeros(1))


def test_callable_loss_validation_errors():
    x = np.ones((4, 2))
    theta = np.zeros(1)
    cases = [
        (lambda x, y, t: x.sum(), "shape"),  # scalar
        (lambda x, y, t: x, "shape"),  # (n, d)
        (lambda x, y, t: np.full(x.shape[0], np.nan), "non-finite"),
        (lambda x, y, t: y * x[:, 0], "raised TypeError"),  # y is None
        (lambda x, y, t: ["a"] * x.shape[0], "not numbers"),
    ]
    for fn, match in cases:
        with pytest.raises(ValidationError, match=match):
            CallableLoss(fn, 1).value(x, None, theta)
    with pytest.raises(ValidationError, match="n_params"):
        CallableLoss(lambda x, y, t: x[:, 0], 0)
    with pytest.raises(ValidationError, match="not callable"):
        CallableLoss("loss", 1)
    with pytest.raises(ValidationError, match="theta"):
        CallableLoss(lambda x, y, t: x[:, 0], 2).value(x, None, theta)
    bad_grad = CallableLoss(lambda x, y, t: x[:, 0], 1, grad=lambda x, y, t: np.ones(4))
    with pytest.raises(ValidationError, match="grad"):
        bad_grad.grad(x, None, theta)


def test_get_loss_registry():
    for name in LOSS_NAMES:
        loss = get_loss(name)
        assert isinstance(loss, Loss) and loss.name == name
    assert get_loss("quantile", quantile=0.25).quantile == 0.25
    assert get_loss("logistic").fit_intercept is False
    assert get_loss("linear").fit_intercept is True
    with pytest.raises(ValidationError, match="logistic, linear"):
        get_loss("svm")
    with pytest.raises(ValidationError, match="keyword"):
        get_loss("logistic", quantile=0.3)


def test_hinge_labels_and_penalty():
    loss = HingeLoss(alpha=2.0)
    x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
    theta = np.array([0.1, 0.5, -1.0])
    v01 = loss.value(x, np.array([1, 0, 1]), theta)
    vpm = loss.value(x, np.array([1, -1, 1]), theta)
    np.testing.assert_allclose(v01, vpm)
    u = 0.1 + x @ theta[1:]
    pen = 0.5 * 2.0 * (0.25 + 1.0)  # intercept not penalised
    np.testing.assert_allclose(vpm, np.maximum(0, 1 - np.array([1, -1, 1]) * u) + pen)
    with pytest.raises(ValidationError, match="-1/\\+1"):
        loss.value(x, np.array([1, 2, 1]), theta)
    np.testing.assert_array_equal(loss.predict_class(x, theta), np.where(u >= 0, 1, -1))


def test_argument_validation():
    with pytest.raises(ValidationError, match="quantile"):
        QuantileRegressionLoss(quantile=1.0)
    with pytest.raises(ValidationError, match="quantile"):
        ScalarQuantileLoss(quantile=-0.1)
    with pytest.raises(ValidationError, match="alpha"):
        HingeLoss(alpha=-1)
    with pytest.raises(ValidationError, match="task"):
        ReLUNetLoss(task="ranking")
    loss = LogisticLoss()
    x = np.ones((3, 2))
    with pytest.raises(ValidationError, match="theta"):
        loss.value(x, np.ones(3), np.zeros(3))
    with pytest.raises(ValidationError, match="response"):
        loss.value(x, None, np.zeros(2))
    with pytest.raises(ValidationError, match="noise_var"):
        loss.laplacian(x, np.ones(3), np.zeros(2), np.array([1.0, -1.0]))
    with pytest.raises(ValidationError, match="noise_var"):
        loss.laplacian(x, np.ones(3), np.zeros(2), np.array([1.0, 0.0, 1.0]))
    with pytest.raises(NotImplementedError):
        QuantileRegressionLoss().hess_sum(x, np.ones(3), np.zeros(3))


def test_logistic_is_stable_and_predicts_probabilities():
    loss = LogisticLoss(fit_intercept=True)
    x = np.array([[-800.0], [0.0], [800.0]])
    theta = np.array([0.0, 1.0])
    y = np.array([0.0, 1.0, 1.0])
    mask = np.array([True])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = loss.value(x, y, theta)
        g = loss.grad(x, y, theta)
        lh = loss.laplacian_hess_sum(x, y, theta, mask)
        p = loss.predict(x, theta)
    np.testing.assert_allclose(v, [0.0, math.log(2), 0.0], atol=1e-12)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(lh))
    np.testing.assert_allclose(p, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(loss.predict_class(x, theta), [0, 1, 1])
    assert loss.param_names(["a"]) == ["intercept", "a"]
    assert SquaredLoss().predict(np.array([[2.0]]), np.array([1.0, 3.0]))[0] == 7.0

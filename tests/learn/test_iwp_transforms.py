"""Bernoulli and Weierstrass transforms and inverses (paper 004, Thm 5.1, App. D.5, D.7)."""

import math

import numpy as np
import pytest
from numpy.polynomial import Polynomial
from numpy.polynomial import hermite_e as H
from scipy import special

from privest.learn.weierstrass import (
    bernoulli_inverse,
    bernoulli_transform,
    choose_order,
    get_margin_loss,
    inverse_weierstrass_polynomial,
    inverse_weight,
    keep_probability,
    load_order_table,
    truncated_inverse,
    truncation_bias,
    weierstrass_polynomial,
    weierstrass_quadrature,
)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_bernoulli_inverse_is_the_matrix_inverse(eps):
    S, St = keep_probability(eps), inverse_weight(eps)
    M = np.array([[S, 1 - S], [1 - S, S]])
    Minv = np.array([[St, 1 - St], [1 - St, St]])
    assert np.allclose(M @ Minv, np.eye(2)) and np.allclose(Minv @ M, np.eye(2))
    g = np.array([2.0, -0.7])  # g(1), g(-1)
    fwd = bernoulli_transform(g[0], g[1], eps), bernoulli_transform(g[1], g[0], eps)
    back = bernoulli_inverse(fwd[0], fwd[1], eps)
    assert back == pytest.approx(g[0])
    assert St * (St - 1) == pytest.approx(math.exp(eps) / math.expm1(eps) ** 2)


def test_label_only_variance_matches_lemma_d3():
    eps, n = 0.8, 1_000_000
    rng = np.random.default_rng(0)
    g = {1.0: 1.3, -1.0: -0.4}
    yt = np.where(rng.random(n) < keep_probability(eps), 1.0, -1.0)  # true label +1
    est = bernoulli_inverse(
        np.where(yt > 0, g[1.0], g[-1.0]), np.where(yt > 0, g[-1.0], g[1.0]), eps
    )
    St = inverse_weight(eps)
    var = St * (St - 1) * (g[1.0] - g[-1.0]) ** 2
    assert abs(est.mean() - g[1.0]) <= 5 * math.sqrt(var / n)
    # SE of a sample variance: sqrt((m4 - var^2)/n)
    m4 = np.mean((est - est.mean()) ** 4)
    assert abs(est.var() - var) <= 5 * math.sqrt((m4 - var**2) / n)


@pytest.mark.parametrize("s", [0.3, 2.0])
def test_inverse_weierstrass_undoes_weierstrass(s):
    z = np.linspace(-2, 2, 9)
    # exponential: W^{-1}[e^{az}] = e^{-s a^2/2} e^{az}
    a = 0.7
    inv = lambda u: math.exp(-s * a * a / 2) * np.exp(a * u)  # noqa: E731
    assert np.allclose(weierstrass_quadrature(inv, z, s), np.exp(a * z), rtol=1e-10)
    # cosine: W^{-1}[cos(wz)] = e^{s w^2/2} cos(wz)
    w = 1.3
    inv = lambda u: math.exp(s * w * w / 2) * np.cos(w * u)  # noqa: E731
    assert np.allclose(weierstrass_quadrature(inv, z, s), np.cos(w * z), atol=1e-9)
    # polynomials, both directions
    P = Polynomial([0.5, -1.0, 2.0, 0.3, -0.2, 0.1])
    Q = inverse_weierstrass_polynomial(P, s)
    assert np.allclose(weierstrass_quadrature(Q, z, s), P(z), atol=1e-9)
    roundtrip = inverse_weierstrass_polynomial(weierstrass_polynomial(P, s), s)
    assert np.allclose(roundtrip(z), P(z), atol=1e-9)


def test_polynomial_inverse_is_scaled_hermite():
    s = 2.5
    sd = math.sqrt(s)
    z = np.linspace(-3, 3, 7)
    for n in range(7):
        mono = Polynomial(np.eye(n + 1)[n])
        expect = sd**n * H.hermeval(z / sd, np.eye(n + 1)[n])
        assert np.allclose(inverse_weierstrass_polynomial(mono, s)(z), expect)


def test_logistic_derivatives_match_finite_differences():
    f = get_margin_loss("logistic")
    z = np.linspace(-4, 4, 17)
    h = 1e-4
    for n in range(0, 8):
        fd = (f.derivative(z + h, n) - f.derivative(z - h, n)) / (2 * h)
        assert np.allclose(f.derivative(z, n + 1), fd, rtol=1e-5, atol=1e-7)
    d = f.derivatives(z, [0, 1, 2, 5])
    for n, v in zip([0, 1, 2, 5], d, strict=True):
        assert np.allclose(v, f.derivative(z, n))
    assert np.allclose(f.derivative(z, 1), special.expit(z) - 1)


def test_glm_laplacian_identity_by_finite_differences():
    """Delta_x f(y theta^T x) = ||theta||^2 f''(y theta^T x) (App. D.5, k = 1)."""
    f = get_margin_loss("logistic")
    theta, x, y = np.array([0.4, -1.1, 0.7]), np.array([0.3, 0.2, -0.5]), -1.0
    h = 1e-3
    lap = (
        sum(
            f(y * theta @ (x + h * e)) - 2 * f(y * theta @ x) + f(y * theta @ (x - h * e))
            for e in np.eye(3)
        )
        / h**2
    )
    assert lap == pytest.approx(theta @ theta * f.derivative(y * theta @ x, 2), rel=1e-5)


def test_truncation_bias_matches_a_prototype_table_for_small_t():
    table = {
        0.05: (1.5e-4, 4.5e-6, 2.1e-7),
        0.5: (9.6e-3, 1.8e-3, 4.6e-4),
        1.0: (2.8e-2, 7.6e-3, 2.7e-3),
        5.0: (2.1e-1, 9.9e-2, 6.1e-2),
    }
    for t, values in table.items():
        ours = [truncation_bias(t, K) for K in (1, 2, 3)]
        assert np.allclose(ours, values, rtol=0.1), (t, ours)
        assert ours[0] > ours[1] > ours[2]  # decreasing in K for small t


def test_truncation_bias_agrees_with_monte_carlo_at_large_t():
    """bias_K(25) by quadrature agrees with MC (a prototype's 80-node values, 1.8 and 68, don't)."""
    rng = np.random.default_rng(3)
    f = get_margin_loss("logistic")
    t, z = 25.0, 0.0
    G = rng.standard_normal(2_000_000)
    for K in (2, 3):
        v = truncated_inverse(f, z + math.sqrt(2 * t) * G, 2 * t, K)
        mc, se = v.mean() - f(np.array(z)), v.std() / math.sqrt(G.size)
        quad = truncation_bias(t, K, z_grid=np.array([z]))
        assert abs(abs(mc) - quad) <= 5 * se
    assert truncation_bias(t, 3) < 1.0


@pytest.mark.slow
def test_choose_order_picks_the_least_biased_order():
    for t in (0.05, 1.0, 20.0):
        k = int(choose_order(t))
        biases = [truncation_bias(t, K) for K in (1, 2, 3)]
        assert biases[k - 1] <= min(biases) * 1.2


def test_packaged_order_table_matches_a_recomputation_of_a_few_entries():
    """The shipped bias table (learn/data/) is what truncation_bias computes, entry by entry."""
    t_grid, bias = load_order_table()
    assert t_grid.shape == (61,) and bias.shape == (3, 61)
    assert np.allclose(t_grid, np.geomspace(1e-3, 200.0, 61), rtol=1e-12)
    for j in (0, 25, 60):
        for i, K in enumerate((1, 2, 3)):
            assert truncation_bias(t_grid[j], K) == pytest.approx(bias[i, j], rel=1e-9)


def test_hinge_is_refused():
    with pytest.raises(NotImplementedError, match="smooth"):
        get_margin_loss("hinge")

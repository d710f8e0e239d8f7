"""Oracles for ZIL privacy accounting (paper 000, Section 3; docs/zil-release.md, Notes)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from privest.accounting import (
    ApproxDP,
    ZILGuarantee,
    ZILTradeoff,
    approx_dp_tradeoff,
    beta_c,
    beta_c_zil,
    calibrate_c,
    calibrate_lam,
    delta_c,
    delta_tilde,
    laplace_delta,
    laplace_tradeoff,
    laplace_tradeoff_zil,
    tradeoff_montecarlo,
)
from privest.accounting.zil import beta_type1, beta_type2
from privest.errors import PrivacyParameterError, UnreachableTargetError, ValidationError
from privest.rng import make_rng

SQRT2 = math.sqrt(2.0)

# ----------------------------------------------------------------- reference numbers (5.5)
BETA_ALPHAS = [0.01, 0.05, 0.10, 0.20, 0.50]
BETA_TABLE = {
    0.2: [0.9540, 0.8817, 0.8104, 0.6861, 0.3693],
    0.5: [0.8791, 0.7634, 0.6680, 0.5220, 0.2174],
    0.8: [0.7892, 0.6391, 0.5294, 0.3781, 0.1165],
    1.0: [0.7248, 0.5578, 0.4441, 0.2970, 0.0728],
    2.0: [0.4107, 0.2326, 0.1456, 0.0649, 0.0035],
    4.0: [0.0688, 0.0161, 0.0049, 0.0006, 0.0000],
}
DELTA_EPS = [0.0, 0.5, 1.0, 2.0, 3.0, 5.0]
DELTA_TABLE = {
    0.5: [0.2978, 0.1672, 0.1063, 0.0589, 0.0403, 0.0246],
    1.0: [0.5069, 0.3935, 0.3065, 0.2013, 0.1464, 0.0934],
    2.0: [0.7569, 0.6946, 0.6321, 0.5191, 0.4297, 0.3108],
    4.0: [0.9409, 0.9249, 0.9067, 0.8647, 0.8176, 0.7205],
}
FIG1A_EPS = [0.5, 0.7, 0.9, 1.2, 1.6, 2.1, 2.8]
FIG1A_DELTA = [0.2089, 0.1803, 0.1593, 0.1373, 0.1183, 0.1035, 0.0909]


@pytest.mark.parametrize("c", sorted(BETA_TABLE))
def test_beta_c_reference_table(c):
    assert np.allclose(beta_c(np.array(BETA_ALPHAS), c), BETA_TABLE[c], atol=1e-4, rtol=0)


@pytest.mark.parametrize("c", sorted(DELTA_TABLE))
def test_delta_c_reference_table(c):
    assert np.allclose(delta_c(np.array(DELTA_EPS), c), DELTA_TABLE[c], atol=1e-4, rtol=0)


def test_fig1a_envelope_deltas():
    got = delta_tilde(np.array(FIG1A_EPS), 0.5, 0.05)
    assert np.allclose(got, FIG1A_DELTA, atol=1e-4, rtol=0)


# ------------------------------------------------- closed form vs the integral form (3.8)
def _F_c(x: float, c: float) -> float:
    """cdf of the H0 log-likelihood ratio c X W^{-1/2} - c^2/(2W) (Section 3.2)."""

    def integrand(w):
        return stats.norm.cdf(math.sqrt(w) * x / c + c / (2 * math.sqrt(w))) * math.exp(-w)

    return integrate.quad(integrand, 0, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]


def _beta_integral(alpha: float, c: float) -> float:
    """[003] eq (3.8): invert F_c numerically, then integrate the type II error."""
    x = optimize.brentq(lambda t: _F_c(t, c) - (1 - alpha), -200, 200, xtol=1e-14)
    h = x / c

    def integrand(w):
        return stats.norm.cdf(math.sqrt(w) * h - c / (2 * math.sqrt(w))) * math.exp(-w)

    return integrate.quad(integrand, 0, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]


def _beta_paper(alpha: float, c: float) -> float:
    """Prop 3.2(i) formula, with h_c(alpha) = F_c^{-1}(1 - alpha)/c found by quad + brentq."""
    h = optimize.brentq(lambda t: _F_c(t, c) - (1 - alpha), -200, 200, xtol=1e-14) / c
    u = h + math.sqrt(2 + h * h)
    return math.exp(-c / u) / (1 + (SQRT2 / u) ** 2)


@pytest.mark.parametrize("c", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("alpha", [0.01, 0.2, 0.7])
def test_closed_form_matches_integral_3_8(c, alpha):
    got = beta_c(alpha, c)
    assert got == pytest.approx(_beta_integral(alpha, c), abs=1e-6)
    assert got == pytest.approx(_beta_paper(alpha, c), abs=1e-6)


@pytest.mark.parametrize("h", [-4.0, -0.7, 0.0, 0.9, 6.0])
def test_type_errors_match_integrals(h):
    c = 0.8
    assert beta_type1(h, c) == pytest.approx(1 - _F_c(c * h, c), abs=1e-9)
    type2 = integrate.quad(
        lambda w: stats.norm.cdf(math.sqrt(w) * h - c / (2 * math.sqrt(w))) * math.exp(-w),
        0,
        np.inf,
        epsabs=1e-13,
    )[0]
    assert beta_type2(h, c) == pytest.approx(type2, abs=1e-9)


@pytest.mark.parametrize("c", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.4, 2.0])
def test_delta_c_matches_theorem_3_3_form(c, eps):
    """Thm 3.3: delta_c = 1 - e^eps (1 - F_c(eps)) - b_c(eps/c), F_c by quadrature."""
    thm = 1 - math.exp(eps) * (1 - _F_c(eps, c)) - beta_type2(eps / c, c)
    assert delta_c(eps, c) == pytest.approx(thm, abs=1e-8)


# ------------------------------------------------------------ trade-off function shape
GRID = np.linspace(0.0, 1.0, 1001)


@pytest.mark.parametrize("c", [0.05, 0.5, 2.0, 8.0])
def test_beta_c_is_a_symmetric_tradeoff_function(c):
    assert beta_c(0.0, c) == 1.0
    assert beta_c(1.0, c) == 0.0
    b = beta_c(GRID, c)
    assert np.all(np.diff(b) <= 1e-15)  # non-increasing
    assert np.all(b <= 1 - GRID + 1e-15)
    assert np.all(np.diff(b, 2) >= -1e-12)  # convex
    inner = GRID[1:-1]
    inner = inner[beta_c(inner, c) > 1e-300]  # beta_c underflows to 0 as alpha -> 1
    assert inner.size > 500
    assert np.allclose(beta_c(beta_c(inner, c), c), inner, atol=1e-10, rtol=0)


def test_beta_c_decreasing_in_c():
    curves = np.array([beta_c(GRID, c) for c in (0.1, 0.3, 0.5, 1.0, 2.0, 4.0)])
    assert np.all(np.diff(curves, axis=0) <= 1e-15)


def test_beta_c_extreme_alphas_and_speed():
    a = np.array([1e-300, 1e-30, 1e-8, 1 - 1e-8, 1 - 1e-16])
    for c in (1e-6, 0.5, 50.0):
        b = beta_c(a, c)
        assert np.all(np.isfinite(b)) and np.all((b >= 0) & (b <= 1))
        assert np.all(np.diff(b) <= 0)
    b = beta_c(np.linspace(0, 1, 1000).reshape(10, 100), 0.5)
    assert b.shape == (10, 100)


def test_scalar_in_float_out_array_in_same_shape():
    assert isinstance(beta_c(0.3, 0.5), float)
    assert isinstance(delta_c(1.0, 0.5), float)
    g = ZILTradeoff(0.5, 0.05, d=3)
    assert isinstance(g.delta(1.0), float)
    assert np.shape(g.delta(np.ones((2, 3)))) == (2, 3)
    assert np.shape(g.tradeoff(np.full((4, 1), 0.2))) == (4, 1)


@pytest.mark.parametrize("exact", [False, True])
def test_zil_tradeoff_endpoints(exact):
    dlt = 0.05
    g = ZILTradeoff(0.7, dlt, d=1 if exact else 5, exact_laplace=exact)
    assert g.tradeoff(0.0) == pytest.approx(1 - dlt, abs=1e-15)
    assert np.all(g.tradeoff(np.array([1 - dlt, 0.96, 0.99, 1.0])) == 0.0)
    b = g.tradeoff(GRID)
    assert np.all(np.diff(b) <= 1e-15) and np.all(b <= 1 - GRID + 1e-15)
    assert np.all(np.diff(b, 2) >= -1e-12)


def test_beta_c_zil_is_the_shrinkage():
    a = np.linspace(0, 0.9, 50)
    assert np.allclose(beta_c_zil(a, 0.5, 0.1), 0.9 * beta_c(a / 0.9, 0.5), atol=1e-15)


# ------------------------------------------------------------------ d = 1 exact Laplace
@pytest.mark.parametrize("c", [0.2, 0.5, 1.7])
def test_laplace_tradeoff_matches_neyman_pearson(c):
    """SL_1(I) = Laplace(scale 1/sqrt 2); its LR is monotone, so the MP test is x > quantile."""
    scale = 1 / SQRT2
    a = np.linspace(0, 1, 201)
    expected = stats.laplace(loc=c, scale=scale).cdf(stats.laplace(scale=scale).ppf(1 - a))
    assert np.allclose(laplace_tradeoff(a, c), expected, atol=1e-12)
    assert np.all(laplace_tradeoff(a, c) >= approx_dp_tradeoff(a, SQRT2 * c, 0.0) - 1e-12)
    assert np.all(laplace_tradeoff(a, c) >= beta_c(a, c) - 1e-12)  # Thm 3.2(ii), d = 1


def test_laplace_reference_values():
    assert np.allclose(laplace_tradeoff([0.05, 0.2, 0.5], 0.5), [0.899, 0.594, 0.247], atol=5e-4)
    a = np.linspace(0, 1, 101)
    assert np.allclose(
        laplace_tradeoff_zil(a, 0.5, 0.05),
        np.where(a <= 0.95, 0.95 * laplace_tradeoff(np.minimum(a / 0.95, 1), 0.5), 0.0),
    )


# ------------------------------------------------------------------------ Monte Carlo
N_MC = 200_000
MC_REF = {2: [0.851, 0.543, 0.227], 4: [0.810, 0.533, 0.223]}
MC_ALPHAS = np.array([0.05, 0.2, 0.5])


def _mc_se(alpha: np.ndarray, beta: np.ndarray, n: int) -> np.ndarray:
    """Binomial standard error of the empirical-ROC estimate at alpha.

    The beta count is binomial (variance beta(1-beta)/n); the threshold is a P-sample
    quantile whose alpha is binomial too (alpha(1-alpha)/n), propagated through the slope
    |T'(alpha)| <= (1 - beta)/alpha (convexity with T(0) = 1).
    """
    slope = (1 - beta) / alpha
    return np.sqrt((beta * (1 - beta) + alpha * (1 - alpha) * slope**2) / n)


@pytest.mark.parametrize("d", [2, 4])
def test_montecarlo_matches_reference_values(d):
    ref = np.array(MC_REF[d])
    est = tradeoff_montecarlo(MC_ALPHAS, d, 0.5, n_draws=N_MC, rng=make_rng(20240 + d))
    # 4 SE; sqrt(2) because the reference is itself an MC estimate (assumed >= N_MC draws);
    # 5e-4 for its rounding to 3 decimals
    tol = 4 * SQRT2 * _mc_se(MC_ALPHAS, ref, N_MC) + 5e-4
    assert np.all(np.abs(est - ref) <= tol), (est, ref, tol)


def test_montecarlo_above_beta_c_and_decreasing_in_d():
    a = np.array([0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9])
    bound = beta_c(a, 0.5)
    est2 = tradeoff_montecarlo(a, 2, 0.5, n_draws=N_MC, rng=make_rng(7))
    est8 = tradeoff_montecarlo(a, 8, 0.5, n_draws=N_MC, rng=make_rng(8))
    tol = 4 * _mc_se(a, bound, N_MC)
    assert np.all(est2 >= bound - tol)
    assert np.all(est8 >= bound - tol)
    # T_{2,c} - T_{8,c} at alpha = 0.05 is ~0.06, far beyond MC error
    assert est2[1] > est8[1] + 8 * _mc_se(a[1:2], bound[1:2], N_MC)[0]


def test_montecarlo_d1_is_exact_and_estimate_tradeoff_shrinks():
    assert np.allclose(tradeoff_montecarlo(GRID, 1, 0.5), laplace_tradeoff(GRID, 0.5))
    g = ZILTradeoff(0.5, 0.05, d=4)
    a = np.array([0.0, 0.1, 0.5, 0.96])
    est = g.estimate_tradeoff(a, n_draws=50_000, rng=make_rng(3))
    assert est[-1] == 0.0
    base = tradeoff_montecarlo(a[:3] / 0.95, 4, 0.5, n_draws=50_000, rng=make_rng(3))
    assert np.allclose(est[:3], 0.95 * base)
    with pytest.raises(ValidationError):
        ZILTradeoff(0.5, 0.05).estimate_tradeoff(0.1)


# ---------------------------------------------------------------- (eps, delta) conversion
def test_paper_calibration_example():
    assert delta_tilde(0.8, 0.5, 0.05) == pytest.approx(0.1690, abs=1e-4)
    c = calibrate_c(0.8, 0.17, 0.05)
    assert c == pytest.approx(0.5025, abs=1e-4)
    assert delta_tilde(0.8, c, 0.05) <= 0.17
    assert delta_tilde(0.8, c, 0.05) == pytest.approx(0.17, abs=1e-12)
    # independent root of the paper's step 1 by bisection
    root = optimize.brentq(lambda x: delta_tilde(0.8, x, 0.05) - 0.17, 1e-6, 10, xtol=1e-14)
    assert c == pytest.approx(root, rel=1e-10)


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize(
    ("eps", "target", "dlt"), [(0.3, 0.5, 0.1), (2.0, 0.06, 0.05), (5.0, 0.9, 0.0)]
)
def test_calibrate_c_round_trip(exact, eps, target, dlt):
    c = calibrate_c(eps, target, dlt, exact_laplace=exact)
    assert delta_tilde(eps, c, dlt, exact_laplace=exact) <= target
    assert delta_tilde(eps, c * (1 + 1e-9), dlt, exact_laplace=exact) > target  # largest c


def test_delta_c_at_zero_and_tail():
    for c in (0.1, 0.5, 2.0, 7.0):
        assert delta_c(0.0, c) == pytest.approx(1 - math.exp(-c / SQRT2), rel=1e-14)
        big = np.array([1e3, 1e4, 1e6])
        # eps delta_c(eps) = c^2/2 (1 - O(c^2/eps)); the relative gap shrinks like 1/eps
        gap = np.abs(big * delta_c(big, c) / (c**2 / 2) - 1)
        assert np.all(gap <= c**2 / big) and np.all(np.diff(gap) < 0)
    assert delta_c(np.inf, 0.5) == 0.0


def test_unreachable_target():
    for dlt in (0.17, 0.2):
        with pytest.raises(UnreachableTargetError, match="without noise") as info:
            calibrate_c(0.8, 0.17, dlt)
        assert "zero_prob < delta" in str(info.value) and "larger delta" in str(info.value)
    with pytest.raises(UnreachableTargetError):
        calibrate_lam(1.0, 0.05, 0.1, 2)


@pytest.mark.parametrize(
    "args", [(0.0, 0.1, 0.05), (-1, 0.1, 0.05), (1, 1.0, 0.05), (1, 0.1, 1.0), (1, 0.1, -0.1)]
)
def test_calibrate_c_validates(args):
    with pytest.raises(PrivacyParameterError):
        calibrate_c(*args)


def test_input_validation():
    with pytest.raises(ValidationError):
        beta_c(1.5, 0.5)
    with pytest.raises(ValidationError):
        beta_c(np.nan, 0.5)
    with pytest.raises(PrivacyParameterError):
        beta_c(0.5, 0.0)
    with pytest.raises(PrivacyParameterError):
        delta_c(-1.0, 0.5)
    with pytest.raises(ValidationError):
        ZILTradeoff(0.5, 0.05, d=3, exact_laplace=True)
    with pytest.raises(PrivacyParameterError):
        ZILTradeoff(0.5, 1.0)


# ------------------------------------------------------ profiles are conjugates of curves
_ALPHA_FINE = np.unique(np.concatenate([np.linspace(0, 1, 40001), np.logspace(-14, 0, 8001)]))


def _numeric_profile(f, eps: float) -> float:
    """1 - min_alpha (f(alpha) + e^eps alpha), by a fine grid refined with a bounded search."""
    vals = np.asarray(f(_ALPHA_FINE)) + math.exp(eps) * _ALPHA_FINE
    i = int(np.argmin(vals))
    lo, hi = _ALPHA_FINE[max(i - 1, 0)], _ALPHA_FINE[min(i + 1, _ALPHA_FINE.size - 1)]
    best = vals[i]
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda x: float(f(x)) + math.exp(eps) * x,
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-14},
        )
        best = min(best, res.fun)
    return 1.0 - best


EPS_CHECK = [0.0, 0.3, 0.8, 1.5, 3.0, 6.0]


@pytest.mark.parametrize(("eps0", "dlt"), [(1.0, 0.0), (0.5, 1e-3), (2.0, 0.1)])
def test_approx_dp_profile_is_conjugate(eps0, dlt):
    g = ApproxDP(eps0, dlt)
    for eps in EPS_CHECK:
        assert g.delta(eps) == pytest.approx(_numeric_profile(g.tradeoff, eps), abs=1e-7)


@pytest.mark.parametrize(
    ("c", "dlt", "d"), [(0.5, 0.05, 1), (1.3, 0.0, 1), (0.5, 0.05, 6), (2.0, 0.2, None)]
)
def test_zil_profile_is_conjugate_of_its_tradeoff(c, dlt, d):
    """delta~ (Thm 3.3; Laplace for d = 1) is the conjugate of T_{1,c,delta} or beta_{c,delta}."""
    g = ZILTradeoff(c, dlt, d=d)
    assert g.exact_laplace == (d == 1)
    for eps in EPS_CHECK:
        assert g.delta(eps) == pytest.approx(_numeric_profile(g.tradeoff, eps), abs=1e-7)


def test_laplace_delta_formula():
    e = np.linspace(0, 3, 31)
    assert np.allclose(laplace_delta(e, 1.0), np.maximum(0, 1 - np.exp((e - SQRT2) / 2)))
    assert laplace_delta(SQRT2 + 0.1, 1.0) == 0.0


@pytest.mark.parametrize(("c", "dlt", "d"), [(0.5, 0.05, 1), (0.5, 0.05, 4), (3.0, 0.0, 2)])
def test_epsilon_inverts_delta(c, dlt, d):
    g = ZILTradeoff(c, dlt, d=d)
    for eps in (0.05, 0.4, 1.0, 2.5, 10.0):
        target = float(g.delta(eps))
        if target > dlt + 1e-12:
            assert g.epsilon(target) == pytest.approx(eps, rel=1e-8)
    assert g.epsilon(float(g.delta(0.0))) == 0.0
    assert g.epsilon(0.999) == 0.0
    if dlt > 0:
        assert g.epsilon(dlt / 2) == math.inf
    if d == 1:  # exact Laplace: delta~ reaches delta at eps0 = sqrt(2) c
        assert g.epsilon(dlt) == pytest.approx(SQRT2 * c)
    else:
        assert g.epsilon(dlt) == math.inf


# ------------------------------------------------------------------ guarantee objects
def test_zil_guarantee_units():
    g = ZILGuarantee(lam=0.5, zero_prob=0.1, n_noised=3)
    assert g.n_noised == 3
    assert g.c_individual == pytest.approx(math.sqrt(3) / 0.5)  # the unit cube's diameter
    assert g.c_attribute == pytest.approx(2.0)
    assert not g.individual.exact_laplace and g.individual.d == 3
    assert g.delta(1.0) == g.individual.delta(1.0)
    assert g.epsilon(0.3) == g.individual.epsilon(0.3)
    assert np.allclose(g.tradeoff(GRID), g.individual.tradeoff(GRID))
    assert np.all(g.attribute.tradeoff(GRID) >= g.individual.tradeoff(GRID) - 1e-15)
    data = json.loads(json.dumps(g.to_dict()))
    assert data["c_attribute"] == pytest.approx(2.0) and data["individual"]["d"] == 3
    assert ZILTradeoff.from_dict(data["attribute"]).label == g.attribute.label
    text = g.summary()
    for piece in ("individual", "attribute", "released exactly", "c^2/(2 eps)", "GDP"):
        assert piece in text
    assert len(text.splitlines()) < 20
    assert "T_{3," in g.individual.label and "beta bound" in g.individual.label

    one = ZILGuarantee(lam=1.0, zero_prob=0.05, n_noised=1)
    assert one.individual.exact_laplace and one.c_individual == one.c_attribute == 1.0
    assert ZILGuarantee(1.0, 0.05, n_noised=4).c_individual == pytest.approx(2.0)


@pytest.mark.parametrize("unit", ["individual", "attribute"])
@pytest.mark.parametrize("n_noised", [1, 3])
def test_calibrate_lam_round_trip(unit, n_noised):
    lam = calibrate_lam(1.0, 0.2, 0.05, n_noised, unit=unit)
    g = ZILGuarantee(lam, 0.05, n_noised)
    guarantee = g.individual if unit == "individual" else g.attribute
    assert guarantee.delta(1.0) <= 0.2 + 1e-12
    assert guarantee.delta(1.0) == pytest.approx(0.2, abs=1e-9)
    with pytest.raises(ValidationError, match="unit"):
        calibrate_lam(1.0, 0.2, 0.05, n_noised, unit="LDP")


# ------------------------------------------------------------------------------ plots
def test_plot_smoke(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privest.accounting.plot import plot_guarantee, plot_tradeoffs

    g = ZILGuarantee(lam=1.0, zero_prob=0.05, n_noised=2)
    ax = g.plot(epsilons=(0.5, 1.0))
    assert ax.get_xlabel() == "type I error α" and ax.get_ylabel() == "type II error β"
    plot_guarantee(ApproxDP(1.0, 0.01), ax=ax)
    a = np.linspace(0, 1, 101)
    curves = {"beta_0.5": (a, beta_c(a, 0.5)), "T_1,0.5": (a, laplace_tradeoff(a, 0.5))}
    ax2 = plot_tradeoffs(curves)
    out = tmp_path / "tradeoff.png"
    ax.figure.savefig(out)
    ax2.figure.savefig(tmp_path / "overlay.png")
    assert out.stat().st_size > 1000
    plt.close("all")

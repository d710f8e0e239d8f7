"""The ePTR adapter, classic PTR and the Gaussian mechanism (paper 001, Algorithms 1-2, eq. (3)).

Statistical tolerances: binomial z-tests at |z| < 4 and goodness-of-fit p-values > 1e-4, with
fixed seeds.
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privest.errors import PrivacyParameterError, ValidationError
from privest.mechanisms.eptr import (
    EPTR,
    eptr_noise_scale,
    eptr_pair_divergence,
    eptr_step,
    ptr_threshold,
    release_probability,
)
from privest.mechanisms.gaussian import GaussianMechanism, c_delta, gaussian_delta, gaussian_sigma
from privest.mechanisms.ptr import ClassicPTR, classic_ptr_probability
from privest.projection import project_rows
from privest.rng import make_rng

TABLE = [  # Algorithm 2, computed independently: eps, delta, M, q(0)
    (1.0, 0.01, 10.210340, 0.00602874),
    (0.5, 0.01, 19.420681, 0.00772782),
    (1.5, 0.01, 7.140227, 0.00470146),
    (4.0, 0.01, 3.302585, 0.00135152),
    (2**3.25, 0.01, 1.968118, 8.59208e-5),
    (1.0, 2000.0**-3, 46.605415, 7.58163e-11),
]


@pytest.mark.parametrize(("eps", "delta", "m", "q0"), TABLE)
def test_threshold_and_release_probability_match_the_spec_table(eps, delta, m, q0):
    assert ptr_threshold(eps, delta) == pytest.approx(m, abs=1e-6)
    assert float(release_probability(0.0, eps, delta)) == pytest.approx(q0, rel=1e-5)
    assert float(release_probability(ptr_threshold(eps, delta), eps, delta)) == 0.5
    # q(0) <= delta e^{-eps/2}, 1 - q(2M) <= delta and the expit symmetry 1 - q(2M) = q(0)
    assert q0 <= delta * math.exp(-eps / 2)
    one_minus = 1 - float(release_probability(2 * m, eps, delta))
    assert one_minus <= delta
    m_exact = ptr_threshold(eps, delta)
    assert 1 - float(release_probability(2 * m_exact, eps, delta)) == pytest.approx(
        float(release_probability(0.0, eps, delta)), rel=1e-6
    )


@pytest.mark.parametrize(("eps", "delta"), [(0.5, 0.01), (1.0, 1e-6), (4.0, 0.01), (9.0, 0.01)])
def test_release_probability_is_half_eps_lipschitz_in_log_space(eps, delta):
    m = ptr_threshold(eps, delta)
    g = np.linspace(0, 4 * m, 2001)
    q, q1 = release_probability(g, eps, delta), release_probability(g + 1, eps, delta)
    assert np.all(q1 / q <= math.exp(eps / 2) * (1 + 1e-12))
    # 1 - q(g) = q(2M - g) by the symmetry of expit (computed without cancellation)
    not_q, not_q1 = (
        release_probability(2 * m - g, eps, delta),
        release_probability(2 * m - g - 1, eps, delta),
    )
    assert np.allclose(not_q[:50], 1 - q[:50], rtol=1e-9)
    assert np.all(not_q / not_q1 <= math.exp(eps / 2) * (1 + 1e-12))
    assert np.allclose(q, 1 / (1 + np.exp(-eps * (g - m) / 2)))


def test_worked_constants():
    assert math.exp(-10) == pytest.approx(4.5399929762e-5, rel=1e-10)
    assert c_delta(0.01) == pytest.approx(3.107511, abs=1e-6)
    assert c_delta(2000.0**-3) == pytest.approx(6.786140, abs=1e-6)
    assert float(release_probability(5.0, 1.0, 0.01)) == pytest.approx(0.068806, abs=1e-6)


def _z(successes, trials, p):
    return (successes - trials * p) / math.sqrt(trials * p * (1 - p))


def test_threshold_form_of_eptr_matches_the_closed_form():
    """Pass iff g + Logistic(0, 2/eps) > M (4e5 draws), and eptr_step's own frequency."""
    rng = np.random.default_rng(11)
    eps, delta, draws = 1.0, 0.01, 400_000
    for g in (0.0, 5.0, 10.0, 15.0, 25.0):
        q = float(release_probability(g, eps, delta))
        hits = int(np.sum(g + rng.logistic(0, 2 / eps, draws) > ptr_threshold(eps, delta)))
        assert abs(_z(hits, draws, q)) < 4, (g, hits / draws, q)
    gen = make_rng(5)
    q = float(release_probability(8.0, eps, delta))
    hits = sum(eptr_step(np.zeros(1), 8.0, 1.0, eps, delta, gen)[0] for _ in range(20_000))
    assert abs(_z(hits, 20_000, q)) < 4


def test_classic_ptr_laplace_threshold_matches_its_closed_form():
    rng = np.random.default_rng(12)
    eps, delta, draws = 1.0, 0.01, 400_000
    cut = 2 / eps * math.log(1 / delta)
    for d in (0.0, 4.0, 9.2, 12.0, 20.0):
        q = float(classic_ptr_probability(d, eps, delta))
        hits = int(np.sum(d + rng.laplace(0, 2 / eps, draws) > cut))
        assert abs(_z(hits, draws, q)) < 4, (d, hits / draws, q)
    # continuity at ln(1/delta) = eps D / 2, where q = 1/2
    d_star = 2 * math.log(1 / delta) / eps
    assert float(classic_ptr_probability(d_star, eps, delta)) == pytest.approx(0.5)
    assert float(classic_ptr_probability(d_star + 1e-9, eps, delta)) == pytest.approx(0.5)


def test_classic_ptr_release_and_honest_budget():
    mech = ClassicPTR(lambda x: np.mean(x), lambda x: 100.0, 0.1, 1.0, 0.01, noise_multiplier=1)
    assert mech.guarantee.eps == pytest.approx(1.5)  # the paper's Algorithm 1 spends 1.5 eps
    assert ClassicPTR(np.mean, lambda x: 0.0, 0.1, 1.0, 0.01).guarantee.eps == pytest.approx(1.0)
    rel = mech.release(np.ones(10), rng=1)
    assert rel.released and rel.value.shape == (1,)
    gen = make_rng(4)
    fails = ClassicPTR(np.mean, lambda x: 0.0, 0.1, 1.0, 0.01, bottom=0.0)
    outs = [fails.release(np.ones(10), rng=gen) for _ in range(2000)]
    assert sum(o.released for o in outs) <= 25  # q = delta/2: 10 expected, sd 3.2
    assert all(float(o.output[0]) == 0.0 for o in outs if not o.released)


def test_noise_law_given_release():
    """theta_tilde - theta_hat ~ N(0, sigma^2 I_p), sigma = 2 alpha c_delta / eps (KS, chi2)."""
    eps, delta, alpha, p = 2.0, 0.01, 0.3, 4
    sigma = eptr_noise_scale(alpha, eps, delta)
    assert sigma == pytest.approx(2 * alpha * c_delta(delta) / eps)
    theta = np.array([1.0, -2.0, 0.5, 3.0])
    gen = make_rng(21)
    draws = np.array([eptr_step(theta, 1e6, alpha, eps, delta, gen)[1] for _ in range(4000)])
    z = (draws - theta) / sigma
    assert stats.kstest(z.ravel(), "norm").pvalue > 1e-4
    norms2 = np.sum(z**2, axis=1)
    assert stats.kstest(norms2, stats.chi2(p).cdf).pvalue > 1e-4
    edges = stats.chi2(p).ppf(np.linspace(0, 1, 11))
    counts = np.histogram(norms2, edges)[0]
    assert stats.chisquare(counts).pvalue > 1e-4
    # negative control: the tests detect a 20% wrong scale
    assert stats.kstest((z * 1.2).ravel(), "norm").pvalue < 1e-4


def test_pair_divergence_matches_numerical_integration():
    eps, delta, alpha = 1.0, 0.01, 0.5
    s = eptr_noise_scale(alpha, eps, delta)
    m = ptr_threshold(eps, delta)
    for g, gp, dist in [(12.0, 11.0, 0.4), (3.0, 2.0, 0.5), (30.0, 29.0, 2.0), (0.0, 0.0, 5.0)]:
        q = float(release_probability(g, eps, delta))
        qp = float(release_probability(gp, eps, delta))
        dens = lambda x, q=q, qp=qp, d=dist: max(  # noqa: E731
            0.0, q * stats.norm.pdf(x, 0, s) - math.exp(eps) * qp * stats.norm.pdf(x, d, s)
        )
        num = integrate.quad(
            dens, -40 * s, 40 * s + dist, limit=800, points=[dist / 2], epsabs=1e-13
        )[0]
        num += max(0.0, (1 - q) - math.exp(eps) * (1 - qp))
        assert eptr_pair_divergence(g, gp, dist, alpha, eps, delta) == pytest.approx(
            num, abs=1e-9
        ), (g, gp, dist, m)


def test_pair_divergence_at_most_delta_whenever_the_salbo_conditions_hold():
    """Theorem 2.2 on abstract pairs: |g - g'| <= 1 and D <= alpha when either g > 0."""
    for eps, delta in [(0.5, 0.01), (1.0, 1e-6), (4.0, 0.01), (9.5, 0.01)]:
        alpha = 1.0
        m = ptr_threshold(eps, delta)
        worst = 0.0
        for g in np.linspace(0, 3 * m, 121):
            for gp in (max(g - 1, 0.0), g, g + 1):
                dist = alpha if max(g, gp) > 0 else 50.0  # both zero: any distance
                for a, b in ((g, gp), (gp, g)):
                    worst = max(worst, eptr_pair_divergence(a, b, dist, alpha, eps, delta))
        assert worst <= delta * (1 + 1e-9), (eps, delta, worst)


def test_pair_divergence_negative_controls():
    """Breaking either SaLBo condition (or the noise scale) makes H exceed delta."""
    eps, delta = 1.0, 0.01
    m = ptr_threshold(eps, delta)
    # (S) broken: a safe-looking gamma while the estimates differ by 4 alpha
    assert eptr_pair_divergence(3 * m, 3 * m, 4.0, 1.0, eps, delta) > delta
    # (L) broken: gamma jumps by 6 across one replacement around M
    assert eptr_pair_divergence(m + 3, m - 3, 0.0, 1.0, eps, delta) > delta
    # noise at a quarter of the calibrated scale
    s = eptr_noise_scale(1.0, eps, delta) / 4
    assert eptr_pair_divergence(3 * m, 3 * m, 1.0, 1.0, eps, delta, noise_scale=s) > delta


def test_gaussian_mechanism_calibration():
    assert gaussian_sigma(1.0, 0.01, 2.0) == pytest.approx(2 * 3.107511, abs=1e-5)
    assert gaussian_sigma(1.0, 0.01, 1.0, "paper_eq3") == pytest.approx(
        math.sqrt(2) * gaussian_sigma(1.0, 0.01, 1.0)
    )
    mech = GaussianMechanism(epsilon=1.0, delta=0.01, sensitivity=1.0, calibration="classic")
    assert gaussian_delta(1.0, 1.0, mech.sigma) <= 0.01
    assert gaussian_delta(1.0, 1.0, mech.sigma / 2) > 0.01  # negative control
    out = mech.release(np.zeros(1), rng=1)
    assert np.asarray(out).shape == (1,) and out.guarantee is mech.guarantee
    assert float(mech.guarantee.delta(1.0)) <= 0.01
    three = GaussianMechanism(epsilon=1.0, delta=0.01, sensitivity=1.0, dims=3)
    assert np.asarray(three.release(np.zeros(3), rng=1)).shape == (3,)
    with pytest.raises(ValidationError, match="dims"):
        mech.release(np.zeros(3), rng=1)
    with pytest.raises(PrivacyParameterError):
        GaussianMechanism(epsilon=8.0, delta=0.01, sensitivity=1.0, calibration="classic")
    assert GaussianMechanism(epsilon=8.0, delta=0.01, sensitivity=1.0, calibration="analytic")
    with pytest.raises(ValidationError):
        gaussian_sigma(1.0, 0.01, 1.0, "other")


def test_motivating_ols_example_has_unbounded_global_sensitivity():
    """Section 1.1: X_a = {(u, 1), (0, 0) x (n-1)} vs (-u, 1): the gap is 2/u."""

    def ols(x, y):
        return np.sum(x * y) / np.sum(x**2)

    for u in (1.0, 0.1, 1e-3):
        x = np.zeros(50)
        y = np.zeros(50)
        x[0], y[0] = u, 1.0
        xp = x.copy()
        xp[0] = -u
        assert abs(ols(x, y) - ols(xp, y)) == pytest.approx(2 / u)


def _adapter(**kw):
    args = dict(
        estimator=lambda d: np.array([np.mean(d), np.median(d)]),
        safety_lower_bound=lambda d: 100.0,
        local_sensitivity=0.1,
        epsilon=1.0,
        delta=0.01,
        dim=2,
    )
    args.update(kw)
    return EPTR(**args)


def test_adapter_release_result_and_explain():
    data = np.arange(20.0)
    rel = _adapter().release(data, rng=3)
    assert rel.released and rel.value.shape == (2,) and rel.output is rel.value
    assert rel.guarantee.eps == 1.0 and rel.guarantee.dlt == 0.01
    assert not hasattr(rel, "gamma") and "released" in rel.summary()
    info = _adapter().explain(data)
    assert info["gamma"] == 100.0 and info["M"] == pytest.approx(10.210340, abs=1e-6)
    np.testing.assert_allclose(info["estimate"], [9.5, 9.5])
    # same seed, same output
    np.testing.assert_array_equal(
        _adapter().release(data, rng=9).value, _adapter().release(data, rng=9).value
    )


def test_adapter_failure_output_is_data_independent():
    gen = make_rng(8)
    mech = _adapter(safety_lower_bound=lambda d: 0.0, bottom=np.array([5.0, 5.0]))
    outs = [mech.release(np.arange(20.0) * k, rng=gen) for k in range(1, 400)]
    failed = [o for o in outs if not o.released]
    assert len(failed) >= 390
    assert all(o.value is None and np.array_equal(o.output, [5.0, 5.0]) for o in failed)
    sampler = _adapter(safety_lower_bound=lambda d: 0.0, bottom=lambda r: r.uniform(-1, 1, 2))
    o = sampler.release(np.arange(5.0), rng=1)
    assert not o.released and o.output.shape == (2,)
    assert _adapter(safety_lower_bound=lambda d: 0.0).release(np.ones(3), rng=1).output is None


@pytest.mark.parametrize(
    ("kw", "exc"),
    [
        ({"epsilon": 0.0}, PrivacyParameterError),
        ({"epsilon": -1.0}, PrivacyParameterError),
        ({"delta": 0.0}, PrivacyParameterError),
        ({"delta": 1.0}, PrivacyParameterError),
        ({"epsilon": 20.0}, PrivacyParameterError),
        ({"local_sensitivity": 0.0}, ValidationError),
        ({"dim": 0}, ValidationError),
        ({"bottom": np.zeros(3)}, ValidationError),
        ({"estimator": 3}, ValidationError),
    ],
)
def test_adapter_rejects_bad_parameters(kw, exc):
    with pytest.raises(exc):
        _adapter(**kw)


def test_adapter_checks_estimator_output_and_gamma():
    with pytest.raises(ValidationError, match="shape"):
        _adapter(estimator=lambda d: np.zeros(3)).release(np.ones(3), rng=1)
    with pytest.raises(ValidationError, match="NaN"):
        _adapter(estimator=lambda d: np.array([np.nan, 0])).release(np.ones(3), rng=1)
    with pytest.raises(ValidationError, match="safety_lower_bound"):
        _adapter(safety_lower_bound=lambda d: -1.0).release(np.ones(3), rng=1)


@pytest.mark.parametrize(("eps", "multiplier"), [(8.0, 1.0), (20.0, 2.0), (6.0, 0.5)])
def test_classic_ptr_refuses_a_gaussian_step_that_misses_its_delta(eps, multiplier):
    """eps = 8 at multiplier 1 claimed (12, 0.015) with a Gaussian exact delta of 0.0178."""
    sigma = multiplier * c_delta(0.01) / eps  # alpha = 1
    assert gaussian_delta(eps / multiplier, 1.0, sigma) > 0.01
    with pytest.raises(PrivacyParameterError, match="exact delta"):
        ClassicPTR(np.mean, lambda x: 0.0, 1.0, eps, 0.01, noise_multiplier=multiplier)


@pytest.mark.parametrize(("eps", "multiplier"), [(1.0, 1.0), (6.0, 1.0), (13.0, 2.0)])
def test_classic_ptr_accepts_a_gaussian_step_that_meets_its_delta(eps, multiplier):
    mech = ClassicPTR(np.mean, lambda x: 0.0, 0.3, eps, 0.01, noise_multiplier=multiplier)
    assert gaussian_delta(eps / multiplier, 0.3, mech.noise_scale) <= 0.01
    assert mech.guarantee.eps == pytest.approx(eps / 2 + eps / multiplier)


def _seed_where(passes: bool, q: float) -> int:
    """The first seed whose first uniform draw makes the ePTR coin (U < q) come out ``passes``."""
    return next(s for s in range(10_000) if (make_rng(s).random() < q) == passes)


def test_adapter_nan_estimate_at_gamma_zero_outputs_bottom():
    """All-zero data: gamma = 0 and the estimator is NaN. release must not raise (that would be
    a data-dependent error); the estimate is not even computed unless the coin says release."""
    calls = []

    def ratio(d):
        calls.append(1)
        return np.array([np.mean(d) / np.std(d)])

    data = np.zeros(50)
    mech = _adapter(estimator=ratio, safety_lower_bound=lambda d: 0.0, dim=1, bottom=0.0)
    with np.errstate(invalid="ignore"):
        rel = mech.release(data, rng=1)
        assert not rel.released and rel.value is None and np.array_equal(rel.output, [0.0])
        assert calls == []  # coin first: no release, no estimate
        q0 = float(release_probability(0.0, 1.0, 0.01))
        seed = _seed_where(True, q0)  # the coin says release (probability q(0))
        rel = mech.release(data, rng=seed)
        assert calls == [1] and not rel.released and np.array_equal(rel.output, [0.0])
        # gamma > 0 with a non-finite estimate: the SaLBo is invalid, a caller bug
        bad = _adapter(estimator=ratio, safety_lower_bound=lambda d: 100.0, dim=1)
        with pytest.raises(ValidationError, match="SaLBo"):
            bad.release(data, rng=1)


def test_adapter_draws_in_the_same_order_as_before():
    """Coin first, then the noise: a seeded release equals eptr_step on the computed estimate."""
    data = np.arange(20.0)
    rel = _adapter().release(data, rng=5)
    ok, value = eptr_step(np.array([9.5, 9.5]), 100.0, 0.1, 1.0, 0.01, make_rng(5))
    assert rel.released and ok
    np.testing.assert_array_equal(rel.value, value)


def test_eptr_step_checks_dim_and_evaluates_a_callable_only_on_release():
    with pytest.raises(ValidationError, match="expected \\(2,\\)"):
        eptr_step(np.zeros(3), 1e6, 1.0, 1.0, 0.01, make_rng(1), dim=2)
    calls = []

    def theta():
        calls.append(1)
        return np.zeros(2)

    assert eptr_step(theta, 0.0, 1.0, 1.0, 0.01, make_rng(1), dim=2) == (False, None)
    assert calls == []
    ok, value = eptr_step(theta, 1e6, 1.0, 1.0, 0.01, make_rng(1), dim=2)
    assert ok and calls == [1] and value.shape == (2,)


@pytest.mark.parametrize("norm", [1e100, 1e155, 1e200, 1e300])
def test_project_rows_is_overflow_safe(norm):
    X = np.array([[0.6, 0.8], [0.3, -0.4], [0.6 * norm, -0.8 * norm]])
    scale, outside = project_rows(X, 2.0)
    assert outside.tolist() == [False, False, True]
    np.testing.assert_allclose(X[2] * scale[2], [1.2, -1.6], rtol=1e-14)
    assert scale[0] == scale[1] == 1.0


def test_project_rows_beyond_the_float_range_and_with_underflow():
    huge = np.array([[1.5e308, 1.5e308], [0.1, 0.0]])  # norm 2.1e308 > the largest float
    scale, outside = project_rows(huge, 1.0)
    assert outside.tolist() == [True, False]
    np.testing.assert_allclose(huge[0] * scale[0], [1 / math.sqrt(2)] * 2, rtol=1e-12)
    tiny = np.array([[3e-170, 4e-170], [0.0, 0.0]])  # squared norm underflows to 0
    scale, outside = project_rows(tiny, 1e-175)
    assert outside.tolist() == [True, False]
    np.testing.assert_allclose(tiny[0] * scale[0], [0.6e-175, 0.8e-175], rtol=1e-12)
    assert scale[1] == 1.0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_project_rows_rejects_non_finite_rows(bad):
    X = np.array([[0.1, 0.2], [bad, 0.0]])
    with pytest.raises(ValidationError, match="NaN or inf"):
        project_rows(X, 1.0)

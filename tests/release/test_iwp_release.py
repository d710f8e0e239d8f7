"""The IWP release (paper 004, Sec. 3): noise laws, bounds, storage and privacy."""

import math

import numpy as np
import pytest
from scipy import special, stats

import privest.release.examples as examples_module
from privest.accounting.gaussian import GaussianRRGuarantee, LocalDP, gaussian_sigma
from privest.audit.auditor import audit
from privest.errors import BoundsError, PrivacyParameterError, StoreError
from privest.learn.iwp_sgd import IWPSGDRegressor
from privest.mechanisms.gaussian import gaussian_delta
from privest.release.examples import (
    PrivateExamples,
    _release_with_sigma,
    check_gaussian_part,
    release_examples,
    release_regression_examples,
)


def _delta(eps, sigma, sensitivity):
    """Exact Gaussian profile (Balle-Wang Thm 8) at noise sigma and L2 sensitivity."""
    return gaussian_delta(eps, sensitivity, sigma)


def _data(n=200_000, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return X, y


def test_feature_noise_is_gaussian_with_the_calibrated_scale():
    X, y = _data()
    rel = release_examples(X, y, epsilon_x=1.0, epsilon_y=1.0, delta=1e-5, bounds=(-1, 1), rng=1)
    assert rel.sigma2 == pytest.approx(8 * math.log(1.25e5) * 3 / 1.0)  # R^2 = p
    z = ((rel.X - X) / rel.sigma).ravel()
    assert abs(z.std() - 1) < 0.01
    assert stats.kstest(z, "norm").pvalue > 1e-3


def test_label_flip_rate_is_randomized_response():
    X, y = _data()
    for eps_y in (0.5, 2.0):
        rel = release_examples(
            X, y, epsilon_x=1.0, epsilon_y=eps_y, delta=1e-5, bounds=(-1, 1), rng=2
        )
        keep = np.mean(rel.y == y)
        S = special.expit(eps_y)
        assert rel.keep_probability == pytest.approx(S)
        assert abs(keep - S) <= 5 * math.sqrt(S * (1 - S) / y.size)
        assert S / (1 - S) == pytest.approx(math.exp(eps_y))
        assert stats.binomtest(int(np.sum(rel.y == y)), y.size, S).pvalue > 1e-4


def test_infinite_epsilons_mean_no_noise():
    X, y = _data(1000)
    rel = release_examples(X, y, epsilon_x=math.inf, epsilon_y=math.inf, delta=0.0, x_radius=2)
    assert rel.sigma2 == 0 and np.array_equal(rel.X, X) and np.array_equal(rel.y, y)
    assert rel.flip_probability == 0


def test_guarantee_composes_feature_and_label_parts():
    X, y = _data(1000)
    rel = release_examples(X, y, epsilon_x=1.5, epsilon_y=0.5, delta=1e-6, x_radius=2, rng=3)
    assert isinstance(rel.guarantee, LocalDP)
    assert rel.guarantee.eps == 2.0 and rel.guarantee.dlt == 1e-6


def test_out_of_bounds_is_an_error_unless_projection_is_requested():
    X, y = _data(1000)
    X[:7] *= 3.0
    with pytest.raises(BoundsError, match="clip=True"):
        release_examples(X, y, epsilon_x=1, epsilon_y=1, delta=1e-5, x_radius=math.sqrt(3))
    rel = release_examples(
        X, y, epsilon_x=1, epsilon_y=1, delta=1e-5, bounds=(-1, 1), clip=True, rng=1
    )
    assert np.all(np.abs(rel.transform(np.clip(X, -1, 1))) <= 1)
    assert not hasattr(rel, "n_clipped")  # a data-dependent count is never released
    rel = release_examples(
        X, y, epsilon_x=1, epsilon_y=1, delta=1e-5, x_radius=1.0, clip=True, rng=1
    )
    assert rel.x_radius == 1.0


def test_box_is_mapped_to_the_unit_cube():
    X = np.array([[0.0, 10.0], [4.0, 30.0]])
    rel = release_examples(
        X, [0, 1], epsilon_x=1, epsilon_y=1, delta=1e-5, bounds=[(0, 4), (10, 30)], rng=1
    )
    assert np.allclose(rel.transform(X), [[-1, -1], [1, 1]])
    assert rel.x_radius == pytest.approx(math.sqrt(2))


def test_save_load_roundtrip_and_tamper_detection(tmp_path):
    X, y = _data(500)
    rel = release_examples(X, y, epsilon_x=1, epsilon_y=1, delta=1e-5, bounds=(-1, 1), rng=5)
    rel.save(tmp_path / "r")
    back = PrivateExamples.load(tmp_path / "r")
    assert np.array_equal(back.X, rel.X) and np.array_equal(back.y, rel.y)
    assert back.sigma2 == rel.sigma2 and back.guarantee.label == rel.guarantee.label
    assert np.array_equal(back.bounds, rel.bounds)
    with pytest.raises(StoreError, match="exists"):
        rel.save(tmp_path / "r")
    data = tmp_path / "r" / "data.npz"
    raw = bytearray(data.read_bytes())
    raw[-100] ^= 0xFF
    data.write_bytes(bytes(raw))
    with pytest.raises(StoreError, match="checksum"):
        PrivateExamples.load(tmp_path / "r")


def test_regression_release_noise_and_guarantee():
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(100_000, 2))
    t = rng.uniform(0, 100, size=100_000)
    rel = release_regression_examples(
        X,
        t,
        epsilon_x=1,
        epsilon_y=1,
        delta_x=5e-6,
        delta_y=5e-6,
        y_bounds=(0, 100),
        bounds=(-1, 1),
        rng=7,
    )
    assert rel.sigma2_y == pytest.approx(8 * math.log(1.25 / 5e-6))
    z = (rel.y - rel.transform_target(t)) / math.sqrt(rel.sigma2_y)
    assert abs(z.std() - 1) < 0.01
    assert rel.guarantee.eps == 2 and rel.guarantee.dlt == pytest.approx(1e-5)
    # Each Gaussian part meets its own (eps, delta) exactly (Balle-Wang profile), so the
    # composition is (eps_x + eps_y, delta_x + delta_y)-LDP; a third of the noise fails.
    assert _delta(1.0, math.sqrt(rel.sigma2_y), 2.0) <= 5e-6
    assert _delta(1.0, math.sqrt(rel.sigma2), 2 * rel.x_radius) <= 5e-6
    assert _delta(1.0, math.sqrt(rel.sigma2_y) / 3, 2.0) > 5e-6


def _regression_release(n=500, seed=0, **kw):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    t = rng.uniform(0, 100, size=n)
    args = dict(epsilon_x=1, epsilon_y=1, delta_x=5e-6, delta_y=5e-6, y_bounds=(0, 100))
    args.update(kw)
    return X, t, release_regression_examples(X, t, bounds=(-1, 1), rng=seed + 1, **args)


def test_regression_release_save_load_roundtrip(tmp_path):
    X, t, rel = _regression_release()
    rel.save(tmp_path / "reg")
    back = PrivateExamples.load(tmp_path / "reg")
    assert back.task == "regression" and back.calibration == "classic"
    assert np.array_equal(back.X, rel.X) and np.array_equal(back.y, rel.y)
    assert back.sigma2 == rel.sigma2 and back.sigma2_y == rel.sigma2_y
    assert back.delta_y == rel.delta_y == 5e-6 and back.y_bounds == (0.0, 100.0)
    assert back.classes is None and np.array_equal(back.bounds, rel.bounds)
    assert back.guarantee.label == rel.guarantee.label
    assert back.guarantee.dlt == pytest.approx(1e-5)
    assert np.array_equal(back.transform_target(t), rel.transform_target(t))
    assert back.keep_probability == 1.0
    # The loaded release fits the same model as the original (deterministic, no shuffle).
    kw = dict(batch_size=10, learning_rate=1e-3, progress=False, alpha=0.0, averaging=None,
              theta_radius=None)  # fmt: skip
    a, b = IWPSGDRegressor(**kw).fit(rel), IWPSGDRegressor(**kw).fit(back)
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(a.predict(X), b.predict(X))


# ----------------------------------------------------------------------------- privacy
PAPER_SETTINGS = [1.0, 2.5, 5.0]  # eps_x of paper 004's experiments, delta = 1e-5


@pytest.mark.parametrize("eps_x", PAPER_SETTINGS)
def test_classic_calibration_at_the_paper_settings_is_kept(eps_x):
    X, y = _data(10, p=4)
    rel = release_examples(X, y, epsilon_x=eps_x, epsilon_y=1.0, delta=1e-5, x_radius=2.0, rng=1)
    assert rel.sigma2 == pytest.approx(8 * math.log(1.25e5) * 4 / eps_x**2)  # R = 2
    assert _delta(eps_x, rel.sigma, 2 * rel.x_radius) <= 1e-5
    exact = GaussianRRGuarantee(rel.sigma, 2 * rel.x_radius, 1.0)
    assert exact.delta(rel.guarantee.eps) <= rel.guarantee.dlt


@pytest.mark.parametrize("eps_x", [10.0, 20.0])
def test_classic_calibration_is_refused_where_the_exact_profile_fails(eps_x):
    """A3 (docs/iwp-sgd.md): the classic sigma is not (eps_x, 1e-5)-DP at eps_x = 10 or 20."""
    X, y = _data(10, p=4)
    # Why: the guarantee classic mode used to advertise is false by the exact profile.
    sigma = gaussian_sigma(eps_x, 1e-5, 4.0, "classic")
    assert _delta(eps_x, sigma, 4.0) > 1e-5  # 2.27e-5 at eps_x = 10
    assert GaussianRRGuarantee(sigma, 4.0, 1.0).delta(eps_x + 1.0) > 1e-5  # 1.66e-5 at 11
    with pytest.raises(PrivacyParameterError, match="calibration='analytic'"):
        release_examples(X, y, epsilon_x=eps_x, epsilon_y=1.0, delta=1e-5, x_radius=2.0, rng=1)
    rel = release_examples(
        X,
        y,
        epsilon_x=eps_x,
        epsilon_y=1.0,
        delta=1e-5,
        x_radius=2.0,
        calibration="analytic",
        rng=1,
    )
    assert rel.guarantee.eps == eps_x + 1.0 and rel.guarantee.dlt == 1e-5
    assert _delta(eps_x, rel.sigma, 2 * rel.x_radius) <= 1e-5
    exact = GaussianRRGuarantee(rel.sigma, 2 * rel.x_radius, 1.0)
    assert exact.delta(rel.guarantee.eps) <= rel.guarantee.dlt


def test_regression_release_checks_both_gaussian_parts():
    for kw, name in (({"epsilon_x": 10.0}, "epsilon_x"), ({"epsilon_y": 10.0}, "epsilon_y")):
        with pytest.raises(PrivacyParameterError, match=f"{name}: 10 is too large"):
            _regression_release(**kw)
        *_, rel = _regression_release(**kw, calibration="analytic")
        assert _delta(rel.epsilon_x, rel.sigma, 2 * rel.x_radius) <= 5e-6
        assert _delta(rel.epsilon_y, math.sqrt(rel.sigma2_y), 2.0) <= 5e-6
        assert rel.guarantee.eps == 11.0 and rel.guarantee.dlt == pytest.approx(1e-5)
    *_, rel = _regression_release()  # the paper's (1, 1) split (App. E.2) is kept
    assert rel.sigma2_y == pytest.approx(8 * math.log(1.25 / 5e-6))


def test_the_check_catches_a_sigma_that_is_too_small(monkeypatch):
    """Negative control: the exact-profile check is not vacuous at the paper's settings."""
    eps, delta, sens = 2.5, 1e-5, 4.0
    tight = gaussian_sigma(eps, delta, sens, "analytic")  # delta(eps) = delta exactly
    assert check_gaussian_part(eps, delta, tight, sens, "analytic") <= delta
    with pytest.raises(PrivacyParameterError, match="not \\(2.5, 1e-05\\)-DP"):
        check_gaussian_part(eps, delta, 0.99 * tight, sens, "analytic")
    # The real release path refuses a calibration that returns a third of the noise.
    real = examples_module.gaussian_sigma
    monkeypatch.setattr(examples_module, "gaussian_sigma", lambda *a: real(*a) / 3)
    X, y = _data(10, p=4)
    with pytest.raises(PrivacyParameterError, match="too large for calibration='classic'"):
        release_examples(X, y, epsilon_x=eps, epsilon_y=1.0, delta=delta, x_radius=2.0, rng=1)
    with pytest.raises(PrivacyParameterError, match="epsilon_y"):
        _regression_release(epsilon_x=math.inf, delta_x=0.0)


CASES = [
    (1.0, 1.0, 1e-5, "classic"),
    (0.5, 2.0, 1e-6, "classic"),
    (4.0, 1.0, 1e-5, "analytic"),
    (2.5, 2.5, 1e-5, "analytic"),
]


@pytest.mark.parametrize("eps_x,eps_y,delta,calibration", CASES)
def test_exact_profile_of_the_release_meets_its_guarantee(eps_x, eps_y, delta, calibration):
    """Hockey-stick divergence (Balle-Wang Thm 8 composed with RR) at the calibrated sigma."""
    X, y = _data(10, p=4)
    rel = release_examples(
        X,
        y,
        epsilon_x=eps_x,
        epsilon_y=eps_y,
        delta=delta,
        x_radius=2.0,
        calibration=calibration,
        rng=1,
    )
    exact = GaussianRRGuarantee(rel.sigma, 2 * rel.x_radius, eps_y)
    assert exact.delta(rel.guarantee.eps) <= rel.guarantee.dlt
    # Negative control: a third of the noise breaks the claim.
    weak = GaussianRRGuarantee(rel.sigma / 3, 2 * rel.x_radius, eps_y)
    assert weak.delta(rel.guarantee.eps) > rel.guarantee.dlt


def _audit_samplers(eps_x, eps_y, delta, sigma_factor=1.0):
    R, p = 1.0, 2
    x = np.array([R, 0.0])
    xp = -x
    sigma = (
        release_examples(
            x[None], [1], epsilon_x=eps_x, epsilon_y=eps_y, delta=delta, x_radius=R, rng=0
        ).sigma
        * sigma_factor
    )

    def sampler(point, label):
        def sample(n, rng):
            Z = np.tile(point, (n, 1))
            lab = np.full(n, float(label))
            if sigma_factor == 1.0:  # the real release path
                rel = release_examples(
                    Z, lab, epsilon_x=eps_x, epsilon_y=eps_y, delta=delta, x_radius=R, rng=rng
                )
            else:  # the same noise step at a deliberately wrong sigma
                rel = _release_with_sigma(
                    Z,
                    lab,
                    sigma,
                    eps_y,
                    rng,
                    R,
                    None,
                    np.array([-1, 1]),
                    eps_x,
                    delta,
                    "classic",
                )
            return np.column_stack([rel.X, rel.y])

        return sample

    def llr(out):  # exact log q/p of M(x') vs M(x), x' = -x, y' = -y
        gauss = (out[:, :p] @ (xp - x) - (xp @ xp - x @ x) / 2) / sigma**2
        return gauss - out[:, p] * eps_y

    return sampler(x, 1), sampler(xp, -1), llr


def test_empirical_audit_of_the_release_on_a_worst_case_pair():
    eps_x, eps_y, delta = 0.5, 0.5, 0.05
    claimed = LocalDP(eps_x + eps_y, delta)
    sp, sq, llr = _audit_samplers(eps_x, eps_y, delta)
    res = audit(sp, sq, claimed, n=200_000, llr=llr, rng=11)
    assert not res.contradicts, res.summary()
    # Negative control: a quarter of the calibrated noise is caught by the same audit.
    sp, sq, llr = _audit_samplers(eps_x, eps_y, delta, sigma_factor=0.25)
    res = audit(sp, sq, claimed, n=200_000, llr=llr, rng=12)
    assert res.contradicts
    assert res.epsilon_lower_bound(delta) > claimed.eps

"""ZILMechanism and ZILRelease: Algorithm 1 of paper 000, validation and calibration."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privest as pv
from privest.errors import BoundsError, UnreachableTargetError, ValidationError
from privest.release.zil import output_grid

Z_TOL = 4.5


def _repeat_release(x, lam, zero_prob, n, seed, columns=None):
    """Release the same record ``n`` times (an experiment only; never do this to real data).

    The bounds are [0, 1] per column, so ``lam`` is also the absolute noise scale.
    """
    mech = pv.ZILMechanism(
        lam=lam, zero_prob=zero_prob, bounds=[(0, 1)] * (len(columns or x)), columns=columns
    )
    return mech.release(np.tile(x, (n, 1)), rng=pv.make_rng(seed))


def test_x1_is_x_plus_zil_noise():
    x = np.array([0.3, 0.5, 0.9])
    lam, delta, n = 0.8, 0.25, 100_000
    rel = _repeat_release(x, lam, delta, n, seed=1)
    z = rel.x1 - x
    exact = np.all(np.abs(z) <= output_grid(lam), axis=1)
    assert abs(exact.mean() - delta) < Z_TOL * math.sqrt(delta * (1 - delta) / n)
    # A noised coordinate lands within one grid step of x with probability about
    # 2 * grid * 0.88 / lam = 1e-6, so ~0.2 partial rows are expected: 6 or more has p < 1e-5.
    near = np.abs(z) <= output_grid(lam)
    assert np.sum(near.any(axis=1) & ~near.all(axis=1)) <= 5
    var = (1 - delta) * lam**2
    se = math.sqrt((6 * (1 - delta) - (1 - delta) ** 2) * lam**4 / n)
    assert np.all(np.abs(np.mean(z**2, axis=0) - var) < Z_TOL * se)


def test_x2_given_x_is_sl_with_full_scale():
    """X2 - x ~ SL(lam^2 I) exactly (Section 3.1 identity): every projection is Laplace."""
    x = np.array([0.1, 0.2])
    lam = 1.1
    rel = _repeat_release(x, lam, 0.1, 50_000, seed=2)
    u = rel.x2 - x
    for a in (np.array([1.0, 0.0]), np.array([0.6, -0.8])):
        law = stats.laplace(scale=lam * np.linalg.norm(a) / math.sqrt(2))
        assert stats.kstest(u @ a, law.cdf).pvalue > 1e-3
    assert np.all(np.abs(u) > 0)  # X2 never equals the raw record


def test_unnoised_columns_are_released_unchanged():
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {"a": rng.uniform(0, 1, 200), "y": rng.normal(size=200), "b": rng.uniform(0, 2, 200)}
    )
    mech = pv.ZILMechanism(lam=0.5, zero_prob=0.1, bounds={"a": (0, 1), "b": (0, 2)})
    rel = mech.release(df, rng=pv.make_rng(4))
    np.testing.assert_array_equal(rel.x1[:, 1], df["y"].to_numpy())
    np.testing.assert_array_equal(rel.x2[:, 1], df["y"].to_numpy())
    assert rel.column_names == ("a", "y", "b")
    assert rel.noised_names == ("a", "b")
    assert list(rel.frame("x2").columns) == ["a", "y", "b"]
    assert not np.allclose(rel.x1[:, 0], df["a"])


def test_release_is_immutable_and_records_its_randomness():
    mech = pv.ZILMechanism(lam=1.0, zero_prob=0.2, bounds=(0, 1))
    rel = mech.release(np.full((10, 1), 0.5), rng=pv.make_rng(5))
    assert rel.randomness == "seeded"
    with pytest.raises(ValueError):
        rel.x1[0, 0] = 1.0
    assert mech.release(np.full((3, 1), 0.5)).randomness == "secure"


def test_seeded_release_is_reproducible():
    mech = pv.ZILMechanism(lam=1.0, zero_prob=0.2, bounds=[(0, 1)] * 2)
    x = np.full((50, 2), 0.5)
    a, b = mech.release(x, rng=pv.make_rng(6)), mech.release(x, rng=pv.make_rng(6))
    np.testing.assert_array_equal(a.x1, b.x1)
    np.testing.assert_array_equal(a.x2, b.x2)


def test_released_values_sit_on_the_output_grid():
    mech = pv.ZILMechanism(lam=1.0, zero_prob=0.5, bounds=(0, 1))
    rel = mech.release(np.full((1000, 1), 1 / 3), rng=pv.make_rng(7))
    g = output_grid(1.0)
    np.testing.assert_array_equal(rel.x1 / g, np.rint(rel.x1 / g))
    np.testing.assert_array_equal(rel.x2 / g, np.rint(rel.x2 / g))


def test_out_of_bounds_is_an_error_unless_clipping_is_asked():
    x = np.array([[0.5, 0.2], [1.5, 0.3], [0.1, -0.2], [2.0, 0.0]])
    with pytest.raises(BoundsError, match=r"columns \['x0', 'x1'\] have values outside") as err:
        pv.ZILMechanism(lam=1.0, zero_prob=0.2, bounds=[(0, 1)] * 2).release(x)
    assert "1.5" not in str(err.value) and "row" not in str(err.value)  # no raw values
    rel = pv.ZILMechanism(lam=1.0, zero_prob=0.2, bounds=[(0, 1)] * 2, clip=True).release(
        x, rng=pv.make_rng(8)
    )
    assert rel.x1.shape == x.shape and not hasattr(rel, "n_clipped")
    assert "clip" not in rel.summary()  # the release carries no data-dependent count


def test_bad_arguments_name_themselves():
    with pytest.raises(pv.PrivacyParameterError, match="zero_prob"):
        pv.ZILMechanism(lam=1.0, zero_prob=1.0, bounds=(0, 1))
    with pytest.raises(ValidationError, match="lam"):
        pv.ZILMechanism(lam=-1.0, zero_prob=0.1, bounds=(0, 1))
    with pytest.raises(BoundsError, match="lo < hi"):
        pv.ZILMechanism(lam=1.0, zero_prob=0.1, bounds=(1, 0))
    mech = pv.ZILMechanism(lam=1.0, zero_prob=0.1, bounds=[(0, 1)] * 2)
    with pytest.raises(BoundsError, match="2 pairs for 3 columns"):
        mech.release(np.zeros((4, 3)))
    with pytest.raises(ValidationError, match="NaN"):
        mech.release(np.array([[0.1, np.nan]]))
    named = pv.ZILMechanism(lam=1.0, zero_prob=0.1, bounds={"zz": (0, 1)})
    with pytest.raises(ValidationError, match="'zz' is not a column"):
        named.release(pd.DataFrame({"a": [0.5]}))
    with pytest.raises(ValidationError, match="ids"):
        mech.release(np.zeros((2, 2)), ids=["a", "a"])


def test_calibration_meets_the_target_at_both_units():
    bounds = [(0, 1), (0, 2), (-1, 1e4)]
    for unit, diam in (("individual", math.sqrt(3)), ("attribute", 1.0)):
        mech = pv.ZILMechanism.calibrate(
            epsilon=1.0, delta=0.2, zero_prob=0.05, bounds=bounds, unit=unit
        )
        g = getattr(mech.guarantee, unit)
        assert g.delta(1.0) == pytest.approx(0.2, abs=1e-9)
        assert g.c == pytest.approx(diam / mech.lam)  # the unit cube's diameters


def test_paper_calibration_example():
    """eps' = 0.8, delta' = 0.17, delta = 0.05 gives c' = 0.5 (paper; exact root 0.5025)."""
    mech = pv.ZILMechanism.calibrate(
        epsilon=0.8, delta=0.17, zero_prob=0.05, bounds=[(0, 1)] * 4, unit="attribute"
    )
    assert 1 / mech.lam == pytest.approx(0.5025, abs=5e-4)


def test_single_column_calibration_uses_the_exact_laplace_profile():
    """One noised attribute: exact T_{1,c}, so lam is smaller than the beta bound would give."""
    mech = pv.ZILMechanism.calibrate(epsilon=1.0, delta=0.1, zero_prob=0.05, bounds=(0, 1))
    g = mech.guarantee.individual
    assert g.exact_laplace
    eps0 = math.sqrt(2) / mech.lam  # delta_tilde = delta + (1-delta)(1 - e^{(eps-eps0)/2})
    assert 0.05 + 0.95 * (1 - math.exp((1.0 - eps0) / 2)) == pytest.approx(0.1, abs=1e-9)


def test_unreachable_target_says_why():
    with pytest.raises(UnreachableTargetError, match="zero_prob"):
        pv.ZILMechanism.calibrate(epsilon=1.0, delta=0.05, zero_prob=0.1, bounds=(0, 1))


def test_each_column_is_noised_in_units_of_its_range():
    """Issue 13: age in [18, 90] beside income in [0, 2e5] keeps age useful."""
    bounds = {"age": (18.0, 90.0), "income": (0.0, 2e5)}
    mech = pv.ZILMechanism.calibrate(epsilon=1.0, delta=0.2, zero_prob=0.05, bounds=bounds)
    n = 200_000
    df = pd.DataFrame({"age": np.full(n, 40.0), "income": np.full(n, 5e4)})
    rel = mech.release(df, rng=pv.make_rng(11))
    np.testing.assert_allclose(rel.noise_scale, mech.lam * np.array([72.0, 2e5]))
    sd = (rel.x1 - df.to_numpy()).std(axis=0)
    # noise sd = sqrt(1 - zero_prob) lam range_j; the 4th moment of SL is 6 s^4 (SE ~ 0.3%)
    expect = math.sqrt(0.95) * rel.noise_scale
    np.testing.assert_allclose(sd, expect, rtol=0.02)
    assert sd[0] < 1e-3 * sd[1]  # age no longer gets income's noise
    # the guarantee is the unit cube's: unchanged by the ranges
    same = pv.ZILMechanism(lam=mech.lam, zero_prob=0.05, bounds=[(0, 1), (0, 1)])
    assert same.guarantee.delta(1.0) == pytest.approx(mech.guarantee.delta(1.0), abs=1e-15)


def _integer_ages(n, seed):
    return pd.DataFrame({"age": np.random.default_rng(seed).integers(18, 91, n).astype(float)})


def test_unnoised_records_are_identifiable_on_discrete_data_without_a_resolution():
    """Issue 14: the attack 'an integer X1 was released without noise' finds every one."""
    df = _integer_ages(5000, 1)
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.1, bounds={"age": (18, 90)})
    rel = mech.release(df, rng=pv.make_rng(2))
    flagged = rel.x1[:, 0] == np.rint(rel.x1[:, 0])
    unnoised = rel.x1[:, 0] == df["age"].to_numpy()
    assert flagged.sum() > 400 and np.array_equal(flagged, unnoised)  # precision 1, recall 1


def test_a_public_resolution_hides_the_unnoised_records():
    df = _integer_ages(5000, 1)
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.1, bounds={"age": (18, 90)}, resolution=1.0)
    rel = mech.release(df, rng=pv.make_rng(2))
    x1 = rel.x1[:, 0]
    assert np.array_equal(x1, np.rint(x1))  # every released X1 on the public grid
    # the attack now flags every record: its precision is the base rate zero_prob
    flagged = x1 == np.rint(x1)
    assert flagged.all()
    assert "resolution age: 1" in rel.summary()
    assert (
        mech.guarantee.to_dict() == pv.ZILMechanism(0.3, 0.1, {"age": (18, 90)}).guarantee.to_dict()
    )


@pytest.mark.slow
def test_dr_mean_stays_unbiased_with_a_resolution():
    """Rounding X1 to a step far below the noise (1 year vs about 22) biases DR by far less
    than its Monte Carlo SE: 300 releases of 2000 integer ages."""
    from privest.learn import TransformedSquaredLoss

    ident = TransformedSquaredLoss(
        lambda v: v, lambda v: np.ones_like(v), lambda v: np.zeros_like(v), name="mean"
    )
    df = _integer_ages(2000, 3)
    truth = df["age"].mean()
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds={"age": (18, 90)}, resolution=1.0)
    est = np.array(
        [
            pv.DRMEstimator(loss=ident, method="dr", inference="none", theta_bounds=(18, 90))
            .fit(mech.release(df, rng=pv.make_rng(100 + r)))
            .coef_[0]
            for r in range(300)
        ]
    )
    assert abs(est.mean() - truth) < 4 * est.std(ddof=1) / math.sqrt(est.size)


def test_the_mechanism_and_the_batched_tables_draw_the_same_zil_noise():
    """ZILMechanism.release and the paper-000 tables share zil_copies (Algorithm 1): same
    stream, same copies up to the release's output grid; a batch (R, n, d) is R n records."""
    from privest.release.zil import zil_copies
    from privest.rng import make_rng

    x = np.random.default_rng(0).random((200, 2))
    rel = pv.ZILMechanism(lam=0.8, zero_prob=0.2, bounds=[(0.0, 1.0)] * 2).release(
        x, rng=make_rng(3)
    )
    x1, x2 = zil_copies(x, 0.8, 0.2, make_rng(3))
    assert np.allclose(rel.x1, x1, rtol=0, atol=1e-6)
    assert np.allclose(rel.x2, x2, rtol=0, atol=1e-6)
    batch = np.stack([x, 1.0 - x])
    b1, b2 = zil_copies(batch, 0.8, 0.2, make_rng(4))
    f1, f2 = zil_copies(batch.reshape(400, 2), 0.8, 0.2, make_rng(4))
    assert b1.shape == b2.shape == (2, 200, 2)
    assert np.array_equal(b1.reshape(400, 2), f1) and np.array_equal(b2.reshape(400, 2), f2)

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


def _repeat_release(x, lam, delta, n, seed, columns=None):
    """Release the same record ``n`` times (an experiment only; never do this to real data)."""
    mech = pv.ZILMechanism(
        lam=lam, delta=delta, bounds=[(-1, 1)] * (len(columns or x)), columns=columns
    )
    return mech.release(np.tile(x, (n, 1)), rng=pv.make_rng(seed))


def test_x1_is_x_plus_zil_noise():
    x = np.array([0.3, -0.5, 0.9])
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
    mech = pv.ZILMechanism(lam=0.5, delta=0.1, bounds={"a": (0, 1), "b": (0, 2)})
    rel = mech.release(df, rng=pv.make_rng(4))
    np.testing.assert_array_equal(rel.x1[:, 1], df["y"].to_numpy())
    np.testing.assert_array_equal(rel.x2[:, 1], df["y"].to_numpy())
    assert rel.column_names == ("a", "y", "b")
    assert rel.noised_names == ("a", "b")
    assert list(rel.frame("x2").columns) == ["a", "y", "b"]
    assert not np.allclose(rel.x1[:, 0], df["a"])


def test_release_is_immutable_and_records_its_randomness():
    mech = pv.ZILMechanism(lam=1.0, delta=0.2, bounds=(0, 1))
    rel = mech.release(np.full((10, 1), 0.5), rng=pv.make_rng(5))
    assert rel.rng_kind == "seeded"
    with pytest.raises(ValueError):
        rel.x1[0, 0] = 1.0
    assert mech.release(np.full((3, 1), 0.5)).rng_kind == "secure"


def test_seeded_release_is_reproducible():
    mech = pv.ZILMechanism(lam=1.0, delta=0.2, bounds=[(0, 1)] * 2)
    x = np.full((50, 2), 0.5)
    a, b = mech.release(x, rng=pv.make_rng(6)), mech.release(x, rng=pv.make_rng(6))
    np.testing.assert_array_equal(a.x1, b.x1)
    np.testing.assert_array_equal(a.x2, b.x2)


def test_released_values_sit_on_the_output_grid():
    mech = pv.ZILMechanism(lam=1.0, delta=0.5, bounds=(0, 1))
    rel = mech.release(np.full((1000, 1), 1 / 3), rng=pv.make_rng(7))
    g = output_grid(1.0)
    np.testing.assert_array_equal(rel.x1 / g, np.rint(rel.x1 / g))
    np.testing.assert_array_equal(rel.x2 / g, np.rint(rel.x2 / g))


def test_out_of_bounds_is_an_error_unless_clipping_is_asked():
    x = np.array([[0.5, 0.2], [1.5, 0.3], [0.1, -0.2], [2.0, 0.0]])
    with pytest.raises(
        BoundsError, match=r"column 'x0' has 2 values outside .*first: 1.5 at row 1"
    ):
        pv.ZILMechanism(lam=1.0, delta=0.2, bounds=[(0, 1)] * 2).release(x)
    rel = pv.ZILMechanism(lam=1.0, delta=0.2, bounds=[(0, 1)] * 2, clip=True).release(
        x, rng=pv.make_rng(8)
    )
    assert rel.n_clipped == {"x0": 2, "x1": 1}
    assert "clipped to bounds: x0: 2, x1: 1" in rel.summary()


def test_bad_arguments_name_themselves():
    with pytest.raises(pv.PrivacyParameterError, match="delta"):
        pv.ZILMechanism(lam=1.0, delta=1.0, bounds=(0, 1))
    with pytest.raises(ValidationError, match="lam"):
        pv.ZILMechanism(lam=-1.0, delta=0.1, bounds=(0, 1))
    with pytest.raises(BoundsError, match="lo < hi"):
        pv.ZILMechanism(lam=1.0, delta=0.1, bounds=(1, 0))
    mech = pv.ZILMechanism(lam=1.0, delta=0.1, bounds=[(0, 1)] * 2)
    with pytest.raises(BoundsError, match="2 pairs for 3 columns"):
        mech.release(np.zeros((4, 3)))
    with pytest.raises(ValidationError, match="NaN"):
        mech.release(np.array([[0.1, np.nan]]))
    named = pv.ZILMechanism(lam=1.0, delta=0.1, bounds={"zz": (0, 1)})
    with pytest.raises(ValidationError, match="'zz' is not a column"):
        named.release(pd.DataFrame({"a": [0.5]}))
    with pytest.raises(ValidationError, match="ids"):
        mech.release(np.zeros((2, 2)), ids=["a", "a"])


def test_calibration_meets_the_target_at_both_levels():
    bounds = [(0, 1), (0, 2), (-1, 1)]
    for level, diam in (("individual", math.sqrt(1 + 4 + 4)), ("attribute", 2.0)):
        mech = pv.ZILMechanism.calibrate(
            epsilon=1.0, target_delta=0.2, delta=0.05, bounds=bounds, level=level
        )
        g = getattr(mech.guarantee, level)
        assert g.delta(1.0) == pytest.approx(0.2, abs=1e-9)
        assert g.c == pytest.approx(diam / mech.lam)


def test_paper_calibration_example():
    """eps' = 0.8, delta' = 0.17, delta = 0.05 gives c' = 0.5 (paper; exact root 0.5025)."""
    mech = pv.ZILMechanism.calibrate(
        epsilon=0.8, target_delta=0.17, delta=0.05, bounds=[(0, 1)] * 4, level="attribute"
    )
    assert 1 / mech.lam == pytest.approx(0.5025, abs=5e-4)


def test_single_column_calibration_uses_the_exact_laplace_profile():
    """One noised attribute: exact T_{1,c}, so lam is smaller than the beta bound would give."""
    mech = pv.ZILMechanism.calibrate(epsilon=1.0, target_delta=0.1, delta=0.05, bounds=(0, 1))
    g = mech.guarantee.individual
    assert g.exact_laplace
    eps0 = math.sqrt(2) / mech.lam  # delta_tilde = delta + (1-delta)(1 - e^{(eps-eps0)/2})
    assert 0.05 + 0.95 * (1 - math.exp((1.0 - eps0) / 2)) == pytest.approx(0.1, abs=1e-9)


def test_unreachable_target_says_why():
    with pytest.raises(UnreachableTargetError, match="delta"):
        pv.ZILMechanism.calibrate(epsilon=1.0, target_delta=0.05, delta=0.1, bounds=(0, 1))

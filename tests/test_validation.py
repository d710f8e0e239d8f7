"""Shared validation: every bad input raises an error naming the argument and the value."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privest.errors import BoundsError, PrivacyParameterError, ValidationError
from privest.validation import (
    BOUNDS_RANGE,
    DELTA_RANGE,
    EPSILON_RANGE,
    as_finite_array,
    as_float_matrix,
    check_bounds,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
    check_real_data,
)

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@given(lo=finite, hi=finite)
def test_bounds_accept_exactly_lo_below_hi(lo, hi):
    if lo < hi and hi - lo >= BOUNDS_RANGE[0]:
        np.testing.assert_array_equal(check_bounds((lo, hi), 3), [[lo, hi]] * 3)
    elif lo < hi:  # a pair narrower than 1e-100 (subnormal widths included)
        with pytest.raises(BoundsError, match="a width of at least 1e-100"):
            check_bounds([(lo, hi)], 1)
    else:
        with pytest.raises(BoundsError, match="lo < hi"):
            check_bounds([(lo, hi)], 1)


@pytest.mark.parametrize(
    "pair", [(-1e308, 1e308), (0.0, 1e101), (-2e100, 0.0), (0.0, 5e-324), (1e-200, 2e-200)]
)
def test_bounds_of_extreme_size_are_refused(pair):
    """Beyond +-1e100 or below a width of 1e-100, sums, squares and grid steps of the data
    leave the float range (issue 30: OverflowError and ZeroDivisionError before)."""
    with pytest.raises(BoundsError, match=r"accepted: ends within \+-1e\+100"):
        check_bounds(pair, 1)


@given(bad=st.sampled_from([math.nan, math.inf, -math.inf]))
def test_bounds_refuse_non_finite(bad):
    with pytest.raises(BoundsError, match="finite"):
        check_bounds([(0.0, 1.0), (bad, 2.0)], 2)


def test_bounds_shape_errors_name_the_argument():
    with pytest.raises(BoundsError, match="bounds: gives 2 pairs for 3 attributes"):
        check_bounds([(0, 1), (0, 1)], 3)
    with pytest.raises(BoundsError, match="shape"):
        check_bounds([[0, 1, 2]], 1)
    with pytest.raises(BoundsError, match="not numeric"):
        check_bounds([("a", "b")], 1)


@given(eps=st.floats(allow_nan=True, allow_infinity=True))
def test_epsilon_range(eps):
    """epsilon is accepted in [1e-4, 1e3] (docs/vocabulary.md); a guarantee object
    (``allow_zero``) takes any finite epsilon >= 0."""
    if EPSILON_RANGE[0] <= eps <= EPSILON_RANGE[1]:
        assert check_epsilon(eps) == eps
    else:
        with pytest.raises(PrivacyParameterError, match=r"epsilon: .* accepted: \[0.0001, 1000\]"):
            check_epsilon(eps)
    if eps >= 0 and math.isfinite(eps):
        assert check_epsilon(eps, allow_zero=True) == eps


@pytest.mark.parametrize("eps", [1e308, 1e-300, 10**400, 2e3, 9e-5])
def test_extreme_epsilons_are_refused_with_a_short_message(eps):
    """No 300-digit number and no OverflowError in the message (issue 30)."""
    with pytest.raises(PrivacyParameterError) as info:
        check_epsilon(eps)
    assert len(str(info.value)) < 120


@given(p=st.floats(allow_nan=True, allow_infinity=True))
def test_probability_and_delta_ranges(p):
    if 0 < p < 1:
        assert check_probability(p, "delta") == p
    else:
        with pytest.raises(PrivacyParameterError, match=r"delta: .* accepted: \(0, 1\)"):
            check_probability(p, "delta")
    if p == 0 or DELTA_RANGE[0] <= p < 1:
        assert check_delta(p) == p
    else:
        with pytest.raises(PrivacyParameterError):
            check_delta(p)
    if DELTA_RANGE[0] <= p < 1:
        assert check_delta(p, allow_zero=False) == p
    else:
        with pytest.raises(PrivacyParameterError):
            check_delta(p, allow_zero=False)


def test_non_numbers_are_refused():
    for bad in ("1", None, True, [1.0]):
        with pytest.raises(PrivacyParameterError, match="not a real number"):
            check_epsilon(bad)
    with pytest.raises(ValidationError, match="lam"):
        check_positive(0.0, "lam")


@given(
    rows=st.integers(1, 20),
    cols=st.integers(1, 5),
    where=st.tuples(st.integers(0, 19), st.integers(0, 4)),
    bad=st.sampled_from([math.nan, math.inf, -math.inf]),
)
def test_matrix_refuses_nan_and_inf(rows, cols, where, bad):
    x = np.zeros((rows, cols))
    i, j = where[0] % rows, where[1] % cols
    x[i, j] = bad
    with pytest.raises(ValidationError, match=rf"X: columns \[{j}\] contain NaN or infinite") as e:
        as_float_matrix(x)
    assert "row" not in str(e.value)  # no row, count or value of the data in the message


def test_matrix_shapes_and_types():
    assert as_float_matrix([1, 2, 3]).shape == (3, 1)
    with pytest.raises(ValidationError, match="empty"):
        as_float_matrix(np.empty((0, 3)))
    with pytest.raises(ValidationError, match="2-D"):
        as_float_matrix(np.zeros((2, 2, 2)))
    with pytest.raises(ValidationError, match=r"columns \['name'\] are not numeric"):
        as_float_matrix(pd.DataFrame({"a": [1.0], "name": ["x"]}))
    with pytest.raises(ValidationError, match="holds text"):
        as_float_matrix([["a", "b"]])
    with pytest.raises(ValidationError, match="cannot be read as an array"):
        as_float_matrix([[1.0, 2.0], [3.0]])


def test_frames_are_checked_by_their_dtypes():
    """The DataFrame path reads the dtypes (not a Series per column): extension dtypes are
    still read as numbers, a repeated column name is still refused, and the values are those
    of the numpy array."""
    frame = pd.DataFrame(
        {
            "a": pd.array([1, 2, 3], dtype="Int64"),
            "b": pd.array([0.5, 1.5, 2.5], dtype="Float64"),
            "c": pd.array([True, False, True], dtype="boolean"),
            "d": np.array([1, 2, 3], dtype=np.int8),
        }
    )
    want = np.array([[1, 0.5, 1, 1], [2, 1.5, 0, 2], [3, 2.5, 1, 3]], dtype=float)
    assert np.array_equal(as_float_matrix(frame), want)
    with pytest.raises(ValidationError, match=r"columns \['a', 'a'\] are not numeric"):
        as_float_matrix(pd.DataFrame(np.ones((2, 2)), columns=["a", "a"]))
    with pytest.raises(ValidationError, match="NaN or infinite"):
        as_float_matrix(pd.DataFrame({"a": pd.array([1, None], dtype="Int64")}))


SECRET = "SECRETXYZ"


@pytest.mark.parametrize(
    "data, what",
    [
        (np.array([1.0, 2.0]) + 0.5j, "complex numbers"),
        (np.array([1.0, 2.0], dtype=complex), "complex numbers"),
        (np.array([1, "2", 3.0], dtype=object), "mixed types"),
        (np.array(["1", "2"]), "text"),
        ([SECRET, SECRET], "text"),
        (pd.Series([1.0, 2.0 + 1j]), "complex numbers"),
        (pd.DataFrame({"a": [1.0, 2.0], "b": [1j, 2j]}), "complex numbers"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "dates"),
    ],
)
def test_data_that_is_not_real_numbers_is_refused_by_kind(data, what):
    """Complex, text, mixed and date data were read silently (the imaginary part dropped,
    '2' read as 2; issue 30): refused, naming the kind, never a value."""
    with pytest.raises(ValidationError, match=what) as info:
        as_float_matrix(data)
    assert SECRET not in str(info.value)
    with pytest.raises(ValidationError, match=what):
        check_real_data(np.asarray(data), "x")


@pytest.mark.parametrize(
    "data",
    [
        np.array([1, 2.5, 3], dtype=object),
        np.array([True, False]),
        np.array([1, 2], dtype=np.uint8),
        pd.Series([1.0, 2.0], dtype="float32"),
        [1, 2.0],
    ],
)
def test_real_numbers_in_any_numeric_form_are_accepted(data):
    assert as_float_matrix(data).dtype == float


def test_finite_array_checks_a_single_value():
    assert as_finite_array(3) == 3.0
    for bad, what in (("31337.25", "text"), (1 + 2j, "complex"), (float("nan"), "NaN")):
        with pytest.raises(ValidationError, match=what):
            as_finite_array(bad)

"""Shared validation: every bad input raises an error naming the argument and the value."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privest.errors import BoundsError, PrivacyParameterError, ValidationError
from privest.validation import (
    as_float_matrix,
    check_bounds,
    check_delta,
    check_epsilon,
    check_positive,
    check_probability,
)

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@given(lo=finite, hi=finite)
def test_bounds_accept_exactly_lo_below_hi(lo, hi):
    if lo < hi:
        np.testing.assert_array_equal(check_bounds((lo, hi), 3), [[lo, hi]] * 3)
    else:
        with pytest.raises(BoundsError, match="lo < hi"):
            check_bounds([(lo, hi)], 1)


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
    if eps > 0 and math.isfinite(eps):
        assert check_epsilon(eps) == eps
    else:
        with pytest.raises(PrivacyParameterError, match="epsilon"):
            check_epsilon(eps)


@given(p=st.floats(allow_nan=True, allow_infinity=True))
def test_probability_and_delta_ranges(p):
    if 0 < p < 1:
        assert check_probability(p, "delta") == p
    else:
        with pytest.raises(PrivacyParameterError, match=r"delta: .* accepted: \(0, 1\)"):
            check_probability(p, "delta")
    if 0 <= p < 1:
        assert check_delta(p) == p
    else:
        with pytest.raises(PrivacyParameterError):
            check_delta(p)


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
    with pytest.raises(ValidationError, match="cannot be read as numbers"):
        as_float_matrix([["a", "b"]])

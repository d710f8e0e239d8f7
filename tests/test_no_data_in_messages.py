"""No error message of a release, statistic or model path carries a raw data value.

Data hold a sentinel value; every way a path can refuse the data (out of bounds, NaN,
infinite, outside a radius, a bad label) is triggered, and the sentinel, its row and the
number of offending records must not appear in the message (issue 14: a message may name
columns and say "some values", never values, rows or exact counts).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import privest as pv

SENTINEL = 987654.321
TEXT = re.compile(r"987654|9\.87654e\+05|9\.876543")


def _messages() -> list[tuple[str, Exception]]:
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, (50, 2))
    outside = base.copy()
    outside[[3, 7, 11], 0] = SENTINEL
    with_nan = base.copy()
    with_nan[5, 1] = np.nan
    with_inf = base.copy()
    with_inf[9, 0] = np.inf
    y01 = (np.arange(50) % 2).astype(float)
    cases = {
        "zil out of bounds": lambda: pv.ZILMechanism(0.5, 0.1, [(0, 1)] * 2).release(outside),
        "zil nan": lambda: pv.ZILMechanism(0.5, 0.1, [(0, 1)] * 2).release(with_nan),
        "zil frame": lambda: pv.ZILMechanism(0.5, 0.1, {"a": (0, 1)}).release(
            pd.DataFrame({"a": outside[:, 0], "b": outside[:, 1]})
        ),
        "examples box": lambda: pv.release_examples(
            outside, y01, epsilon_x=1, epsilon_y=1, delta=1e-5, bounds=(0, 1)
        ),
        "examples ball": lambda: pv.release_examples(
            outside, y01, epsilon_x=1, epsilon_y=1, delta=1e-5, x_radius=2.0
        ),
        "examples inf": lambda: pv.release_examples(
            with_inf, y01, epsilon_x=1, epsilon_y=1, delta=1e-5, bounds=(0, 1)
        ),
        "regression target": lambda: pv.release_regression_examples(
            base,
            np.r_[SENTINEL, np.zeros(49)],
            epsilon_x=1,
            epsilon_y=1,
            delta_x=1e-5,
            delta_y=1e-5,
            y_bounds=(0, 1),
            bounds=(0, 1),
        ),
        "median out of bounds": lambda: pv.private_median(outside[:, 0], epsilon=1, bounds=(0, 1)),
        "mean nan": lambda: pv.private_mean(with_nan[:, 1], epsilon=1, bounds=(0, 1)),
        "variance inf": lambda: pv.private_variance(with_inf[:, 0], epsilon=1, bounds=(0, 1)),
        "count not 0/1": lambda: pv.private_count(outside[:, 0], epsilon=1),
        "smooth out of bounds": lambda: pv.private_quantile(
            outside[:, 0], 0.5, epsilon=1, bounds=(0, 1), mechanism="smooth_sensitivity"
        ),
        "ols out of radius": lambda: pv.EPTRLinearRegression(
            epsilon=1, delta=1e-5, x_radius=1, theta_radius=1, c0=0.1
        ).fit(outside, y01),
        "ols nan": lambda: pv.EPTRLinearRegression(
            epsilon=1, delta=1e-5, x_radius=1, theta_radius=1, c0=0.1
        ).fit(with_nan, y01),
        "bayes out of radius": lambda: pv.EPTRBayesClassifier(
            epsilon=1, delta=1e-5, classes=[0, 1], x_radius=1, c0=0.1
        ).fit(outside, y01),
        "nw out of bounds": lambda: pv.EPTRKernelRegressor(
            query_points=[[0.5, 0.5]], epsilon=1, delta=1e-5, c0=0.1, bounds=(0, 1)
        ).fit(outside, y01),
        # scikit-learn's own messages print a 1-D array or a string that fails to convert
        "linear 1-D X": lambda: pv.PrivateLinearRegression(bounds=(0, 1), y_bounds=(0, 1)).fit(
            outside[:, 0], y01
        ),
        "logistic text X": lambda: pv.PrivateLogisticRegression(bounds=(0, 1)).fit(
            np.array([[f"id{SENTINEL}", "1"]] * 50, dtype=object), y01
        ),
        "logistic predict 1-D X": lambda: (
            pv.PrivateLogisticRegression(bounds=(0, 1), clip=True, random_state=0)
            .fit(base, y01)
            .predict(outside[0])
        ),
    }
    out = []
    for name, call in cases.items():
        try:
            call()
        except pv.PrivestError as exc:
            out.append((name, exc))
        else:
            pytest.fail(f"{name}: the data were accepted")
    return out


def test_no_message_quotes_a_data_value_row_or_count():
    for name, exc in _messages():
        msg = str(exc)
        assert not TEXT.search(msg), f"{name}: {msg}"
        assert not re.search(r"\brows?\s+\d", msg), f"{name} names a row: {msg}"
        assert not re.search(r"\b3 (records|values|rows)\b|\b\d+ of \d+\b", msg), msg


def test_negative_control_the_check_catches_a_leaky_message():
    """The same checks flag a message built the way the old out-of-bounds error was."""
    leaky = f"X: column 'x0' has 3 values outside [0, 1] (first: {SENTINEL:g} at row 3)"
    assert TEXT.search(leaky) and re.search(r"\brows?\s+\d", leaky)
    assert re.search(r"\b3 (records|values|rows)\b", "x: 3 values lie outside")
    assert re.search(r"\b\d+ of \d+\b", "x: 3 of 50 values lie outside")

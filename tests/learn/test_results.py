"""statsmodels-style results of a fit on released data (learn/results.py)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privest as pv
from privest.learn.estimators import BoundaryWarning, DRLinearRegression, DRLogisticRegression


def test_oracle_sandwich_is_the_hc0_covariance_of_least_squares():
    """Exact check: on raw data the squared loss's sandwich is White's HC0 covariance
    (statsmodels' ``cov_type="HC0"``), computed here in closed form."""
    rng = np.random.default_rng(3)
    n = 500
    x = rng.uniform(-1, 1, (n, 2))
    y = 0.3 + x @ [1.0, -0.5] + rng.normal(size=n) * (1 + x[:, 0] ** 2)
    res = DRLinearRegression(method="oracle").fit(x, y).results_
    Z = np.column_stack([np.ones(n), x])
    A = np.linalg.inv(Z.T @ Z)
    b = A @ Z.T @ y
    e = y - Z @ b
    hc0 = A @ (Z.T * e**2) @ Z @ A
    np.testing.assert_allclose(res.params, b, rtol=1e-8)
    np.testing.assert_allclose(res.cov_params().to_numpy(), hc0, rtol=1e-6)
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(hc0)), rtol=1e-6)
    # negative control: the homoskedastic OLS covariance differs by far more than rtol
    ols = A * (e @ e) / (n - 3)
    assert not np.allclose(res.cov_params().to_numpy(), ols, rtol=1e-2)


def _release_fit():
    rng = np.random.default_rng(1)
    n = 4000
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(0.5 + df.x1 - df.x2)))).astype(int)
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.2, bounds={"x1": (-1, 1), "x2": (-1, 1)})
    rel = mech.release(df, rng=2)
    return rel, DRLogisticRegression(features=["x1", "x2"]).fit(rel, "y")


def test_results_follow_statsmodels_conventions():
    rel, fit = _release_fit()
    res = fit.results_
    names = ["intercept", "x1", "x2"]
    for series in (res.params, res.bse, res.tvalues, res.pvalues):
        assert isinstance(series, pd.Series) and list(series.index) == names
    np.testing.assert_allclose(res.tvalues, res.params / res.bse)
    np.testing.assert_allclose(res.pvalues, 2 * stats.norm.sf(np.abs(res.tvalues)))
    ci = res.conf_int(alpha=0.1)
    assert isinstance(ci, pd.DataFrame) and list(ci.columns) == ["ci_lower", "ci_upper"]
    half = stats.norm.ppf(0.95) * res.bse
    np.testing.assert_allclose(ci["ci_lower"], res.params - half)
    np.testing.assert_allclose(ci["ci_upper"], res.params + half)
    cov = res.cov_params()
    assert list(cov.index) == list(cov.columns) == names
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), res.bse)
    assert res.nobs == rel.n
    header = "\n".join(res.summary().header)
    for part in ("target=y", "method=dr", "n=4000", "sandwich", "converged=True"):
        assert part in header, part
    assert str(rel.guarantee) in header
    with pytest.raises(pv.ValidationError, match="alpha"):
        res.conf_int(alpha=95)


def test_pinned_parameters_have_no_inference_in_print_and_files(tmp_path):
    rel, _ = _release_fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundaryWarning)
        fit = DRLogisticRegression(
            features=["x1", "x2"], theta_bounds=[(-5, 5), (-5, 5), (-0.5, 0.5)]
        ).fit(rel, "y")
    res = fit.results_
    assert list(res.on_bound) == [False, False, True]
    frame = res.to_frame()
    assert frame.loc["x2", ["std_err", "z", "p_value", "ci_lower", "ci_upper"]].isna().all()
    assert frame.loc["x1", ["std_err", "z", "p_value"]].notna().all()
    text = str(res.summary())
    assert "note: parameters pinned on theta_bounds" in text
    x2_line = next(line for line in text.splitlines() if line.startswith("x2"))
    assert "nan" not in x2_line.lower() and x2_line.count("on bound") == 5
    rows = json.loads(res.save(tmp_path / "fit.json").read_text())
    assert rows[2]["parameter"] == "x2" and rows[2]["std_err"] is None
    assert rows[2]["ci_lower"] is None and rows[1]["ci_lower"] is not None
    table = pd.read_csv(res.save(tmp_path / "fit.csv"), keep_default_na=False)
    assert list(table.columns) == [
        "parameter", "coef", "std_err", "z", "p_value", "ci_lower", "ci_upper", "on_bound"
    ]  # fmt: skip
    assert table.loc[2, "std_err"] == "" and table.loc[1, "std_err"] != ""
    with pytest.raises(pv.ValidationError, match=r"\.csv or \.json"):
        res.save(tmp_path / "fit.txt")
    assert not (tmp_path / "fit.txt").exists()

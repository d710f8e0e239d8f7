"""Loaders of the paper-001 real data sets: wine (shared copy), credit and California (synthetic
files with the documented columns, since the real ones need a download)."""

import numpy as np
import pandas as pd
import pytest

from privest.datasets.california import california_features, load_california_housing
from privest.datasets.credit import CREDIT_LABEL, credit_features, load_credit_default
from privest.datasets.wine import WINE_FEATURES, load_wine_quality


def test_wine_loader_matches_the_documented_data(wine_dir):
    df = load_wine_quality(wine_dir)
    assert df.shape[0] == 6497 and (df["type"] == "red").sum() == 1599
    assert set(WINE_FEATURES) <= set(df.columns)
    assert df["quality"].mean() == pytest.approx(5.818, abs=1e-3)
    assert df["quality"].var() == pytest.approx(0.762, abs=1e-3)


def test_missing_files_name_what_to_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="archive.ics.uci.edu/dataset/186"):
        load_wine_quality(tmp_path)
    with pytest.raises(FileNotFoundError, match="default"):
        load_credit_default(tmp_path / "credit.xls")
    with pytest.raises(FileNotFoundError, match="fetch_california_housing"):
        load_california_housing(tmp_path / "cal.csv")


def test_credit_features_use_public_constants(tmp_path):
    rng = np.random.default_rng(0)
    n = 50
    cols = {"LIMIT_BAL": rng.uniform(1e4, 5e5, n), "AGE": rng.integers(20, 70, n)}
    for c in ["PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6"]:
        cols[c] = rng.integers(-2, 9, n)
    for i in range(1, 7):
        cols[f"BILL_AMT{i}"] = rng.uniform(-1e3, 1e5, n)
        cols[f"PAY_AMT{i}"] = rng.uniform(0, 1e4, n)
    cols["default payment next month"] = rng.integers(0, 2, n)
    path = tmp_path / "credit.csv"
    pd.DataFrame(cols).to_csv(path, index=False)
    df = load_credit_default(path)
    assert CREDIT_LABEL in df.columns
    X, y = credit_features(df)
    assert X.shape == (n, 11) and set(y) <= {0, 1}
    assert np.all(np.isfinite(X)) and np.all(np.abs(X) <= 2.0)
    X1, _ = credit_features(df.iloc[:10])  # record-wise: no data-driven scaling
    np.testing.assert_allclose(X1, X[:10])
    pd.DataFrame({"AGE": [1]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="lacks columns"):
        load_credit_default(tmp_path / "bad.csv")


def test_california_features_map_to_public_ranges(tmp_path):
    df = pd.DataFrame(
        {
            "MedInc": [0.0, 15.0, 20.0],
            "HouseAge": [0.0, 55.0, 30.0],
            "Latitude": [32.0, 42.0, 37.0],
            "Longitude": [-125.0, -114.0, -119.5],
            "MedHouseVal": [0.0, 5.0, 6.0],
        }
    )
    path = tmp_path / "cal.csv"
    df.to_csv(path, index=False)
    X, y = california_features(load_california_housing(path))
    np.testing.assert_allclose(X[0], [0, 0, 0, 0])
    np.testing.assert_allclose(X[1], [1, 1, 1, 1])
    np.testing.assert_allclose(X[2], [1, 0.5, 0.5, 30 / 55])
    np.testing.assert_allclose(y, [-1, 1, 1])

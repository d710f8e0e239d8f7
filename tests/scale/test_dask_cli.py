"""``privest fit STORE --engine dask`` and ``privest stat DATA.parquet --engine dask``."""

import json

import numpy as np
import pandas as pd
import pytest

from privest.cli import main


@pytest.fixture
def store(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(3000, 2))
    y = (rng.uniform(size=3000) < 1 / (1 + np.exp(-x.sum(axis=1)))).astype(float)
    frame = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "label": y})
    out = tmp_path / "store"
    mech = [
        "--columns",
        "x1,x2",
        "--bounds",
        "x1=-1:1,x2=-1:1",
        "--lam",
        "0.2",
        "--zero-prob",
        "0.3",
    ]
    for k, rows in enumerate((slice(0, 1800), slice(1800, None))):  # two parts: two chunks
        csv = tmp_path / f"data{k}.csv"
        frame[rows].to_csv(csv, index=False)
        more = ["--append", "--no-ids"] if k else [*mech, "--no-ids"]
        assert main(["release", str(csv), *more, "--seed", str(k), "-o", str(out)]) == 0
    return out


def _table(path):
    return pd.read_json(path)


def test_fit_engine_dask_gives_the_in_memory_table(store, tmp_path):
    tables = []
    for engine in ("memory", "dask"):
        out = tmp_path / f"{engine}.json"
        argv = ["fit", str(store), "--model", "logistic", "--target", "label", "--engine", engine]
        assert main([*argv, "--format", "json", "-o", str(out)]) == 0
        tables.append(_table(out))
    mem, dsk = tables
    assert list(mem["parameter"]) == list(dsk["parameter"]) == ["intercept", "x1", "x2"]
    np.testing.assert_allclose(dsk["coef"], mem["coef"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(dsk["std_err"], mem["std_err"], rtol=1e-8)


@pytest.mark.parametrize(
    "stat", [["--stat", "median", "--bounds", "0:120"], ["--stat", "count", "--where", "18:40"]]
)
def test_stat_engine_dask_gives_the_in_memory_release(tmp_path, stat):
    ages = np.random.default_rng(1).integers(18, 90, 5000)
    pd.DataFrame({"age": ages}).to_csv(tmp_path / "p.csv", index=False)
    pd.DataFrame({"age": ages}).to_parquet(tmp_path / "p.parquet")
    rows = []
    for src, engine in (("p.csv", "memory"), ("p.parquet", "dask")):
        out = tmp_path / f"{engine}.json"
        argv = ["stat", str(tmp_path / src), "--column", "age", "--epsilon", "1", "--seed", "3"]
        assert main([*argv, *stat, "--engine", engine, "--format", "json", "-o", str(out)]) == 0
        rows.append(json.loads(out.read_text()))
    assert rows[0] == rows[1]


def test_workers_need_the_dask_engine(store):
    assert main(["fit", str(store), "--model", "linear", "--target", "x1", "--workers", "2"]) != 0

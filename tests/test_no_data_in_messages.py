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


# ------------------------------------------------------------------ every subcommand
SECRET = "SECRETXYZ"


@pytest.fixture
def hostile_csv(tmp_path):
    """A CSV whose cells carry the sentinel (out of every bound) and a text column whose
    cells carry SECRET, and a store and a ledger made from clean data."""
    from privest.cli import main

    n = 60
    rng = np.random.default_rng(1)
    clean = pd.DataFrame(
        {"id": np.arange(n), "age": rng.integers(18, 90, n), "y": rng.uniform(-1, 1, n)}
    )
    clean.to_csv(tmp_path / "clean.csv", index=False)
    bad = clean.astype({"age": float}).assign(city=[f"{SECRET}-{i}" for i in range(n)])
    bad.loc[[3, 7], "age"] = SENTINEL
    bad.to_csv(tmp_path / "bad.csv", index=False)
    bad.drop(columns="city").to_csv(tmp_path / "bad_numeric.csv", index=False)
    store = tmp_path / "store"
    args = [
        "release",
        str(tmp_path / "clean.csv"),
        "--columns",
        "age",
        "--bounds",
        "18:90",
        "--lam",
        "0.5",
        "--zero-prob",
        "0.1",
        "--id-column",
        "id",
        "-o",
        str(store),
    ]
    assert main(args) == 0
    assert main(["budget", str(tmp_path / "ledger.json"), "--epsilon", "1"]) == 0
    return tmp_path


def _json_copy(path):
    """The hostile CSV under a .json name: a plan file that does not parse."""
    out = path.with_suffix(".json")
    out.write_bytes(path.read_bytes())
    return str(out)


def _commands(d):
    bad, num, store = str(d / "bad.csv"), str(d / "bad_numeric.csv"), str(d / "store")
    stat = ["stat", bad, "--epsilon", "1"]
    return {
        "release out of bounds": [
            "release",
            num,
            "--columns",
            "age",
            "--bounds",
            "18:90",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "-o",
            str(d / "s2"),
        ],
        "release text column": [
            "release",
            bad,
            "--bounds",
            "0:1",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "-o",
            str(d / "s3"),
        ],
        "release append": ["release", num, "--append", "--id-column", "id", "-o", store],
        "privacy store": ["privacy", "--store", store, "--plot", "", "--envelopes", "-1"],
        "fit text target": ["fit", store, "--model", "linear", "--target", "city"],
        "fit bad features": [
            "fit",
            store,
            "--model",
            "linear",
            "--target",
            "y",
            "--features",
            "age,nope",
        ],
        "stat out of bounds": [*stat, "--column", "age", "--stat", "median", "--bounds", "0:120"],
        "stat text": [*stat, "--column", "city", "--stat", "mean", "--bounds", "0:1"],
        "stat count text": [*stat, "--column", "city", "--stat", "count", "--where", "0:1"],
        "stat budget": [
            *stat,
            "--column",
            "age",
            "--stat",
            "mean",
            "--bounds",
            "0:120",
            "--budget",
            str(d / "ledger.json"),
        ],
        "model out of bounds": [
            "model",
            "linear",
            bad,
            "--target",
            "y",
            "--features",
            "age",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--bounds",
            "0:120",
            "--y-bounds=-1:1",
        ],
        "model text feature": [
            "model",
            "logistic",
            bad,
            "--target",
            "y",
            "--features",
            "city",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--bounds",
            "0:1",
        ],
        "budget not a ledger": ["budget", bad],
        "table out of bounds": [
            "table",
            bad,
            "--by",
            "id",
            "--agg",
            "mean:age",
            "--bounds",
            "age=0:120",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
        ],
        "table text column": [
            "table",
            bad,
            "--by",
            "age",
            "--agg",
            "mean:city",
            "--bounds",
            "city=0:1",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
        ],
        "plan not a plan": ["plan", _json_copy(d / "bad.csv")],
        "report not a ledger": ["report", bad, "-o", str(d / "report.html")],
        "reproduce bad data": ["reproduce", "eptr-wine", "--data", bad, "-o", str(d / "r")],
        "demo into a file": ["demo", "-o", bad],
    }


def test_every_subcommand_refuses_without_quoting_data(hostile_csv, capsys):
    """Each subcommand refuses hostile input in one line that quotes no cell: no sentinel,
    no text cell, no traceback (issue 30: count on a text column printed a cell)."""
    from privest.cli import COMMANDS, main

    commands = _commands(hostile_csv)
    covered = {argv[0] for argv in commands.values()}
    assert covered == {m.__name__.rsplit(".", 1)[-1] for m in COMMANDS}
    for name, argv in commands.items():
        status = main(argv)
        err = capsys.readouterr().err
        assert status in (1, 2), f"{name}: exit {status}"
        assert err.count("\n") == 1 and err.startswith(f"privest {argv[0]}: error:"), err
        assert not TEXT.search(err) and SECRET not in err, f"{name}: {err}"
        assert "Traceback" not in err and ".py" not in err, f"{name}: {err}"


# ------------------------------------------------------------------ the Dask paths
def _require_dask():
    import importlib.util
    import os

    missing = [m for m in ("dask", "distributed") if importlib.util.find_spec(m) is None]
    if missing and os.environ.get("PRIVEST_REQUIRE_DASK") == "1":
        pytest.fail(f"the Dask extra is not installed ({missing}; PRIVEST_REQUIRE_DASK=1)")
    if missing:
        pytest.skip(f"the Dask extra is not installed ({', '.join(missing)})")


def test_dask_paths_refuse_without_quoting_data(tmp_path, capsys):
    """Out of core, the same refusals as in memory and the same one-line messages: a Dask
    failure prints no traceback and no absolute path (issue 30)."""
    _require_dask()
    import dask.array as da
    import dask.dataframe as dd

    from privest.cli import main

    n = 200
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "age": np.where(np.arange(n) == 5, SENTINEL, 40.0),
            "city": [f"{SECRET}-{i}" for i in range(n)],
        }
    )
    frame.to_parquet(tmp_path / "bad.parquet", index=False)
    calls = {
        "text series": lambda: pv.private_statistic(
            dd.from_pandas(pd.Series([SECRET] * n), npartitions=2),
            "mean",
            epsilon=1,
            bounds=(0, 1),
        ),
        "out of bounds": lambda: pv.private_statistic(
            da.from_array(frame["age"].to_numpy(), chunks=50),
            "median",
            epsilon=1,
            bounds=(0, 120),
        ),
        "object text": lambda: pv.private_statistic(
            da.from_array(np.array([1.0, "2", SECRET] * 20, dtype=object), chunks=20),
            "mean",
            epsilon=1,
            bounds=(0, 10),
        ),
    }
    for name, call in calls.items():
        with pytest.raises(pv.PrivestError) as info:
            call()
        assert not TEXT.search(str(info.value)) and SECRET not in str(info.value), name
    base = ["stat", str(tmp_path / "bad.parquet"), "--engine", "dask", "--epsilon", "1"]
    for argv in (
        [*base, "--column", "city", "--stat", "count", "--where", "0:1"],
        [*base, "--column", "age", "--stat", "median", "--bounds", "0:120"],
        [*base, "--column", "age", "--stat", "count", "--where", "0:1"],
        [
            "release",
            str(tmp_path / "bad.parquet"),
            "--engine",
            "dask",
            "--columns",
            "age",
            "--bounds",
            "18:90",
            "--lam",
            "0.5",
            "--zero-prob",
            "0.1",
            "--id-column",
            "id",
            "-o",
            str(tmp_path / "store"),
        ],
    ):
        status = main(argv)
        err = capsys.readouterr().err
        if argv[-1] == "0:1" and "age" in argv:  # a count of the records in [0, 1]: fine
            assert status == 0, err
            continue
        assert status in (1, 2) and err.count("\n") == 1, err
        assert not TEXT.search(err) and SECRET not in err, err
        assert "Traceback" not in err and "site-packages" not in err, err

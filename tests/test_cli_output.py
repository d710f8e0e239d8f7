"""``-o FILE`` and ``--format csv|json`` on privacy, fit, stat and model: the files parse back
with snake_case keys and the values the library computes."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from privest.cli import main
from privest.learn.estimators import DRLinearRegression
from privest.release.zil import ZILMechanism, load_release

PRIVACY = ["privacy", "--lam", "1", "--zero-prob", "0.05", "--bounds=-1:1", "--d", "3"]
PROFILE_KEYS = ["epsilon", "delta_individual", "delta_attribute"]
FIT_KEYS = ["parameter", "coef", "std_err", "z", "p_value", "ci_lower", "ci_upper", "on_bound"]
STAT_KEYS = [
    "column",
    "statistic",
    "value",
    "mechanism",
    "guarantee",
    "epsilon",
    "n",
    "randomness",
]


def _json(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture
def store(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (1200, 2))
    df = pd.DataFrame(
        {"a": x[:, 0], "b": x[:, 1], "y": 1 + x @ [1.0, -1.0] + rng.normal(size=1200)}
    )
    df.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "s"
    args = ["release", str(tmp_path / "d.csv"), "--bounds", "a=-1:1,b=-1:1", "--lam", "0.3"]
    assert main([*args, "--zero-prob", "0.3", "--no-ids", "-o", str(out), "--seed", "4"]) == 0
    return out


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 2))
    y = X @ [0.5, -0.2] + rng.standard_normal(2000)
    path = tmp_path / "m.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y, "age": rng.uniform(20, 70, 2000)}).to_csv(
        path, index=False
    )
    return path


def test_privacy_profile_csv_json_and_stdout(tmp_path, capsys):
    guarantee = ZILMechanism(1.0, 0.05, [(-1.0, 1.0)] * 3).guarantee
    assert main([*PRIVACY, "--plot", "", "-o", str(tmp_path / "p.csv")]) == 0
    assert "written to" in capsys.readouterr().out
    table = pd.read_csv(tmp_path / "p.csv")
    assert list(table.columns) == PROFILE_KEYS
    assert list(table.epsilon) == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    for row in table.itertuples():
        assert row.delta_individual == pytest.approx(guarantee.individual.delta(row.epsilon))
        assert row.delta_attribute == pytest.approx(guarantee.attribute.delta(row.epsilon))
    assert main([*PRIVACY, "--plot", "", "-o", str(tmp_path / "p.json")]) == 0
    rows = _json(tmp_path / "p.json")
    assert [list(r) for r in rows] == [PROFILE_KEYS] * 6
    assert pd.DataFrame(rows).equals(table)
    capsys.readouterr()
    plot = tmp_path / "t.png"
    assert main([*PRIVACY, "--plot", str(plot), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == rows  # stdout is only the table
    assert "ZIL mechanism" in err and "trade-off plot written" in err and plot.is_file()
    assert main([*PRIVACY, "--plot", "", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == ",".join(PROFILE_KEYS)


def test_fit_table_csv_json_and_stdout(store, tmp_path, capsys):
    args = ["fit", str(store), "--model", "linear", "--target", "y", "--conf-level", "0.9"]
    assert main([*args, "-o", str(tmp_path / "f.json")]) == 0
    text = capsys.readouterr().out
    assert "p_value" in text and "written to" in text  # the human table is printed as well
    rows = _json(tmp_path / "f.json")
    assert [list(r) for r in rows] == [FIT_KEYS] * 3
    assert [r["parameter"] for r in rows] == ["intercept", "a", "b"]
    est = DRLinearRegression().fit(load_release(store), "y")
    ci = est.results_.conf_int(alpha=0.1).to_numpy()
    for k, row in enumerate(rows):
        assert row["coef"] == pytest.approx(est.coef_[k])
        assert row["std_err"] == pytest.approx(est.stderr_[k])
        assert row["z"] == pytest.approx(est.coef_[k] / est.stderr_[k])
        assert 0 <= row["p_value"] <= 1
        assert (row["ci_lower"], row["ci_upper"]) == pytest.approx(tuple(ci[k]))
    assert main([*args, "-o", str(tmp_path / "f.csv")]) == 0
    table = pd.read_csv(tmp_path / "f.csv")
    assert list(table.columns) == FIT_KEYS
    pd.testing.assert_frame_equal(table, pd.DataFrame(rows))
    capsys.readouterr()
    assert main([*args, "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == ",".join(FIT_KEYS) and "===" not in out + err
    assert len(out.splitlines()) == 4


def test_fit_json_writes_nan_as_null(store, capsys):
    args = ["fit", str(store), "--model", "linear", "--target", "y", "--inference", "none"]
    assert main([*args, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["std_err"] is None and r["ci_lower"] is None for r in rows)
    assert all(isinstance(r["coef"], float) for r in rows)


def test_stat_value_in_every_format(csv, tmp_path, capsys):
    args = ["stat", str(csv), "--column", "age", "--stat", "median", "--epsilon", "1"]
    args += ["--bounds", "0:100", "--seed", "3"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert main([*args, "-o", str(tmp_path / "s.json")]) == 0
    (row,) = _json(tmp_path / "s.json")
    assert list(row) == STAT_KEYS
    assert row["column"] == "age" and row["statistic"] == "median"
    assert row["mechanism"] == "piecewise_laplace" and row["guarantee"] == "1-DP"
    assert row["n"] == 2000 and "n_clipped" not in row and row["randomness"].startswith("seeded")
    assert f"{row['value']:.6g}" in printed and 35 < row["value"] < 55
    assert main([*args, "-o", str(tmp_path / "s.csv")]) == 0
    table = pd.read_csv(tmp_path / "s.csv")
    assert list(table.columns) == STAT_KEYS and table.value[0] == row["value"]
    capsys.readouterr()
    assert main([*args, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == [row] and "randomness" in err


def test_model_tables(csv, tmp_path, capsys):
    base = [
        "model",
        "eptr-ols",
        str(csv),
        "--clip",
        "--target",
        "y",
        "--features",
        "a,b",
        "--epsilon",
        "2",
    ]
    base += ["--delta", "0.01", "--x-radius", "4", "--theta-radius", "1", "--c0", "0.3"]
    assert main([*base, "--seed", "5", "-o", str(tmp_path / "o.csv")]) == 0
    table = pd.read_csv(tmp_path / "o.csv")
    intervals = ["std_err", "ci_lower", "ci_upper"]  # eptr-ols's results_ (issue 27)
    assert list(table.columns) == ["feature", "coefficient", "released", *intervals]
    assert list(table.feature) == ["a", "b"] and table.released.all()
    # ||coef|| ~ 0.9 is near theta_radius 1 for a noise sd ~ 0.3: no interval is claimed;
    # theta_radius 10 with y_radius 5 leaves the estimate far inside: intervals
    assert table[intervals].isna().all().all()
    wide = [*base[:-4], "--theta-radius", "10", "--y-radius", "5", "--c0", "0.3", "--seed", "5"]
    assert main([*wide, "-o", str(tmp_path / "w.csv")]) == 0
    w = pd.read_csv(tmp_path / "w.csv")
    assert ((w.ci_lower < w.coefficient) & (w.coefficient < w.ci_upper)).all()
    assert main([*base, "--seed", "5", "-o", str(tmp_path / "o.json")]) == 0
    rows = _json(tmp_path / "o.json")
    assert [r["coefficient"] for r in rows] == list(table.coefficient)
    assert all(r["released"] is True for r in rows)
    capsys.readouterr()
    bayes = ["model", "eptr-bayes", str(csv), "--clip", "--target", "y", "--features", "a,b"]
    bayes += ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4", "--c0", "0.001"]
    labels = tmp_path / "lab.csv"
    df = pd.read_csv(csv)
    df["y"] = np.where(df.a > 0, 1, 0)
    df.to_csv(labels, index=False)
    bayes[2] = str(labels)  # the data file
    assert main([*bayes, "--classes", "0,1", "--seed", "2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [list(r) for r in rows] == [["class", "prior", "mean_a", "mean_b", "released"]] * 2
    assert [r["class"] for r in rows] == ["0", "1"]
    assert sum(r["prior"] for r in rows) == pytest.approx(1, abs=0.2)
    nw = [
        "model",
        "eptr-nw",
        str(csv),
        "--clip",
        "--target",
        "y",
        "--features",
        "a",
        "--epsilon",
        "2",
    ]
    nw += ["--delta", "1e-6", "--bounds=-3:3", "--query=-0.5,0.5", "--bandwidth", "0.3"]
    nw += ["--y-radius", "3", "--c0", "0.05", "--seed", "3", "--format", "csv"]
    assert main(nw) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "query_a,estimate,released" and len(out) == 3
    assert [float(line.split(",")[0]) for line in out[1:]] == [-0.5, 0.5]


def test_suffix_decides_format_and_others_are_refused(store, tmp_path, capsys):
    args = ["fit", str(store), "--model", "linear", "--target", "y"]
    assert main([*args, "-o", str(tmp_path / "out.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("privest fit: error: -o") and ".csv or .json" in err
    assert err.count("\n") == 1 and not (tmp_path / "out.txt").exists()
    # the format is checked before any work: a missing store is not even opened
    missing = ["fit", str(tmp_path / "nope"), "--model", "linear", "--target", "y"]
    assert main([*missing, "-o", str(tmp_path / "out")]) == 2
    assert "suffix" in capsys.readouterr().err
    # --format cannot rename a suffix: another suffix, or a disagreeing one, is refused
    assert main([*args, "-o", str(tmp_path / "out.txt"), "--format", "json"]) == 2
    assert ".csv or .json" in capsys.readouterr().err
    assert main([*args, "-o", str(tmp_path / "out.json"), "--format", "csv"]) == 2
    assert "--format is csv" in capsys.readouterr().err
    assert not (tmp_path / "out.txt").exists() and not (tmp_path / "out.json").exists()
    assert main([*args, "-o", str(tmp_path / "out.json"), "--format", "json"]) == 0
    assert [r["parameter"] for r in _json(tmp_path / "out.json")] == ["intercept", "a", "b"]
    assert main([*PRIVACY, "--plot", "", "-o", str(tmp_path / "UPPER.CSV")]) == 0
    assert list(pd.read_csv(tmp_path / "UPPER.CSV").columns) == PROFILE_KEYS


def test_unwritable_output_is_a_failure_exit_1(tmp_path, capsys):
    (tmp_path / "taken.csv").mkdir()
    assert main([*PRIVACY, "--plot", "", "-o", str(tmp_path / "taken.csv")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("privest privacy: error:") and err.count("\n") == 1


def test_json_has_no_nan_tokens(tmp_path, capsys):
    assert main([*PRIVACY, "--plot", "", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    assert all(math.isfinite(r["delta_individual"]) for r in json.loads(out))

"""The command line under hostile and new-user input (issue 30): refusals before any charge
when they depend only on public facts, no silent wrong answer, one-line warnings, one
meaning of a --bounds pair."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    x1, x2 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    frame = pd.DataFrame(
        {
            "id": np.arange(1, n + 1),
            "age": rng.integers(18, 90, n),
            "x1": x1,
            "x2": x2,
            "y": np.clip(0.5 * x1 + rng.normal(0, 0.2, n), -2, 2),
            "city": [f"c{i % 7}" for i in range(n)],
        }
    )
    frame.to_csv(tmp_path / "data.csv", index=False)
    assert main(["budget", str(tmp_path / "ledger.json"), "--epsilon", "5"]) == 0
    return tmp_path


def _spends(d):
    return len(pv.Budget.open(d / "ledger.json").spends)


def _err(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_a_misspelt_column_is_refused_before_the_budget_is_charged(data, capsys):
    """docs/budget.md: a refusal that depends only on the header is not data-dependent, so
    it comes first and costs nothing; a refusal that depends on the records is charged."""
    base = ["stat", str(data / "data.csv"), "--epsilon", "1", "--budget", str(data / "ledger.json")]
    assert main([*base, "--column", "agee", "--stat", "mean", "--bounds", "0:120"]) == 2
    assert "'agee' is not a column" in _err(capsys) and _spends(data) == 0
    model = [
        "model",
        "linear",
        str(data / "data.csv"),
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--bounds=-1:1",
        "--y-bounds=-2:2",
        "--budget",
        str(data / "ledger.json"),
    ]
    assert main([*model, "--target", "yy"]) == 2 and _spends(data) == 0
    assert main([*model, "--target", "y", "--features", "x1,x3"]) == 2 and _spends(data) == 0
    capsys.readouterr()
    # the control: a value outside the bounds is found in the records, after the charge
    assert main([*base, "--column", "age", "--stat", "mean", "--bounds", "0:50"]) == 2
    assert "outside the public bounds" in _err(capsys) and _spends(data) == 1


def test_a_count_of_a_text_column_is_refused_without_quoting_a_cell(data, capsys):
    argv = [
        "stat",
        str(data / "data.csv"),
        "--column",
        "city",
        "--stat",
        "count",
        "--epsilon",
        "1",
        "--where",
        "0:1",
    ]
    assert main(argv) == 2
    err = _err(capsys)
    assert "holds text" in err or "not numeric" in err
    assert "c0" not in err and "could not convert" not in err


@pytest.mark.parametrize("where", ["100:0", "nan:100", "nan:nan", "5", "a:b"])
def test_a_where_that_is_not_an_interval_is_refused(data, capsys, where):
    """--where 100:0 and nan:100 counted nothing silently (issue 30)."""
    argv = [
        "stat",
        str(data / "data.csv"),
        "--column",
        "age",
        "--stat",
        "count",
        "--epsilon",
        "1",
        f"--where={where}",
    ]
    assert main(argv) == 2 and "--where" in _err(capsys)


def test_a_where_with_infinite_ends_counts(data, capsys):
    argv = [
        "stat",
        str(data / "data.csv"),
        "--column",
        "age",
        "--stat",
        "count",
        "--epsilon",
        "1",
        "--where=0:inf",
        "--seed",
        "1",
        "--format",
        "json",
    ]
    assert main(argv) == 0 and '"n": 300' in capsys.readouterr().out


def test_a_header_that_names_a_column_twice_is_refused(tmp_path, capsys):
    """pandas renamed the second 'age' to 'age.1' silently (issue 30)."""
    (tmp_path / "dup.csv").write_text("age,age\n" + "\n".join(f"{i},{i}" for i in range(50)))
    for column in ("age", "age.1"):
        argv = [
            "stat",
            str(tmp_path / "dup.csv"),
            "--column",
            column,
            "--stat",
            "median",
            "--epsilon",
            "1",
            "--bounds",
            "0:100",
        ]
        assert main(argv) == 2 and "names ['age'] more than once" in _err(capsys)


@pytest.mark.parametrize("features", ["x1,y", "y", "x1,x1"])
def test_a_model_of_the_target_on_itself_is_refused(data, capsys, features):
    """privest model --features x1,y --target y fitted y on itself (issue 30)."""
    argv = [
        "model",
        "linear",
        str(data / "data.csv"),
        "--target",
        "y",
        "--features",
        features,
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--bounds=-1:1",
        "--y-bounds=-2:2",
    ]
    assert main(argv) == 2 and "--features" in _err(capsys)


def test_python_warnings_reach_the_command_line_in_one_line(data):
    """A raw warning printed its source path and code line (issue 30): the CLI prints
    'privest <command>: warning: <message>' (a real process: pytest would record them)."""
    store = data / "store"
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "privest", *a], capture_output=True, text=True, check=False
    )
    rel = run(
        "release",
        str(data / "data.csv"),
        "--columns",
        "x1,x2",
        "--bounds=-1:1",
        "--lam",
        "2",
        "--zero-prob",
        "0.1",
        "--id-column",
        "id",
        "-o",
        str(store),
        "--seed",
        "1",
    )
    assert rel.returncode == 2  # 'city' is text: refused, one line
    assert rel.stderr.startswith("privest release: error:") and rel.stderr.count("\n") == 1
    frame = pd.read_csv(data / "data.csv").drop(columns="city")
    frame.assign(score=15 + frame["y"]).to_csv(data / "numeric.csv", index=False)
    rel = run(
        "release",
        str(data / "numeric.csv"),
        "--columns",
        "x1,x2",
        "--bounds=-1:1",
        "--lam",
        "0.05",
        "--zero-prob",
        "0.1",
        "--id-column",
        "id",
        "-o",
        str(store),
        "--seed",
        "1",
    )
    assert rel.returncode == 0, rel.stderr
    # score (about 15) on x1, x2: the intercept ends on the default box -10:10 and the fit
    # warns (BoundaryWarning)
    fit = run(
        "fit",
        str(store),
        "--model",
        "linear",
        "--target",
        "score",
        "--features",
        "x1,x2",
        "--seed",
        "1",
    )
    lines = [ln for ln in fit.stderr.splitlines() if ln.strip()]
    assert fit.returncode == 0 and lines, fit.stderr
    assert all(ln.startswith("privest fit: warning: ") for ln in lines), fit.stderr
    assert ".py:" not in fit.stderr and "warnings.warn" not in fit.stderr


def test_one_bounds_pair_means_every_noised_column_in_the_cli_and_the_library(data):
    """One --bounds pair noises --columns, or every column of the header but --id-column;
    the library says the same with columns= (the number of noised columns is public and
    fixed before any data: docs/vocabulary.md)."""
    frame = pd.read_csv(data / "data.csv").drop(columns="city")
    frame.to_csv(data / "numeric.csv", index=False)
    argv = [
        "release",
        str(data / "numeric.csv"),
        "--bounds=-100:100",
        "--lam",
        "0.5",
        "--zero-prob",
        "0.1",
        "--id-column",
        "id",
        "-o",
        str(data / "store"),
        "--seed",
        "3",
    ]
    assert main(argv) == 0
    cli = pv.load_release(data / "store")
    names = [c for c in frame.columns if c != "id"]
    lib = pv.ZILMechanism(0.5, 0.1, bounds=(-100, 100), columns=names).release(
        frame.drop(columns="id"), rng=3, ids=frame["id"]
    )
    assert cli.guarantee.to_dict() == lib.guarantee.to_dict()
    assert list(cli.column_names) == list(lib.column_names)
    np.testing.assert_array_equal(cli.x1, lib.x1)
    # without columns=, one pair for several columns is refused, never guessed
    with pytest.raises(pv.BoundsError, match="one pair per column, or select"):
        pv.ZILMechanism(0.5, 0.1, bounds=(-100, 100)).release(frame.drop(columns="id"))


def test_uint64_ids_above_2_63_are_refused(tmp_path):
    """They wrapped to negative int64 ids (issue 30)."""
    X = np.random.default_rng(0).uniform(0, 1, (3, 1))
    ids = np.array([1, 2**63, 2**64 - 1], dtype=np.uint64)
    with pytest.raises(pv.ValidationError, match="below 2\\^63"):
        pv.ZILMechanism(0.5, 0.1, bounds=(0, 1), columns=[0]).release(X, ids=ids).save(
            tmp_path / "s"
        )

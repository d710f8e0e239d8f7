"""The privest command: each subcommand end to end; bad input exits 2 and a failed valid
request exits 1, each with one line on stderr."""

import numpy as np
import pandas as pd
import pytest

from privest import Budget, load_release
from privest.cli import main
from privest.commands._common import parse_bounds


@pytest.fixture
def csvs(tmp_path):
    rng = np.random.default_rng(0)

    def frame(lo, hi):
        n = hi - lo
        return pd.DataFrame(
            {
                "id": [f"p{i}" for i in range(lo, hi)],
                "age": rng.uniform(20, 80, n),
                "income": rng.uniform(0, 100, n),
                "y": rng.normal(size=n),
            }
        )

    frame(0, 60).to_csv(tmp_path / "in.csv", index=False)
    frame(60, 80).to_csv(tmp_path / "more.csv", index=False)
    return tmp_path


def _err_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    return err[0]


def test_parse_bounds():
    assert parse_bounds("-1:1") == (-1.0, 1.0)
    assert parse_bounds("a=0:1,b=-2:2.5") == {"a": (0.0, 1.0), "b": (-2.0, 2.5)}


def test_release_append_and_refuse_duplicates(csvs, capsys):
    store = csvs / "store"
    args = [
        "release",
        str(csvs / "in.csv"),
        "--bounds",
        "age=18:90,income=0:120",
        "--epsilon",
        "1",
        "--delta",
        "0.2",
        "--zero-prob",
        "0.05",
        "--id-column",
        "id",
        "-o",
        str(store),
        "--seed",
        "1",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "60 records" in out and "noised: age, income" in out
    rel = load_release(store)
    assert rel.n == 60 and rel.noised_names == ("age", "income")
    np.testing.assert_array_equal(rel.x1[:, 2], pd.read_csv(csvs / "in.csv")["y"])
    assert (
        main(["release", str(csvs / "more.csv"), "--append", "--id-column", "id", "-o", str(store)])
        == 0
    )
    assert load_release(store).n == 80
    capsys.readouterr()
    assert (
        main(["release", str(csvs / "more.csv"), "--append", "--id-column", "id", "-o", str(store)])
        == 1  # a valid request that failed (DuplicateRecordError)
    )
    assert "already released" in _err_line(capsys)
    assert load_release(store).n == 80


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--bounds", "age=30:90", "--lam", "1", "--zero-prob", "0.1"], "pass --clip"),
        (["--bounds", "age=18:90", "--lam", "1"], "--zero-prob"),
        (["--bounds", "age=90:18", "--lam", "1", "--zero-prob", "0.1"], "lo < hi"),
        (
            ["--bounds", "age=18:90", "--epsilon", "1", "--delta", "0.01", "--zero-prob", "0.1"],
            "cannot be reached",
        ),
        (["--lam", "1", "--zero-prob", "0.1"], "--bounds is required"),
        (["--bounds", "age=a:b", "--lam", "1", "--zero-prob", "0.1"], "non-numeric"),
        (
            ["--bounds", "age=18:90", "--epsilon", "-1", "--delta", "0.2", "--zero-prob", "0.1"],
            "epsilon",
        ),
        (["--bounds", "age=18:90", "--lam", "1", "--delta", "0.2", "--zero-prob", "0.1"], "either"),
    ],
)
def test_bad_release_exits_2_with_one_line_and_no_output(csvs, capsys, extra, message):
    store = csvs / "bad-store"
    args = ["release", str(csvs / "in.csv"), "--id-column", "id", "-o", str(store), *extra]
    assert main(args) == 2
    assert message in _err_line(capsys)
    assert not store.exists()
    assert sorted(p.name for p in csvs.iterdir()) == ["in.csv", "more.csv"]


def test_missing_input_file(tmp_path, capsys):
    assert (
        main(
            [
                "release",
                str(tmp_path / "nope.csv"),
                "--bounds=0:1",
                "--lam",
                "1",
                "--zero-prob",
                "0.1",
                "-o",
                str(tmp_path / "s"),
            ]
        )
        == 2
    )
    assert "not a readable file" in _err_line(capsys)


def test_privacy_prints_profile_and_writes_plot(tmp_path, capsys):
    plot = tmp_path / "t.png"
    assert (
        main(
            [
                "privacy",
                "--lam",
                "1",
                "--zero-prob",
                "0.05",
                "--bounds=-1:1",
                "--d",
                "6",
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "T_{6,2.449,0.05}" in out and "profile" in out
    assert plot.stat().st_size > 10_000


def test_privacy_calibrates(capsys):
    assert (
        main(
            [
                "privacy",
                "--epsilon",
                "0.8",
                "--delta",
                "0.17",
                "--zero-prob",
                "0.05",
                "--bounds=0:1",
                "--d",
                "4",
                "--unit",
                "attribute",
                "--plot",
                "",
            ]
        )
        == 0
    )
    assert "lam = 1.98997" in capsys.readouterr().out


def test_reproduce_list_and_unknown(capsys):
    assert main(["reproduce", "--list"]) == 0
    assert "zil-figure1" in capsys.readouterr().out
    assert main(["reproduce", "nope"]) == 2
    assert "unknown" in _err_line(capsys)


def test_reproduce_data_option(tmp_path, wine_dir, capsys):
    # --data reaches the experiments that read a data set, and is refused by the others
    args = ["reproduce", "zil-table1", "--data", str(tmp_path), "--output", str(tmp_path)]
    assert main(args) == 2
    assert "reads no external data set" in capsys.readouterr().err
    out = tmp_path / "wine"
    args = ["reproduce", "eptr-wine", "--reps", "1", "--data", str(wine_dir), "--output", str(out)]
    assert main(args) == 0
    assert (out / "eptr-wine.csv").is_file()


def test_reproduce_figure1_quick(tmp_path):
    assert main(["reproduce", "zil-figure1", "--reps", "5000", "--output", str(tmp_path)]) == 0
    table = pd.read_csv(tmp_path / "zil-figure1.csv")
    assert list(table.columns[:7]) == [
        "setting",
        "n",
        "method",
        "parameter",
        "ours",
        "paper",
        "mc_se",
    ]
    calib = table[table.parameter == "c'"].iloc[0]
    assert calib.ours == pytest.approx(0.5025, abs=1e-4) and calib.paper == 0.5
    assert (tmp_path / "zil-figure1.png").stat().st_size > 10_000


def test_demo_writes_figures_and_store(tmp_path, capsys):
    # a ledger left by an earlier run: the demo starts a new one, not spending its remainder
    Budget.create(tmp_path / "ledger.json", 1.0).charge(0.5, label="earlier run")
    assert main(["demo", "--output", str(tmp_path), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "calibrated lam" in out and "not contradicted" in out and "DR median" in out
    assert "piecewise Laplace mechanism" in out and "Propose-Test-Release" in out
    assert "IWP-SGD on the release" in out and "PrivateLogisticRegression" in out
    for name in (
        "privacy-tradeoff.png",
        "release-scatter.png",
        "private-statistics.png",
        "central_models.png",
    ):
        assert (tmp_path / name).stat().st_size > 10_000
    assert load_release(tmp_path / "release-store").n == 569
    # the ledger charges every printed release before the data are read, and the report
    # is made from it and the store (issue 29: "a report made from the demo's ledger")
    budget = Budget.open(tmp_path / "ledger.json")
    mechanisms = [s.mechanism for s in budget.spends]
    assert mechanisms[0] == "zil" and mechanisms[-1] == "examples"
    assert mechanisms.count("piecewise_laplace") == 4  # one per statistic of the table
    page = (tmp_path / "report.html").read_text()
    assert "privest demo" in page and "ZIL" in page
    assert "earlier run" not in [s.label for s in budget.spends]


def test_usage_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["release", "x.csv"])
    assert info.value.code == 2
    assert "required: -o/--output" in _err_line(capsys)


def test_fit_prints_summary_and_writes_csv(tmp_path, capsys):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (1500, 2))
    df = pd.DataFrame(
        {"a": x[:, 0], "b": x[:, 1], "y": 1 + x @ [1.0, -1.0] + rng.normal(size=1500)}
    )
    df.to_csv(tmp_path / "d.csv", index=False)
    store = tmp_path / "s"
    assert (
        main(
            [
                "release",
                str(tmp_path / "d.csv"),
                "--bounds",
                "a=-1:1,b=-1:1",
                "--lam",
                "0.3",
                "--zero-prob",
                "0.3",
                "--no-ids",
                "-o",
                str(store),
                "--seed",
                "4",
            ]
        )
        == 0
    )
    capsys.readouterr()
    out_csv = tmp_path / "fit.csv"
    assert main(["fit", str(store), "--model", "linear", "--target", "y", "-o", str(out_csv)]) == 0
    text = capsys.readouterr().out
    assert "method=dr" in text and "intercept" in text and "p_value" in text
    table = pd.read_csv(out_csv, index_col="parameter")
    assert list(table.index) == ["intercept", "a", "b"]
    assert abs(table.loc["a", "coef"] - 1) < 4 * table.loc["a", "std_err"]
    assert main(["fit", str(store), "--model", "quantile", "--target", "y", "--method", "sl"]) == 2
    assert "use method='dr'" in _err_line(capsys)
    assert (
        main(["fit", str(store), "--model", "custom", "--target", "y", "--loss", "math:fabs"]) == 2
    )
    assert "--n-params" in _err_line(capsys)

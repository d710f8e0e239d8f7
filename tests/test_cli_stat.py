"""``privest stat`` through privest.cli.main."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from privest.cli import main


@pytest.fixture()
def csv(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "d.csv"
    pd.DataFrame({"age": rng.uniform(20, 70, 501), "w": rng.normal(size=501)}).to_csv(
        path, index=False
    )
    return path


def test_stat_median_prints_value_and_guarantee(csv, capsys):
    args = [
        "stat",
        str(csv),
        "--column",
        "age",
        "--stat",
        "median",
        "--epsilon",
        "1",
        "--bounds",
        "0:100",
        "--seed",
        "3",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "private median" in out and "1-DP" in out and "piecewise_laplace" in out
    assert "seeded" in out
    row = next(line for line in out.splitlines() if "piecewise_laplace" in line)
    value = float(re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", row)[0])
    assert 35 < value < 55  # median of U(20, 70) is 45; the PLM error here is ~0.1
    assert main(args) == 0
    assert capsys.readouterr().out == out  # a seed reproduces the release


@pytest.mark.parametrize(
    "stat,mech",
    [
        ("quantile:0.9", "inverse_sensitivity"),
        ("mean", "auto"),
        ("variance", "auto"),
        ("sum", "laplace"),
        ("median", "smooth_sensitivity"),
    ],
)
def test_stat_variants(csv, capsys, stat, mech):
    code = main(
        [
            "stat",
            str(csv),
            "--column",
            "age",
            "--stat",
            stat,
            "--epsilon",
            "2",
            "--bounds",
            "0:100",
            "--mechanism",
            mech,
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "secure" in out and "2-DP" in out


def test_stat_count_and_errors(csv, capsys):
    assert (
        main(
            [
                "stat",
                str(csv),
                "--column",
                "age",
                "--stat",
                "count",
                "--epsilon",
                "1",
                "--where",
                "30:40",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    assert "private count" in capsys.readouterr().out
    bad = [
        ["--stat", "median", "--epsilon", "1"],  # no bounds
        ["--stat", "median", "--epsilon", "1", "--bounds", "30:40"],  # data out of bounds
        ["--stat", "mode", "--epsilon", "1", "--bounds", "0:100"],
        ["--stat", "median", "--epsilon", "-1", "--bounds", "0:100"],
        ["--stat", "median", "--epsilon", "1"],
    ]
    for extra in bad:
        assert main(["stat", str(csv), "--column", "age", *extra]) == 2
        assert "privest stat: error:" in capsys.readouterr().err
    assert (
        main(
            [
                "stat",
                str(csv),
                "--column",
                "nope",
                "--stat",
                "median",
                "--epsilon",
                "1",
                "--bounds",
                "0:100",
            ]
        )
        == 2
    )


def test_stat_clip_reports_count(csv, capsys):
    assert (
        main(
            [
                "stat",
                str(csv),
                "--column",
                "age",
                "--stat",
                "median",
                "--epsilon",
                "1",
                "--bounds",
                "30:40",
                "--clip",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "private median" in out


def test_semicolon_csv_is_detected(tmp_path, capsys):
    path = tmp_path / "semi.csv"
    pd.DataFrame({"a b": np.arange(101.0), "c": 1.0}).to_csv(path, sep=";", index=False)
    args = ["stat", str(path), "--column", "a b", "--stat", "median", "--epsilon", "1"]
    assert main([*args, "--bounds", "0:200", "--seed", "1"]) == 0
    assert "private median of 'a b'" in capsys.readouterr().out
    assert main([*args, "--bounds", "0:200", "--sep", "|"]) == 2  # an explicit wrong sep
    assert "not a column" in capsys.readouterr().err


def test_out_of_bounds_error_names_the_cli_option(csv, capsys):
    args = ["stat", str(csv), "--column", "age", "--epsilon", "1", "--bounds", "30:40"]
    for stat in ("median", "mean", "variance"):
        assert main([*args, "--stat", stat]) == 2
        err = capsys.readouterr().err
        assert "outside the public bounds" in err and "pass --clip" in err
        assert "clip=True" not in err


def test_stat_variance_large_n_is_fast_and_truncated(tmp_path, capsys):
    """--stat variance with PLM goes through the same truncated profile as private_variance."""
    path = tmp_path / "big.csv"
    pd.DataFrame({"v": np.random.default_rng(1).uniform(0, 1, 20_000)}).to_csv(path, index=False)
    args = ["stat", str(path), "--column", "v", "--stat", "variance", "--epsilon", "1"]
    args += ["--mechanism", "piecewise_laplace"]
    assert main([*args, "--bounds", "0:1", "--seed", "2", "--diagnostics"]) == 0
    out = capsys.readouterr().out
    assert "private variance" in out and "piecewise_laplace" in out


def test_stat_resolution_releases_tied_integers_on_the_lattice(tmp_path, capsys):
    """--resolution 1 on tied integers: auto picks permute-and-flip over the integers and
    the release is an integer (the tied median itself with high probability)."""
    path = tmp_path / "rooms.csv"
    rooms = np.random.default_rng(1).integers(1, 6, 1001)
    pd.DataFrame({"rooms": rooms}).to_csv(path, index=False)
    args = ["stat", str(path), "--column", "rooms", "--stat", "median", "--epsilon", "1"]
    args += ["--bounds", "0:20", "--resolution", "1", "--seed", "2", "--format", "csv"]
    args += ["-o", str(tmp_path / "out.csv")]
    assert main(args) == 0
    row = pd.read_csv(tmp_path / "out.csv").iloc[0]
    assert row["mechanism"] == "permute_and_flip"
    assert row["value"] == np.median(rooms)
    bad = args[:-4] + ["--mechanism", "laplace"]
    assert main(bad) != 0
    assert "resolution" in capsys.readouterr().err

"""The paper-001 real-data reproductions that need a download (E4 credit default, E8 California
housing): end to end on small synthetic files in the real files' format (same header and
columns; NOT the real data), and the refusal without a path."""

import numpy as np
import pandas as pd
import pytest

from privest.cli import main
from privest.experiments import eptr_california, eptr_credit, registry

_PAY = ["PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6"]


def _credit_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A synthetic table with the UCI sheet's columns, in its order; defaults depend on PAY."""
    pay = np.clip(rng.integers(-2, 3, (n, 1)) + rng.integers(-1, 2, (n, 6)), -2, 8)
    limit = rng.choice([1e4, 5e4, 1e5, 2e5, 5e5], n)
    bill = rng.uniform(-0.05, 1.0, (n, 6)) * limit[:, None]
    amt = rng.exponential(3e3, (n, 6)).round()
    logit = -1.6 + 0.9 * pay.mean(axis=1) + 0.3 * rng.standard_normal(n)
    cols = {
        "ID": np.arange(1, n + 1),
        "LIMIT_BAL": limit,
        "SEX": rng.integers(1, 3, n),
        "EDUCATION": rng.integers(1, 5, n),
        "MARRIAGE": rng.integers(1, 4, n),
        "AGE": rng.integers(21, 75, n),
        **{c: pay[:, i] for i, c in enumerate(_PAY)},
        **{f"BILL_AMT{i + 1}": bill[:, i].round() for i in range(6)},
        **{f"PAY_AMT{i + 1}": amt[:, i] for i in range(6)},
        "default payment next month": (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int),
    }
    return pd.DataFrame(cols)


@pytest.fixture
def credit_csv(tmp_path):
    """The sheet exported as CSV: the line ',X1,...,X23,Y' above the column names."""
    df = _credit_frame(1500, np.random.default_rng(0))
    path = tmp_path / "default of credit card clients.csv"
    top = ",".join(["", *[f"X{i}" for i in range(1, 24)], "Y"])
    path.write_text(top + "\n" + df.to_csv(index=False))
    return path


@pytest.fixture
def california_csv(tmp_path):
    """scikit-learn's frame layout (nine columns); a smooth price surface plus noise."""
    rng = np.random.default_rng(1)
    n = 1500
    inc = rng.gamma(4.0, 1.0, n).clip(0.5, 15.0)
    lat = rng.uniform(32.5, 42.0, n)
    lon = rng.uniform(-124.3, -114.3, n)
    age = rng.integers(1, 53, n).astype(float)
    val = (0.4 * inc + 0.5 * (lat < 38.5) + 0.005 * age + 0.3 * rng.standard_normal(n)).clip(
        0.15, 5.00001
    )
    df = pd.DataFrame(
        {
            "MedInc": inc,
            "HouseAge": age,
            "AveRooms": rng.uniform(3, 8, n),
            "AveBedrms": rng.uniform(0.8, 1.3, n),
            "Population": rng.integers(100, 5000, n).astype(float),
            "AveOccup": rng.uniform(1.5, 4.5, n),
            "Latitude": lat,
            "Longitude": lon,
            "MedHouseVal": val,
        }
    )
    path = tmp_path / "california_housing.csv"
    df.to_csv(path, index=False)
    return path


def test_both_are_registered_and_take_data():
    for name in ("eptr-credit", "eptr-california"):
        assert name in registry.names() and registry.get(name).takes_data


def test_credit_runs_end_to_end_on_a_file_in_the_uci_format(credit_csv):
    res = eptr_credit.run(reps=2, rng=np.random.default_rng(2), progress=False, data_dir=credit_csv)
    t = res.table()
    be = t[t.parameter == "balanced_error"]
    assert set(be.method) == set(eptr_credit.METHODS)
    assert be.setting.nunique() == len(eptr_credit.LOG2_EPS)
    assert be.n.unique().tolist() == [300.0]  # stratified 20% of 1500
    assert be.ours.between(0, 1).all() and "not DP" in be.note.iloc[0]
    rate = t[t.parameter == "release_rate"].ours
    assert rate.between(0, 1).all() and rate.max() == 1.0  # 300 rows: released at large eps
    assert "main" in res.figures
    np_err = be[be.method == "non-private"].ours.mean()
    assert np_err < 0.45  # the synthetic label is learnable


def test_california_runs_end_to_end_on_a_file_in_the_sklearn_format(california_csv):
    res = eptr_california.run(
        reps=2, rng=np.random.default_rng(3), progress=False, data_dir=california_csv.parent
    )
    t = res.table()
    mse = t[t.parameter == "test_mse"]
    assert set(mse.method) == set(eptr_california.METHODS)
    assert mse.setting.nunique() == len(eptr_california.LOG2_EPS)
    assert mse.n.unique().tolist() == [300.0]
    assert (mse.ours >= 0).all() and (mse.ours <= 4 * 2.5**2).all()  # |error| <= 2 R_f
    assert "20 eps" in mse.note.iloc[0]
    assert t[t.parameter == "release_rate"].ours.between(0, 1).all()


@pytest.mark.parametrize(
    ("name", "env", "what"),
    [
        ("eptr-credit", "PRIVEST_CREDIT_PATH", "default of credit card clients"),
        ("eptr-california", "PRIVEST_CALIFORNIA_PATH", "fetch_california_housing"),
    ],
)
def test_refuses_clearly_without_data(name, env, what, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(env, raising=False)
    out = tmp_path / "out"
    assert main(["reproduce", name, "--reps", "1", "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert "--data PATH" in err and what in err and err.count("\n") == 1
    # a folder without the file, and a path that does not exist
    assert main(["reproduce", name, "--data", str(tmp_path), "--output", str(out)]) == 1
    assert what in capsys.readouterr().err
    monkeypatch.setenv(env, str(tmp_path / "nope.csv"))
    assert main(["reproduce", name, "--output", str(out)]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not out.exists()  # nothing written


def test_cli_writes_table_and_figure(credit_csv, tmp_path):
    out = tmp_path / "out"
    args = ["reproduce", "eptr-credit", "--reps", "1", "--data", str(credit_csv), "-o", str(out)]
    assert main(args) == 0
    assert (out / "eptr-credit.csv").is_file() and (out / "eptr-credit.png").is_file()

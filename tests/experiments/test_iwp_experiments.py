"""IWP-SGD reproductions: registration, CI-sized runs, and a CI-sized E1 smoke test."""

import math
from pathlib import Path

import numpy as np
import pytest

from privest.datasets.acs import load_acs
from privest.errors import ValidationError
from privest.experiments import registry
from privest.experiments.iwp_acs import run_acs
from privest.experiments.iwp_synthetic import run_synthetic

NAMES = ("iwp-synthetic", "iwp-logistic", "iwp-truncation", "iwp-acs", "iwp-regression")


def test_all_iwp_experiments_are_registered():
    assert set(NAMES) <= set(registry.names())


def _get(table, method, parameter):
    row = table[(table.method == method) & (table.parameter.str.startswith(parameter))]
    return float(row.ours.iloc[0]), float(row.mc_se.iloc[0])


@pytest.mark.slow
def test_e1_smoke_iwp_is_closer_to_real_than_naive():
    """E1 at CI size: exp loss, p = 2, n = 2e5, eps_x = 4, eps_y = 2, lambda = 1, B = 32, 5 reps."""
    res = run_synthetic(
        5, np.random.default_rng(0), False, "exponential", n_train=200_000,
        settings=({"p": 2, "eps": 6.0},), lam=1.0, batch_size=32, gamma=1e-3, eps_split=4 / 6,
    )  # fmt: skip
    t = res.table()
    real = _get(t, "SGD real", "test exponential risk of averaged")[0]
    iwp = _get(t, "IWP-SGD", "test exponential risk of averaged")[0]
    naive = _get(t, "SGD noisy", "test exponential risk of averaged")[0]
    assert abs(iwp - real) < abs(naive - real)
    assert "sigma2=11.74" in t.setting.iloc[0]
    # Accuracy: IWP recovers most of the clean accuracy that naive SGD loses.
    acc_real, acc_iwp = (
        _get(t, "SGD real", "test accuracy")[0],
        _get(t, "IWP-SGD", "test accuracy")[0],
    )
    acc_naive = _get(t, "SGD noisy", "test accuracy")[0]
    assert acc_real - acc_iwp < acc_real - acc_naive


def test_acs_runs_on_the_stand_in_and_says_so(monkeypatch):
    monkeypatch.delenv("PRIVEST_ACS_DIR", raising=False)
    res = run_acs(2, np.random.default_rng(1), False, tasks=("income",), n=20_000)
    t = res.table()
    assert t.setting.str.contains("STAND-IN").all()
    assert set(t.method) == {"SGD real", "SGD noisy", "IWP-SGD"}
    assert np.isfinite(t.ours).all()


def test_acs_loader_reports_a_missing_cache(tmp_path: Path):
    with pytest.raises(ValidationError, match="privest never downloads"):
        load_acs(tmp_path)


def test_acs_loader_reads_a_folktables_layout(tmp_path: Path):
    d = tmp_path / "2018" / "1-Year"
    d.mkdir(parents=True)
    import pandas as pd

    df = pd.DataFrame({"AGEP": [30, 15, 50], "SEX": [1, 2, 2], "SCHL": [20, 10, 22],
                       "WKHP": [40, 10, 0], "PINCP": [60_000, 500, 20_000], "PWGTP": [5, 5, 5],
                       "PUBCOV": [2, 1, 1]})  # fmt: skip
    df.to_csv(d / "psam_p06.csv", index=False)
    X, y = load_acs(tmp_path, "income", states=("CA",))
    assert X.shape == (1, 4) and list(y) == [1.0]  # rows 2 (age 15) and 3 (WKHP 0) filtered
    X, y = load_acs(tmp_path, "pubcov", states=("CA",))
    assert X.shape == (2, 4) and list(y) == [1.0, 1.0]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["iwp-truncation", "iwp-regression"])
def test_quick_runs_write_csv_and_figure(name, tmp_path, monkeypatch):
    monkeypatch.delenv("PRIVEST_ACS_DIR", raising=False)
    exp = registry.get(name)
    table, paths = exp.execute(tmp_path, reps=2 if name != "iwp-truncation" else 1, progress=False)
    assert (tmp_path / f"{name}.csv").exists() and paths and paths[0].exists()
    assert np.isfinite(table.ours).all()
    if name == "iwp-truncation":
        small = table[table.setting == "t=0.5"].ours.to_numpy()
        assert np.all(np.diff(small) < 0)  # bias decreasing in K at small t
    assert not math.isnan(table.ours.iloc[0])

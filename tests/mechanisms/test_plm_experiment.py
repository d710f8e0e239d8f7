"""``privest reproduce plm-dominance`` at a tiny size: the table's columns and its content."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privest.datasets import make_plm_data
from privest.experiments import plm_dominance as exp_mod
from privest.experiments import registry
from privest.mechanisms.inverse_sensitivity import InverseSensitivityLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw


@pytest.fixture()
def tiny(monkeypatch):
    """One n, one eps, two distributions (the code reads these module constants)."""
    monkeypatch.setattr(exp_mod, "N_GRID", (200,))
    monkeypatch.setattr(exp_mod, "EPSILONS", (1.0,))
    monkeypatch.setattr(exp_mod, "DISTRIBUTIONS", ("normal", "bimodal"))
    monkeypatch.setattr(exp_mod, "SPEC_E1", {(51, 1.0): (0.117, 0.121)})
    monkeypatch.setattr(exp_mod, "CDF_SETTING", ("normal", 200, 1.0))


def _cell(t: pd.DataFrame, setting: str, method: str, metric: str) -> tuple[float, float]:
    row = t[(t.setting == setting) & (t.method == method) & (t.parameter == metric)]
    assert len(row) == 1, (setting, method, metric)
    return float(row.ours.iloc[0]), float(row.mc_se.iloc[0])


def test_tiny_run_reports_error_distributions(tiny, tmp_path):
    exp = registry.get("plm-dominance")
    _, paths = exp.execute(tmp_path, reps=4, progress=False)
    t = pd.read_csv(tmp_path / "plm-dominance.csv")
    assert list(t.columns) == registry.COLUMNS
    assert {p.name for p in paths} >= {"plm-dominance.png", "plm-dominance-cdf.png"}
    assert set(exp_mod.METRICS) <= set(t.parameter)
    stats = {s.split("/")[0] for s in t.setting if not s.startswith("E1")}
    assert stats == {"median", "quantile:0.1", "quantile:0.9", "mean"}
    for stat in stats:
        for dist in ("normal", "bimodal"):
            setting = f"{stat}/{dist}/eps=1"
            methods = set(exp_mod.METHODS) - ({"SS"} if stat == "mean" else set())
            for method in methods:
                mean, se = _cell(t, setting, method, "E|err|")
                q50, q50_se = _cell(t, setting, method, "median |err|")
                q90, _ = _cell(t, setting, method, "q90 |err|")
                assert 0 < q50 < q90 and np.isfinite(se) and np.isfinite(q50_se)
            # Thm. 2 per data set, so also on average: PLM below INV in mean and quantiles
            for metric in exp_mod.METRICS:
                assert _cell(t, setting, "PLM", metric)[0] < _cell(t, setting, "INV", metric)[0]
    # median: Laplace with GS = 20 has E|err| = 20 exactly, far above PLM
    plm, plm_se = _cell(t, "median/normal/eps=1", "PLM", "E|err|")
    assert _cell(t, "median/normal/eps=1", "Laplace GS/eps", "E|err|") == (20.0, 0.0)
    assert 20.0 > 50 * (plm + 3 * plm_se)
    # mean: eps-DP Laplace beats PLM (paper 002, Sec. 4.1), PLM sits below Lap(2 GS/eps)
    lap = _cell(t, "mean/normal/eps=1", "Laplace GS/eps", "E|err|")[0]
    plm_mean = _cell(t, "mean/normal/eps=1", "PLM", "E|err|")[0]
    assert lap < plm_mean < 2 * lap


def test_error_quantiles_agree_with_monte_carlo():
    """The exact quantiles the table reports against sampled errors (PLM and INV)."""
    x = make_plm_data("lognormal", 300, np.random.default_rng(0))
    errs, _ = exp_mod._errors(x, "quantile:0.1", (1.0,))
    for name, cls in (("PLM", PiecewiseLaplaceLaw), ("INV", InverseSensitivityLaw)):
        mech = cls.for_statistic(x, "quantile:0.1", epsilon=1.0, bounds=exp_mod.BOUNDS)
        e = np.abs(mech.sample(40_000, rng=1) - mech.value)
        mean, q50, q90 = errs[name, 1.0]
        assert abs(mean - e.mean()) < 4 * e.std() / np.sqrt(e.size)
        # the empirical CDF at the exact quantile is p within 4 binomial SE
        for q, p in ((q50, 0.5), (q90, 0.9)):
            assert abs((e <= q).mean() - p) < 4 * np.sqrt(p * (1 - p) / e.size)

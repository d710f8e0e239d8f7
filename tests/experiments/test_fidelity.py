"""The fidelity summary of reproduction runs (python -m privest.experiments.fidelity)."""

import math

import pandas as pd

from privest.experiments.fidelity import fidelity_table, main
from privest.experiments.registry import COLUMNS


def _table():
    rows = [
        ("S1", 500, "DR", "ReLU", 0.104, 0.105, 0.002, "", ""),
        ("S1", 500, "SL", "ReLU", 0.176, 0.173, 0.0005, ">3 SE", ""),
        ("S1", 500, "ORA", "ReLU", 0.012, math.nan, 0.001, "", ""),
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def test_cells_are_measured_in_mc_se():
    cells, groups = fidelity_table(_table())
    assert len(cells) == 2  # the cell without a paper number is left out
    assert cells["gap_se"].round(6).tolist() == [-0.5, 6.0]
    assert cells["within_3se"].tolist() == [True, False]
    assert groups["within_3se"].tolist() == [1, 0]


def test_the_command_writes_markdown(tmp_path):
    _table().to_csv(tmp_path / "zil-table1.csv", index=False)
    out = tmp_path / "summary.md"
    main([str(tmp_path), "-o", str(out)])
    text = out.read_text()
    assert "## zil-table1" in text and "1 of 2 cells" in text and "+6.0" in text


def test_table1_exact_rmse_matches_the_closed_forms():
    """ORA RMSE = sqrt(Var g(U) / n); DR at S1 is unbiased with the closed-form variance
    the Monte Carlo table estimates (within 1%)."""
    import numpy as np

    from privest.experiments.zil_table1_fit import t1_exact_rmse
    from privest.experiments.zil_tables import T1_VAR

    r = t1_exact_rmse(0.1, 0.94, 500, draws=200_000)
    assert np.allclose(r["ORA"], np.sqrt(np.asarray(T1_VAR) / 500), rtol=0.01)
    assert np.allclose(r["DR"], [0.1053, 0.1801, 0.1739], rtol=0.01)

"""Shape checks of the paper-001 reproductions (its Figures 1-3; slow), on few replicates.

Each comparison is between method means over the same replicates; where methods are close the
check uses only the grid points where the paper's figures separate them.
"""

import numpy as np
import pytest

from privest.experiments import eptr_bayes, eptr_nw, eptr_ols, eptr_wine


def _pivot(result, parameter):
    t = result.table()
    t = t[t.parameter == parameter]
    return t.pivot_table(index=["setting", "n"], columns="method", values="ours")


@pytest.mark.slow
def test_e5_e6_eptr_beats_the_baselines_and_tracks_non_private():
    res = eptr_ols.run(reps=6, rng=np.random.default_rng(1), progress=False)
    pe = _pivot(res, "param_error")
    for base in ("DPJL", "DPGD", "FM", "GS"):
        assert (pe["ePTR"] < pe[base]).all(), base
    e5 = pe.loc[[i for i in pe.index if i[0].startswith("E5")]]
    eps = np.array([float(s.split("=")[1]) for s, _ in e5.index])
    big = e5[eps >= 1.5]
    assert (big["ePTR"] <= 2 * big["non-private"] + 0.05).all()
    assert "main" in res.figures


@pytest.mark.slow
def test_e1_e3_eptr_beats_dpnb_and_dpnbss():
    res = eptr_bayes.run(reps=5, rng=np.random.default_rng(2), progress=False)
    be = _pivot(res, "balanced_error")
    assert (be["ePTR"] <= be["DPNBSS"]).all()
    assert (be["ePTR"] <= be["DPNB"]).all(), be[be["ePTR"] > be["DPNB"]]
    assert (be["non-private"] <= be["ePTR"]).all()


@pytest.mark.slow
def test_e9_eptr_beats_wpe_for_eps_at_least_one():
    res = eptr_nw.run(reps=60, rng=np.random.default_rng(3), progress=False)
    se = _pivot(res, "squared_error")
    e9 = se.loc[[i for i in se.index if i[0].startswith("E9")]]
    eps = np.array([float(s.split("=")[1]) for s, _ in e9.index])
    assert (e9["ePTR"][eps >= 1] < e9["WPE"][eps >= 1]).all()
    rr = _pivot(res, "release_rate")
    assert rr.loc[("E9 eps=0.5", 2000.0), "ePTR"] < 0.05  # M = 92 >> gamma ~ 65: bottom
    assert rr.loc[("E9 eps=2", 2000.0), "ePTR"] > 0.95


@pytest.mark.slow
def test_e7_release_rate_increases_with_eps(wine_dir):
    res = eptr_wine.run(reps=8, rng=np.random.default_rng(4), progress=False, data_dir=wine_dir)
    rr = _pivot(res, "release_rate")["ePTR"]
    at80 = rr[[i for i in rr.index if "train=0.8" in i[0]]]
    t = np.array([float(s.split("log2eps=")[1]) for s, _ in at80.index])
    rate = at80.to_numpy()[np.argsort(t)]
    assert rate[0] <= 0.25 and rate[-1] >= 0.9
    assert np.corrcoef(np.sort(t), rate)[0, 1] > 0.8
    at20 = rr[[i for i in rr.index if "train=0.2" in i[0]]]
    assert at20.max() <= 0.25  # gamma ~ 0.1 at n = 1299: essentially never releases


def test_wine_experiment_names_the_missing_data(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIVEST_WINE_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no wine quality CSVs"):
        eptr_wine.run(reps=1, rng=np.random.default_rng(0), progress=False)
    monkeypatch.delenv("PRIVEST_WINE_DIR")  # no default folder: the product takes a path
    with pytest.raises(FileNotFoundError, match="--data DIR"):
        eptr_wine.run(reps=1, rng=np.random.default_rng(0), progress=False)

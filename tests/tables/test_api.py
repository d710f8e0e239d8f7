"""pv.tabulate and privest table: the shape of the table, public checks before any data,
the budget, public keys, the CLI, and the Dask backend's totals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main
from privest.errors import BoundsError, BudgetExceededError, PrivacyParameterError, ValidationError
from privest.tables.plan import make_plan
from privest.tables.totals import cell_totals


def _frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": rng.integers(0, n // 3, n),
            "region": rng.choice(["north", "south", "east"], n),
            "age": rng.choice(["young", "old"], n),
            "income": rng.uniform(0, 1e5, n).round(2),
        }
    )


KW = dict(
    by=["region", "age"],
    unit="pid",
    max_groups=2,
    max_rows=2,
    aggregates={"n": "count", "income": ["sum", "mean", "median"]},
    bounds={"income": (0, 1e5)},
    epsilon=1.0,
    delta=1e-6,
)


def test_the_table_has_a_row_per_cell_and_four_columns_per_aggregate():
    t = pv.tabulate(_frame(), rng=1, **KW)
    assert isinstance(t, pv.PrivateTable)
    outputs = ["n", "income_sum", "income_mean", "income_median"]
    expected = ["region", "age"] + [o + s for o in outputs for s in ("", "_se", "_lower", "_upper")]
    assert list(t.columns) == expected
    assert len(t) == 6  # every cell is large: all pass the selection
    keys = list(zip(t["region"], t["age"], strict=True))
    assert keys == sorted(keys)  # ordered by key, never by the data's order
    assert np.all(t["n_lower"] <= t["n"]) and np.all(t["n"] <= t["n_upper"])
    assert np.all((t["income_mean"] >= 0) & (t["income_mean"] <= 1e5))
    sub = t[t["n"] > 0]
    assert isinstance(sub, pv.PrivateTable) and sub.guarantee is t.guarantee
    assert "add or remove one person (pid)" in t.guarantee.label
    assert t.randomness == "seeded"


def test_the_budget_is_charged_before_the_data_are_read():
    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError("the data were read")

    budget = pv.Budget(epsilon=0.5, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        pv.tabulate(Untouchable(), budget=budget, **KW)
    assert not budget.spends
    budget = pv.Budget(epsilon=2.0, delta=1e-5)
    pv.tabulate(_frame(), budget=budget, rng=1, **KW)
    assert len(budget.spends) == 1
    assert budget.spent().epsilon <= 1.0 + 1e-9


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (dict(delta=0.0), PrivacyParameterError),  # private keys need delta
        (dict(bounds={}), ValidationError),
        (dict(aggregates={"income": "mode"}), ValidationError),
        (dict(max_groups=0), ValidationError),
        (dict(noise="cauchy"), ValidationError),
        (dict(by=["region", "pid"]), ValidationError),
    ],
)
def test_public_inputs_are_checked_first(change, error):
    with pytest.raises(error):
        pv.tabulate(None, **{**KW, **change})


def test_data_errors_name_counts_not_values():
    df = _frame()
    df.loc[3, "income"] = 123456.789
    with pytest.raises(BoundsError) as err:
        pv.tabulate(df, rng=1, **KW)
    assert "123456" not in str(err.value) and "1 value(s)" in str(err.value)
    assert len(pv.tabulate(df, rng=1, clip=True, **KW)) == 6
    df.loc[4, "income"] = np.nan
    with pytest.raises(ValidationError):
        pv.tabulate(df, rng=1, clip=True, **KW)


def test_public_keys_give_every_key_a_row_and_spend_no_delta():
    keys = pd.DataFrame({"region": ["east", "north", "south", "west"]})
    kw = {**KW, "by": ["region"], "delta": 0.0, "noise": "laplace"}
    t = pv.tabulate(_frame(), keys=keys, rng=2, **kw)
    assert list(t["region"]) == list(keys["region"])
    assert t.guarantee.delta(1.0) == 0.0
    assert t.loc[3, "n_lower"] == 0.0  # the empty cell "west" is released too


def test_record_unit_and_gaussian_noise():
    kw = {k: v for k, v in KW.items() if k not in ("unit", "max_groups", "max_rows")}
    t = pv.tabulate(_frame(), noise="gaussian", inference="none", rng=3, **kw)
    assert t.plan.noise == "gaussian" and "add or remove one record" in t.guarantee.label
    assert t["income_median_se"].isna().all()


def test_cli_writes_the_table_and_charges_the_ledger(tmp_path, capsys):
    _frame().to_csv(tmp_path / "visits.csv", index=False)
    ledger = tmp_path / "ledger.json"
    assert main(["budget", str(ledger), "--epsilon", "3", "--delta", "1e-5"]) == 0
    argv = [
        "table", str(tmp_path / "visits.csv"), "--by", "region", "--unit", "pid",
        "--max-groups", "2", "--agg", "count", "--agg", "mean:income",
        "--agg", "quantile:0.9:income", "--bounds", "income=0:100000", "--epsilon", "1",
        "--delta", "1e-6", "--seed", "4", "--budget", str(ledger), "-o", str(tmp_path / "t.json"),
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    rows = json.loads((tmp_path / "t.json").read_text())
    assert [r["region"] for r in rows] == ["east", "north", "south"]
    assert {"count", "income_mean_upper", "income_quantile_0.9"} <= set(rows[0])
    assert len(pv.Budget.open(ledger).spends) == 1
    assert main([*argv[:-2], "--agg", "mode:income"]) == 2


def test_dask_totals_equal_the_in_memory_totals():
    dd = pytest.importorskip("dask.dataframe")
    df = _frame(6000, seed=5)
    df["pid"] = np.arange(len(df))  # within the limits: the bounding keeps every row
    plan = make_plan(public_keys=False, **{k: v for k, v in KW.items() if k != "by"},
                     by=["region", "age"])  # fmt: skip
    from privest.tables.api import table_totals

    mem = cell_totals(df, plan, None, np.random.default_rng(0), False)
    got = table_totals(
        dd.from_pandas(df, npartitions=4), plan, None, np.random.default_rng(0), False
    )
    order_m = mem.keys.sort_values(["region", "age"]).index.to_numpy()
    order_d = got.keys.sort_values(["region", "age"]).index.to_numpy()
    assert np.array_equal(mem.rows[order_m], got.rows[order_d])
    assert np.array_equal(mem.people[order_m], got.people[order_d])
    for key in mem.sums:
        assert np.array_equal(mem.sums[key][order_m], got.sums[key][order_d])
    for key in mem.hist:
        assert np.array_equal(mem.hist[key][order_m], got.hist[key][order_d])
    t = pv.tabulate(dd.from_pandas(_frame(), npartitions=3), rng=1, **KW)
    assert len(t) == 6


def test_contingency_margins_agree_with_the_table():
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"a": rng.choice(["x", "y"], 500), "b": rng.choice(["p", "q", "r"], 500)})
    res = pv.contingency(
        df, rows="a", columns="b", levels={"a": ["x", "y"], "b": ["p", "q", "r"]},
        epsilon=1.0, simulations=199, rng=7,
    )  # fmt: skip
    assert res.table.shape == (2, 3)
    assert np.allclose(res.row_totals.to_numpy(), res.table.sum(axis=1).to_numpy())
    assert 0 < res.pvalue <= 1 and res.statistic >= 0
    with pytest.raises(ValidationError):
        pv.contingency(df, rows="a", columns="b", levels={"a": ["x"]}, epsilon=1.0)

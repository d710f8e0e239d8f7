"""Query plans (privest.planning, ``privest plan``): the guarantee by each accountant, the
predicted accuracy and the warnings, without data."""

from __future__ import annotations

import json

import pytest

import privest as pv
from privest.accounting.accountants import compose_events
from privest.cli import main
from privest.errors import ValidationError
from privest.models.statistics import statistic_mechanism

PLAN = """
[plan]
budget = {epsilon = 1.2, delta = 1e-6}

[[query]]
name = "median age"
statistic = "median"
epsilon = 0.5
bounds = [18, 90]
n = 2000

[[query]]
name = "mean income"
statistic = "mean"
epsilon = 0.5
bounds = [0, 200000]
n = 100000

[[query]]
name = "income by region"
kind = "table"
by = ["region"]
max_groups = 1
max_rows = 3
aggregates = ["count", "mean:income"]
bounds = {income = [0, 200000]}
epsilon = 0.5
cell_n = 20
"""


@pytest.fixture
def plan_file(tmp_path):
    path = tmp_path / "plan.toml"
    path.write_text(PLAN)
    return path


def test_plan_composes_the_queries_events_and_warns(plan_file):
    p = pv.plan(plan_file)
    assert [q.name for q in p.queries] == ["median age", "mean income", "income by region"]
    median = statistic_mechanism("median", epsilon=0.5, bounds=(18, 90), n=2000)
    assert p.queries[0].events == [median.guarantee.event()]
    events = [e for q in p.queries for e in q.events]
    assert p.composition == compose_events(events, 1e-6)
    assert p.composition["basic"].epsilon == pytest.approx(1.5)
    assert p.queries[0].guarantee().epsilon == pytest.approx(0.5)
    assert p.queries[0].guarantee().delta == 0.0  # a pure query reads as pure
    # the plan exceeds the budget by basic composition: said, with the numbers
    assert any("over the budget" in w and "1.5" in w for w in p.warnings)
    # cells of 20 rows: the mean's interval is wider than its range
    assert any("mean:income per cell" in w and "swamp" in w for w in p.queries[2].warnings)
    assert not p.queries[1].warnings
    rows = p.rows()
    assert {r["query"] for r in rows} == {"median age", "mean income", "income by region"}
    assert all("assumption" in r and r["conf_level"] == 0.95 for r in rows)
    assert "whole plan by pld" in str(p) and "<table>" in p._repr_html_()


def test_plan_from_json_and_dict_agree(tmp_path, plan_file):
    import tomllib

    doc = tomllib.loads(PLAN)
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    a, b = pv.plan(tmp_path / "plan.json"), pv.plan(doc)
    assert [r["half_width"] for r in a.rows()] == [r["half_width"] for r in b.rows()]


def test_release_and_model_queries():
    doc = {
        "query": [
            {
                "name": "survey",
                "kind": "release",
                "bounds": {"age": [18, 90], "income": [0, 200000]},
                "epsilon": 2.0,
                "delta": 0.3,
                "zero_prob": 0.1,
                "n": 100000,
            },
            {
                "name": "lin",
                "kind": "linear",
                "epsilon": 1.0,
                "delta": 1e-7,
                "bounds": [[-1, 1], [-1, 1]],
                "y_bounds": [-1, 1],
                "n": 1000,
                "coef": [0.5, 0.01],
            },
        ]
    }
    p = pv.plan(doc)
    release, lin = p.queries
    zil = pv.ZILMechanism.calibrate(2.0, 0.3, 0.1, {"age": (18, 90), "income": (0, 2e5)})
    assert release.events == [zil.guarantee.event(2.0)]
    assert any("without noise" in w for w in release.warnings)
    assert [a.quantity for a in lin.accuracy] == ["coef x0", "coef x1", "intercept"]
    assert any("coef x1" in w and "sign" in w for w in lin.warnings)
    assert not any("coef x0" in w for w in lin.warnings)
    assert p.delta == pytest.approx(0.3 + 1e-7 + 1e-6)  # the basic deltas plus 1e-6


def test_plan_uses_the_new_predictions():
    """A table's median, the logistic model's default method, a Gaussian release and an
    ePTR model are predicted by the plan with the predictors of privest.accuracy."""
    from privest.accuracy import predict_gaussian, predict_model, predict_table
    from privest.models.eptr_nw import EPTRKernelRegressor

    table = {
        "kind": "table",
        "aggregates": ["count", "median:income"],
        "max_groups": 1,
        "max_rows": 1,
        "cell_n": 300,
        "bounds": {"income": [0, 1000]},
        "epsilon": 1.0,
        "reference": "normal",
    }
    logit = {"kind": "logistic", "epsilon": 1.0, "bounds": [-1, 1], "n": 5000, "coef": [0.5]}
    gauss = {"kind": "gaussian", "epsilon": 1.0, "delta": 1e-6, "sensitivity": 2.0}
    nw = {"kind": "eptr", "model": "nw", "epsilon": 1.0, "n": 600, "query_points": [[0.5]]}
    names = ("table", "logit", "gauss", "nw")
    queries = zip(names, (table, logit, gauss, nw), strict=True)
    p = pv.plan({"query": [{"name": k, **q} for k, q in queries]})
    tab, lg, gs, ep = p.queries
    want = predict_table(
        ["count", "median:income"], epsilon=1.0, max_groups=1, max_rows=1, cell_n=300,
        bounds={"income": (0, 1000)}, reference="normal",
    )[0]  # fmt: skip
    assert [a.half_width for a in tab.accuracy] == [a.half_width for a in want]
    assert "noisy_mm" in lg.description and {a.mechanism for a in lg.accuracy} == {"noisy_mm"}
    model = pv.PrivateLogisticRegression(epsilon=1.0, bounds=(-1, 1))
    assert lg.accuracy[0].se == predict_model(model, n=5000, coef=[0.5])[0].se
    assert gs.accuracy[0].se == predict_gaussian(epsilon=1.0, delta=1e-6, sensitivity=2.0).se
    refused = predict_model(EPTRKernelRegressor(epsilon=1.0, query_points=[[0.5]]), n=600)
    assert ep.accuracy[0].refusal == refused[0].refusal > 0.05
    assert any("refuses" in w for w in ep.warnings)
    assert all("refusal" in row for row in p.rows())


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"query": []}, "no \\[\\[query\\]\\]"),
        ({"query": [{"statistic": "median", "epsilon": 1, "colour": 2}]}, "unknown settings"),
        ({"query": [{"kind": "histogram"}]}, "kind 'histogram'"),
        ({"query": [{"kind": "eptr", "model": "svm", "n": 10}]}, "model: 'svm'"),
        ({"query": [{"kind": "gaussian", "epsilon": 1.0}]}, "delta, sensitivity"),
        ({"plan": {"deltas": 1}, "query": [{"statistic": "mean"}]}, "\\[plan\\] table"),
        ({"query": [{"statistic": "median", "epsilon": 1, "bounds": [0, 1]}]}, "query 1"),
    ],
)
def test_bad_plans_are_refused_with_the_reason(doc, match):
    with pytest.raises(ValidationError, match=match):
        pv.plan(doc)


def test_cli_plan_file_and_one_query(plan_file, tmp_path, capsys):
    assert main(["plan", str(plan_file)]) == 0
    out = capsys.readouterr().out
    assert "median age" in out and "the whole plan" in out and "over the budget" in out
    rows_path = tmp_path / "rows.json"
    assert main(["plan", str(plan_file), "--conf-level", "0.9", "-o", str(rows_path)]) == 0
    capsys.readouterr()
    rows = json.loads(rows_path.read_text())
    assert all(r["conf_level"] == pytest.approx(0.9) for r in rows)
    assert (
        main(
            [
                "plan",
                "--stat",
                "median",
                "--epsilon",
                "1",
                "--bounds",
                "0:120",
                "--n",
                "500:5000",
                "--reference",
                "normal:40:10",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    csv = capsys.readouterr().out
    assert csv.startswith("query,") and "500-5000" in csv and "normal(mean 40, sd 10)" in csv
    assert (
        main(
            [
                "plan",
                "--release",
                "--bounds",
                "age=18:90",
                "--lam",
                "0.5",
                "--zero-prob",
                "0.1",
                "--n",
                "1000",
            ]
        )
        == 0
    )
    assert "value of age" in capsys.readouterr().out
    assert main(["plan"]) == 2
    assert "give a plan file" in capsys.readouterr().err
    assert main(["plan", str(plan_file), "--stat", "mean"]) == 2

"""The release report (privest.reports, ``privest report``) and the notebook views: what
the page holds, what it must never hold, and that it is one self-contained file."""

from __future__ import annotations

import base64
import re

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main
from privest.errors import ValidationError
from privest.reports.reprs import statistic_html, table_html

#: values of the raw data that must never reach the page
SENTINELS = ("123456.789", "98765.4321", "4242.4242")


def make_sources(folder, *, seeded: bool = True):
    """A ledger with three spends (one with a hostile label), a store, and a plan."""
    rng = np.random.default_rng(0)
    n = 2000
    income = rng.uniform(0, 2e5, n)
    income[:3] = [float(s) for s in SENTINELS]
    df = pd.DataFrame({"age": rng.integers(18, 91, n).astype(float), "income": income})
    budget = pv.Budget.create(folder / "ledger.json", 4.0, 0.31)
    pv.private_median(df.age, epsilon=0.5, bounds=(18, 90), resolution=1, budget=budget)
    pv.private_mean(df.income, epsilon=0.5, bounds=(0, 2e5), budget=budget)
    mech = pv.ZILMechanism.calibrate(2.0, 0.3, 0.1, {"age": (18, 90), "income": (0, 2e5)})
    rel = mech.release(
        df,
        rng=1 if seeded else None,
        budget=budget,
        label="<script>alert('x')</script> survey",
        ids=np.arange(n),
    )
    rel.save(folder / "store")
    (folder / "plan.toml").write_text(
        '[[query]]\nname = "mean"\nstatistic = "mean"\nepsilon = 0.5\n'
        f"bounds = [0, 200000]\nn = {n}\n"
    )
    return folder / "ledger.json", folder / "store", folder / "plan.toml"


def _svgs(page: str) -> list[str]:
    return [base64.b64decode(m).decode() for m in re.findall(r"base64,([A-Za-z0-9+/=]+)", page)]


def test_report_holds_guarantees_accuracy_and_no_data_value(tmp_path):
    ledger, store, plan = make_sources(tmp_path)
    out = pv.report([ledger, store], tmp_path / "report.html", plan=plan, title="Survey 2026")
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>Survey 2026</title>" in page
    # every spend with its guarantee; the budget used and left; every accountant
    for text in ("0.5-DP", "ZIL trade-off", "used (basic)", "left", ">pld<", ">zcdp<"):
        assert text in page, text
    # the store: parameters, parts with their randomness (seeded in red), accuracy
    assert "seeded: reproducible, NOT for real releases" in page and 'class="badge bad"' in page
    assert "value of income" in page and "mean of age" in page
    # the plan's prediction beside the spend it matches (its label is the query's name)
    assert "plan query mean, matched by label" in page  # the spend is labelled "mean"
    # versions and times
    assert "privest</td><td>0.2.0" in page and "time (UTC)" in page
    # never a data value, in the text or in the figures
    for s in SENTINELS:
        assert s not in page and all(s not in svg for svg in _svgs(page))
    # self-contained and inert: no script, no external reference; the label is escaped
    assert "<script" not in page and "&lt;script&gt;" in page
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert len(_svgs(page)) == 4 and all(svg.lstrip().startswith("<?xml") for svg in _svgs(page))


def test_secure_store_and_errors(tmp_path):
    _, store, _ = make_sources(tmp_path, seeded=False)
    page = pv.report(store, tmp_path / "r.html").read_text()
    assert 'class="badge ok">secure' in page and "NOT for real releases" not in page
    with pytest.raises(ValidationError, match=".html"):
        pv.report(store, tmp_path / "r.pdf")
    with pytest.raises(ValidationError, match="neither a ledger"):
        pv.report(tmp_path / "missing", tmp_path / "r.html")


def test_report_from_an_in_memory_budget(tmp_path):
    budget = pv.Budget(1.0)
    pv.private_count(np.ones(10), epsilon=0.25, budget=budget)
    page = pv.report(budget, tmp_path / "b.html").read_text()
    assert "in-memory budget" in page and "0.25-DP" in page


def test_cli_report(tmp_path, capsys):
    ledger, store, plan = make_sources(tmp_path)
    out = tmp_path / "cli.html"
    assert main(["report", str(ledger), str(store), "--plan", str(plan), "-o", str(out)]) == 0
    assert "written to" in capsys.readouterr().out and out.is_file()
    assert main(["report", str(ledger), "-o", str(tmp_path / "x.txt")]) == 2
    assert "must end in .html" in capsys.readouterr().err


def test_notebook_views_and_plain_reprs(tmp_path):
    g = pv.ApproxDP(1.0, 1e-6)
    assert "a privacy guarantee" in repr(g) and "(1, 1e-06)-DP" in repr(g)
    view = g._repr_html_()
    assert view.count("<img") == 2 and "delta(epsilon)" in view
    budget = pv.Budget(2.0, 1e-6)
    pv.private_mean(np.full(100, 0.5), epsilon=0.5, bounds=(0, 1), budget=budget)
    assert "spent epsilon=0.5" in repr(budget) and "left epsilon=1.5" in repr(budget)
    assert "used (basic)" in budget._repr_html_()
    stat = pv.private_mean(np.full(100, 0.5), epsilon=0.5, bounds=(0, 1), rng=3)
    view = statistic_html(stat)
    assert "noise: SE" in view and "NOT for real releases" in view
    med = pv.private_median(np.linspace(0, 1, 101), epsilon=0.5, bounds=(0, 1))
    assert "depends on the data" in statistic_html(med) and 'badge ok">secure' in statistic_html(
        med
    )
    frame = pd.DataFrame({"count": [10.2, 3.1]}, index=pd.Index(["north", "south"], name="region"))
    view = table_html(
        frame,
        pv.ApproxDP(1.0),
        pv.predict_table(["count"], epsilon=1.0, max_groups=1, max_rows=1, cell_n=10)[0],
    )
    assert "north" in view and "count per cell" in view
    x = np.random.default_rng(0).uniform(0, 1, (3000, 1))
    y = 1.0 + 2.0 * x[:, 0] + np.random.default_rng(1).normal(size=3000)
    rel = pv.ZILMechanism(0.2, 0.5, [(0, 1)]).release(x, rng=2)
    results = pv.DRLinearRegression().fit(rel, y).results_
    assert repr(results).startswith("<FitResults") and ".summary()" in repr(results)
    assert "fit results" in results._repr_html_() and "intercept" in results._repr_html_()


def test_statistic_and_table_have_notebook_views():
    """A released statistic shows its interval (what it covers); a released table its
    cells and guarantee; a statistic without inference shows no interval (control)."""
    x = np.random.default_rng(0).uniform(0, 10, 500)
    with_ci = pv.private_mean(x, epsilon=1.0, bounds=(0, 10))._repr_html_()
    assert "95% interval (population quantity)" in with_ci and "SE (" in with_ci
    bare = pv.private_mean(x, epsilon=1.0, bounds=(0, 10), inference="none")._repr_html_()
    assert "interval" not in bare and "private statistic" in bare
    people = pd.DataFrame({"pid": np.arange(500) % 100, "region": np.where(x > 5, "a", "b")})
    table = pv.tabulate(
        people,
        by="region",
        unit="pid",
        max_groups=2,
        max_rows=5,
        aggregates={"n": "count"},
        epsilon=1.0,
        keys=pd.DataFrame({"region": ["a", "b"]}),
    )
    view = table._repr_html_()
    assert "private table" in view and table.guarantee.label in view

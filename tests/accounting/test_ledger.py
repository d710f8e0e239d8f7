"""The ledger file: version-1 ledgers open (their rho recomputed, not trusted), every
malformed field is refused with one error and leaves the file as it was, a spend's rho
cannot be forged (the attack of issue 30: 51 spends of 0.5 under a total of 1), labels
cannot hang the report, and parallel composition charges the worst partition."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from privest.accounting import ApproxDP, Budget, ParallelEvent, PureDPEvent
from privest.accounting.budget import charge
from privest.accounting.ledger import LEDGER_FORMAT
from privest.cli import main
from privest.errors import BudgetExceededError, StoreError, ValidationError
from privest.release.examples import release_examples, release_regression_examples
from privest.release.zil import ZILMechanism

V1 = {
    "format": LEDGER_FORMAT,
    "version": 1,
    "epsilon": 2.0,
    "delta": 1e-5,
    "spends": [
        {
            "label": "mean",
            "epsilon": 0.5,
            "delta": 0.0,
            "rho": 0.125,
            "mechanism": "laplace",
            "time": "2026-11-01T00:00:00+00:00",
        },
        {
            "label": "forged",
            "epsilon": 0.5,
            "delta": 0.0,
            "rho": 1e-12,
            "mechanism": "laplace",
            "time": "",
        },
        {
            "label": "gaussian",
            "epsilon": 0.4,
            "delta": 1e-7,
            "rho": 1e-9,
            "mechanism": "gaussian",
            "time": "",
        },
    ],
}


def test_a_version_1_ledger_opens_with_its_rho_recomputed(tmp_path):
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(V1))
    b = Budget.open(path)
    rhos = [s.rho for s in b.spends]
    assert rhos == [0.125, 0.125, None]  # from (epsilon, delta), not the stored 1e-12 / 1e-9
    assert [s.event for s in b.spends][0] == PureDPEvent(0.5)
    assert b.spent().epsilon == pytest.approx(1.4)  # basic: the forged rho buys nothing
    b.charge(0.1, label="more")
    doc = json.loads(path.read_text())
    assert doc["version"] == 2 and doc["accountant"] == ["basic", "zcdp"]
    again = Budget.open(path)
    assert again.spends == b.spends and len(again.spends) == 4


def test_the_rho_attack_is_refused_and_the_budget_holds(tmp_path):
    for budget in (Budget(1.0), Budget.create(tmp_path / "l.json", 1.0)):
        with pytest.raises(ValidationError, match="rho"):
            budget.charge(0.5, rho=1e-12)
        admitted = 0
        for _ in range(51):
            try:
                budget.charge(0.5, label="query")
                admitted += 1
            except BudgetExceededError:
                pass
        assert admitted == 2 and budget.spent().epsilon == pytest.approx(1.0)
    # the consistent rho of a pure spend is accepted (what the old API passed)
    Budget(1.0).charge(0.5, rho=0.125)


@pytest.mark.parametrize("rho", [-1.0, "0.1", float("nan"), math.inf, True])
def test_a_malformed_rho_is_refused_before_anything_is_written(tmp_path, rho):
    path = tmp_path / "l.json"
    b = Budget.create(path, 1.0)
    b.charge(0.2, label="first")
    before = path.read_bytes()
    with pytest.raises(ValidationError, match="rho"):
        b.charge(0.2, rho=rho, label="bad")
    assert path.read_bytes() == before
    assert len(Budget.open(path).spends) == 1  # still usable


def _v2(tmp_path):
    path = tmp_path / "l.json"
    b = Budget.create(path, 4.0, 0.5)
    b.charge(0.5, label="a")
    b.charge_guarantee(
        ZILMechanism(0.5, 0.05, (0, 1)).guarantee, label="z", mechanism="zil", epsilon=3.0
    )
    return path, json.loads(path.read_text())


DAMAGE = {
    "version string": (lambda d: d.update(version="2"), "version"),
    "version 3": (lambda d: d.update(version=3), "version"),
    "epsilon negative": (lambda d: d.update(epsilon=-1.0), "epsilon"),
    "epsilon string": (lambda d: d.update(epsilon="1"), "epsilon"),
    "delta one": (lambda d: d.update(delta=1.0), "delta"),
    "accountant": (lambda d: d.update(accountant=["renyi"]), "accountant"),
    "spends not a list": (lambda d: d.update(spends={}), "spends"),
    "unknown top field": (lambda d: d.update(extra=1), "unknown"),
    "label not a string": (lambda d: d["spends"][0].update(label=7), "label"),
    "time not a string": (lambda d: d["spends"][0].update(time=None), "time"),
    "missing event": (lambda d: d["spends"][0].pop("event"), "missing"),
    "event epsilon negative": (lambda d: d["spends"][0]["event"].update(epsilon=-0.5), "epsilon"),
    "event epsilon NaN": (lambda d: d["spends"][0]["event"].update(epsilon=float("nan")), "NaN"),
    "event kind": (lambda d: d["spends"][0]["event"].update(kind="mystery"), "kind"),
    "curve c zero": (lambda d: d["spends"][1]["event"].update(c=0.0), "c"),
    "zero_prob string": (lambda d: d["spends"][1]["event"].update(zero_prob="0.1"), "zero_prob"),
    "event rho field": (lambda d: d["spends"][0]["event"].update(rho=1e-12), "unknown"),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_every_malformed_field_is_refused_with_one_error(tmp_path, name):
    path, doc = _v2(tmp_path)
    damage, field = DAMAGE[name]
    bad = copy.deepcopy(doc)
    damage(bad)
    path.write_text(json.dumps(bad))  # NaN written as JSON's NaN, which is refused too
    text = path.read_bytes()
    with pytest.raises(StoreError, match=field) as err:
        Budget.open(path)
    assert "not a valid privest budget ledger" in str(err.value)
    with pytest.raises(StoreError):
        Budget(5.0, ledger=path).charge(0.1)  # a charge refuses it too, and writes nothing
    assert path.read_bytes() == text
    path.write_text(json.dumps(doc))  # control: the undamaged document opens
    assert len(Budget.open(path).spends) == 2


def test_a_long_label_cannot_hang_the_report(tmp_path):
    path, doc = _v2(tmp_path)
    doc["spends"][0]["label"] = "x" * 100_000 + "[bold]\x1b[2J"
    path.write_text(json.dumps(doc))
    cmd = [sys.executable, "-m", "privest", "budget", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # hung 5 min before
    assert out.returncode == 0, out.stderr
    assert "(100010 characters)" in out.stdout and "\x1b" not in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) < 300
    with pytest.raises(ValidationError, match="at most 1000"):
        Budget(1.0).charge(0.1, label="y" * 1001)


def test_the_cli_shows_events_and_every_accountant(tmp_path, capsys):
    path, _ = _v2(tmp_path)
    assert main(["budget", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0.5-DP" in out and "ZIL trade-off" in out
    for name in ("basic", "zcdp", "pld"):
        assert f"  {name}" in out
    assert "reported (" in out
    assert main(["budget", str(path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["event"] for r in rows][0] == "0.5-DP"
    assert main(["budget", str(tmp_path / "p.json"), "--epsilon", "1", "--accountant", "pld"]) == 0
    assert Budget.open(tmp_path / "p.json").accountant == ("pld",)


def test_parallel_composition_charges_the_worst_partition():
    b = Budget(1.0)
    cells = [ApproxDP(0.5)] * 50
    b.charge_parallel(cells, label="table", mechanism="laplace")
    assert b.spent().epsilon == pytest.approx(0.5)
    charge(b, ApproxDP(0.5), label="table 2", mechanism="laplace", partitions=20)
    assert b.spent().epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        b.charge_parallel([ApproxDP(0.1)] * 3, label="one more", mechanism="laplace")
    # control: the same cells charged one by one add up
    seq = Budget(1.0)
    seq.charge_guarantee(ApproxDP(0.5), label="cell", mechanism="laplace")
    with pytest.raises(BudgetExceededError):
        seq.charge_guarantee(ApproxDP(0.6), label="cell", mechanism="laplace")
    # a swap that may move a record between cells touches two of them
    two = Budget(1.0)
    two.charge_parallel(cells, label="table", mechanism="laplace", touched=2)
    assert two.spent().epsilon == pytest.approx(1.0)
    assert two.spends[0].event == ParallelEvent(((50, PureDPEvent(0.5)),), touched=2)


def test_zil_releases_are_charged_by_their_curves_under_a_pld_budget():
    """The README's calibration (2, 0.3)-DP, zero_prob 0.1: under basic composition a
    third release would need delta 0.9; by the curves five fit in (epsilon 10, delta 0.95)."""
    mech = ZILMechanism.calibrate(2.0, 0.3, 0.1, {"a": (0, 1), "b": (0, 1)})
    data = pd.DataFrame(np.random.default_rng(0).uniform(size=(20, 2)), columns=["a", "b"])
    basic = Budget(10.0, 0.95)
    released = 0
    for _ in range(5):
        try:
            mech.release(data, budget=basic, rng=1)
            released += 1
        except BudgetExceededError:
            pass
    assert released == 3  # deltas 0.3 + 0.3 + 0.3 = 0.9; a fourth needs 1.2
    tight = Budget(10.0, 0.95, accountant="pld")
    for _ in range(5):
        mech.release(data, budget=tight, rng=1)
    assert tight.spent().accountant == "pld" and tight.spent().epsilon < 10.0
    # a release without a point of its curve: refused by basic, charged by the PLD
    loose = ZILMechanism(0.9, 0.1, (0, 1))
    with pytest.raises(ValidationError, match="budget_epsilon"):
        loose.release(data[["a"]], budget=Budget(10.0, 0.95))
    curve = Budget(10.0, 0.95, accountant="pld")
    loose.release(data[["a"]], budget=curve)
    assert curve.spends[0].epsilon is None and curve.spent().epsilon < 10


class Touchy:
    """Features that record every access."""

    def __init__(self, values):
        self.values, self.touched = values, 0

    def __array__(self, dtype=None, copy=None):
        self.touched += 1
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self):
        self.touched += 1
        return len(self.values)


@pytest.mark.parametrize("which", ["examples", "regression"])
def test_paper_004_releases_are_charged_before_reading(which):
    rng = np.random.default_rng(0)
    X, y = Touchy(rng.uniform(-1, 1, (30, 2))), np.where(rng.random(30) < 0.5, 1, -1)
    kw = dict(epsilon_x=1.0, epsilon_y=1.0, bounds=(-1, 1), rng=2)
    if which == "examples":
        run = lambda b: release_examples(X, y, delta=1e-5, budget=b, **kw)  # noqa: E731
    else:
        run = lambda b: release_regression_examples(  # noqa: E731
            X, rng.uniform(0, 1, 30), delta_x=1e-5, delta_y=1e-5, y_bounds=(0, 1), budget=b, **kw
        )
    spent = Budget(1.0, 1e-4)
    spent.charge(1.0)
    with pytest.raises(BudgetExceededError):
        run(spent)
    assert X.touched == 0
    roomy = Budget(5.0, 1e-4)
    run(roomy)
    assert X.touched > 0  # control: an admitted release reads the data
    (s,) = roomy.spends
    assert s.epsilon == 2.0 and s.delta == pytest.approx(1e-5 if which == "examples" else 2e-5)

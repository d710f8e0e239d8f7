"""The privacy budget: composition against closed forms, refusal before any data is read
(with a sentinel that records every access, and a negative control showing it does), ledger
files under concurrent CLI queries, and an audit of composed releases."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import privest
from privest.accounting.budget import Budget, Spend, compose
from privest.accounting.gaussian import LatticeGaussianGuarantee
from privest.accounting.zcdp import zcdp_epsilon
from privest.audit import audit_composition
from privest.cli import main
from privest.errors import BudgetExceededError, StoreError, ValidationError
from privest.mechanisms.eptr import EPTR
from privest.mechanisms.gaussian import GaussianMechanism
from privest.mechanisms.laplace import LaplaceMechanism
from privest.models.statistics import private_count, private_mean, private_median
from privest.release.zil import ZILMechanism


# ------------------------------------------------------------------ composition
def test_basic_composition_adds():
    spends = [Spend("a", 0.3), Spend("b", 0.5, 1e-7), Spend("c", 0.2, 2e-7)]
    c = compose(spends, 1e-6)
    assert (c.epsilon, c.delta, c.accountant) == (pytest.approx(1.0), pytest.approx(3e-7), "basic")


def test_zcdp_composition_of_gaussian_steps_matches_the_closed_form():
    g = LatticeGaussianGuarantee(sigma2=400.0, shift=2.0)  # rho = 4 / 800
    b = Budget(10.0, 1e-5)
    for i in range(50):
        b.charge_guarantee(g, label=f"q{i}", mechanism="gaussian", epsilon=0.4, delta=1e-8)
    c = b.spent()
    rho = 50 * 4 / 800
    assert c.accountant == "zcdp"
    assert c.epsilon == pytest.approx(zcdp_epsilon(rho, 1e-5), rel=1e-9)
    # Bun and Steinke's closed-form bound is never beaten by the tight conversion
    assert c.epsilon <= rho + 2 * math.sqrt(rho * math.log(1e5))
    assert c.epsilon < 50 * 0.4  # far below basic composition


def test_mixed_spends_add_the_others_by_basic_composition():
    b = Budget(5.0, 1e-5)
    b.charge(1.0, 1e-6, label="ptr")  # no rho
    for _ in range(20):
        b.charge(0.1, label="laplace", rho=0.1**2 / 2)
    zc = zcdp_epsilon(20 * 0.005, 1e-5 - 1e-6)
    c = b.spent()
    assert c.epsilon == pytest.approx(min(1.0 + 2.0, 1.0 + zc))
    assert c.accountant == ("zcdp" if 1.0 + zc < 3.0 else "basic")


def test_a_refused_spend_records_nothing_and_says_so():
    b = Budget(1.0)
    b.charge(0.7, label="first")
    with pytest.raises(BudgetExceededError, match="Nothing was read or released"):
        b.charge(0.4, label="second")
    assert [s.label for s in b.spends] == ["first"]
    assert b.remaining() == (pytest.approx(0.3), 0.0)
    with pytest.raises(ValidationError):
        private_mean([0.5], epsilon=0.1, bounds=(0, 1), budget="not a budget")


# ------------------------------------------------------------------ refusal before data
class Sentinel:
    """A data set that records every access (numpy conversion, length, iteration, items)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)
        self.touched = 0

    def _touch(self):
        self.touched += 1
        return self.values

    def __array__(self, dtype=None, copy=None):
        v = self._touch()
        return v if dtype is None else v.astype(dtype)

    def __len__(self):
        return len(self._touch())

    def __iter__(self):
        return iter(self._touch())

    def __getitem__(self, i):
        return self._touch()[i]


def _spent_budget() -> Budget:
    b = Budget(1.0, 1e-6)
    b.charge(1.0, label="everything")
    return b


CALLS = {
    "private_mean": lambda d, b: private_mean(d, epsilon=0.5, bounds=(0, 1), budget=b),
    "private_median": lambda d, b: private_median(d, epsilon=0.5, bounds=(0, 1), budget=b),
    "private_median_lattice": lambda d, b: private_median(  # auto reads the public n
        d, epsilon=0.5, bounds=(0, 1), resolution=0.01, budget=b
    ),
    "private_count": lambda d, b: private_count(d, epsilon=0.5, budget=b, where=lambda v: v > 0.5),
    "laplace": lambda d, b: LaplaceMechanism("sum", epsilon=0.5, bounds=(0, 1)).release(
        d, budget=b
    ),
    "gaussian": lambda d, b: GaussianMechanism(0.5, 1e-7, 0.1, dims=40).release(d, budget=b),
    "eptr": lambda d, b: EPTR(np.mean, lambda z: 1e3 * len(z), 0.1, 0.5, 1e-7).release(d, budget=b),
    "zil": lambda d, b: ZILMechanism.calibrate(0.5, 0.3, 0.05, (0, 1)).release(
        d, budget=b, budget_epsilon=0.5
    ),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_refusal_happens_before_the_data_are_read(name):
    data = Sentinel(np.random.default_rng(0).uniform(size=(40, 1) if name == "zil" else 40))
    with pytest.raises(BudgetExceededError):
        CALLS[name](data, _spent_budget())
    assert data.touched == 0
    # negative control: with budget left, the same call reads the sentinel
    roomy = Budget(100.0, 0.9)
    CALLS[name](data, roomy)
    assert data.touched > 0
    assert len(roomy.spends) == 1


def test_zil_needs_a_point_of_its_curve():
    mech = ZILMechanism(0.5, 0.05, (0, 1))
    with pytest.raises(ValidationError, match="budget_epsilon"):
        mech.release(np.zeros((3, 1)), budget=Budget(5.0, 0.5))
    b = Budget(5.0, 0.5)
    mech.release(np.zeros((3, 1)), budget=b, budget_epsilon=2.0)
    (spend,) = b.spends
    assert spend.delta == pytest.approx(float(mech.guarantee.delta(2.0)))


# ------------------------------------------------------------------ ledger files
def test_ledger_round_trip_and_refusals(tmp_path):
    path = tmp_path / "ledger.json"
    Budget.create(path, 2.0, 1e-6)
    with pytest.raises(StoreError, match="exists"):
        Budget.create(path, 5.0)
    b = Budget.open(path)
    private_mean([0.2, 0.4], epsilon=0.5, bounds=(0, 1), budget=b)
    again = Budget.open(path)
    assert [s.epsilon for s in again.spends] == [0.5]
    assert "left: epsilon=1.5" in again.report()
    for damage in ["{", json.dumps({"format": "other"}), json.dumps({"format": 1})]:
        path.write_text(damage)
        with pytest.raises(StoreError):
            Budget.open(path)
    with pytest.raises(StoreError, match="no ledger"):
        Budget.open(tmp_path / "missing.json")


def _csv(tmp_path):
    data = tmp_path / "d.csv"
    pd.DataFrame({"age": np.random.default_rng(1).uniform(18, 90, 200)}).to_csv(data, index=False)
    return data


def test_cli_refuses_past_the_total_without_reading_the_file(tmp_path, monkeypatch, capsys):
    data, ledger = _csv(tmp_path), tmp_path / "l.json"
    assert main(["budget", str(ledger), "--epsilon", "1"]) == 0
    reads = []
    import privest.commands._common as common

    real_column, real_header = common.read_column, common.read_header

    def spy_column(path, sep, column):
        reads.append("records")
        return real_column(path, sep, column)

    def spy_header(path, sep):
        reads.append("header")
        return real_header(path, sep)

    monkeypatch.setattr("privest.commands.stat.read_column", spy_column)
    monkeypatch.setattr("privest.commands.stat.read_header", spy_header)
    argv = ["stat", str(data), "--column", "age", "--stat", "mean", "--bounds", "18:90"]
    assert main([*argv, "--epsilon", "0.8", "--budget", str(ledger)]) == 0
    # the public header first (a misspelt --column is refused before any charge: issue 30),
    # then, admitted, the records (negative control)
    assert reads == ["header", "records"]
    reads.clear()
    assert main([*argv, "--epsilon", "0.5", "--budget", str(ledger)]) == 1
    assert reads == ["header"]  # refused before any record was read
    assert "exceed" in capsys.readouterr().err
    assert len(Budget.open(ledger).spends) == 1


@pytest.mark.slow
def test_concurrent_cli_queries_never_overspend(tmp_path):
    """12 queries of epsilon 0.1 from 4 processes at once against a total of 1: exactly 10
    are admitted and recorded; none is lost, none sneaks past the total."""
    data, ledger = _csv(tmp_path), tmp_path / "l.json"
    Budget.create(ledger, 1.0)
    cmd = [sys.executable, "-m", "privest", "stat", str(data), "--column", "age"]
    cmd += ["--stat", "mean", "--bounds", "18:90", "--epsilon", "0.1", "--budget", str(ledger)]

    def run(_):
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120).returncode

    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(run, range(12)))
    assert sorted(codes) == [0] * 10 + [1] * 2
    spends = Budget.open(ledger).spends
    assert len(spends) == 10 and math.fsum(s.epsilon for s in spends) == pytest.approx(1.0)


def test_release_charges_the_calibration_point_and_append_is_refused(tmp_path):
    data, ledger = _csv(tmp_path), tmp_path / "l.json"
    Budget.create(ledger, 3.0, 0.5)
    store = tmp_path / "store"
    argv = ["release", str(data), "--bounds", "18:90", "--epsilon", "1", "--delta", "0.2"]
    argv += ["--zero-prob", "0.05", "--no-ids", "-o", str(store), "--budget", str(ledger)]
    assert main(argv) == 0
    (spend,) = Budget.open(ledger).spends
    assert spend.epsilon == 1.0 and spend.delta == pytest.approx(0.2, rel=1e-3)
    more = ["release", str(data), "--append", "-o", str(store), "--budget", str(ledger)]
    assert main(more) == 2


# ------------------------------------------------------------------ audit of a sequence
def _pair():
    x = np.random.default_rng(2).uniform(0, 1, 30)
    x2 = x.copy()
    x2[0] = 1.0 - x[0]
    x[0], x2[0] = 0.0, 1.0
    return x, x2


def test_audit_of_k_queries_under_a_budget():
    x, x2 = _pair()
    b = Budget(1.0)
    mechs = [LaplaceMechanism("mean", epsilon=0.25, bounds=(0, 1)) for _ in range(4)]
    for m in mechs:
        b.charge_guarantee(m.guarantee, label="mean", mechanism="laplace")
    result = audit_composition(mechs, x, x2, b, n=40_000, rng=3)
    assert not result.contradicts
    assert result.epsilon_lower_bound() > 0.5  # the audit sees most of the composed loss
    # negative control: an accountant that forgot half of the queries is contradicted
    under = privest.ApproxDP(0.5)
    assert audit_composition(mechs, x, x2, under, n=40_000, rng=4).contradicts


# ------------------------------------------------------------------ central estimators
def _models():
    from privest.models.eptr_bayes import EPTRBayesClassifier
    from privest.models.eptr_nw import EPTRKernelRegressor
    from privest.models.eptr_ols import EPTRLinearRegression
    from privest.models.linear import PrivateLinearRegression
    from privest.models.logistic import PrivateLogisticRegression

    kw = dict(epsilon=1.0, delta=1e-6)
    return {
        "eptr_ols": lambda b: EPTRLinearRegression(**kw, budget=b),
        "eptr_bayes": lambda b: EPTRBayesClassifier(**kw, classes=[0.0, 1.0], budget=b),
        "eptr_nw": lambda b: EPTRKernelRegressor(query_points=[[0.5]], **kw, budget=b),
        "linear": lambda b: PrivateLinearRegression(**kw, bounds=(0, 1), y_bounds=(0, 1), budget=b),
        "logistic": lambda b: PrivateLogisticRegression(**kw, bounds=(0, 1), budget=b),
    }


@pytest.mark.filterwarnings("ignore::privest.errors.NothingReleasedWarning")
@pytest.mark.parametrize("name", ["eptr_ols", "eptr_bayes", "eptr_nw", "linear", "logistic"])
def test_estimators_charge_before_reading_and_clones_share_the_budget(name):
    from sklearn.base import clone

    make = _models()[name]
    X = Sentinel(np.random.default_rng(0).uniform(0, 1, (60, 1)))
    y = Sentinel((np.arange(60) % 2).astype(float))
    with pytest.raises(BudgetExceededError):
        make(_spent_budget()).fit(X, y)
    assert X.touched == 0 and y.touched == 0
    roomy = Budget(10.0, 1e-4)
    model = make(roomy)
    assert clone(model).budget is roomy
    for _ in range(2):  # a grid search fits clones: each fit spends from the one budget
        try:
            clone(model).fit(X, y)
        except (ValueError, RuntimeError):
            pass  # the sentinel data may not suit the model; the spend happened first
    assert X.touched > 0  # negative control: admitted fits read the data
    assert len(roomy.spends) == 2

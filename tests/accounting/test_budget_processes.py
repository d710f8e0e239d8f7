"""A budget across processes: scikit-learn's workers (n_jobs=2) charge a ledger-backed
budget and refuse an in-memory one; a ledger reached through a symbolic link is the same
ledger, one with a hard link is refused; concurrent processes never exceed the total."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

from privest.accounting import Budget
from privest.errors import BudgetExceededError, StoreError
from privest.models.linear import PrivateLinearRegression

CHARGE = """
import sys, time
from privest.accounting.budget import Budget
from privest.errors import BudgetExceededError, StoreError
path, start = sys.argv[1], float(sys.argv[2])
try:
    budget = Budget.open(path)
    while time.time() < start:
        time.sleep(0.001)
    budget.charge(0.6, label="query")
except (BudgetExceededError, StoreError) as exc:
    print(type(exc).__name__, exc)
    sys.exit(1)
"""


def _race(paths):
    """Charge 0.6 through each path from its own process, all at the same moment."""
    start = time.time() + 3.0  # past the imports of both
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHARGE, str(p), str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in paths
    ]
    out = [p.communicate(timeout=120) for p in procs]
    return [p.returncode for p in procs], [o for o, _ in out]


def _chain(exc: BaseException | None) -> str:
    """The messages of an exception and of its causes (joblib wraps a pickling error)."""
    out = []
    while exc is not None:
        out.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    return " | ".join(out)


def _model(budget):
    return PrivateLinearRegression(
        epsilon=0.1, delta=1e-6, bounds=(0, 1), y_bounds=(0, 1), budget=budget, random_state=0
    )


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 2))
    return X, np.clip(X @ [0.3, 0.2] + rng.normal(0, 0.05, 200), 0, 1)


def test_an_in_memory_budget_refuses_to_be_pickled_and_a_ledger_goes_as_its_file(tmp_path):
    with pytest.raises(pickle.PicklingError, match="in-memory Budget"):
        pickle.dumps(Budget(1.0))
    ledger = Budget.create(tmp_path / "l.json", 1.0)
    copy = pickle.loads(pickle.dumps(ledger))
    copy.charge(0.3, label="in the copy")
    assert [s.label for s in ledger.spends] == ["in the copy"]


@pytest.mark.slow
def test_cross_val_score_with_two_workers_charges_every_fit(tmp_path):
    from sklearn.model_selection import cross_val_score

    X, y = _data()
    with pytest.raises(Exception) as err:
        cross_val_score(_model(Budget(1.0)), X, y, cv=5, n_jobs=2)
    assert "in-memory Budget" in _chain(err.value)
    ledger = Budget.create(tmp_path / "l.json", 1.0, 1e-4)
    cross_val_score(_model(ledger), X, y, cv=5, n_jobs=2)
    assert len(ledger.spends) == 5  # was 0 of 5 with an in-memory budget
    assert ledger.spent().epsilon == pytest.approx(0.5)


@pytest.mark.slow
def test_grid_search_with_two_workers_charges_every_fit_and_the_refit(tmp_path):
    from sklearn.model_selection import GridSearchCV

    X, y = _data()
    ledger = Budget.create(tmp_path / "l.json", 2.0, 1e-4)
    grid = {"fit_intercept": [True, False]}
    GridSearchCV(_model(ledger), grid, cv=3, n_jobs=2).fit(X, y)
    assert len(ledger.spends) == 2 * 3 + 1  # was 1 of 7 with an in-memory budget
    with pytest.raises(Exception) as err:
        GridSearchCV(_model(Budget(2.0, 1e-4)), grid, cv=3, n_jobs=2).fit(X, y)
    assert "in-memory Budget" in _chain(err.value)


@pytest.mark.slow
def test_concurrent_charges_through_links_never_exceed_the_total(tmp_path):
    """0.6 + 0.6 against a total of 1, from two processes that opened the ledger before
    either charged: through the same path (control) and through a symbolic link exactly
    one is admitted; through a hard link the ledger is refused."""
    real = tmp_path / "ledger.json"
    real.touch()
    link = tmp_path / "link.json"
    link.symlink_to(real)
    for paths in ([real, real], [real, link]):
        real.unlink()
        Budget.create(real, 1.0)
        codes, _ = _race(paths)
        assert sorted(codes) == [0, 1]
        assert Budget.open(real).spent().epsilon == pytest.approx(0.6)
        assert link.is_symlink()  # the link was not replaced by a file of its own
    hard = tmp_path / "hard.json"
    os.link(real, hard)
    codes, out = _race([real, hard])
    assert codes == [1, 1] and all("hard links" in o for o in out)
    os.unlink(hard)
    assert Budget.open(real).spent().epsilon == pytest.approx(0.6)  # nothing more was charged


def test_a_link_first_then_the_file_is_one_ledger(tmp_path):
    """In turn (the order that split the ledger: the link's charge replaced the link by a
    file of its own), 0.6 through the link, then 0.6 through the file: the second is
    refused; a hard-linked ledger is refused under either name."""
    real = tmp_path / "ledger.json"
    Budget.create(real, 1.0)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    Budget.open(link).charge(0.6, label="through the link")
    with pytest.raises(BudgetExceededError):
        Budget.open(real).charge(0.6, label="through the file")
    assert link.is_symlink() and len(Budget.open(real).spends) == 1
    os.link(real, tmp_path / "other.json")
    for name in (real, tmp_path / "other.json", link):
        with pytest.raises(StoreError, match="2 names"):
            Budget.open(name)

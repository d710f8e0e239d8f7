"""Issue 30, item 10: a store that cannot refuse a re-release exists only by choice.

A release without ids is saved only with ``ids=False`` (``--no-ids``), with a
NoRecordIdsWarning on every write; the summaries name the columns stored as they were."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main
from privest.errors import NoRecordIdsWarning

MECH = pv.ZILMechanism(0.5, 0.1, {"age": (18.0, 90.0)})


def _people(n: int = 1000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.uniform(18, 90, n), "y": rng.integers(0, 2, n)})


def test_saving_without_ids_needs_the_explicit_choice(tmp_path):
    rel = MECH.release(_people())
    with pytest.raises(pv.ValidationError, match="ids=False"):
        rel.save(tmp_path / "s")
    assert not (tmp_path / "s").exists()  # refused before anything was made
    with pytest.warns(NoRecordIdsWarning, match="cannot refuse"):
        rel.save(tmp_path / "s", ids=False)
    with pytest.warns(NoRecordIdsWarning), pytest.raises(pv.StoreError, match="copy"):
        rel.save(tmp_path / "s", append=True, ids=False)  # the very same batch: refused
    with pytest.warns(NoRecordIdsWarning):  # a warning on every write
        MECH.release(_people()).save(tmp_path / "s", append=True, ids=False)
    assert pv.load_release(tmp_path / "s").n == 2000  # the same people twice: the cost
    with pytest.raises(pv.ValidationError, match="drop ids=False"):
        MECH.release(_people(), ids=np.arange(1000)).save(tmp_path / "t", ids=False)


def test_saving_the_same_people_twice_with_ids_is_refused(tmp_path):
    """The README's example with ids: the second save of the same 1000 people is refused."""
    people = _people()
    MECH.release(people, ids=people.index).save(tmp_path / "s")
    with pytest.raises(pv.DuplicateRecordError):
        MECH.release(people, ids=people.index).save(tmp_path / "s", append=True)
    assert pv.load_release(tmp_path / "s").n == 1000


def test_release_with_store_needs_ids_or_the_choice(tmp_path):
    budget = pv.Budget(epsilon=10.0, delta=0.99)
    with pytest.raises(pv.ValidationError, match="ids=False"):
        MECH.release(_people(), store=tmp_path / "s", budget=budget)
    assert budget.remaining() == (10.0, 0.99)  # refused before the budget was charged
    with pytest.warns(NoRecordIdsWarning):
        MECH.release(_people(), store=tmp_path / "s", ids=False)
    rel = MECH.release(_people(), ids=np.arange(1000), store=tmp_path / "t")
    assert rel.n == 1000 and pv.load_release(tmp_path / "t").n == 1000
    named = _people().assign(pid=np.arange(1000) + 5000)  # the id column by name, as on Dask
    rel = MECH.release(named, ids="pid", store=tmp_path / "t", append=True)
    assert rel.column_names == ("age", "y") and rel.ids[0] == 5000


def test_summary_names_the_columns_stored_as_they_were():
    with_ids = MECH.release(_people(), ids=np.arange(1000)).summary()
    assert "released as they are (no noise, not protected): id, y" in with_ids
    without = MECH.release(_people()).summary()
    assert "released as they are (no noise, not protected): y" in without
    assert "no record ids" in without and "no record ids" not in with_ids


def test_the_cli_needs_an_id_column_or_no_ids(tmp_path, capsys):
    df = _people(200)
    df.to_csv(tmp_path / "d.csv", index_label="id")
    args = ["release", str(tmp_path / "d.csv"), "--bounds", "age=18:90", "--lam", "0.5"]
    args += ["--zero-prob", "0.1"]
    assert main([*args, "-o", str(tmp_path / "s")]) == 2
    assert "--id-column is required" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
    assert main([*args, "--no-ids", "-o", str(tmp_path / "s")]) == 0
    out, err = capsys.readouterr()
    # the command line prints the NoRecordIdsWarning in one line
    assert "privest release: warning: records written to a release store without ids" in err
    assert "released as they are (no noise, not protected): id, y" in out
    assert "no record ids" in out
    assert main([*args, "--id-column", "id", "-o", str(tmp_path / "t")]) == 0
    out = capsys.readouterr().out
    assert "released as they are (no noise, not protected): id, y" in out
    assert "no record ids" not in out

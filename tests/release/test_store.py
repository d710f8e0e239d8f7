"""The append-only release store: round trips, appends, duplicates, crash safety.

docs/zil-release.md, "The release store"; paper 000, Sec. 5 (versatility: a release is
fixed, new records are appended).
"""

import json
import os

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.release import store as store_mod

# stores without ids (ids=False) and seeded releases warn; both are deliberate here
pytestmark = [
    pytest.mark.filterwarnings("ignore::privest.errors.NoRecordIdsWarning"),
    pytest.mark.filterwarnings("ignore::privest.errors.SeededRandomnessWarning"),
]


def _release(n, seed, ids=None):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"a": rng.uniform(0, 1, n), "b": rng.uniform(-1, 1, n), "y": rng.normal(size=n)}
    )
    mech = pv.ZILMechanism(lam=0.7, zero_prob=0.1, bounds={"a": (0, 1), "b": (-1, 1)})
    return mech.release(df, rng=pv.make_rng(seed), ids=ids)


def test_round_trip_keeps_every_value_and_parameter(tmp_path):
    rel = _release(100, 1, ids=[f"r{i}" for i in range(100)])
    rel.save(tmp_path / "s")
    back = pv.load_release(tmp_path / "s")
    np.testing.assert_array_equal(back.x1, rel.x1)
    np.testing.assert_array_equal(back.x2, rel.x2)
    np.testing.assert_array_equal(back.ids, rel.ids)
    np.testing.assert_array_equal(back.columns, rel.columns)
    np.testing.assert_array_equal(back.bounds, rel.bounds)
    assert (back.lam, back.zero_prob, back.column_names, back.randomness) == (
        rel.lam,
        rel.zero_prob,
        rel.column_names,
        rel.randomness,
    )
    meta = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert meta["guarantee"]["type"] == "ZILGuarantee"


def test_append_leaves_earlier_records_untouched(tmp_path):
    first = _release(50, 2, ids=[f"r{i}" for i in range(50)])
    first.save(tmp_path / "s")
    part0 = (tmp_path / "s" / "parts" / "part-000000.parquet").read_bytes()
    second = _release(30, 3, ids=[f"r{i}" for i in range(50, 80)])
    second.save(tmp_path / "s", append=True)
    assert (tmp_path / "s" / "parts" / "part-000000.parquet").read_bytes() == part0
    both = pv.load_release(tmp_path / "s")
    assert both.n == 80
    np.testing.assert_array_equal(both.x1[:50], first.x1)
    np.testing.assert_array_equal(both.x1[50:], second.x1)
    # re-analysis never changes the release
    np.testing.assert_array_equal(pv.load_release(tmp_path / "s").x2, both.x2)


def test_a_released_record_is_refused(tmp_path):
    _release(20, 4, ids=[f"r{i}" for i in range(20)]).save(tmp_path / "s")
    with pytest.raises(pv.DuplicateRecordError, match="already released.*'r19'"):
        _release(5, 5, ids=[f"r{i}" for i in range(19, 24)]).save(tmp_path / "s", append=True)
    assert pv.load_release(tmp_path / "s").n == 20


def test_append_needs_the_same_mechanism(tmp_path):
    _release(10, 6).save(tmp_path / "s", ids=False)
    other = pv.ZILMechanism(lam=0.9, zero_prob=0.1, bounds={"a": (0, 1), "b": (-1, 1)}).release(
        pd.DataFrame({"a": [0.5], "b": [0.0], "y": [1.0]}), rng=pv.make_rng(7)
    )
    with pytest.raises(pv.StoreError, match="lam"):
        other.save(tmp_path / "s", append=True, ids=False)


def test_existing_store_is_not_overwritten(tmp_path):
    _release(10, 8).save(tmp_path / "s", ids=False)
    with pytest.raises(pv.StoreError, match="already exists"):
        _release(10, 9).save(tmp_path / "s", ids=False)


def test_interrupted_append_leaves_the_previous_state(tmp_path, monkeypatch):
    _release(10, 10).save(tmp_path / "s", ids=False)
    before = (tmp_path / "s" / "manifest.json").read_text()
    real_replace = os.replace

    def crash_on_manifest(src, dst):
        if str(dst).endswith("manifest.json"):
            raise OSError("simulated crash")
        return real_replace(src, dst)

    monkeypatch.setattr(store_mod.os, "replace", crash_on_manifest)
    with pytest.raises(OSError, match="simulated crash"):
        _release(5, 11).save(tmp_path / "s", append=True, ids=False)
    monkeypatch.undo()
    assert (tmp_path / "s" / "manifest.json").read_text() == before
    assert pv.load_release(tmp_path / "s").n == 10
    _release(5, 12).save(
        tmp_path / "s", append=True, ids=False
    )  # the orphan part is replaced cleanly
    assert pv.load_release(tmp_path / "s").n == 15


def test_interrupted_create_leaves_no_released_data(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store_mod.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        _release(10, 13).save(tmp_path / "s", ids=False)
    monkeypatch.undo()
    leftovers = [p.name for p in (tmp_path / "s").rglob("*") if p.is_file()]
    assert leftovers == [".lock"]  # no part, no temporary, no hidden folder elsewhere
    assert [p.name for p in tmp_path.iterdir()] == ["s"]
    with pytest.raises(pv.StoreError, match="no release store"):
        pv.load_release(tmp_path / "s")
    _release(10, 13).save(tmp_path / "s", ids=False)  # the retry takes the abandoned folder over
    assert pv.load_release(tmp_path / "s").n == 10


def test_tampered_part_is_detected(tmp_path):
    _release(10, 14).save(tmp_path / "s", ids=False)
    part = tmp_path / "s" / "parts" / "part-000000.parquet"
    df = pd.read_parquet(part)
    df.loc[0, "a"] = 0.123
    part.chmod(0o644)
    df.to_parquet(part, index=False)
    with pytest.raises(pv.StoreError, match="checksum"):
        pv.load_release(tmp_path / "s")


def test_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(pv.StoreError, match="no release store"):
        pv.load_release(tmp_path / "nothing")

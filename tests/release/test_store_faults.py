"""Fault injection on the release store (issue 14): concurrent writers, kill -9 at random
points, a corpus of damaged stores. Each test counts what it tried and asserts on every
trial: nothing lost, nothing duplicated, one clear error, nothing written after an error."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privest as pv

MECH = {"lam": 0.4, "zero_prob": 0.1, "bounds": {"a": (0.0, 1.0), "b": (-1.0, 1.0)}}

#: a writer process: release rows [start, start + n) with ids start.. and append them
WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np, pandas as pd
    import privest as pv
    store, start, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(-1, 1, n)})
    mech = pv.ZILMechanism(lam=0.4, zero_prob=0.1, bounds={"a": (0, 1), "b": (-1, 1)})
    rel = mech.release(df, ids=np.arange(start, start + n))
    print("saving", flush=True)  # the kill test aims its signal at the save
    try:
        rel.save(store, append=True)
    except pv.DuplicateRecordError:
        sys.exit(3)
    """
)


def _seed_store(path: Path, n: int = 10) -> None:
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
    df = pd.DataFrame({"a": np.full(n, 0.5), "b": np.zeros(n)})
    mech.release(df, ids=np.arange(-n, 0)).save(path)


def _writer(tmp_path: Path) -> Path:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    return script


def _spawn(script: Path, store: Path, start: int, n: int, seed: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(script), str(store), str(start), str(n), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_concurrent_appenders_lose_and_duplicate_nothing(tmp_path):
    """4 processes append disjoint batches at once, 3 trials: every record present once."""
    script = _writer(tmp_path)
    trials, writers, n = 3, 4, 20_000
    for trial in range(trials):
        store = tmp_path / f"s{trial}"
        _seed_store(store)
        procs = [_spawn(script, store, k * n, n, 100 * trial + k) for k in range(writers)]
        codes = [p.wait(timeout=300) for p in procs]
        assert codes == [0] * writers, [p.stderr.read().decode()[-500:] for p in procs]
        rel = pv.load_release(store)
        assert rel.n == 10 + writers * n  # nothing lost
        assert np.unique(rel.ids).size == rel.n  # nothing duplicated
        assert set(rel.ids[rel.ids >= 0]) == set(range(writers * n))
        assert len(json.loads((store / "manifest.json").read_text())["parts"]) == writers + 1


@pytest.mark.slow
def test_the_same_ids_from_two_processes_exactly_one_succeeds(tmp_path):
    script = _writer(tmp_path)
    for trial in range(3):
        store = tmp_path / f"s{trial}"
        _seed_store(store)
        procs = [_spawn(script, store, 0, 5000, 10 * trial + k) for k in range(2)]
        codes = sorted(p.wait(timeout=300) for p in procs)
        assert codes == [0, 3], [p.stderr.read().decode()[-500:] for p in procs]
        assert pv.load_release(store).n == 10 + 5000


@pytest.mark.slow
def test_kill_9_at_random_points_of_a_large_append(tmp_path):
    """12 large appends killed at a random time in the 1.6 s after they start saving (lock,
    duplicate check, part write and fsync, manifest replace): the store is unchanged or
    fully appended, always loads, and the next append succeeds and removes what the dead
    writer left."""
    script = _writer(tmp_path)
    store = tmp_path / "s"
    _seed_store(store)
    rng = np.random.default_rng(7)
    n, expected, start, outcomes = 300_000, 10, 0, {"unchanged": 0, "appended": 0}
    for trial in range(12):
        proc = _spawn(script, store, start, n, trial)
        assert proc.stdout.readline().strip() == b"saving"
        time.sleep(float(rng.uniform(0.0, 1.6)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        rel = pv.load_release(store)
        assert rel.n in (expected, expected + n), (trial, rel.n)
        outcomes["appended" if rel.n == expected + n else "unchanged"] += 1
        expected = rel.n
        start += n
        # the next (small) append succeeds and cleans the dead writer's temporaries
        mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
        df = pd.DataFrame({"a": [0.5], "b": [0.0]})
        mech.release(df, ids=[10**9 + trial]).save(store, append=True)
        expected += 1
        listed = {p["file"] for p in json.loads((store / "manifest.json").read_text())["parts"]}
        on_disk = {f"parts/{f.name}" for f in (store / "parts").iterdir()}
        assert on_disk == listed, on_disk ^ listed
        assert not list(store.glob(".manifest-*"))
    assert pv.load_release(store).n == expected
    assert sum(outcomes.values()) == 12
    print(f"kill -9 trials: {outcomes}")  # the closing note reports the split


# ------------------------------------------------------------------ damaged stores
def _edit_manifest(edit):
    def apply(store: Path) -> None:
        path = store / "manifest.json"
        meta = json.loads(path.read_text())
        edit(meta)
        path.write_text(json.dumps(meta))

    return apply


def _part(store: Path) -> Path:
    part = store / "parts" / "part-000000.parquet"
    part.chmod(0o644)
    return part


def _set(meta, keys, value):
    target = meta
    for k in keys[:-1]:
        target = target[k]
    target[keys[-1]] = value


DAMAGE = {
    "truncated part": lambda s: _part(s).write_bytes(_part(s).read_bytes()[:200]),
    "part replaced by another file": lambda s: _part(s).write_bytes(b"not parquet"),
    "missing part": lambda s: _part(s).unlink(),
    "missing manifest": lambda s: (s / "manifest.json").unlink(),
    "manifest not json": lambda s: (s / "manifest.json").write_text("{not json"),
    "manifest is a list": lambda s: (s / "manifest.json").write_text("[]"),
    "no mechanism key": _edit_manifest(lambda m: m.pop("mechanism")),
    "no parts key": _edit_manifest(lambda m: m.pop("parts")),
    "parts is a string": _edit_manifest(lambda m: _set(m, ["parts"], "x")),
    "lam times 10": _edit_manifest(lambda m: _set(m, ["mechanism", "lam"], 4.0)),
    "lam as text": _edit_manifest(lambda m: _set(m, ["mechanism", "lam"], "0.4")),
    "bounds edited": _edit_manifest(lambda m: _set(m, ["mechanism", "bounds"], [[0, 9], [-1, 1]])),
    "guarantee edited": _edit_manifest(lambda m: _set(m, ["guarantee", "lam"], 40.0)),
    "escaping part path": _edit_manifest(
        lambda m: _set(m, ["parts", 0, "file"], "../../../../etc/hostname")
    ),
    "absolute part path": _edit_manifest(lambda m: _set(m, ["parts", 0, "file"], "/etc/hostname")),
    "rows edited": _edit_manifest(lambda m: _set(m, ["parts", 0, "rows"], 11)),
    "n_rows edited": _edit_manifest(lambda m: _set(m, ["n_rows"], 999)),
    "sha edited": _edit_manifest(lambda m: _set(m, ["parts", 0, "sha256"], "0" * 64)),
    "old version": _edit_manifest(lambda m: _set(m, ["version"], 1)),
    "digest removed": _edit_manifest(lambda m: m.pop("manifest_sha256")),
    "unknown randomness": _edit_manifest(lambda m: _set(m, ["parts", 0, "randomness"], "x")),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_store_gives_one_clear_error_and_nothing_is_written(tmp_path, damage):
    store = tmp_path / "s"
    _seed_store(store)
    DAMAGE[damage](store)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    with pytest.raises(pv.StoreError, match="store:") as err:
        pv.load_release(store)
    assert "Traceback" not in str(err.value) and "\n" not in str(err.value)
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
    batch = mech.release(pd.DataFrame({"a": [0.5], "b": [0.0]}), ids=[123])
    with pytest.raises(pv.StoreError):
        batch.save(store, append=True)
    after = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    assert after == before  # nothing written despite the error


def test_corpus_counts():
    """The closing note's counts come from here: every case above is a distinct damage."""
    assert len(DAMAGE) == 21


def test_stale_temporaries_are_removed_by_the_next_write(tmp_path):
    """Temporaries no manifest lists are removed; an unlisted *final* part is refused, never
    removed (issue 30, item 8: tests/release/test_store_edits.py)."""
    store = tmp_path / "s"
    _seed_store(store)
    (store / "parts" / ".part-000001-99999.tmp").write_bytes(b"released data")
    (store / ".manifest-99999.tmp").write_text("{}")
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
    mech.release(pd.DataFrame({"a": [0.5], "b": [0.0]}), ids=[1]).save(store, append=True)
    names = sorted(f.name for f in (store / "parts").iterdir())
    assert names == ["part-000000.parquet", "part-000001.parquet"]
    assert not list(store.glob(".manifest-*"))
    assert pv.load_release(store).n == 11


def test_id_types_are_canonical_and_one_per_store(tmp_path):
    store = tmp_path / "s"
    _seed_store(store)
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
    df = pd.DataFrame({"a": [0.5, 0.5], "b": [0.0, 0.0]})
    # ids read as floats (a CSV with an empty id cell elsewhere) match the stored ints
    with pytest.raises(pv.DuplicateRecordError):
        mech.release(df, ids=np.array([-1.0, 5.0])).save(store, append=True)
    with pytest.raises(pv.ValidationError, match="missing"):
        mech.release(df, ids=np.array([1.0, np.nan]))
    with pytest.raises(pv.ValidationError, match="missing"):
        mech.release(df, ids=["a", " "])
    with pytest.raises(pv.ValidationError, match="whole"):
        mech.release(df, ids=[1.5, 2.0])
    with pytest.raises(pv.StoreError, match="id type|ids are str"):
        mech.release(df, ids=["x1", "x2"]).save(store, append=True)
    assert pv.load_release(store).n == 10


def test_reserved_column_names_are_refused(tmp_path):
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], {"a": (0.0, 1.0)})
    clash = pd.DataFrame({"a": [0.5], "id": [7.0]})
    with pytest.raises(pv.ValidationError, match="reserved"):
        mech.release(clash, ids=[1]).save(tmp_path / "s1")
    x2 = pd.DataFrame({"a": [0.5], "a~x2": [0.1]})
    with pytest.raises(pv.ValidationError, match="reserved"):
        mech.release(x2).save(tmp_path / "s2")
    assert not (tmp_path / "s1").exists() or not any((tmp_path / "s1" / "parts").glob("*"))


def test_a_seeded_append_into_a_secure_store_is_refused(tmp_path):
    store = tmp_path / "s"
    _seed_store(store)  # secure randomness
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
    df = pd.DataFrame({"a": [0.5], "b": [0.0]})
    for rng in (7, np.random.default_rng(7)):
        with pytest.raises(pv.StoreError, match="secure"):
            mech.release(df, ids=[1], rng=rng).save(store, append=True)
    assert pv.load_release(store).randomness == "secure"


def test_overflowing_settings_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(pv.ValidationError, match="float range"):
        pv.ZILMechanism(1e-310, 0.1, (0.0, 1000.0))
    # bounds beyond +-1e100 are refused by the shared check (docs/vocabulary.md, issue 30)
    with pytest.raises(pv.BoundsError, match="ends within"):
        pv.ZILMechanism(1.0, 0.1, (-1e308, 1e308))
    with pytest.raises(pv.BoundsError, match="ends within"):
        pv.private_median(np.zeros(5), epsilon=1.0, bounds=(-1e308, 1e308))
    assert not any(tmp_path.iterdir())


def test_store_folder_with_foreign_files_is_not_taken_over(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("mine")
    mech = pv.ZILMechanism(MECH["lam"], MECH["zero_prob"], MECH["bounds"])
    with pytest.raises(pv.StoreError, match="other files"):
        mech.release(pd.DataFrame({"a": [0.5], "b": [0.0]})).save(tmp_path / "s", ids=False)
    assert sorted(f.name for f in (tmp_path / "s").iterdir()) == [".lock", "notes.txt"]
    shutil.rmtree(tmp_path / "s")
    assert os.listdir(tmp_path) == []

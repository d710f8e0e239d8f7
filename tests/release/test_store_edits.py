"""Issue 30, item 8: a failure never deletes released data; edited manifests are refused.

Each edit is injected twice: as a naive editor makes it (the manifest's digest no longer
matches) and as a determined one does (the digest recomputed), so both the digest and the
structural checks behind it are exercised. Every trial asserts one clear StoreError on
load, on append and on a new store at the same path, and that not one byte of the folder
changed. A writer killed between its commit and its rename leaves a store that loads and
that the next write completes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.release.manifest import _digest

BOUNDS = {"a": (0.0, 1.0), "b": (-1.0, 1.0)}
pytestmark = pytest.mark.filterwarnings("ignore::privest.errors.SeededRandomnessWarning")


def _batch(start: int, n: int, seed: int) -> pv.ZILRelease:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(-1, 1, n)})
    return pv.ZILMechanism(0.4, 0.1, BOUNDS).release(df, ids=np.arange(start, start + n))


def _store(path: Path, parts: int = 3) -> Path:
    for k in range(parts):
        _batch(100 * k, 20, k).save(path, append=k > 0)
    return path


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _rewrite(path: Path, edit, recompute: bool) -> None:
    mpath = path / "manifest.json"
    meta = json.loads(mpath.read_text())
    edit(path, meta)
    if recompute:
        meta["n_rows"] = sum(p["rows"] for p in meta["parts"])
        meta["manifest_sha256"] = _digest(meta)
    mpath.write_text(json.dumps(meta))


def _drop_last(path, meta):
    meta["parts"].pop()


def _empty(path, meta):
    meta["parts"] = []


def _list_twice(path, meta):
    """Copy the last part under the next name and list it: its records twice."""
    last = meta["parts"][-1]
    copy = dict(last, file=f"parts/part-{len(meta['parts']):06d}.parquet")
    shutil.copy(path / last["file"], path / copy["file"])
    meta["parts"].append(copy)


def _relabel(path, meta):
    meta["parts"][-1]["randomness"] = "seeded"


def _drop_first(path, meta):
    """Remove the first entry and renumber: every part path then names another file."""
    meta["parts"].pop(0)


EDITS = {
    "last part entry removed": _drop_last,
    "parts list emptied": _empty,
    "a part listed twice": _list_twice,
    "randomness label edited": _relabel,
    "first part entry removed": _drop_first,
}


#: every edit by both editors, except a relabelled part with a recomputed digest: nothing
#: in the folder contradicts it (the threat model of docs/zil-release.md: no keyed MAC)
CASES = [
    (edit, recompute)
    for edit in sorted(EDITS)
    for recompute in (False, True)
    if not (edit == "randomness label edited" and recompute)
]


@pytest.mark.parametrize(("edit", "recompute"), CASES)
def test_an_edited_manifest_is_refused_and_nothing_is_deleted(tmp_path, edit, recompute):
    store = _store(tmp_path / "s")
    _rewrite(store, EDITS[edit], recompute)
    before = _files(store)
    with pytest.raises(pv.StoreError, match="store:") as err:
        pv.load_release(store)
    assert "\n" not in str(err.value)
    with pytest.raises(pv.StoreError, match="store:"):
        _batch(10_000, 5, 9).save(store, append=True)
    with pytest.raises(pv.StoreError, match="store:"):  # nor taken over as a new store
        _batch(20_000, 5, 9).save(store)
    assert _files(store) == before  # not one byte written or deleted


def test_edit_corpus_counts():
    """The closing note's counts: 5 edits x 2 editors, less the undetectable relabel."""
    assert len(CASES) == len(EDITS) * 2 - 1 == 9


def test_a_store_whose_manifest_was_deleted_is_not_taken_over(tmp_path):
    store = _store(tmp_path / "s")
    (store / "manifest.json").unlink()
    before = _files(store)
    with pytest.raises(pv.StoreError, match="part-000000.parquet is in .* not in a manifest"):
        _batch(0, 20, 1).save(store)  # the ids it holds would be released again
    with pytest.raises(pv.StoreError, match="no release store"):
        pv.load_release(store)
    assert _files(store) == before


def test_a_listed_part_that_is_missing_stops_every_write(tmp_path):
    store = _store(tmp_path / "s")
    (store / "parts" / "part-000002.parquet").chmod(0o644)
    (store / "parts" / "part-000002.parquet").unlink()
    before = _files(store)
    for attempt in (
        lambda: pv.load_release(store),
        lambda: _batch(500, 5, 3).save(store, append=True),
    ):
        with pytest.raises(
            pv.StoreError, match="part-000002.parquet listed in the manifest is missing"
        ):
            attempt()
    assert _files(store) == before


def test_a_manifest_with_non_finite_numbers_is_damaged(tmp_path):
    store = _store(tmp_path / "s", parts=1)
    text = (store / "manifest.json").read_text().replace('"lam": 0.4', '"lam": NaN')
    (store / "manifest.json").write_text(text)
    with pytest.raises(pv.StoreError, match="non-finite"):
        pv.load_release(store)


#: a writer that dies (os._exit, as kill -9 would) after its commit, before its rename
CRASH_AFTER_COMMIT = textwrap.dedent(
    """
    import os, sys
    import numpy as np, pandas as pd
    import privest as pv
    import privest.release.store as st
    real = os.replace
    def replace(src, dst):
        if str(src).endswith(".tmp") and str(dst).endswith(".parquet"):
            os._exit(9)  # the manifest is written; the part is still a temporary
        return real(src, dst)
    st.os.replace = replace
    rng = np.random.default_rng(int(sys.argv[2]))
    df = pd.DataFrame({"a": rng.uniform(0, 1, 50), "b": rng.uniform(-1, 1, 50)})
    mech = pv.ZILMechanism(0.4, 0.1, {"a": (0, 1), "b": (-1, 1)})
    mech.release(df, ids=np.arange(50) + int(sys.argv[3])).save(sys.argv[1], append=True)
    """
)


def test_a_writer_killed_after_its_commit_leaves_a_store_that_loads(tmp_path):
    """3 trials: the store loads with the new batch (read from its temporary), refuses its
    ids, and the next append renames the part into place."""
    script = tmp_path / "crash.py"
    script.write_text(CRASH_AFTER_COMMIT)
    store = _store(tmp_path / "s", parts=1)
    expected = 20
    for trial in range(3):
        start = 1000 * (trial + 1)
        code = subprocess.run([sys.executable, str(script), str(store), str(trial), str(start)])
        assert code.returncode == 9
        assert list(store.glob("parts/.part-*.tmp"))  # listed, not yet renamed
        rel = pv.load_release(store)
        expected += 50
        assert rel.n == expected and set(range(start, start + 50)) <= set(rel.ids)
        with pytest.raises(pv.DuplicateRecordError):
            _batch(start, 5, trial).save(store, append=True)
        listed = [p["file"] for p in json.loads((store / "manifest.json").read_text())["parts"]]
        assert sorted(f"parts/{f.name}" for f in store.glob("parts/*")) == listed
        assert not list(store.glob("parts/.part-*.tmp"))
    assert pv.load_release(store).n == expected


def test_a_failure_after_the_commit_keeps_the_batch(tmp_path, monkeypatch):
    """An error (not a crash) between commit and rename: the handler completes the rename
    instead of removing a part the manifest lists."""
    import privest.release.store as st

    store = _store(tmp_path / "s", parts=1)
    real = os.replace
    calls = []

    def flaky(src, dst):
        if str(src).endswith(".tmp") and str(dst).endswith(".parquet") and not calls:
            calls.append(dst)
            raise OSError("simulated failure after the commit")
        return real(src, dst)

    monkeypatch.setattr(st.os, "replace", flaky)
    with pytest.raises(OSError, match="after the commit"):
        _batch(500, 30, 4).save(store, append=True)
    monkeypatch.undo()
    assert calls and Path(calls[0]).is_file()  # renamed by the failure's tidy-up
    assert pv.load_release(store).n == 50

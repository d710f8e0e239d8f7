"""Append-only storage of ZIL releases (paper 000, Section 5: versatility and online use).

What a user needs to know about it is in docs/zil-release.md, "The release store".

A store is a folder::

    STORE/manifest.json               parameters, guarantee, column names, the list of parts
    STORE/parts/part-NNNNNN.parquet   immutable Parquet files, one per release batch
    STORE/.lock                       the writers' lock

What it promises, and how:

* **Each record is released once.** A record id that was released before is refused
  (releasing it again would compose its privacy loss). Ids have one canonical type per
  store (:mod:`privest.release.ids`); a batch of another type is refused.
* **Concurrent writers lose nothing.** Every write holds an exclusive lock on
  ``STORE/.lock`` across read-manifest -> duplicate check -> write-part ->
  replace-manifest, so N appenders are serialised; the operating system releases the lock
  when a writer dies, even by ``kill -9``.
* **Crashes leave the previous state or the new one.** A part is written under a temporary
  name, flushed to disk (fsync), made read-only and renamed; the parts folder is fsynced;
  then the manifest is replaced atomically and the store folder fsynced. A part the
  manifest does not list is ignored and removed by the next write, like any temporary
  file a dead writer left behind. A fresh store is built inside its own folder, so no
  hidden folder with released data is ever left elsewhere.
* **Edits are detected.** The manifest is validated on every load (schema, part paths
  confined to ``parts/``, row counts) and carries the sha256 of its mechanism block; the
  stored guarantee must be the one recomputed from that block, and every part its sha256.
  Threat model: this detects accidental and naive edits; someone who can write the folder
  can also recompute the digests (a keyed MAC is out of scope), so protect the folder
  with file permissions.
* **Nothing data-dependent beyond the release.** The manifest holds public parameters,
  row counts (public n) and how each part's randomness was made; no clipping counts.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privest.durable import exclusive_lock, fsync_dir, write_json_atomic
from privest.errors import DuplicateRecordError, StoreError, ValidationError
from privest.release.ids import id_type_of

__all__ = ["load_release", "read_manifest", "save_release"]

FORMAT = "privest-zil-store"
#: v3: per-column lam (v2), typed ids, mechanism digest, per-part randomness, locking
VERSION = 3
MANIFEST = "manifest.json"
LOCK = ".lock"
ID_COLUMN = "id"
X2_SUFFIX = "~x2"
PART_NAME = re.compile(r"^parts/part-(\d{6})\.parquet$")
#: how long a writer waits for another writer's lock before giving up (seconds)
LOCK_TIMEOUT = 600.0


def _x2_name(name: str) -> str:
    return f"{name}{X2_SUFFIX}"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _digest(block: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a manifest block."""
    text = json.dumps(block, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@contextmanager
def _locked(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the store's exclusive writer lock (released by the OS if the process dies)."""
    busy = StoreError(
        f"store: another writer has held {str(path)!r} for over {timeout:g} s; try again "
        "when it has finished"
    )
    with exclusive_lock(path / LOCK, timeout, busy):
        yield


# ------------------------------------------------------------------ the manifest
def _mechanism_block(rel: Any) -> dict[str, Any]:
    return {
        "lam": float(rel.lam),
        "zero_prob": float(rel.zero_prob),
        "bounds": rel.bounds.tolist(),
        "columns": [rel.column_names[j] for j in rel.columns],
        "column_names": list(rel.column_names),
        "id_type": id_type_of(rel.ids),
        "resolution": None if rel.resolution is None else rel.resolution.tolist(),
    }


def _fail(mpath: Path, what: str) -> StoreError:
    return StoreError(f"store: {mpath} is damaged: {what}")


def _require(cond: bool, mpath: Path, what: str) -> None:
    if not cond:
        raise _fail(mpath, what)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _validate(meta: Any, mpath: Path) -> dict[str, Any]:
    """Check the manifest's schema, digests and part paths; return it or raise StoreError."""
    _require(isinstance(meta, dict), mpath, "it is not a JSON object")
    _require(
        meta.get("format") == FORMAT and meta.get("version") == VERSION,
        mpath,
        f"not a {FORMAT} v{VERSION} manifest (format={meta.get('format')!r}, "
        f"version={meta.get('version')!r}); stores of earlier versions are not read",
    )
    for key, kind in (("mechanism", dict), ("parts", list), ("guarantee", dict)):
        _require(isinstance(meta.get(key), kind), mpath, f"key {key!r} is missing or malformed")
    _validate_mechanism(meta, mpath)
    _validate_parts(meta, mpath)
    return meta


def _validate_mechanism(meta: dict[str, Any], mpath: Path) -> None:
    """The mechanism block: its digest, columns, bounds, parameters and guarantee."""
    mech = meta["mechanism"]
    _require(
        meta.get("mechanism_sha256") == _digest(mech),
        mpath,
        "the mechanism block does not match its digest (lam, bounds or columns were edited)",
    )
    names, cols = mech.get("column_names"), mech.get("columns")
    _require(
        isinstance(names, list) and all(isinstance(c, str) for c in names) and names,
        mpath,
        "column_names must be a non-empty list of names",
    )
    _require(
        isinstance(cols, list) and cols and set(cols) <= set(names) and len(set(cols)) == len(cols),
        mpath,
        "columns must name distinct columns of column_names",
    )
    bounds = mech.get("bounds")
    _require(
        isinstance(bounds, list)
        and len(bounds) == len(cols)
        and all(
            isinstance(b, list) and len(b) == 2 and all(map(_is_number, b)) and b[0] < b[1]
            for b in bounds
        ),
        mpath,
        "bounds must hold one (lo, hi) pair with lo < hi per noised column",
    )
    _require(_is_number(mech.get("lam")) and mech["lam"] > 0, mpath, "lam must be > 0")
    _require(
        _is_number(mech.get("zero_prob")) and 0 < mech["zero_prob"] < 1,
        mpath,
        "zero_prob must be in (0, 1)",
    )
    _require(mech.get("id_type") in (None, "int", "str"), mpath, "id_type must be int or str")
    res = mech.get("resolution")
    _require(
        res is None
        or (isinstance(res, list) and len(res) == len(cols) and all(map(_is_number, res))),
        mpath,
        "resolution must be null or one step per noised column",
    )
    from privest.accounting.zil_guarantee import ZILGuarantee

    expected = ZILGuarantee(mech["lam"], mech["zero_prob"], len(cols)).to_dict()
    _require(
        meta["guarantee"] == json.loads(json.dumps(expected)),
        mpath,
        "the stored guarantee is not the one its mechanism gives",
    )


def _validate_parts(meta: dict[str, Any], mpath: Path) -> None:
    """Each part's path (in order), row count, sha256 and randomness; n_rows their sum."""
    total = 0
    for i, part in enumerate(meta["parts"]):
        _require(isinstance(part, dict), mpath, f"part {i} is not an object")
        file = part.get("file")
        m = PART_NAME.match(file) if isinstance(file, str) else None
        _require(
            m is not None and int(m.group(1)) == i,
            mpath,
            f"part {i} has the path {file!r}; parts must be parts/part-NNNNNN.parquet in order",
        )
        rows = part.get("rows")
        _require(isinstance(rows, int) and rows > 0, mpath, f"part {i} has a bad row count")
        _require(
            isinstance(part.get("sha256"), str) and len(part["sha256"]) == 64,
            mpath,
            f"part {i} has no sha256",
        )
        _require(
            part.get("randomness") in ("secure", "seeded", "user"),
            mpath,
            f"part {i} has an unknown randomness",
        )
        total += rows
    _require(meta.get("n_rows") == total, mpath, "n_rows is not the sum of the parts' rows")


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The validated manifest of the store at ``path`` (:class:`StoreError` if there is none
    or it is damaged)."""
    mpath = Path(path) / MANIFEST
    try:
        text = mpath.read_text()
    except FileNotFoundError:
        raise StoreError(f"store: no release store at {str(path)!r} (missing {MANIFEST})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"store: cannot read {mpath} ({type(exc).__name__})") from None
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(mpath, f"it is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return _validate(meta, mpath)


# ------------------------------------------------------------------ parts
def _part_frame(rel: Any) -> pd.DataFrame:
    names = list(rel.column_names)
    clash = [c for c in names if c.endswith(X2_SUFFIX)]
    if rel.ids is not None and ID_COLUMN in names:
        clash.append(ID_COLUMN)
    if clash:
        raise ValidationError(
            f"X: column names {clash} are reserved by the store (the id column "
            f"{ID_COLUMN!r} and the doubly random copies '<name>{X2_SUFFIX}'); rename them"
        )
    data: dict[str, Any] = {}
    if rel.ids is not None:
        data[ID_COLUMN] = rel.ids
    for j, name in enumerate(names):
        data[name] = rel.x1[:, j]
    for j in rel.columns:
        data[_x2_name(names[j])] = rel.x2[:, j]
    return pd.DataFrame(data)


def _write_part(frame: pd.DataFrame, parts_dir: Path, index: int) -> str:
    """Write one immutable part durably; return its sha256."""
    final = parts_dir / f"part-{index:06d}.parquet"
    tmp = parts_dir / f".part-{index:06d}-{os.getpid()}.tmp"
    try:
        frame.to_parquet(tmp, index=False)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)  # parts are immutable once written
        os.replace(tmp, final)
        fsync_dir(parts_dir)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return _sha256_file(final)


def _clean(path: Path, listed: set[str]) -> None:
    """Remove what dead writers left: temporaries and parts the manifest does not list."""
    for tmp in path.glob(".manifest-*.tmp"):
        tmp.unlink(missing_ok=True)
    parts = path / "parts"
    if not parts.is_dir():
        return
    for f in parts.iterdir():
        rel = f"parts/{f.name}"
        if rel not in listed and (f.name.startswith(".part-") or PART_NAME.match(rel)):
            f.chmod(0o644)
            f.unlink(missing_ok=True)


def _leftovers_only(path: Path) -> bool:
    """Whether ``path`` holds nothing but what a crashed creation of a store leaves."""
    for f in path.iterdir():
        if f.name == LOCK or f.name.startswith(".manifest-"):
            continue
        if f.name == "parts" and f.is_dir():
            if all(g.name.startswith(".part-") or g.name.startswith("part-") for g in f.iterdir()):
                continue
        return False
    return True


def _read_part(
    path: Path, part: dict[str, Any], want: list[str], columns: list[str] | None = None
) -> pd.DataFrame:
    """One listed part, checked against its sha256 and the manifest's layout."""
    fpath = path / part["file"]
    if not fpath.is_file():
        raise StoreError(f"store: part {part['file']} listed in the manifest is missing")
    if _sha256_file(fpath) != part["sha256"]:
        raise StoreError(f"store: part {part['file']} does not match its checksum")
    try:
        frame = pd.read_parquet(fpath, columns=columns)
    except Exception as exc:  # noqa: BLE001 - any reader error means a damaged part
        raise StoreError(
            f"store: part {part['file']} cannot be read ({type(exc).__name__})"
        ) from None
    if list(frame.columns) != (columns or want) or len(frame) != part["rows"]:
        raise StoreError(f"store: part {part['file']} does not have the manifest's layout")
    return frame


def _layout(mech: dict[str, Any]) -> list[str]:
    """The columns of every part, in order."""
    ids = [ID_COLUMN] if mech["id_type"] else []
    return ids + mech["column_names"] + [_x2_name(c) for c in mech["columns"]]


def _existing_ids(path: Path, meta: dict[str, Any]) -> np.ndarray:
    want = _layout(meta["mechanism"])
    frames = [_read_part(path, p, want, [ID_COLUMN]) for p in meta["parts"]]
    return pd.concat(frames)[ID_COLUMN].to_numpy()


def _part_entry(rel: Any, sha: str, index: int) -> dict[str, Any]:
    return {
        "file": f"parts/part-{index:06d}.parquet",
        "rows": int(rel.n),
        "sha256": sha,
        "randomness": rel.randomness,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


# ------------------------------------------------------------------ save and load
def save_release(
    rel: Any, path: str | Path, *, append: bool = False, lock_timeout: float = LOCK_TIMEOUT
) -> None:
    """Write ``rel`` as a new store at ``path``, or append it to the store there.

    Appending checks, under the store's lock, that the mechanism (lam, zero_prob, bounds,
    columns, resolution) and the id type are the store's, that no record id was released
    before, and that a non-secure release does not enter a secure store.
    """
    path = Path(path)
    frame = _part_frame(rel)
    if not np.all(np.isfinite(rel.x1)) or not np.all(np.isfinite(rel.x2)):
        raise ValidationError("release: holds non-finite values; nothing was written")
    mech = _mechanism_block(rel)
    if append:
        _append(rel, frame, mech, path, lock_timeout)
    else:
        _create(rel, frame, mech, path, lock_timeout)


def _create(rel, frame, mech, path: Path, timeout: float) -> None:
    with begin_write(path, append=False, timeout=timeout):
        _write_new_store(rel, frame, mech, path)


@contextmanager
def begin_write(path: Path, *, append: bool, timeout: float = LOCK_TIMEOUT) -> Iterator[Any]:
    """Hold the store's lock for one write; yield its manifest (append) or ``None`` (new).

    A new store's folder is made here (and must hold nothing but a crashed creation's
    leftovers); what dead writers left is removed first. If the body raises, whatever a
    new store got is removed again (the parts of an append are unlisted, so harmless).
    """
    if append:
        if not (path / MANIFEST).is_file():
            read_manifest(path)  # raises the "no release store" error
        with _locked(path, timeout):
            meta = read_manifest(path)
            _clean(path, {p["file"] for p in meta["parts"]})
            yield meta
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir()
        fresh = True
    except FileExistsError:
        fresh = False
    if not path.is_dir():
        raise StoreError(f"store: {str(path)!r} exists and is not a folder")
    with _locked(path, timeout):
        if (path / MANIFEST).exists():
            raise StoreError(
                f"store: {str(path)!r} already exists; pass append=True (--append) to add "
                "records, or choose a new path"
            )
        if not fresh and not _leftovers_only(path):
            raise StoreError(
                f"store: {str(path)!r} is a folder with other files; choose a new path"
            )
        _clean(path, set())
        (path / "parts").mkdir(exist_ok=True)
        try:
            yield None
        except BaseException:
            _clean(path, set())  # nothing half-written stays behind
            raise


def commit_parts(
    path: Path, meta: dict[str, Any] | None, mech: dict[str, Any], entries: list[dict[str, Any]]
) -> dict[str, Any]:
    """Replace the manifest by ``meta`` (``None``: a new store of ``mech``) plus the part
    ``entries`` (already written and fsynced under their final names), under the lock;
    returns the manifest written."""
    from privest.accounting.zil_guarantee import ZILGuarantee

    if meta is None:
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "mechanism": mech,
            "mechanism_sha256": _digest(mech),
            "guarantee": ZILGuarantee(
                mech["lam"], mech["zero_prob"], len(mech["columns"])
            ).to_dict(),
            "parts": [],
            "n_rows": 0,
        }
    meta["parts"].extend(entries)
    meta["n_rows"] += sum(int(e["rows"]) for e in entries)
    write_json_atomic(path / MANIFEST, meta)
    return meta


def _write_new_store(rel, frame, mech, path: Path) -> None:
    """The first part and the manifest of a new store (under its lock)."""
    sha = _write_part(frame, path / "parts", 0)
    commit_parts(path, None, mech, [_part_entry(rel, sha, 0)])


def _append(rel, frame, mech, path: Path, timeout: float) -> None:
    with begin_write(path, append=True, timeout=timeout) as meta:
        check_append(meta, mech, rel.randomness)
        if rel.ids is not None:
            seen = np.intersect1d(_existing_ids(path, meta), rel.ids)
            if seen.size:
                raise duplicate_error(seen[0])
        index = len(meta["parts"])
        sha = _write_part(frame, path / "parts", index)
        commit_parts(path, meta, mech, [_part_entry(rel, sha, index)])


def check_append(meta: dict[str, Any], mech: dict[str, Any], randomness: str) -> None:
    """Refuse a batch whose mechanism, id type or randomness does not fit the store."""
    old = meta["mechanism"]
    for key in ("lam", "zero_prob", "bounds", "columns", "column_names", "resolution"):
        if old[key] != mech[key]:
            raise StoreError(
                f"store: cannot append: {key} is {mech[key]!r} but the store has "
                f"{old[key]!r}; every record of a store must come from the same mechanism"
            )
    if old["id_type"] != mech["id_type"]:
        raise StoreError(
            f"store: cannot append: the batch's ids are {mech['id_type'] or 'absent'} but "
            f"the store's are {old['id_type'] or 'absent'}; one id type per store"
        )
    kinds = {p["randomness"] for p in meta["parts"]}
    if kinds == {"secure"} and randomness != "secure":
        raise StoreError(
            f"store: cannot append a {randomness} release to a store of secure "
            "releases; release with secure randomness (rng=None, or omit --seed)"
        )


def duplicate_error(published: Any) -> DuplicateRecordError:
    """The refusal of a batch holding ``published``, an id the store has released."""
    return DuplicateRecordError(
        f"ids: some records of this batch were already released (e.g. id "
        f"{str(published)!r}, published in the store); releasing a record again "
        "composes its privacy loss, so the batch is refused"
    )


def _store_randomness(kinds: set[str]) -> str:
    """A store is secure only if every part is; a caller-supplied part makes it "user"."""
    if kinds == {"secure"}:
        return "secure"
    return "user" if "user" in kinds else "seeded"


def part_arrays(
    frame: pd.DataFrame, mech: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(x1, x2, ids)`` of parts read by :func:`_read_part` (StoreError if non-finite)."""
    names = mech["column_names"]
    noised = mech["columns"]
    x1 = frame[names].to_numpy(dtype=float)
    x2 = x1.copy()
    cols = np.asarray([names.index(c) for c in noised], dtype=np.intp)
    x2[:, cols] = frame[[_x2_name(c) for c in noised]].to_numpy(dtype=float)
    if not (np.all(np.isfinite(x1)) and np.all(np.isfinite(x2))):
        raise StoreError("store: a part holds non-finite values")
    ids = None
    if mech["id_type"] == "int":
        ids = frame[ID_COLUMN].to_numpy(dtype=np.int64)
    elif mech["id_type"] == "str":
        ids = frame[ID_COLUMN].to_numpy().astype(str)
    return x1, x2, ids


def read_part_arrays(
    path: str | Path, part: dict[str, Any], mech: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One listed part as ``(x1, x2, ids)``, checked against its sha256 and the manifest's
    layout (what each Dask worker runs on the part it reads)."""
    return part_arrays(_read_part(Path(path), part, _layout(mech)), mech)


def release_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """The public fields of the release a validated manifest describes (all but the records)."""
    mech = meta["mechanism"]
    names = mech["column_names"]
    return {
        "lam": float(mech["lam"]),
        "zero_prob": float(mech["zero_prob"]),
        "bounds": np.asarray(mech["bounds"], dtype=float),
        "columns": np.asarray([names.index(c) for c in mech["columns"]], dtype=np.intp),
        "column_names": tuple(names),
        "randomness": _store_randomness({p["randomness"] for p in meta["parts"]}),
        "resolution": None if mech["resolution"] is None else np.asarray(mech["resolution"]),
    }


def load_release(path: str | Path, *, engine: str = "memory") -> Any:
    """Read the release stored at ``path``.

    ``engine="memory"`` (default) reads every part listed in the manifest into one
    :class:`~privest.release.zil.ZILRelease`; ``engine="dask"`` returns a
    :class:`~privest.scale.DaskRelease` with one chunk per part, read on the workers
    (needs the extra ``privest[dask]``; docs/scale-out.md). Either way every part is
    checked against its sha256 and the manifest's layout before its records are used.
    """
    if engine == "dask":
        from privest.scale.store import load_dask_release

        return load_dask_release(path)
    if engine != "memory":
        raise ValidationError(f"engine: {engine!r}; use 'memory' or 'dask'")
    from privest.release.zil import ZILRelease

    path = Path(path)
    meta = read_manifest(path)
    want = _layout(meta["mechanism"])
    frames = [_read_part(path, part, want) for part in meta["parts"]]
    x1, x2, ids = part_arrays(pd.concat(frames, ignore_index=True), meta["mechanism"])
    return ZILRelease(x1=x1, x2=x2, ids=ids, **release_metadata(meta))

"""Append-only storage of ZIL releases (paper 000, Section 5: versatility and online use).

What a user needs to know about it is in docs/zil-release.md, "The release store".

A store is a folder::

    STORE/manifest.json               parameters, guarantee, column names, the list of parts
    STORE/parts/part-NNNNNN.parquet   immutable Parquet files, one per release batch
    STORE/.lock                       the writers' lock

What it promises, and how:

* **Each record is released once.** A record id that was released before is refused
  (releasing it again would compose its privacy loss); ids are canonical whatever their
  spelling (:mod:`privest.release.ids`). A store without ids, which cannot refuse a
  record released twice, is written only on the caller's explicit ``ids=False``, with a
  :class:`~privest.errors.NoRecordIdsWarning` on every write.
* **Concurrent writers lose nothing.** Every write holds an exclusive lock on
  ``STORE/.lock`` across read-manifest -> checks -> write-part -> commit, so N appenders
  are serialised; the operating system releases the lock when a writer dies (``kill -9``).
* **A crash leaves the previous state or the new one.** A part is written under a
  temporary name (``parts/.part-*.tmp``), flushed to disk (fsync) and made read-only; the
  manifest that lists it under its final name is then replaced atomically, and only then
  is the part renamed. A writer killed before the commit leaves temporaries that no
  manifest lists (removed by the next write); one killed after it leaves listed parts
  still under their temporary names, which readers find by their sha256 and the next
  write renames. So a final-named part that the manifest does not list never comes from
  a crash.
* **A failure never deletes released data.** A listed part is never removed; a part on
  disk that the manifest does not list (the manifest was edited or replaced) is refused
  with a :class:`~privest.errors.StoreError`, and nothing is written or deleted.
* **Edits are detected** (:mod:`privest.release.manifest`): the manifest carries a digest
  of all its fields; every part its size and sha256; the guarantee is recomputed. Threat
  model: this detects accidental and naive edits; someone who can write the folder can
  also recompute the digests (a keyed MAC is out of scope), so protect the folder with
  file permissions.
* **Nothing data-dependent beyond the release.** The manifest holds public parameters,
  row counts (public n) and how each part's randomness was made; no clipping counts.
"""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from privest.durable import exclusive_lock, fsync_dir, write_json_atomic
from privest.errors import DuplicateRecordError, NoRecordIdsWarning, StoreError, ValidationError
from privest.release.columns import ReleasedColumns
from privest.release.ids import id_type_of
from privest.release.manifest import (
    ID_COLUMN,
    MANIFEST,
    PART_NAME,
    X2_SUFFIX,
    layout,
    mechanism_block,
    read_manifest,
    release_metadata,
    seal,
    sha256_file,
    x2_name,
)

__all__ = [
    "LOCK_TIMEOUT",
    "check_append",
    "check_ids_choice",
    "check_names",
    "commit",
    "duplicate_error",
    "open_write",
    "read_manifest",
    "read_part_arrays",
    "read_part_ids",
    "read_release",
    "read_staged_ids",
    "save_release",
    "stage_part",
    "store_manifest",
]

LOCK = ".lock"
#: how long a writer waits for another writer's lock before giving up (seconds)
LOCK_TIMEOUT = 600.0
#: rows per Parquet row group when a part is written
GROUP_ROWS = 1 << 17
#: a release of at least this many rows shows progress while it is written
PROGRESS_ROWS = 1 << 21


@contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    """Hold the store's exclusive writer lock (released by the OS if the process dies)."""
    busy = StoreError(
        f"store: another writer has held {str(path)!r} for over {timeout:g} s; try again "
        "when it has finished"
    )
    with exclusive_lock(path / LOCK, timeout, busy):
        yield


# ------------------------------------------------------------------ parts on disk
def _pending_file(path: Path, part: dict[str, Any]) -> Path | None:
    """The temporary that holds a listed part its writer died before renaming, if any."""
    for tmp in (path / "parts").glob(".part-*.tmp"):
        try:
            if tmp.stat().st_size == part["bytes"] and sha256_file(tmp) == part["sha256"]:
                return tmp
        except FileNotFoundError:  # renamed meanwhile by a writer
            continue
    return None


def _locate(path: Path, part: dict[str, Any]) -> Path:
    """Where a listed part is: its final name, or a pending temporary (module docstring)."""
    final = path / part["file"]
    if final.is_file():
        return final
    pending = _pending_file(path, part)
    if pending is not None:
        return pending
    if final.is_file():  # a writer renamed it while we looked
        return final
    raise StoreError(f"store: part {part['file']} listed in the manifest is missing")


def _strays(path: Path, meta: dict[str, Any] | None) -> None:
    """Refuse to write while a final-named part that the manifest does not list is on disk."""
    listed = {p["file"] for p in meta["parts"]} if meta else set()
    parts = path / "parts"
    names = sorted(f"parts/{f.name}" for f in parts.iterdir()) if parts.is_dir() else []
    stray = [f for f in names if PART_NAME.match(f) and f not in listed]
    if stray:
        where = "its manifest" if meta else "a manifest (there is none)"
        raise StoreError(
            f"store: {stray[0]} is in {str(path)!r} but not in {where}: the manifest was "
            "edited or replaced, or the file copied in; the store is refused and nothing was "
            "written or deleted. Restore the manifest from a copy, or move the file out if "
            "it is not this store's"
        )


def store_manifest(path: str | Path) -> dict[str, Any]:
    """The validated manifest of the store at ``path``, refused (:class:`StoreError`) while
    a part on disk is not listed in it: what every reader of the records starts with."""
    meta = read_manifest(path)
    _strays(Path(path), meta)
    return meta


def _tidy(path: Path, meta: dict[str, Any] | None) -> None:
    """Under the lock: rename listed parts left pending by a dead writer, then remove every
    temporary no manifest lists (a dead or failed writer's). Never removes a final part."""
    parts = path / "parts"
    renamed = False
    for part in meta["parts"] if meta else ():
        if not (path / part["file"]).is_file():
            os.replace(_locate(path, part), path / part["file"])
            renamed = True
    if renamed:
        fsync_dir(parts)
    for tmp in [*parts.glob(".part-*.tmp"), *path.glob(".manifest-*.tmp")]:
        tmp.chmod(0o644)
        tmp.unlink(missing_ok=True)


def _fresh_folder(path: Path) -> bool:
    """Make the folder of a new store; whether it was made here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir()
        return True
    except FileExistsError:
        if not path.is_dir():
            raise StoreError(f"store: {str(path)!r} exists and is not a folder") from None
        return False


def _leftovers_only(path: Path) -> bool:
    """Whether ``path`` holds nothing but a store's files without a manifest: what a failed
    creation leaves (temporaries, refused later if a final part is among them)."""
    for f in path.iterdir():
        if f.name == LOCK or f.name.startswith(".manifest-"):
            continue
        if f.name == "parts" and f.is_dir():
            if all(g.name.startswith(".part-") or _is_part(g) for g in f.iterdir()):
                continue
        return False
    return True


def _is_part(file: Path) -> bool:
    return PART_NAME.match(f"parts/{file.name}") is not None


@contextmanager
def open_write(path: Path, *, append: bool, timeout: float = LOCK_TIMEOUT) -> Iterator[Any]:
    """Hold the store's lock for one write; yield its manifest (append) or ``None`` (new).

    A new store's folder is made here (it may hold only a failed creation's leftovers).
    Before the body runs, listed parts left pending are renamed and dead writers'
    temporaries removed; a final-named part that the manifest does not list stops the
    write. If the body raises, its temporaries are removed (never a listed part).
    """
    if append and not (path / MANIFEST).is_file():
        read_manifest(path)  # raises the "no release store" error
    fresh = False if append else _fresh_folder(path)
    with _locked(path, timeout):
        if append:
            meta = read_manifest(path)
        else:
            if (path / MANIFEST).exists():
                raise StoreError(
                    f"store: {str(path)!r} already exists; pass append=True (--append) to add "
                    "records, or choose a new path"
                )
            if not fresh and not _leftovers_only(path):
                raise StoreError(
                    f"store: {str(path)!r} is a folder with other files; choose a new path"
                )
            meta = None
        _strays(path, meta)
        _tidy(path, meta)
        (path / "parts").mkdir(exist_ok=True)
        try:
            yield meta
        except BaseException:
            _tidy_after_failure(path)
            raise


def _tidy_after_failure(path: Path) -> None:
    """After a failed write: :func:`_tidy` against the manifest on disk now (the commit may
    have happened); a manifest that cannot be read leaves the temporaries for later."""
    try:
        _tidy(path, read_manifest(path) if (path / MANIFEST).is_file() else None)
    except StoreError:
        pass


def check_names(names: Any, has_ids: bool) -> None:
    """Refuse column names the store reserves: ``id`` (with ids) and ``<name>~x2``."""
    clash = [c for c in names if c.endswith(X2_SUFFIX)]
    if has_ids and ID_COLUMN in names:
        clash.append(ID_COLUMN)
    if clash:
        raise ValidationError(
            f"X: column names {clash} are reserved by the store (the id column "
            f"{ID_COLUMN!r} and the doubly random copies '<name>{X2_SUFFIX}'); rename them"
        )


def stage_part(rel: ReleasedColumns, parts: Path, name: str, progress: bool = True) -> dict:
    """Write the records of ``rel`` durably as the temporary part ``parts/name`` (fsynced,
    read-only) and return what the commit needs: ``tmp``, ``rows``, ``bytes``, ``sha256``,
    ``randomness``, ``id_type``. Runs where the records are (a Dask worker, or here)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_names(rel.column_names, rel.ids is not None)
    names = list(rel.column_names)
    cols = [int(j) for j in rel.columns]
    id_type = id_type_of(rel.ids)
    fields = [pa.field(c, pa.float64()) for c in [*names, *(x2_name(names[j]) for j in cols)]]
    if id_type is not None:
        fields.insert(0, pa.field(ID_COLUMN, pa.int64() if id_type == "int" else pa.string()))
    schema = pa.schema(fields)
    tmp = parts / name
    blocks = rel.iter_blocks(GROUP_ROWS)
    if progress and rel.n >= PROGRESS_ROWS:
        from privest.progress import progress_iter

        blocks = progress_iter(blocks, "writing the release", total=-(-rel.n // GROUP_ROWS))
    try:
        with open(tmp, "wb") as fh:
            out = _Hashing(fh)
            # no dictionary encoding: released floats are all distinct (and it triples the time)
            with pq.ParquetWriter(out, schema, use_dictionary=False) as writer:
                for x1, x2, ids in blocks:
                    if not (np.isfinite(x1).all() and np.isfinite(x2).all()):
                        raise ValidationError(
                            "release: holds non-finite values; nothing was written"
                        )
                    data = [] if ids is None else [pa.array(ids)]
                    data += [pa.array(x1[:, j]) for j in range(len(names))]
                    data += [pa.array(x2[:, j]) for j in cols]
                    writer.write_table(pa.Table.from_arrays(data, schema=schema))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)  # parts are immutable once written
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {
        "tmp": name,
        "rows": rel.n,
        "bytes": out.size,
        "sha256": out.sha.hexdigest(),
        "randomness": rel.randomness,
        "id_type": id_type,
    }


class _Hashing(io.RawIOBase):
    """A binary file that hashes (sha256) and counts what is written through it, so a part's
    digest needs no second read."""

    def __init__(self, fh: Any) -> None:
        self.fh, self.sha, self.size = fh, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.sha.update(data)
        self.size += len(data)
        return self.fh.write(data)

    def tell(self) -> int:
        return self.size


def commit(
    path: Path, meta: dict[str, Any] | None, block: dict[str, Any], staged: list[dict]
) -> dict[str, Any]:
    """Under the lock: list the ``staged`` parts (in order) after those of ``meta``
    (``None``: a new store of mechanism ``block``), replace the manifest, then rename the
    temporaries into place (module docstring). Returns the manifest written."""
    old = meta["parts"] if meta else []
    shas = [p["sha256"] for p in old] + [s["sha256"] for s in staged]
    if len(set(shas)) != len(shas):
        raise StoreError(
            "store: cannot append: this batch is a byte-for-byte copy of a part in the store "
            "(its records were written before); release the records again only if they "
            "are new people"
        )
    now = datetime.now(UTC).isoformat(timespec="seconds")
    entries = [
        {
            "file": f"parts/part-{len(old) + i:06d}.parquet",
            "rows": int(s["rows"]),
            "bytes": int(s["bytes"]),
            "sha256": s["sha256"],
            "randomness": s["randomness"],
            "created": now,
        }
        for i, s in enumerate(staged)
    ]
    manifest = seal(meta["mechanism"] if meta else block, [*old, *entries])
    write_json_atomic(path / MANIFEST, manifest)
    for s, e in zip(staged, entries, strict=True):
        os.replace(path / "parts" / s["tmp"], path / e["file"])
    fsync_dir(path / "parts")
    return manifest


def check_append(meta: dict[str, Any], block: dict[str, Any], randomness: str) -> None:
    """Refuse a batch whose mechanism, id type or randomness does not fit the store."""
    old = meta["mechanism"]
    for key in ("lam", "zero_prob", "bounds", "columns", "column_names", "resolution"):
        if old[key] != block[key]:
            raise StoreError(
                f"store: cannot append: {key} is {block[key]!r} but the store has "
                f"{old[key]!r}; every record of a store must come from the same mechanism"
            )
    if old["id_type"] != block["id_type"]:
        raise StoreError(
            f"store: cannot append: the batch's ids are {block['id_type'] or 'absent'} but "
            f"the store's are {old['id_type'] or 'absent'}; one id type per store"
        )
    if {p["randomness"] for p in meta["parts"]} == {"secure"} and randomness != "secure":
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


def check_ids_choice(has_ids: bool, ids: bool, warn: bool = True) -> None:
    """Refuse to write records without ids unless ``ids=False`` chose it, and (``warn``)
    warn when it did (:class:`~privest.errors.NoRecordIdsWarning`); refuse ``ids=False``
    with ids."""
    if has_ids:
        if ids is False:
            raise ValidationError("ids=False, but the release has record ids; drop ids=False")
        return
    if ids is not False:
        raise ValidationError(
            "ids: the records have no ids, so the store could not refuse to release a "
            "record twice; give one pseudonymous id per record (ids=, --id-column), or pass "
            "ids=False (--no-ids) to write a store without that protection "
            "(docs/zil-release.md, 'The release store')"
        )
    if not warn:
        return
    warnings.warn(
        "records written to a release store without ids (ids=False): the store cannot "
        "refuse a record released twice; the same people may be in it more than once",
        NoRecordIdsWarning,
        stacklevel=4,
    )


# ------------------------------------------------------------------ save and load
def save_release(
    rel: ReleasedColumns,
    path: str | Path,
    *,
    append: bool = False,
    ids: bool = True,
    lock_timeout: float = LOCK_TIMEOUT,
) -> None:
    """Write ``rel`` as a new store at ``path``, or append it to the store there.

    ``rel`` must carry record ids, unless ``ids=False`` chooses a store without them (a
    :class:`~privest.errors.NoRecordIdsWarning` on every write). Appending checks, under the
    store's lock, that the mechanism (lam, zero_prob, bounds, columns, resolution) and the
    id type are the store's, that no record id was released before, and that a non-secure
    release does not enter a secure store.
    """
    path = Path(path)
    check_names(rel.column_names, rel.ids is not None)
    check_ids_choice(rel.ids is not None, ids)
    block = mechanism_block(rel, rel.column_names, rel.columns, id_type_of(rel.ids))
    with open_write(path, append=append, timeout=lock_timeout) as meta:
        if meta is not None:
            check_append(meta, block, rel.randomness)
            if rel.ids is not None:
                seen = np.intersect1d(_store_ids(path, meta), np.asarray(rel.ids))
                if seen.size:
                    raise duplicate_error(seen[0])
        staged = stage_part(rel, path / "parts", f".part-{secrets.token_hex(6)}-000000.tmp")
        commit(path, meta, block, [staged])


def _read_table(path: Path, part: dict[str, Any], mech: dict[str, Any], columns=None) -> Any:
    """One listed part as a pyarrow Table, checked against its size, sha256 and layout."""
    import pyarrow.parquet as pq

    file = _locate(path, part)
    if file.stat().st_size != part["bytes"] or sha256_file(file) != part["sha256"]:
        raise StoreError(f"store: part {part['file']} does not match its checksum")
    try:
        table = pq.read_table(file, columns=columns)
    except Exception as exc:  # noqa: BLE001 - any reader error means a damaged part
        raise StoreError(
            f"store: part {part['file']} cannot be read ({type(exc).__name__})"
        ) from None
    if table.column_names != (columns or layout(mech)) or table.num_rows != part["rows"]:
        raise StoreError(f"store: part {part['file']} does not have the manifest's layout")
    return table


def _ids_of(column: Any, id_type: str) -> np.ndarray:
    values = column.to_numpy()
    return values.astype(np.int64) if id_type == "int" else values.astype(str)


def read_part_ids(path: Path, part: dict[str, Any], mech: dict[str, Any]) -> np.ndarray:
    """The ids of one listed part, checked against its size, sha256 and layout."""
    table = _read_table(path, part, mech, [ID_COLUMN])
    return _ids_of(table.column(ID_COLUMN), mech["id_type"])


def _store_ids(path: Path, meta: dict[str, Any]) -> np.ndarray:
    return np.concatenate([read_part_ids(path, p, meta["mechanism"]) for p in meta["parts"]])


def read_staged_ids(path: Path, name: str, id_type: str) -> np.ndarray:
    """The ids of the staged (not yet committed) part ``parts/name``."""
    import pyarrow.parquet as pq

    table = pq.read_table(path / "parts" / name, columns=[ID_COLUMN])
    return _ids_of(table.column(ID_COLUMN), id_type)


def read_part_arrays(
    path: str | Path, part: dict[str, Any], mech: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One listed part as ``(x1, x2, ids)``, checked against its sha256 and the manifest's
    layout (what each Dask worker runs on the part it reads)."""
    table = _read_table(Path(path), part, mech)
    names, noised = mech["column_names"], mech["columns"]
    x1 = np.empty((table.num_rows, len(names)), order="F")
    for j, name in enumerate(names):
        x1[:, j] = table.column(name).to_numpy()
    x2 = x1.copy(order="F")
    for name in noised:
        x2[:, names.index(name)] = table.column(x2_name(name)).to_numpy()
    if not (np.isfinite(x1).all() and np.isfinite(x2).all()):
        raise StoreError(f"store: part {part['file']} holds non-finite values")
    ids = None if not mech["id_type"] else _ids_of(table.column(ID_COLUMN), mech["id_type"])
    return x1, x2, ids


def read_release(path: str | Path) -> dict[str, Any]:
    """Every record of the store at ``path``: the fields of an in-memory release (``x1``,
    ``x2`` column-major, ``ids`` and the public metadata), each part checked against its
    size, sha256 and layout; a store that holds an id twice is refused."""
    path = Path(path)
    meta = store_manifest(path)
    pieces = [read_part_arrays(path, part, meta["mechanism"]) for part in meta["parts"]]
    x1, x2 = (_stack([p[k] for p in pieces]) for k in (0, 1))
    ids = None if pieces[0][2] is None else np.concatenate([p[2] for p in pieces])
    if ids is not None and _repeats(ids):
        raise StoreError(
            f"store: {str(path)!r} holds an id in two parts (a part was copied or edited); "
            "its records would be counted twice"
        )
    return {"x1": x1, "x2": x2, "ids": ids, **release_metadata(meta)}


def _stack(blocks: list[np.ndarray]) -> np.ndarray:
    """Row blocks stacked into one column-major array (no copy for one block)."""
    if len(blocks) == 1:
        return blocks[0]
    out = np.empty((sum(b.shape[0] for b in blocks), blocks[0].shape[1]), order="F")
    np.concatenate(blocks, out=out)
    return out


def _repeats(ids: np.ndarray) -> bool:
    import pandas as pd

    return bool(pd.Index(ids).has_duplicates)

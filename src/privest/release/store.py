"""Append-only storage of ZIL releases (paper 000, Section 4.4: versatility and streaming).

A store is a folder::

    STORE/manifest.json          parameters, guarantee, column names, the list of parts
    STORE/parts/part-NNNNNN.parquet   immutable Parquet files, one per release batch

Writes are crash-safe: a new part is written under a temporary name and renamed, then
the manifest is replaced atomically (``os.replace``). A part the manifest does not list
is ignored, so an interrupted write leaves the previous state intact. Earlier rows are
never rewritten, and a record id that was already released is refused: releasing a
record twice would compose its privacy loss.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import DuplicateRecordError, StoreError

__all__ = ["load_release", "save_release", "read_manifest"]

FORMAT = "privest-zil-store"
VERSION = 1
MANIFEST = "manifest.json"


def _x2_name(name: str) -> str:
    return f"{name}~x2"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _mechanism_meta(rel: Any) -> dict[str, Any]:
    return {
        "lam": rel.lam,
        "delta": rel.delta,
        "bounds": rel.bounds.tolist(),
        "columns": [rel.column_names[j] for j in rel.columns],
        "column_names": list(rel.column_names),
        "has_ids": rel.ids is not None,
    }


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of the store at ``path`` (raises :class:`StoreError` if there is none)."""
    mpath = Path(path) / MANIFEST
    try:
        meta = json.loads(mpath.read_text())
    except FileNotFoundError:
        raise StoreError(f"store: no release store at {str(path)!r} (missing {MANIFEST})") from None
    except json.JSONDecodeError as exc:
        raise StoreError(f"store: {mpath} is not valid JSON ({exc})") from None
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise StoreError(
            f"store: {mpath} is not a {FORMAT} v{VERSION} manifest "
            f"(format={meta.get('format')!r}, version={meta.get('version')!r})"
        )
    return meta


def _write_json_atomic(path: Path, obj: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(obj, fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _part_frame(rel: Any) -> pd.DataFrame:
    data: dict[str, Any] = {}
    if rel.ids is not None:
        data["id"] = rel.ids
    for j, name in enumerate(rel.column_names):
        data[name] = rel.x1[:, j]
    for j in rel.columns:
        data[_x2_name(rel.column_names[j])] = rel.x2[:, j]
    return pd.DataFrame(data)


def _write_part(rel: Any, parts_dir: Path, index: int) -> dict[str, Any]:
    name = f"part-{index:06d}.parquet"
    final = parts_dir / name
    if final.exists():  # left over by an interrupted append: not listed, safe to replace
        final.chmod(0o644)
        final.unlink()
    fd, tmp = tempfile.mkstemp(dir=parts_dir, prefix=".part-", suffix=".tmp")
    os.close(fd)
    try:
        _part_frame(rel).to_parquet(tmp, index=False)
        os.chmod(tmp, 0o444)  # parts are immutable once written
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return {
        "file": f"parts/{name}",
        "rows": rel.n,
        "sha256": _sha256(final),
        "rng_kind": rel.rng_kind,
        "n_clipped": rel.n_clipped,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _existing_ids(path: Path, meta: dict[str, Any]) -> np.ndarray:
    if not meta["mechanism"]["has_ids"]:
        return np.empty(0, dtype=str)
    frames = [pd.read_parquet(path / p["file"], columns=["id"]) for p in meta["parts"]]
    return pd.concat(frames)["id"].to_numpy().astype(str) if frames else np.empty(0, dtype=str)


def save_release(rel: Any, path: str | Path, *, append: bool = False) -> None:
    """Write ``rel`` as a new store at ``path``, or append it to the store there.

    A new store is built in a temporary folder and renamed into place. Appending checks
    that the mechanism (lam, delta, bounds, columns) is the store's and that no record id
    was released before.
    """
    path = Path(path)
    mech = _mechanism_meta(rel)
    if not append:
        if path.exists():
            raise StoreError(
                f"store: {str(path)!r} already exists; pass append=True (--append) to add "
                "records, or choose a new path"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}-"))
        try:
            (tmp / "parts").mkdir()
            part = _write_part(rel, tmp / "parts", 0)
            meta = {
                "format": FORMAT,
                "version": VERSION,
                "mechanism": mech,
                "guarantee": rel.guarantee.to_dict(),
                "parts": [part],
                "n_rows": rel.n,
            }
            _write_json_atomic(tmp / MANIFEST, meta)
            os.rename(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return
    meta = read_manifest(path)
    old = meta["mechanism"]
    for key in ("lam", "delta", "bounds", "columns", "column_names", "has_ids"):
        if old[key] != mech[key]:
            raise StoreError(
                f"store: cannot append: {key} is {mech[key]!r} but the store has {old[key]!r}; "
                "every record of a store must come from the same mechanism"
            )
    if rel.ids is not None:
        seen = np.intersect1d(_existing_ids(path, meta), rel.ids)
        if seen.size:
            raise DuplicateRecordError(
                f"ids: {seen.size} records were already released (e.g. {str(seen[0])!r}); "
                "releasing a record again composes its privacy loss, so they are refused"
            )
    part = _write_part(rel, path / "parts", len(meta["parts"]))
    meta["parts"].append(part)
    meta["n_rows"] += rel.n
    _write_json_atomic(path / MANIFEST, meta)


def load_release(path: str | Path, *, verify: bool = True) -> Any:
    """Read every part listed in the manifest into one :class:`~privest.release.zil.ZILRelease`."""
    from privest.release.zil import ZILRelease

    path = Path(path)
    meta = read_manifest(path)
    mech = meta["mechanism"]
    names = mech["column_names"]
    noised = mech["columns"]
    frames = []
    for part in meta["parts"]:
        fpath = path / part["file"]
        if not fpath.exists():
            raise StoreError(f"store: part {fpath} listed in the manifest is missing")
        if verify and _sha256(fpath) != part["sha256"]:
            raise StoreError(f"store: part {fpath} does not match its checksum; it was modified")
        frames.append(pd.read_parquet(fpath))
    df = pd.concat(frames, ignore_index=True)
    x1 = df[names].to_numpy(dtype=float)
    x2 = x1.copy()
    cols = np.asarray([names.index(c) for c in noised], dtype=np.intp)
    x2[:, cols] = df[[_x2_name(c) for c in noised]].to_numpy(dtype=float)
    kinds = {p["rng_kind"] for p in meta["parts"]}
    clipped: dict[str, int] = {c: 0 for c in noised}
    for p in meta["parts"]:
        for k, v in p["n_clipped"].items():
            clipped[k] += v
    return ZILRelease(
        x1=x1,
        x2=x2,
        lam=float(mech["lam"]),
        delta=float(mech["delta"]),
        bounds=np.asarray(mech["bounds"], dtype=float),
        columns=cols,
        column_names=tuple(names),
        rng_kind="secure" if kinds == {"secure"} else "seeded",
        n_clipped=clipped,
        ids=df["id"].to_numpy().astype(str) if mech["has_ids"] else None,
    )

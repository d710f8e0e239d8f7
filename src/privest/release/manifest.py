"""The manifest of a release store: its format, digest and validation (docs/zil-release.md,
"The release store").

``STORE/manifest.json`` holds the mechanism block (public parameters, column names, the id
type), the guarantee recomputed from it, the list of parts (file, rows, bytes, sha256,
randomness, creation time), ``n_rows`` and ``manifest_sha256``: the sha256 of the
canonical JSON of everything else, so that an edit of any field (a part's randomness
label included) is caught on read. Someone who recomputes the digest gets past it; the
structural checks below (parts in order and never empty, no part listed twice, the
guarantee recomputed, row counts summed) and the store's rule that a part on disk must be
listed catch the rest of what such an edit can do to the records.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from privest.accounting.zil_guarantee import ZILGuarantee
from privest.errors import StoreError
from privest.release.columns import ID_NAME

__all__ = [
    "FORMAT",
    "ID_COLUMN",
    "MANIFEST",
    "VERSION",
    "layout",
    "mechanism_block",
    "read_manifest",
    "release_metadata",
    "seal",
    "sha256_file",
    "x2_name",
]

FORMAT = "privest-zil-store"
#: v4: a digest over the whole manifest (part randomness included), part sizes, commit
#: before rename; v3 stores (0.2.0 development) are refused with a message
VERSION = 4
MANIFEST = "manifest.json"
ID_COLUMN = ID_NAME
X2_SUFFIX = "~x2"
PART_NAME = re.compile(r"^parts/part-(\d{6})\.parquet$")
DIGEST = "manifest_sha256"
RANDOMNESS = ("secure", "seeded", "user")


def x2_name(name: str) -> str:
    """The stored name of a noised column's doubly random copy X2."""
    return f"{name}{X2_SUFFIX}"


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _digest(block: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a manifest (without its digest)."""
    body = {k: v for k, v in block.items() if k != DIGEST}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def mechanism_block(
    source: Any, column_names: Any, columns: Any, id_type: str | None
) -> dict[str, Any]:
    """The store's mechanism block of a release of ``columns`` (indices into
    ``column_names``) by ``source`` (a mechanism or a release: ``lam``, ``zero_prob``,
    ``bounds``, ``resolution``), with ids of ``id_type`` (``None``: no ids)."""
    names = [str(c) for c in column_names]
    res = source.resolution
    return {
        "lam": float(source.lam),
        "zero_prob": float(source.zero_prob),
        "bounds": np.asarray(source.bounds, dtype=float).tolist(),
        "columns": [names[int(j)] for j in columns],
        "column_names": names,
        "id_type": id_type,
        "resolution": None if res is None else np.asarray(res, dtype=float).tolist(),
    }


def seal(block: dict[str, Any], parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest of a store of mechanism ``block`` and ``parts``, with its digest."""
    guarantee = ZILGuarantee(block["lam"], block["zero_prob"], len(block["columns"]))
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "mechanism": block,
        "guarantee": json.loads(json.dumps(guarantee.to_dict())),
        "parts": parts,
        "n_rows": sum(int(p["rows"]) for p in parts),
    }
    meta[DIGEST] = _digest(meta)
    return meta


def layout(mech: dict[str, Any]) -> list[str]:
    """The columns of every part, in order."""
    ids = [ID_COLUMN] if mech["id_type"] else []
    return ids + mech["column_names"] + [x2_name(c) for c in mech["columns"]]


def release_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """The public fields of the release a validated manifest describes (all but the records):
    a store is secure only if every part is; a caller-supplied part makes it "user"."""
    mech = meta["mechanism"]
    names = mech["column_names"]
    kinds = {p["randomness"] for p in meta["parts"]}
    if kinds == {"secure"}:
        randomness = "secure"
    else:
        randomness = "user" if "user" in kinds else "seeded"
    return {
        "lam": float(mech["lam"]),
        "zero_prob": float(mech["zero_prob"]),
        "bounds": np.asarray(mech["bounds"], dtype=float),
        "columns": np.asarray([names.index(c) for c in mech["columns"]], dtype=np.intp),
        "column_names": tuple(names),
        "randomness": randomness,
        "resolution": None if mech["resolution"] is None else np.asarray(mech["resolution"]),
    }


# ------------------------------------------------------------------ validation
def damaged(mpath: Path, what: str) -> StoreError:
    """The refusal of a damaged manifest (one line, no record value)."""
    return StoreError(f"store: {mpath} is damaged: {what}")


def _require(cond: bool, mpath: Path, what: str) -> None:
    if not cond:
        raise damaged(mpath, what)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _validate(meta: Any, mpath: Path) -> dict[str, Any]:
    """Check the manifest's schema, digest, mechanism and parts; return it or raise."""
    _require(isinstance(meta, dict), mpath, "it is not a JSON object")
    _require(
        meta.get("format") == FORMAT and meta.get("version") == VERSION,
        mpath,
        f"not a {FORMAT} v{VERSION} manifest (format={meta.get('format')!r}, "
        f"version={meta.get('version')!r}); stores of earlier versions are not read",
    )
    for key, kind in (("mechanism", dict), ("parts", list), ("guarantee", dict)):
        _require(isinstance(meta.get(key), kind), mpath, f"key {key!r} is missing or malformed")
    try:
        digest = _digest(meta)
    except ValueError:  # NaN or Infinity, which JSON readers accept
        raise damaged(mpath, "it holds a non-finite number") from None
    _require(
        meta.get(DIGEST) == digest,
        mpath,
        "it does not match its digest (a field was edited: lam, bounds, a part, a "
        "randomness label, ...); restore it from a copy",
    )
    _validate_mechanism(meta, mpath)
    _validate_parts(meta, mpath)
    return meta


def _validate_mechanism(meta: dict[str, Any], mpath: Path) -> None:
    """The mechanism block: columns, bounds, parameters and the guarantee they give."""
    mech = meta["mechanism"]
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
    expected = ZILGuarantee(mech["lam"], mech["zero_prob"], len(cols)).to_dict()
    _require(
        meta["guarantee"] == json.loads(json.dumps(expected)),
        mpath,
        "the stored guarantee is not the one its mechanism gives",
    )


def _validate_parts(meta: dict[str, Any], mpath: Path) -> None:
    """Parts: at least one, in order, each with rows, bytes, a distinct sha256 and a known
    randomness; ``n_rows`` their sum."""
    parts = meta["parts"]
    _require(bool(parts), mpath, "it lists no parts (a store is created with its first part)")
    total, seen = 0, set()
    for i, part in enumerate(parts):
        _require(isinstance(part, dict), mpath, f"part {i} is not an object")
        file = part.get("file")
        m = PART_NAME.match(file) if isinstance(file, str) else None
        _require(
            m is not None and int(m.group(1)) == i,
            mpath,
            f"part {i} has the path {file!r}; parts must be parts/part-NNNNNN.parquet in order",
        )
        rows, size, sha = part.get("rows"), part.get("bytes"), part.get("sha256")
        _require(isinstance(rows, int) and rows > 0, mpath, f"part {i} has a bad row count")
        _require(isinstance(size, int) and size > 0, mpath, f"part {i} has a bad size")
        _require(isinstance(sha, str) and len(sha) == 64, mpath, f"part {i} has no sha256")
        _require(
            sha not in seen,
            mpath,
            f"part {i} has the contents of an earlier part (a part listed twice would load "
            "its records twice)",
        )
        seen.add(sha)
        _require(part.get("randomness") in RANDOMNESS, mpath, f"part {i} has an unknown randomness")
        total += rows
    _require(meta.get("n_rows") == total, mpath, "n_rows is not the sum of the parts' rows")


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The validated manifest of the store at ``path`` (:class:`StoreError` if there is none
    or it is damaged)."""
    mpath = Path(path) / MANIFEST
    try:
        text = mpath.read_text()
    except (FileNotFoundError, NotADirectoryError):
        raise StoreError(f"store: no release store at {str(path)!r} (missing {MANIFEST})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"store: cannot read {mpath} ({type(exc).__name__})") from None
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise damaged(mpath, f"it is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise damaged(mpath, "it is nested too deeply") from None
    return _validate(meta, mpath)

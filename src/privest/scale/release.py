"""ZIL release out of core: a Dask DataFrame (or Parquet data) released partition by partition
straight into a release store (paper 000, Algorithm 1; docs/scale-out.md).

Each partition is released where it lives, by :meth:`ZILMechanism.release` itself (same
bounds checks, clipping, output grid, resolution and refusals as in memory), and written by
its worker as one store part: to a temporary name, flushed to disk (fsync) and made
read-only. Only part metadata (rows, sha256, id type) comes back to the client, which holds
the store's lock from the first check to the commit, renames the parts into place, fsyncs
the folder and replaces the manifest once. A client killed before the commit leaves only
unlisted files, which the next write removes (release/store.py).

Randomness: partition ``k`` draws from :func:`privest.rng.partition_rng` (seed, k): a
SeedSequence child per partition index when seeded, so a seeded release depends on the seed
and the partitioning only (not on the number of workers or the scheduling); a fresh secure
key per partition, made on the worker, otherwise.
"""

from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from privest.durable import fsync_dir
from privest.errors import BoundsError, ValidationError
from privest.release import store as st
from privest.rng import partition_rng, rng_kind
from privest.scale.dask_release import DaskRelease
from privest.scale.store import dask_release_from_manifest
from privest.validation import as_float_matrix

__all__ = ["release_to_store"]


def release_to_store(
    mech: Any,
    data: Any,
    store: str | Path,
    *,
    rng: int | None = None,
    id_column: str | None = None,
    append: bool = False,
    budget: Any = None,
    budget_epsilon: float | None = None,
    label: str = "ZIL release",
    lock_timeout: float = st.LOCK_TIMEOUT,
) -> DaskRelease:
    """Release ``data`` (a Dask DataFrame, or a Parquet file or folder) with ``mech`` into
    the store at ``store`` (a new one, or ``append=True``), one part per non-empty partition.

    ``rng``: ``None`` (secure, the default) or an integer seed (experiments only); a
    Generator cannot be split per partition and is refused. ``id_column`` names the column
    of record ids. Runs on the current Dask scheduler (a ``distributed.Client`` if one is
    active). Returns the released batch as a :class:`DaskRelease` reading the new parts.
    """
    from privest.accounting.budget import charge

    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
        raise ValidationError(
            f"rng: a partitioned release takes a seed or None (secure), not {type(rng).__name__}; "
            "one generator cannot be split between partitions"
        )
    frame = _as_dask_frame(data)
    names = [str(c) for c in frame.columns]
    if id_column is not None:
        if id_column not in names:
            raise ValidationError(f"ids: {id_column!r} is not a column of the data; have {names}")
        names.remove(id_column)
    as_float_matrix(frame[names]._meta_nonempty, "X")  # the in-memory refusal of text columns
    cols = mech._resolve_columns(names, len(names))
    charge(
        budget,
        mech.guarantee,
        label=label,
        mechanism="zil",
        epsilon=budget_epsilon if budget_epsilon is not None else mech.target_epsilon,
    )
    path = Path(store).resolve()  # workers may have another working folder
    randomness = "secure" if rng is None else rng_kind(partition_rng(int(rng), 0))
    block = _mechanism_block(mech, names, cols, None)
    with st.begin_write(path, append=append, timeout=lock_timeout) as meta:
        if meta is not None:  # refuse a wrong mechanism before reading any data
            st.check_append(meta, {**block, "id_type": meta["mechanism"]["id_type"]}, randomness)
        token = secrets.token_hex(6)
        spec = SimpleNamespace(
            mech=mech, names=names, id_column=id_column, seed=rng, parts=path / "parts", token=token
        )
        tasks = [
            dask.delayed(_release_partition)(part, k, spec)
            for k, part in enumerate(frame.to_delayed())
        ]
        try:
            done = [r for r in dask.compute(*tasks) if r["rows"] > 0]
            block = _check_results(done, mech, names, cols, id_column, block)
            if meta is not None:
                st.check_append(meta, block, randomness)
            if id_column is not None:
                _check_ids(path, done, meta)
            first = 0 if meta is None else len(meta["parts"])
            entries = _move_into_place(path, done, first)
        except BaseException:
            _remove_temporaries(path, token)
            raise
        manifest = st.commit_parts(path, meta, block, entries)
    # the new batch: the store's own loader, restricted to the parts just written
    return dask_release_from_manifest(path, {**manifest, "parts": entries})


def _as_dask_frame(data: Any) -> dd.DataFrame:
    if isinstance(data, (str, os.PathLike)):
        if not Path(data).exists():
            raise ValidationError(f"input: {str(data)!r} does not exist")
        return dd.read_parquet(str(Path(data).resolve()))  # workers may run elsewhere
    if isinstance(data, dd.DataFrame):
        return data
    raise ValidationError(
        f"X: a partitioned release takes a Dask DataFrame or a Parquet path, not "
        f"{type(data).__name__}"
    )


def _mechanism_block(mech: Any, names: list[str], cols: np.ndarray, ids: Any) -> dict[str, Any]:
    """The store's mechanism block of this release (as an in-memory release's)."""
    rel = SimpleNamespace(
        lam=mech.lam,
        zero_prob=mech.zero_prob,
        bounds=mech.bounds,
        columns=cols,
        column_names=tuple(names),
        ids=ids,
        resolution=mech.resolution,
    )
    return st._mechanism_block(rel)


def _release_partition(part: pd.DataFrame, k: int, spec: SimpleNamespace) -> dict[str, Any]:
    """On a worker: release partition ``k`` and write it as a temporary part file.

    Returns metadata only: rows, sha256, randomness, id type, the temporary's name; or the
    columns out of bounds (not clipping) so the client can refuse with the in-memory message.
    """
    if len(part) == 0:
        return {"k": k, "rows": 0}
    ids = part[spec.id_column] if spec.id_column is not None else None
    x = part[spec.names]
    mech = spec.mech
    try:
        rel = mech.release(x, rng=partition_rng(spec.seed, k), ids=ids)
    except BoundsError:  # which columns, so the client can name those of every partition
        sub = as_float_matrix(x, "X")[:, mech._resolve_columns(spec.names, len(spec.names))]
        out = ((sub < mech.bounds[:, 0]) | (sub > mech.bounds[:, 1])).any(axis=0)
        if not out.any():
            raise
        return {"k": k, "rows": len(part), "out_of_bounds": out}
    frame = st._part_frame(rel)
    if not (np.all(np.isfinite(rel.x1)) and np.all(np.isfinite(rel.x2))):
        raise ValidationError("release: holds non-finite values; nothing was written")
    tmp = spec.parts / f".part-{spec.token}-{k:06d}.tmp"
    try:
        frame.to_parquet(tmp, index=False)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)  # parts are immutable once written
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {
        "k": k,
        "rows": rel.n,
        "sha256": st._sha256_file(tmp),
        "randomness": rel.randomness,
        "id_type": st.id_type_of(rel.ids),
        "tmp": tmp.name,
    }


def _check_results(
    done: list[dict[str, Any]],
    mech: Any,
    names: list[str],
    cols: np.ndarray,
    id_column: str | None,
    block: dict[str, Any],
) -> dict[str, Any]:
    """Refuse as the in-memory release would; return the mechanism block with the id type."""
    if not done:
        raise ValidationError(f"X: is empty (shape (0, {len(names)})); need at least one record")
    flags = [r["out_of_bounds"] for r in done if "out_of_bounds" in r]
    if flags:
        bad = [names[cols[j]] for j in np.flatnonzero(np.any(flags, axis=0))]
        raise BoundsError(
            f"X: columns {bad} have values outside their public bounds; widen the "
            "bounds or pass clip=True to clip them"
        )
    kinds = {r["id_type"] for r in done}
    if len(kinds) > 1:
        raise ValidationError(
            f"ids: {id_column!r} holds whole numbers in some partitions and other text in "
            "others; one id type per release (cast the column to int or str)"
        )
    return {**block, "id_type": kinds.pop()}


def _read_ids(path: Path, file: str) -> pd.Series:
    return pd.read_parquet(path / file, columns=[st.ID_COLUMN])[st.ID_COLUMN]


def _id_clashes(ids: pd.DataFrame) -> tuple[bool, Any]:
    """Within one hash bucket: a repeated new id, and the least new id already published."""
    new = ids.loc[~ids["old"], st.ID_COLUMN]
    clash = new[new.isin(ids.loc[ids["old"], st.ID_COLUMN])]
    return bool(new.duplicated().any()), (clash.min() if len(clash) else None)


def _check_ids(path: Path, done: list[dict[str, Any]], meta: dict[str, Any] | None) -> None:
    """Every id of the batch is new: a hash shuffle of the batch's (and the store's) ids on
    the cluster; only two flags per bucket reach the client."""
    files = [("parts/" + r["tmp"], False) for r in done]
    if meta is not None:
        files += [(p["file"], True) for p in meta["parts"]]
    pieces = [
        dd.from_delayed([dask.delayed(_read_ids)(path, f) for f, o in files if o is old]).to_frame()
        for old in (False, True)
        if any(o is old for _, o in files)
    ]
    ids = dd.concat([p.assign(old=i == 1) for i, p in enumerate(pieces)])
    buckets = ids.shuffle(on=st.ID_COLUMN, npartitions=max(1, len(done)))
    flags = dask.compute(*[dask.delayed(_id_clashes)(b) for b in buckets.to_delayed()])
    if any(dup for dup, _ in flags):
        raise ValidationError("ids: contains duplicates; each record needs its own id")
    seen = [c for _, c in flags if c is not None]
    if seen:
        raise st.duplicate_error(min(seen))


def _move_into_place(path: Path, done: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    """Rename the temporaries to parts ``first, first + 1, ...`` (partition order); fsync."""
    parts = path / "parts"
    entries = []
    for i, r in enumerate(sorted(done, key=lambda r: r["k"])):
        file = f"parts/part-{first + i:06d}.parquet"
        os.replace(parts / r["tmp"], path / file)
        entries.append(
            {
                "file": file,
                "rows": int(r["rows"]),
                "sha256": r["sha256"],
                "randomness": r["randomness"],
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
    fsync_dir(parts)
    return entries


def _remove_temporaries(path: Path, token: str) -> None:
    for f in (path / "parts").glob(f".part-{token}-*.tmp"):
        f.chmod(0o644)
        f.unlink(missing_ok=True)

"""ZIL release out of core: a Dask DataFrame (or Parquet data) released partition by partition
straight into a release store (paper 000, Algorithm 1; docs/scale-out.md).

The Dask implementation of the core's :func:`privest.release.into_store.release_to_store`. Each
partition is released where it lives by :meth:`ZILMechanism.release` itself (same bounds
checks, clipping, output grid, resolution and refusals as in memory) and staged by its
worker with the store's own :func:`~privest.release.store.stage_part` (a temporary,
fsynced, read-only). Only part metadata (rows, size, sha256, id type) comes back to the
client, which holds the store's lock from the first check to the commit
(:func:`~privest.release.store.open_write`, :func:`~privest.release.store.commit`): what
this module adds is the partitioning and the id check on the cluster.

Randomness: partition ``k`` draws from :func:`privest.rng.partition_rng` (seed, k): a
SeedSequence child per partition index when seeded, so a seeded release depends on the seed
and the partitioning only (not on the number of workers or the scheduling); a fresh secure
key per partition, made on the worker, otherwise.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from privest.errors import BoundsError, ValidationError
from privest.release.columns import warn_not_secure
from privest.release.manifest import ID_COLUMN, mechanism_block
from privest.release.store import (
    LOCK_TIMEOUT,
    check_append,
    check_ids_choice,
    check_names,
    commit,
    duplicate_error,
    open_write,
    read_part_ids,
    read_staged_ids,
    stage_part,
)
from privest.release.zil import bounds_error
from privest.rng import partition_rng
from privest.scale.dask_release import DaskRelease
from privest.scale.store import dask_release_from_manifest
from privest.validation import as_float_matrix

__all__ = ["as_dask_frame", "release_partitioned"]


def release_partitioned(
    data: Any,
    mech: Any,
    store: str | Path,
    *,
    rng: int | None = None,
    ids: str | bool | None = None,
    append: bool = False,
    budget: Any = None,
    budget_epsilon: float | None = None,
    label: str = "ZIL release",
    lock_timeout: float = LOCK_TIMEOUT,
) -> DaskRelease:
    """Release ``data`` (a Dask DataFrame, or a Parquet file or folder) with ``mech`` into
    the store at ``store`` (a new one, or ``append=True``), one part per non-empty partition.

    ``rng``: ``None`` (secure, the default) or an integer seed (experiments only); a
    Generator cannot be split per partition and is refused. ``ids`` names the column of
    record ids (``False``: a store without ids, the caller's explicit choice). Runs on the
    current Dask scheduler (a ``distributed.Client`` if one is active). Returns the released
    batch as a :class:`DaskRelease` reading the new parts.
    """
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
        raise ValidationError(
            f"rng: a partitioned release takes a seed or None (secure), not {type(rng).__name__}; "
            "one generator cannot be split between partitions"
        )
    frame = as_dask_frame(data)
    names = [str(c) for c in frame.columns]
    id_column = ids if isinstance(ids, str) else None
    check_ids_choice(id_column is not None, ids is not False)
    if id_column is not None:
        if id_column not in names:
            raise ValidationError(f"ids: {id_column!r} is not a column of the data; have {names}")
        names.remove(id_column)
    check_names(names, id_column is not None)
    as_float_matrix(frame[names]._meta_nonempty, "X")  # the in-memory refusal of text columns
    cols = mech.resolve_columns(names, len(names))
    mech.charge(budget, budget_epsilon, label)
    path = Path(store).resolve()  # workers may have another working folder
    randomness = "secure" if rng is None else "seeded"
    warn_not_secure(randomness)
    block = mechanism_block(mech, names, cols, None)
    with open_write(path, append=append, timeout=lock_timeout) as meta:
        if meta is not None:  # refuse a wrong mechanism before reading any data
            check_append(meta, {**block, "id_type": meta["mechanism"]["id_type"]}, randomness)
        spec = SimpleNamespace(
            mech=mech, names=names, id_column=id_column, seed=rng, parts=path / "parts"
        )
        token = secrets.token_hex(6)
        tasks = [
            dask.delayed(_release_partition)(part, k, f".part-{token}-{k:06d}.tmp", spec)
            for k, part in enumerate(frame.to_delayed())
        ]
        done = [r for r in dask.compute(*tasks) if r["rows"] > 0]
        block = _check_results(done, names, cols, id_column, block)
        if meta is not None:
            check_append(meta, block, randomness)
        if id_column is not None:
            _check_ids(path, done, meta, block["id_type"])
        manifest = commit(path, meta, block, done)  # partition order: record order
    first = 0 if meta is None else len(meta["parts"])
    return dask_release_from_manifest(path, {**manifest, "parts": manifest["parts"][first:]})


def as_dask_frame(data: Any) -> dd.DataFrame:
    """A Dask DataFrame, or a Parquet file or folder read as one (an absolute path, since
    workers may have another working folder)."""
    if isinstance(data, (str, os.PathLike)):
        if not Path(data).exists():
            raise ValidationError(f"input: {str(data)!r} does not exist")
        return dd.read_parquet(str(Path(data).resolve()))
    if isinstance(data, dd.DataFrame):
        return data
    raise ValidationError(
        f"X: a partitioned release takes a Dask DataFrame or a Parquet path, not "
        f"{type(data).__name__}"
    )


def _release_partition(
    part: pd.DataFrame, k: int, name: str, spec: SimpleNamespace
) -> dict[str, Any]:
    """On a worker: release partition ``k`` and stage it as the temporary part ``name``.

    Returns metadata only (:func:`~privest.release.store.stage_part`'s), or the columns out
    of bounds (not clipping) so the client can refuse with the in-memory message naming
    those of every partition.
    """
    if len(part) == 0:
        return {"k": k, "rows": 0}
    ids = part[spec.id_column] if spec.id_column is not None else None
    try:
        rel = spec.mech.release(part[spec.names], rng=partition_rng(spec.seed, k), ids=ids)
    except BoundsError as exc:
        if not hasattr(exc, "columns"):
            raise
        return {"k": k, "rows": len(part), "out_of_bounds": exc.columns}
    return {"k": k, **stage_part(rel, spec.parts, name, progress=False)}


def _check_results(
    done: list[dict[str, Any]],
    names: list[str],
    cols: np.ndarray,
    id_column: str | None,
    block: dict[str, Any],
) -> dict[str, Any]:
    """Refuse as the in-memory release would; return the mechanism block with the id type."""
    if not done:
        raise ValidationError(f"X: is empty (shape (0, {len(names)})); need at least one record")
    flagged = {c for r in done for c in r.get("out_of_bounds", ())}
    if flagged:
        raise bounds_error([names[j] for j in cols if names[j] in flagged])
    kinds = {r["id_type"] for r in done}
    if len(kinds) > 1:
        raise ValidationError(
            f"ids: {id_column!r} holds whole numbers in some partitions and other text in "
            "others; one id type per release (cast the column to int or str)"
        )
    return {**block, "id_type": kinds.pop()}


def _id_clashes(ids: pd.DataFrame) -> tuple[bool, Any]:
    """Within one hash bucket: a repeated new id, and the least new id already published."""
    new = ids.loc[~ids["old"], ID_COLUMN]
    clash = new[new.isin(ids.loc[ids["old"], ID_COLUMN])]
    return bool(new.duplicated().any()), (clash.min() if len(clash) else None)


def _ids_frame(read: Any, *args: Any) -> pd.Series:
    return pd.Series(read(*args), name=ID_COLUMN)


def _check_ids(
    path: Path, done: list[dict[str, Any]], meta: dict[str, Any] | None, id_type: str
) -> None:
    """Every id of the batch is new: a hash shuffle of the batch's (and the store's) ids on
    the cluster, each listed part read by the store's checked reader; only two flags per
    bucket reach the client."""
    new = [dask.delayed(_ids_frame)(read_staged_ids, path, r["tmp"], id_type) for r in done]
    pieces = [dd.from_delayed(new).to_frame().assign(old=False)]
    if meta is not None:
        mech = meta["mechanism"]
        old = [dask.delayed(_ids_frame)(read_part_ids, path, p, mech) for p in meta["parts"]]
        pieces.append(dd.from_delayed(old).to_frame().assign(old=True))
    buckets = dd.concat(pieces).shuffle(on=ID_COLUMN, npartitions=max(1, len(done)))
    flags = dask.compute(*[dask.delayed(_id_clashes)(b) for b in buckets.to_delayed()])
    if any(dup for dup, _ in flags):
        raise ValidationError("ids: contains duplicates; each record needs its own id")
    seen = [c for _, c in flags if c is not None]
    if seen:
        raise duplicate_error(min(seen))

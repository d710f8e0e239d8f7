"""Reading a release store into a :class:`~privest.scale.DaskRelease` (one chunk per part):
the ``dask`` engine's ``load_release``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np

from privest.release.manifest import release_metadata
from privest.release.store import read_part_arrays, store_manifest
from privest.scale.dask_release import DaskRelease

__all__ = ["dask_release_from_manifest", "load_dask_release"]


def load_dask_release(path: str | Path) -> DaskRelease:
    """The store at ``path`` as a Dask-backed release: the manifest is validated on the
    client; each part is read, checked against its sha256 and the manifest's layout, by the
    worker that computes its chunk (a damaged part raises the in-memory reader's
    :class:`~privest.errors.StoreError` there, re-raised on the client)."""
    path = Path(path).resolve()
    return dask_release_from_manifest(path, store_manifest(path))


def dask_release_from_manifest(path: Path, meta: dict[str, Any]) -> DaskRelease:
    """The parts listed in ``meta`` (a validated manifest, or one restricted to some of its
    parts: the Dask release's new batch) as a :class:`DaskRelease`, one chunk per part."""
    mech = meta["mechanism"]
    d = len(mech["column_names"])
    id_dtype = {"int": np.int64, "str": object, None: None}[mech["id_type"]]
    x1s, x2s, idss = [], [], []
    for part in meta["parts"]:
        rows = part["rows"]
        parts = dask.delayed(read_part_arrays, nout=3, pure=True)(str(path), part, mech)
        x1s.append(da.from_delayed(parts[0], shape=(rows, d), dtype=float))
        x2s.append(da.from_delayed(parts[1], shape=(rows, d), dtype=float))
        if id_dtype is not None:
            idss.append(da.from_delayed(parts[2], shape=(rows,), dtype=id_dtype))
    return DaskRelease(
        x1=da.concatenate(x1s, axis=0),
        x2=da.concatenate(x2s, axis=0),
        ids=da.concatenate(idss) if idss else None,
        **release_metadata(meta),
    )

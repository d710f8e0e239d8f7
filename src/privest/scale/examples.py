"""The example release of paper 004 (Sec. 3) out of core: a Dask DataFrame (or Parquet data)
released partition by partition into a folder of Parquet parts, and read back as Dask arrays.

The Dask implementation of the core's
:func:`privest.release.examples_io.release_examples_to_folder`, in the core's partitioned
layout (:mod:`privest.release.examples_io`: its part writer, reader and manifest). Each
partition is released where it lives by the mechanism's own ``release`` (same projection,
calibration checks and refusals as in memory) with the generator
:func:`privest.rng.partition_rng` (seed, k): a seeded release depends on the seed and the
partitioning only, never on the workers or the scheduling; ``rng=None`` gives each
partition a fresh secure key. Labels are mapped to -1/+1 with the classes of the whole
column (found on the cluster first), so a partition holding one class is released as in
memory. The folder is written beside its target, every file fsynced, and renamed into
place. :func:`load_examples_dask` checks every part's sha256 on the worker that reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dask
import dask.array as da
import numpy as np
import pandas as pd

from privest.durable import fsync_dir, staged_folder
from privest.errors import StoreError, ValidationError
from privest.release.columns import warn_not_secure
from privest.release.examples import PrivateExamples, labels_pm1
from privest.release.examples_io import (
    PARTS_FORMAT,
    PARTS_VERSION,
    examples_from_meta,
    parts_manifest,
    read_examples_manifest,
    read_examples_part,
    write_examples_part,
)
from privest.rng import partition_rng
from privest.scale.release import as_dask_frame

__all__ = ["load_examples_dask", "release_examples_to_folder"]


def _release_part(part: pd.DataFrame, k: int, spec: SimpleNamespace) -> dict[str, Any]:
    """On a worker: release partition ``k``, write it (fsynced) and return its metadata."""
    if len(part) == 0:
        return {"k": k, "rows": 0}
    y = part[spec.label].to_numpy()
    if spec.classes is not None:
        y = np.where(y == spec.classes[1], 1.0, -1.0)
    rel = spec.mech.release(part[spec.names], y, rng=partition_rng(spec.seed, k))
    return {"k": k, **write_examples_part(rel, spec.folder / "parts" / f"part-{k:06d}.parquet")}


def release_examples_to_folder(
    mech: Any, data: Any, path: str | Path, *, label: str, rng: int | None = None
) -> Path:
    """Release ``data`` (a Dask DataFrame or a Parquet path; the features are every column
    but ``label``) with ``mech`` (an :class:`~privest.release.examples.ExampleMechanism` or
    :class:`~privest.release.examples.RegressionExampleMechanism`) into the new folder
    ``path``, one part per non-empty partition. ``rng``: ``None`` (secure) or a seed."""
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
        raise ValidationError("rng: a partitioned release takes a seed or None (secure)")
    warn_not_secure("secure" if rng is None else "seeded")
    frame = as_dask_frame(data)
    names = [str(c) for c in frame.columns if str(c) != label]
    if len(names) == len(frame.columns):
        raise ValidationError(f"label: {label!r} is not a column of the data")
    classes = None
    if mech.task == "classification":  # the classes of the whole column, as in memory
        classes = labels_pm1(np.sort(frame[label].unique().compute().to_numpy()))[1]
    path = Path(path).resolve()
    if path.exists():
        raise StoreError(f"path: {str(path)!r} already exists; choose a new folder")
    with staged_folder(path) as tmp:
        (tmp / "parts").mkdir()
        spec = SimpleNamespace(
            mech=mech, names=names, label=label, classes=classes, seed=rng, folder=tmp
        )
        tasks = [dask.delayed(_release_part)(p, k, spec) for k, p in enumerate(frame.to_delayed())]
        done = [r for r in dask.compute(*tasks) if r["rows"] > 0]
        if not done:
            raise ValidationError("data: is empty; need at least one record")
        manifest = parts_manifest(mech, done, len(names), classes, secure=rng is None)
        with open(tmp / "manifest.json", "w") as fh:
            json.dump(manifest, fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        fsync_dir(tmp / "parts")
    return path


def load_examples_dask(path: str | Path) -> tuple[PrivateExamples, Any, Any]:
    """``(examples, X, y)``: the release's public parameters (a :class:`PrivateExamples`
    with no records) and its noisy features (n, p) and labels (n,) as Dask arrays, one
    chunk per part, the arguments of :func:`~privest.scale.fit.partial_fit_stream`."""
    path = Path(path).resolve()
    manifest = read_examples_manifest(path, PARTS_FORMAT, PARTS_VERSION)
    p = int(manifest["p"])
    xs, ys = [], []
    for part in manifest["parts"]:
        pair = dask.delayed(read_examples_part, nout=2, pure=True)(str(path), part, p)
        xs.append(da.from_delayed(pair[0], shape=(part["rows"], p), dtype=float))
        ys.append(da.from_delayed(pair[1], shape=(part["rows"],), dtype=float))
    empty = (np.zeros((0, p)), np.zeros(0))
    examples = examples_from_meta(PrivateExamples, manifest["mechanism"], *empty)
    return examples, da.concatenate(xs), da.concatenate(ys)

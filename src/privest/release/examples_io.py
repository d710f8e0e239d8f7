"""Saving and loading :class:`~privest.release.examples.PrivateExamples` (paper 004).

A release is a folder ``manifest.json`` + ``data.npz`` with the sha256 of the data file. It
is written to a temporary folder beside the target, every file flushed to disk (fsync), then
renamed into place and the parent folder fsynced (the release store's rules,
:mod:`privest.durable`): a crash leaves no folder or a complete one.

A release made partition by partition by a backend (:func:`release_examples_to_folder`)
has the same rules and another layout (``PARTS_FORMAT``): ``manifest.json`` (the public
parameters, the guarantee and, per part, rows and sha256) and ``parts/part-NNNNNN.parquet``
(columns ``x0 .. x{p-1}`` and ``y``), written and read by the functions here.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from privest.backends import dispatch, get_engine
from privest.durable import staged_folder
from privest.errors import StoreError, ValidationError
from privest.release.manifest import sha256_file

__all__ = [
    "FORMAT",
    "PARTS_FORMAT",
    "PARTS_VERSION",
    "VERSION",
    "examples_from_meta",
    "examples_metadata",
    "load_examples",
    "parts_manifest",
    "read_examples_part",
    "release_examples_to_folder",
    "save_examples",
    "write_examples_part",
]

FORMAT = "privest-iwp-examples"
VERSION = 3
PARTS_FORMAT, PARTS_VERSION = "privest-iwp-examples-parts", 1
#: the engine that releases a Parquet path given to :func:`release_examples_to_folder`
PATH_ENGINE = "dask"


def examples_metadata(rel: Any) -> dict[str, Any]:
    """The public fields of a release of examples (its manifest's ``mechanism`` block)."""
    return {
        "sigma2": rel.sigma2,
        "epsilon_x": rel.epsilon_x,
        "epsilon_y": rel.epsilon_y if math.isfinite(rel.epsilon_y) else "inf",
        "delta": rel.delta,
        "x_radius": rel.x_radius,
        "task": rel.task,
        "calibration": rel.calibration,
        "bounds": None if rel.bounds is None else rel.bounds.tolist(),
        "randomness": rel.randomness,
        "classes": None if rel.classes is None else rel.classes.tolist(),
        "sigma2_y": rel.sigma2_y,
        "delta_y": rel.delta_y,
        "y_bounds": None if rel.y_bounds is None else list(rel.y_bounds),
    }


def _write_synced(path: Path, write: Any) -> None:
    """``write(fh)`` into ``path``, then flush it to disk."""
    with open(path, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())


def save_examples(rel: Any, path: Path) -> Path:
    """Write ``rel`` into the new folder ``path`` (module docstring)."""
    if path.exists():
        raise StoreError(f"path: {str(path)!r} already exists; choose a new folder")
    with staged_folder(path) as tmp:
        _write_synced(tmp / "data.npz", lambda fh: np.savez(fh, X=rel.X, y=rel.y))
        digest = hashlib.sha256((tmp / "data.npz").read_bytes()).hexdigest()
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "n": rel.n,
            "p": rel.p,
            "mechanism": examples_metadata(rel),
            "guarantee": rel.guarantee.to_dict(),
            "sha256": digest,
        }
        text = json.dumps(manifest, indent=2).encode()
        _write_synced(tmp / "manifest.json", lambda fh: fh.write(text))
    return path


def read_examples_manifest(path: Path, fmt: str = FORMAT, version: int = VERSION) -> dict:
    """The manifest of an example-release folder (in memory: ``fmt`` and ``version`` by
    default; out of core: its own), with its format and version checked."""
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except FileNotFoundError:
        raise StoreError(f"path: no IWP release at {str(path)!r} (no manifest.json)") from None
    if manifest.get("format") != fmt or manifest.get("version") != version:
        raise StoreError(f"path: {str(path)!r} is not a {fmt} v{version} release")
    return manifest


def load_examples(cls: Any, path: Path, verify: bool = True) -> Any:
    """Read a folder written by :func:`save_examples`, checking format and checksum."""
    manifest = read_examples_manifest(path)
    data = path / "data.npz"
    if verify and hashlib.sha256(data.read_bytes()).hexdigest() != manifest["sha256"]:
        raise StoreError(f"path: {data} does not match its checksum; it was modified")
    with np.load(data) as arrays:
        X, y = arrays["X"], arrays["y"]
    return examples_from_meta(cls, manifest["mechanism"], X, y)


def examples_from_meta(cls: Any, m: dict[str, Any], X: np.ndarray, y: np.ndarray) -> Any:
    """The release with records ``X``, ``y`` and the public fields of the manifest block ``m``
    (also the partitioned format's, :mod:`privest.scale.examples`)."""
    return cls(
        X=X,
        y=y,
        sigma2=float(m["sigma2"]),
        epsilon_x=float(m["epsilon_x"]),
        epsilon_y=math.inf if m["epsilon_y"] == "inf" else float(m["epsilon_y"]),
        delta=float(m["delta"]),
        x_radius=float(m["x_radius"]),
        task=m["task"],
        calibration=m["calibration"],
        bounds=None if m["bounds"] is None else np.asarray(m["bounds"], dtype=float),
        randomness=m["randomness"],
        classes=None if m["classes"] is None else np.asarray(m["classes"]),
        sigma2_y=float(m["sigma2_y"]),
        delta_y=float(m["delta_y"]),
        y_bounds=None if m["y_bounds"] is None else tuple(m["y_bounds"]),
    )


# ------------------------------------------------------------------ the partitioned layout
@dispatch
def release_examples_to_folder(
    data: Any, mech: Any, path: str | Path, *, label: str, rng: int | None = None
) -> Path:
    """Release ``data`` (features: every column but ``label``) with ``mech`` (an
    :class:`~privest.release.examples.ExampleMechanism` or
    :class:`~privest.release.examples.RegressionExampleMechanism`) partition by partition
    into the new folder ``path`` (``PARTS_FORMAT``); ``rng``: ``None`` (secure) or a seed.

    A dispatch function (:mod:`privest.backends`): a backend registers it for its types
    (Dask DataFrames, docs/scale-out.md); a Parquet path goes to the ``dask`` engine. Data
    held in memory are released with ``mech.release(X, y)`` and saved with
    :meth:`~privest.release.examples.PrivateExamples.save`.
    """
    if isinstance(data, (str, os.PathLike)):
        engine = get_engine(PATH_ENGINE)
        return engine.release_examples_to_folder(data, mech, path, label=label, rng=rng)
    raise ValidationError(
        f"data: a {type(data).__name__} is held in memory: release it with "
        "mech.release(X, y) and save it with .save(path); this function takes out-of-core "
        "data (a Dask DataFrame or a Parquet path)"
    )


def write_examples_part(rel: Any, file: Path) -> dict[str, Any]:
    """Write the records of ``rel`` as one part (columns ``x0 ..``, ``y``), flushed to
    disk; return its ``rows``, ``sha256`` and public fields ``meta``."""
    import pandas as pd

    cols = {f"x{j}": rel.X[:, j] for j in range(rel.p)}
    pd.DataFrame({**cols, "y": rel.y}).to_parquet(file, index=False)
    with open(file, "rb") as fh:
        os.fsync(fh.fileno())
    return {"rows": rel.n, "sha256": sha256_file(file), "meta": examples_metadata(rel)}


def parts_manifest(
    mech: Any, parts: list[dict[str, Any]], p: int, classes: Any, secure: bool
) -> dict[str, Any]:
    """The manifest of a partitioned release: ``parts`` (each with ``k`` and what
    :func:`write_examples_part` returned) in partition order, of ``p`` features."""
    meta = dict(parts[0]["meta"])
    meta["classes"] = None if classes is None else np.asarray(classes).tolist()
    meta["randomness"] = "secure" if secure else meta["randomness"]
    return {
        "format": PARTS_FORMAT,
        "version": PARTS_VERSION,
        "n": int(sum(r["rows"] for r in parts)),
        "p": int(p),
        "mechanism": meta,
        "guarantee": mech.guarantee.to_dict(),
        "parts": [
            {"file": f"parts/part-{r['k']:06d}.parquet", "rows": r["rows"], "sha256": r["sha256"]}
            for r in parts
        ],
    }


def read_examples_part(path: str | Path, part: dict[str, Any], p: int) -> tuple[Any, Any]:
    """One part of a partitioned release as ``(X, y)``, checked against its sha256."""
    import pandas as pd

    file = Path(path) / part["file"]
    if sha256_file(file) != part["sha256"]:
        raise StoreError(f"path: {file} does not match its checksum; it was modified")
    df = pd.read_parquet(file)
    return df[[f"x{j}" for j in range(p)]].to_numpy(float), df["y"].to_numpy(float)

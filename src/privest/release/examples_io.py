"""Saving and loading :class:`~privest.release.examples.PrivateExamples` (paper 004).

A release is a folder ``manifest.json`` + ``data.npz`` with the sha256 of the data file. It
is written to a temporary folder beside the target, every file flushed to disk (fsync), then
renamed into place and the parent folder fsynced (the release store's rules,
:mod:`privest.durable`): a crash leaves no folder or a complete one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from privest.durable import staged_folder
from privest.errors import StoreError

__all__ = ["FORMAT", "VERSION", "examples_from_meta", "load_examples", "save_examples"]

FORMAT = "privest-iwp-examples"
VERSION = 3


def _meta(rel: Any) -> dict[str, Any]:
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
            "mechanism": _meta(rel),
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

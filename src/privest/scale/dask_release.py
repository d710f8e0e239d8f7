"""A ZIL release backed by Dask arrays: the out-of-core twin of ``ZILRelease``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dask.array as da
import numpy as np

from privest.release.zil import ReleasedColumns, ZILRelease
from privest.rng import RNGKind

__all__ = ["DaskRelease"]


@dataclass(frozen=True, eq=False)
class DaskRelease(ReleasedColumns):
    """What the analyst holds (Algorithm 1's output), with the records left on the cluster.

    Same fields and meaning as :class:`~privest.release.zil.ZILRelease`, except that ``x1``,
    ``x2`` (and ``ids``) are Dask arrays chunked by rows only (one chunk per store part or
    per source partition). The metadata (``lam``, ``zero_prob``, ``bounds``, ``columns``,
    ...) is public and held on the client.
    """

    x1: da.Array
    x2: da.Array
    lam: float
    zero_prob: float
    bounds: np.ndarray
    columns: np.ndarray
    column_names: tuple[str, ...]
    randomness: RNGKind
    ids: da.Array | None = None
    resolution: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.x1.ndim != 2 or self.x1.shape != self.x2.shape:
            raise ValueError("DaskRelease: x1 and x2 must be 2-D Dask arrays of one shape")
        if len(self.x1.chunks[1]) != 1 or self.x1.chunks != self.x2.chunks:
            raise ValueError("DaskRelease: x1 and x2 must be chunked by rows only, alike")

    @classmethod
    def from_release(cls, rel: ZILRelease, chunk_rows: int | None = None) -> DaskRelease:
        """An in-memory release as Dask arrays of ``chunk_rows`` rows (default: n / 4)."""
        rows = chunk_rows or max(1, -(-rel.n // 4))
        ids = None if rel.ids is None else da.from_array(rel.ids, chunks=rows)
        return cls(
            x1=da.from_array(np.asarray(rel.x1), chunks=(rows, rel.d)),
            x2=da.from_array(np.asarray(rel.x2), chunks=(rows, rel.d)),
            **_metadata(rel),
            ids=ids,
        )

    def compute(self, **kwargs: Any) -> ZILRelease:
        """Bring every record to the client as an in-memory :class:`ZILRelease`."""
        x1, x2, ids = da.compute(self.x1, self.x2, self.ids, **kwargs)
        return ZILRelease(
            x1=np.ascontiguousarray(x1, dtype=float),
            x2=np.ascontiguousarray(x2, dtype=float),
            **_metadata(self),
            ids=None if ids is None else np.asarray(ids),
        )


def _metadata(rel: Any) -> dict[str, Any]:
    return {
        "lam": float(rel.lam),
        "zero_prob": float(rel.zero_prob),
        "bounds": np.array(rel.bounds, dtype=float),
        "columns": np.array(rel.columns),
        "column_names": tuple(rel.column_names),
        "randomness": rel.randomness,
        "resolution": None if rel.resolution is None else np.array(rel.resolution),
    }

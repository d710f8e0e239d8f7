"""A ZIL release backed by Dask arrays: the out-of-core implementation of the core's
released-columns protocol (:class:`~privest.release.columns.ReleasedColumns`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import numpy as np

from privest.release.columns import Block, ReleasedColumns
from privest.release.zil import ZILRelease
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

    def iter_blocks(self, rows: int | None = None) -> Iterator[Block]:
        """The chunks, one at a time on the client, as numpy blocks ``(x1, x2, ids)`` (cut
        into blocks of at most ``rows`` rows when given)."""
        for i in range(len(self.x1.chunks[0])):
            ids = None if self.ids is None else self.ids.blocks[i]
            x1, x2, ids = dask.compute(self.x1.blocks[i], self.x2.blocks[i], ids)
            step = x1.shape[0] if rows is None else max(1, int(rows))
            for a in range(0, x1.shape[0], step):
                yield x1[a : a + step], x2[a : a + step], None if ids is None else ids[a : a + step]

    @classmethod
    def from_release(cls, rel: ZILRelease, chunk_rows: int | None = None) -> DaskRelease:
        """An in-memory release as Dask arrays of ``chunk_rows`` rows (default: n / 4)."""
        rows = chunk_rows or max(1, -(-rel.n // 4))
        ids = None if rel.ids is None else da.from_array(rel.ids, chunks=rows)
        return cls(
            x1=da.from_array(np.asarray(rel.x1), chunks=(rows, rel.d)),
            x2=da.from_array(np.asarray(rel.x2), chunks=(rows, rel.d)),
            **rel.metadata(),
            ids=ids,
        )

    def compute(self, **kwargs: Any) -> ZILRelease:
        """Bring every record to the client as an in-memory :class:`ZILRelease`."""
        x1, x2, ids = da.compute(self.x1, self.x2, self.ids, **kwargs)
        return ZILRelease(
            x1=np.asarray(x1, dtype=float),
            x2=np.asarray(x2, dtype=float),
            **self.metadata(),
            ids=None if ids is None else np.asarray(ids),
        )


def _metadata(rel: Any) -> dict[str, Any]:
    """The public fields of ``rel`` (:meth:`ReleasedColumns.metadata`; the name
    ``privest.scale.fit`` imports)."""
    return rel.metadata()

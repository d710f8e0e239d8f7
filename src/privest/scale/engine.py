"""The ``dask`` engine: what the core and the command line reach by ``engine="dask"``
(:func:`privest.backends.get_engine`), registered when :mod:`privest.scale` is imported."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from privest.errors import ValidationError
from privest.scale.examples import load_examples_dask, release_examples_to_folder
from privest.scale.release import release_partitioned
from privest.scale.stats import read_column
from privest.scale.store import load_dask_release

__all__ = ["DaskEngine"]


class DaskEngine:
    """The Dask backend's entry points, by the names the core and the CLI call."""

    name = "dask"

    @staticmethod
    def load_release(path: str | Path) -> Any:
        """``load_release(path, engine="dask")``: a DaskRelease, one chunk per part."""
        return load_dask_release(path)

    @staticmethod
    def release_to_store(data: Any, mech: Any, store: str | Path, **kwargs: Any) -> Any:
        """``mech.release(parquet_path, store=...)``: partition by partition."""
        return release_partitioned(data, mech, store, **kwargs)

    @staticmethod
    def release_examples_to_folder(data: Any, mech: Any, path: str | Path, **kwargs: Any) -> Any:
        """The paper-004 example release of a Parquet path, partition by partition."""
        return release_examples_to_folder(mech, data, path, **kwargs)

    @staticmethod
    def load_examples(path: str | Path) -> Any:
        """``(examples, X, y)`` of a partitioned example release, as Dask arrays."""
        return load_examples_dask(path)

    @staticmethod
    def read_column(path: str | Path, column: str) -> Any:
        """One column of a Parquet file or folder as a Dask Series (``privest stat``)."""
        return read_column(path, column)

    @staticmethod
    def columns(path: str | Path) -> list[str]:
        """The column names of a Parquet file or folder (read from its metadata only)."""
        import dask.dataframe as dd

        if not Path(path).exists():
            raise ValidationError(f"input: {str(path)!r} does not exist")
        return [str(c) for c in dd.read_parquet(str(path)).columns]

    @staticmethod
    @contextmanager
    def cluster(
        scheduler: str | None = None, workers: int | None = None, memory_limit: str = "auto"
    ) -> Iterator[Any]:
        """The cluster a command runs on: the scheduler at ``scheduler``, a LocalCluster of
        ``workers`` worker processes (one thread each), or Dask's local threads."""
        from distributed import Client, LocalCluster

        if scheduler:
            with Client(scheduler) as client:
                yield client
            return
        if workers is None:
            yield None  # Dask's default local threads
            return
        if workers < 1:
            raise ValidationError(f"--workers: {workers} must be at least 1")
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                memory_limit=memory_limit,
                dashboard_address=":0",
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client

"""``--engine dask [--scheduler ADDRESS | --workers N]``: where a command runs (docs/scale-out.md).

``--engine memory`` (the default) reads the data into this process. ``--engine dask`` runs on
Dask: on the cluster whose scheduler is at ``--scheduler``, on a LocalCluster of
``--workers`` worker processes, or, with neither, on Dask's local threads. Dask is imported
only here, and only for ``--engine dask``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from privest.errors import ValidationError

__all__ = ["add_engine_arguments", "dask_engine"]


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine``, ``--scheduler``, ``--workers``, ``--memory-limit``."""
    g = p.add_argument_group("scale-out (needs the extra privest[dask])")
    g.add_argument(
        "--engine",
        choices=["memory", "dask"],
        default="memory",
        help="memory: read the data into this process (default); dask: out of core, "
        "partition by partition on a Dask cluster",
    )
    where = g.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (--engine dask)",
    )
    where.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="start a local cluster of N worker processes "
        "(--engine dask; default without --scheduler: Dask's local threads)",
    )
    g.add_argument(
        "--memory-limit",
        default="auto",
        metavar="BYTES",
        help="memory limit of each --workers process, e.g. 2GB (default: an equal share)",
    )


@contextmanager
def dask_engine(args: argparse.Namespace) -> Iterator[Any]:
    """Connect to (or start) the Dask cluster the arguments name, for the command's body."""
    if args.engine != "dask":
        if args.scheduler or args.workers is not None:
            raise ValidationError("--scheduler and --workers need --engine dask")
        yield None
        return
    try:
        from distributed import Client, LocalCluster

        import privest.scale  # noqa: F401
    except ImportError:
        raise ValidationError(
            "--engine dask needs the extra: pip install 'privest[dask]' (dask[dataframe] and "
            "distributed)"
        ) from None
    if args.scheduler:
        with Client(args.scheduler) as client:
            yield client
        return
    if args.workers is None:
        yield None  # Dask's default local threads
        return
    if args.workers < 1:
        raise ValidationError(f"--workers: {args.workers} must be at least 1")
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            memory_limit=args.memory_limit,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client

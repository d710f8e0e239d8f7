"""``--engine dask [--scheduler ADDRESS | --workers N]``: where a command runs (docs/scale-out.md).

``--engine memory`` (the default) reads the data into this process. ``--engine dask`` runs on
Dask: on the cluster whose scheduler is at ``--scheduler``, on a LocalCluster of
``--workers`` worker processes, or, with neither, on Dask's local threads. The backend is
reached through its engine (:func:`privest.backends.get_engine`), and only for ``--engine
dask``; this module imports neither Dask nor the backend.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
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
    """Connect to (or start) the Dask cluster the arguments name, for the command's body:
    the ``dask`` engine's ``cluster`` (:func:`privest.backends.get_engine`)."""
    if args.engine != "dask":
        if args.scheduler or args.workers is not None:
            raise ValidationError("--scheduler and --workers need --engine dask")
        yield None
        return
    from privest.backends import get_engine

    with ExitStack() as stack:
        cluster = get_engine("dask").cluster(args.scheduler, args.workers, args.memory_limit)
        try:
            client = stack.enter_context(cluster)
        except ImportError:  # the backend is there, distributed is not
            raise ValidationError(
                "--engine dask needs the extra: pip install 'privest[dask]' (dask[dataframe] "
                "and distributed)"
            ) from None
        yield client

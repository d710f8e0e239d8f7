"""Scale-out on Dask: release, fit and private statistics on data larger than memory.

Dask is an optional extra (``pip install 'privest[dask]'``); importing this package without
it raises an :class:`ImportError` that says how to install it. The core library and the
README's commands never import it.
"""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "privest.scale needs Dask: pip install 'privest[dask]' (dask[dataframe] and distributed)"
    ) from exc

import sys

from privest.backends import register_engine
from privest.scale import (
    stats,  # noqa: F401  (registers the statistics' laws)
    tables,  # noqa: F401  (registers the tables' totals)
)
from privest.scale.dask_release import DaskRelease
from privest.scale.stats import read_column

__all__ = ["DaskRelease", "read_column"]

register_engine("dask", sys.modules[__name__])

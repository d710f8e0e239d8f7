"""Scale-out on Dask: the ``dask`` backend of privest (:mod:`privest.backends`).

Release, fit and private statistics on data larger than memory. Dask is an optional extra
(``pip install 'privest[dask]'``); importing this package without it raises an
:class:`ImportError` that says how to install it. The core library never imports it: it is
found through the entry point group ``privest.backends`` and, when imported, registers

* the ``dask`` engine (:class:`~privest.scale.engine.DaskEngine`: ``load_release``, the
  release of a Parquet path, the cluster of the command line);
* its implementations of the core's dispatch functions for Dask DataFrames:
  :func:`~privest.release.into_store.release_to_store` (with ``out_of_core``) and
  :func:`~privest.release.examples_io.release_examples_to_folder`, the statistics' laws
  (:mod:`privest.scale.stats`) and the fits' objective (:mod:`privest.scale.fit`).
"""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import dask.dataframe as dd
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "privest.scale needs Dask: pip install 'privest[dask]' (dask[dataframe] and distributed)"
    ) from exc

import privest.scale.fit  # noqa: F401  (registers the fits' objective and streams)
from privest.backends import register_engine
from privest.release.examples_io import release_examples_to_folder
from privest.release.into_store import out_of_core, release_to_store
from privest.scale import (
    stats,  # noqa: F401  (registers the statistics' laws)
    tables,  # noqa: F401  (registers the tables' totals)
)
from privest.scale.dask_release import DaskRelease
from privest.scale.engine import DaskEngine
from privest.scale.examples import release_examples_to_folder as _examples_partitioned
from privest.scale.release import release_partitioned

__all__ = ["DaskRelease"]

register_engine("dask", DaskEngine())
release_to_store.register(dd.DataFrame)(release_partitioned)
out_of_core.register(dd.DataFrame)(lambda data: True)
release_examples_to_folder.register(dd.DataFrame)(
    lambda data, mech, path, **kw: _examples_partitioned(mech, data, path, **kw)
)

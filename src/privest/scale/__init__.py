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

from privest.scale import fit as _fit  # noqa: E402,F401  the fit backend registers itself
from privest.scale.dask_release import DaskRelease

__all__ = ["DaskRelease"]

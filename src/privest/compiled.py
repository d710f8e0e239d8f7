"""The numba options of privest's compiled kernels (the DR median-regression simplex, the
exact-sum pass, the table bounding passes).

A kernel is compiled once per installation where numba finds a writable cache location
(next to the source, the user's cache directory or ``NUMBA_CACHE_DIR``); without one it is
compiled again in every process, and :class:`~privest.errors.NoCompileCacheWarning` says so.
Kernel modules import numba at their own import, and they are imported on first use, so
``import privest`` never loads numba.
"""

from __future__ import annotations

import warnings
from typing import Any

from numba import njit

from privest.errors import NoCompileCacheWarning

__all__ = ["jit_options"]


def _cache_probe() -> None:
    """Decorated with ``cache=True`` only to ask numba for a cache location."""


def jit_options(kernel: str, compile_cost: str, **options: Any) -> dict[str, Any]:
    """``njit`` options for ``kernel``: ``cache=True`` where numba can cache, else a warning
    naming the kernel and what compiling it in every process costs (``compile_cost``)."""
    try:
        njit(cache=True)(_cache_probe)
    except RuntimeError as exc:  # numba: "cannot cache function ...: no locator available"
        warnings.warn(
            f"numba has no writable cache for {kernel} ({exc}); it compiles in every new "
            f"process ({compile_cost}). Set NUMBA_CACHE_DIR to a writable directory to "
            "compile it once.",
            NoCompileCacheWarning,
            stacklevel=3,
        )
        return {"cache": False, **options}
    return {"cache": True, **options}

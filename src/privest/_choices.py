"""String choices of public options, importable without numpy.

The library validates against these tuples and the ``privest`` command lists them in its
``--help``, which must not import numpy (see :mod:`privest.cli`).
"""

from __future__ import annotations

__all__ = ["STATISTIC_MECHANISMS"]

#: ``mechanism=`` of :func:`privest.models.statistics.private_statistic` and ``privest stat``.
STATISTIC_MECHANISMS: tuple[str, ...] = (
    "auto",
    "piecewise_laplace",
    "inverse_sensitivity",
    "smooth_sensitivity",
    "permute_and_flip",
    "two_stage",
    "laplace",
)

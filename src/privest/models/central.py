"""The public domain of the central models' features (docs/domain.md, docs/central-models.md).

:class:`~privest.models.linear.PrivateLinearRegression` and
:class:`~privest.models.logistic.PrivateLogisticRegression` take the features' public bounds
as ``bounds=`` or as ``domain=`` (a :class:`~privest.domain.Domain`), as the ``private_*``
functions do; a fact given both ways must agree. Their guarantees are stated for swap
neighbours (one record replaced, n public), so a domain with another relation is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privest.domain import Domain
from privest.errors import BoundsError, ValidationError

__all__ = ["feature_bounds"]


def feature_bounds(domain: Domain | None, bounds: Any, names: Any = None) -> Any:
    """The features' public bounds from ``domain`` and ``bounds=`` (None if neither gives
    them); a mapping column -> (lo, hi) is read in the order of ``names`` (the fitted
    ``feature_names_in_``)."""
    dom = Domain.of(domain, bounds=bounds)
    if dom.neighbours != "swap":
        raise ValidationError(
            f"domain.neighbours: {dom.neighbours!r}; the central models are stated for "
            "swap neighbours (one record replaced, n public)"
        )
    b = dom.bounds
    if not isinstance(b, dict):
        return b
    if names is None:
        raise BoundsError(
            "domain.bounds: a mapping column -> (lo, hi) needs X with column names (a DataFrame)"
        )
    missing = [str(c) for c in names if str(c) not in b]
    if missing:
        raise BoundsError(f"domain.bounds: no bounds for the column(s) {missing}")
    return np.array([b[str(c)] for c in names], dtype=float)

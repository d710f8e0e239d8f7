"""The public domain and design of the central models (docs/domain.md, docs/central-models.md).

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
from privest.errors import BoundsError

__all__ = ["box_radius", "feature_bounds", "public_design"]


def feature_bounds(domain: Domain | None, bounds: Any, names: Any = None) -> Any:
    """The features' public bounds from ``domain`` and ``bounds=`` (None if neither gives
    them); a mapping column -> (lo, hi) is read in the order of ``names`` (the fitted
    ``feature_names_in_``)."""
    dom = Domain.of(domain, bounds=bounds).swap_only(
        "this central model", "its sensitivities bound the change of one record"
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


def public_design(bounds: np.ndarray, y_bounds: np.ndarray, fit_intercept: bool) -> dict:
    """The public preprocessing: centres, constant column, row bound B and response bound.

    With an intercept: features centred at the box centre, constant column c = the root mean
    square half-width (a typical feature's scale), B = sqrt(sum h_j^2 + c^2); y centred at
    the centre of ``y_bounds``. Without: no centring, B = ||max(|lo|, |hi|)||.
    """
    lo, hi = bounds[:, 0], bounds[:, 1]
    if fit_intercept:
        centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        const = float(np.sqrt(np.mean(half**2)))
        radius = float(np.sqrt(np.sum(half**2) + const**2))
        y_centre, y_half = float(np.mean(y_bounds)), float(np.diff(y_bounds)[0] / 2.0)
    else:
        centre, const = np.zeros_like(lo), 0.0
        radius = float(np.linalg.norm(np.maximum(np.abs(lo), np.abs(hi))))
        y_centre, y_half = 0.0, float(np.max(np.abs(y_bounds)))
    return {
        "centre": centre,
        "const": const,
        "x_radius": radius,
        "y_centre": y_centre,
        "y_radius": y_half,
        "dims": lo.size + int(fit_intercept),
        "min_half": float(np.min(np.append((hi - lo) / 2.0, [const] if fit_intercept else []))),
    }


def box_radius(bounds: np.ndarray, centred: bool) -> float:
    """The norm bound of a public box ((p, 2) array): sqrt(sum h_j^2) for rows centred at the
    box centre (h the half-widths), ||max(|lo|, |hi|)|| otherwise; a hair above it
    (1e-12 relative) so that float rounding of a row in the box never leaves the ball."""
    lo, hi = bounds[:, 0], bounds[:, 1]
    reach = (hi - lo) / 2.0 if centred else np.maximum(np.abs(lo), np.abs(hi))
    return float(np.linalg.norm(reach)) * (1.0 + 1e-12)

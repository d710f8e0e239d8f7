"""Shared checks of data, bounds and privacy parameters.

Each check returns the validated value in canonical form (float arrays, tuples) or
raises a :mod:`privest.errors` exception naming the argument, the bad value and what
is accepted. NaN and inf are always errors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import BoundsError, PrivacyParameterError, ValidationError

__all__ = [
    "as_float_matrix",
    "as_float_vector",
    "box_bounds",
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_positive",
    "check_probabilities",
    "check_probability",
]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_float_matrix(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite, non-empty 2-D float array (a 1-D input becomes one column)."""
    names = None
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise ValidationError(
                f"{name}: columns {bad} are not numeric; privest accepts numeric columns only "
                "(encode categories as numbers first)"
            )
        X = X.to_numpy(dtype=float)
    elif isinstance(X, pd.Series):
        if not pd.api.types.is_numeric_dtype(X):
            raise ValidationError(f"{name}: series of dtype {X.dtype} is not numeric")
        X = X.to_numpy(dtype=float)
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"{name}: cannot be read as numbers ({exc}); pass a numeric array or DataFrame"
        ) from None
    one_d = arr.ndim == 1
    if one_d:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValidationError(
            f"{name}: has shape {arr.shape}; expected a 2-D array (records x attributes)"
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValidationError(f"{name}: is empty (shape {arr.shape}); need at least one record")
    # One cheap pass first: the sum is finite unless some entry is NaN/inf (or it overflows).
    # The message names columns only: a row, a count or a value would describe the data.
    if not np.isfinite(arr.sum()) and not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.all(np.isfinite(arr), axis=0))
        where = [names[j] for j in bad] if names is not None else bad.tolist()
        cols = "" if one_d else f"columns {where} "
        raise ValidationError(
            f"{name}: {cols}contain{'s' if one_d else ''} NaN or infinite values; remove or "
            "impute them first"
        )
    return arr


def as_float_vector(x: Any, name: str = "x") -> np.ndarray:
    """Return ``x`` as a finite, non-empty 1-D float array."""
    arr = as_float_matrix(x, name)
    if arr.shape[1] != 1:
        raise ValidationError(f"{name}: has shape {arr.shape}; expected a 1-D array")
    return arr[:, 0]


def check_bounds(bounds: Any, d: int | None = None, name: str = "bounds") -> np.ndarray:
    """Return public per-attribute bounds as a ``(d, 2)`` float array with lo < hi.

    Accepts one pair ``(lo, hi)`` (broadcast to ``d`` attributes) or a sequence of pairs.
    """
    try:
        arr = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise BoundsError(
            f"{name}: {_short(bounds)} is not numeric; expected (lo, hi) or a list of (lo, hi)"
        ) from None
    if arr.ndim == 1 and arr.shape == (2,):
        arr = np.tile(arr, (d or 1, 1))
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise BoundsError(
            f"{name}: {_short(bounds)} has shape {arr.shape}; expected (lo, hi) or d pairs (lo, hi)"
        )
    if d is not None and arr.shape[0] != d:
        raise BoundsError(f"{name}: gives {arr.shape[0]} pairs for {d} attributes; need one each")
    if not np.all(np.isfinite(arr)):
        raise BoundsError(f"{name}: {_short(bounds)} must be finite public bounds")
    bad = np.nonzero(arr[:, 0] >= arr[:, 1])[0]
    if bad.size:
        j = int(bad[0])
        raise BoundsError(
            f"{name}: pair {j} is ({arr[j, 0]}, {arr[j, 1]}); each pair needs lo < hi"
        )
    with np.errstate(over="ignore"):
        wide = ~np.isfinite(arr[:, 1] - arr[:, 0])
    if wide.any():
        j = int(np.flatnonzero(wide)[0])
        raise BoundsError(
            f"{name}: pair {j} is ({arr[j, 0]:g}, {arr[j, 1]:g}); its width hi - lo overflows "
            "the float range: use bounds of ordinary size"
        )
    return arr


def box_bounds(
    bounds: Any, d: int, names: Sequence[str] | None = None, name: str = "bounds"
) -> np.ndarray:
    """A public box over all ``d`` columns as a ``(d, 2)`` array.

    ``bounds`` is one ``(lo, hi)`` for every column, a list of ``d`` pairs, or a mapping
    ``{column: (lo, hi)}`` naming every column of a DataFrame (``names``) exactly once.
    """
    if isinstance(bounds, Mapping):
        if names is None:
            raise BoundsError(
                f"{name}: a mapping needs a DataFrame with named columns; give a list of "
                f"{d} pairs for an array"
            )
        lookup = {str(k): v for k, v in bounds.items()}
        if sorted(lookup) != sorted(names) or len(lookup) != len(bounds):
            raise BoundsError(
                f"{name}: names {list(lookup)} do not match the columns {list(names)}; give "
                "one pair per column"
            )
        bounds = [lookup[c] for c in names]
    return check_bounds(bounds, d, name)


def _as_real(value: Any, name: str, exc: type[ValidationError]) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise exc(f"{name}: {_short(value)} is not a real number")
    return float(value)  # NaN fails every range check below


def check_epsilon(value: Any, name: str = "epsilon", allow_zero: bool = False) -> float:
    """A privacy loss epsilon: finite and > 0 (or >= 0 when ``allow_zero``)."""
    eps = _as_real(value, name, PrivacyParameterError)
    ok = eps >= 0 if allow_zero else eps > 0
    if not ok or math.isinf(eps):
        rng = "[0, inf)" if allow_zero else "(0, inf)"
        raise PrivacyParameterError(f"{name}: {eps!r} is out of range; accepted: finite in {rng}")
    return eps


def check_probability(
    value: Any, name: str, *, open_low: bool = True, open_high: bool = True
) -> float:
    """A probability in (0, 1), with either end closed on request."""
    p = _as_real(value, name, PrivacyParameterError)
    lo_ok = p > 0 if open_low else p >= 0
    hi_ok = p < 1 if open_high else p <= 1
    if not (lo_ok and hi_ok):
        interval = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise PrivacyParameterError(f"{name}: {p!r} is out of range; accepted: {interval}")
    return p


def check_probabilities(p: Any, name: str = "p") -> np.ndarray:
    """An array of probabilities in [0, 1] (e.g. the levels of an error quantile)."""
    q = np.asarray(p, dtype=float)
    if np.any(~((q >= 0) & (q <= 1))):
        raise ValidationError(f"{name}: probabilities must lie in [0, 1]")
    return q


def check_delta(value: Any, name: str = "delta") -> float:
    """A DP delta in [0, 1)."""
    return check_probability(value, name, open_low=False, open_high=True)


def check_positive(value: Any, name: str) -> float:
    """A finite real number > 0 (a noise scale, a radius, ...)."""
    x = _as_real(value, name, ValidationError)
    if not (x > 0) or math.isinf(x):
        raise ValidationError(f"{name}: {x!r} is out of range; accepted: finite and > 0")
    return x


def check_columns(columns: Sequence[int] | None, d: int, name: str = "columns") -> np.ndarray:
    """Indices of the selected attributes (all when ``None``), unique and in range."""
    if columns is None:
        return np.arange(d)
    idx = np.asarray(list(columns))
    if idx.size == 0 or idx.dtype.kind not in "iu":
        raise ValidationError(
            f"{name}: {_short(columns)} must be a non-empty list of column indices in [0, {d})"
        )
    if np.unique(idx).size != idx.size or idx.min() < 0 or idx.max() >= d:
        raise ValidationError(
            f"{name}: {_short(columns)} must be unique column indices in [0, {d})"
        )
    return np.sort(idx)

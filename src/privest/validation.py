"""Shared checks of data, bounds and privacy parameters.

Each check returns the validated value in canonical form (float arrays, tuples) or
raises a :mod:`privest.errors` exception naming the argument, the bad value and what
is accepted. NaN and inf are always errors.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from privest.errors import BoundsError, PrivacyParameterError, ValidationError

__all__ = [
    "BOUNDS_RANGE",
    "DELTA_RANGE",
    "EPSILON_RANGE",
    "as_finite_array",
    "as_float_matrix",
    "as_float_vector",
    "box_bounds",
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_positive",
    "check_probabilities",
    "check_probability",
    "check_real_data",
]

#: the accepted range of a mechanism's or estimator's epsilon (docs/vocabulary.md): below
#: it the noise outgrows the exact samplers' integers, above it exp(epsilon) overflows
EPSILON_RANGE = (1e-4, 1e3)
#: public bounds: the largest magnitude of an end and the least width of a pair; beyond
#: them sums, squares and grid steps of the data leave the float range
BOUNDS_RANGE = (1e-100, 1e100)
#: the accepted range of a positive DP delta: smaller ones approach the float underflow in
#: the exact privacy profiles
DELTA_RANGE = (1e-100, 1.0)

#: what object arrays may hold (pandas' ``infer_dtype``): numbers only
_REAL_KINDS = ("integer", "floating", "mixed-integer-float", "boolean", "decimal", "empty")
_KIND_NAMES = {
    "c": "complex numbers",
    "U": "text",
    "S": "text",
    "M": "dates",
    "m": "time spans",
    "V": "raw bytes",
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_real_data(arr: np.ndarray, name: str) -> None:
    """Refuse complex, text, date and mixed object data before a float conversion could
    read them silently (``1+2j`` as 1, ``[1, '2', 3.0]`` as numbers). The message names the
    kind of data, never a value."""
    kind = arr.dtype.kind
    if kind in "biuf":
        return
    if kind == "O":
        import pandas as pd

        inferred = pd.api.types.infer_dtype(arr.ravel(), skipna=True)
        if inferred in _REAL_KINDS:
            return
        what = {"string": "text", "bytes": "text", "complex": "complex numbers"}.get(
            inferred, f"values of mixed types ({inferred})"
        )
    else:
        what = _KIND_NAMES.get(kind, f"values of dtype {arr.dtype}")
    raise ValidationError(
        f"{name}: holds {what}; privest accepts real numbers only (encode categories as "
        "numbers first)"
    )


def as_float_matrix(X: Any, name: str = "X") -> np.ndarray:
    """Return ``X`` as a finite, non-empty 2-D float array (a 1-D input becomes one column).

    Complex, text, date and mixed object data are refused (:func:`check_real_data`)."""
    # an input is a pandas object only if pandas is imported: a numpy input never imports it
    pd = sys.modules.get("pandas")
    names = None
    if pd is not None and isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        # read the dtypes, not the columns: a column is a Series built per access (most of
        # a small release's time); a repeated name is refused like a non-numeric column
        dtypes = list(X.dtypes)
        repeated = X.columns.duplicated(keep=False)
        numeric = pd.api.types.is_numeric_dtype
        bad = [
            c
            for c, dt, rep in zip(X.columns, dtypes, repeated, strict=True)
            if rep or not numeric(dt)
        ]
        if bad:
            raise ValidationError(
                f"{name}: columns {bad} are not numeric; privest accepts numeric columns only "
                "(encode categories as numbers first)"
            )
        for c, dt in zip(X.columns, dtypes, strict=True):
            if not (isinstance(dt, np.dtype) and dt.kind in "biuf"):  # extension dtypes
                check_real_data(X[c].to_numpy(), f"{name}: column {c!r}")
        X = X.to_numpy(dtype=float)
    elif pd is not None and isinstance(X, pd.Series):
        if not pd.api.types.is_numeric_dtype(X):
            raise ValidationError(f"{name}: series of dtype {X.dtype} is not numeric")
        check_real_data(X.to_numpy(), name)
        X = X.to_numpy(dtype=float)
    try:
        raw = np.asarray(X)
        check_real_data(raw, name)
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ValidationError):
            raise
        raise ValidationError(
            f"{name}: cannot be read as an array of numbers ({type(exc).__name__}); pass a "
            "numeric array or DataFrame"
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
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if not np.isfinite(total) and not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.all(np.isfinite(arr), axis=0))
        where = [names[j] for j in bad] if names is not None else bad.tolist()
        cols = "" if one_d else f"columns {where} "
        raise ValidationError(
            f"{name}: {cols}contain{'s' if one_d else ''} NaN or infinite values; remove or "
            "impute them first"
        )
    return arr


def as_finite_array(x: Any, name: str = "value") -> np.ndarray:
    """``x`` (a number or an array of any shape) as a finite float array; complex, text, date
    and mixed object values are refused (:func:`check_real_data`), and so are NaN and inf."""
    try:
        raw = np.asarray(x)
        check_real_data(raw, name)
        arr = raw.astype(float)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ValidationError):
            raise
        raise ValidationError(f"{name}: cannot be read as numbers ({type(exc).__name__})") from None
    if not np.all(np.isfinite(arr)):
        raise ValidationError(f"{name}: contains NaN or infinite values")
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
    if isinstance(bounds, (tuple, list)) and len(bounds) == 2 and d in (None, 1):
        lo, hi = bounds  # the common case, one pair of numbers, without the numpy checks
        small, big = BOUNDS_RANGE  # (the same rule as below, which words any refusal)
        if type(lo) in (float, int) and type(hi) in (float, int) and -big <= lo < hi <= big:
            lo, hi = float(lo), float(hi)  # rounded as astype(float) rounds them below
            if lo < hi and hi - lo >= small:
                return np.array([[lo, hi]])
    try:
        raw = np.asarray(bounds)
        check_real_data(raw, name)  # a ValidationError is a ValueError
        arr = raw.astype(float)
    except (TypeError, ValueError, OverflowError):
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
    lo, hi = BOUNDS_RANGE
    with np.errstate(over="ignore"):  # an overflowing width is refused below
        odd = (np.max(np.abs(arr), axis=1) > hi) | (arr[:, 1] - arr[:, 0] < lo)
    if odd.any():
        j = int(np.flatnonzero(odd)[0])
        raise BoundsError(
            f"{name}: pair {j} is ({arr[j, 0]:.3g}, {arr[j, 1]:.3g}); accepted: ends within "
            f"+-{hi:g} and a width of at least {lo:g} (rescale the data; docs/vocabulary.md)"
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
    try:
        return float(value)  # NaN fails every range check below
    except OverflowError:  # an int beyond the float range
        raise exc(f"{name}: an integer beyond the float range is not accepted") from None


def check_epsilon(value: Any, name: str = "epsilon", allow_zero: bool = False) -> float:
    """A privacy loss epsilon in :data:`EPSILON_RANGE` (docs/vocabulary.md).

    ``allow_zero`` (a guarantee object, which may compose many releases) accepts any finite
    value >= 0 instead."""
    eps = _as_real(value, name, PrivacyParameterError)
    if allow_zero:
        if not (eps >= 0) or math.isinf(eps):
            raise PrivacyParameterError(
                f"{name}: {eps:.4g} is out of range; accepted: finite in [0, inf)"
            )
        return eps
    lo, hi = EPSILON_RANGE
    if not (lo <= eps <= hi):
        raise PrivacyParameterError(
            f"{name}: {eps:.4g} is out of range; accepted: [{lo:g}, {hi:g}] (docs/vocabulary.md)"
        )
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


def check_delta(value: Any, name: str = "delta", allow_zero: bool = True) -> float:
    """A DP delta: 0 (when ``allow_zero``) or in :data:`DELTA_RANGE` (docs/vocabulary.md)."""
    dlt = check_probability(value, name, open_low=not allow_zero, open_high=True)
    if 0 < dlt < DELTA_RANGE[0]:
        raise PrivacyParameterError(
            f"{name}: {dlt:.3g} is out of range; accepted: "
            + ("0 or " if allow_zero else "")
            + f"[{DELTA_RANGE[0]:g}, 1) (docs/vocabulary.md)"
        )
    return dlt


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

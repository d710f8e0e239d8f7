"""The analyst's view of a release: features and response for corrected-loss fitting.

Paper 000, Section 4.3: only the columns J of the release were noised; the response and
an intercept enter the loss unchanged unless the release noised them. ``AnalysisData``
gathers X1, X2 (features), the response seen with each copy, the per-column noise scale
(0 for unnoised columns; privest noises each column in units of its public range),
the zero proportion, from a :class:`~privest.release.zil.ZILRelease` (or raw data for
the oracle).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import ValidationError
from privest.release.zil import ZILRelease
from privest.validation import as_float_matrix, as_float_vector

__all__ = ["AnalysisData", "analysis_data", "oracle_data"]


@dataclass(frozen=True)
class AnalysisData:
    """Features and response of the two released copies (for the oracle, x1 = x2 = raw).

    ``noise_scale[k]`` is the SL scale of feature column k (``X2 - x ~ SL(diag(s)^2)``),
    0 for unnoised columns; ``y_noise_scale`` the same for the response.
    """

    x1: np.ndarray
    x2: np.ndarray
    y1: np.ndarray | None
    y2: np.ndarray | None
    noise_scale: np.ndarray
    y_noise_scale: float
    zero_prob: float
    feature_names: tuple[str, ...]
    target_name: str | None

    @property
    def n(self) -> int:
        return self.x1.shape[0]

    @property
    def d(self) -> int:
        return self.x1.shape[1]

    @property
    def noised(self) -> np.ndarray:
        """(d,) bool: which feature columns carry noise."""
        return self.noise_scale > 0

    @property
    def noise_var(self) -> np.ndarray:
        """(d,) weights of the Laplacian in the SL/SDR corrections: ``noise_scale**2``."""
        return self.noise_scale**2

    @property
    def y_noised(self) -> bool:
        return self.y_noise_scale > 0

    def subset(self, rows: np.ndarray) -> AnalysisData:
        """The same data restricted to ``rows`` (bootstrap resampling of released records)."""
        pick = lambda a: None if a is None else a[rows]  # noqa: E731
        return replace(self, x1=self.x1[rows], x2=self.x2[rows], y1=pick(self.y1), y2=pick(self.y2))


#: rows per block of the response-clash scan (a block of x1 stays in the L2 cache for d ~ 10)
CLASH_BLOCK = 8_192


def _response_clash(release: ZILRelease, y: Any, yv: np.ndarray) -> str | None:
    """The release column that ``y`` (given as an array) duplicates, if any.

    A Series named like a column; an unnoised column equal to ``y``; or a noised column
    that matches ``y`` on at least half the share ``zero_prob`` of records that ZIL releases
    without noise (and on at least 3 records), the mark of the raw response. Records
    released without noise are rounded to the column's output grid (or its public
    ``resolution``), so "matches" means within half a step of it.
    """
    from privest.release.zil import output_grid

    names = list(release.column_names)
    if isinstance(y, pd.Series) and y.name is not None and str(y.name) in names:
        return str(y.name)
    steps = np.zeros(release.d)
    steps[release.columns] = (
        output_grid(release.noise_scale[release.columns])
        if release.resolution is None
        else release.resolution
    )
    # records within half a step of y, per column, by cache-sized blocks of rows (a whole
    # column at a time strides through the row-major x1 d times: 3-4x slower at n = 10^6)
    same = np.zeros(release.d, dtype=np.int64)
    for start in range(0, release.n, CLASH_BLOCK):
        xb, yb = release.x1[start : start + CLASH_BLOCK], yv[start : start + CLASH_BLOCK]
        for j in range(release.d):
            same[j] += np.count_nonzero(np.abs(xb[:, j] - yb) <= steps[j] / 2)
    for j, name in enumerate(names):
        if steps[j] == 0 and same[j] == release.n:
            return name
        if steps[j] > 0 and same[j] >= max(3, 0.5 * release.zero_prob * release.n):
            return name
    return None


def analysis_data(
    release: ZILRelease, y: Any = None, features: Sequence[str] | None = None
) -> AnalysisData:
    """Split a release into features and response.

    ``y`` is a column name of the release, an array of length n (an unnoised response
    kept by the analyst), or ``None`` (unsupervised losses). ``features`` selects feature
    columns by name (default: every column but the response). A response array that
    duplicates a release column (the README mistake: releasing ``y`` with the features
    and passing it again) is refused unless ``features`` names the predictors.
    """
    if not isinstance(release, ZILRelease):
        raise ValidationError(
            f"release: got {type(release).__name__}; pass a ZILRelease (pv.load_release or "
            "ZILMechanism.release), or use method='oracle' for raw data"
        )
    names = list(release.column_names)
    scale = release.noise_scale
    y_col = None
    y1 = y2 = None
    y_scale = 0.0
    if isinstance(y, str):
        if y not in names:
            raise ValidationError(f"y: {y!r} is not a column of the release; have {names}")
        y_col = names.index(y)
        y1, y2 = release.x1[:, y_col].copy(), release.x2[:, y_col].copy()
        y_scale = float(scale[y_col])
    elif y is not None:
        y1 = as_float_vector(y, "y")
        if y1.shape[0] != release.n:
            raise ValidationError(f"y: has {y1.shape[0]} values for {release.n} released records")
        if features is None:
            clash = _response_clash(release, y, y1)
            if clash is not None:
                raise ValidationError(
                    f"y: the response duplicates the release column {clash!r}, which would "
                    f"also be used as a predictor; pass y={clash!r} to fit on the released "
                    "column, or name the predictors with features=[...]"
                )
        y2 = y1
    if features is None:
        cols = [j for j in range(len(names)) if j != y_col]
    else:
        missing = [f for f in features if f not in names]
        if missing:
            raise ValidationError(f"features: {missing} are not columns of the release")
        cols = [names.index(f) for f in features]
        if y_col is not None and y_col in cols:
            raise ValidationError(f"features: includes the response {y!r}")
    if not cols:
        raise ValidationError("features: no feature columns left")
    idx = np.asarray(cols, dtype=np.intp)
    # a contiguous run of columns is a view (no copy of a large release)
    contiguous = bool(np.all(np.diff(idx) == 1))
    pick = slice(int(idx[0]), int(idx[-1]) + 1) if contiguous else idx
    return AnalysisData(
        x1=release.x1[:, pick],
        x2=release.x2[:, pick],
        y1=y1,
        y2=y2,
        noise_scale=scale[idx],
        y_noise_scale=y_scale,
        zero_prob=release.zero_prob,
        feature_names=tuple(names[j] for j in cols),
        target_name=y if isinstance(y, str) else (None if y is None else _array_name(y)),
    )


def _array_name(y: Any) -> str:
    return str(y.name) if isinstance(y, pd.Series) and y.name is not None else "y"


def oracle_data(X: Any, y: Any = None) -> AnalysisData:
    """Raw data as AnalysisData (no noise), for the oracle estimator of experiments."""
    names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    x = as_float_matrix(X, "X")
    yy = None if y is None else as_float_vector(y, "y")
    if yy is not None and yy.shape[0] != x.shape[0]:
        raise ValidationError(f"y: has {yy.shape[0]} values for {x.shape[0]} records")
    return AnalysisData(
        x1=x,
        x2=x,
        y1=yy,
        y2=yy,
        noise_scale=np.zeros(x.shape[1]),
        y_noise_scale=0.0,
        zero_prob=1.0,
        feature_names=tuple(names or [f"x{j}" for j in range(x.shape[1])]),
        target_name=None if y is None else _array_name(y),
    )

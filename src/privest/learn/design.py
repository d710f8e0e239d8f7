"""The analyst's view of a release: features and response for corrected-loss fitting.

Paper 000, Section 4.3: only the columns J of the release were noised; the response and
an intercept enter the loss unchanged unless the release noised them. ``AnalysisData``
gathers X1, X2 (features), the response seen with each copy, the noised mask, delta and
lam, from a :class:`~privest.release.zil.ZILRelease` (or raw data for the oracle).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privest.errors import ValidationError
from privest.release.zil import ZILRelease
from privest.validation import as_float_matrix, as_float_vector

__all__ = ["AnalysisData", "analysis_data", "oracle_data"]


@dataclass(frozen=True)
class AnalysisData:
    """Features and response of the two released copies (for the oracle, x1 = x2 = raw)."""

    x1: np.ndarray
    x2: np.ndarray
    y1: np.ndarray | None
    y2: np.ndarray | None
    noised: np.ndarray  # (d,) bool: which feature columns carry noise
    y_noised: bool
    delta: float
    lam: float
    feature_names: tuple[str, ...]
    target_name: str | None

    @property
    def n(self) -> int:
        return self.x1.shape[0]

    @property
    def d(self) -> int:
        return self.x1.shape[1]

    def subset(self, rows: np.ndarray) -> AnalysisData:
        """The same data restricted to ``rows`` (bootstrap resampling of released records)."""
        pick = lambda a: None if a is None else a[rows]  # noqa: E731
        return AnalysisData(
            self.x1[rows],
            self.x2[rows],
            pick(self.y1),
            pick(self.y2),
            self.noised,
            self.y_noised,
            self.delta,
            self.lam,
            self.feature_names,
            self.target_name,
        )


def analysis_data(
    release: ZILRelease, y: Any = None, features: Sequence[str] | None = None
) -> AnalysisData:
    """Split a release into features and response.

    ``y`` is a column name of the release, an array of length n (an unnoised response
    kept by the analyst), or ``None`` (unsupervised losses). ``features`` selects feature
    columns by name (default: every column but the response).
    """
    if not isinstance(release, ZILRelease):
        raise ValidationError(
            f"release: got {type(release).__name__}; pass a ZILRelease (pv.load_release or "
            "ZILMechanism.release), or use method='oracle' for raw data"
        )
    names = list(release.column_names)
    noised_set = {int(j) for j in release.columns}
    y_col = None
    y1 = y2 = None
    y_noised = False
    if isinstance(y, str):
        if y not in names:
            raise ValidationError(f"y: {y!r} is not a column of the release; have {names}")
        y_col = names.index(y)
        y1, y2 = release.x1[:, y_col].copy(), release.x2[:, y_col].copy()
        y_noised = y_col in noised_set
    elif y is not None:
        y1 = as_float_vector(y, "y")
        if y1.shape[0] != release.n:
            raise ValidationError(f"y: has {y1.shape[0]} values for {release.n} released records")
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
        noised=np.isin(idx, list(noised_set)),
        y_noised=y_noised,
        delta=release.delta,
        lam=release.lam,
        feature_names=tuple(names[j] for j in cols),
        target_name=y if isinstance(y, str) else (None if y is None else "y"),
    )


def oracle_data(X: Any, y: Any = None) -> AnalysisData:
    """Raw data as AnalysisData (no noise), for the oracle estimator of experiments."""
    names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    x = as_float_matrix(X, "X")
    yy = None if y is None else as_float_vector(y, "y")
    if yy is not None and yy.shape[0] != x.shape[0]:
        raise ValidationError(f"y: has {yy.shape[0]} values for {x.shape[0]} records")
    return AnalysisData(
        x,
        x,
        yy,
        yy,
        np.zeros(x.shape[1], bool),
        False,
        1.0,
        0.0,
        tuple(names or [f"x{j}" for j in range(x.shape[1])]),
        None if y is None else "y",
    )

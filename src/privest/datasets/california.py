"""California Housing (Pace and Barry 1997), paper 001's NW experiment (E8).

20,640 block groups; response median house value in $100k. scikit-learn downloads it at run
time (``sklearn.datasets.fetch_california_housing``), so privest takes a local CSV instead:
export it once with ``fetch_california_housing(as_frame=True).frame.to_csv(PATH, index=False)``
on a machine with internet access, and pass PATH. Columns needed: MedInc, HouseAge, Latitude,
Longitude and MedHouseVal.

:func:`california_features` maps the four predictors to [0, 1] with the public ranges of the
reference code and the response to [-1, 1] via (clip(y, 0, 5) - 2.5) / 2.5.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["CALIFORNIA_RANGES", "california_features", "load_california_housing"]

#: Public ranges (authors' code): predictors are clipped to them and mapped to [0, 1].
CALIFORNIA_RANGES = {
    "MedInc": (0.0, 15.0),
    "Latitude": (32.0, 42.0),
    "Longitude": (-125.0, -114.0),
    "HouseAge": (0.0, 55.0),
}
_TARGET = "MedHouseVal"


def load_california_housing(path: str | Path) -> pd.DataFrame:
    """The CSV export of scikit-learn's California housing frame."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"california housing data: {p} not found; on a machine with internet access run "
            "sklearn.datasets.fetch_california_housing(as_frame=True).frame.to_csv(PATH, "
            "index=False) and pass PATH"
        )
    df = pd.read_csv(p)
    missing = [c for c in [*CALIFORNIA_RANGES, _TARGET] if c not in df.columns]
    if missing:
        raise ValueError(f"california housing data: {p} lacks columns {missing}")
    return df


def california_features(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(X in [0, 1]^4, y in [-1, 1]) with public constants only."""
    cols = []
    for name, (lo, hi) in CALIFORNIA_RANGES.items():
        cols.append((np.clip(df[name].to_numpy(float), lo, hi) - lo) / (hi - lo))
    y = (np.clip(df[_TARGET].to_numpy(float), 0.0, 5.0) - 2.5) / 2.5
    return np.column_stack(cols), y

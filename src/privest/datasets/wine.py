"""UCI Wine Quality (Cortez et al. 2009), used by paper 001's OLS experiment (E7).

6,497 wines (1,599 red + 4,898 white), 11 physicochemical features and a quality score
(observed 3-9, public range [0, 10]). Licence CC BY 4.0. Not shipped with privest: download
``winequality-red.csv`` and ``winequality-white.csv`` (``;``-separated) from
https://archive.ics.uci.edu/dataset/186/wine+quality and pass their folder.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["WINE_FEATURES", "load_wine_quality"]

#: The 7 predictors of the authors' code (paper 001, Sec. 4.4 names four of them).
WINE_FEATURES = [
    "alcohol",
    "volatile acidity",
    "density",
    "chlorides",
    "free sulfur dioxide",
    "residual sugar",
    "pH",
]
_FILES = {"red": "winequality-red.csv", "white": "winequality-white.csv"}


def load_wine_quality(path: str | Path) -> pd.DataFrame:
    """Red and white wines concatenated (red first), with a ``type`` column ("red"/"white").

    ``path`` is the folder holding both CSVs. Raises :class:`FileNotFoundError` naming what to
    download and where when a file is missing.
    """
    folder = Path(path)
    frames = []
    for kind, name in _FILES.items():
        f = folder / name
        if not f.is_file():
            raise FileNotFoundError(
                f"wine quality data: {f} not found; download {_FILES['red']} and "
                f"{_FILES['white']} from https://archive.ics.uci.edu/dataset/186/wine+quality "
                f"into {folder}"
            )
        df = pd.read_csv(f, sep=";")
        df["type"] = kind
        frames.append(df)
    return pd.concat(frames, ignore_index=True)

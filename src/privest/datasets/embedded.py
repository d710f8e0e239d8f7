"""Embedded real data for ``privest demo``: scikit-learn's Wisconsin breast cancer data.

569 tumours, 30 cell-nucleus measurements and a malignant/benign label (Street,
Wolberg and Mangasarian 1993; shipped with scikit-learn, no download). The demo uses
five features. Their public bounds are fixed here, rounded outwards from the ranges
documented with the data set, and never computed from the data at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["DEMO_BOUNDS", "DemoData", "load_demo_data"]

#: Public per-feature bounds (documented ranges, rounded outwards).
DEMO_BOUNDS: dict[str, tuple[float, float]] = {
    "mean radius": (5.0, 30.0),
    "mean texture": (5.0, 40.0),
    "mean smoothness": (0.05, 0.17),
    "mean concavity": (0.0, 0.45),
    "mean symmetry": (0.10, 0.31),
}


@dataclass(frozen=True)
class DemoData:
    """Features rescaled to [0, 1] by their public bounds, the raw features and the label."""

    X: pd.DataFrame  # rescaled to [0, 1]
    raw: pd.DataFrame
    y: pd.Series  # 1 = malignant
    bounds: dict[str, tuple[float, float]]


def load_demo_data() -> DemoData:
    """The five demo features, rescaled to [0, 1] with :data:`DEMO_BOUNDS`, and the label."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    raw = data.frame[list(DEMO_BOUNDS)].astype(float)
    lo = np.array([b[0] for b in DEMO_BOUNDS.values()])
    hi = np.array([b[1] for b in DEMO_BOUNDS.values()])
    scaled = (raw - lo) / (hi - lo)
    y = pd.Series(1 - data.target.to_numpy(), name="malignant")
    return DemoData(X=scaled, raw=raw, y=y, bounds=dict(DEMO_BOUNDS))

"""Synthetic data for the IWP-SGD reproductions (paper 004, Sec. 6 and App. E).

* :func:`make_iwp_classification`: the E1/E4 data (sklearn ``make_classification``, labels in
  {-1, +1}, each feature min-max scaled to [-1, 1] on the generated sample, as in paper 004,
  Sec. 6).
* :func:`make_acs_like`: an offline **stand-in** for the folktables ACS person data of E2/E5
  (columns AGEP, SEX, SCHL, WKHP, PINCP, PUBCOV). It is not census data: ages, schooling,
  hours and a log-normal income with plausible dependence, only so that the E2/E5 pipeline
  runs without a download. Its public bounds are those of the ACS codebook (A6 in
  docs/iwp-sgd.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

__all__ = ["ACS_PUBLIC_BOUNDS", "make_acs_like", "make_iwp_classification", "minmax_unit"]

#: Public ranges of the ACS columns (codebook), usable as privacy-clean bounds (A6).
ACS_PUBLIC_BOUNDS = {
    "AGEP": (0.0, 99.0),
    "SEX": (1.0, 2.0),
    "SCHL": (1.0, 24.0),
    "WKHP": (1.0, 99.0),
    "PINCP": (0.0, 250_000.0),
}


def minmax_unit(X: np.ndarray) -> np.ndarray:
    """Scale each column to [-1, 1] by its sample min and max (data-dependent, leaks; A6)."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    return 2.0 * (X - lo) / np.where(hi > lo, hi - lo, 1.0) - 1.0


def make_iwp_classification(
    p: int, n_samples: int, random_state: int
) -> tuple[np.ndarray, np.ndarray]:
    """make_classification as in paper 004, Sec. 6 (p = 2: two informative, none redundant,
    since scikit-learn's defaults need p >= 4)."""
    kw = {"n_informative": 2, "n_redundant": 0} if p == 2 else {}
    X, y = make_classification(n_samples=n_samples, n_features=p, random_state=random_state, **kw)
    return minmax_unit(X), np.where(y == 1, 1.0, -1.0)


def make_acs_like(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A synthetic ACS-like person table (offline stand-in; NOT census data)."""
    age = np.clip(rng.gamma(9.0, 5.0, n) + 16, 17, 95).round()
    sex = rng.integers(1, 3, n).astype(float)
    schl = np.clip(np.round(rng.normal(18.5, 3.5, n)), 1, 24)
    hours = np.clip(np.round(rng.normal(38 + 3 * (sex == 1), 11, n)), 1, 99)
    log_inc = (
        8.2
        + 0.09 * (schl - 16)
        + 0.018 * hours
        + 0.035 * np.minimum(age - 17, 35)
        - 0.0006 * np.maximum(age - 55, 0) ** 2
        + 0.15 * (sex == 1)
        + rng.normal(0, 0.75, n)
    )
    income = np.clip(np.exp(log_inc), 101, 1_500_000).round()
    p_cov = 1 / (1 + np.exp(-(-0.6 - 0.00005 * (income - 20_000) + 0.02 * (age - 40))))
    pubcov = np.where(rng.random(n) < p_cov, 1.0, 2.0)
    return pd.DataFrame(
        {"AGEP": age, "SEX": sex, "SCHL": schl, "WKHP": hours, "PINCP": income, "PUBCOV": pubcov}
    )

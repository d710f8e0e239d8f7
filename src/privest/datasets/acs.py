"""Loader for the folktables ACS person data from a local cache (paper 004, Sec. 6, E2/E5).

folktables (``ACSDataSource(survey_year="2018", horizon="1-Year", survey="person")``) caches
``<root>/<year>/<horizon>/psam_p<FIPS>.csv``. This loader reads that cache only (privest
never downloads) and applies the standard folktables filters:

* ACSIncome: AGEP > 16, PINCP > 100, WKHP > 0, PWGTP >= 1; target PINCP > 50 000.
* ACSPublicCoverage: AGEP < 65 and PINCP <= 30 000; target PUBCOV == 1.

Features: the paper's main text (AGEP, SEX, SCHL + WKHP or PINCP, p = 4) or its appendix
(AGEP, SCHL + WKHP or PINCP, p = 3) (A8 in docs/iwp-sgd.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from privest.errors import ValidationError

__all__ = ["STATE_FIPS", "acs_features", "load_acs"]

STATE_FIPS = {"CA": "06", "TX": "48", "FL": "12", "NY": "36", "PA": "42"}


def acs_features(task: str, feature_set: str = "main") -> list[str]:
    """Feature columns of the paper's ACS tasks."""
    last = {"income": "WKHP", "pubcov": "PINCP"}.get(task)
    if last is None:
        raise ValidationError(f"task: {task!r} is unknown; accepted: 'income', 'pubcov'")
    if feature_set == "main":
        return ["AGEP", "SEX", "SCHL", last]
    if feature_set == "appendix":
        return ["AGEP", "SCHL", last]
    raise ValidationError(f"feature_set: {feature_set!r}; accepted: 'main', 'appendix'")


def load_acs(
    root: str | Path,
    task: str = "income",
    states: tuple[str, ...] = ("CA", "TX", "FL", "NY", "PA"),
    year: str = "2018",
    horizon: str = "1-Year",
    feature_set: str = "main",
    continuous_target: bool = False,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Read the cached ACS person files of ``states``; return (features, target).

    The target is +-1 (PINCP > 50 000, or PUBCOV == 1), or the income itself when
    ``continuous_target`` (regression, E5). Raises :class:`ValidationError` naming the
    missing files when the cache is absent.
    """
    root = Path(root)
    features = acs_features(task, feature_set)
    files = []
    for st in states:
        if st not in STATE_FIPS:
            raise ValidationError(f"states: {st!r} is not one of {sorted(STATE_FIPS)}")
        files.append(root / year / horizon / f"psam_p{STATE_FIPS[st]}.csv")
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        raise ValidationError(
            f"ACS cache: {len(missing)} file(s) missing, e.g. {missing[0]}. Download them once "
            "with folktables (ACSDataSource(survey_year='2018', horizon='1-Year', "
            f"survey='person', root_dir={str(root)!r}).get_data(states=[...], download=True)); "
            "privest never downloads"
        )
    cols = sorted({"AGEP", "SEX", "SCHL", "WKHP", "PINCP", "PWGTP", "PUBCOV"})
    df = pd.concat([pd.read_csv(f, usecols=cols) for f in files], ignore_index=True)
    if task == "income":
        df = df[(df.AGEP > 16) & (df.PINCP > 100) & (df.WKHP > 0) & (df.PWGTP >= 1)]
        target = (
            df.PINCP.to_numpy(float)
            if continuous_target
            else np.where(df.PINCP > 50_000, 1.0, -1.0)
        )
    else:
        df = df[(df.AGEP < 65) & (df.PINCP <= 30_000)]
        target = np.where(df.PUBCOV == 1, 1.0, -1.0)
    X = df[features].astype(float).fillna(0.0).reset_index(drop=True)
    return X, np.asarray(target)

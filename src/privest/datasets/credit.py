"""UCI Default of Credit Card Clients (Yeh and Lien 2009; UCI id 350), paper 001's E4.

30,000 Taiwanese clients, binary label ``default.payment.next.month`` (about 22% positive).
Not shipped with privest (about 5 MB): download ``default of credit card clients.xls`` from
https://archive.ics.uci.edu/dataset/350/default+of+credit+card+clients (or a CSV export with
the same column names) and pass its path. Reading ``.xls`` needs the ``xlrd`` package.

:func:`credit_features` computes the reference code's 11 engineered features with public
constants only (no data-driven scaling).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["CREDIT_LABEL", "credit_features", "load_credit_default"]

CREDIT_LABEL = "default.payment.next.month"
_PAY = ["PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6"]
_BILL = [f"BILL_AMT{i}" for i in range(1, 7)]
_PAY_AMT = [f"PAY_AMT{i}" for i in range(1, 7)]
_URL = "https://archive.ics.uci.edu/dataset/350/default+of+credit+card+clients"


def load_credit_default(path: str | Path) -> pd.DataFrame:
    """The raw table; the label column is renamed to ``default.payment.next.month``.

    ``path`` is the UCI ``.xls`` (read with ``xlrd``), or a CSV: a plain export of the sheet
    (its first line ``,X1,...,X23,Y`` above the column names is skipped) or a CSV with the
    column names on the first line (e.g. ``UCI_Credit_Card.csv``).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"credit default data: {p} not found; download 'default of credit card clients.xls' "
            f"from {_URL} and pass its path"
        )
    if p.suffix.lower() in (".xls", ".xlsx"):
        try:
            df = pd.read_excel(p, header=1)
        except ImportError as exc:
            raise ImportError(
                f"credit default data: reading {p.name} needs an Excel reader ({exc}); "
                "pip install xlrd, or pass a CSV export of the sheet"
            ) from None
    else:
        df = pd.read_csv(p)
        if "LIMIT_BAL" not in df.columns and "X1" in df.columns:
            df = pd.read_csv(p, header=1)  # the sheet's two header lines, exported as CSV
    df = df.rename(columns={"default payment next month": CREDIT_LABEL})
    missing = [
        c
        for c in [*_PAY, *_BILL, *_PAY_AMT, "LIMIT_BAL", "AGE", CREDIT_LABEL]
        if c not in df.columns
    ]
    if missing:
        raise ValueError(f"credit default data: {p} lacks columns {missing}")
    return df


def credit_features(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The 11 engineered features (authors' code) and the 0/1 label; every constant is public."""
    lim = df["LIMIT_BAL"].to_numpy(float)
    pay = np.clip(df[_PAY].to_numpy(float), -2, 8)
    bill = df[_BILL].to_numpy(float)
    amt = np.maximum(df[_PAY_AMT].to_numpy(float), 0.0)
    l6, l5 = np.log1p(1e6), np.log1p(5e6)
    feats = np.column_stack(
        [
            np.log1p(np.maximum(lim, 0)) / l6,
            (np.clip(df["AGE"].to_numpy(float), 18, 100) - 40) / 20,
            pay[:, 0] / 8,
            pay.mean(axis=1) / 8,
            pay.max(axis=1) / 8,
            (pay > 0).mean(axis=1),
            np.clip(bill.mean(axis=1) / np.maximum(lim, 1), -2, 2) / 2,
            np.log1p(amt[:, 0]) / l6,
            np.log1p(amt.mean(axis=1)) / l6,
            np.log1p(amt.sum(axis=1)) / l5,
            np.clip(amt.sum(axis=1) / (np.abs(bill).sum(axis=1) + 1), 0, 5) / 5,
        ]
    )
    return feats, df[CREDIT_LABEL].to_numpy(int)

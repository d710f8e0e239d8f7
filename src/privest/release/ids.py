"""Record ids: one canonical type per store, so that a record is never released twice.

A store refuses an id it has released before; that promise holds only if the same record
always gets the same id. Ids are canonicalised on the way in: whole numbers (ints, floats
that are whole, as pandas reads an integer column with an empty cell, and text that
spells a whole number, such as ``"7"``, ``" 7 "``, ``"007"`` or ``"7.0"``) become ``int64``
(type ``"int"``); other text becomes stripped ``str`` (type ``"str"``). Missing or empty
ids, non-whole numbers and duplicates are refused. Messages about a new batch never quote
its ids; only an id the store has already published may be named (a duplicate).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import numpy as np
import pandas as pd

from privest.errors import ValidationError

__all__ = ["IdType", "canonical_ids"]

IdType = Literal["int", "str"]
_WHOLE = re.compile(r"^[+-]?\d+(\.0*)?$")


def canonical_ids(ids: Any, n: int) -> tuple[np.ndarray, IdType]:
    """``(ids as int64 or str array, "int" or "str")`` for ``n`` records; refuses bad ids."""
    arr = ids.to_numpy() if isinstance(ids, (pd.Series, pd.Index)) else np.asarray(ids)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValidationError(f"ids: shape {arr.shape}; expected one id per record ({n},)")
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and arr.size and arr.max() >= 2**63:  # would wrap
            raise ValidationError("ids: numeric ids must be below 2^63")
        out, kind = arr.astype(np.int64), "int"
    elif arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValidationError(
                "ids: some ids are missing (empty or NaN); every record needs one"
            )
        if not np.all(arr == np.round(arr)) or np.any(np.abs(arr) >= 2**53):
            raise ValidationError("ids: numeric ids must be whole numbers below 2^53")
        out, kind = arr.astype(np.int64), "int"
    elif arr.dtype.kind == "b":
        raise ValidationError("ids: booleans are not ids; use integers or text")
    else:
        missing = pd.isna(arr)
        text = [str(v).strip() for v in arr]
        if missing.any() or any(t == "" for t in text):
            raise ValidationError(
                "ids: some ids are missing (empty or NaN); every record needs one"
            )
        if all(_WHOLE.match(t) for t in text):
            values = [int(t.split(".")[0]) for t in text]
            if any(abs(v) >= 2**63 for v in values):
                raise ValidationError("ids: numeric ids must be below 2^63")
            out, kind = np.array(values, dtype=np.int64), "int"
        else:
            out, kind = np.array(text, dtype=str), "str"
    if np.unique(out).size != n:
        raise ValidationError("ids: contains duplicates; each record needs its own id")
    return out, kind


def id_type_of(ids: np.ndarray | None) -> IdType | None:
    """The id type of a canonical id array (``None`` without ids)."""
    if ids is None:
        return None
    return "int" if ids.dtype.kind in "iu" else "str"

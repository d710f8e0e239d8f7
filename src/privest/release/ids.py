"""Record ids: one canonical form per id, so that a record is never released twice.

A store refuses an id it has released before; that promise holds only if every spelling
of an id reaches the same canonical form (docs/zil-release.md, "The release store"):

* **Numbers.** An integer, a float, or a text that spells a number (surrounding white
  space removed; Unicode digits and compatibility forms read as ASCII: ``"７"`` is ``"7"``)
  must be a whole number below 2^63 in magnitude, and its canonical form is that integer:
  ``7``, ``7.0``, ``"7"``, ``"07"``, ``"+7"``, ``"7.0"``, ``"7."``, ``" 7 "`` and
  ``"7e0"`` are one id. ``7.5`` and ``"7.5"`` are refused. Floats must be below 2^53 (above
  it they are not exact).
* **Other text** is an opaque id: the text without surrounding white space, NFKC-normalised
  (``"A7"`` and ``"a7"`` are two ids; so are ``"A07"`` and ``"A7"``).
* **One type per batch, and per store.** A batch whose ids are all numbers has ``"int"``
  ids (int64); a batch with any other text has ``"str"`` ids, in which a number is written
  in its canonical decimal form (``"007"`` becomes ``"7"``), so a text-id store also sees
  ``7``, ``07`` and ``+7`` as one id.

Missing or empty ids, booleans and duplicates (after canonicalisation) are refused.
Vectorised: text is parsed by pyarrow's compute kernels; only ids outside plain ASCII or
with an exponent or fraction go through Python. Messages never quote a batch's ids.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

import numpy as np
import pandas as pd

from privest.errors import ValidationError

__all__ = ["IdType", "canonical_ids", "id_type_of"]

IdType = Literal["int", "str"]
#: a number as text: sign, digits with an optional point (or a leading point), exponent
_NUMBER = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
#: the common spelling of a whole number: sign, digits, optionally a point and zeros
_PLAIN = r"^[+-]?[0-9]+(?:\.0*)?$"
_MISSING = "ids: some ids are missing (empty or NaN); every record needs one"
_TOO_BIG = "ids: numeric ids must be whole numbers below 2^63 in magnitude"
_NOT_WHOLE = "ids: numeric ids must be whole numbers (no fraction)"
_REPEATED = "ids: contains duplicates; each record needs its own id"


def canonical_ids(ids: Any, n: int) -> tuple[np.ndarray, IdType]:
    """``(ids in canonical form, "int" or "str")`` for ``n`` records (module docstring):
    int64 for numbers, a numpy str array for text; refuses bad or repeated ids."""
    if isinstance(ids, (pd.Series, pd.Index)):
        arr = ids if isinstance(ids.dtype, pd.StringDtype) else ids.to_numpy()
    else:
        arr = np.asarray(ids)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValidationError(f"ids: shape {arr.shape}; expected one id per record ({n},)")
    kind = arr.dtype.kind if isinstance(arr, np.ndarray) else "T"
    if kind == "b":
        raise ValidationError("ids: booleans are not ids; use integers or text")
    if kind == "u":
        if arr.size and arr.max() >= 2**63:
            raise ValidationError(_TOO_BIG)
        out: np.ndarray = arr.astype(np.int64)
    elif kind == "i":
        out = arr.astype(np.int64, copy=False)
    elif kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValidationError(_MISSING)
        if not np.all(arr == np.round(arr)):
            raise ValidationError(_NOT_WHOLE)
        if np.any(np.abs(arr) >= 2**53):
            raise ValidationError("ids: float ids must be below 2^53 (larger floats are inexact)")
        out = arr.astype(np.int64)
    else:
        out = _canonical_text(arr)
    if out.dtype.kind == "i" and pd.Index(out).has_duplicates:
        raise ValidationError(_REPEATED)
    return out, id_type_of(out)


def _canonical_text(arr: Any) -> np.ndarray:
    """Text (or mixed object) ids in canonical form: int64 if every one is a number, else
    a str array (checked for repeats here, where it is still cheap to do)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(pd.Series(arr, dtype="string[pyarrow]", copy=False))
    if text.null_count:
        raise ValidationError(_MISSING)
    text = pc.utf8_trim_whitespace(text)
    if not pc.all(pc.string_is_ascii(text)).as_py():
        text = pa.array([_ascii(t) for t in text.to_pylist()], type=text.type)
    if pc.all(pc.ascii_is_decimal(text)).as_py():  # digits only, the usual CSV id column
        try:
            return pc.cast(text, pa.int64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:
            raise ValidationError(_TOO_BIG) from None
    if pc.any(pc.equal(pc.utf8_length(text), 0)).as_py():
        raise ValidationError(_MISSING)
    number = pc.match_substring_regex(text, _NUMBER)
    plain = pc.match_substring_regex(text, _PLAIN)
    values = np.zeros(len(text), dtype=np.int64)
    if pc.any(plain).as_py():
        digits = pc.replace_substring_regex(text, r"\.0*$|^\+", "")
        digits = pc.if_else(plain, digits, "0")
        try:
            values = pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:
            raise ValidationError(_TOO_BIG) from None
    other = pc.and_(number, pc.invert(plain)).to_numpy(zero_copy_only=False)
    if other.any():  # an exponent or a fraction: rare, exact in Python's decimals
        where = np.flatnonzero(other)
        values[where] = [_whole(t) for t in pc.take(text, pa.array(where)).to_pylist()]
    if pc.all(number).as_py():
        return values
    spelled = pc.if_else(number, pc.cast(pa.array(values), text.type), text)
    out = spelled.to_numpy(zero_copy_only=False)
    if pd.unique(out).size != out.size:
        raise ValidationError(_REPEATED)
    return out.astype(str)


def _ascii(text: str) -> str:
    """NFKC form of a non-ASCII id, white space stripped, every Unicode digit in ASCII."""
    text = unicodedata.normalize("NFKC", text).strip()
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def _whole(text: str) -> int:
    """The integer a numeric text with an exponent or a fraction spells (else refused)."""
    try:
        value = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
        raise ValidationError(_NOT_WHOLE) from None
    if value.adjusted() >= 19:
        raise ValidationError(_TOO_BIG)
    if value != value.to_integral_value():
        raise ValidationError(_NOT_WHOLE)
    out = int(value)
    if abs(out) >= 2**63:
        raise ValidationError(_TOO_BIG)
    return out


def id_type_of(ids: np.ndarray | None) -> IdType | None:
    """The id type of a canonical id array (``None`` without ids)."""
    if ids is None:
        return None
    return "int" if ids.dtype.kind in "iu" else "str"

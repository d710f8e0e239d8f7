"""Result tables as files: the same rows as CSV or JSON, one format for the whole product.

A table is a list of rows (dicts with the same snake_case keys). CSV has those keys as its
header; JSON is a list of objects, one per row, with NaN and infinities written as
``null``. Files take their format from the suffix, ``.csv`` or ``.json``; any other suffix
is refused. No numpy or pandas import: the ``privest`` command's help uses this module.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from privest.errors import ValidationError

__all__ = ["FORMATS", "format_table", "table_format", "write_table"]

#: the file formats (and suffixes) of result tables
FORMATS = ("csv", "json")


def _plain(value: Any) -> Any:
    """A JSON-ready Python scalar: numpy scalars unwrapped, NaN and infinities as None."""
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def format_table(rows: Sequence[dict[str, Any]], fmt: str) -> str:
    """``rows`` as CSV text or a JSON list of objects."""
    plain = [{key: _plain(value) for key, value in row.items()} for row in rows]
    if fmt == "json":
        return json.dumps(plain, indent=2, allow_nan=False) + "\n"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(plain[0]) if plain else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(plain)
    return buffer.getvalue()


def table_format(path: str | Path, name: str = "output") -> str:
    """The format a file name asks for; :class:`ValidationError` for any other suffix."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValidationError(
            f"{name}: {str(path)!r} has suffix {Path(path).suffix!r}; use .csv or .json"
        )
    return suffix


def write_table(rows: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` to ``path`` in the format of its suffix."""
    path = Path(path)
    text = format_table(rows, table_format(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path

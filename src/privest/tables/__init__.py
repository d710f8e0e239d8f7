"""Tables: result tables as files (:mod:`privest.tables.files`) and private tables of
group-by statistics with a person as the privacy unit (:func:`tabulate`, docs/tables.md).

Importing this package loads only the file helpers (no numpy or pandas: the ``privest``
command's help uses them); ``tabulate`` and ``contingency`` load on first use.
"""

from __future__ import annotations

from typing import Any

from privest.tables.files import FORMATS, format_table, table_format, write_table

__all__ = [
    "FORMATS",
    "PrivateTable",
    "contingency",
    "format_table",
    "table_format",
    "tabulate",
    "write_table",
]

_LAZY = {
    "PrivateTable": "privest.tables.api",
    "tabulate": "privest.tables.api",
    "contingency": "privest.tables.contingency",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'privest.tables' has no attribute {name!r}")

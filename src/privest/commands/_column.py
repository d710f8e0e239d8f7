"""One numeric column of a plain CSV file, read with numpy alone (no pandas import).

``privest stat`` reads one column; importing pandas costs more CPU time than the rest of a
small release (benchmarks/README.md, issue 31). :func:`read_plain_column` reads the column
only where the file keeps to a plain syntax on which its values are certainly the ones
``pandas.read_csv`` (C engine, default options) reads, bit for bit; for any other file it
returns ``None`` and the caller reads the file with pandas, which accepts or refuses it as
before. The rule is public and decided by the file's syntax, never by a statistic:

* at most :data:`MAX_BYTES` bytes; the separator one of ``,`` ``;`` tab ``|`` (with ``,``
  and a one-field header, the separator :func:`~privest.commands._common.read_csv` detects,
  and then no ``,`` anywhere in the file);
* ASCII text without quote characters or control bytes (tab and ``\\r\\n`` line ends
  allowed), no blank or whitespace-only line, the header on the first line;
* every line holds as many fields as the header, and at least one record follows it;
* every cell of the column is ``[+-]?digits[.digits]`` with at most 15 digits and is not a
  negative zero: every such decimal is a float exactly ``m / 10**f`` with ``m < 2**53``
  and ``f <= 15``, which one IEEE division rounds correctly, as Python's ``float``,
  pandas' integer and its default float converter read it.

Anything else (NA spellings, exponents, ``inf``, whitespace, thousands separators, quoted
fields, a BOM, ragged rows, longer numbers) goes to pandas; tests/test_cli_column.py checks
the two readers against each other on the CLI's corpus and on generated files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["MAX_BYTES", "read_plain_column"]

#: files larger than this are read by pandas: its parser, about 2x faster per byte
#: (benchmarks/README.md), repays its import beyond about 32 MiB, and this reader holds
#: the whole file in memory with a few arrays of its length
MAX_BYTES = 1 << 25
#: the most digits of a cell: its integer mantissa is exact in a float (< 2**53)
MAX_DIGITS = 15
_SEPS = (",", ";", "\t", "|")
#: the bytes of plain text: tab, CR, LF and printable ASCII but the quote character (not a
#: control byte, DEL, a non-ASCII byte such as a BOM or other UTF-8, or a quote)
_PLAIN_BYTES = b"\t\n\r" + bytes(c for c in range(0x20, 0x7F) if c != ord('"'))
_DIGIT0, _DOT, _PLUS, _MINUS = ord("0"), ord("."), ord("+"), ord("-")
#: 10**f as floats, exact for f <= 22 (from Python's integers, not a pow())
_POW10 = np.array([float(10**f) for f in range(MAX_DIGITS + 1)])


def read_plain_column(path: str, sep: str, column: str) -> np.ndarray | None:
    """The float values of ``column`` if the file is plain (module docstring), else ``None``.

    ``sep`` is the command's ``--sep``; the header is assumed already checked by
    :func:`~privest.commands._common.read_header` (the column exists, no name twice)."""
    p = Path(path)
    if sep not in _SEPS or p.stat().st_size > MAX_BYTES:
        return None
    data = p.read_bytes()
    if data.translate(None, _PLAIN_BYTES):  # some byte is not plain text
        return None
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    if b"\r" in data or data.startswith(b"\n") or b"\n\n" in data:
        return None
    if not data.endswith(b"\n"):
        data += b"\n"
    head = data[: data.index(b"\n")].decode("ascii")
    if not head.strip():
        return None
    names = head.split(sep)
    if len(names) == 1 and sep == ",":  # the separator read_csv detects
        sep = next((c for c in ";\t|" if c in head), sep)
        if sep != "," and b"," in data:
            return None
        names = head.split(sep)
    names = [c or f"Unnamed: {i}" for i, c in enumerate(names)]
    if column not in names or len(set(names)) < len(names):  # pandas would rename one
        return None
    cells = _cells(np.frombuffer(data, dtype=np.uint8), ord(sep), len(names))
    if cells is None:
        return None
    starts, ends = cells
    j = names.index(column)
    return _numbers(data, starts[1:, j], ends[1:, j])


def _cells(buf: np.ndarray, sep: int, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The start and end offsets of every cell, as (lines, k) arrays, or ``None`` unless
    every line has exactly ``k`` fields and a record follows the header."""
    ends = np.flatnonzero((buf == sep) | (buf == 10))
    if ends.size % k or ends.size // k < 2:
        return None
    ends = ends.reshape(-1, k)
    newline = buf[ends] == 10
    if not (newline[:, -1].all() and not newline[:, :-1].any()):
        return None
    starts = np.empty_like(ends)
    starts.flat[0] = 0
    starts.flat[1:] = ends.flat[:-1] + 1
    return starts, ends


def _numbers(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The cells ``data[starts:ends]`` as floats if each is ``[+-]?digits[.digits]`` with at
    most :data:`MAX_DIGITS` digits and not a negative zero, else ``None``. Vectorised over
    the cells; the loop runs over the (at most 17) character positions."""
    buf = np.frombuffer(data, dtype=np.uint8)
    lengths = ends - starts
    if lengths.min() < 1 or lengths.max() > MAX_DIGITS + 2:
        return None
    negative = buf[starts] == _MINUS
    signed = (negative | (buf[starts] == _PLUS)).astype(np.int64)
    first, last = buf[starts + np.minimum(signed, lengths - 1)], buf[ends - 1]
    # a digit first (after the sign) and last: "+", ".5", "5." and "-.5" go to pandas
    if not (_is_digit(first).all() and _is_digit(last).all()):
        return None
    mantissa = np.zeros(starts.size, dtype=np.int64)
    dots = np.zeros(starts.size, dtype=np.int64)
    dot_at = np.zeros(starts.size, dtype=np.int64)  # the point's position, if one
    for i in range(int(lengths.max())):
        inside = (i < lengths) & (i >= signed)
        c = buf[np.minimum(starts + i, buf.size - 1)]
        is_digit = inside & _is_digit(c)
        is_dot = inside & (c == _DOT)
        if np.any(inside & ~is_digit & ~is_dot):
            return None
        mantissa = np.where(is_digit, mantissa * 10 + (c.astype(np.int64) - _DIGIT0), mantissa)
        dots += is_dot
        dot_at += is_dot * i
    frac = np.where(dots > 0, lengths - 1 - dot_at, 0)  # digits after the point
    if (dots > 1).any() or (lengths - signed - dots > MAX_DIGITS).any():
        return None
    if (negative & (mantissa == 0)).any():
        return None
    values = mantissa.astype(np.float64) / _POW10[frac]
    return np.where(negative, -values, values)


def _is_digit(c: np.ndarray) -> np.ndarray:
    return (c >= _DIGIT0) & (c <= _DIGIT0 + 9)

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
* UTF-8 text without control bytes (tab and ``\\r\\n`` line ends allowed) or a BOM, no
  blank or whitespace-only line, the header on the first line, without quotes;
* quoted fields (RFC 4180, as pandas' default ``quotechar='"'`` reads them): a quote opens
  a field only at its start and closes it only before a separator or a line end, ``""``
  inside a quoted field is one quote; separators and line ends inside quotes belong to
  the field;
* every line holds as many fields as the header, and at least one record follows it;
* every cell of the column is ``[+-]?digits[.digits]``, or that in quotes, with at most 15
  digits and is not a negative zero: every such decimal is a float exactly ``m / 10**f``
  with ``m < 2**53`` and ``f <= 15``, which one IEEE division rounds correctly, as
  Python's ``float``, pandas' integer and its default float converter read it.

Anything else (NA spellings, exponents, ``inf``, whitespace, thousands separators, a quote
inside an unquoted field, a BOM, text that is not UTF-8, ragged rows, longer numbers) goes
to pandas; tests/test_cli_column.py checks the two readers against each other on the CLI's
corpus and on generated files.
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
#: the bytes of plain text: tab, CR, LF, printable ASCII and the bytes of UTF-8's longer
#: sequences (not a control byte or DEL; the text must then decode as UTF-8)
_PLAIN_BYTES = b"\t\n\r" + bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100))
_DIGIT0, _DOT, _PLUS, _MINUS, _QUOTE, _NL = (ord(c) for c in '0.+-"\n')
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
    if data.translate(None, _PLAIN_BYTES) or data.startswith(b"\xef\xbb\xbf"):
        return None  # a control byte, or a BOM
    if not data.isascii():
        try:  # pandas refuses what is not UTF-8; the reader leaves it the refusal
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    if b"\r" in data or data.startswith(b"\n") or b"\n\n" in data:
        return None
    if not data.endswith(b"\n"):
        data += b"\n"
    head = data[: data.index(b"\n")].decode("utf-8")
    if not head.strip() or '"' in head:
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
    buf = np.frombuffer(data, dtype=np.uint8)
    cells = _cells(buf, ord(sep), len(names))
    if cells is None:
        return None
    starts, ends = cells
    j = names.index(column)
    starts, ends = _unquoted(buf, starts[1:, j], ends[1:, j])
    return _numbers(data, starts, ends)


def _cells(buf: np.ndarray, sep: int, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The start and end offsets of every cell, as (lines, k) arrays, or ``None`` unless
    every line has exactly ``k`` fields, a record follows the header and every quote keeps
    to the quoting rule (module docstring)."""
    ends = (buf == sep) | (buf == _NL)
    quotes = np.flatnonzero(buf == _QUOTE)
    if quotes.size:
        if quotes.size % 2 or not _quoting_kept(buf, quotes, ends):
            return None
        inside = np.zeros(buf.size + 1, dtype=np.int8)  # +1 at an opening, -1 after a close
        inside[quotes[0::2]] += 1
        inside[quotes[1::2] + 1] -= 1  # (both, 0, right after a close that "" continues)
        ends &= np.cumsum(inside[:-1], dtype=np.int8) == 0
    ends = np.flatnonzero(ends)
    if ends.size % k or ends.size // k < 2:
        return None
    ends = ends.reshape(-1, k)
    newline = buf[ends] == _NL
    if not (newline[:, -1].all() and not newline[:, :-1].any()):
        return None
    starts = np.empty_like(ends)
    starts.flat[0] = 0
    starts.flat[1:] = ends.flat[:-1] + 1
    return starts, ends


def _quoting_kept(buf: np.ndarray, quotes: np.ndarray, ends: np.ndarray) -> bool:
    """Whether the quotes pair up as the rule says: the opening ones (even places) at the
    start of a field or right after a closing one (``""``: a quote inside the field), the
    closing ones (odd places) before a separator, a line end or an opening one."""
    opening, closing = quotes[0::2], quotes[1::2]
    before = opening - 1
    at_start = (before < 0) | ends[np.maximum(before, 0)]
    escaped = np.isin(before, closing)
    after = closing + 1
    at_end = ends[np.minimum(after, buf.size - 1)] | np.isin(after, opening)
    return bool(np.all(at_start | escaped) and np.all(at_end))


def _unquoted(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple:
    """The cells without their enclosing quotes (a quoted number: its digits; a cell that
    holds a quote otherwise is no number, and :func:`_numbers` says so)."""
    quoted = (
        (ends - starts >= 2) & (buf[starts] == _QUOTE) & (buf[np.maximum(ends - 1, 0)] == _QUOTE)
    )
    return starts + quoted, ends - quoted


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

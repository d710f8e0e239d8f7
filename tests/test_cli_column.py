"""The pandas-free column reader of ``privest stat`` against the pandas read it replaces
(issue 31): wherever :func:`read_plain_column` reads a column, ``read_csv`` accepts the file
and reads the same floats, bit for bit; everything else goes to pandas, which accepts or
refuses it as before. Checked on the CLI's hostile corpus, on hand-written hostile files and
on generated good and bad files."""

from __future__ import annotations

import numpy as np
import pytest
from corpus.cases_cli import write_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privest.commands._column import read_plain_column
from privest.commands._common import read_csv, read_header
from privest.errors import ValidationError
from privest.validation import as_float_vector


def _pandas(path, sep: str, column: str) -> np.ndarray | type:
    """Today's read: the column's float values, or the class of the refusal."""
    try:
        return as_float_vector(read_csv(str(path), sep)[column], "c")
    except ValidationError as exc:
        return type(exc)


def _agree(path, sep: str, column: str) -> bool:
    """Assert the two readers agree on ``column``; True if the plain reader read it."""
    try:
        if column not in read_header(str(path), sep):
            return False  # refused before any record is read, whichever the reader
    except ValidationError:
        return False
    fast = read_plain_column(str(path), sep, column)
    if fast is None:
        return False
    slow = _pandas(path, sep, column)
    assert isinstance(slow, np.ndarray), (path, column, slow)
    assert fast.dtype == np.float64 and fast.shape == slow.shape
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64)), (path, column)
    return True


def test_the_readers_agree_on_every_column_of_the_cli_corpus(tmp_path):
    files = write_inputs(tmp_path)
    read = checked = 0
    for path in files.values():
        if not (path.is_file() and path.suffix == ".csv"):
            continue
        for sep in (",", ";", "\t", "|", "x"):
            try:
                names = read_header(str(path), sep)
            except ValidationError:
                names = ["age"]
            for column in names[:20]:
                checked += 1
                read += _agree(path, sep, column)
    # the corpus exercises both paths: its rounded numeric files are read without pandas
    assert read >= 20 and checked - read >= 20, (read, checked)


PLAIN = "a,x,b\n1,0.5,q\n2,-12.25,r\n3,+7,s\n4,007.000,t\n5,123456789012345,u\n"

#: (file text, whether the plain reader reads column x): every hostile spelling goes to pandas
HOSTILE = [
    (PLAIN, True),
    (PLAIN.replace("\n", "\r\n"), True),
    (PLAIN.rstrip("\n"), True),
    (PLAIN.replace(",", ";"), True),  # the detected separator
    (PLAIN.replace(",", "\t"), True),
    ("x\n1\n2.5\n", True),
    ("a,x,\n1,2,\n3,4,\n", True),  # a trailing separator on every line: an unnamed column
    ("\ufeff" + PLAIN, False),  # a BOM
    (PLAIN.replace("0.5", "1e5"), False),
    (PLAIN.replace("0.5", "inf"), False),
    (PLAIN.replace("0.5", "-inf"), False),
    (PLAIN.replace("0.5", "nan"), False),
    (PLAIN.replace("0.5", "NA"), False),
    (PLAIN.replace("0.5", "N/A"), False),
    (PLAIN.replace("0.5", "NULL"), False),
    (PLAIN.replace("0.5", "None"), False),
    (PLAIN.replace("0.5", ""), False),
    (PLAIN.replace("0.5", " 0.5"), False),
    (PLAIN.replace("0.5", "0.5 "), False),
    (PLAIN.replace("0.5", '"0.5"'), True),  # a quoted number
    (PLAIN.replace("0.5", '"0.5 "'), False),
    (PLAIN.replace("0.5", '"0.5"""'), False),  # a quote inside
    (PLAIN.replace("0.5", '""'), False),
    (PLAIN.replace("0.5", '"1,5"'), False),
    (PLAIN.replace("0.5", "0x1F"), False),
    (PLAIN.replace("0.5", "True"), False),
    (PLAIN.replace("0.5", "1_000"), False),
    (PLAIN.replace("0.5", ".5"), False),
    (PLAIN.replace("0.5", "5."), False),
    (PLAIN.replace("0.5", "-0"), False),  # a negative zero: pandas' int and float differ
    (PLAIN.replace("0.5", "-0.00"), False),
    (PLAIN.replace("0.5", "1234567890123456"), False),  # 16 digits
    (PLAIN.replace("0.5", "0.1234567890123456"), False),
    (PLAIN.replace("0.5", "1.2.3"), False),
    (PLAIN.replace("0.5", "--1"), False),
    (PLAIN.replace("0.5", "1-"), False),
    (PLAIN.replace("0.5", "١"), False),  # a non-ASCII digit
    (PLAIN.replace("0.5,q", "0.5,q,extra"), False),  # a ragged row
    (PLAIN.replace("2,-12.25,r", "2,-12.25"), False),
    (PLAIN.replace("\n2,", "\n\n2,"), False),  # a blank line
    ("\n" + PLAIN, False),
    ("  \n" + PLAIN, False),
    (PLAIN.replace("\n", "\r"), False),
    (PLAIN.replace("q", "q\x00"), False),
    (PLAIN.replace("q", '"q"'), True),  # quoted text in another column
    (PLAIN.replace("q", '"q, ""r""\nand s"'), True),  # a separator, quotes, a line end
    (PLAIN.replace("q", 'q"'), False),  # a quote inside an unquoted field
    (PLAIN.replace("q", '"q"r'), False),  # text after a closing quote
    (PLAIN.replace("q", '"q'), False),  # a quote never closed
    (PLAIN.replace("q", '"q\n\nr"'), False),  # a blank line inside quotes
    (PLAIN.replace("a,x", '"a",x'), False),  # a quote in the header
    (PLAIN.replace("q", "é"), True),  # UTF-8 text
    (PLAIN.replace("q", "\ufeff"), True),  # a BOM inside a field is text
    ("x\n", False),  # no record
    ("x;y\n1,5;2\n", False),  # a comma beside the detected separator
    ("x,y\n1,2\n3,4\n" * 2, False),  # a second header: text in the column
    ("Unnamed: 0,,x\n1,2,3\n", True),
    (",Unnamed: 0,x\n1,2,3\n", False),  # pandas renames one of two "Unnamed: 0"
]


@pytest.mark.parametrize(("text", "plain"), HOSTILE, ids=[repr(t[:40]) for t, _ in HOSTILE])
def test_hostile_spellings_go_to_pandas(tmp_path, text, plain):
    path = tmp_path / "d.csv"
    path.write_text(text, encoding="utf-8", newline="")
    assert _agree(path, ",", "x") is plain


def test_a_name_pandas_renames_goes_to_pandas(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(",Unnamed: 0,x\n1,2,3\n")
    assert read_plain_column(str(path), ",", "Unnamed: 0") is None
    assert isinstance(_pandas(path, ",", "Unnamed: 0"), np.ndarray)


def test_a_file_that_is_not_utf8_goes_to_pandas(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"x\n1\n2\xe9\n")
    assert read_plain_column(str(path), ",", "x") is None
    assert _pandas(path, ",", "x") is ValidationError


def test_a_larger_file_goes_to_pandas(tmp_path, monkeypatch):
    from privest.commands import _column

    path = tmp_path / "d.csv"
    path.write_text(PLAIN)
    assert _agree(path, ",", "x")
    monkeypatch.setattr(_column, "MAX_BYTES", len(PLAIN) - 1)
    assert read_plain_column(str(path), ",", "x") is None


_FIXTURE = [HealthCheck.function_scoped_fixture]  # tmp_path: each example rewrites its file
_NUMBER = st.from_regex(r"\A[+-]?[0-9]{1,8}(\.[0-9]{1,7})?\Z", fullmatch=True)
_HOSTILE = st.sampled_from(
    ["", "NA", "nan", "inf", "-inf", "1e5", "1E-3", " 1", "1 ", '"1"', "True", "0x10", "-0",
     "-0.0", "1,5", "1;5", "1.", ".5", "1234567890123456", "9" * 20, "a", "#1", "\\1",
     '"1,5"', '"-0"', '""', '"1""2"', '"1', '1"', '" 1"', '"1"2', '"a;|\t"']
)  # fmt: skip
_QUOTED = _NUMBER.map(lambda c: f'"{c}"')


@settings(max_examples=300, deadline=None, suppress_health_check=_FIXTURE)
@given(
    cells=st.lists(st.one_of(_NUMBER, _NUMBER, _QUOTED, _HOSTILE), min_size=1, max_size=12),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    crlf=st.booleans(),
    last_newline=st.booleans(),
    other=st.one_of(_NUMBER, _HOSTILE.filter(lambda c: not set(c) & set(',;"'))),
)
def test_the_readers_agree_on_generated_files(tmp_path, cells, sep, crlf, last_newline, other):
    """Column x holds numbers and hostile cells; column z one cell of either (any z that
    keeps the file's structure leaves x to the plain reader)."""
    end = "\r\n" if crlf else "\n"
    rows = [f"{i}{sep}{c}{sep}{other if i == 0 else i}" for i, c in enumerate(cells)]
    text = end.join([f"id{sep}x{sep}z", *rows]) + (end if last_newline else "")
    path = tmp_path / "g.csv"
    path.write_text(text, encoding="utf-8", newline="")
    read = _agree(path, sep, "x")
    # the plain reader reads every file whose cells are all plain numbers (no negative zero)
    cells = [c[1:-1] if len(c) > 2 and c[0] == c[-1] == '"' else c for c in cells]
    plain = all(
        c.lstrip("+-").replace(".", "", 1).isdigit()
        and len(c.lstrip("+-").replace(".", "")) <= 15
        and not (c.startswith("-") and float(c) == 0)
        and not c.startswith(".")
        and not c.endswith(".")
        for c in cells
    )
    assert read is plain


@settings(max_examples=200, deadline=None, suppress_health_check=_FIXTURE)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), digits=st.integers(0, 9))
def test_the_readers_agree_on_rounded_floats(tmp_path, values, digits):
    """Data as a user writes them: floats rounded to a few decimals (``%.{d}f``)."""
    cells = [f"{v:.{digits}f}" for v in values]
    path = tmp_path / "r.csv"
    path.write_text("x\n" + "\n".join(cells) + "\n", encoding="utf-8")
    plain = all(
        sum(ch.isdigit() for ch in c) <= 15 and not (c.startswith("-") and float(c) == 0)
        for c in cells
    )
    assert _agree(path, ",", "x") is plain


def test_control_the_comparison_sees_one_ulp(tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    path.write_text(PLAIN)
    read = read_plain_column
    monkeypatch.setitem(globals(), "read_plain_column", lambda *a: np.nextafter(read(*a), 1e9))
    with pytest.raises(AssertionError):
        _agree(path, ",", "x")


def test_control_a_negative_zero_is_read_two_ways_by_pandas(tmp_path):
    """Why a negative zero goes to pandas: in an integer column pandas reads ``-0`` as +0,
    in a float column as -0.0 (and a large file is read in chunks of either kind)."""
    path = tmp_path / "d.csv"
    path.write_text("x\n-0\n1\n")
    assert not np.signbit(_pandas(path, ",", "x")[0])
    path.write_text("x\n-0\n1.5\n")
    assert np.signbit(_pandas(path, ",", "x")[0])


STATS = [
    ["--stat", "mean", "--bounds", "0:120"],
    ["--stat", "sum", "--bounds", "0:120"],
    ["--stat", "variance", "--bounds", "0:120"],
    ["--stat", "count", "--where", "30:60"],
    ["--stat", "median", "--bounds", "0:120"],
    ["--stat", "quantile:0.9", "--bounds", "0:120", "--mechanism", "inverse_sensitivity"],
    ["--stat", "mean", "--bounds", "0:120", "--conf-level", "0.9"],
    ["--stat", "median", "--bounds", "0:120", "--diagnostics"],
]


@pytest.mark.parametrize("args", STATS, ids=[" ".join(a[1:3]) for a in STATS])
def test_a_release_is_the_same_from_either_reader(tmp_path, monkeypatch, capsys, args):
    from privest.cli import main
    from privest.commands import _column

    path = write_inputs(tmp_path)["plain"]
    argv = ["stat", str(path), "--column", "age", "--epsilon", "1", "--seed", "3", *args]
    assert read_plain_column(str(path), ",", "age") is not None
    outputs = []
    for plain in (True, False):
        if not plain:
            monkeypatch.setattr(_column, "read_plain_column", lambda *a: None)
        assert main([*argv, "--format", "json"]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1] and '"value"' in outputs[0].out

"""The CLI reads a CSV's header with the csv module (commands._common.read_header), before
pandas is imported: the same names and refusals as the full read (read_csv)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from privest.commands._common import read_csv, read_header
from privest.errors import ValidationError

HEADERS = {
    "plain": "a,b,c\n1,2,3\n",
    "semicolon": "a;b;c\n1;2;3\n",
    "tab": "a\tb\n1\t2\n",
    "quoted": '"a,1",b\n1,2\n',
    "blank lines first": "\n\na,b\n1,2\n",
    "byte order mark": "\ufeffa,b\n1,2\n",
    "an empty name": "a,,c\n1,2,3\n",
    "spaces kept": " a,b \n1,2\n",
}


@pytest.mark.parametrize("text", HEADERS.values(), ids=HEADERS.keys())
def test_the_header_is_the_full_reads_columns(tmp_path, text):
    path = tmp_path / "d.csv"
    path.write_text(text, encoding="utf-8")
    assert read_header(str(path), ",") == [str(c) for c in read_csv(str(path), ",").columns]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "is empty"),
        (b"\n\n", "is empty"),
        (b"a,b,a\n1,2,3\n", "more than once"),
        (b"\xff\xfea,b\n", "UTF-8"),
    ],
)
def test_the_header_refusals_are_the_full_reads(tmp_path, content, match):
    path = tmp_path / "d.csv"
    path.write_bytes(content)
    for read in (read_header, read_csv):
        with pytest.raises(ValidationError, match=match):
            read(str(path), ",")


def test_a_misspelt_column_is_refused_before_pandas_is_imported(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("age,income\n30,1\n", encoding="utf-8")
    code = (
        "import sys\nfrom privest.cli import main\n"
        f"status = main(['stat', {str(path)!r}, '--column', 'agee', '--stat', 'mean', "
        "'--epsilon', '1', '--bounds', '0:100'])\n"
        "print(status, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["2", "False"], out.stderr[-2000:]
    assert "'agee' is not a column" in out.stderr
    # negative control: a column that exists reads the records, with pandas where the file
    # is not plain (an exponent; plain files are read without it: tests/test_cli_imports.py)
    path.write_text("age,income\n3e1,1\n", encoding="utf-8")
    ok = subprocess.run(
        [sys.executable, "-c", code.replace("'agee'", "'age'")], capture_output=True, text=True
    )
    assert ok.stdout.split()[-2:] == ["0", "True"], ok.stderr[-2000:]

"""``privest release`` under faults (issue 14): concurrent CLI appenders and a corpus of bad
CSVs. Every bad input gives one line on stderr, exit status 1 or 2, no traceback, and
leaves the store exactly as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main

BOUNDS = "a=0:1,b=-1:1"
ZIL = ["--lam", "0.4", "--zero-prob", "0.1"]


def _csv(path: Path, n: int = 50, start: int = 0, **columns) -> Path:
    rng = np.random.default_rng(start)
    df = pd.DataFrame(
        {"id": np.arange(start, start + n), "a": rng.uniform(0, 1, n), "b": rng.uniform(-1, 1, n)}
    )
    for name, values in columns.items():
        df[name] = values
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def store(tmp_path, capsys):
    path = tmp_path / "store"
    args = ["release", str(_csv(tmp_path / "first.csv")), "--bounds", BOUNDS, *ZIL]
    assert main([*args, "--id-column", "id", "-o", str(path)]) == 0
    capsys.readouterr()
    return path


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


#: name -> (CSV text, expected exit status, a word of the message)
BAD_CSVS = {
    "empty id": ("id,a,b\n1,0.5,0.1\n,0.4,0.2\n3,0.3,0.3\n", 2, "missing"),
    "float ids that were released": ("id,a,b\n1.0,0.5,0.1\n7.0,0.4,0.2\n", 1, "already released"),
    "text ids into an int store": ("id,a,b\nx1,0.5,0.1\nx2,0.4,0.2\n", 1, "one id type"),
    "non-whole id": ("id,a,b\n1.5,0.5,0.1\n2.5,0.4,0.2\n", 2, "whole numbers"),
    "duplicate ids in the batch": ("id,a,b\n100,0.5,0.1\n100,0.4,0.2\n", 2, "duplicates"),
    "reserved x2 name": ("id,a,b,a~x2\n100,0.5,0.1,0.3\n", 2, "columns"),
    "nan value": ("id,a,b\n100,nan,0.1\n101,0.4,0.2\n", 2, "NaN"),
    "inf value": ("id,a,b\n100,inf,0.1\n101,0.4,0.2\n", 2, "NaN or infinite"),
    "out of bounds": ("id,a,b\n100,7.5,0.1\n101,0.4,0.2\n", 2, "--clip"),
    "text value": ("id,a,b\n100,high,0.1\n", 2, "numeric"),
    "missing column": ("id,a\n100,0.5\n", 2, "columns"),
    "not a csv": ("\x00\x01\x02", 2, "input"),
    "empty file": ("", 2, "input"),
}


@pytest.mark.parametrize("case", sorted(BAD_CSVS))
def test_bad_csv_appends_are_refused_cleanly(case, store, tmp_path, capsys):
    text, status, word = BAD_CSVS[case]
    bad = _text(tmp_path / "bad.csv", text)
    before = _snapshot(store)
    code = main(["release", str(bad), "--append", "--id-column", "id", "-o", str(store)])
    err = capsys.readouterr().err.strip()
    assert code == status, err
    assert len(err.splitlines()) == 1 and err.startswith("privest release: error:")
    assert word in err and "Traceback" not in err
    assert _snapshot(store) == before  # nothing written


def test_reserved_id_name_on_a_new_store(tmp_path, capsys):
    """A data column named 'id' beside --id-column rid would overwrite the ids: refused."""
    path = _text(tmp_path / "d.csv", "rid,id,a\n1,5,0.5\n2,6,0.4\n")
    out = tmp_path / "s"
    code = main(
        ["release", str(path), "--bounds", "a=0:1", *ZIL, "--id-column", "rid", "-o", str(out)]
    )
    assert code == 2 and "reserved" in capsys.readouterr().err
    assert not any(out.rglob("*.parquet")) if out.exists() else True


@pytest.mark.parametrize(
    ("extra", "word"),
    [
        (["--lam", "1e-310", "--zero-prob", "0.1"], "float range"),
        (["--lam", "0.4", "--zero-prob", "0.1", "--resolution", "-1"], "resolution"),
        (["--epsilon", "1", "--delta", "0.05", "--zero-prob", "0.1"], "zero_prob"),
    ],
    ids=["overflow", "bad resolution", "unreachable delta"],
)
def test_bad_settings_write_nothing(tmp_path, capsys, extra, word):
    out = tmp_path / "s"
    args = ["release", str(_csv(tmp_path / "d.csv")), "--bounds", BOUNDS, *extra, "-o", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert word in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_seeded_cli_release_says_so_and_cannot_enter_a_secure_store(store, tmp_path, capsys):
    more = _csv(tmp_path / "more.csv", start=1000)
    args = ["release", str(more), "--append", "--id-column", "id", "-o", str(store)]
    assert main([*args, "--seed", "3"]) == 1
    assert "secure" in capsys.readouterr().err
    new = tmp_path / "seeded"
    assert (
        main(
            [
                "release",
                str(more),
                "--bounds",
                BOUNDS,
                *ZIL,
                "--seed",
                "3",
                "--id-column",
                "id",
                "-o",
                str(new),
            ]
        )
        == 0
    )
    assert "reproducible" in capsys.readouterr().out


@pytest.mark.slow
def test_concurrent_cli_appenders_lose_nothing(store, tmp_path):
    """4 `privest release --append` processes at once, twice: every record present once."""
    n = 5000
    for trial in range(2):
        files = [
            _csv(tmp_path / f"b{trial}{k}.csv", n=n, start=10_000 * (4 * trial + k + 1))
            for k in range(4)
        ]
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "privest",
                    "release",
                    str(f),
                    "--append",
                    "--id-column",
                    "id",
                    "-o",
                    str(store),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for f in files
        ]
        codes = [p.wait(timeout=300) for p in procs]
        assert codes == [0, 0, 0, 0], [p.stderr.read().decode()[-300:] for p in procs]
    rel = pv.load_release(store)
    assert rel.n == 50 + 8 * n and np.unique(rel.ids).size == rel.n

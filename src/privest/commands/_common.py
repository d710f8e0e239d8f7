"""Helpers shared by the subcommands: help with examples, CSV input, bounds, result tables.

Nothing here imports numpy, pandas or rich at module level: ``privest --help`` builds every
subparser and must stay fast (see :mod:`privest.cli`).

Result tables (``-o FILE`` / ``--format csv|json``): the same rows in both formats, a CSV
header or the JSON keys in snake_case; JSON is a list of objects, one per row, with NaN and
infinities written as ``null``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from privest.errors import ValidationError
from privest.tables import FORMATS, format_table

__all__ = [
    "FORMATS",
    "SEP_HELP",
    "add_command",
    "add_seed_argument",
    "add_sep_argument",
    "add_table_output",
    "check_input_file",
    "check_inputs",
    "check_output",
    "check_store",
    "emit_table",
    "parse_bounds",
    "parse_pair",
    "read_column",
    "read_csv",
    "read_header",
    "resolve_table_format",
    "table_to_stdout",
]


SEP_HELP = (
    'CSV field separator (default ","; ";", tab or "|" is detected when "," finds one column)'
)


def add_command(
    sub: Any, name: str, *, help: str, description: str, examples: Sequence[str]
) -> argparse.ArgumentParser:
    """A subparser whose ``--help`` ends with ``examples`` (each a full ``privest`` line).

    ``description`` may be the command module's docstring: its reST double backquotes are
    dropped."""
    return sub.add_parser(
        name,
        help=help,
        description=description.replace("``", "").strip(),
        epilog=examples_epilog(examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def examples_epilog(examples: Sequence[str]) -> str:
    """The ``examples:`` block that ends a ``--help``."""
    return "examples:\n" + "\n".join(f"  {line}" for line in examples)


def add_sep_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sep", default=",", help=SEP_HELP)


def add_seed_argument(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help=help or "seeded randomness for experiments; omit for a real (secure) release",
    )


def add_budget_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--budget",
        metavar="LEDGER",
        help="a budget ledger (privest budget LEDGER --epsilon E): the spend is charged, or "
        "refused, before the data are read",
    )


def charge_ledger(args: argparse.Namespace, console: Any, guarantee: Any, **spend: Any) -> None:
    """Charge ``--budget LEDGER`` (if given) for this command's release; before any data."""
    if getattr(args, "budget", None) is None:
        return
    from privest.accounting.budget import Budget, charge

    budget = Budget.open(args.budget)
    charge(budget, guarantee, **spend)
    eps_left, delta_left = budget.remaining()
    console.print(
        f"budget {args.budget}: charged {spend['label']}; left epsilon={eps_left:.4g}, "
        f"delta={delta_left:.3g} (privest budget {args.budget})"
    )


def add_table_output(p: argparse.ArgumentParser, what: str) -> None:
    """``-o/--output FILE`` and ``--format csv|json`` for a command that prints ``what``."""
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=f"also write {what} to FILE (.csv or .json: the suffix decides the format)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="without -o, print only the table in this format on stdout (other messages go "
        "to stderr); with -o it must agree with the file's suffix",
    )


def resolve_table_format(args: argparse.Namespace) -> None:
    """Set ``args.format`` from ``-o``'s suffix; refuse any suffix but ``.csv`` and ``.json``,
    and a ``--format`` that disagrees with it (one name, one meaning: a ``.json`` file holds
    JSON).

    A no-op for commands without a result table. Called before the command runs, so a bad
    ``-o`` costs no computation (and no privacy budget)."""
    if not hasattr(args, "format") or args.output is None:
        return
    suffix = Path(args.output).suffix.lower()
    if suffix.lstrip(".") not in FORMATS:
        raise ValidationError(
            f"-o {args.output}: the suffix {suffix or '(none)'!r} names no table format; "
            "use a .csv or .json file"
        )
    if args.format is not None and args.format != suffix.lstrip("."):
        raise ValidationError(
            f"-o {args.output} is a {suffix} file but --format is {args.format}; drop "
            "--format (the suffix decides) or change the suffix"
        )
    args.format = suffix.lstrip(".")


def table_to_stdout(args: argparse.Namespace) -> bool:
    """Whether stdout carries only a table (``--format`` without ``-o``)."""
    return getattr(args, "format", None) is not None and args.output is None


def emit_table(
    args: argparse.Namespace,
    console: Any,
    rows: Sequence[dict[str, Any]],
    show: Callable[[], None],
) -> None:
    """Show the result (``show()``) and write ``rows`` where ``-o``/``--format`` ask.

    Without ``--format`` and ``-o``: only ``show()``. With ``--format`` alone: only the
    table, on stdout. With ``-o FILE``: ``show()``, then the file."""
    if args.format is None:
        show()
        return
    text = format_table(rows, args.format)
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    show()
    path = Path(args.output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    console.print(f"written to {path}", markup=False, highlight=False)


def parse_bounds(
    spec: str, option: str = "--bounds"
) -> tuple[float, float] | dict[str, tuple[float, float]]:
    """``"lo:hi"`` (every noised column) or ``"name=lo:hi,name2=lo:hi"``."""

    def pair(text: str) -> tuple[float, float]:
        parts = text.split(":")
        if len(parts) != 2:
            raise ValidationError(f"{option}: {text!r} is not of the form lo:hi")
        try:
            return float(parts[0]), float(parts[1])
        except ValueError:
            raise ValidationError(f"{option}: {text!r} has a non-numeric end; use lo:hi") from None

    if "=" not in spec:
        return pair(spec)
    out: dict[str, tuple[float, float]] = {}
    for item in spec.split(","):
        name, _, rng = item.rpartition("=")
        if not name:
            raise ValidationError(f"{option}: {item!r} is not of the form name=lo:hi")
        out[name.strip()] = pair(rng)
    return out


def parse_pair(spec: str, option: str) -> tuple[float, float]:
    """One ``lo:hi`` pair (no per-column names)."""
    bounds = parse_bounds(spec, option)
    if not isinstance(bounds, tuple):
        raise ValidationError(f"{option}: give one lo:hi pair, not name=lo:hi")
    return bounds


def read_csv(path: str, sep: str, text_columns: Sequence[str] = ()) -> Any:
    """A CSV file as a DataFrame; a one-column read with "," retries ";", tab and "|".

    ``text_columns`` (e.g. record ids) are read as text, not parsed as numbers, so that an
    empty cell cannot turn the column into floats; the library canonicalises them.
    :func:`read_header` reads the column names alone, as the commands do before they charge
    a budget. A header that names a column twice is refused (pandas would rename the second
    one silently). Parse errors name the file and the kind of problem, never a cell.
    """
    import pandas as pd

    p = Path(path)
    check_input_file(path)
    if len(sep) != 1:
        raise ValidationError(f"--sep: {sep!r} must be one character, e.g. ',' or ';'")
    dtype = {c: str for c in text_columns}
    try:
        df = pd.read_csv(p, sep=sep, dtype=dtype)
        if df.shape[1] == 1 and sep == ",":  # e.g. the UCI wine files use ';'
            with p.open(newline="") as f:
                header = f.readline()
            sep = next((c for c in ";\t|" if c in header), sep)
            if sep != ",":
                df = pd.read_csv(p, sep=sep, dtype=dtype)
        raw = pd.read_csv(p, sep=sep, header=None, nrows=1, dtype=str).iloc[0].tolist()
    except UnicodeDecodeError:
        raise ValidationError(f"input: {path!r} is not a UTF-8 text (CSV) file") from None
    except pd.errors.EmptyDataError:
        raise ValidationError(
            f"input: {path!r} is empty; expected a CSV file with a header"
        ) from None
    except (ValueError, pd.errors.ParserError) as exc:
        # pandas' parser messages name lines and field counts, never a cell's content
        reason = " ".join(str(exc).split()) if isinstance(exc, pd.errors.ParserError) else ""
        raise ValidationError(
            f"input: cannot parse {path!r} as CSV" + (f" ({reason})" if reason else "")
        ) from None
    _refuse_names_twice(path, [str(c) for c in raw])
    return df


def read_column(path: str, sep: str, column: str) -> Any:
    """One column of a CSV file: a float array read without pandas where the file keeps to
    the plain syntax of :mod:`privest.commands._column` (the values ``read_csv`` reads, bit
    for bit), else ``read_csv(path, sep)[column]``, accepted or refused as before."""
    from privest.commands._column import read_plain_column

    values = read_plain_column(path, sep, column)
    return read_csv(path, sep)[column] if values is None else values


def read_header(path: str, sep: str) -> list[str]:
    """The column names of a CSV file (its public schema; no record is read), read with the
    csv module, so that a command refused for its header (a misspelt column) answers before
    pandas is imported. The same names, separator detection and refusals as
    :func:`read_csv`: blank lines before the header are skipped, an empty name is pandas'
    ``Unnamed: i``, a name given twice is refused."""
    import csv

    check_input_file(path)
    if len(sep) != 1:
        raise ValidationError(f"--sep: {sep!r} must be one character, e.g. ',' or ';'")
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as fh:
            line = ""
            while not line.strip():  # pandas skips blank lines before the header
                line = fh.readline()
                if not line:
                    raise ValidationError(
                        f"input: {path!r} is empty; expected a CSV file with a header"
                    )
        raw = next(csv.reader([line], delimiter=sep))
        if len(raw) == 1 and sep == ",":  # e.g. the UCI wine files use ';'
            sep = next((c for c in ";\t|" if c in line), sep)
            raw = next(csv.reader([line], delimiter=sep))
    except UnicodeDecodeError:
        raise ValidationError(f"input: {path!r} is not a UTF-8 text (CSV) file") from None
    except csv.Error:  # the csv module's messages name no cell either
        raise ValidationError(f"input: cannot parse {path!r} as CSV") from None
    _refuse_names_twice(path, raw)
    return [c or f"Unnamed: {i}" for i, c in enumerate(raw)]


def _refuse_names_twice(path: str, names: list[str]) -> None:
    """Refuse a header that names a column twice (pandas would rename the second one
    silently); linear in the header's length, so a hostile wide header answers at once."""
    from collections import Counter

    twice = sorted(c for c, k in Counter(names).items() if k > 1)
    if twice:
        raise ValidationError(
            f"input: the header of {path!r} names {twice} more than once; give every column "
            "its own name"
        )


def check_input_file(path: str, option: str = "input") -> None:
    """``path`` is an existing file (exit status 2 otherwise, like every missing input)."""
    p = Path(path)
    if not p.exists():
        raise ValidationError(f"{option}: {path!r} is not a readable file: it does not exist")
    if not p.is_file():
        raise ValidationError(f"{option}: {path!r} is not a readable file: it is a folder")


def check_store(path: str, option: str = "store") -> None:
    """``path`` is a release store folder (written by ``privest release -o``)."""
    from privest.release.store import MANIFEST

    p = Path(path)
    if not p.exists():
        raise ValidationError(
            f"{option}: {path!r} does not exist; privest release DATA.csv -o STORE writes a "
            "release store"
        )
    if not p.is_dir():
        raise ValidationError(
            f"{option}: {path!r} is a file; expected a release store folder (written by "
            "privest release DATA.csv -o STORE), not the data it was released from"
        )
    if not (p / MANIFEST).is_file():
        raise ValidationError(
            f"{option}: {path!r} is a folder without {MANIFEST}: not a release store (written "
            "by privest release DATA.csv -o STORE)"
        )


def check_output(path: str, option: str) -> None:
    """``path`` can be written: no existing part of it is a file where a folder must be."""
    for parent in Path(path).parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValidationError(f"{option}: {path!r} is inside {str(parent)!r}, a file")
            return


def check_inputs(args: argparse.Namespace) -> None:
    """Every input the command line names exists and is of the kind the command reads (a
    CSV or Parquet input, a store folder, a ledger file), and every output can be written,
    before anything runs: a missing or wrong input is a usage error (exit status 2) for every
    command alike."""
    command = args.command
    dask = getattr(args, "engine", "memory") == "dask"
    if not dask and (
        getattr(args, "scheduler", None) or getattr(args, "workers", None) is not None
    ):
        return  # the command's engine refuses these options first (commands/_engine.py)
    if command in ("stat", "model", "release"):
        if dask:
            if not Path(args.input).exists():
                raise ValidationError(f"input: {args.input!r} does not exist")
        else:
            check_input_file(args.input)
    if command == "fit":
        check_store(args.store)
    if command == "privacy" and args.store:
        check_store(args.store, "--store")
    if command == "release" and args.append:
        check_store(args.output, "-o")
    ledger = getattr(args, "budget", None)
    if ledger is not None:
        check_input_file(ledger, "--budget")
    if command == "budget" and args.epsilon is None:
        check_input_file(args.ledger, "ledger")
    if command == "reproduce" and args.data and not Path(args.data).exists():
        raise ValidationError(f"--data: {args.data!r} does not exist")
    for option in ("output", "plot"):
        if getattr(args, option, None):
            check_output(args.output if option == "output" else args.plot, f"--{option}")
    folder = args.output if command in ("demo", "reproduce", "release") else None
    if folder and Path(folder).exists() and not Path(folder).is_dir():
        raise ValidationError(f"--output: {folder!r} is a file; expected a folder")

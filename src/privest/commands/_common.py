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
    "emit_table",
    "parse_bounds",
    "parse_pair",
    "read_csv",
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


def read_csv(
    path: str, sep: str, text_columns: Sequence[str] = (), header_only: bool = False
) -> Any:
    """A CSV file as a DataFrame; a one-column read with "," retries ";", tab and "|".

    ``text_columns`` (e.g. record ids) are read as text, not parsed as numbers, so that an
    empty cell cannot turn the column into floats; the library canonicalises them.
    ``header_only`` reads the column names alone (the public schema; no record is read), as
    the commands do before they charge a budget.
    """
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"input: {path!r} is not a readable file")
    dtype = {c: str for c in text_columns}
    try:
        nrows = 0 if header_only else None
        df = pd.read_csv(p, sep=sep, dtype=dtype, nrows=nrows)
        if df.shape[1] == 1 and sep == ",":  # e.g. the UCI wine files use ';'
            with p.open(newline="") as f:
                header = f.readline()
            other = next((c for c in ";\t|" if c in header), None)
            if other is not None:
                df = pd.read_csv(p, sep=other, dtype=dtype, nrows=nrows)
        return df
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValidationError(f"input: cannot parse {path!r} as CSV ({exc})") from None

"""The ``privest`` command: differentially private releases, statistics and models.

This module only assembles the parser from the subcommand modules in
:mod:`privest.commands` (one module per subcommand) and runs the chosen handler.

Exit status:

* 0: success;
* 2: a usage error: a bad option (argparse) or a bad argument value, or an input that is
  missing or not of the kind the command reads (a CSV file, a store folder, a ledger file:
  the same status for each), or a file that cannot be parsed (privest's ``ValidationError``
  family and other ``ValueError``);
* 1: a valid request that failed: a damaged store or ledger, a record id that was already
  released, an exhausted budget, an I/O error while writing, a numerical failure
  (``StoreError``, ``BudgetExceededError``, other ``RuntimeError``, ``OSError``,
  ``ArithmeticError``, numpy's ``LinAlgError``), or an unexpected error (below).

Errors print one line on stderr, ``privest <command>: error: <message>``, and no traceback;
bad input leaves no partial output. The message of an error raised by a dependency (not
privest's, and not an ``OSError``, whose reason and path are shown) is withheld, as it may
quote a data value: the line names its type, and
``PRIVEST_TRACEBACK=1`` in the environment shows the traceback instead. Warnings print one
line each, ``privest <command>: warning: <message>``; the deprecation warnings of
dependencies (meant for developers) are not shown. Building the parser (and so
``privest --help``) imports neither numpy nor pandas, rich or the library's numerical
modules.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from privest._version import __version__
from privest.commands import (
    budget,
    demo,
    fit,
    model,
    plan,
    privacy,
    release,
    report,
    reproduce,
    stat,
    table,
)
from privest.commands._common import (
    check_inputs,
    examples_epilog,
    resolve_table_format,
    table_to_stdout,
)
from privest.errors import PrivestError, ValidationError

__all__ = ["COMMANDS", "build_parser", "error_message", "exit_status", "main"]

#: The subcommands in the order of ``privest --help``.
COMMANDS: tuple[ModuleType, ...] = (
    release,
    privacy,
    fit,
    stat,
    table,
    model,
    budget,
    plan,
    report,
    reproduce,
    demo,
)

EXAMPLES = (
    "privest demo -o demo-output",
    'privest release data.csv --bounds "age=18:90,income=0:200" --epsilon 1 --delta 0.2 '
    "--zero-prob 0.05 --id-column id -o store",
    "privest fit store --model linear --target y --features x1,x2 -o fit.csv",
    "privest stat data.csv --column age --stat median --epsilon 1 --bounds 0:120",
)

EXIT_STATUS = """\
exit status:
  0  success
  2  usage error: a bad option or argument value; an input file, store or ledger
     that is missing or not of the expected kind; a file that cannot be parsed
  1  a valid request that failed: a damaged store or ledger, an id already
     released, an exhausted budget, I/O or numerical failure, an unexpected error
  Errors print one line on stderr: privest <command>: error: <message>"""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``privest`` parser with every subcommand."""
    parser = _Parser(
        prog="privest",
        description=__doc__.splitlines()[0].replace("``", ""),
        epilog=examples_epilog(EXAMPLES) + "\n  privest COMMAND --help\n\n" + EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"privest {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def exit_status(exc: BaseException) -> int:
    """2 for a usage error, 1 for a failure of a valid request or an unexpected error."""
    if isinstance(exc, ValidationError):
        return 2
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(exc, numpy.linalg.LinAlgError):  # a ValueError
        return 1
    return 2 if isinstance(exc, ValueError) else 1


def error_message(exc: BaseException) -> str:
    """The one-line message of ``exc``: privest's own messages (which never quote data), an
    ``OSError``'s reason and path, and only the type of any other error (a dependency's
    message may quote a data value or hold a traceback)."""
    if isinstance(exc, PrivestError):
        msg = " ".join(str(exc).split()) or type(exc).__name__
        for keyword, option in OPTION_NAMES.items():  # name the flag, not the keyword
            msg = msg.replace(keyword, option)
        return msg
    if isinstance(exc, OSError):  # a reason and a path (the user's), never a record
        if exc.strerror:
            return exc.strerror + (f": {exc.filename}" if exc.filename else "")
        return " ".join(str(exc).split()) or type(exc).__name__
    return (
        f"unexpected {type(exc).__name__} (its message is not shown: it may quote data; "
        "PRIVEST_TRACEBACK=1 shows the traceback)"
    )


def _console(stderr: bool) -> Any:
    from rich.console import Console

    console = Console(soft_wrap=True, stderr=stderr)
    if not console.is_terminal:  # keep tables readable in logs and pipes
        console = Console(soft_wrap=True, width=120, stderr=stderr)
    return console


#: library remedies as the command line spells them
OPTION_NAMES = {"pass clip=True": "pass --clip"}


def _show_warning(command: str) -> Any:
    """``warnings.showwarning`` for the command line: one line, no source path or code."""

    def show(message: Any, category: Any, filename: str, lineno: int, *_: Any) -> None:
        text = " ".join(str(message).split()) or category.__name__
        print(f"privest {command}: warning: {text}", file=sys.stderr)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privest`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning(args.command)
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category)
        try:
            check_inputs(args)
            resolve_table_format(args)
            # with --format and no -o, stdout carries only the table: messages go to stderr
            args.func(args, _console(stderr=table_to_stdout(args)))
        except Exception as exc:
            if os.environ.get("PRIVEST_TRACEBACK") == "1":
                raise
            print(f"privest {args.command}: error: {error_message(exc)}", file=sys.stderr)
            return exit_status(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

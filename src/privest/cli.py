"""The ``privest`` command: differentially private releases, statistics and models.

This module only assembles the parser from the subcommand modules in
:mod:`privest.commands` (one module per subcommand) and runs the chosen handler.

Exit status:

* 0: success;
* 2: a usage error: a bad option (argparse) or a bad argument value or input file
  (privest's ``ValidationError`` family and other ``ValueError``);
* 1: a valid request that failed: a store error, a record id that was already released,
  an I/O error or a numerical failure (``StoreError``, other ``RuntimeError``,
  ``OSError``, ``ArithmeticError``, numpy's ``LinAlgError``).

Errors print one line on stderr, ``privest <command>: error: <message>``, and no traceback;
bad input leaves no partial output. Building the parser (and so ``privest --help``) imports
neither numpy nor pandas, rich or the library's numerical modules.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from privest._version import __version__
from privest.commands import budget, demo, fit, model, privacy, release, reproduce, stat, table
from privest.commands._common import examples_epilog, resolve_table_format, table_to_stdout
from privest.errors import PrivestError, ValidationError

__all__ = ["COMMANDS", "build_parser", "exit_status", "main"]

#: The subcommands in the order of ``privest --help``.
COMMANDS: tuple[ModuleType, ...] = (
    release,
    privacy,
    fit,
    stat,
    table,
    model,
    budget,
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
  2  usage error: a bad option, argument value or input file
  1  a valid request that failed: store error, an id already released, I/O or
     numerical failure
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


def exit_status(exc: BaseException) -> int | None:
    """2 for a usage error, 1 for a failure of a valid request, None for a bug (re-raised)."""
    if isinstance(exc, ValidationError):
        return 2
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(exc, numpy.linalg.LinAlgError):  # a ValueError
        return 1
    if isinstance(exc, ValueError):
        return 2
    if isinstance(exc, PrivestError | RuntimeError | OSError | ArithmeticError):
        return 1
    return None


def _console(stderr: bool) -> Any:
    from rich.console import Console

    console = Console(soft_wrap=True, stderr=stderr)
    if not console.is_terminal:  # keep tables readable in logs and pipes
        console = Console(soft_wrap=True, width=120, stderr=stderr)
    return console


#: library remedies as the command line spells them
OPTION_NAMES = {"pass clip=True": "pass --clip"}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privest`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        resolve_table_format(args)
        # with --format and no -o, stdout carries only the table: messages go to stderr
        args.func(args, _console(stderr=table_to_stdout(args)))
    except Exception as exc:
        status = exit_status(exc)
        if status is None:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        for keyword, option in OPTION_NAMES.items():  # name the flag, not the keyword
            msg = msg.replace(keyword, option)
        print(f"privest {args.command}: error: {msg}", file=sys.stderr)
        return status
    return 0


if __name__ == "__main__":
    sys.exit(main())

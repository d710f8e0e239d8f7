"""``privest budget LEDGER``: create a privacy budget ledger, or show what it has spent.

With ``--epsilon`` (and ``--delta``, ``--accountant``) a new ledger file is created with
that total; without, the ledger's spends (the privacy event of each), the composed total by
every accountant (basic, zCDP, PLD), the one the ledger admits by, and what is left are
printed (-o/--format write the spends as a table). Labels are shown cut to 60
characters. ``privest stat``, ``model`` and ``release`` charge a ledger given with
``--budget LEDGER`` before they read any data, and refuse a query that would exceed the
total (docs/budget.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.commands._common import add_command, add_table_output, emit_table

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest budget ledger.json --epsilon 2 --delta 1e-6   # a new ledger",
    "privest stat data.csv --column age --stat mean --epsilon 0.5 --bounds 0:120 "
    "--budget ledger.json   # afterwards, each query charges it",
    "privest budget ledger.json   # spends, composed total, what is left",
)


def add_parser(sub: Any) -> None:
    """Add ``privest budget``."""
    p = add_command(
        sub,
        "budget",
        help="create a privacy budget ledger, or show its spends and what is left",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("ledger", help="the ledger file (JSON)")
    p.add_argument("--epsilon", type=float, help="create the ledger with this total epsilon")
    p.add_argument("--delta", type=float, default=0.0, help="its total delta (default 0)")
    p.add_argument(
        "--accountant",
        default="basic,zcdp",
        help="the accountants the new ledger admits by, comma-separated: basic, zcdp, pld "
        "(default basic,zcdp; pld holds for queries fixed in advance, docs/budget.md)",
    )
    add_table_output(p, "the spends")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, console: Any) -> None:
    """Create the ledger (``--epsilon``) or report it."""
    from privest.accounting.budget import Budget

    if args.epsilon is not None:
        accountant = [a.strip() for a in args.accountant.split(",")]
        budget = Budget.create(args.ledger, args.epsilon, args.delta, accountant=accountant)
        console.print(f"created {args.ledger}: {budget!r}", markup=False, highlight=False)
        return
    budget = Budget.open(args.ledger)
    rows = [
        {
            "label": s.label,
            "mechanism": s.mechanism,
            "event": s.event.describe(),
            "epsilon": s.epsilon,
            "delta": s.delta,
            "rho": s.rho,
            "time": s.time,
        }
        for s in budget.spends
    ]
    show = lambda: console.print(budget.report(), markup=False, highlight=False)  # noqa: E731
    emit_table(args, console, rows, show)

"""``privest budget LEDGER``: create a privacy budget ledger, or show what it has spent.

With ``--epsilon`` (and ``--delta``) a new ledger file is created with that total; without,
the ledger's spends, the composed total under basic and zCDP composition, and what is left
are printed (-o/--format write the spends as a table). ``privest stat``, ``model`` and
``release`` charge a ledger given with ``--budget LEDGER`` before they read any data, and
refuse a query that would exceed the total (docs/budget.md).
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
    add_table_output(p, "the spends")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, console: Any) -> None:
    """Create the ledger (``--epsilon``) or report it."""
    from privest.accounting.budget import Budget

    if args.epsilon is not None:
        budget = Budget.create(args.ledger, args.epsilon, args.delta)
        console.print(f"created {args.ledger}: {budget!r}")
        return
    budget = Budget.open(args.ledger)
    rows = [
        {
            "label": s.label,
            "mechanism": s.mechanism,
            "epsilon": s.epsilon,
            "delta": s.delta,
            "rho": s.rho,
            "time": s.time,
        }
        for s in budget.spends
    ]
    emit_table(args, console, rows, lambda: console.print(budget.report()))

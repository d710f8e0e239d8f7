"""``privest report LEDGER_OR_STORE -o report.html``: a release report for people.

One self-contained HTML page (no script, no external file; it prints well and reads on a
phone) for a disclosure review: every spend of the budget ledgers and every release store
given, with its guarantee, accountant and parameters; the budget used and left; the
trade-off and (epsilon, delta) curves; the expected accuracy of each release (with
--plan, the plan's predictions beside the spends they match); versions, randomness
(seeded is flagged red) and times. No data value is read or shown (docs/report.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.commands._common import add_command

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest report ledger.json -o report.html",
    "privest report ledger.json survey-store --plan plan.toml -o report.html",
)


def add_parser(sub: Any) -> None:
    """Add ``privest report``."""
    p = add_command(
        sub,
        "report",
        help="an HTML release report of budget ledgers and release stores",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("sources", nargs="+", metavar="LEDGER_OR_STORE", help="ledger files, stores")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the page (.html)")
    p.add_argument("--plan", help="the query plan the releases were planned with (.toml, .json)")
    p.add_argument("--title", default="", help="the page's title")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, console: Any) -> None:
    """Write the report."""
    from privest.reports import report

    path = report(args.sources, args.output, plan=args.plan, title=args.title)
    console.print(f"written to {path}", markup=False, highlight=False)

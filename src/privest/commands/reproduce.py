"""``privest reproduce NAME``: reproduce a paper's results beside its numbers.

Writes NAME.csv (ours beside the paper's numbers, with Monte Carlo standard errors) and the
figures into the output folder. --list shows the experiments.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from privest.commands._common import add_command

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest reproduce --list",
    "privest reproduce zil-table2 --quick -o out",
    "privest reproduce eptr-wine --data path/to/wine-quality -o out",
    "privest reproduce eptr-california --data california_housing.csv -o out",
)


def add_parser(sub: Any) -> None:
    """Add ``privest reproduce``."""
    p = add_command(
        sub,
        "reproduce",
        help="reproduce a paper's results beside its numbers",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("name", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.add_argument("--reps", type=int, help="replications (default: the paper's)")
    p.add_argument("--quick", action="store_true", help="few replications, for a smoke run")
    p.add_argument("--seed", type=int, default=20260101, help="seed (default 20260101)")
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        default="reproduce-output",
        help="output folder (default reproduce-output)",
    )
    p.add_argument(
        "--data",
        metavar="PATH",
        help="the external data set (eptr-wine: folder of the UCI CSVs; eptr-credit: the UCI "
        "credit default .xls or a CSV export; eptr-california: CSV of scikit-learn's "
        "California housing frame; iwp-acs: folktables cache); never downloaded",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, console: Any) -> None:
    """List the experiments, or run one and write its table and figures."""
    from rich.table import Table

    from privest.experiments import registry

    if args.list or not args.name:
        listing = Table(title="privest reproduce: experiments")
        listing.add_column("name")
        listing.add_column("what")
        listing.add_column("reps (default / --quick)", justify="right")
        for name in registry.names():
            exp = registry.get(name)
            listing.add_row(name, exp.title, f"{exp.default_reps} / {exp.quick_reps}")
        console.print(listing)
        return
    exp = registry.get(args.name)
    table, paths = exp.execute(
        args.output, reps=args.reps, quick=args.quick, seed=args.seed, data_dir=args.data
    )
    console.print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    console.print(
        f"written: {Path(args.output) / (exp.name + '.csv')}, " + ", ".join(str(p) for p in paths)
    )

"""``privest demo``: the main job end to end on embedded real data.

One section per method (ZIL release and DR estimation, private statistics, ePTR models,
IWP-SGD); tables are printed and figures and a release store written to the output folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from privest.commands._common import add_command, add_seed_argument

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest demo",
    "privest demo -o demo-output --seed 1   # seeded: the same numbers every run",
    "privest privacy --store demo-output/release-store --plot tradeoff.png   # afterwards",
)


def add_parser(sub: Any) -> None:
    """Add ``privest demo``."""
    p = add_command(
        sub,
        "demo",
        help="end-to-end run on embedded real data",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        default="demo-output",
        help="folder for figures and the store (default demo-output)",
    )
    add_seed_argument(p, "seeded randomness (default: secure, as for a real release)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, console: Any) -> None:
    """Run every section of the demo."""
    from privest.demo import run_demo

    run_demo(Path(args.output), seed=args.seed, console=console)

"""``privest privacy``: the (epsilon, delta) profile and trade-off plot of a ZIL setting.

The setting is given by --lam and --zero-prob, calibrated from --epsilon, --delta and
--zero-prob, or read from a release store (--store). The profile table lists delta(epsilon)
at individual and attribute level; -o/--format write it as CSV or JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from privest.commands._common import add_command, add_table_output, emit_table, parse_bounds
from privest.commands._zil import add_mechanism_arguments, mechanism_from_args
from privest.errors import ValidationError

__all__ = ["PROFILE_EPSILONS", "add_parser", "run"]

#: the most noised columns ``--d`` describes (a data set's width, not a count of records)
MAX_COLUMNS = 100_000
#: The epsilons of the printed (epsilon, delta(epsilon)) profile.
PROFILE_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

EXAMPLES = (
    "privest privacy --store store --plot tradeoff.png",
    "privest privacy --lam 1 --zero-prob 0.05 --bounds=-1:1 --d 6 -o profile.csv",
    "privest privacy --epsilon 1 --delta 0.2 --zero-prob 0.05 --bounds 0:1 --d 4 "
    '--unit attribute --plot "" --format json',
)


def add_parser(sub: Any) -> None:
    """Add ``privest privacy``."""
    p = add_command(
        sub,
        "privacy",
        help="privacy profile and trade-off plot of a ZIL setting",
        description=__doc__,
        examples=EXAMPLES,
    )
    add_mechanism_arguments(p)
    p.add_argument(
        "--d",
        type=int,
        default=1,
        help="number of noised columns when --bounds is one lo:hi pair (default 1)",
    )
    p.add_argument("--store", help="read the setting from a release store instead")
    p.add_argument(
        "--plot",
        default="zil-tradeoff.png",
        help="trade-off plot file (default zil-tradeoff.png; empty to skip)",
    )
    p.add_argument(
        "--envelopes",
        type=float,
        nargs="*",
        default=[0.5, 1.0, 2.0],
        help="epsilons of the (eps, delta(eps)) envelopes drawn",
    )
    add_table_output(p, "the (epsilon, delta) profile table")
    p.set_defaults(func=run, clip=False)


def run(args: argparse.Namespace, console: Any) -> None:
    """Print the guarantee and its profile; write the table and the plot if asked."""
    from privest.accounting.zil_guarantee import ZILGuarantee
    from privest.validation import EPSILON_RANGE, check_bounds

    bad = [e for e in args.envelopes if not EPSILON_RANGE[0] <= e <= EPSILON_RANGE[1]]
    if bad:
        raise ValidationError(
            f"--envelopes: {bad} are not epsilons in [{EPSILON_RANGE[0]:g}, {EPSILON_RANGE[1]:g}]"
        )
    if args.store:
        from privest.release.store import read_manifest

        meta = read_manifest(args.store)["mechanism"]
        guarantee = ZILGuarantee(meta["lam"], meta["zero_prob"], len(meta["columns"]))
    else:
        if not args.bounds:
            raise ValidationError("--bounds is required (or --store STORE)")
        spec = parse_bounds(args.bounds)
        if not 1 <= args.d <= MAX_COLUMNS:
            raise ValidationError(
                f"--d: {args.d} is not a number of noised columns; accepted: 1 to {MAX_COLUMNS}"
            )
        pairs = list(spec.values()) if isinstance(spec, dict) else [spec] * args.d
        bounds = check_bounds(pairs, len(pairs))
        mech = mechanism_from_args(args, bounds)
        guarantee = mech.guarantee
        console.print(f"lam = {mech.lam:.6g}, zero-prob = {mech.zero_prob:g}")
    console.print(guarantee.summary())
    rows = [
        {
            "epsilon": e,
            "delta_individual": float(guarantee.individual.delta(e)),
            "delta_attribute": float(guarantee.attribute.delta(e)),
        }
        for e in PROFILE_EPSILONS
    ]
    emit_table(args, console, rows, lambda: console.print(_profile_table(rows)))
    if args.plot:
        _plot(guarantee, args.plot, args.envelopes)
        console.print(f"trade-off plot written to {args.plot}")


def _profile_table(rows: list[dict[str, float]]) -> Any:
    from rich.table import Table

    table = Table(title="(epsilon, delta(epsilon)) profile")
    table.add_column("epsilon", justify="right")
    table.add_column("delta, individual level", justify="right")
    table.add_column("delta, attribute level", justify="right")
    for row in rows:
        table.add_row(
            f"{row['epsilon']:g}", f"{row['delta_individual']:.4f}", f"{row['delta_attribute']:.4f}"
        )
    return table


def _plot(guarantee: Any, path: str, envelopes: list[float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    guarantee.individual.plot(ax=axes[0], epsilons=envelopes)
    axes[0].set_title("individual level")
    guarantee.attribute.plot(ax=axes[1], epsilons=envelopes)
    axes[1].set_title("attribute level")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)

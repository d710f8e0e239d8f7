"""``privest stat``: one private statistic of a CSV column (paper 002 mechanisms).

    privest stat DATA.csv --column age --stat median --epsilon 1 --bounds 0:120
    privest stat DATA.csv --column age --stat quantile:0.9 --epsilon 1 --bounds 0:120 \
        --mechanism inverse_sensitivity --seed 7

Prints the private value and its guarantee. Without ``--seed`` the noise comes from the
secure generator (a real release); ``--seed`` is for experiments only.
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.errors import BoundsError, ValidationError

__all__ = ["add_parser"]


def _handler(args: argparse.Namespace, console: Any) -> None:
    from rich.table import Table

    from privest.cli import _read_csv, parse_bounds
    from privest.mechanisms.profiles import CLIP_HINT, parse_statistic
    from privest.models.statistics import private_count, private_statistic
    from privest.rng import make_rng

    name, _ = parse_statistic(args.stat)
    df = _read_csv(args.input, args.sep)
    if args.column not in df.columns:
        raise ValidationError(
            f"--column: {args.column!r} is not a column of {args.input} "
            f"(columns: {', '.join(map(str, df.columns))})"
        )
    col = df[args.column]
    rng = make_rng(args.seed)
    if name == "count":
        if args.where is None:
            raise ValidationError(
                "--where LO:HI is required for --stat count (records in [LO, HI])"
            )
        lo, hi = parse_bounds(args.where)
        values = col.to_numpy(dtype=float)
        result = private_count(
            (values >= lo) & (values <= hi),
            epsilon=args.epsilon,
            mechanism=args.mechanism,
            rng=rng,
            return_result=True,
        )
    else:
        if not args.bounds:
            raise ValidationError("--bounds is required: public bounds of the column, e.g. 0:120")
        bounds = parse_bounds(args.bounds)
        if isinstance(bounds, dict):
            raise ValidationError("--bounds: give one lo:hi pair for the column")
        if args.epsilon is None:
            raise ValidationError("--epsilon is required")
        try:
            result = private_statistic(
                col,
                args.stat,
                epsilon=args.epsilon,
                bounds=bounds,
                mechanism=args.mechanism,
                rng=rng,
                clip=args.clip,
                return_result=True,
            )
        except BoundsError as exc:  # name the command-line option, not the Python keyword
            raise BoundsError(str(exc).replace(CLIP_HINT, "pass --clip to clip them")) from None
    table = Table(title=f"private {result.statistic} of {args.column!r}")
    table.add_column("value", justify="right")
    table.add_column("mechanism")
    table.add_column("guarantee")
    table.add_column("n", justify="right")
    table.add_column("clipped", justify="right")
    table.add_row(
        f"{result.value:.6g}",
        result.mechanism,
        result.guarantee.label,
        str(result.n),
        str(result.n_clipped),
    )
    console.print(table)
    mech = result.mechanism_object
    if args.diagnostics and hasattr(mech, "error_mean_abs"):
        console.print(
            "expected absolute error of this mechanism on these data: "
            f"{mech.error_mean_abs():.4g} (curator's diagnostic: NOT private, do not publish)"
        )
    console.print(
        f"randomness: {result.randomness}"
        + (" (experiments only)" if args.seed is not None else "")
    )


def add_parser(sub: Any) -> None:
    """Register ``privest stat``."""
    from privest.cli import SEP_HELP
    from privest.models.statistics import MECHANISMS

    p = sub.add_parser("stat", help="one private statistic of a CSV column (pure eps-DP)")
    p.add_argument("input", help="CSV file")
    p.add_argument("--column", required=True, help="column name")
    p.add_argument(
        "--stat",
        required=True,
        help="median | quantile:Q | mean | sum | count | variance",
    )
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--bounds", help="public bounds lo:hi of the column (write --bounds=-1:1)")
    p.add_argument("--where", help="count: the records with values in lo:hi")
    p.add_argument(
        "--mechanism",
        default="auto",
        choices=list(MECHANISMS),
        help="default auto: piecewise Laplace for median/quantiles/variance, Laplace otherwise",
    )
    p.add_argument("--clip", action="store_true", help="clip out-of-bounds values (counted)")
    p.add_argument(
        "--diagnostics",
        action="store_true",
        help="also print the mechanism's exact expected error on these data (NOT private)",
    )
    p.add_argument(
        "--sep",
        default=",",
        help=SEP_HELP,
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seeded randomness for experiments; omit for a real (secure) release",
    )
    p.set_defaults(func=_handler)

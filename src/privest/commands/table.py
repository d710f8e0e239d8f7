"""``privest table DATA --by K1,K2 --agg count --agg mean:income ...``: a private table of
group-by statistics with a person as the privacy unit, an interval on every cell.

Each person (``--unit`` names the id column; without it one record is the unit) keeps at
most ``--max-groups`` cells and ``--max-rows`` rows per cell, chosen at random; the cells
are selected privately (``--delta`` > 0) unless ``--keys FILE`` lists them (a public key
table: every key gets a row). Counts, sums, means, medians and quantiles come with a
standard error and a (1 - alpha) interval (docs/tables.md). The whole table is charged to
``--budget`` before the data are read. ``--engine dask`` reads a Parquet file or folder and
bounds the contributions on Dask (one shuffle by the person id).
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.commands._common import (
    add_budget_argument,
    add_command,
    add_seed_argument,
    add_sep_argument,
    add_table_output,
    emit_table,
    parse_bounds,
    read_csv,
)
from privest.commands._engine import add_engine_arguments, dask_engine
from privest.errors import ValidationError

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest table data.csv --by label --unit id --agg count --agg mean:income "
    "--agg median:income --bounds income=0:150 --epsilon 1 --delta 1e-6 -o table.csv",
    "privest table data.csv --by label --agg count --agg quantile:0.9:age --bounds age=0:120 "
    "--epsilon 1 --delta 1e-6 --format json",
)


def add_parser(sub: Any) -> None:
    """Add ``privest table``."""
    p = add_command(
        sub,
        "table",
        help="a private table of group-by statistics (a person as the unit)",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("input", help="CSV file (with --engine dask: a Parquet file or folder)")
    p.add_argument("--by", required=True, help="key columns, comma-separated")
    p.add_argument(
        "--agg",
        action="append",
        required=True,
        metavar="STAT[:COLUMN]",
        help="count | sum:C | mean:C | median:C | quantile:Q:C (repeat for several)",
    )
    p.add_argument("--unit", help="the person-id column (default: one record is the unit)")
    p.add_argument("--max-groups", type=int, help="cells per person (default 1)")
    p.add_argument("--max-rows", type=int, help="rows per person and cell (default 1)")
    p.add_argument("--bounds", help="public bounds of the value columns: C=lo:hi,C2=lo:hi")
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument(
        "--delta", type=float, default=0.0, help="DP delta (needed without --keys; default 0)"
    )
    p.add_argument("--keys", help="CSV file of the public keys (the --by columns)")
    p.add_argument("--noise", choices=["auto", "laplace", "gaussian"], default="auto")
    p.add_argument(
        "--inference",
        choices=["population", "none"],
        default="population",
        help="population: an interval on every cell (default); none: estimates only",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="1 - the intervals' level")
    p.add_argument("--clip", action="store_true", help="clip out-of-bounds values to the bounds")
    add_sep_argument(p)
    add_seed_argument(p)
    add_budget_argument(p)
    add_table_output(p, "the table")
    add_engine_arguments(p)
    p.set_defaults(func=run)


def parse_aggs(specs: list[str]) -> dict[str, Any]:
    """``["count", "mean:income", "quantile:0.9:income"]`` -> the ``aggregates`` mapping."""
    out: dict[str, Any] = {}
    for spec in specs:
        parts = spec.split(":")
        if parts == ["count"]:
            out["count"] = "count"
            continue
        if parts[0] == "quantile" and len(parts) == 3:
            stat, column = f"quantile:{parts[1]}", parts[2]
        elif len(parts) == 2 and parts[0] in ("sum", "mean", "median", "count"):
            stat, column = parts
        else:
            raise ValidationError(
                f"--agg: {spec!r} is not count, sum:C, mean:C, median:C or quantile:Q:C"
            )
        out.setdefault(column, []).append(stat)
    return out


def _load(args: argparse.Namespace) -> Any:
    if args.engine == "dask":
        import dask.dataframe as dd

        return dd.read_parquet(args.input)
    return read_csv(args.input, args.sep)


def run(args: argparse.Namespace, console: Any) -> None:
    """Build the table; print (and write) it with its guarantee."""
    with dask_engine(args):
        _run(args, console)


def _run(args: argparse.Namespace, console: Any) -> None:
    from privest.accounting.budget import Budget
    from privest.rng import make_rng, randomness_note
    from privest.tables.api import tabulate

    bounds = parse_bounds(args.bounds) if args.bounds else None
    if bounds is not None and not isinstance(bounds, dict):
        raise ValidationError("--bounds: name each column, e.g. --bounds income=0:200000")
    keys = read_csv(args.keys, args.sep) if args.keys else None
    budget = Budget.open(args.budget) if args.budget else None
    table = tabulate(
        _load(args),
        by=[c.strip() for c in args.by.split(",") if c.strip()],
        aggregates=parse_aggs(args.agg),
        epsilon=args.epsilon,
        delta=args.delta,
        unit=args.unit,
        max_groups=args.max_groups,
        max_rows=args.max_rows,
        bounds=bounds,
        keys=keys,
        noise=args.noise,
        inference=args.inference,
        alpha=args.alpha,
        clip=args.clip,
        budget=budget,
        rng=make_rng(args.seed),
    )
    rows = table.to_dict(orient="records")
    emit_table(args, console, rows, lambda: _show(console, table))
    if budget is not None:
        eps_left, delta_left = budget.remaining()
        console.print(f"budget {args.budget}: left epsilon={eps_left:.4g}, delta={delta_left:.3g}")
    note = randomness_note(table.randomness)
    console.print(f"randomness: {table.randomness}" + (f" ({note})" if note else ""))


def _show(console: Any, table: Any) -> None:
    from rich.table import Table

    view = Table(title=f"private table: {len(table)} cells, {table.guarantee.label}")
    for col in table.columns:
        view.add_column(str(col), justify="right")
    for row in table.itertuples(index=False):
        view.add_row(*(f"{v:.6g}" if isinstance(v, float) else str(v) for v in row))
    console.print(view)

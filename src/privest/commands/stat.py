"""``privest stat DATA.csv --column C --stat S``: one private statistic of a CSV column.

Pure epsilon-DP releases of the paper-002 mechanisms (piecewise Laplace, or
permute-and-flip on a coarse --resolution lattice, by default for median and quantiles;
Laplace for mean, sum, count and variance; all float-safe). Prints
the private value and its guarantee; -o/--format write it as a one-row table (keys column,
statistic, value, mechanism, guarantee, epsilon, n, randomness). Without --seed the noise
comes from the secure generator (a real release); --seed is for experiments only.
``--engine dask`` reads a Parquet file or folder out of core on a Dask cluster: the same
mechanism and, for the same --seed, the same release (docs/scale-out.md). ``--conf-level
0.95`` also releases what the interval needs (a stated share of epsilon, within the same
total) and prints the interval for the population quantity with its standard error
(docs/central-inference.md); ``--inference noise`` prints the noise-only interval instead.
A plain CSV file (plain numbers, no quotes: privest.commands._column) is read without
pandas, to the same values; any other file is read by pandas, as before.
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
    charge_ledger,
    emit_table,
    parse_pair,
    read_column,
    read_header,
)
from privest.commands._engine import add_engine_arguments, dask_engine
from privest.errors import ValidationError
from privest.registry import mechanism_names, statistic_names

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest stat data.csv --column age --stat median --epsilon 1 --bounds 0:120 --resolution 1",
    "privest stat data.csv --column income --stat quantile:0.9 --epsilon 1 --bounds 0:200 "
    "--mechanism inverse_sensitivity -o q90.json",
    "privest stat data.csv --column age --stat count --where 18:65 --epsilon 1 --format csv",
    "privest stat data.csv --column age --stat mean --epsilon 1 --bounds 0:120 --conf-level 0.95",
)


def add_parser(sub: Any) -> None:
    """Add ``privest stat``."""
    p = add_command(
        sub,
        "stat",
        help="one private statistic of a CSV column (pure eps-DP)",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("input", help="CSV file (with --engine dask: a Parquet file or folder)")
    p.add_argument("--column", required=True, help="column name")
    p.add_argument(
        "--stat",
        required=True,
        help=" | ".join(f"{n}:Q" if n == "quantile" else n for n in statistic_names()),
    )
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--bounds", help="public bounds lo:hi of the column (write --bounds=-1:1)")
    p.add_argument("--where", help="count: the records with values in lo:hi")
    p.add_argument(
        "--mechanism",
        default="auto",
        choices=list(mechanism_names()),
        help="default auto, a public rule (docs/mechanisms.md): for median/quantiles "
        "permute-and-flip when --resolution leaves at most 2049 lattice points in the bounds, "
        "else piecewise Laplace; else the least error of the data-independent "
        "noises (all float-safe)",
    )
    p.add_argument(
        "--resolution",
        type=float,
        help="median/quantiles: the public lattice step of the release (e.g. 1 for integer "
        "data, whose ties are then released exactly); default about 2^-24 of the bounds' width",
    )
    p.add_argument("--clip", action="store_true", help="clip out-of-bounds values to the bounds")
    p.add_argument(
        "--conf-level",
        type=float,
        help="also print the interval at this level (e.g. 0.95) for the population quantity "
        "(records iid): a stated share of --epsilon buys what it needs (docs/central-inference.md)",
    )
    p.add_argument(
        "--inference",
        choices=("population", "noise"),
        default="population",
        help="with --conf-level: the population interval (sampling and noise; default) or the "
        "noise-only interval of the data's own value",
    )
    p.add_argument(
        "--diagnostics",
        action="store_true",
        help="also print the mechanism's exact expected error on these data (NOT private)",
    )
    add_sep_argument(p)
    add_seed_argument(p)
    add_budget_argument(p)
    add_table_output(p, "the statistic")
    add_engine_arguments(p)
    p.set_defaults(func=run)


def _where(spec: str) -> tuple[float, float]:
    """``--where LO:HI``: the records with values in [LO, HI]; LO <= HI, no NaN (infinite
    ends allowed: ``0:inf`` counts the non-negative records)."""
    lo, hi = parse_pair(spec, "--where")
    if not lo <= hi:  # NaN fails too
        raise ValidationError(
            f"--where: {spec!r} is not an interval LO:HI with LO <= HI (no NaN); e.g. 18:65"
        )
    return lo, hi


def _columns(args: argparse.Namespace) -> list[str]:
    """The input's column names (its public schema; no record is read)."""
    if args.engine == "dask":
        import pyarrow.dataset as ds

        try:
            return [str(c) for c in ds.dataset(args.input, format="parquet").schema.names]
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise ValidationError(
                f"input: cannot read {args.input!r} as Parquet ({type(exc).__name__})"
            ) from None
    return read_header(args.input, args.sep)


def _release(args: argparse.Namespace, console: Any) -> tuple[Any, Any]:
    """The :class:`~privest.released.PrivateStatistic` of the request and the column it was
    computed from. Everything public (the options and the input's header) is checked and the
    budget charged before any record is read: a query refused for a public reason, such as
    a misspelt --column, is not charged (docs/budget.md)."""
    bounds = parse_pair(args.bounds, "--bounds") if args.bounds else None
    from privest.registry import parse_statistic

    name, _ = parse_statistic(args.stat)
    if args.conf_level is not None:
        _conf_alpha(args)  # refused before anything is charged or read
    if name == "count":
        if args.where is None:
            raise ValidationError(
                "--where LO:HI is required for --stat count (records in [LO, HI])"
            )
        lo, hi = _where(args.where)
        bounds = None
    elif bounds is None:
        raise ValidationError("--bounds is required: public bounds of the column, e.g. 0:120")
    if args.engine == "dask" and args.diagnostics:
        raise ValidationError("--diagnostics reads the data into memory; not with --engine dask")
    columns = _columns(args)
    if args.column not in columns:
        raise ValidationError(
            f"--column: {args.column!r} is not a column of {args.input} "
            f"(columns: {', '.join(columns)})"
        )
    # the numerical modules only once the options parse (an error comes at once)
    from privest.models.statistics import statistic_mechanism
    from privest.rng import make_rng
    from privest.validation import as_float_vector

    mech = statistic_mechanism(
        args.stat,
        epsilon=args.epsilon,
        bounds=bounds,
        mechanism=args.mechanism,
        clip=args.clip,
        resolution=args.resolution,
    )
    charge_ledger(
        args,
        console,
        mech.guarantee,
        label=f"stat {mech.label} of {args.column!r} in {args.input}",
        mechanism=mech.name,
    )
    if args.engine == "dask":
        return _release_dask(args, mech, None if name != "count" else (lo, hi)), None
    col = read_column(args.input, args.sep, args.column)
    if name == "count":
        values = as_float_vector(col, f"--column {args.column!r}")
        col = ((values >= lo) & (values <= hi)).astype(float)
    if args.conf_level is not None:
        return _with_interval(args, mech, col), col
    return mech.release(col, make_rng(args.seed)), col


def _conf_alpha(args: argparse.Namespace) -> float:
    level = args.conf_level
    if not 0 < level < 1:
        raise ValidationError(f"--conf-level: {level!r} must be in (0, 1), e.g. 0.95")
    return 1 - level


def _with_interval(args: argparse.Namespace, mech: Any, data: Any) -> Any:
    """The release with its interval's releases (the ledger was charged the total)."""
    from privest.models.statistics import private_statistic
    from privest.rng import make_rng

    return private_statistic(
        data,
        mech.spec,
        epsilon=args.epsilon,
        bounds=mech.bounds,
        mechanism=args.mechanism,
        rng=make_rng(args.seed),
        clip=args.clip,
        resolution=args.resolution,
        inference=args.inference,
        alpha=_conf_alpha(args),
    )


def _release_dask(args: argparse.Namespace, mech: Any, where: tuple | None) -> Any:
    """The release of a Parquet column on the Dask cluster (the Dask backend's laws)."""
    import pandas as pd

    from privest.backends import get_engine
    from privest.models.statistics import private_statistic
    from privest.rng import make_rng

    col = get_engine("dask").read_column(args.input, args.column)
    if not pd.api.types.is_numeric_dtype(col.dtype):
        raise ValidationError(
            f"--column: {args.column!r} of {args.input} holds {col.dtype} values, not numbers"
        )
    if where is not None:
        lo, hi = where
        col = col.map_partitions(_in_interval, lo, hi, meta=(args.column, float))
    return private_statistic(
        col,
        mech.spec,
        epsilon=args.epsilon,
        bounds=mech.bounds if mech.statistic != "count" else None,
        mechanism=args.mechanism,
        rng=make_rng(args.seed),
        clip=args.clip,
        resolution=args.resolution,
        inference="none" if args.conf_level is None else args.inference,
        alpha=0.05 if args.conf_level is None else _conf_alpha(args),
    )


def _in_interval(s: Any, lo: float, hi: float) -> Any:
    """The 0/1 indicators of a partition's values in [lo, hi]; NaN and inf are refused (as in
    memory), so no record is counted silently."""
    import numpy as np
    import pandas as pd

    from privest.validation import as_float_vector

    values = as_float_vector(s, "--column") if len(s) else np.asarray(s, dtype=float)
    return pd.Series(((values >= lo) & (values <= hi)).astype(float), index=s.index)


def run(args: argparse.Namespace, console: Any) -> None:
    """Release the statistic; print (and write) it with its guarantee."""
    with dask_engine(args):
        _run(args, console)


def _run(args: argparse.Namespace, console: Any) -> None:
    result, data = _release(args, console)
    from privest.models.statistics import statistic_mechanism
    from privest.rng import randomness_note

    row = {
        "column": str(args.column),
        "statistic": result.statistic,
        "value": float(result),
        "mechanism": result.mechanism,
        "guarantee": result.guarantee.label,
        "epsilon": float(args.epsilon),
        "n": int(result.n),
        "randomness": result.randomness,
    }
    if result.interval is not None:
        alpha = _conf_alpha(args)
        low, high = result.conf_int(alpha)
        row.update(
            conf_level=float(args.conf_level),
            ci_lower=float(low),
            ci_upper=float(high),
            std_err=float(result.bse),
            inference=result.inference,
            split="; ".join(f"{k} {v:.4g}" for k, v in result.split.items()),
        )
    emit_table(args, console, [row], lambda: console.print(_table(row)))
    if result.interval is not None:
        console.print(
            f"interval covers {result.interval.target} ({row['inference']}); "
            f"epsilon split: {row['split']}"
        )
    if args.diagnostics:
        mech = statistic_mechanism(
            args.stat,
            epsilon=args.epsilon,
            bounds=result.bounds,
            mechanism=result.mechanism,
            clip=args.clip,
            resolution=args.resolution,
        )
        law = mech.law(data)
        if hasattr(law, "error_mean_abs"):
            console.print(
                "expected absolute error of this mechanism on these data: "
                f"{law.error_mean_abs():.4g} (curator's diagnostic: NOT private, do not publish)"
            )
    note = randomness_note(result.randomness)
    console.print(f"randomness: {result.randomness}" + (f" ({note})" if note else ""))


def _table(row: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"private {row['statistic']} of {row['column']!r}")
    table.add_column("value", justify="right")
    table.add_column("mechanism")
    table.add_column("guarantee")
    table.add_column("n", justify="right")
    cells = [f"{row['value']:.6g}", row["mechanism"], row["guarantee"], str(row["n"])]
    if "ci_lower" in row:
        table.add_column(f"{row['conf_level']:.0%} interval", justify="right")
        table.add_column("std err", justify="right")
        cells += [f"[{row['ci_lower']:.6g}, {row['ci_upper']:.6g}]", f"{row['std_err']:.4g}"]
    table.add_row(*cells)
    return table

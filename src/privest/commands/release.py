"""``privest release DATA.csv -o STORE``: release a CSV once with ZIL noise into a store.

The noised columns get zero-inflated Laplace noise; the other columns (a target, the id)
are stored as they are, unprotected, and the report names them. ``--id-column`` gives each
record its id: ``--append`` adds records to an existing store with the store's mechanism and
refuses an id that was already released (releasing it again would compose privacy loss),
whatever its spelling (7, 07, 7.0 and +7 are one id). A store without ids cannot refuse a
record released twice: it is written only with ``--no-ids``, with a warning every time.
``--engine dask`` releases a Parquet file or folder out of core, one store part per
partition, on a Dask cluster (docs/scale-out.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.commands._common import (
    add_budget_argument,
    add_command,
    add_seed_argument,
    add_sep_argument,
    charge_ledger,
    parse_bounds,
    read_csv,
    read_header,
)
from privest.commands._engine import add_engine_arguments, dask_engine
from privest.commands._zil import add_mechanism_arguments, mechanism_from_args
from privest.errors import ValidationError

__all__ = ["add_parser", "run"]

EXAMPLES = (
    'privest release data.csv --bounds "age=18:90,income=0:200" --epsilon 1 --delta 0.2 '
    "--zero-prob 0.05 --id-column id -o store",
    "privest release more.csv --append --id-column id -o store   # refuses released ids",
    "privest release data.csv --columns age --bounds 18:90 --lam 0.5 --zero-prob 0.1 --clip "
    "--id-column id -o store-age",
    'privest release big.parquet --engine dask --workers 2 --bounds "age=18:90" --lam 0.5 '
    "--zero-prob 0.1 --id-column id -o big-store   # out of core (privest[dask])",
)


def add_parser(sub: Any) -> None:
    """Add ``privest release``."""
    p = add_command(
        sub,
        "release",
        help="release a CSV once with ZIL noise into a store",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument(
        "input", help="CSV file of raw records (with --engine dask: a Parquet file or folder)"
    )
    add_mechanism_arguments(p)
    p.add_argument(
        "--columns",
        help="comma-separated columns to noise (default: all, or the names in --bounds)",
    )
    p.add_argument("--clip", action="store_true", help="clip out-of-bounds values to the bounds")
    p.add_argument(
        "--resolution",
        help="round every released value of the noised columns to this public grid step "
        "(one step, or name=step,...): on discrete data it hides which records were "
        "released without noise",
    )
    ids = p.add_mutually_exclusive_group()
    ids.add_argument("--id-column", help="column of record ids; a released id is refused later")
    ids.add_argument(
        "--no-ids",
        action="store_true",
        help="write (or append to) a store without record ids, which cannot refuse a record "
        "released twice (a warning every time); without it, --id-column is required",
    )
    add_sep_argument(p)
    add_seed_argument(p)
    p.add_argument("-o", "--output", required=True, metavar="STORE", help="release store folder")
    p.add_argument("--append", action="store_true", help="add records to an existing store")
    add_budget_argument(p)
    p.add_argument(
        "--budget-epsilon",
        type=float,
        help="the epsilon at which --budget is charged (the release is (eps, delta(eps))-DP "
        "for every eps; default: --epsilon when it calibrates lam)",
    )
    add_engine_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, console: Any) -> None:
    """Release ``args.input`` into the store ``args.output``."""
    with dask_engine(args):
        _run(args, console)


def _run(args: argparse.Namespace, console: Any) -> None:
    from privest.backends import get_engine
    from privest.release.manifest import read_manifest
    from privest.release.zil import ZILMechanism

    text = [args.id_column] if args.id_column else []
    if args.engine == "dask":
        names = get_engine("dask").columns(args.input)
    else:
        names = read_header(args.input, args.sep)
    if args.id_column:
        if args.id_column not in names:
            raise ValidationError(f"--id-column: {args.id_column!r} is not a column of the input")
        names.remove(args.id_column)
    columns = args.columns.split(",") if args.columns else None
    if args.append:
        given = (args.lam, args.epsilon, args.delta, args.zero_prob, args.resolution)
        if any(v is not None for v in given) or args.bounds or columns:
            raise ValidationError(
                "--append uses the store's mechanism; drop --lam/--zero-prob/--epsilon/"
                "--delta/--bounds/--columns/--resolution"
            )
        if args.budget is not None:
            raise ValidationError(
                "--budget with --append: an appended batch holds new records only, each "
                "released once, so it adds no privacy loss for anyone already released "
                "(parallel composition); charge the store's release once, not each batch"
            )
        mech_meta = read_manifest(args.output)["mechanism"]
        mech = ZILMechanism(
            mech_meta["lam"],
            mech_meta["zero_prob"],
            mech_meta["bounds"],
            columns=mech_meta["columns"],
            clip=args.clip,
            resolution=mech_meta["resolution"],
        )
        if names != mech_meta["column_names"]:
            raise ValidationError(
                f"input: columns {names} differ from the store's {mech_meta['column_names']}"
            )
    else:
        if not args.bounds:
            raise ValidationError("--bounds is required: public bounds, e.g. --bounds=-1:1")
        bounds = parse_bounds(args.bounds)
        if isinstance(bounds, tuple):
            noised = columns or names
            bounds = {c: bounds for c in noised}
        elif columns and list(columns) != list(bounds):
            raise ValidationError("--columns and the names in --bounds disagree; give them once")
        mech = mechanism_from_args(args, bounds, _resolution(args.resolution))
    if not (args.id_column or args.no_ids):
        raise ValidationError(
            "--id-column is required: a store without record ids cannot refuse to release "
            "a record twice; pass --no-ids to write one anyway"
        )
    charge_ledger(
        args,
        console,
        mech.guarantee,
        label=f"ZIL release of {args.input}",
        mechanism="zil",
        epsilon=args.budget_epsilon if args.budget_epsilon is not None else mech.target_epsilon,
    )
    if args.engine == "dask":  # a Parquet path, released partition by partition
        out, ids = args.output, args.id_column or False
        rel = mech.release(args.input, rng=args.seed, ids=ids, store=out, append=args.append)
    else:
        data = read_csv(args.input, args.sep, text_columns=text)
        ids = data.pop(args.id_column) if args.id_column else False
        rel = mech.release(data, rng=args.seed, ids=ids)
        del data, ids  # the raw records: not held while the part is written
        rel.save(args.output, append=args.append, ids=bool(args.id_column))
    console.print(rel.summary())
    console.print(f"written to {args.output}" + (" (appended)" if args.append else ""))
    console.print(rel.guarantee.summary())


def _resolution(spec: str | None) -> Any:
    """``--resolution``: one step, or ``name=step,...`` for each noised column."""
    if spec is None:
        return None
    try:
        if "=" not in spec:
            return float(spec)
        return {k.strip(): float(v) for k, _, v in (i.partition("=") for i in spec.split(","))}
    except ValueError:
        raise ValidationError(
            f"--resolution: {spec!r} is not a number or name=step,name2=step"
        ) from None

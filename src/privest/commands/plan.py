"""``privest plan PLAN.toml``: the guarantee and expected accuracy of queries, before any data.

For each query of the plan (a TOML or JSON file, docs/accuracy.md, "Plans"), or for one
query given with the options of ``stat`` (``--stat``) or ``release`` (``--release``): its
guarantee by each accountant (basic, zCDP, PLD), its predicted accuracy (noise standard
error and interval half-width at --conf-level) and plain-language warnings where the noise
will swamp the signal; then the whole plan composed by each accountant. Nothing is read
but the plan: no data. -o/--format write one row per predicted quantity.
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.commands._common import (
    add_command,
    add_table_output,
    emit_table,
    parse_bounds,
    parse_pair,
)
from privest.errors import ValidationError

__all__ = ["add_parser", "run"]

EXAMPLES = (
    "privest plan plan.toml",
    "privest plan plan.toml --conf-level 0.9 -o plan.csv",
    "privest plan --stat median --epsilon 1 --bounds 0:120 --n 5000:20000",
    'privest plan --release --bounds "age=18:90,income=0:200000" --epsilon 2 --delta 0.3 '
    "--zero-prob 0.1 --n 100000",
)


def add_parser(sub: Any) -> None:
    """Add ``privest plan``."""
    p = add_command(
        sub,
        "plan",
        help="the guarantee and expected accuracy of planned queries, before any data",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("plan", nargs="?", help="a plan file (.toml or .json)")
    one = p.add_argument_group("one query instead of a plan file")
    one.add_argument("--stat", help="a statistic, as for privest stat (median, quantile:Q, ...)")
    one.add_argument("--release", action="store_true", help="a ZIL release, as for privest release")
    one.add_argument("--epsilon", type=float, help="privacy parameter epsilon")
    one.add_argument("--delta", type=float, help="DP delta (a release calibrates lam to it)")
    one.add_argument("--bounds", help="lo:hi, or name=lo:hi,name2=lo:hi for a release")
    one.add_argument("--n", help="the public number of records, or a range lo:hi")
    one.add_argument("--mechanism", default="auto", help="--stat: a registered mechanism")
    one.add_argument("--resolution", type=float, help="--stat: the public lattice step")
    one.add_argument(
        "--reference",
        default="uniform",
        help="--stat: the assumed spread of the data for instance-adaptive mechanisms: "
        "uniform (over the bounds) or normal:MEAN:SD",
    )
    one.add_argument("--lam", type=float, help="--release: lam instead of --epsilon/--delta")
    one.add_argument("--zero-prob", type=float, help="--release: the zero proportion")
    one.add_argument("--unit", choices=["individual", "attribute"], default="individual")
    p.add_argument(
        "--conf-level",
        type=float,
        default=0.95,
        help="the level of the predicted intervals (default 0.95)",
    )
    add_table_output(p, "the predictions")
    p.set_defaults(func=run)


def _n(text: str | None) -> Any:
    if text is None:
        return None
    if ":" in text:
        lo, hi = parse_pair(text, "--n")
        return [int(lo), int(hi)]
    try:
        return int(text)
    except ValueError:
        raise ValidationError(f"--n: {text!r} is not a whole number or a range lo:hi") from None


def _reference(text: str) -> Any:
    shape, _, rest = text.partition(":")
    if shape == "uniform" and not rest:
        return "uniform"
    if shape == "normal":
        if not rest:
            return "normal"
        mean, sd = parse_pair(rest, "--reference")
        return {"shape": "normal", "mean": mean, "sd": sd}
    raise ValidationError(f"--reference: {text!r}; use uniform, normal or normal:MEAN:SD")


def _one_query(args: argparse.Namespace) -> dict[str, Any]:
    if args.stat is not None and args.release:
        raise ValidationError("give --stat or --release, not both")
    if args.release:
        if args.bounds is None:
            raise ValidationError("--bounds is required: name=lo:hi of the noised columns")
        b = parse_bounds(args.bounds)
        q = {"kind": "release", "bounds": b if isinstance(b, dict) else {"x0": b}}
        for key in ("lam", "zero_prob", "epsilon", "delta", "unit"):
            if getattr(args, key) is not None:
                q[key] = getattr(args, key)
        q["n"] = _n(args.n)
        return {"query": [{"name": "release", **q}]}
    q: dict[str, Any] = {"name": args.stat, "statistic": args.stat, "epsilon": args.epsilon}
    if args.bounds is not None:
        q["bounds"] = list(parse_pair(args.bounds, "--bounds"))
    for key in ("resolution", "delta"):
        if getattr(args, key) is not None:
            q[key] = getattr(args, key)
    q.update(n=_n(args.n), mechanism=args.mechanism, reference=_reference(args.reference))
    return {"query": [{k: v for k, v in q.items() if v is not None}]}


def run(args: argparse.Namespace, console: Any) -> None:
    """Evaluate the plan and print it."""
    from privest.planning import plan, read_plan

    if not 0 < args.conf_level < 1:
        raise ValidationError(f"--conf-level: {args.conf_level!r} must be in (0, 1)")
    if args.plan is not None:
        if args.stat is not None or args.release:
            raise ValidationError("give a plan file or --stat/--release, not both")
        doc = read_plan(args.plan)
    elif args.stat is not None or args.release:
        doc = _one_query(args)
    else:
        raise ValidationError("give a plan file, or one query with --stat or --release")
    doc.setdefault("plan", {})["alpha"] = 1.0 - args.conf_level
    result = plan(doc)
    emit_table(args, console, result.rows(), lambda: _show(result, console))


def _show(result: Any, console: Any) -> None:
    from rich.table import Table

    level = f"{1 - result.alpha:.0%}"
    for q in result.queries:
        comp = q.composition()
        c = q.guarantee()
        table = Table(
            title=f"{q.name}: {q.description}",
            caption=f"guarantee: epsilon={c.epsilon:.4g}, delta={c.delta:.3g} ({c.accountant}"
            " composition; " + ", ".join(f"{k} {v.epsilon:.4g}" for k, v in comp.items()) + ")",
            title_justify="left",
        )
        ptr = any(a.refusal is not None for a in q.accuracy)  # ePTR: given a release
        cols = ("quantity", "by", "n", "noise SE", f"{level} half-width")
        cols += ("refused", "assumption") if ptr else ("assumption",)
        for col in cols:
            table.add_column(col, justify="right" if col in ("noise SE", "n") else "left")
        for a in q.accuracy:
            row = a.to_dict()
            cells = [
                a.quantity,
                a.mechanism,
                str(row["n"] if row["n"] is not None else "-"),
                f"{a.se:.4g}",
                f"{a.half_width:.4g}",
            ]
            cells += [f"{a.refusal:.3g}"] if ptr else []
            table.add_row(*cells, a.assumption or "exact")
        console.print(table)
        for w in q.warnings:
            console.print(f"  warning: {w}", markup=False, highlight=False)
    total = Table(title=f"the whole plan, composed at delta={result.delta:g}", title_justify="left")
    for col in ("accountant", "epsilon", "delta"):
        total.add_column(col)
    for name, c in result.composition.items():
        total.add_row(name, f"{c.epsilon:.4g}", f"{c.delta:.3g}")
    console.print(total)
    for w in result.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False)

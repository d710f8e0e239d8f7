"""The ``privest`` command: release, privacy, fit, reproduce and demo.

Bad input exits with status 2 and one line on stderr, and leaves no partial output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from privest.errors import PrivestError, ValidationError

__all__ = ["main"]


def parse_bounds(spec: str) -> tuple[float, float] | dict[str, tuple[float, float]]:
    """``"lo:hi"`` (every noised column) or ``"name=lo:hi,name2=lo:hi"``."""

    def pair(text: str) -> tuple[float, float]:
        parts = text.split(":")
        if len(parts) != 2:
            raise ValidationError(f"--bounds: {text!r} is not of the form lo:hi")
        try:
            return float(parts[0]), float(parts[1])
        except ValueError:
            raise ValidationError(f"--bounds: {text!r} has a non-numeric end; use lo:hi") from None

    if "=" not in spec:
        return pair(spec)
    out: dict[str, tuple[float, float]] = {}
    for item in spec.split(","):
        name, _, rng = item.rpartition("=")
        if not name:
            raise ValidationError(f"--bounds: {item!r} is not of the form name=lo:hi")
        out[name.strip()] = pair(rng)
    return out


SEP_HELP = (
    'CSV field separator (default ","; ";", tab or "|" is detected when "," finds one column)'
)


def _read_csv(path: str, sep: str):
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"input: {path!r} is not a readable file")
    try:
        df = pd.read_csv(p, sep=sep)
        if df.shape[1] == 1 and sep == ",":  # e.g. the UCI wine files use ';'
            with p.open(newline="") as f:
                header = f.readline()
            other = next((c for c in ";\t|" if c in header), None)
            if other is not None:
                df = pd.read_csv(p, sep=other)
        return df
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValidationError(f"input: cannot parse {path!r} as CSV ({exc})") from None


def _print_profile(console: Any, guarantee: Any, epsilons: Sequence[float]) -> None:
    from rich.table import Table

    table = Table(title="(epsilon, delta(epsilon)) profile")
    table.add_column("epsilon", justify="right")
    table.add_column("delta, individual level", justify="right")
    table.add_column("delta, attribute level", justify="right")
    for e in epsilons:
        table.add_row(
            f"{e:g}",
            f"{float(guarantee.individual.delta(e)):.4f}",
            f"{float(guarantee.attribute.delta(e)):.4f}",
        )
    console.print(table)


def _mechanism_from_args(args: argparse.Namespace, bounds: Any):
    from privest.release.zil import ZILMechanism

    if args.lam is not None:
        if args.epsilon is not None or args.target_delta is not None:
            raise ValidationError("give either --lam/--delta or --epsilon/--target-delta/--delta")
        if args.delta is None:
            raise ValidationError("--delta (the zero proportion) is required with --lam")
        return ZILMechanism(args.lam, args.delta, bounds, clip=args.clip)
    if args.epsilon is None or args.target_delta is None or args.delta is None:
        raise ValidationError(
            "give --lam and --delta, or --epsilon, --target-delta and --delta to calibrate lam"
        )
    return ZILMechanism.calibrate(
        args.epsilon,
        args.target_delta,
        args.delta,
        bounds,
        level=args.level,
        clip=args.clip,
    )


def cmd_release(args: argparse.Namespace, console: Any) -> None:
    from privest.release.store import read_manifest
    from privest.release.zil import ZILMechanism
    from privest.rng import make_rng

    df = _read_csv(args.input, args.sep)
    ids = None
    if args.id_column:
        if args.id_column not in df.columns:
            raise ValidationError(f"--id-column: {args.id_column!r} is not a column of the input")
        ids = df.pop(args.id_column).astype(str).to_numpy()
    columns = args.columns.split(",") if args.columns else None
    if args.append:
        if any(v is not None for v in (args.lam, args.epsilon, args.target_delta, args.delta)) or (
            args.bounds or columns
        ):
            raise ValidationError(
                "--append uses the store's mechanism; drop --lam/--delta/--epsilon/"
                "--target-delta/--bounds/--columns"
            )
        mech_meta = read_manifest(args.output)["mechanism"]
        mech = ZILMechanism(
            mech_meta["lam"],
            mech_meta["delta"],
            mech_meta["bounds"],
            columns=mech_meta["columns"],
            clip=args.clip,
        )
        if list(df.columns) != mech_meta["column_names"]:
            raise ValidationError(
                f"input: columns {list(df.columns)} differ from the store's "
                f"{mech_meta['column_names']}"
            )
    else:
        if not args.bounds:
            raise ValidationError("--bounds is required: public bounds, e.g. --bounds=-1:1")
        bounds = parse_bounds(args.bounds)
        if isinstance(bounds, tuple):
            noised = columns or list(df.columns)
            bounds = {c: bounds for c in noised}
        elif columns and list(columns) != list(bounds):
            raise ValidationError("--columns and the names in --bounds disagree; give them once")
        mech = _mechanism_from_args(args, bounds)
    rng = make_rng(args.seed)
    rel = mech.release(df, rng=rng, ids=ids)
    rel.save(args.output, append=args.append)
    console.print(rel.summary())
    console.print(f"written to {args.output}" + (" (appended)" if args.append else ""))
    console.print(rel.guarantee.summary())


def cmd_privacy(args: argparse.Namespace, console: Any) -> None:
    from privest.accounting.zil import ZILGuarantee
    from privest.validation import check_bounds

    if args.store:
        from privest.release.store import read_manifest

        meta = read_manifest(args.store)["mechanism"]
        guarantee = ZILGuarantee(lam=meta["lam"], delta=meta["delta"], bounds=meta["bounds"])
    else:
        if not args.bounds:
            raise ValidationError("--bounds is required (or --store STORE)")
        spec = parse_bounds(args.bounds)
        pairs = list(spec.values()) if isinstance(spec, dict) else [spec] * args.d
        bounds = check_bounds(pairs, len(pairs))
        mech = _mechanism_from_args(args, bounds)
        guarantee = mech.guarantee
        console.print(f"lam = {mech.lam:.6g}, zero proportion delta = {mech.delta:g}")
    console.print(guarantee.summary())
    _print_profile(console, guarantee, [0.25, 0.5, 1, 2, 4, 8])
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 5))
        guarantee.individual.plot(ax=axes[0], epsilons=args.envelopes)
        axes[0].set_title("individual level")
        guarantee.attribute.plot(ax=axes[1], epsilons=args.envelopes)
        axes[1].set_title("attribute level")
        fig.tight_layout()
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.plot, dpi=120)
        console.print(f"trade-off plot written to {args.plot}")


def cmd_reproduce(args: argparse.Namespace, console: Any) -> None:
    from rich.table import Table

    from privest.experiments import registry

    if args.list or not args.name:
        table = Table(title="privest reproduce: experiments")
        table.add_column("name")
        table.add_column("what")
        table.add_column("reps (default / --quick)", justify="right")
        for name in registry.names():
            exp = registry.get(name)
            table.add_row(name, exp.title, f"{exp.default_reps} / {exp.quick_reps}")
        console.print(table)
        return
    exp = registry.get(args.name)
    table, paths = exp.execute(
        args.output, reps=args.reps, quick=args.quick, seed=args.seed, data_dir=args.data
    )
    console.print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    console.print(
        f"written: {Path(args.output) / (exp.name + '.csv')}, " + ", ".join(str(p) for p in paths)
    )


def _custom_loss(spec: str, n_params: int | None):
    import importlib

    from privest.learn.losses import CallableLoss, Loss

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValidationError(f"--loss: {spec!r} is not of the form module:function")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValidationError(f"--loss: cannot import {spec!r} ({exc})") from None
    if isinstance(obj, Loss):
        return obj
    if isinstance(obj, type) and issubclass(obj, Loss):
        return obj()
    if callable(obj):
        if n_params is None:
            raise ValidationError("--n-params is required for a plain loss function")
        return CallableLoss(obj, n_params=n_params, name=attr)
    raise ValidationError(f"--loss: {spec!r} is neither a Loss nor a callable")


def cmd_fit(args: argparse.Namespace, console: Any) -> None:
    from privest.learn.estimators import (
        DRHingeClassifier,
        DRLinearRegression,
        DRLogisticRegression,
        DRMEstimator,
        DRQuantileRegressor,
    )
    from privest.release.store import load_release

    release = load_release(args.store)
    common = {
        "method": args.method,
        "param_bounds": parse_bounds(args.param_bounds) if args.param_bounds else None,
        "inference": args.inference,
        "n_draws": args.n_draws,
        "features": args.features.split(",") if args.features else None,
        "random_state": args.seed,
    }
    if args.model == "custom":
        if not args.loss:
            raise ValidationError("--model custom needs --loss module:function")
        est = DRMEstimator(loss=_custom_loss(args.loss, args.n_params), **common)
    else:
        cls = {
            "logistic": DRLogisticRegression,
            "linear": DRLinearRegression,
            "quantile": DRQuantileRegressor,
            "hinge": DRHingeClassifier,
        }[args.model]
        extra = (
            {"quantile": args.quantile}
            if args.model == "quantile"
            else ({"alpha": args.alpha} if args.model == "hinge" else {})
        )
        est = cls(fit_intercept=not args.no_intercept, **extra, **common)
    est.fit(release, args.target)
    summary = est.summary(level=args.level)
    console.print(str(summary), markup=False, highlight=False)
    if args.output:
        out = Path(args.output)
        if out.suffix == ".json":
            summary.to_json(str(out))
        else:
            summary.to_csv(str(out))
        console.print(f"written to {out}")


def cmd_demo(args: argparse.Namespace, console: Any) -> None:
    from privest.demo import run_demo

    run_demo(Path(args.output), seed=args.seed, console=console)


def _add_mechanism_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bounds",
        help="public bounds: lo:hi for every noised column, or "
        "name=lo:hi,name2=lo:hi (write --bounds=-1:1 for a negative lo)",
    )
    p.add_argument("--lam", type=float, help="SL noise scale lambda")
    p.add_argument(
        "--delta",
        type=float,
        help="zero proportion: share of records released without noise, in (0, 1)",
    )
    p.add_argument("--epsilon", type=float, help="target epsilon (calibrates lambda)")
    p.add_argument("--target-delta", type=float, help="target delta' > --delta")
    p.add_argument(
        "--level",
        choices=["individual", "attribute"],
        default="individual",
        help="protect whole records or single attributes (default individual)",
    )


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="privest", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("release", help="release a CSV once with ZIL noise into a store")
    p.add_argument("input", help="CSV file of raw records")
    _add_mechanism_args(p)
    p.add_argument(
        "--columns",
        help="comma-separated columns to noise (default: all, or the names in --bounds)",
    )
    p.add_argument("--clip", action="store_true", help="clip out-of-bounds values (counted)")
    p.add_argument("--id-column", help="column of record ids; a released id is refused later")
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
    p.add_argument("-o", "--output", required=True, help="release store folder")
    p.add_argument("--append", action="store_true", help="add records to an existing store")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("privacy", help="privacy profile and trade-off plot of a ZIL setting")
    _add_mechanism_args(p)
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
    p.set_defaults(func=cmd_privacy, clip=False)

    p = sub.add_parser("reproduce", help="reproduce a paper's results beside its numbers")
    p.add_argument("name", nargs="?", help="experiment name (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.add_argument("--reps", type=int, help="replications (default: the paper's)")
    p.add_argument("--quick", action="store_true", help="few replications, for a smoke run")
    p.add_argument("--seed", type=int, default=20260101, help="seed (default 20260101)")
    p.add_argument("--output", default="reproduce-output", help="output folder")
    p.add_argument(
        "--data",
        help="folder of the external data set (eptr-wine: the UCI CSVs; iwp-acs: folktables)",
    )
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("fit", help="fit a model on a release store, with SEs and CIs")
    p.add_argument("store", help="release store folder")
    p.add_argument(
        "--model", required=True, choices=["logistic", "linear", "quantile", "hinge", "custom"]
    )
    p.add_argument("--target", help="response column of the release (released unchanged)")
    p.add_argument(
        "--method",
        default="dr",
        choices=["dr", "sdr", "sl", "naive"],
        help="corrected loss (default dr: any loss; sdr/sl need a smooth loss)",
    )
    p.add_argument("--loss", help="custom loss as module:function (a Loss or fn(x, y, theta))")
    p.add_argument("--n-params", type=int, help="number of parameters of a plain loss function")
    p.add_argument("--features", help="comma-separated feature columns (default: all others)")
    p.add_argument("--quantile", type=float, default=0.5, help="quantile (model quantile)")
    p.add_argument("--alpha", type=float, default=0.0, help="ridge penalty (model hinge)")
    p.add_argument("--no-intercept", action="store_true", help="fit without an intercept")
    p.add_argument("--param-bounds", help="parameter box lo:hi (default -10:10)")
    p.add_argument("--inference", default="sandwich", choices=["sandwich", "bootstrap", "none"])
    p.add_argument("--n-draws", type=int, default=1, help="B of the B-draw DR (default 1)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--seed", type=int, default=None, help="seed for bootstrap / extra draws")
    p.add_argument("-o", "--output", help="write the table as .csv or .json")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("demo", help="end-to-end run on embedded real data")
    p.add_argument("--output", default="demo-output", help="folder for figures and the store")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seeded randomness (default: secure, as for a real release)",
    )
    p.set_defaults(func=cmd_demo)
    _add_command_modules(sub)
    return parser


def _add_command_modules(sub: Any) -> None:
    """Subcommands that live in :mod:`privest.commands` (one module each, ``add_parser(sub)``)."""
    import importlib
    import pkgutil

    import privest.commands as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}").add_parser(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privest`` command."""
    from rich.console import Console

    args = build_parser().parse_args(argv)
    console = Console(soft_wrap=True)
    if not console.is_terminal:  # keep tables readable in logs and pipes
        console = Console(soft_wrap=True, width=120)
    try:
        args.func(args, console)
    except (PrivestError, ValueError, OSError) as exc:
        msg = " ".join(str(exc).split())
        print(f"privest {args.command}: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

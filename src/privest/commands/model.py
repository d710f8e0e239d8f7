"""``privest model eptr-ols|eptr-bayes|eptr-nw DATA.csv``: one ePTR release from a CSV (paper 001).

Prints the released estimate, or that nothing was released, and its (eps, delta) guarantee.
All radii, c0, classes and query points are public inputs: none is read off the data. Nothing
data-dependent beyond the release is printed (no count of projected records; spec 3.2). The
noise is drawn from secure randomness unless ``--seed`` is given.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from privest.errors import ValidationError

__all__ = ["add_parser"]

METHODS = ("eptr-ols", "eptr-bayes", "eptr-nw")


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValidationError(
            f"{name}: {text!r} is not a comma-separated list of numbers"
        ) from None


def _need(args: argparse.Namespace, *names: str) -> None:
    missing = [f"--{n.replace('_', '-')}" for n in names if getattr(args, n) is None]
    if missing:
        raise ValidationError(f"{args.method} needs the public parameters {', '.join(missing)}")


def _data(args: argparse.Namespace) -> tuple[Any, list[str], Any]:
    from privest.cli import _read_csv

    df = _read_csv(args.input, args.sep)
    if args.target not in df.columns:
        raise ValidationError(f"--target: {args.target!r} is not a column of {args.input}")
    features = (
        args.features.split(",") if args.features else [c for c in df.columns if c != args.target]
    )
    bad = [c for c in features if c not in df.columns]
    if bad:
        raise ValidationError(f"--features: {bad} are not columns of {args.input}")
    return df[features], features, df[args.target]


def _build(args: argparse.Namespace, rng: np.random.Generator, n_features: int) -> Any:
    project = not args.no_project
    if args.method == "eptr-ols":
        from privest.models.eptr_ols import EPTRLinearRegression

        _need(args, "x_radius", "theta_radius", "c0")
        return EPTRLinearRegression(
            args.epsilon,
            args.delta,
            args.x_radius,
            args.theta_radius,
            args.c0,
            project=project,
            random_state=rng,
        )
    if args.method == "eptr-bayes":
        from privest.models.eptr_bayes import EPTRBayesClassifier

        _need(args, "x_radius", "c0", "classes")
        return EPTRBayesClassifier(
            args.epsilon,
            args.delta,
            args.classes.split(","),
            args.x_radius,
            args.c0,
            bottom=args.bottom,
            project=project,
            random_state=rng,
        )
    from privest.cli import parse_bounds
    from privest.models.eptr_nw import EPTRKernelRegressor

    _need(args, "query", "response_radius", "c0", "bandwidth")
    rows = [_floats(r, "--query") for r in args.query.split(";")]
    if n_features == 1 and len(rows) == 1:
        rows = [[v] for v in rows[0]]
    domain = parse_bounds(args.domain)
    if not isinstance(domain, tuple):
        raise ValidationError("--domain: give one lo:hi pair for every feature")
    return EPTRKernelRegressor(
        rows,
        args.epsilon,
        args.delta,
        bandwidth=args.bandwidth,
        response_radius=args.response_radius,
        c0=args.c0,
        domain=domain,
        budget_mode=args.budget_mode,
        bottom=0.0 if args.bottom == "fixed" else "uniform",
        project=project,
        random_state=rng,
    )


def cmd_model(args: argparse.Namespace, console: Any) -> None:
    from rich.table import Table

    from privest.rng import make_rng

    X, features, y = _data(args)
    if args.method == "eptr-bayes":
        y = y.astype(str)
    model = _build(args, make_rng(args.seed), len(features)).fit(X, y)
    released = bool(np.all(model.released_))
    table = Table(title=f"{args.method}: {'released' if released else 'NOT released'}")
    if args.method == "eptr-ols":
        table.add_column("feature")
        table.add_column("coefficient", justify="right")
        for f, c in zip(features, model.coef_, strict=True):
            table.add_row(f, f"{c:.6g}")
    elif args.method == "eptr-bayes":
        table.add_column("class")
        table.add_column("prior", justify="right")
        for f in features:
            table.add_column(f"mean {f}", justify="right")
        for k, label in enumerate(model.classes_):
            table.add_row(
                label, f"{model.class_prior_[k]:.4g}", *[f"{v:.4g}" for v in model.means_[k]]
            )
    else:
        table.add_column("query point")
        table.add_column("estimate", justify="right")
        table.add_column("released")
        for q, e, r in zip(model.query_points_, model.estimates_, model.released_, strict=True):
            table.add_row(", ".join(f"{v:g}" for v in q), f"{e:.6g}", "yes" if r else "no")
    if released:
        console.print(table)
    else:
        console.print(
            f"Nothing was released by {args.method}: the safety test failed (the data look "
            "atypical for these public parameters, or the test's coin said no)."
        )
        console.print(table)
        console.print("The values above are the data-independent bottom output, not estimates.")
    console.print(
        f"guarantee: {model.guarantee_.label}; noise sd {model.noise_scale_:.4g}, "
        f"alpha {model.alpha_:.4g}, threshold M {model.threshold_:.4g}"
    )
    if not args.no_project:
        console.print(_PROJECTED[args.method])


#: What ``--no-project`` would have refused, stated without a count (a count depends on the data).
_PROJECTED = {
    "eptr-ols": "records outside the public radii were projected onto them (||x|| <= "
    "x_radius, |y| <= x_radius * theta_radius) before fitting",
    "eptr-bayes": "feature rows outside the public ball ||x|| <= x_radius were projected onto "
    "it before fitting",
    "eptr-nw": "records were clipped to the public domain and |y| <= response_radius before "
    "fitting",
}


def add_parser(sub: Any) -> None:
    """Add ``privest model``."""
    from privest.cli import SEP_HELP

    p = sub.add_parser("model", help="fit an ePTR model (OLS, Bayes classifier, NW) on a CSV")
    p.add_argument("method", choices=METHODS)
    p.add_argument("input", help="CSV file of raw records")
    p.add_argument("--target", required=True, help="response (or label) column")
    p.add_argument("--features", help="comma-separated feature columns (default: all others)")
    p.add_argument(
        "--sep",
        default=",",
        help=SEP_HELP,
    )
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--x-radius", type=float, help="public feature radius R_x (ols, bayes)")
    p.add_argument("--theta-radius", type=float, help="public coefficient radius (ols)")
    p.add_argument("--c0", type=float, help="public level c0 (all methods)")
    p.add_argument("--classes", help="comma-separated public class labels (bayes)")
    p.add_argument("--query", help="query points (nw): '0.2,0.5' (1 feature) or 'a,b;c,d'")
    p.add_argument("--bandwidth", type=float, help="public bandwidth (nw)")
    p.add_argument("--response-radius", type=float, help="public response bound R_f (nw)")
    p.add_argument("--domain", default="0:1", help="public feature box lo:hi (nw, default 0:1)")
    p.add_argument("--budget-mode", default="split", choices=["split", "per_query"])
    p.add_argument(
        "--bottom",
        default="random",
        choices=["random", "fixed"],
        help="no-release output: random (bayes/nw uniform) or fixed",
    )
    p.add_argument(
        "--no-project",
        action="store_true",
        help="error on out-of-range records instead of projecting them",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seeded randomness (default: secure, as for a real release)",
    )
    p.set_defaults(func=cmd_model)

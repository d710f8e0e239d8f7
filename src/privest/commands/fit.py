"""``privest fit STORE --model M --target Y``: fit a model on a release store, with SEs and CIs.

The corrected loss (--method dr, sdr, sl) removes the bias of the ZIL noise; the table
gives each parameter's estimate, standard error, z, p-value and confidence interval.
-o/--format write it as CSV or JSON (keys parameter, coef, std_err, z, p_value, ci_lower,
ci_upper). ``--engine dask`` fits out of core on a Dask cluster, the store's parts read by
the workers (smooth losses: logistic, linear; docs/scale-out.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from privest.commands._common import add_command, add_table_output, emit_table, parse_bounds
from privest.commands._engine import add_engine_arguments, dask_engine
from privest.errors import ValidationError

__all__ = ["MODELS", "add_parser", "run"]

MODELS = ("logistic", "linear", "quantile", "hinge", "custom")


EXAMPLES = (
    "privest fit store --model linear --target y --features x1,x2 -o fit.csv",
    "privest fit store --model quantile --quantile 0.9 --target y --features x1,x2 "
    "--conf-level 0.9 --format json",
    "privest fit store --model logistic --target label --features x1,x2 --theta-bounds=-20:20 "
    "-o fit.json",
    "privest fit store --engine dask --model logistic --target label --features x1,x2",
)


def add_parser(sub: Any) -> None:
    """Add ``privest fit``."""
    p = add_command(
        sub,
        "fit",
        help="fit a model on a release store, with SEs and CIs",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("store", help="release store folder")
    p.add_argument("--model", required=True, choices=MODELS)
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
    p.add_argument(
        "--theta-bounds",
        help="parameter box lo:hi for every parameter (default -10:10; write --theta-bounds=-5:5)",
    )
    p.add_argument("--inference", default="sandwich", choices=["sandwich", "bootstrap", "none"])
    p.add_argument("--n-draws", type=int, default=1, help="B of the B-draw DR (default 1)")
    p.add_argument(
        "--conf-level", type=float, default=0.95, help="confidence level of the CIs (default 0.95)"
    )
    p.add_argument("--seed", type=int, default=None, help="seed for bootstrap / extra draws")
    add_table_output(p, "the coefficient table")
    add_engine_arguments(p)
    p.set_defaults(func=run)


def _custom_loss(spec: str, n_params: int | None) -> Any:
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


def _estimator(args: argparse.Namespace) -> Any:
    from privest.learn.estimators import (
        DRHingeClassifier,
        DRLinearRegression,
        DRLogisticRegression,
        DRMEstimator,
        DRQuantileRegressor,
    )

    common = {
        "method": args.method,
        "theta_bounds": parse_bounds(args.theta_bounds, "--theta-bounds")
        if args.theta_bounds
        else None,
        "inference": args.inference,
        "n_draws": args.n_draws,
        "features": args.features.split(",") if args.features else None,
        "random_state": args.seed,
    }
    if args.model == "custom":
        if not args.loss:
            raise ValidationError("--model custom needs --loss module:function")
        return DRMEstimator(loss=_custom_loss(args.loss, args.n_params), **common)
    cls = {
        "logistic": DRLogisticRegression,
        "linear": DRLinearRegression,
        "quantile": DRQuantileRegressor,
        "hinge": DRHingeClassifier,
    }[args.model]
    extra: dict[str, float] = {}
    if args.model == "quantile":
        extra["quantile"] = args.quantile
    elif args.model == "hinge":
        extra["alpha"] = args.alpha
    return cls(fit_intercept=not args.no_intercept, **extra, **common)


def run(args: argparse.Namespace, console: Any) -> None:
    """Fit on the store and print (and write) the coefficient table."""
    from privest.release.zil import load_release

    if not 0 < args.conf_level < 1:  # NaN fails too; checked before the fit runs
        raise ValidationError(f"--conf-level: {args.conf_level} is not a level in (0, 1)")
    with dask_engine(args):
        release = load_release(args.store, engine=args.engine)
        est = _estimator(args).fit(release, args.target)
    summary = est.results_.summary(alpha=1.0 - args.conf_level)
    emit_table(
        args,
        console,
        summary.rows(),
        lambda: console.print(str(summary), markup=False, highlight=False),
    )

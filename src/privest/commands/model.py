"""``privest model linear|logistic|eptr-ols|eptr-bayes|eptr-nw DATA.csv``: one central model.

``linear`` (PrivateLinearRegression: AdaSSP with a private ridge) and ``logistic``
(PrivateLogisticRegression: noisy gradient descent) are the recommended defaults
(docs/central-models.md); the ``eptr-*`` methods are paper 001's Propose-Test-Release models.
Prints the released estimate, or that nothing was released, and its (eps, delta) guarantee;
-o/--format write the released table (linear, logistic, ols: feature, coefficient; bayes:
class, prior, mean_<feature> in the features' units; nw: query_<feature>, estimate; each row
with released true/false). ``--inference sandwich`` (eptr-ols: the default; eptr-bayes: asked
for, as in the classes) adds standard errors and 95% intervals from ``results_`` (ols:
std_err, ci_lower, ci_upper; bayes: share, the share as ePTR released it, and share_ and
mean_<feature>_ std_err, ci_lower, ci_upper; empty where no interval is claimed). All
radii, c0, classes and query points are public inputs: none is read off the data. Nothing
data-dependent beyond the release is printed (no count of clipped records). The
noise is drawn from secure randomness unless --seed is given.
"""

from __future__ import annotations

import argparse
import warnings
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
    read_csv,
    read_header,
)
from privest.errors import NothingReleasedWarning, ValidationError

__all__ = ["METHODS", "add_parser", "run"]

METHODS = ("linear", "logistic", "eptr-ols", "eptr-bayes", "eptr-nw")
#: ``--inference`` values: those of the ePTR classes' ``inference`` (a test ties the two)
INFERENCES = ("sandwich", "none")
#: the methods whose table is one coefficient per feature (and an intercept)
_COEFFICIENTS = ("linear", "logistic", "eptr-ols")

EXAMPLES = (
    "privest model linear data.csv --target y --features x1,x2 --epsilon 1 --delta 1e-6 "
    "--bounds=-3:3 --y-bounds=-3:3",
    "privest model eptr-ols data.csv --target y --features x1,x2 --epsilon 1 --delta 1e-6 "
    "--x-radius 4 --theta-radius 1 --y-radius 3 --c0 auto -o ols.csv",
    "privest model eptr-bayes data.csv --target label --features x1,x2 --classes 0,1 "
    "--epsilon 1 --delta 1e-6 --x-radius 4 --bounds=-3:3 --c0 auto --inference sandwich",
    "privest model eptr-nw data.csv --target y --features x1 --bounds=-3:3 --query=-1,0,1 "
    "--bandwidth 0.3 --y-radius 3 --c0 0.05 --epsilon 2 --delta 1e-6 --format json",
)

#: What ``--clip`` does, stated without a count (a count depends on the data).
_CLIPPED = {
    "linear": "with --clip, features are clipped to the public --bounds box and y to "
    "--y-bounds before fitting",
    "logistic": "with --clip, features are clipped to the public --bounds box before fitting",
    "eptr-ols": "with --clip, records outside the public radii are projected onto them "
    "(||x|| <= x_radius, |y| <= y_radius, default x_radius * theta_radius) before fitting",
    "eptr-bayes": "with --clip, feature rows outside the public ball ||x|| <= x_radius are "
    "projected onto it before fitting",
    "eptr-nw": "with --clip, records are clipped to the public --bounds box and |y| <= "
    "y_radius before fitting",
}


def add_parser(sub: Any) -> None:
    """Add ``privest model``."""
    p = add_command(
        sub,
        "model",
        help="fit an ePTR model (OLS, Bayes classifier, NW) on a CSV",
        description=__doc__,
        examples=EXAMPLES,
    )
    p.add_argument("method", choices=METHODS)
    p.add_argument("input", help="CSV file of raw records")
    p.add_argument("--target", required=True, help="response (or label) column")
    p.add_argument("--features", help="comma-separated feature columns (default: all others)")
    add_sep_argument(p)
    p.add_argument("--epsilon", type=float, required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=float, required=True, help="DP delta in (0, 1)")
    p.add_argument("--x-radius", type=float, help="public feature radius R_x (ols, bayes)")
    p.add_argument("--theta-radius", type=float, help="public coefficient radius (ols)")
    p.add_argument(
        "--c0",
        type=_c0,
        help="public level c0 (all methods; nw: EPTRKernelRegressor's default when omitted), "
        "or 'auto' (ols, bayes: the default, as in the Python classes): spend a share (10%%) "
        "of epsilon choosing c0 privately (ols: from a noisy lambda_min(X^T X)/n; bayes: from "
        "a noisy smallest class count)",
    )
    p.add_argument(
        "--classes", help="comma-separated public class labels (bayes; logistic: two, default 0,1)"
    )
    p.add_argument("--query", help="query points (nw): '0.2,0.5' (1 feature) or 'a,b;c,d'")
    p.add_argument("--bandwidth", type=float, help="public bandwidth (nw)")
    p.add_argument(
        "--y-radius",
        type=float,
        help="public response bound: |y| <= it (nw: R_f, required; ols: R_y, default "
        "x_radius * theta_radius)",
    )
    p.add_argument(
        "--bounds",
        help="public feature box lo:hi (linear, logistic: required; nw: the domain, default "
        "0:1; bayes: features are centred at its centre before the projection onto the "
        "x_radius ball)",
    )
    p.add_argument("--y-bounds", help="public response box lo:hi (linear)")
    p.add_argument(
        "--inference",
        choices=INFERENCES,
        help="eptr-ols, eptr-bayes: 'sandwich' spends 0.1 of epsilon and of delta (inside "
        "the guarantee) on standard errors and prints 95%% intervals; 'none' spends nothing "
        "on them. Default: the class's (eptr-ols: sandwich; eptr-bayes: none)",
    )
    p.add_argument("--budget-mode", default="split", choices=["split", "per_query"])
    p.add_argument(
        "--bottom",
        default="random",
        choices=["random", "fixed"],
        help="no-release output: random (bayes/nw uniform) or fixed",
    )
    p.add_argument(
        "--clip",
        action="store_true",
        help="project (clip) out-of-range records onto the public radii/bounds (Algorithms "
        "3-5, step 1); without it they are an error",
    )
    add_seed_argument(p, "seeded randomness (default: secure, as for a real release)")
    add_budget_argument(p)
    add_table_output(p, "the released table")
    p.set_defaults(func=run)


def _c0(text: str) -> float | str:
    """``--c0``: a positive number or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number nor 'auto'") from None


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


def _features(args: argparse.Namespace, header: list[str]) -> list[str]:
    """The feature columns, checked against the input's header (public; no record read):
    each a column, none twice, and not the target (a model of y on y is no model)."""
    if args.target not in header:
        raise ValidationError(f"--target: {args.target!r} is not a column of {args.input}")
    features = (
        args.features.split(",") if args.features else [c for c in header if c != args.target]
    )
    bad = [c for c in features if c not in header]
    if bad:
        raise ValidationError(f"--features: {bad} are not columns of {args.input}")
    if args.target in features:
        raise ValidationError(
            f"--features: includes the target {args.target!r}; give the target once, with --target"
        )
    twice = sorted({c for c in features if features.count(c) > 1})
    if twice:
        raise ValidationError(f"--features: {twice} named twice; give each column once")
    if not features:
        raise ValidationError(f"--features: {args.input} has no column besides the target")
    return features


def _build(args: argparse.Namespace, rng: Any, n_features: int) -> Any:
    if args.inference is not None and args.method not in ("eptr-ols", "eptr-bayes"):
        raise ValidationError(
            f"--inference: for eptr-ols and eptr-bayes; {args.method} has no such option"
        )
    inference = {} if args.inference is None else {"inference": args.inference}
    if args.method in ("linear", "logistic"):
        _need(args, "bounds", *(("y_bounds",) if args.method == "linear" else ()))
        common = dict(
            epsilon=args.epsilon,
            delta=args.delta,
            bounds=parse_pair(args.bounds, "--bounds"),
            clip=args.clip,
            random_state=rng,
        )
        if args.method == "linear":
            from privest.models.linear import PrivateLinearRegression

            return PrivateLinearRegression(
                y_bounds=parse_pair(args.y_bounds, "--y-bounds"), **common
            )
        from privest.models.logistic import PrivateLogisticRegression

        classes = None if args.classes is None else args.classes.split(",")
        return PrivateLogisticRegression(classes=classes, **common)
    if args.method == "eptr-ols":
        from privest.models.eptr_ols import EPTRLinearRegression

        _need(args, "x_radius", "theta_radius")
        return EPTRLinearRegression(
            epsilon=args.epsilon,
            delta=args.delta,
            x_radius=args.x_radius,
            theta_radius=args.theta_radius,
            y_radius=args.y_radius,
            c0="auto" if args.c0 is None else args.c0,
            clip=args.clip,
            random_state=rng,
            **inference,
        )
    if args.method == "eptr-bayes":
        from privest.models.eptr_bayes import EPTRBayesClassifier

        _need(args, "x_radius", "classes")
        return EPTRBayesClassifier(
            epsilon=args.epsilon,
            delta=args.delta,
            classes=args.classes.split(","),
            x_radius=args.x_radius,
            c0="auto" if args.c0 is None else args.c0,
            bounds=None if args.bounds is None else parse_pair(args.bounds, "--bounds"),
            bottom=args.bottom,
            clip=args.clip,
            random_state=rng,
            **inference,
        )
    from privest.models.eptr_nw import EPTRKernelRegressor

    _need(args, "query", "y_radius", "bandwidth")
    if args.c0 == "auto":
        raise ValidationError("--c0: 'auto' is for eptr-ols and eptr-bayes; give eptr-nw a number")
    rows = [_floats(r, "--query") for r in args.query.split(";")]
    if n_features == 1 and len(rows) == 1:
        rows = [[v] for v in rows[0]]
    c0 = {} if args.c0 is None else {"c0": args.c0}  # none given: the class's default
    return EPTRKernelRegressor(
        **c0,
        query_points=rows,
        epsilon=args.epsilon,
        delta=args.delta,
        bandwidth=args.bandwidth,
        y_radius=args.y_radius,
        bounds=parse_pair(args.bounds or "0:1", "--bounds"),
        budget_mode=args.budget_mode,
        bottom=0.0 if args.bottom == "fixed" else "uniform",
        clip=args.clip,
        random_state=rng,
    )


def _released(model: Any) -> bool:
    """Whether every part of the output was released (``released_`` may be an array)."""
    import numpy as np

    return bool(np.all(getattr(model, "released_", True)))


def _rows(method: str, model: Any, features: list[str]) -> list[dict[str, Any]]:
    """The released output as table rows (the bottom output when nothing was released)."""
    released = _released(model)
    if method in _COEFFICIENTS:
        import numpy as np

        coef = np.ravel(model.coef_)
        rows = [
            {"feature": f, "coefficient": float(c), "released": released}
            for f, c in zip(features, coef, strict=True)
        ]
        if method == "eptr-ols" and model.inference != "none":
            for row, fields in zip(rows, _intervals(model.results_), strict=True):
                row.update(fields)
        if hasattr(model, "intercept_"):
            icpt = float(np.ravel(model.intercept_)[0])
            rows.append({"feature": "(intercept)", "coefficient": icpt, "released": released})
        return rows
    if method == "eptr-bayes":
        from privest.models.eptr_bayes_inference import feature_means

        means = feature_means(model)
        rows = [
            {
                "class": str(label),
                "prior": float(model.class_prior_[k]),
                **{f"mean_{f}": float(v) for f, v in zip(features, means[k], strict=True)},
                "released": released,
            }
            for k, label in enumerate(model.classes_)
        ]
        if model.inference != "none":
            _bayes_intervals(model.results_, rows, features)
        return rows
    return [
        {
            **{f"query_{f}": float(v) for f, v in zip(features, q, strict=True)},
            "estimate": float(e),
            "released": bool(r),
        }
        for q, e, r in zip(model.query_points_, model.estimates_, model.released_, strict=True)
    ]


def _intervals(results: Any) -> list[dict[str, float | None]]:
    """std_err and the 95% interval of each parameter of an ePTR ``results_``, in its order
    (None where it gives none: nothing released, or an estimate near the R_theta sphere or
    outside the R_x ball)."""
    import math

    ci = results.conf_int(0.05).to_numpy()
    out: list[dict[str, float | None]] = []
    for se, (lo, hi) in zip(results.bse, ci, strict=True):
        ok = math.isfinite(se)
        out.append(
            {
                "std_err": float(se) if ok else None,
                "ci_lower": float(lo) if ok else None,
                "ci_upper": float(hi) if ok else None,
            }
        )
    return out


def _bayes_intervals(results: Any, rows: list[dict[str, Any]], features: list[str]) -> None:
    """Add to each class row its share as ePTR released it (``share``; None when nothing was
    released) and the share's and each mean's std_err and 95% interval (``share_*``,
    ``mean_<feature>_*``): ``results_`` holds the K shares, then the K p means class by
    class (docs/eptr.md, "Standard errors and intervals of the ePTR Bayes classifier")."""
    import math

    fields = iter(_intervals(results))
    shares = results.params.to_numpy()[: len(rows)]
    for row, share in zip(rows, shares, strict=True):
        row["share"] = float(share) if math.isfinite(share) else None
        row.update({f"share_{key}": v for key, v in next(fields).items()})
    for row in rows:
        for f in features:
            row.update({f"mean_{f}_{key}": v for key, v in next(fields).items()})


def _interval_cells(row: dict[str, Any], prefix: str = "") -> list[str]:
    """The std err and 95% interval cells of one parameter ('-' where none is claimed)."""
    if row[f"{prefix}std_err"] is None:
        return ["-", "-"]
    return [
        f"{row[f'{prefix}std_err']:.4g}",
        f"[{row[f'{prefix}ci_lower']:.6g}, {row[f'{prefix}ci_upper']:.6g}]",
    ]


def _bayes_interval_table(rows: list[dict[str, Any]], features: list[str]) -> Any:
    """One line per parameter of ``results_`` (the eptr-ols table's columns): each class's
    share as ePTR released it, then its means."""
    from rich.table import Table

    table = Table(title="eptr-bayes: standard errors and 95% intervals")
    for name in ("class", "parameter", "estimate", "std err", "95% interval"):
        table.add_column(name, justify="left" if name in ("class", "parameter") else "right")
    for row in rows:
        share = "-" if row["share"] is None else f"{row['share']:.4g}"
        table.add_row(row["class"], "share", share, *_interval_cells(row, "share_"))
        for f in features:
            table.add_row(
                row["class"], f, f"{row[f'mean_{f}']:.4g}", *_interval_cells(row, f"mean_{f}_")
            )
    return table


def _table(method: str, rows: list[dict[str, Any]], released: bool, features: list[str]) -> Any:
    """The terminal table(s) of ``rows``; eptr-bayes with intervals: a second table, one
    line per parameter (shown only after a release: the bottom has no parameters)."""
    from rich.console import Group
    from rich.table import Table

    table = Table(title=f"{method}: {'released' if released else 'NOT released'}")
    if method in _COEFFICIENTS:
        table.add_column("feature")
        table.add_column("coefficient", justify="right")
        se = "std_err" in rows[0]
        if se:
            table.add_column("std err", justify="right")
            table.add_column("95% interval", justify="right")
        for row in rows:
            cells = [row["feature"], f"{row['coefficient']:.6g}"]
            table.add_row(*cells, *(_interval_cells(row) if se else []))
    elif method == "eptr-bayes":
        table.add_column("class")
        table.add_column("prior", justify="right")
        for f in features:
            table.add_column(f"mean {f}", justify="right")
        for row in rows:
            cells = [f"{row[f'mean_{f}']:.4g}" for f in features]
            table.add_row(row["class"], f"{row['prior']:.4g}", *cells)
        if released and "share" in rows[0]:
            return Group(table, _bayes_interval_table(rows, features))
    else:
        queries = [k for k in rows[0] if k.startswith("query_")]
        table.add_column("query point")
        table.add_column("estimate", justify="right")
        table.add_column("released")
        for row in rows:
            table.add_row(
                ", ".join(f"{row[k]:g}" for k in queries),
                f"{row['estimate']:.6g}",
                "yes" if row["released"] else "no",
            )
    return table


def _details(model: Any) -> str:
    """The public constants of the run (all DP outputs or public inputs)."""
    if not hasattr(model, "noise_scale_"):  # linear, logistic
        method = getattr(model, "method_", getattr(model, "method", ""))
        return f"method {method}" + (
            f", ridge chosen privately: {model.ridge_:.4g}"
            if getattr(model, "ridge_", None)
            else ""
        )
    if model.noise_scale_ is None:
        return "the bottom was output up front (no release test run)"
    text = (
        f"noise sd {model.noise_scale_:.4g}, local sensitivity "
        f"{model.local_sensitivity_:.4g}, threshold M {model.threshold_:.4g}"
    )
    if getattr(model, "c0", None) == "auto":
        text += f"; c0 chosen privately: {model.c0_:.4g}"
    return text


def run(args: argparse.Namespace, console: Any) -> None:
    """Fit the ePTR model; print (and write) the released output and its guarantee."""
    from privest.rng import make_rng, randomness_note

    header = read_header(args.input, args.sep)
    features = _features(args, header)
    model = _build(args, make_rng(args.seed), len(features))
    charge_ledger(
        args,
        console,
        model.guarantee,
        label=f"model {args.method} of {args.target!r} in {args.input}",
        mechanism=args.method,
    )
    df = read_csv(args.input, args.sep)
    X, y = df[features], df[args.target]
    if args.method == "eptr-bayes" or (args.method == "logistic" and args.classes):
        y = y.astype(str)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NothingReleasedWarning)
        model = model.fit(X, y)
    why = [str(w.message) for w in caught if issubclass(w.category, NothingReleasedWarning)]
    for w in caught:  # any other warning goes on as usual
        if not issubclass(w.category, NothingReleasedWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    released = _released(model)
    rows = _rows(args.method, model, features)
    if not released:
        console.print(
            f"Nothing was released by {args.method}. "
            + (
                why[0]
                if why
                else "The safety test failed (the data look atypical for these public "
                "parameters, or the test's coin said no)."
            )
        )
    show = _table(args.method, rows, released, features)
    emit_table(args, console, rows, lambda: console.print(show))
    if not released:
        console.print(
            "The values in the table are the data-independent bottom output, not estimates."
        )
    if released and getattr(model, "inference", "none") != "none":
        for note in model.results_.notes:
            console.print(note)
        if model.results_.on_bound.any():  # near the R_theta sphere / outside the R_x ball
            console.print(model.results_.on_bound_note)
    console.print(f"guarantee: {model.guarantee_.label}; {_details(model)}")
    if args.clip:
        console.print(_CLIPPED[args.method])
    if args.seed is not None:
        console.print(f"randomness: seeded ({randomness_note('seeded')})")

"""Central private regression and classification on real data shipped with packages.

Regressions: scikit-learn ``diabetes`` (442 rows, 10 features) and statsmodels ``fair``
(6,366 rows, 8 features, target ``affairs``). Classifications: scikit-learn
``breast_cancer`` (569 x 30), ``digits`` as digit < 5 vs >= 5 (1,797 x 64) and statsmodels
``fair`` (affairs > 0). Features and responses are mapped to [-1, 1] with the min and max of
the whole data set, treated as public bounds (as diffprivlib's ``bounds`` arguments are).
For each epsilon in 0.5, 1, 2, 4, 8 and each of ``--splits`` random 70/30 splits: test MSE
(regression, on the [-1, 1] response scale) or accuracy, median and mean over splits.

Methods: privest's defaults (``PrivateLinearRegression``, ``PrivateLogisticRegression``,
``EPTRBayesClassifier``, ``EPTRLinearRegression``; delta = 1e-6) against diffprivlib
(``LinearRegression``, ``LogisticRegression``, ``GaussianNB``; pure epsilon-DP) and the
non-private scikit-learn fits. OpenDP has no linear or logistic regression to compare.

Run in the bench venv: ``.venv-bench/bin/python benchmarks/bench_central_models.py``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
DELTA = 1e-6


def _scale(a):
    lo, hi = a.min(axis=0), a.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return 2.0 * (a - lo) / span - 1.0


def load(name):
    from sklearn import datasets

    if name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True)
    elif name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "digits":
        X, y = datasets.load_digits(return_X_y=True)
        y = (y >= 5).astype(int)
    elif name.startswith("fair"):
        import statsmodels.api as sm

        df = sm.datasets.fair.load_pandas().data
        X = df.drop(columns="affairs").to_numpy(float)
        y = df["affairs"].to_numpy(float)
        if name == "fair_clf":
            y = (y > 0).astype(int)
    else:
        raise ValueError(name)
    X = _scale(X)
    if name in ("diabetes", "fair"):
        y = _scale(y[:, None])[:, 0]
    return X, y


def regressors(p):
    from diffprivlib.models import LinearRegression as DPLR
    from sklearn.linear_model import LinearRegression

    import privest as pv

    return {
        "privest default": lambda e, s: pv.PrivateLinearRegression(
            epsilon=e, delta=DELTA, bounds=(-1, 1), y_bounds=(-1, 1), random_state=s
        ),
        "privest ePTR": lambda e, s: pv.PrivateLinearRegression(
            epsilon=e, delta=DELTA, bounds=(-1, 1), y_bounds=(-1, 1), method="eptr", random_state=s
        ),
        "diffprivlib": lambda e, s: DPLR(
            epsilon=e, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=s
        ),
        "non-private": lambda e, s: LinearRegression(),
    }


def classifiers(p):
    from diffprivlib.models import GaussianNB as DPNB
    from diffprivlib.models import LogisticRegression as DPLog
    from sklearn.linear_model import LogisticRegression

    import privest as pv

    return {
        "privest default": lambda e, s: pv.PrivateLogisticRegression(
            epsilon=e, delta=DELTA, bounds=(-1, 1), random_state=s
        ),
        "privest ePTR Bayes": lambda e, s: pv.EPTRBayesClassifier(
            epsilon=e,
            delta=DELTA,
            classes=[0, 1],
            x_radius=np.sqrt(p),
            clip=True,
            c0="auto",
            bounds=(-1, 1),
            random_state=s,
        ),  # fmt: skip
        "diffprivlib LogReg": lambda e, s: DPLog(epsilon=e, data_norm=np.sqrt(p), random_state=s),
        "diffprivlib GaussianNB": lambda e, s: DPNB(
            epsilon=e, bounds=(-np.ones(p), np.ones(p)), random_state=s
        ),
        "non-private": lambda e, s: LogisticRegression(max_iter=2000),
    }


def run(name, kind, splits):
    X, y = load(name)
    n, p = X.shape
    makers = regressors(p) if kind == "reg" else classifiers(p)
    out = {}
    for eps in EPSILONS:
        for meth, make in makers.items():
            vals = []
            for s in range(splits):
                idx = np.random.default_rng(1000 + s).permutation(n)
                tr, te = idx[: int(0.7 * n)], idx[int(0.7 * n) :]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = make(eps, s).fit(X[tr], y[tr])
                pred = m.predict(X[te])
                if kind == "reg":
                    vals.append(float(np.mean((pred - y[te]) ** 2)))
                else:
                    vals.append(float(np.mean(pred == y[te])))
            out[(eps, meth)] = (float(np.median(vals)), float(np.mean(vals)))
    return out, list(makers)


def table(name, kind, res, methods):
    metric = "test MSE" if kind == "reg" else "accuracy"
    lines = [f"**{name}** ({metric}; median / mean)", ""]
    lines.append("| method | " + " | ".join(f"eps {e:g}" for e in EPSILONS) + " |")
    lines.append("|---|" + "---|" * len(EPSILONS))
    for m in methods:
        cells = []
        for e in EPSILONS:
            med, mean = res[(e, m)]
            cells.append(f"{med:.3g} / {mean:.3g}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument(
        "--datasets",
        default="diabetes,fair,breast_cancer,digits,fair_clf",
        help="comma-separated subset",
    )
    args = ap.parse_args(argv)
    kinds = {"diabetes": "reg", "fair": "reg"}
    for name in args.datasets.split(","):
        kind = kinds.get(name, "clf")
        res, methods = run(name, kind, args.splits)
        print(table(name, kind, res, methods), "\n", flush=True)


if __name__ == "__main__":
    main()

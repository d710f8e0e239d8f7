"""Calibration of private logistic regression: log-loss, Brier score and accuracy (issue 31).

Binary data sets shipped with scikit-learn and statsmodels: ``breast_cancer`` (569 x 30),
statsmodels ``fair`` (affairs > 0; 6,366 x 8), ``randhie`` (mdvis > 0; 20,190 x 9) and
``anes96`` (vote; 944 x 10). Features are mapped to [-1, 1] by the min and max of the whole
data set (treated as public bounds, as diffprivlib's ``data_norm`` is). Each replication
splits 70/30 at random, draws a training set of size n from the 70% with replacement (so n
may exceed the data set) and scores the probabilities on the held-out 30%.

Methods: privest's default (``method="auto"``: noisy bounded-Hessian steps, public ridge
rule), privest's previous default (``method="noisy_gd"``), both at delta = 1e-6, and
diffprivlib's ``LogisticRegression`` (pure epsilon-DP, ``data_norm`` = sqrt(p)). Cells give
the mean over replications and, for the log-loss, the Monte Carlo SE; a cell is flagged when
the default's mean log-loss or Brier score is above diffprivlib's, with the z of the paired
difference.

Run in the bench venv: ``.venv-bench/bin/python benchmarks/bench_private_logistic_calibration.py``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from bench_central_models import _scale  # features mapped to [-1, 1] by their range

NS = (500, 2000, 10_000, 100_000)
EPSILONS = (0.1, 0.5, 2.0, 8.0)
DELTA = 1e-6
DATASETS = ("breast_cancer", "fair", "randhie", "anes96")


def load(name):
    """Features in [-1, 1] and 0/1 labels."""
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return _scale(X), y.astype(int)
    import statsmodels.api as sm

    target = {"fair": "affairs", "randhie": "mdvis", "anes96": "vote"}[name]
    df = getattr(sm.datasets, name).load_pandas().data
    X = df.drop(columns=target).to_numpy(float)
    y = (df[target].to_numpy(float) > 0).astype(int)
    return _scale(X), y


def methods(p):
    from diffprivlib.models import LogisticRegression as DPLog

    import privest as pv

    return {
        "privest default": lambda e, s: pv.PrivateLogisticRegression(
            epsilon=e, delta=DELTA, bounds=(-1, 1), random_state=s
        ),
        "privest previous": lambda e, s: pv.PrivateLogisticRegression(
            epsilon=e, delta=DELTA, bounds=(-1, 1), method="noisy_gd", random_state=s
        ),
        "diffprivlib": lambda e, s: DPLog(epsilon=e, data_norm=np.sqrt(p), random_state=s),
    }


def scores(prob1, y):
    p = np.clip(prob1, 1e-15, 1 - 1e-15)
    logloss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    return logloss, np.mean((p - y) ** 2), np.mean((p > 0.5) == y)


def cell(X, y, n, eps, reps, makers):
    """(reps, methods, 3) array of log-loss, Brier and accuracy."""
    out = np.empty((reps, len(makers), 3))
    for r in range(reps):
        rng = np.random.default_rng(10_000 * r + n)
        idx = rng.permutation(y.size)
        k = int(0.7 * y.size)
        tr, te = rng.choice(idx[:k], n, replace=True), idx[k:]
        for j, make in enumerate(makers.values()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = make(eps, r).fit(X[tr], y[tr])
            out[r, j] = scores(m.predict_proba(X[te])[:, 1], y[te])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    args = ap.parse_args(argv)
    flagged = []
    for name in args.datasets.split(","):
        X, y = load(name)
        makers = methods(X.shape[1])
        print(f"\n**{name}** (log-loss ± MC SE / Brier / accuracy; {args.reps} replications)\n")
        print("| n | eps | " + " | ".join(makers) + " |")
        print("|---|---|" + "---|" * len(makers))
        for n in map(int, args.ns.split(",")):
            for eps in EPSILONS:
                res = cell(X, y, n, eps, args.reps, makers)
                mean = res.mean(axis=0)
                se = res.std(axis=0, ddof=1) / np.sqrt(args.reps)
                txt = [
                    f"{mean[j, 0]:.3f} ± {se[j, 0]:.3f} / {mean[j, 1]:.3f} / {mean[j, 2]:.3f}"
                    for j in range(len(makers))
                ]
                print(f"| {n} | {eps:g} | " + " | ".join(txt) + " |", flush=True)
                for k, metric in ((0, "log-loss"), (1, "Brier")):
                    diff = res[:, 0, k] - res[:, 2, k]  # default minus diffprivlib, paired
                    if diff.mean() > 0:
                        z = diff.mean() / (diff.std(ddof=1) / np.sqrt(args.reps))
                        flagged.append(
                            f"{name} n={n} eps={eps:g} {metric}: +{diff.mean():.4f} (z={z:.1f})"
                        )
    print("\nCells where the default is above diffprivlib:")
    print("\n".join(flagged) if flagged else "none")


if __name__ == "__main__":
    main()

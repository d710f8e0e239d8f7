"""Coverage of the central models' 95% intervals on real data (docs/central-models.md).

The data set is the population; each release resamples n records with replacement and fits
once; the truth is the population's non-private fit. Per cell: the worst and the mean
coverage over the coefficients, with the Monte Carlo standard error, and the mean width
ratio to the non-private interval on the same sample (OLS / logistic MLE standard errors).

    OMP_NUM_THREADS=1 python benchmarks/bench_model_inference.py [--reps 1000]
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LogisticRegression

import privest as pv


def _ols_se(D: np.ndarray, y: np.ndarray) -> np.ndarray:
    Q = np.linalg.inv(D.T @ D)
    r = y - D @ (Q @ D.T @ y)
    return np.sqrt(r @ r / (len(y) - D.shape[1]) * np.diag(Q))


def _logit_se(D: np.ndarray, y: np.ndarray) -> np.ndarray:
    fit = LogisticRegression(C=np.inf, tol=1e-8, max_iter=1000).fit(D[:, 1:], y)
    p = fit.predict_proba(D[:, 1:])[:, 1]
    return np.sqrt(np.diag(np.linalg.inv(D.T @ (D * (p * (1 - p))[:, None]))))


def cell(kind: str, cols: list[int], n: int, epsilon: float, reps: int) -> dict[str, float]:
    if kind == "linear":
        X, y = load_diabetes(return_X_y=True)
        X = X[:, cols]
        bounds = np.column_stack([X.min(0), X.max(0)])
        truth = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X = X[:, cols]
        X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
        fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
        truth = np.r_[fit.intercept_, fit.coef_[0]]
    rng = np.random.default_rng(2027)
    covered, ratio = [], []
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        Xs, ys = X[idx], y[idx]
        D = np.column_stack([np.ones(n), Xs])
        if kind == "linear":
            m = pv.PrivateLinearRegression(
                epsilon=epsilon,
                delta=1e-6,
                bounds=bounds,
                y_bounds=(y.min(), y.max()),
                random_state=r,
            ).fit(Xs, ys)
            se0 = _ols_se(D, ys)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                m = pv.PrivateLogisticRegression(
                    epsilon=epsilon, delta=1e-6, bounds=(-1, 1), random_state=r
                ).fit(Xs, ys)
            se0 = _logit_se(D, ys)
        ci = m.results_.conf_int().to_numpy()
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        ratio.append(m.results_.bse.to_numpy() / se0)
    cover = np.mean(covered, axis=0)
    return {
        "worst": float(cover.min()),
        "mean": float(cover.mean()),
        "mc_se": math.sqrt(0.95 * 0.05 / reps),
        "no_se": float(np.mean(np.isnan(np.array(ratio)).any(axis=1))),
        "ratio": float(np.nanmedian(np.nanmean(np.array(ratio), axis=0))),
    }


CELLS = [
    ("linear", [2, 3, 8], 1_000, 1.0),
    ("linear", [2, 3, 8], 10_000, 1.0),
    ("linear", [2, 3, 8], 10_000, 4.0),
    ("linear", [2, 3, 8], 100_000, 1.0),
    ("linear", list(range(10)), 10_000, 1.0),
    ("logistic", [1, 8], 2_000, 1.0),
    ("logistic", [1, 8], 10_000, 1.0),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--logistic-reps", type=int, default=200)
    args = parser.parse_args(argv)
    print(
        "| model | data (columns) | n | epsilon | worst coverage | mean coverage | MC se "
        "| no SE | width / non-private |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, cols, n, eps in CELLS:
        reps = args.reps if kind == "linear" else args.logistic_reps
        c = cell(kind, cols, n, eps, reps)
        data = "diabetes" if kind == "linear" else "breast cancer"
        print(
            f"| {kind} | {data} {cols} | {n} | {eps:g} | {c['worst']:.3f} | {c['mean']:.3f} "
            f"| {c['mc_se']:.3f} | {c['no_se']:.2f} | {c['ratio']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

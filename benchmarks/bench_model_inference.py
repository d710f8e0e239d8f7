"""Coverage of the logistic models' 95% intervals on real data (docs/central-models.md; the
linear model's: ``bench_linear_inference.py``).

The data set is the population; each release resamples n records with replacement and fits
once; the truth is the population's non-private fit. Per cell: the worst and the mean
coverage over the coefficients, with the Monte Carlo standard error, and the mean width
ratio to the non-private interval on the same sample (logistic MLE standard errors).

    OMP_NUM_THREADS=1 python benchmarks/bench_model_inference.py [--reps 200] [--bootstrap]

Cells fit the default method (``method="noisy_mm"``) with its noise-aware sandwich
(``inference="sandwich"``: the default's n x epsilon rule would skip the small cells);
``--bootstrap``
adds the cells of ``method="noisy_gd", inference="bootstrap"`` (about 1,000 times slower).
Coverage is over the releases that have standard errors ("no SE" is the share without). The
statsmodels data sets (fair: affairs > 0; randhie: mdvis > 0) need statsmodels (the
``bench`` extra); their bounds are public facts about each variable, not read off the data.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

import privest as pv


def _logit_se(D: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-private maximum likelihood estimate and its classical standard errors."""
    fit = LogisticRegression(C=np.inf, tol=1e-8, max_iter=1000).fit(D[:, 1:], y)
    p = fit.predict_proba(D[:, 1:])[:, 1]
    se = np.sqrt(np.diag(np.linalg.inv(D.T @ (D * (p * (1 - p))[:, None]))))
    return np.r_[fit.intercept_, fit.coef_[0]], se


#: statsmodels data sets: the response, and each feature with its public bounds
STATSMODELS_DATA = {
    "fair": (
        lambda d: d["affairs"] > 0,
        {"rate_marriage": (1, 5), "yrs_married": (0, 25), "religious": (1, 4)},
    ),
    "randhie": (
        lambda d: d["mdvis"] > 0,
        {"lncoins": (0, 4.62), "physlm": (0, 1), "disea": (0, 60)},
    ),
}


def logistic_data(name: str, cols: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, bounds) of a logistic population: breast cancer columns mapped to [-1, 1] by
    public constants, or a statsmodels data set with public bounds."""
    if name == "breast cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X = X[:, cols]
        X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
        return X, y, np.tile([-1.0, 1.0], (X.shape[1], 1))
    import statsmodels.api as sm

    frame = getattr(sm.datasets, name).load_pandas().data
    response, columns = STATSMODELS_DATA[name]
    X = frame[list(columns)].to_numpy(float)
    return X, response(frame).to_numpy(int), np.array(list(columns.values()), float)


def cell(kind: str, data: str, cols: list[int], n: int, epsilon: float, reps: int) -> dict:
    X, y, bounds = logistic_data(data, cols)
    fit = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    truth = np.r_[fit.intercept_, fit.coef_[0]]
    kw = {"method": "noisy_gd", "inference": "bootstrap"} if kind == "bootstrap" else {}
    kw = kw or {"inference": "sandwich"}
    rng = np.random.default_rng(2027)
    covered, ratio, plain = [], [], []
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        Xs, ys = X[idx], y[idx]
        D = np.column_stack([np.ones(n), Xs])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m = pv.PrivateLogisticRegression(
                epsilon=epsilon, delta=1e-6, bounds=bounds, random_state=r, **kw
            ).fit(Xs, ys)
        mle, se0 = _logit_se(D, ys)
        plain.append(np.abs(mle - truth) <= 1.959963984540054 * se0)
        ci = m.results_.conf_int().to_numpy()
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        ratio.append(m.results_.bse.to_numpy() / se0)
    given = ~np.isnan(np.array(ratio)).any(axis=1)
    cover = np.mean(np.array(covered)[given], axis=0)
    return {
        "worst": float(cover.min()),
        "mean": float(cover.mean()),
        "mc_se": math.sqrt(0.95 * 0.05 / max(int(given.sum()), 1)),
        "no_se": float(1.0 - given.mean()),
        "ratio": float(np.median(np.mean(np.array(ratio)[given], axis=0))),
        "plain": float(np.min(np.mean(plain, axis=0))),
    }


CELLS = [
    *(
        ("logistic", data, [1, 8] if data == "breast cancer" else [], n, eps)
        for data in ("breast cancer", "fair", "randhie")
        for n, eps in ((2_000, 1.0), (10_000, 0.5), (10_000, 1.0), (10_000, 4.0), (100_000, 1.0))
    ),
]
BOOTSTRAP_CELLS = [("bootstrap", "breast cancer", [1, 8], n, 1.0) for n in (2_000, 10_000)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--bootstrap", action="store_true")
    parser.add_argument("--only", default=None, help="run only the cells of this model kind")
    args = parser.parse_args(argv)
    print(
        "| model | data (columns) | n | epsilon | worst coverage | mean coverage | MC se "
        "| no SE | width / non-private | non-private worst |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind, data, cols, n, eps in CELLS + BOOTSTRAP_CELLS * args.bootstrap:
        if args.only is not None and kind != args.only:
            continue
        c = cell(kind, data, cols, n, eps, args.reps)
        print(
            f"| {kind} | {data} {cols or ''} | {n} | {eps:g} | {c['worst']:.3f} | {c['mean']:.3f} "
            f"| {c['mc_se']:.3f} | {c['no_se']:.2f} | {c['ratio']:.2f} | {c['plain']:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Private linear regression against the private constant predictor (issue 31, item 5).

Regression data shipped with scikit-learn and statsmodels: ``diabetes`` (442 x 10), ``fair``
(affairs; 6,366 x 8), ``randhie`` (mdvis; 20,190 x 9), ``anes96`` (selfLR; 944 x 10).
Features and response are mapped to [-1, 1] by the min and max of the whole data set
(treated as public bounds). Each replication splits 70/30 at random, draws a training set
of size n from the 70% with replacement and scores test MSE on the held-out 30%.

Methods: privest's default ``PrivateLinearRegression`` (``method="auto"``), the paper's
AdaSSP (``method="adassp"``, the previous default's choice at these settings), the private
constant predictor (the private mean of y at the same total (epsilon, delta): one discrete
Gaussian release of the sum, sensitivity hi - lo, drawn from the generator the models get
for the same seed, so that where the default releases the constant the two are equal) and
diffprivlib's ``LinearRegression`` (pure epsilon-DP; its median, as it diverges in some
fits). A cell is flagged when the default's mean test MSE is above the constant's, with the
z of the paired difference.

Run in the bench venv: ``.venv-bench/bin/python benchmarks/bench_private_linear_vs_constant.py``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from bench_central_models import _scale  # features mapped to [-1, 1] by their range

NS = (300, 2000, 10_000)
EPSILONS = (0.5, 1.0, 4.0)
DELTA = 1e-6
DATASETS = ("diabetes", "fair", "randhie", "anes96")


def load(name):
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
    else:
        import statsmodels.api as sm

        target = {"fair": "affairs", "randhie": "mdvis", "anes96": "selfLR"}[name]
        df = getattr(sm.datasets, name).load_pandas().data
        X, y = df.drop(columns=target).to_numpy(float), df[target].to_numpy(float)
    return _scale(X), _scale(y[:, None])[:, 0]


def private_constant(y, eps, seed):
    from privest.accounting.zcdp import zcdp_rho_for
    from privest.models.linear import private_mean_response
    from privest.rng import make_rng

    rho = zcdp_rho_for(eps, DELTA)  # the model's generator for random_state=seed: paired noise
    return private_mean_response(y, np.array([-1.0, 1.0]), rho, make_rng(seed))


def cell(X, y, n, eps, reps):
    """(reps, 4) test MSE: default, adassp, constant, diffprivlib."""
    from diffprivlib.models import LinearRegression as DPLR

    import privest as pv

    kw = dict(epsilon=eps, delta=DELTA, bounds=(-1, 1), y_bounds=(-1, 1))
    out = np.empty((reps, 4))
    for r in range(reps):
        rng = np.random.default_rng(10_000 * r + n)
        idx = rng.permutation(y.size)
        k = int(0.7 * y.size)
        tr, te = rng.choice(idx[:k], n, replace=True), idx[k:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            preds = [
                pv.PrivateLinearRegression(**kw, random_state=r).fit(X[tr], y[tr]).predict(X[te]),
                pv.PrivateLinearRegression(**kw, method="adassp", random_state=r)
                .fit(X[tr], y[tr])
                .predict(X[te]),
                np.full(te.size, private_constant(y[tr], eps, r)),
                DPLR(epsilon=eps, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=r)
                .fit(X[tr], y[tr])
                .predict(X[te]),
            ]
        out[r] = [np.mean((p - y[te]) ** 2) for p in preds]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    args = ap.parse_args(argv)
    flagged = []
    for name in args.datasets.split(","):
        X, y = load(name)
        print(f"\n**{name}** (test MSE, mean ± MC SE; diffprivlib median; {args.reps} reps)\n")
        print("| n | eps | privest default | privest adassp | private constant | diffprivlib |")
        print("|---|---|---|---|---|---|")
        for n in NS:
            for eps in EPSILONS:
                res = cell(X, y, n, eps, args.reps)
                se = res.std(axis=0, ddof=1) / np.sqrt(args.reps)
                txt = [f"{res[:, j].mean():.4f} ± {se[j]:.4f}" for j in range(3)]
                txt.append(f"{np.median(res[:, 3]):.3g}")
                print(f"| {n} | {eps:g} | " + " | ".join(txt) + " |", flush=True)
                diff = res[:, 0] - res[:, 2]
                if diff.mean() > 0:
                    z = diff.mean() / (diff.std(ddof=1) / np.sqrt(args.reps))
                    flagged.append(f"{name} n={n} eps={eps:g}: +{diff.mean():.4f} (z={z:.1f})")
    print("\nCells where the default is above the private constant:")
    print("\n".join(flagged) if flagged else "none")


if __name__ == "__main__":
    main()

"""Predicted against simulated 95% half-widths of the predictors added in issue 29
(docs/accuracy.md, "How the predictions were checked"): the Gaussian mechanism, a table
cell's median, the default logistic model (noisy MM) and the ePTR models of paper 001, at
two n and two epsilons. The ePTR rows are given a release, with the predicted and the
simulated chance of refusal.

    python benchmarks/bench_accuracy_predictions.py [--reps 300]

Each simulation uses fresh seeds; the simulated 95% quantile of |error| has a relative Monte
Carlo SE of about 5% at 300 draws (3% at 2,000).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

import privest as pv
from privest.accuracy import predict_gaussian, predict_model, predict_table
from privest.errors import NothingReleasedWarning
from privest.mechanisms.gaussian import GaussianMechanism
from privest.models.eptr_bayes import EPTRBayesClassifier
from privest.models.eptr_nw import EPTRKernelRegressor
from privest.models.eptr_ols import EPTRLinearRegression


def _q95(err: list[float] | np.ndarray) -> float:
    err = np.abs(np.asarray(err, dtype=float))
    return float(np.quantile(err, 0.95)) if err.size else math.nan


def gaussian(n: int, eps: float, reps: int) -> tuple[float, float, int]:
    """A mean over [0, 100] by the Gaussian mechanism: sensitivity 100 / n, delta 1e-6."""
    mech = GaussianMechanism(epsilon=eps, delta=1e-6, sensitivity=100.0 / n)
    rng = np.random.default_rng(n + int(100 * eps))
    err = [float(mech.release(42.0, rng).value) - 42.0 for _ in range(reps * 5)]
    return predict_gaussian(mech).half_width, _q95(err), len(err)


def table_median(n: int, eps: float, reps: int) -> tuple[float, float, int]:
    """A cell's median of n people (one row each), data normal(50, 15) on [0, 100]."""
    bounds = {"x": (0.0, 100.0)}
    kw = dict(epsilon=eps, max_groups=1, max_rows=1, inference="none")
    ref = {"shape": "normal", "sd": 15.0}
    acc = predict_table(["median:x"], cell_n=n, bounds=bounds, reference=ref, **kw)[0][0]
    rng = np.random.default_rng(n + int(100 * eps))
    keys = pd.DataFrame({"g": ["a", "b"]})
    err = []
    for seed in range(reps // 2):
        df = pd.DataFrame(
            {
                "pid": np.arange(2 * n),
                "g": np.repeat(["a", "b"], n),
                "x": np.clip(rng.normal(50.0, 15.0, 2 * n), 0.0, 100.0),
            }
        )
        out = pv.tabulate(
            df, by="g", unit="pid", aggregates={"x": "median"}, bounds=bounds, keys=keys,
            rng=seed, **kw,
        )  # fmt: skip
        truth = [np.quantile(df.x[df.g == k], 0.5, method="inverted_cdf") for k in "ab"]
        err += list(out["x_median"].to_numpy() - np.array(truth))
    return acc.half_width, _q95(err), len(err)


def logistic(n: int, eps: float, reps: int) -> tuple[float, float, int]:
    """coef x0 of the default PrivateLogisticRegression (noisy MM), 3 features uniform on
    [-1, 1], around the penalised optimum on the sample (fits of one data set)."""
    rng = np.random.default_rng(n + int(100 * eps))
    beta, icpt = np.array([1.0, -0.5, 0.5]), -0.3
    x = rng.uniform(-1, 1, (n, 3))
    y = (rng.random(n) < expit(x @ beta + icpt)).astype(float)
    model = pv.PrivateLogisticRegression(epsilon=eps, delta=1e-6, bounds=(-1, 1))
    acc = predict_model(model, n=n, coef=beta, intercept=icpt)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [model.set_params(random_state=s).fit(x, y).coef_[0, 0] for s in range(reps)]
    l2, xc = model.l2_, np.c_[x, np.ones(n)]
    opt = minimize(
        lambda th: np.mean(np.logaddexp(0, xc @ th) - y * (xc @ th)) + 0.5 * l2 * th @ th,
        np.zeros(4),
        jac=lambda th: xc.T @ (expit(xc @ th) - y) / n + l2 * th,
        method="BFGS",
        options={"gtol": 1e-12},
    ).x
    return acc.half_width, _q95(np.array(fits) - opt[0]), reps


def _eptr(model, n, reps, data, released, noise, **kw):
    """(predicted hw, simulated hw given a release, predicted and simulated refusal)."""
    acc = predict_model(model, n=n, **kw)[0]
    rng = np.random.default_rng(n)
    err, refused = [], 0
    for s in range(reps):
        x, y = data(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NothingReleasedWarning)
            fit = model.set_params(random_state=s).fit(x, y)
        if released(fit):
            err.append(noise(fit, x, y))
        else:
            refused += 1
    return acc.half_width, _q95(err), len(err), acc.refusal, refused / reps


def eptr_ols(n: int, eps: float, reps: int):
    """coef x0 of EPTRLinearRegression (c0="auto"), rows uniform in the unit ball, p = 3."""

    def data(rng):
        z = rng.standard_normal((n, 3))
        x = z / np.linalg.norm(z, axis=1, keepdims=True) * rng.random((n, 1)) ** (1 / 3)
        return x, np.clip(x @ np.array([0.4, -0.3, 0.2]) + 0.1 * rng.standard_normal(n), -1, 1)

    model = EPTRLinearRegression(epsilon=eps, delta=1e-6)
    return _eptr(
        model, n, reps, data, lambda f: f.released_,
        lambda f, x, y: f.coef_[0] - f.explain(x, y)["estimate"][0], n_features=3,
    )  # fmt: skip


def eptr_bayes(n: int, eps: float, reps: int):
    """A class mean's coordinate of EPTRBayesClassifier (c0="auto"), 2 equal classes, 2
    features uniform on [-1, 1], x_radius 2 (released means projected to the ball)."""

    def data(rng):
        return rng.uniform(-1, 1, (n, 2)), rng.integers(0, 2, n)

    model = EPTRBayesClassifier(epsilon=eps, delta=1e-6, classes=[0, 1], x_radius=2.0, c0="auto")
    acc_index = 2  # "mean 0 x0"
    hw, sim, k, r, rs = _eptr(
        model, n, reps, data, lambda f: f.released_,
        lambda f, x, y: f.means_[0, 0] - f.explain(x, y)["means"][0, 0], n_features=2,
    )  # fmt: skip
    return predict_model(model, n=n, n_features=2)[acc_index].half_width, sim, k, r, rs


def eptr_nw(n: int, eps: float, reps: int):
    """EPTRKernelRegressor at the query 0.5 (c0 0.3), features uniform on [0, 1], f = 0.1
    sin(3x), y_radius 1 (released values clipped to [-1, 1])."""

    def data(rng):
        x = rng.uniform(0, 1, (n, 1))
        return x, 0.1 * np.sin(3 * x[:, 0])

    model = EPTRKernelRegressor(query_points=[[0.5]], epsilon=eps, delta=1e-6)
    return _eptr(
        model, n, reps, data, lambda f: f.released_[0],
        lambda f, x, y: f.estimates_[0] - f.explain(x, y)["estimate"][0],
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 2.0])
    args = ap.parse_args(argv)
    rows = [
        ("gaussian mean (delta 1e-6)", gaussian),
        ("table cell median", table_median),
        ("logistic coef (noisy_mm)", logistic),
        ("ePTR-OLS coef (auto c0)", eptr_ols),
        ("ePTR-Bayes class mean", eptr_bayes),
        ("ePTR-NW at 0.5", eptr_nw),
    ]
    head = f"{'quantity (mechanism)':30} {'n':>6} {'eps':>4} {'predicted':>10} {'simulated':>10}"
    print(head + f" {'draws':>6} {'refusal pred':>12} {'refusal sim':>11}")
    start = time.perf_counter()
    for name, fn in rows:
        for n in args.ns:
            for eps in args.epsilons:
                out = fn(n, eps, args.reps)
                pred, sim, k = out[:3]
                line = f"{name:30} {n:>6} {eps:>4g} {pred:>10.4g} {sim:>10.4g} {k:>6}"
                if len(out) > 3:
                    line += f" {out[3]:>12.3g} {out[4]:>11.3g}"
                print(line, flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()

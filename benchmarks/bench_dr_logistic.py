"""DR logistic regression on a ZIL release of n = 10^6 records x 10 attributes.

Reports the time of ``DRLogisticRegression(method="dr").fit`` (multi-start solve plus
sandwich standard errors) as a ratio to scikit-learn's unpenalised
``LogisticRegression`` on the raw data, timed in the same run: medians of interleaved
repeats, in wall time and in CPU time (the latter is stable when other jobs share the
machine). Goal: within 2x at n = 10^4, 10^5, 10^6 (issue 31).

    python benchmarks/bench_dr_logistic.py [--n 1000000] [--d 10]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

import privest as pv
from privest.learn.estimators import DRLogisticRegression


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats (medians)")
    args = parser.parse_args(argv)
    n, d = args.n, args.d
    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(scale=0.5, size=(n, d)), -1, 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ np.ones(d))))).astype(float)
    rel = pv.ZILMechanism(lam=0.25, zero_prob=0.2, bounds=[(-1, 1)] * d).release(
        x, rng=pv.make_rng(1)
    )

    def time_sklearn() -> tuple[float, float, LogisticRegression]:
        w0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():  # scikit-learn >= 1.8 deprecates penalty=None
            warnings.simplefilter("ignore", FutureWarning)
            ref = LogisticRegression(penalty=None, max_iter=1000).fit(x, y)
        return time.perf_counter() - w0, time.process_time() - c0, ref

    def time_dr() -> tuple[float, float, DRLogisticRegression]:
        w0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = DRLogisticRegression(method="dr").fit(rel, y)
        return time.perf_counter() - w0, time.process_time() - c0, est

    # interleaved repeats, medians: robust to other jobs on the machine
    runs_sk, runs_dr = [], []
    for _ in range(args.repeats):
        runs_sk.append(time_sklearn())
        runs_dr.append(time_dr())
    t_sk, c_sk = (float(np.median([r[i] for r in runs_sk])) for i in (0, 1))
    t_dr, c_dr = (float(np.median([r[i] for r in runs_dr])) for i in (0, 1))
    ref, est = runs_sk[-1][2], runs_dr[-1][2]
    err_dr = float(np.max(np.abs(est.coef_[1:] - 1)))
    err_sk = float(np.max(np.abs(ref.coef_[0] - 1)))
    print(f"DR logistic regression, n={n:,}, d={d}")
    print(
        f"  scikit-learn LogisticRegression (raw data): {t_sk:.2f} s, max |coef - 1| {err_sk:.3f}"
    )
    print(
        f"  privest DRLogisticRegression (release):     {t_dr:.2f} s, max |coef - 1| {err_dr:.3f}"
        f" (SE about {float(np.mean(est.stderr_[1:])):.3f})"
    )
    print(f"  ratio {t_dr / t_sk:.2f}x wall, {c_dr / c_sk:.2f}x CPU time (goal <= 2x)")
    return {"sklearn_s": t_sk, "dr_s": t_dr, "ratio": t_dr / t_sk, "cpu_ratio": c_dr / c_sk}


if __name__ == "__main__":
    main()

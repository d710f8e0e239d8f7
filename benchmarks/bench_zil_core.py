"""Paper 000's estimators: the library fit against the batched kernel with R = 1.

One ZIL release (n = 20,000, p = 6, X ~ N(0, I) truncated to [-1, 1]^6, beta = 1_6,
lam = 0.5 in units of the range 2, zero_prob = 0.2: Table 2's design). For each method
(naive, SL, SDR, DR) it times ``DRLogisticRegression(method, inference="none").fit`` and
the batched path the tables use (``corrected_newton`` on a ``BatchedObjective`` of one
replicate, designs built in the timed region), best of ``--repeat`` interleaved runs, and
prints the ratio library / batched (goal: <= 1) and the largest coefficient difference.

    python benchmarks/bench_zil_core.py [--n 20000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import special

import privest as pv
from privest.learn.batched import BatchedObjective, corrected_newton
from privest.learn.estimators import DRLogisticRegression
from privest.learn.losses import LogisticLoss

METHODS = ("naive", "sl", "sdr", "dr")


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    n, p = args.n, 6
    rng = np.random.default_rng(0)
    lo = special.ndtr(-1.0)
    x = special.ndtri(rng.uniform(lo, 1.0 - lo, size=(n, p)))
    y = (rng.random(n) < special.expit(x.sum(axis=1))).astype(float)
    rel = pv.ZILMechanism(lam=0.5, zero_prob=0.2, bounds=[(-1, 1)] * p).release(
        x, rng=pv.make_rng(1)
    )
    noise_var = (0.5 * 2.0) ** 2
    loss = LogisticLoss()

    def library(m: str) -> np.ndarray:
        est = DRLogisticRegression(method=m, fit_intercept=False, inference="none")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return est.fit(rel, y).coef_

    def batched(m: str) -> np.ndarray:
        designs: dict = {}
        x1, x2, yy = rel.x1[None], rel.x2[None], y[None]

        def problem(k: str) -> BatchedObjective:
            return BatchedObjective.from_copies(loss, k, x1, x2, yy, 0.2, noise_var, designs)

        fits, _ = corrected_newton(problem, [m], np.zeros((1, p)), -10.0, 10.0)
        return fits[m][0][0]

    out: dict[str, float] = {}
    print(f"paper-000 logistic fits, one release, n={n:,}, p={p} (best of {args.repeat})")
    for m in METHODS:
        t_lib, t_bat = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            a = library(m)
            t_lib.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            b = batched(m)
            t_bat.append(time.perf_counter() - t0)
        tl, tb = min(t_lib), min(t_bat)
        diff = float(np.max(np.abs(a - b)))
        print(
            f"  {m:5s} library {tl * 1e3:7.1f} ms   batched R=1 {tb * 1e3:7.1f} ms   "
            f"ratio {tl / tb:5.2f}   max |coef diff| {diff:.1e}"
        )
        out[f"{m}_library_s"], out[f"{m}_batched_s"], out[f"{m}_ratio"] = tl, tb, tl / tb
    return out


if __name__ == "__main__":
    main()

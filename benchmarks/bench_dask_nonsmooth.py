"""Check and hinge DR fits out of core against the in-memory fits (issue 20; paper 000,
Secs. 4 and 7.3): the tolerance table of docs/scale-out.md, "Nonsmooth losses".

For each seed, a ZIL release of n records (2 features in [-1, 1], lam = 0.3,
zero_prob = 0.3; a 0/1 label and a response with t(3) errors) is fitted in memory
(the LP/DC solvers) and as a :class:`~privest.scale.DaskRelease` of ``--chunk-rows``
chunks (smoothing continuation on partition sums) on a LocalCluster of one in-process
worker. Reports, per fit: the largest coefficient difference in in-memory standard
errors, the exact-objective difference (Dask minus in memory), the largest relative SE
difference, the passes over the records and both wall times (the baseline is the
in-memory fit of the same release, same run).

    python benchmarks/bench_dask_nonsmooth.py [--n 4000 20000] [--seeds 1 2 3]
        [--chunk-rows 900]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from distributed import Client, LocalCluster
from sklearn.base import clone

import privest as pv
from privest.scale import DaskRelease


def make_release(seed: int, n: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 2))
    eta = 0.3 + x @ [1.0, -1.0]
    label = (rng.uniform(size=n) < 1 / (1 + np.exp(-2 * eta))).astype(float)
    resp = eta + rng.standard_t(3, size=n)
    df = pd.DataFrame(np.column_stack([x, label, resp]), columns=list("abyz"))
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds={c: (-1, 1) for c in "ab"})
    return mech.release(df, rng=seed)


FITS = [
    ("naive median", pv.DRQuantileRegressor(method="naive", features=["a", "b"]), "z"),
    ("DR median", pv.DRQuantileRegressor(features=["a", "b"]), "z"),
    ("DR 0.25 quantile", pv.DRQuantileRegressor(quantile=0.25, features=["a", "b"]), "z"),
    ("DR hinge", pv.DRHingeClassifier(features=["a", "b"]), "y"),
]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[4000, 20000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--chunk-rows", type=int, default=900)
    args = ap.parse_args(argv)
    print(
        "n | seed | fit | coef diff / SE | objective diff | SE rel diff | passes | mem s | dask s"
    )
    local = {"threads_per_worker": 1, "processes": False, "dashboard_address": ":0"}
    with LocalCluster(n_workers=1, **local) as cluster, Client(cluster):
        for n in args.n:
            for seed in args.seeds:
                rel = make_release(seed, n)
                drel = DaskRelease.from_release(rel, chunk_rows=args.chunk_rows)
                for name, est, col in FITS:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        mem = clone(est).fit(rel, col)
                        t1 = time.perf_counter()
                        dsk = clone(est).fit(drel, col)
                        t2 = time.perf_counter()
                    gap = np.max(np.abs(dsk.coef_ - mem.coef_) / mem.stderr_)
                    se = np.max(np.abs(dsk.stderr_ / mem.stderr_ - 1))
                    print(
                        f"{n} | {seed} | {name} | {gap:.3f} | "
                        f"{dsk.objective_ - mem.objective_:.2e} | {se:.2e} | {dsk.passes_} | "
                        f"{t1 - t0:.2f} | {t2 - t1:.2f}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()

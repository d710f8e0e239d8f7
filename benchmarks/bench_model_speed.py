"""Speed of two model fits against their anchors, each timed in the same run (issue 31, "Speed").

Rows, wall and CPU seconds (medians of ``--repeat`` interleaved repeats) and their ratios:

* ``logistic``: ``PrivateLogisticRegression`` (defaults; epsilon 1, delta 1e-6, bounds
  (-1, 1)) against diffprivlib's ``LogisticRegression`` (epsilon 1, ``data_norm`` sqrt(p))
  on the same n x p features, uniform on [-1, 1], with labels from a logistic model (goal
  <= 1x at 10^6 x 20);
* ``median``: ``DRQuantileRegressor`` (the DR median regression with its default sandwich
  standard errors; docs/dr-estimation.md) on a ZIL release of n records (p features in
  [-1, 1], lam 0.3, zero_prob 0.3, a response with t(3) errors) against statsmodels'
  ``QuantReg`` at q = 0.5 (with its default standard errors) on the released X1 of the same
  records (goal <= 1x).

Each row starts with an untimed warm-up at n = 2,000 (lazy imports; the simplex kernel is
compiled by numba on the first median fit).

CPU seconds are the process's (every thread). privest's fits run on one BLAS thread unless
``PRIVEST_BLAS_THREADS`` says otherwise; the anchors on the process's threads, so run with
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`` for a like-for-like ratio (on a loaded machine
OpenBLAS's threads inflate an anchor's CPU time several times over). Run against
another checkout with ``PYTHONPATH=that/src`` for a before/after in one session; the anchors
need the ``bench`` extra.

    python benchmarks/bench_model_speed.py [--rows logistic,median] [--sizes 1e4,1e5,1e6]
        [--median-sizes 1e4,1e5] [--p 20] [--median-p 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    w, c = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    return time.perf_counter() - w, time.process_time() - c


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, np.ndarray]:
    """Median (wall, CPU) of each function over ``repeat`` rounds, one call each per round."""
    runs: dict[str, list] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            runs[k].append(timed(fn))
    return {k: np.median(np.array(v), axis=0) for k, v in runs.items()}


def logistic_row(n: int, p: int, repeat: int) -> dict[str, np.ndarray]:
    from diffprivlib.models import LogisticRegression as DPLog

    import privest as pv

    rng = np.random.default_rng(n)
    X = rng.uniform(-1, 1, size=(n, p))
    eta = 0.2 + X @ rng.normal(0, 1 / np.sqrt(p), p)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    privest = pv.PrivateLogisticRegression(epsilon=1.0, delta=1e-6, bounds=(-1, 1), random_state=0)
    anchor = DPLog(epsilon=1.0, data_norm=np.sqrt(p), random_state=0)
    return interleaved(
        {"privest": lambda: privest.fit(X, y), "anchor": lambda: anchor.fit(X, y)}, repeat
    )


def median_release(n: int, p: int):
    import pandas as pd

    import privest as pv

    rng = np.random.default_rng(n)
    x = rng.uniform(-1, 1, size=(n, p))
    z = 0.3 + x @ np.linspace(1.0, -1.0, p) + rng.standard_t(3, size=n)
    names = [f"x{j}" for j in range(p)]
    df = pd.DataFrame(np.column_stack([x, z]), columns=[*names, "z"])
    mech = pv.ZILMechanism(lam=0.3, zero_prob=0.3, bounds=dict.fromkeys(names, (-1, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a seeded release: for experiments only
        return mech.release(df, rng=n), names


def median_row(n: int, p: int, repeat: int) -> dict[str, np.ndarray]:
    import statsmodels.api as sm

    import privest as pv

    rel, names = median_release(n, p)
    frame = rel.frame("x1")
    design = sm.add_constant(frame[names].to_numpy())
    z = frame["z"].to_numpy()
    fns = {
        "privest": lambda: pv.DRQuantileRegressor(features=names).fit(rel, "z"),
        "anchor": lambda: sm.QuantReg(z, design).fit(q=0.5),
    }
    return interleaved(fns, repeat)


ROWS = {
    "logistic": ("PrivateLogisticRegression", "diffprivlib LogReg", logistic_row),
    "median": ("DR median regression", "statsmodels QuantReg", median_row),
}


def main(argv: list[str] | None = None) -> list[tuple]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="logistic,median")
    ap.add_argument("--sizes", default="1e4,1e5,1e6", help="n of the logistic row")
    ap.add_argument("--median-sizes", default="1e4,1e5", help="n of the median row")
    ap.add_argument("--p", type=int, default=20, help="features of the logistic row")
    ap.add_argument("--median-p", type=int, default=2, help="features of the median row")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = {
        "logistic": (args.sizes, args.p),
        "median": (args.median_sizes, args.median_p),
    }
    print(
        f"{'row':<27}{'n':>10}{'p':>4}{'wall (s)':>10}{'CPU (s)':>9}  {'anchor':<21}"
        f"{'wall (s)':>9}{'CPU (s)':>9}{'wall x':>8}{'CPU x':>7}",
        flush=True,
    )
    out = []
    for row in args.rows.split(","):
        what, anchor, fn = ROWS[row]
        given, p = sizes[row]
        fn(2000, p, 1)  # warm-up: lazy imports; numba compiles (or loads) the simplex kernel
        for n in (int(float(s)) for s in given.split(",")):
            t = fn(n, p, args.repeat)
            (pw, pc), (aw, ac) = t["privest"], t["anchor"]
            print(
                f"{what:<27}{n:>10,}{p:>4}{pw:>10.3f}{pc:>9.3f}  {anchor:<21}"
                f"{aw:>9.3f}{ac:>9.3f}{pw / aw:>8.2f}{pc / ac:>7.2f}",
                flush=True,
            )
            out.append((what, n, p, pw, pc, anchor, aw, ac))
    return out


if __name__ == "__main__":
    main()

"""Two-stage quantiles against the one-stage staircase PLM (issue 16, requirement 4).

Exact E|release - x_(k)| (k = clip(ceil(q n), 1, n); the median: numpy's) of
``TwoStage`` (half of eps on a 16-bin noisy histogram, then the staircase PLM on the
shrunk bounds; exact bin law mixed with exact lattice laws) and of ``PiecewiseLaplace``'s
default on the full bounds, per cell: normal, lognormal and bimodal data on [-10, 10], n in
{20, 100, 1000}, eps in {0.1, 0.5, 1, 4}, q in {0.1, 0.5, 0.9}, bounds tight (-10, 10) and
wide (-1000, 1000). Prints the ratio two-stage / one-stage grouped by bounds and by
``eps min(k, n + 1 - k)``.

``--speed``: wall seconds of ``private_median(x, mechanism="two_stage")`` (with its
interval, the default, and with ``inference="none"``) against ``numpy.sort`` of the same
``x`` (uniform on the bounds (-1, 1), eps 1) at each of ``--sizes``, best of ``--repeat`` in
a fresh process per round; with ``--baseline SRC`` the code in SRC is timed in the same
rounds, interleaved (issue 31: goal <= 2x the sort).

    python benchmarks/bench_two_stage.py
    python benchmarks/bench_two_stage.py --speed --baseline /path/to/main/src --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from privest.datasets.synthetic_plm import make_plm_data
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.profiles.reaches import quantile_rank
from privest.mechanisms.two_stage import TwoStage

KINDS = ("normal", "lognormal", "bimodal")
BOUNDS = {"tight": (-10.0, 10.0), "wide": (-1000.0, 1000.0)}
BINS = (0, 2, 5, 10, 20, 50, np.inf)


SRC = str(Path(__file__).resolve().parents[1] / "src")

_SPEED = """
import json, time, numpy as np
import privest as pv
n, repeat = SIZE, REPEAT
x = np.random.default_rng(n).uniform(-1, 1, n)
def best(f):
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); f(); times.append(time.perf_counter() - t)
    return min(times)
kw = dict(epsilon=1.0, bounds=(-1.0, 1.0), mechanism="two_stage", rng=0)
out = {"sort": best(lambda: np.sort(x)),
       "median": best(lambda: pv.private_median(x, **kw)),
       "none": best(lambda: pv.private_median(x, inference="none", **kw))}
out["sort"] = min(out["sort"], best(lambda: np.sort(x)))
print(json.dumps(out))
"""


def speed(trees: dict[str, str], sizes: list[int], rounds: int, repeat: int) -> None:
    """The ``--speed`` table (module docstring): per n and tree, the median over rounds of
    each round's seconds and ratio to the sort timed in the same process."""
    print(
        f"{'n':>10} {'code':<9}{'sort s':>9}{'median s':>10}{'ratio':>8}{'none s':>9}{'ratio':>8}"
    )
    for n in sizes:
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        code = _SPEED.replace("REPEAT", str(repeat)).replace("SIZE", str(n))
        for _ in range(rounds):
            for name, src in trees.items():
                env = {**os.environ, "PYTHONPATH": src}
                res = subprocess.run(
                    [sys.executable, "-c", code], env=env, capture_output=True, text=True
                )
                if res.returncode:
                    raise RuntimeError(f"{name} at n = {n} failed:\n{res.stderr[-2000:]}")
                runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
        for name, rs in runs.items():
            med = {k: statistics.median(r[k] for r in rs) for k in ("sort", "median", "none")}
            ratio = {k: statistics.median(r[k] / r["sort"] for r in rs) for k in ("median", "none")}
            print(
                f"{n:>10,} {name:<9}{med['sort']:>9.4f}{med['median']:>10.4f}"
                f"{ratio['median']:>8.2f}{med['none']:>9.4f}{ratio['none']:>8.2f}"
            )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--speed", action="store_true", help="time the release (module docstring)")
    p.add_argument("--baseline", help="the src folder of the code to compare with")
    p.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    if args.speed:
        trees = {"this": SRC, **({"baseline": args.baseline} if args.baseline else {})}
        sizes = [int(float(v)) for v in args.sizes.split(",")]
        speed(trees, sizes, args.rounds, args.repeat)
        return
    accuracy()


def accuracy() -> None:
    """The E|err| table (module docstring)."""
    rng = np.random.default_rng(4)
    rows = []
    for kind in KINDS:
        for n in (20, 100, 1000):
            x = make_plm_data(kind, n, rng, BOUNDS["tight"])
            for bname, bounds in BOUNDS.items():
                for eps in (0.1, 0.5, 1.0, 4.0):
                    for q in (0.1, 0.5, 0.9):
                        k = quantile_rank(q, n)
                        ref = float(np.median(x) if q == 0.5 else np.sort(x)[k - 1])
                        stat = "median" if q == 0.5 else f"quantile:{q}"
                        kw = dict(epsilon=eps, bounds=bounds)
                        one = PiecewiseLaplace(stat, **kw).law(x).error_mean_abs(reference=ref)
                        two = TwoStage(stat, **kw).law(x).error_mean_abs(reference=ref)
                        rows.append((bname, eps * min(k, n + 1 - k), two / one))
    print(
        f"{'bounds':<7}{'eps min(k,n+1-k)':<18}{'cells':>6}{'geomean':>9}{'best':>8}"
        f"{'worst':>8}{'better':>8}"
    )
    for bname in BOUNDS:
        for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
            r = np.array([t for b, z, t in rows if b == bname and lo <= z < hi])
            if r.size:
                print(
                    f"{bname:<7}[{lo:g}, {hi:g}){'':<10}{r.size:>6}{np.exp(np.log(r).mean()):>9.3f}"
                    f"{r.min():>8.3f}{r.max():>8.3f}{int((r < 1).sum()):>8}"
                )


if __name__ == "__main__":
    main()

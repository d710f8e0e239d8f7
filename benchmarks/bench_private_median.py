"""private_median / private_quantile (piecewise Laplace, paper 002): speed and accuracy
against the anchors.

Speed: ``privest.private_median`` on n = 10^6 as a ratio to ``numpy.sort`` of the same
data, timed in the same run (best of ``--repeat``). Goal: within 2x.

Accuracy, for the median and the 0.9-quantile: median absolute error over ``--reps``
data sets per setting (one release per data set and method, same data for all), at the
same epsilon and bounds, for PLM / INV / smooth sensitivity / Laplace (privest) and the
anchors users would pick. Median: diffprivlib ``tools.median`` (exponential mechanism
over data gaps), OpenDP ``make_private_quantile`` at alpha = 0.5 (candidates: a grid of
2001 points over the bounds, scale calibrated for one swap = distance 2 under the
symmetric distance with known n), PyDP ``Median`` (add/remove neighbours: run at eps/2
so that it is eps-DP under swap, the relation all the others use). 0.9-quantile:
diffprivlib ``tools.quantile(quant=0.9)`` and OpenDP ``make_private_quantile`` at
alpha = 0.9 (same grid and calibration). The truth is the statistic in privest's
convention (median: numpy's; quantile: the order statistic of rank ceil(q n)). Anchors
that do not import (the bench venv ``.venv-bench`` has them, ``.venv`` usually not) are
listed as skipped.

    python benchmarks/bench_private_median.py [--quick] [--reps 40] [--n-speed 1000000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from privest.datasets.synthetic_plm import PLM_BOUNDS as BOUNDS
from privest.datasets.synthetic_plm import PLM_DISTRIBUTIONS as DISTS
from privest.datasets.synthetic_plm import make_plm_data as draw
from privest.mechanisms.profiles import quantile_rank
from privest.models.statistics import private_median, private_statistic


def speed(n: int, repeat: int) -> dict[str, float]:
    x = draw("normal", n, np.random.default_rng(0))
    t_sort, t_plm = [], []
    for i in range(repeat):
        t0 = time.perf_counter()
        np.sort(x)
        t_sort.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        private_median(x, epsilon=1.0, bounds=BOUNDS, rng=i)
        t_plm.append(time.perf_counter() - t0)
    s, p = min(t_sort), min(t_plm)
    print(
        f"speed, n = {n:,} (best of {repeat}): numpy.sort {s * 1e3:.1f} ms, "
        f"private_median (PLM) {p * 1e3:.1f} ms, ratio {p / s:.2f}x (goal <= 2x)"
    )
    print(
        f"  medians: numpy.sort {np.median(t_sort) * 1e3:.1f} ms, "
        f"private_median {np.median(t_plm) * 1e3:.1f} ms"
    )
    return {"sort_s": s, "plm_s": p, "ratio": p / s}


def _anchors(n: int, eps: float, q: float) -> tuple[dict[str, Callable], dict[str, str]]:
    """Anchor release functions x -> float for one (n, eps) and quantile level q (0.5 is
    the median); and the skipped ones with the reason."""
    out: dict[str, Callable] = {}
    skipped: dict[str, str] = {}
    try:
        import warnings

        from diffprivlib.tools import median as dpl_median
        from diffprivlib.tools import quantile as dpl_quantile

        def dpl(x: np.ndarray, rng: np.random.Generator) -> float:
            seed = int(rng.integers(2**31))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if q == 0.5:
                    return float(dpl_median(x, epsilon=eps, bounds=BOUNDS, random_state=seed))
                return float(dpl_quantile(x, q, epsilon=eps, bounds=BOUNDS, random_state=seed))

        out["diffprivlib"] = dpl
    except Exception as exc:  # noqa: BLE001 - report any import failure
        skipped["diffprivlib"] = f"{type(exc).__name__}: {exc}"
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        cands = list(np.linspace(*BOUNDS, 2001))
        dom = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n)

        def make(scale: float):
            return dp.m.make_private_quantile(
                dom,
                dp.symmetric_distance(),
                dp.max_divergence(),
                candidates=cands,
                alpha=q,
                scale=scale,
            )

        scale = dp.binary_search_param(make, d_in=2, d_out=eps)
        meas = make(scale)
        out["OpenDP (grid 2001)"] = lambda x, rng: float(meas(list(map(float, x))))
    except Exception as exc:  # noqa: BLE001
        skipped["OpenDP"] = f"{type(exc).__name__}: {exc}"
    if q == 0.5:
        try:
            from pydp.algorithms.laplacian import Median

            def pydp_median(x: np.ndarray, rng: np.random.Generator) -> float:
                m = Median(
                    epsilon=eps / 2, lower_bound=BOUNDS[0], upper_bound=BOUNDS[1], dtype="float"
                )
                return float(m.quick_result(list(map(float, x))))

            out["PyDP (eps/2)"] = pydp_median
        except Exception as exc:  # noqa: BLE001
            skipped["PyDP"] = f"{type(exc).__name__}: {exc}"
    return out, skipped


OURS = {
    "PLM": "piecewise_laplace",
    "INV": "inverse_sensitivity",
    "SS": "smooth_sensitivity",
    "Laplace": "laplace",
}
#: statistic name (privest) -> quantile level of the anchors
STATISTICS = {"median": 0.5, "quantile:0.9": 0.9}


def _truth(x: np.ndarray, statistic: str) -> float:
    """The statistic in privest's convention (docs/piecewise-laplace.md, "Quick start")."""
    if statistic == "median":
        return float(np.median(x))
    q = STATISTICS[statistic]
    return float(np.sort(x)[quantile_rank(q, x.size) - 1])


def accuracy(
    reps: int, ns: tuple[int, ...], epsilons: tuple[float, ...], statistic: str = "median"
) -> dict:
    """Median absolute error of every method; ``statistic`` is a key of :data:`STATISTICS`."""
    q = STATISTICS[statistic]
    rng = np.random.default_rng(1)
    results: dict[tuple, dict[str, np.ndarray]] = {}
    skipped_all: dict[str, str] = {}
    for n in ns:
        for eps in epsilons:
            anchors, skipped = _anchors(n, eps, q)
            skipped_all.update(skipped)
            for dist in DISTS:
                errs: dict[str, list[float]] = {}
                for _ in range(reps):
                    x = draw(dist, n, rng)
                    truth = _truth(x, statistic)
                    for name, mech in OURS.items():
                        v = private_statistic(
                            x,
                            statistic,
                            epsilon=eps,
                            bounds=BOUNDS,
                            mechanism=mech,
                            rng=int(rng.integers(2**31)),
                        )
                        errs.setdefault(name, []).append(abs(v - truth))
                    for name, fn in anchors.items():
                        errs.setdefault(name, []).append(abs(fn(x, rng) - truth))
                results[dist, n, eps] = {k: np.asarray(v) for k, v in errs.items()}
    methods = list(next(iter(results.values())))
    anchor_names = [m for m in methods if m not in OURS]
    boot = np.random.default_rng(2)
    print(
        f"\nmedian absolute error of the {statistic}, {reps} data sets per setting, bounds "
        f"{BOUNDS} (best in each row marked *)"
    )
    print(f"{'setting':<30}" + "".join(f"{m:>20}" for m in methods))
    wins, worse = 0, []
    for (dist, n, eps), errs in results.items():
        row = {m: float(np.median(v)) for m, v in errs.items()}
        best = min(row.values())
        cells = "".join(f"{row[m]:>19.4g}{'*' if row[m] == best else ' '}" for m in methods)
        print(f"{dist + f' n={n} eps={eps:g}':<30}{cells}")
        wins += all(row["PLM"] <= row[a] for a in anchor_names)
        idx = boot.integers(0, reps, size=(300, reps))  # bootstrap over data sets
        for a in anchor_names:
            diff = np.median(errs["PLM"][idx], axis=1) - np.median(errs[a][idx], axis=1)
            if row["PLM"] - row[a] > 2 * diff.std():
                worse.append(f"{dist} n={n} eps={eps:g} vs {a} ({row['PLM']:.3g} vs {row[a]:.3g})")
    if anchor_names:
        print(
            f"PLM at or below every anchor in {wins} of {len(results)} settings "
            f"(anchors: {', '.join(anchor_names)})"
        )
    else:
        wins = 0
        print("no anchor imported: nothing to compare PLM with (see the skipped list)")
    print(f"PLM worse than an anchor by more than 2 bootstrap SE in {len(worse)} cases:")
    for line in worse:
        print(f"  {line}")
    for name, why in skipped_all.items():
        print(f"skipped {name} ({statistic}): {why}")
    return {
        "results": results,
        "wins": wins,
        "settings": len(results),
        "worse": worse,
        "skipped": skipped_all,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer settings and reps")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--n-speed", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    reps = args.reps or (10 if args.quick else 100)
    ns = (1_000,) if args.quick else (1_000, 10_000)
    epsilons = (1.0,) if args.quick else (0.1, 1.0)
    out = {"speed": speed(args.n_speed, args.repeat)}
    for statistic in STATISTICS:
        out[f"accuracy {statistic}"] = accuracy(reps, ns, epsilons, statistic)
    return out


if __name__ == "__main__":
    main()

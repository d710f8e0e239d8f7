"""The rank target of private quantiles: x_(k) against half a rank inward (issue 16, req. 4).

Exact E|release - x_(k)|, k = clip(ceil(q n), 1, n), of the staircase PLM on the default
lattice (``LatticeProfileLaw``, ``shape="stair"``) with ``target="rank"`` and
``target="inward"`` (the average of x_(k) and its inner neighbour), on one data set per
(data, n, bounds), for every eps and q; the ratio inward / rank is grouped by
``eps min(k, n + 1 - k)``, the quantity of the public rule
(:func:`privest.mechanisms.profiles.lattice.inward_target`). Both are measured against the
same x_(k), so the comparison is in the benchmark's convention (docs/piecewise-laplace.md).

    python benchmarks/bench_rank_target.py [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np

from privest.datasets.synthetic_plm import make_plm_data
from privest.mechanisms.lattice_plm import LatticeProfileLaw
from privest.mechanisms.profiles.reaches import quantile_rank

KINDS = ("normal", "lognormal", "uniform", "bimodal")
BOUNDS = {"tight": (-10.0, 10.0), "wide": (-1000.0, 1000.0)}
BINS = (0, 1, 2, 4, 8, 16, 32, np.inf)


def measure(ns, epsilons, qs, seed: int = 3) -> list[tuple[float, float]]:
    """(eps min(k, n + 1 - k), inward / rank) per cell."""
    rng = np.random.default_rng(seed)
    out = []
    for kind in KINDS:
        for n in ns:
            x = make_plm_data(kind, n, rng, BOUNDS["tight"])
            xs = np.sort(x)
            for bounds in BOUNDS.values():
                for eps in epsilons:
                    for q in qs:
                        k = quantile_rank(q, n)
                        if 2 * k == n + 1:
                            continue
                        ref = float(xs[k - 1])
                        err = [
                            LatticeProfileLaw.for_statistic(
                                x,
                                "quantile",
                                quantile=q,
                                epsilon=eps,
                                bounds=bounds,
                                shape="stair",
                                target=t,
                            ).error_mean_abs(reference=ref)
                            for t in ("rank", "inward")
                        ]
                        out.append((eps * min(k, n + 1 - k), err[1] / err[0]))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    ns = (20, 200) if args.quick else (20, 50, 200, 1000, 10_000)
    eps = (0.1, 1.0, 4.0) if args.quick else (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
    qs = (0.1, 0.9) if args.quick else (0.01, 0.05, 0.1, 0.25, 0.75, 0.9, 0.95, 0.99)
    rows = measure(ns, eps, qs)
    z = np.array([r[0] for r in rows])
    ratio = np.array([r[1] for r in rows])
    print(f"{'eps min(k, n+1-k)':<20}{'cells':>6}{'best':>8}{'geomean':>8}{'worst':>8}{'worse':>7}")
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        m = (z >= lo) & (z < hi)
        if m.any():
            r = ratio[m]
            geo = np.exp(np.log(r).mean())
            print(
                f"[{lo:g}, {hi:g}){'':<12}{m.sum():>6}{r.min():>8.3f}{geo:>8.3f}"
                f"{r.max():>8.3f}{int((r > 1 + 1e-12).sum()):>7}"
            )
    print(f"{len(rows)} cells")


if __name__ == "__main__":
    main()

"""Two-stage quantiles against the one-stage staircase PLM (issue 16, requirement 4).

Exact E|release - x_(k)| (k = clip(ceil(q n), 1, n); the median: numpy's) of
``TwoStage`` (half of eps on a 16-bin noisy histogram, then the staircase PLM on the
shrunk bounds; exact bin law mixed with exact lattice laws) and of ``PiecewiseLaplace``'s
default on the full bounds, per cell: normal, lognormal and bimodal data on [-10, 10], n in
{20, 100, 1000}, eps in {0.1, 0.5, 1, 4}, q in {0.1, 0.5, 0.9}, bounds tight (-10, 10) and
wide (-1000, 1000). Prints the ratio two-stage / one-stage grouped by bounds and by
``eps min(k, n + 1 - k)``.

    python benchmarks/bench_two_stage.py
"""

from __future__ import annotations

import numpy as np

from privest.datasets.synthetic_plm import make_plm_data
from privest.mechanisms.piecewise_laplace import PiecewiseLaplace
from privest.mechanisms.profiles.reaches import quantile_rank
from privest.mechanisms.two_stage import TwoStage

KINDS = ("normal", "lognormal", "bimodal")
BOUNDS = {"tight": (-10.0, 10.0), "wide": (-1000.0, 1000.0)}
BINS = (0, 2, 5, 10, 20, 50, np.inf)


def main(argv: list[str] | None = None) -> None:
    """``argv`` is accepted for ``run_all.py`` and ignored (no options)."""
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

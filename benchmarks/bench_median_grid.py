"""Can a public rule send continuous medians and quantiles to a grid? (issue 31, item 2)

Permute-and-flip over a coarse public grid (privest's own, 2^10 to 2^11 steps across the
bounds, or OpenDP's 2001 candidates) beats the default staircase on some continuous data
sets. ``auto`` may read only public inputs (n, epsilon, bounds, resolution, quantile), so
a rule can choose the grid per *public cell* only, for every data set in it at once. This
script measures, per public cell, the exact E|release - np.quantile(x, q)| of the grid over
the default on data of several spreads relative to the bounds, averaged over ``--shifts``
random offsets of the data against the grid (a grid point near the truth is luck, not a
property of the mechanism):

* best ratio: what the grid could gain in that cell (the most favourable spread);
* worst ratio: what it would lose there (the least favourable spread);
* the candidate rule of the issue, "the grid where the exact error law on a reference shape
  predicts a gain" (reference: a normal with the bounds at +-4 sd), and its regret (its
  error over the better of the two) against the default's regret, over every cell;
* the best public rule on these shapes (an oracle that knows them): per cell, the one of
  the two with the smaller geometric-mean regret over the shapes; no rule that reads only
  public inputs does better on them.

Shapes on bounds (0, 100): normal with sd 12.5 (spread over the bounds), 2.5, 0.25 and
0.01 (concentrated), and a Cauchy with scale 1, clipped (heavy tails). All exact laws; OpenDP's
law as in ``bench_private_median.py`` (skipped where it does not import).

    .venv-bench/bin/python benchmarks/bench_median_grid.py [--quick] [--shifts 4]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_private_median import _opendp  # noqa: E402

from privest.models.statistics import statistic_mechanism  # noqa: E402

BOUNDS = (0.0, 100.0)
#: (name, draw(n, rng)) on BOUNDS; the first is the candidate rule's reference shape
SHAPES = (
    ("normal sd 12.5 (reference)", lambda n, g: g.normal(50, 12.5, n)),
    ("normal sd 2.5", lambda n, g: g.normal(50, 2.5, n)),
    ("normal sd 0.25", lambda n, g: g.normal(50, 0.25, n)),
    ("normal sd 0.01", lambda n, g: g.normal(50, 0.01, n)),
    ("Cauchy scale 1", lambda n, g: 50 + g.standard_cauchy(n)),
)
GRID_STEP = 100 / 1024  # offsets are drawn in one step of the coarsest grid


def errors(x0: np.ndarray, q: float, eps: float, shifts: np.ndarray, odp) -> dict[str, float]:
    """Exact E|err| of the default, PF on its grid and OpenDP, averaged over the shifts."""
    stat = "median" if q == 0.5 else f"quantile:{q}"
    default = statistic_mechanism(stat, epsilon=eps, bounds=BOUNDS)
    grid = statistic_mechanism(stat, epsilon=eps, bounds=BOUNDS, mechanism="permute_and_flip")
    out = {"default": 0.0, "PF grid": 0.0}
    if odp is not None:
        out["OpenDP"] = 0.0
    for u in shifts:
        x = np.clip(x0 + u, *BOUNDS)
        t = float(np.quantile(x, q))
        out["default"] += default.law(x).error_mean_abs(reference=t) / shifts.size
        out["PF grid"] += grid.law(x).error_mean_abs(reference=t) / shifts.size
        if odp is not None:
            out["OpenDP"] += odp(x, q, eps, BOUNDS, t) / shifts.size
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few cells only")
    ap.add_argument("--shifts", type=int, default=4, help="random offsets per data set")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(31)
    odp = _opendp()
    ns = (100, 1000) if args.quick else (20, 100, 640, 1000, 10_000, 100_000)
    eps_grid = (1.0,) if args.quick else (0.1, 1.0, 4.0)
    qs = (0.5,) if args.quick else (0.1, 0.5, 0.9)
    shifts = rng.uniform(0, GRID_STEP, args.shifts)
    print(f"{'n':>7}{'eps':>5}{'q':>5}  PF grid / default per shape; OpenDP / default")
    cells, regret_rule, regret_default, regret_oracle = [], [], [], []
    for n in ns:
        data = [(name, draw(n, rng)) for name, draw in SHAPES]
        for eps in eps_grid:
            for q in qs:
                rows = [errors(x, q, eps, shifts, odp) for _, x in data]
                ratio = np.array([r["PF grid"] / r["default"] for r in rows])
                odp_ratio = [r["OpenDP"] / r["default"] for r in rows if "OpenDP" in r]
                grid_regret, keep_regret = (
                    ratio / np.minimum(ratio, 1.0),
                    1 / np.minimum(ratio, 1.0),
                )
                picks_grid = ratio[0] < 1  # the candidate rule: reference shape only
                regret_rule += list(grid_regret if picks_grid else keep_regret)
                regret_default += list(keep_regret)
                # the oracle: per cell, the better of the two over the shapes
                better = np.log(grid_regret).mean() < np.log(keep_regret).mean()
                regret_oracle += list(grid_regret if better else keep_regret)
                cells.append((n, eps, q, ratio, odp_ratio, picks_grid))
                odp_txt = " ".join(f"{v:.3f}" for v in odp_ratio)
                print(
                    f"{n:>7}{eps:>5g}{q:>5g}  {' '.join(f'{v:.3f}' for v in ratio)}"
                    f"{'  rule: grid' if picks_grid else ''}; {odp_txt}",
                    flush=True,
                )
    shapes = ", ".join(name for name, _ in SHAPES)
    worst = np.array([c[3].max() for c in cells])
    best = np.array([c[3].min() for c in cells])
    gain_safe = [c for c in cells if c[3].min() < 0.95 and c[3].max() <= 1.05]
    print(f"\nshapes (columns): {shapes}; {args.shifts} offsets per data set")
    both = int(((best < 0.95) & (worst > 1.05)).sum())
    print(
        f"public cells: {len(cells)}; the grid gains > 5% on some shape in "
        f"{int((best < 0.95).sum())}, loses > 5% on some shape in {int((worst > 1.05).sum())}, "
        f"both in the same cell in {both}; gains > 5% somewhere and loses <= 5% everywhere "
        f"in {len(gain_safe)}: "
        + ", ".join(f"(n={n}, eps={e:g}, q={q:g})" for n, e, q, *_ in gain_safe)
    )
    for name, reg in (
        ("default (staircase)", regret_default),
        ("reference rule", regret_rule),
        ("best public rule on these shapes", regret_oracle),
    ):
        r = np.asarray(reg)
        print(
            f"regret over the better of the two, {name}: geometric mean "
            f"{np.exp(np.log(r).mean()):.3f}, worst {r.max():.3g}"
        )
    return {
        "cells": cells,
        "regret_rule": regret_rule,
        "regret_default": regret_default,
        "regret_oracle": regret_oracle,
    }


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()

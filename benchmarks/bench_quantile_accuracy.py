"""Does privest's default median / quantile ever lose, and to whom? (issue 31, item 2)

Exact expected absolute errors E|release - truth| per cell, the truth numpy's default
quantile (``np.quantile(x, q)``, linear; the median for q = 1/2), for:

* privest's default (``mechanism="auto"``), and privest's other median/quantile mechanisms
  (the staircase PLM, INV, permute-and-flip on the declared lattice or on its default grid
  of 2^10 to 2^11 steps); real columns twice: without ``resolution`` and with the
  precision each is recorded to (whole years, 0.1 kg/m^2, ...), as docs/piecewise-laplace.md,
  "Integer data and recorded precision", asks;
* the anchors of ``bench_private_median.py``: diffprivlib (its exact law), OpenDP
  (permute-and-flip over 2001 candidates, exact law), PyDP (Monte Carlo, ``--reps``
  releases, paired with as many exact draws of the default).

Cells: synthetic data (normal, lognormal, uniform, heavy-tailed Cauchy; on (-10, 10);
n 20 to 10^5) and real columns that ship with scikit-learn and statsmodels, with public
bounds from what each variable is; eps in {0.1, 1, 4}, q in {0.1, 0.5, 0.9}. Prints every
cell where the default is not the best, with the winner, and a summary per group.
Without the anchors (``.venv`` usually lacks them) only privest's mechanisms are compared.

    .venv-bench/bin/python benchmarks/bench_quantile_accuracy.py [--quick] [--reps 100]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_private_median import _opendp, _pydp, diffprivlib_error  # noqa: E402

from privest.datasets.synthetic_plm import make_plm_data  # noqa: E402
from privest.models.statistics import statistic_mechanism  # noqa: E402

SYNTH = ("normal", "lognormal", "uniform", "heavy-tailed")
EPS = (0.1, 1.0, 4.0)
QS = (0.1, 0.5, 0.9)
OURS = ("piecewise_laplace", "inverse_sensitivity", "permute_and_flip")


def real_columns() -> list[tuple[str, np.ndarray, tuple[float, float], float | None]]:
    """(name, values, public bounds, recorded precision or None) of columns shipped with
    scikit-learn and statsmodels; skipped where a package is missing."""
    cols = []
    try:
        from sklearn import datasets as sk

        dia = sk.load_diabetes(scaled=False)
        cols += [
            ("diabetes age", dia.data[:, 0], (0, 120), 1.0),
            ("diabetes bmi", dia.data[:, 2], (10, 70), 0.1),
            ("diabetes bp", dia.data[:, 3], (40, 200), 0.01),
            ("diabetes target", dia.target, (0, 400), 1.0),
            ("iris petal length", sk.load_iris().data[:, 2], (0, 10), 0.1),
            ("wine alcohol", sk.load_wine().data[:, 0], (0, 20), 0.01),
            ("wine proline", sk.load_wine().data[:, 12], (0, 2000), 1.0),
            ("cancer mean area", sk.load_breast_cancer().data[:, 3], (0, 3000), 0.1),
        ]
    except ImportError:
        pass
    try:
        import statsmodels.api as sm

        fair = sm.datasets.fair.load_pandas().data
        anes = sm.datasets.anes96.load_pandas().data
        engel = sm.datasets.engel.load_pandas().data
        rand = sm.datasets.randhie.load_pandas().data
        cols += [
            ("fair rate_marriage", fair["rate_marriage"].to_numpy(), (1, 5), 1.0),
            ("fair affairs", fair["affairs"].to_numpy(), (0, 60), None),
            ("fair yrs_married", fair["yrs_married"].to_numpy(), (0, 50), 0.5),
            ("anes96 selfLR", anes["selfLR"].to_numpy(), (1, 7), 1.0),
            ("anes96 age", anes["age"].to_numpy(), (18, 100), 1.0),
            ("anes96 popul", anes["popul"].to_numpy(), (0, 10000), 1.0),
            ("engel income", engel["income"].to_numpy(), (0, 6000), None),
            ("randhie mdvis", rand["mdvis"].to_numpy(), (0, 100), 1.0),
        ]
    except ImportError:
        pass
    return [(n, np.asarray(v, dtype=float), tuple(map(float, b)), r) for n, v, b, r in cols]


def cell(x, q, eps, bounds, res, anchors, reps, rng) -> dict:
    """Exact E|err| of the default, privest's others and the anchors on one cell."""
    t = float(np.quantile(x, q))
    stat = "median" if q == 0.5 else f"quantile:{q}"
    kw = dict(epsilon=eps, bounds=bounds, resolution=res)
    default = statistic_mechanism(stat, **kw)
    law = default.law(x)
    row = {"default": float(law.error_mean_abs(reference=t)), "mech": default.name}
    for m in OURS:
        try:
            mech = statistic_mechanism(stat, mechanism=m, **kw)
        except ValueError:  # permute-and-flip refuses a lattice of more than 2049 points
            continue
        row[m] = float(mech.law(x).error_mean_abs(reference=t))
    row["diffprivlib"] = diffprivlib_error(x, q, eps, bounds, t)
    odp, pyd = anchors
    if odp is not None:
        row["OpenDP"] = odp(x, q, eps, bounds, t)
    if pyd is not None:
        e = pyd(x, q, eps, bounds, t, reps)
        d = np.abs(law.sample(reps, rng=rng) - t) - e
        row["PyDP"] = float(e.mean())
        row["PyDP_loss"] = bool(d.mean() > 2 * d.std(ddof=1) / np.sqrt(reps))
    return row


def losses(row: dict) -> list[tuple[str, float]]:
    """(winner, ratio default / winner) for every method better than the default."""
    mine = row["default"]
    out = [
        (k, mine / v)
        for k, v in row.items()
        if k in (*OURS, "diffprivlib", "OpenDP") and v < mine * (1 - 1e-9) and k != row["mech"]
    ]
    if row.get("PyDP_loss"):
        out.append(("PyDP", mine / row["PyDP"]))
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few cells only")
    ap.add_argument("--reps", type=int, default=100, help="PyDP Monte Carlo releases")
    ap.add_argument("--real-only", action="store_true", help="the real columns only")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(31)
    anchors = (_opendp(), _pydp())
    ns = (20, 1000) if args.quick else (20, 100, 1000, 10_000, 100_000)
    eps_grid = (1.0,) if args.quick else EPS
    data = [
        (f"{kind} n={n}", make_plm_data(kind, n, rng), (-10.0, 10.0), None, "synthetic")
        for kind in (SYNTH[:2] if args.quick else SYNTH)
        for n in ns
        if not args.real_only
    ]
    for name, v, b, res in real_columns()[: 3 if args.quick else None]:
        data.append((name, v, b, None, "real, no resolution"))
        if res is not None:
            data.append((f"{name} (resolution {res:g})", v, b, res, "real, recorded precision"))
    rows = []
    for name, x, bounds, res, group in data:
        for eps in eps_grid:
            for q in QS:
                row = cell(x, q, eps, bounds, res, anchors, args.reps, rng)
                rows.append((group, name, eps, q, row))
                for k, r in losses(row):
                    print(
                        f"{name} eps={eps:g} q={q:g}: default ({row['mech']}) "
                        f"{row['default']:.4g}, {k} better by {r:.3f}x",
                        flush=True,
                    )
    for group in ("synthetic", "real, no resolution", "real, recorded precision"):
        mine = [r for g, *_, r in rows if g == group]
        lost = [r for r in mine if losses(r)]
        by = {}
        for r in lost:
            for k, _ in losses(r):
                by[k] = by.get(k, 0) + 1
        print(
            f"{group}: default best (or tied) in {len(mine) - len(lost)} of {len(mine)} "
            f"cells; lost cells by winner: {by}"
        )
    skipped = [n for n, f in zip(("OpenDP", "PyDP"), anchors, strict=True) if f is None]
    if skipped:
        print(f"skipped (did not import): {', '.join(skipped)}")
    return {"rows": rows}


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()

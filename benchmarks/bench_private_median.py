"""private_median / private_quantile: speed, and exact accuracy against the anchors.

Speed: ``private_median`` and ``private_quantile(q=0.9)`` on n = 10^6 as a ratio to
``numpy.sort`` of the same data, timed in the same run (best of ``--repeat``). Goal: 2x.

Accuracy: per cell (data, n, bounds, eps, q), the expected absolute error E|release - truth|
on one data set, the truth numpy's default quantile (``np.quantile(x, q)``; the median for
q = 1/2). All methods are eps-DP under swap neighbours (fixed n).

* privest's default (``mechanism="auto"``): its exact law (``law(x).error_mean_abs(t)``;
  continuous data on the default lattice, whose snapping moves the truth by at most half a
  step, 2^-25 of the width; integer data with ``resolution=1``, as a user would pass).
* diffprivlib ``tools.quantile`` / ``median``: exact law of its exponential mechanism over
  the data's gaps (interval j with probability proportional to
  ``exp(eps u_j / 2) * width_j``, ``u_j = -|j - q n|``, then uniform in it).
* OpenDP ``make_private_quantile`` (max divergence, size known, d_in = 2 for one swap):
  noisy max with exponential noise, i.e. permute-and-flip (McKenna and Sheldon 2020) over
  its 2001 candidates with OpenDP's own scores
  (``make_quantile_score_candidates``) and its calibrated scale; exact law
  ``P(r) = p_r int_0^1 prod_{s != r}(1 - t p_s) dt``. The grid is offset by 0.382 of a step
  so that the truth (e.g. an integer) is not a grid point.
* PyDP ``Median`` / ``Percentile`` at eps/2 (add/remove neighbours; eps/2 makes it eps-DP
  under swap): Monte Carlo over ``--reps`` releases, paired with as many exact draws of
  privest's default; privest counts as worse only when the mean paired difference of the
  absolute errors exceeds 2 of its SE.

Anchors that do not import (``.venv-bench`` has them, ``.venv`` usually not) are skipped
and listed.

    python benchmarks/bench_private_median.py [--quick] [--reps 100] [--n-speed 1000000]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np

from privest.datasets.synthetic_plm import make_plm_data
from privest.mechanisms.lattice_pf import _nodes
from privest.models.statistics import private_median, private_quantile, statistic_mechanism

TIGHT = (-10.0, 10.0)
BOUNDS = {"tight": TIGHT, "wide": (-1000.0, 1000.0)}
DATA = ("normal", "lognormal", "bimodal", "integers")
OPENDP_GRID = 2001


def speed(n: int, repeat: int) -> dict[str, float]:
    x = make_plm_data("normal", n, np.random.default_rng(0))
    t_sort, t_med, t_q = [], [], []
    for i in range(repeat):
        t0 = time.perf_counter()
        np.sort(x)
        t_sort.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        private_median(x, epsilon=1.0, bounds=TIGHT, rng=i)
        t_med.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        private_quantile(x, 0.9, epsilon=1.0, bounds=TIGHT, rng=i)
        t_q.append(time.perf_counter() - t0)
    s, m, q = min(t_sort), min(t_med), min(t_q)
    print(
        f"speed, n = {n:,} (best of {repeat}): numpy.sort {s * 1e3:.1f} ms, private_median "
        f"{m * 1e3:.1f} ms ({m / s:.2f}x), private_quantile(0.9) {q * 1e3:.1f} ms "
        f"({q / s:.2f}x); goal <= 2x"
    )
    return {"sort_s": s, "median_s": m, "quantile_s": q, "ratio": max(m, q) / s}


def draw(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Continuous data in [-10, 10], or integers -3..3 (heavy ties)."""
    if kind == "integers":
        return rng.integers(-3, 4, n).astype(float)
    return make_plm_data(kind, n, rng, TIGHT)


def truth(x: np.ndarray, q: float) -> float:
    """numpy's default quantile (linear; the median for q = 1/2): privest's target is the
    half rank nearest to it (docs/piecewise-laplace.md, "Quantile convention")."""
    return float(np.quantile(x, q))


def _uniform_abs(lo: np.ndarray, hi: np.ndarray, t: float) -> np.ndarray:
    """E|U - t| for U uniform on [lo, hi] (hi > lo)."""
    inside = ((t - lo) ** 2 + (hi - t) ** 2) / (2 * (hi - lo))
    return np.where(t <= lo, (lo + hi) / 2 - t, np.where(t >= hi, t - (lo + hi) / 2, inside))


def diffprivlib_error(x: np.ndarray, q: float, eps: float, bounds: tuple, t: float) -> float:
    """Exact E|err| of diffprivlib's quantile (module docstring)."""
    k = x.size
    edges = np.sort(np.concatenate([np.clip(x, *bounds), bounds]))
    lo, hi = edges[:-1], edges[1:]
    width = hi - lo
    logw = eps / 2 * -np.abs(np.arange(k + 1) - q * k)
    with np.errstate(divide="ignore"):
        logw = logw + np.log(width)
    p = np.exp(logw - logw.max())
    p /= p.sum()
    pos = width > 0
    return float(np.sum(p[pos] * _uniform_abs(lo[pos], hi[pos], t)))


def pf_law(score: np.ndarray, scale: float) -> np.ndarray:
    """Permute-and-flip law with p_r = exp(-(score_r - min) / scale) (lower is better)."""
    p = np.exp(-(score - score.min()) / scale)
    t, w = _nodes(p.size // 2 + 1)
    out = np.zeros(p.size)
    for chunk in np.array_split(np.arange(t.size), max(1, t.size // 128)):
        lt = np.log1p(-np.outer(t[chunk], p))
        out += (np.exp(lt.sum(axis=1, keepdims=True) - lt) * w[chunk, None]).sum(axis=0)
    return p * out


def _opendp() -> Callable | None:
    try:
        import opendp.prelude as dp
    except Exception:  # noqa: BLE001 - any import failure skips the anchor
        return None
    dp.enable_features("contrib")
    cache: dict = {}

    def error(x: np.ndarray, q: float, eps: float, bounds: tuple, t: float) -> float:
        key = (x.size, q, eps, bounds)
        if key not in cache:
            a, b = bounds
            cands = a + (np.arange(OPENDP_GRID) + 0.382) * (b - a) / OPENDP_GRID
            dom = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=x.size)
            tr = dp.t.make_quantile_score_candidates(
                dom, dp.symmetric_distance(), list(map(float, cands)), q
            )

            def chain(s: float):
                return tr >> dp.m.then_noisy_max(dp.max_divergence(), s, negate=True)

            scale = dp.binary_search_param(chain, d_in=2, d_out=eps, bounds=(1e-9, 1e30))
            cache[key] = (tr, scale, cands)
        tr, scale, cands = cache[key]
        score = np.asarray(tr(list(map(float, x))), dtype=float)
        return float(np.sum(pf_law(score, scale) * np.abs(cands - t)))

    return error


def _pydp() -> Callable | None:
    try:
        from pydp.algorithms.laplacian import Median, Percentile
    except Exception:  # noqa: BLE001
        return None

    def errors(x: np.ndarray, q: float, eps: float, bounds: tuple, t: float, reps: int):
        data = list(map(float, x))
        out = np.empty(reps)
        for r in range(reps):
            kw = dict(epsilon=eps / 2, lower_bound=bounds[0], upper_bound=bounds[1])
            if q == 0.5:
                m = Median(dtype="float", **kw)
            else:
                m = Percentile(percentile=q, dtype="float", **kw)
            out[r] = abs(float(m.quick_result(data)) - t)
        return out

    return errors


def privest_law(x: np.ndarray, kind: str, q: float, eps: float, bounds: tuple):
    """The law of privest's default (``auto``) on these data, and the mechanism's name."""
    stat = "median" if q == 0.5 else f"quantile:{q}"
    res = 1.0 if kind == "integers" else None
    mech = statistic_mechanism(stat, epsilon=eps, bounds=bounds, resolution=res, n=x.size)
    return mech.law(x), mech.name


def accuracy(ns, epsilons, qs, reps: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    dpl = diffprivlib_error
    try:
        import diffprivlib  # noqa: F401
    except Exception:  # noqa: BLE001
        print("diffprivlib does not import: its exact law is used anyway (pure numpy)")
    odp, pyd = _opendp(), _pydp()
    skipped = [n for n, f in (("OpenDP", odp), ("PyDP", pyd)) if f is None]
    rows, worse = [], []
    head = f"{'cell':<42}{'privest':>10}{'mech':>6}{'dpl':>10}{'OpenDP':>10}{'PyDP±SE':>16}"
    print("\nexact E|err| per cell (PyDP: Monte Carlo mean ± SE)\n" + head)
    for kind in DATA:
        for n in ns:
            x = draw(kind, n, rng)
            for bname, bounds in BOUNDS.items():
                for eps in epsilons:
                    for q in qs:
                        t = truth(x, q)
                        law, mech = privest_law(x, kind, q, eps, bounds)
                        ours = float(law.error_mean_abs(reference=t))  # vs x_(ceil(qn))
                        row = {"privest": ours, "diffprivlib": dpl(x, q, eps, bounds, t)}
                        if odp is not None:
                            row["OpenDP"] = odp(x, q, eps, bounds, t)
                        pd_txt = "skipped"
                        if pyd is not None:
                            e = pyd(x, q, eps, bounds, t, reps)
                            mine = np.abs(law.sample(reps, rng=rng) - t)  # paired with PyDP
                            d = mine - e
                            row["PyDP"], row["PyDP_se"] = e.mean(), e.std(ddof=1) / np.sqrt(reps)
                            row["paired"], row["paired_se"] = (
                                d.mean(),
                                d.std(ddof=1) / np.sqrt(reps),
                            )
                            pd_txt = f"{row['PyDP']:.4g}±{row['PyDP_se']:.2g}"
                        cell = f"{kind} n={n} {bname} eps={eps:g} q={q:g}"
                        short = "PF" if mech == "permute_and_flip" else "PLM"
                        print(
                            f"{cell:<42}{ours:>10.4g}{short:>6}{row['diffprivlib']:>10.4g}"
                            f"{row.get('OpenDP', float('nan')):>10.4g}{pd_txt:>16}"
                        )
                        for a in ("diffprivlib", "OpenDP"):
                            if a in row and ours > row[a] * (1 + 1e-9):
                                worse.append((cell, a, ours, row[a]))
                        if "PyDP" in row and row["paired"] > 2 * row["paired_se"]:
                            worse.append((cell, "PyDP", ours, row["PyDP"]))
                        rows.append((kind, n, bname, eps, q, mech, row))
    cells = len(rows)
    lost = sorted({w[0] for w in worse})
    print(
        f"\nprivest's default at or below every anchor in {cells - len(lost)} of {cells} cells "
        f"(exact laws; PyDP within 2 MC SE); not in {len(lost)}:"
    )
    for cell, a, ours, theirs in worse:
        print(f"  {cell}: {a} {theirs:.4g} vs privest {ours:.4g} ({ours / theirs - 1:+.1%})")
    if skipped:
        print(f"skipped (did not import): {', '.join(skipped)}")
    return {"rows": rows, "worse": worse, "cells": cells, "lost": len(lost)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few cells only")
    parser.add_argument("--reps", type=int, default=100, help="PyDP Monte Carlo releases")
    parser.add_argument("--n-speed", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    out = {"speed": speed(args.n_speed, args.repeat)}
    if args.quick:
        out["accuracy"] = accuracy((20, 1000), (1.0,), (0.5, 0.9), min(args.reps, 20))
    else:
        out["accuracy"] = accuracy(
            (20, 1000, 100_000), (0.1, 0.5, 1.0, 4.0), (0.1, 0.5, 0.9), args.reps
        )
    return out


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()

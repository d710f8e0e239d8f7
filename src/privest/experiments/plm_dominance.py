"""``privest reproduce plm-dominance``: the comparisons paper 002 argues, made numerical.

The paper (Durfee 2025) is purely theoretical: no tables, one schematic figure (Fig. 1,
the two-step sampler). This experiment computes what its theorems predict, with exact
error functionals (docs/piecewise-laplace.md, "Exact error laws"), not Monte Carlo:

* the law of the absolute error |M(x) - f(x)| of PLM, continuous INV, smooth sensitivity
  (gamma = 4, pure eps-DP; median and quantiles only), Laplace at ``GS/eps`` (eps-DP)
  and at ``2 GS/eps`` (what PLM reduces to when all pieces equal GS, Sec. 4.1),
  summarised by its mean (``E|err|``), median (``median |err|``) and 90th percentile
  (``q90 |err|``), each exact for one data set (quantiles by bisection on the exact CDF);
* for the median, the 0.1- and 0.9-quantiles and the mean; data normal, lognormal,
  uniform, bimodal and heavy-tailed (Cauchy), clipped to the public bounds [-10, 10];
  n = 100 .. 10^5; eps in {0.1, 0.5, 1, 2, 5}.

Each cell averages the exact per-data-set values over ``reps`` data sets (``mc_se`` =
the standard error over data sets). The Laplace rows are the unclamped mechanism (the
library's release clamps to the range, which can only shrink the error). The ``paper``
column is NaN throughout (the paper has no numbers); where an independent prototype
written before the library gives a reference value (median of N(0, 1), "E1"), it is in
``note``.
Figures: ``main`` (E|err| against n at eps = 1), ``ratio`` (PLM/INV against eps),
``cdf`` (the error CDFs P(|err| <= t) of every method, averaged over the data sets, for
normal data, n = 1000, eps = 1) and ``figure1`` (the PLM density beside INV's staircase,
paper Fig. 1 as a plot).
"""

from __future__ import annotations

import math

import numpy as np

from privest.datasets.synthetic_plm import PLM_BOUNDS, PLM_DISTRIBUTIONS, make_plm_data
from privest.experiments.registry import ExperimentResult, Row, register
from privest.mechanisms.inverse_sensitivity import InverseSensitivityLaw
from privest.mechanisms.piecewise_laplace import PiecewiseLaplaceLaw
from privest.mechanisms.profiles.reaches import profile_for
from privest.mechanisms.smooth_sensitivity import SmoothSensitivityLaw
from privest.progress import progress_bar

BOUNDS = PLM_BOUNDS
DISTRIBUTIONS = PLM_DISTRIBUTIONS
STATISTICS = ("median", "quantile:0.1", "quantile:0.9", "mean")
N_GRID = (100, 1_000, 10_000, 100_000)
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
METHODS = ("PLM", "INV", "SS", "Laplace GS/eps", "Laplace 2GS/eps")
#: summaries of the law of |err| in the table: the mean, then quantiles
METRICS = ("E|err|", "median |err|", "q90 |err|")
PROBS = (0.5, 0.9)
#: the setting of the error-CDF figure (distribution, n, eps), and its t grid
CDF_SETTING = ("normal", 1_000, 1.0)
CDF_GRID = np.logspace(-5, 3, 320)
# E1 (median, N(0,1), n = 51 and 501): an independent prototype's values, not the paper's
SPEC_E1 = {
    (51, 0.1): (4.39, 4.41),
    (51, 1.0): (0.117, 0.121),
    (51, 5.0): (0.0266, 0.0402),
    (501, 1.0): (0.0114, 0.0118),
    (501, 5.0): (0.0028, 0.0042),
}


def _errors(
    x: np.ndarray, statistic: str, epsilons: tuple[float, ...], cdf_eps: float | None = None
) -> tuple[dict, dict]:
    """Exact (E|err|, median |err|, q90 |err|) by (method, eps) for one data set; and the
    exact error CDFs on :data:`CDF_GRID` by method at ``cdf_eps`` (if given)."""
    prof = profile_for(x, statistic, BOUNDS)
    out: dict[tuple[str, float], tuple[float, ...]] = {}
    curves: dict[str, np.ndarray] = {}
    width = BOUNDS[1] - BOUNDS[0]
    gs = prof.global_sensitivity if statistic != "mean" else width / x.size
    probs = np.asarray(PROBS)
    for eps in epsilons:
        mechs = {"PLM": PiecewiseLaplaceLaw(prof, eps), "INV": InverseSensitivityLaw(prof, eps)}
        if statistic != "mean":
            mechs["SS"] = SmoothSensitivityLaw(x, statistic, epsilon=eps, bounds=BOUNDS)
        for name, mech in mechs.items():
            out[name, eps] = (mech.error_mean_abs(), *mech.error_quantile(probs))
            if eps == cdf_eps:
                curves[name] = mech.error_cdf(CDF_GRID)
        for name, scale in (("Laplace GS/eps", gs / eps), ("Laplace 2GS/eps", 2 * gs / eps)):
            out[name, eps] = (scale, *(-scale * np.log1p(-probs)))  # |Lap(s)| ~ Exp(s)
            if eps == cdf_eps:
                curves[name] = -np.expm1(-CDF_GRID / scale)
    return out, curves


def _se(v: np.ndarray) -> float:
    return float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan


@register(
    "plm-dominance",
    "Paper 002: PLM vs INV vs smooth sensitivity vs Laplace, exact error distributions",
    20,
    2,
)
def run(reps: int, rng: np.random.Generator, progress: bool = True) -> ExperimentResult:
    """``reps`` data sets per (statistic, distribution, n); every eps reuses them."""
    rows: list[Row] = []
    table: dict[tuple, list[tuple[float, ...]]] = {}
    curves: dict[tuple[str, str], list[np.ndarray]] = {}
    tasks = [(s, d, n) for s in STATISTICS for d in DISTRIBUTIONS for n in N_GRID]
    cdf_dist, cdf_n, cdf_eps = CDF_SETTING
    with progress_bar(progress) as bar:
        job = bar.add_task("plm-dominance", total=len(tasks) + len(SPEC_E1))
        for stat, dist, n in tasks:
            want = cdf_eps if (dist, n) == (cdf_dist, cdf_n) else None
            for _ in range(reps):
                errs, cdfs = _errors(make_plm_data(dist, n, rng), stat, EPSILONS, want)
                for key, val in errs.items():
                    table.setdefault((stat, dist, n, *key), []).append(val)
                for method, c in cdfs.items():
                    curves.setdefault((stat, method), []).append(c)
            bar.advance(job)
        for (n, eps), (plm_ref, inv_ref) in SPEC_E1.items():
            vals = {m: [] for m in ("PLM", "INV")}
            for _ in range(max(reps, 10)):
                errs, _ = _errors(make_plm_data("normal", n, rng), "median", (eps,))
                vals["PLM"].append(errs["PLM", eps][0])
                vals["INV"].append(errs["INV", eps][0])
            for method, ref in (("PLM", plm_ref), ("INV", inv_ref)):
                v = np.asarray(vals[method])
                rows.append(
                    Row(
                        f"E1 median/normal/eps={eps:g}",
                        n,
                        method,
                        "E|err|",
                        float(v.mean()),
                        mc_se=_se(v),
                        note=f"E1 prototype value {ref} (not a paper number)",
                    )
                )
            bar.advance(job)
    for (stat, dist, n, method, eps), vals in table.items():
        v = np.asarray(vals)
        for j, metric in enumerate(METRICS):
            rows.append(
                Row(
                    f"{stat}/{dist}/eps={eps:g}",
                    n,
                    method,
                    metric,
                    float(v[:, j].mean()),
                    mc_se=_se(v[:, j]),
                    note="exact per data set, averaged over data sets",
                )
            )
    for stat in STATISTICS:
        for dist in DISTRIBUTIONS:
            for n in N_GRID:
                for eps in EPSILONS:
                    for j, metric in ((0, "E|err|"), (2, "q90 |err|")):
                        plm = np.mean([v[j] for v in table[stat, dist, n, "PLM", eps]])
                        others = {
                            m: np.mean([v[j] for v in table[stat, dist, n, m, eps]])
                            for m in METHODS[1:]
                            if (stat, dist, n, m, eps) in table
                        }
                        best = min(others, key=others.get)
                        rows.append(
                            Row(
                                f"{stat}/{dist}/eps={eps:g}",
                                n,
                                "PLM / best other",
                                f"ratio of {metric}",
                                float(plm / others[best]),
                                note=f"best other: {best}",
                            )
                        )
    return ExperimentResult(rows, _figures(table, curves))


def _figures(table: dict, curves: dict) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = {}
    fig, axes = plt.subplots(
        len(STATISTICS), len(DISTRIBUTIONS), figsize=(17, 12.5), sharex=True, squeeze=False
    )
    for i, stat in enumerate(STATISTICS):
        for j, dist in enumerate(DISTRIBUTIONS):
            ax = axes[i, j]
            for k, method in enumerate(METHODS):
                ys = [
                    np.mean([v[0] for v in table.get((stat, dist, n, method, 1.0), [(np.nan,)])])
                    for n in N_GRID
                ]
                if not np.all(np.isnan(ys)):
                    ax.plot(N_GRID, ys, marker="o", ms=3, color=f"C{k}", label=method)
            ax.set_xscale("log")
            ax.set_yscale("log")
            if i == 0:
                ax.set_title(dist)
            if j == 0:
                ax.set_ylabel(f"{stat}\nE|err| (eps = 1)")
            if i == len(STATISTICS) - 1:
                ax.set_xlabel("n")
    axes[0, 0].legend(fontsize="small")
    fig.suptitle("Exact expected absolute error at eps = 1, data clipped to [-10, 10]")
    fig.tight_layout()
    figs["main"] = fig

    n_ratio = 1000 if 1000 in N_GRID else N_GRID[0]
    fig, axes = plt.subplots(1, len(STATISTICS), figsize=(15, 4.2), sharey=True, squeeze=False)
    axes = axes[0]
    for i, stat in enumerate(STATISTICS):
        ax = axes[i]
        for k, dist in enumerate(DISTRIBUTIONS):
            ratio = [
                np.mean([v[0] for v in table[stat, dist, n_ratio, "PLM", e]])
                / np.mean([v[0] for v in table[stat, dist, n_ratio, "INV", e]])
                for e in EPSILONS
            ]
            ax.plot(EPSILONS, ratio, marker="o", color=f"C{k}", label=dist)
        ax.axhline(1.0, color="0.6", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_title(f"{stat}, n = {n_ratio}")
    axes[0].set_ylabel("E|err| PLM / E|err| INV")
    axes[0].legend(fontsize="small")
    fig.tight_layout()
    figs["ratio"] = fig
    if curves:
        figs["cdf"] = _cdf_figure(curves)
    figs["figure1"] = figure1()
    return figs


def _cdf_figure(curves: dict):
    """Error CDFs P(|err| <= t) by method, averaged over the data sets of :data:`CDF_SETTING`."""
    import matplotlib.pyplot as plt

    dist, n, eps = CDF_SETTING
    fig, axes = plt.subplots(1, len(STATISTICS), figsize=(16, 3.8), sharey=True, squeeze=False)
    axes = axes[0]
    for i, stat in enumerate(STATISTICS):
        ax = axes[i]
        for k, method in enumerate(METHODS):
            if (stat, method) in curves:
                cdf = np.mean(curves[stat, method], axis=0)
                ax.plot(CDF_GRID, cdf, color=f"C{k}", label=method, ls="--" if k == 1 else "-")
        ax.set_xscale("log")
        ax.set_xlabel("t")
        ax.set_title(stat)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("P(|err| <= t)")
    axes[0].legend(fontsize="small")
    fig.suptitle(
        f"Exact error CDFs averaged over the data sets: {dist} data, n = {n}, eps = {eps:g}"
    )
    fig.tight_layout()
    return fig


def figure1():
    """Paper Fig. 1 as a plot: PLM's piecewise-exponential density over INV's staircase."""
    import matplotlib.pyplot as plt

    x = np.array([1.0, 2.2, 2.6, 3.0, 3.1, 4.4, 5.0, 6.9, 8.0])
    plm = PiecewiseLaplaceLaw.for_statistic(x, "median", epsilon=1.5, bounds=(0, 10))
    inv = InverseSensitivityLaw.for_statistic(x, "median", epsilon=1.5, bounds=(0, 10))
    ys = np.linspace(0, 10, 4001)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(ys, plm.pdf(ys), label="piecewise Laplace (PLM)")
    ax.plot(ys, inv.pdf(ys), label="inverse sensitivity (INV)", ls="--")
    ax.plot(x, np.zeros_like(x), "k|", ms=14, label="data (reach points)")
    ax.axvline(plm.value, color="0.5", lw=0.8)
    ax.set_xlabel("output y")
    ax.set_ylabel("density")
    ax.set_title("Median of 9 points, eps = 1.5: same piece weights, exponential vs uniform within")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig

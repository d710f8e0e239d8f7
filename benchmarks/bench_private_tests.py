"""Type I error and power of the tests on private releases (issue 27, items 3 and 4).

Tests (privest.stattests): one-sample mean, two-sample mean difference, one proportion, two
proportions. Populations as in bench_central_inference.py (columns and indicators of
scikit-learn's diabetes, breast_cancer and wine, sampled with replacement); bounds hold
the data. Each cell draws ``--reps`` releases under the null (the library's split of
epsilon, each mechanism's noise law) and computes the library's p-values in batches:

* type I error at alpha = 0.05 for n = 100, 1,000, 10^4 (both samples of size n) and
  epsilon 0.1 .. 4; the one-proportion test's size is exact (summed over every release);
* power against shifts of 0 to 4 non-private standard errors at n = 1,000 (``--power-n``),
  epsilon 0.5, 1 and 4, beside the non-private test (t test, exact binomial mid-p, pooled
  z): a figure.

Each type I row also gives the non-private test's (t tests, pooled z) on the same samples.
The row "one-sample mean (mid-p)" measures Lancaster's mid-p on the clamped release's atom
(not the library's p-value; docs/central-inference.md, "The tests' size and power,
measured"). Main's code as the baseline: the same command and seed with main's tree on
PYTHONPATH (the samples are the same draws).

    python benchmarks/bench_private_tests.py [--quick] [--reps 4000] [--n 100 ...]
        [--no-power] [--no-type1] [--means-only] [--power-n 1000] [--out DIR]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
from bench_central_inference import EPSILONS, populations, proportions
from scipy import stats

from privest.domain import Domain
from privest.intervals.counts import count_pvalue, count_tails
from privest.intervals.laws import mixture_cdf
from privest.intervals.release import moment_inference, plan_split, spread_plan
from privest.mechanisms.discrete_laplace import DiscreteLaplace
from privest.mechanisms.laplace import LaplaceMechanism
from privest.stattests import mean_diff_pvalue, mean_pvalue, proportion_diff_pvalue

ALPHA = 0.05
SHIFTS = np.linspace(0, 4, 9)


def mean_releases(pop, n, eps, reps, rng, shift=0.0):
    """A batch of mean releases (MomentInference arrays) of samples of n records."""
    bounds = pop.wide
    dom = Domain(bounds=bounds)
    atoms = np.clip(pop.atoms + shift, *bounds)
    counts = rng.multinomial(n, pop.weights, size=reps).astype(float)
    centre, cap = spread_plan(dom)
    xbar = counts @ atoms / n
    m2 = counts @ (atoms - centre) ** 2 / n
    split = plan_split("mean", eps, "population")
    law = LaplaceMechanism("mean", epsilon=split["point"], bounds=bounds).noise_law(n)
    slaw = LaplaceMechanism("mean", epsilon=split["spread"], bounds=(0, cap)).noise_law(n)
    est = np.clip(xbar + rng.laplace(0, law.scale, reps), *bounds)
    spread = np.clip(m2 + rng.laplace(0, slaw.scale, reps), 0, cap)
    inf = moment_inference(
        "mean",
        "population",
        est,
        n,
        dom,
        law.scale,
        split,
        spread=spread,
        spread_scale=slaw.scale,
        spread_cap=cap,
        centre=centre,
    )
    s2 = counts @ atoms**2 / n - xbar**2
    return inf, xbar, np.sqrt(s2 * n / (n - 1))


def _mid_p(inf, mu0, p):
    """Lancaster's mid-p of the one-sample test: the exact p-value less half the mass of
    the release's own value of the smaller tail, which is non-zero only on an atom (a
    release at a bound; measured here, not the library's default)."""
    theta = np.full(np.shape(inf.work), float(mu0))
    sd, scales = inf.sd_at(theta), (inf.scale,)
    low = mixture_cdf(inf.lo - theta, sd, scales)
    high = 1.0 - mixture_cdf(inf.hi - theta, sd, scales)
    on_atom = np.where(inf.work <= inf.lo, low, 0.0) + np.where(inf.work >= inf.hi, high, 0.0)
    return p - 0.5 * on_atom


def _np_t(xbar, s, n, mu0):
    return 2 * stats.t.sf(np.abs(xbar - mu0) / (s / math.sqrt(n)), n - 1)


def count_releases(p, n, eps, reps, rng):
    law = DiscreteLaplace("count", epsilon=eps).noise_law()
    counts = rng.binomial(n, p, reps).astype(float)
    return np.clip(counts + law.sample(reps, rng), 0, n), law.p, counts


def _pooled_z(cx, cy, n):
    """The non-private pooled z test's two-sided p-values (counts of two samples of n)."""
    pool = (cx + cy) / (2 * n)
    se = np.sqrt(pool * (1 - pool) * 2 / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (cx - cy) / n / se, 0.0)
    return 2 * stats.norm.sf(np.abs(z))


def _diff_pvalues(cx, nx, rx, cy, ny, ry):
    return np.concatenate(
        [
            proportion_diff_pvalue(cx[i : i + 100], nx, rx, cy[i : i + 100], ny, ry)[1]
            for i in range(0, cx.size, 100)
        ]
    )


def type_one(reps: int, n_grid, rng, means_only: bool = False) -> pd.DataFrame:
    rows = []
    for pop in populations():
        mu = float(pop.weights @ np.clip(pop.atoms, *pop.wide))
        for n in n_grid:
            for eps in EPSILONS:
                one, xb, s = mean_releases(pop, n, eps, reps, rng)
                other, xb2, s2 = mean_releases(pop, n, eps, reps, rng)
                two_t = stats.ttest_ind_from_stats(xb, s, n, xb2, s2, n).pvalue
                p_one = mean_pvalue(one, mu)[1]
                for test, p, base in (
                    ("one-sample mean", p_one, _np_t(xb, s, n, mu)),
                    ("one-sample mean (mid-p)", _mid_p(one, mu, p_one), _np_t(xb, s, n, mu)),
                    ("two-sample mean", mean_diff_pvalue(one, other)[1], two_t),
                ):
                    rows.append(
                        {
                            "test": test,
                            "data": pop.name,
                            "n": n,
                            "epsilon": eps,
                            "type_I": float(np.mean(p <= ALPHA)),
                            "not_private": float(np.mean(base <= ALPHA)),
                        }
                    )
        print(f"type I: {pop.name} done", flush=True)
    props = [] if means_only else list(proportions().items())[:3]
    for name, p in props:
        for n in n_grid:
            for eps in EPSILONS:
                r = math.exp(-eps)
                c = np.arange(n + 1.0)
                _, pmf, _ = count_tails(c, n, p, r)
                size = float(np.sum(pmf * (count_pvalue(c, n, p, r) <= ALPHA)))
                rows.append(
                    {
                        "test": "one proportion",
                        "data": name,
                        "n": n,
                        "epsilon": eps,
                        "type_I": size,
                        "exact": True,
                        "reps": np.nan,
                    }
                )
                k = min(reps, 2000)
                cx, rx, raw_x = count_releases(p, n, eps, k, rng)
                cy, ry, raw_y = count_releases(p, n, eps, k, rng)
                pv = _diff_pvalues(cx, n, rx, cy, n, ry)
                rows.append(
                    {
                        "test": "two proportions",
                        "data": name,
                        "n": n,
                        "epsilon": eps,
                        "type_I": float(np.mean(pv <= ALPHA)),
                        "not_private": float(np.mean(_pooled_z(raw_x, raw_y, n) <= ALPHA)),
                        "reps": k,
                    }
                )
        print(f"type I: {name} done", flush=True)
    out = pd.DataFrame(rows).reindex(columns=[*rows[0], "exact", "reps"])
    exact = out["exact"].eq(True)
    out["reps"] = np.where(exact, np.nan, out["reps"].fillna(reps))
    out["mc_se"] = np.where(exact, 0.0, np.sqrt(0.05 * 0.95 / out["reps"]))
    return out


def power(reps: int, rng, n: int = 1000) -> pd.DataFrame:
    rows = []
    pop = populations()[0]
    mu = float(pop.weights @ np.clip(pop.atoms, *pop.wide))
    sd = math.sqrt(float(pop.weights @ (np.clip(pop.atoms, *pop.wide) - mu) ** 2))
    p0 = list(proportions().values())[0]
    for shift in SHIFTS:
        d_mean, d_prop = shift * sd / math.sqrt(n), shift * math.sqrt(p0 * (1 - p0) / n)
        for eps in (0.5, 1.0, 4.0, math.inf):
            e = 4.0 if math.isinf(eps) else eps
            one, xb, s = mean_releases(pop, n, e, reps, rng, shift=d_mean)
            two, xb2, s2 = mean_releases(pop, n, e, reps, rng)
            c1, r1, raw1 = count_releases(p0 + d_prop, n, e, min(reps, 2000), rng)
            c2, r2, raw2 = count_releases(p0, n, e, min(reps, 2000), rng)
            if math.isinf(eps):  # the non-private tests on the same samples
                res = {
                    "one-sample mean": _np_t(xb, s, n, mu),
                    "one-sample mean (mid-p)": _np_t(xb, s, n, mu),
                    "two-sample mean": stats.ttest_ind_from_stats(xb, s, n, xb2, s2, n).pvalue,
                    "one proportion": count_pvalue(raw1, n, p0, 0.0),
                    "two proportions": _diff_pvalues(raw1, n, 0.0, raw2, n, 0.0),
                }
            else:
                p_one = mean_pvalue(one, mu)[1]
                res = {
                    "one-sample mean": p_one,
                    "one-sample mean (mid-p)": _mid_p(one, mu, p_one),
                    "two-sample mean": mean_diff_pvalue(one, two)[1],
                    "one proportion": count_pvalue(c1, n, p0, r1),
                    "two proportions": _diff_pvalues(c1, n, r1, c2, n, r2),
                }
            for test, pv in res.items():
                rows.append(
                    {
                        "test": test,
                        "shift_se": shift,
                        "epsilon": eps,
                        "power": float(np.mean(np.asarray(pv) <= ALPHA)),
                    }
                )
        print(f"power: shift {shift:g} done", flush=True)
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, path: Path, n: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tests = list(dict.fromkeys(table.test))
    fig, axes = plt.subplots(2, 3, figsize=(14, 7), sharex=True, sharey=True)
    for ax, test in zip(axes.ravel(), tests, strict=False):
        part = table[table.test == test]
        for eps, line in part.groupby("epsilon"):
            label = "non-private" if math.isinf(eps) else f"epsilon {eps:g}"
            style = "k--" if math.isinf(eps) else "-o"
            ax.plot(line.shift_se, line.power, style, label=label, markersize=3)
        ax.axhline(ALPHA, color="grey", lw=0.8)
        ax.set_title(test)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(tests) :]:
        ax.set_visible(False)
    for ax in axes[1]:
        ax.set_xlabel("true shift (non-private standard errors)")
    for ax in axes[:, 0]:
        ax.set_ylabel("power at alpha = 0.05")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Power of the private tests, n = {n:,} (diabetes progression; diabetes sex)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--quick", action="store_true", help="n up to 1,000, 500 releases")
    ap.add_argument("--out", default="bench-output")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--n", type=int, nargs="+", help="sample sizes of the type I table")
    ap.add_argument("--no-power", action="store_true", help="the type I table only")
    ap.add_argument("--no-type1", action="store_true", help="the power table only")
    ap.add_argument("--means-only", action="store_true", help="the mean tests' type I rows")
    ap.add_argument("--power-n", type=int, default=1000, help="sample size of the power run")
    args = ap.parse_args(argv)
    reps = 500 if args.quick else args.reps
    n_grid = (100, 1000) if args.quick else (100, 1000, 10_000)
    n_grid = tuple(args.n) if args.n else n_grid
    rng = np.random.default_rng(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.no_type1:
        t1 = type_one(reps, n_grid, rng, args.means_only)
        t1.to_csv(out / "private_tests_type1.csv", index=False)
        worst = t1.loc[(t1.type_I - ALPHA).abs().groupby(t1.test).idxmax()]
        print(worst.to_string())
    if not args.no_power:
        pw = power(min(reps, 2000), rng, args.power_n)
        pw.to_csv(out / "private_tests_power.csv", index=False)
        figure(pw, out / "private_tests_power.png", args.power_n)


if __name__ == "__main__":
    main()

"""Coverage of DR logistic intervals at the README's calibration: Wald (sandwich) against
the score-test interval (privest.learn.score_interval), on the same releases.

Each release draws a fresh sample of n records from a population and releases it with
``ZILMechanism.calibrate(epsilon=2, delta=0.3, zero_prob=0.1)`` (the README's settings);
the DR logistic objective is minimised by damped Newton from the population's coefficients
(the local minimum nearest the truth). Populations: ``survey``, the README's synthetic
survey (the truth is its generating model), and ``wine``, white wines of the UCI Wine
Quality data (y = quality >= 7 on alcohol and residual sugar; records drawn with
replacement; the truth is the logistic fit on all 4,898 wines). Coverage of the Wald
interval is over the releases with a positive definite corrected Hessian; the score
interval's is P(|T(truth)| <= 1.96) (the test-inversion set covers exactly when the test
accepts), over all releases and over the Wald ones. Widths (median ratio to the Wald
interval), the intervals' own coverage (the truth between the ends, a NaN end unbounded)
and their CPU time from the first ``--widths`` releases. The public rule of the estimators
(``privest.learn.inference.noise_dominated``, docs/dr-estimation.md, "Which intervals to
trust") is applied to every release: the share of releases it flags per coefficient and the
Wald coverage over the unflagged and the flagged ones (``--limit`` sets its threshold).

    python benchmarks/bench_dr_interval.py [--data survey|wine] [--n 100000] [--releases 100]

Two versions of the score interval on the same releases (docs/dr-estimation.md, "The cost of
the score-test interval"): run the same ``--seed`` under each version's PYTHONPATH with
``--ends FILE`` (each appends a line per release: its ends, SEs and CPU seconds), alternating
the versions chunk by chunk, then ``--compare FILE_A FILE_B``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import privest as pv
from privest.errors import SeededRandomnessWarning
from privest.learn.inference import (
    NOISE_RATIO_LIMIT,
    IndefiniteHessianError,
    noise_dominated,
    sandwich_cov,
)
from privest.learn.losses import LogisticLoss
from privest.learn.objective import corrected_objective
from privest.learn.score_interval import constrained_fit, score_interval, score_statistic


def _wine() -> Path | None:
    """winequality-white.csv from $PRIVEST_SHARED_DATA or a ``shared/data`` folder one or
    two levels above the checkout (as the tests find it)."""
    here = Path(__file__).resolve().parents[1]
    for base in (
        os.environ.get("PRIVEST_SHARED_DATA"),
        here.parent / "shared/data",
        here.parent.parent / "shared/data",
    ):
        if base and (Path(base) / "wine-quality").is_dir():
            return Path(base) / "wine-quality" / "winequality-white.csv"
    return None


BOUND = 30.0  # the parameter box (wine's intercept is about -12: the default 10 is too small)


def survey(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """The README's synthetic survey (age, income, y)."""
    df = pd.DataFrame(
        {"age": rng.uniform(18, 90, n), "income": np.minimum(rng.lognormal(10.5, 0.6, n), 2e5)}
    )
    p = 1 / (1 + np.exp(-(-4 + 0.05 * df.age + 1e-5 * df.income)))
    df["y"] = (rng.random(n) < p).astype(int)
    return df


def population(name: str, path: Path) -> tuple[pd.DataFrame | None, dict, np.ndarray]:
    """(population records or None for the survey's model, bounds, true coefficients)."""
    if name == "survey":
        return None, {"age": (18, 90), "income": (0, 2e5)}, np.array([-4, 0.05, 1e-5])
    raw = pd.read_csv(path, sep=";")
    pop = pd.DataFrame(
        {
            "alcohol": raw["alcohol"],
            "sugar": raw["residual sugar"],
            "y": (raw["quality"] >= 7).astype(int),
        }
    )
    bounds = {"alcohol": (8.0, 15.0), "sugar": (0.0, 66.0)}
    oracle = pv.DRLogisticRegression(
        method="oracle", features=["alcohol", "sugar"], theta_bounds=(-BOUND, BOUND)
    )
    truth = oracle.fit(pop[["alcohol", "sugar"]], pop["y"].to_numpy()).coef_
    return pop, bounds, truth


def one_release(pop, bounds, truth, n, rng, widths, limit=NOISE_RATIO_LIMIT, score=True):
    """Per coefficient: Wald covers, |T(truth)|, Wald width, score width, the rule's flag
    (the intercept's is 0), score interval covers (a NaN end unbounded), its CPU seconds,
    its two ends and the sandwich SE (NaN if not measured; all NaN without ``score``)."""
    df = survey(n, rng) if pop is None else pop.iloc[rng.integers(0, len(pop), n)]
    mech = pv.ZILMechanism.calibrate(epsilon=2.0, delta=0.3, zero_prob=0.1, bounds=bounds)
    rel = mech.release(df.reset_index(drop=True), rng=rng)
    obj = corrected_objective(
        rel, "y", LogisticLoss(fit_intercept=True), "dr", features=list(bounds)
    )
    box = np.array([[-BOUND, BOUND]] * truth.size)
    fit = constrained_fit(obj, truth, None, box=box, steps=100)  # the minimum nearest the truth
    theta = truth if fit is None else fit[0]
    z = stats.norm.ppf(0.975)
    out = np.full((truth.size, 10), np.nan)
    out[:, 4] = np.concatenate([[False], noise_dominated(obj, limit)])
    se = None
    if fit is not None:
        try:
            se = np.sqrt(np.diag(sandwich_cov(obj, theta)[0]))
            out[:, 0] = np.abs(theta - truth) <= z * se
            out[:, 2] = 2 * z * se
            out[:, 9] = se
        except IndefiniteHessianError:
            pass
    for j in range(truth.size if score else 0):
        stat = score_statistic(obj, theta, j, truth[j], box)[0]
        out[j, 1] = abs(stat)
        if widths and se is not None:
            cpu = time.process_time()
            lo, hi = score_interval(obj, theta, j, se[j], box=box)
            out[j, 6] = time.process_time() - cpu
            out[j, 7:9] = lo, hi
            out[j, 3] = hi - lo
            out[j, 5] = not (lo > truth[j] or hi < truth[j])  # NaN ends: unbounded
    return out


def compare(path_a: Path, path_b: Path) -> dict[str, float]:
    """The ends of two ``--ends`` files on their common releases: the largest difference
    in SEs, the ends NaN in one only, and the CPU of each."""
    a, b = (
        {(r["seed"], r["release"]): r for r in map(json.loads, p.read_text().splitlines())}
        for p in (path_a, path_b)
    )
    common = sorted(set(a) & set(b))
    if not common:
        raise SystemExit(
            f"--compare: no release with score intervals in both {path_a} and {path_b}"
        )
    ea, eb = (np.array([d[k]["ends"] for k in common], dtype=float) for d in (a, b))
    se = np.array([a[k]["se"] for k in common])[:, :, None]
    both = ~np.isnan(ea) & ~np.isnan(eb)
    out = {
        "releases": len(common),
        "ends": int(ea.size),
        "nan_ends": int(np.isnan(ea).sum()),
        "nan_mismatches": int((np.isnan(ea) != np.isnan(eb)).sum()),
        "max_diff_se": float((np.abs(ea - eb) / se)[both].max(initial=0.0)),
        "cpu_a": float(sum(a[k]["cpu"] for k in common)),
        "cpu_b": float(sum(b[k]["cpu"] for k in common)),
    }
    k = len(common)
    print(
        f"{k} releases, {out['ends']} ends ({out['nan_ends']} NaN in A): NaN in one only "
        f"{out['nan_mismatches']}, largest |A - B| / SE {out['max_diff_se']:.1e}; CPU per "
        f"release A {out['cpu_a'] / k:.2f} s, B {out['cpu_b'] / k:.2f} s, A / B "
        f"{out['cpu_a'] / out['cpu_b']:.2f}"
    )
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["survey", "wine"], default="survey")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--widths", type=int, default=10, help="releases with widths")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--limit", type=float, default=NOISE_RATIO_LIMIT, help="the rule's")
    parser.add_argument(
        "--score", action=argparse.BooleanOptionalAction, default=True, help="score intervals"
    )
    parser.add_argument("--wine", type=Path, default=_wine(), help="winequality-white.csv")
    parser.add_argument("--ends", type=Path, help="append the score intervals' ends here")
    parser.add_argument("--compare", type=Path, nargs=2, help="two --ends files")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    pop, bounds, truth = population(args.data, args.wine)
    rng = np.random.default_rng(args.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededRandomnessWarning)
        res = np.stack(
            [
                one_release(
                    pop, bounds, truth, args.n, rng, r < args.widths, args.limit, args.score
                )
                for r in range(args.releases)
            ]
        )
    if args.ends:
        with open(args.ends, "a") as f:
            for r in np.flatnonzero(~np.isnan(res[:, :, 6]).all(axis=1)):
                line = {
                    "seed": args.seed,
                    "release": int(r),
                    "ends": res[r, :, 7:9].tolist(),
                    "se": res[r, :, 9].tolist(),
                    "cpu": float(np.nansum(res[r, :, 6])),
                }
                f.write(json.dumps(line) + "\n")
    wald_ok = ~np.isnan(res[:, 0, 0])
    z = stats.norm.ppf(0.975)
    names = ["intercept", *bounds]
    mcse = np.sqrt(0.95 * 0.05 / wald_ok.sum())
    print(
        f"{args.data}, n = {args.n}, {args.releases} releases ({wald_ok.sum()} with a sandwich;"
        f" MC SE of a coverage of 0.95: {mcse:.3f}); truth {truth}"
    )
    print(
        "coefficient  Wald  score(same releases)  score(all)  T undefined  "
        "width score/Wald (median, releases)  score ends undefined  "
        "flagged  Wald unflagged (releases)  Wald flagged"
    )
    out = {}
    for j, name in enumerate(names):
        t = res[:, j, 1]
        defined = ~np.isnan(t)
        wald = res[wald_ok, j, 0].mean()
        same = (t[wald_ok & defined] <= z).mean()
        every = (t[defined] <= z).mean()
        ratio = res[:, j, 3] / res[:, j, 2]
        flag = res[wald_ok, j, 4] == 1
        cover = res[wald_ok, j, 0]
        tried = ~np.isnan(res[:, j, 2]) & (np.arange(len(res)) < args.widths)
        print(
            f"{name:<12} {wald:.3f} {same:.3f} {every:.3f} {(~defined).sum()}  "
            f"{np.nanmedian(ratio[tried]) if tried.any() else np.nan:.2f} ({tried.sum()})  "
            f"{np.isnan(ratio[tried]).sum()}  {flag.mean():.2f}  "
            f"{cover[~flag].mean() if (~flag).any() else np.nan:.3f} ({(~flag).sum()})  "
            f"{cover[flag].mean() if flag.any() else np.nan:.3f}"
        )
        out.update({f"{name}_wald": wald, f"{name}_score": every, f"{name}_flagged": flag.mean()})
    tried = ~np.isnan(res[:, :, 5])
    if tried.any():  # the intervals themselves (the first --widths releases with a sandwich)
        print("score interval on the releases with widths: covers (releases)  Wald there")
        for j, name in enumerate(names):
            ok = tried[:, j]
            print(f"{name:<12} {res[ok, j, 5].mean():.3f} ({ok.sum()})  {res[ok, j, 0].mean():.3f}")
        print(f"CPU of the score intervals: {np.nansum(res[:, :, 6]):.1f} s")
        out["score_cpu"] = float(np.nansum(res[:, :, 6]))
    return out


if __name__ == "__main__":
    main()

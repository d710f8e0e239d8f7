"""Coverage of EPTRLinearRegression's 95% intervals (``inference="sandwich"``) on real data.

Each data set is the population; each release resamples n records with replacement, fits
EPTRLinearRegression (default ``c0="auto"``, ``constants="tight"``, delta = 1e-6) and checks
whether each coefficient's interval covers the population's least-squares coefficient.
Features and response go through a public affine map onto [-1, 1] (the midpoint and
half-range of public bounds) and a public constant column 1 carries the intercept, so
R_x = sqrt(p + 1), R_y = 1; R_theta = 2 x the population's coefficient norm (the analyst's
public order of magnitude). Coverage is over released fits only (a fit that releases
nothing has no interval); the non-private width is the HC0 sandwich interval of the same
resample. The noise-only interval (the anchors' kind: the released estimate +- z sigma,
sigma the ePTR noise's public sd ``noise_scale_``, no sampling error) is scored the same
way. MC SE of a coverage of 0.95: sqrt(0.95 0.05 / releases).

    python benchmarks/bench_eptr_inference.py [--releases 200] [--quick] [--data randhie]
        [--n 100000] [--epsilon 1]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
import zlib

import numpy as np
from sklearn.datasets import load_diabetes

from privest.errors import NothingReleasedWarning
from privest.models.eptr_ols import EPTRLinearRegression

DELTA = 1e-6
FAIR = (["age", "yrs_married", "religious", "educ"], [(17.5, 42), (0.5, 23), (1, 4), (9, 20)])
RANDHIE = (["lncoins", "lpi", "physlm", "disea"], [(0, 4.62), (0, 7.17), (0, 1), (0, 58.6)])


def _unit(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (v - (lo + hi) / 2.0) / ((hi - lo) / 2.0)


def population(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(Z, y) on [-1, 1] with the constant column first (public affine maps)."""
    if name == "diabetes":
        d = load_diabetes(scaled=False)
        X, y = d.data[:, [2, 3, 8]], d.target  # bmi, bp, s5
        bounds, ybounds = list(zip(X.min(0), X.max(0), strict=True)), (25.0, 346.0)
    else:
        import statsmodels.api as sm

        if name == "fair":
            df, (cols, bounds) = sm.datasets.fair.load_pandas().data, FAIR
            y, ybounds = df["rate_marriage"].to_numpy(float), (1.0, 5.0)
        else:
            df, (cols, bounds) = sm.datasets.randhie.load_pandas().data, RANDHIE
            y, ybounds = np.log1p(df["mdvis"].to_numpy(float)), (0.0, math.log(78.0))
        X = df[cols].to_numpy(float)
    Z = np.column_stack([_unit(X[:, j], *b) for j, b in enumerate(bounds)])
    return np.column_stack([np.ones(len(y)), Z]), _unit(y, *ybounds)


def hc0_se(Z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Non-private least squares and its HC0 standard errors."""
    S = Z.T @ Z
    theta = np.linalg.solve(S, Z.T @ y)
    r = y - Z @ theta
    B = np.linalg.inv(S)
    Zr = Z * r[:, None]
    return theta, np.sqrt(np.diag(B @ (Zr.T @ Zr) @ B))


def cell(name: str, n: int, eps: float, releases: int, seed: int) -> dict:
    """Coverage over ``releases`` released fits (at most 4x as many attempts)."""
    Z, y = population(name)
    truth = np.linalg.lstsq(Z, y, rcond=None)[0]
    p = Z.shape[1]
    rng = np.random.default_rng(seed)
    hits, ols_hits, widths, ols_widths, pinned, attempts = [], [], [], [], 0, 0
    noise_hits, noise_widths = [], []
    while len(hits) < releases and attempts < 4 * releases:
        attempts += 1
        idx = rng.integers(0, len(y), n)
        Zs, ys = Z[idx], y[idx]
        model = EPTRLinearRegression(
            epsilon=eps,
            delta=DELTA,
            x_radius=math.sqrt(p),
            theta_radius=2.0 * float(np.linalg.norm(truth)),
            y_radius=1.0,
            random_state=int(rng.integers(2**63)),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NothingReleasedWarning)
            model.fit(Zs, ys)
        if not model.released_:
            continue
        res = model.results_
        if res.on_bound.any():
            pinned += 1
            continue
        ci = res.conf_int(0.05).to_numpy()
        hits.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        widths.append(ci[:, 1] - ci[:, 0])
        ols, se0 = hc0_se(Zs, ys)
        ols_hits.append(np.abs(ols - truth) <= 1.959964 * se0)
        ols_widths.append(2 * 1.959964 * se0)
        half = 1.959964 * model.noise_scale_  # the noise-only interval: sigma^2 I
        noise_hits.append(np.abs(res.params.to_numpy() - truth) <= half)
        noise_widths.append(np.full(p, 2 * half))
    hits_a = np.array(hits, dtype=float).reshape(-1, p)
    cov = hits_a.mean(0) if len(hits) else np.full(p, np.nan)
    ols_cov = np.array(ols_hits, dtype=float).reshape(-1, p).mean(0) if hits else cov
    k = max(len(hits), 1)
    ratio = np.mean(np.array(widths) / np.array(ols_widths), 0) if hits else np.full(p, np.nan)
    noise_cov = np.array(noise_hits, float).reshape(-1, p).mean(0) if hits else cov
    noise_ratio = (
        np.mean(np.array(noise_widths) / np.array(ols_widths), 0) if hits else np.full(p, np.nan)
    )
    return {
        "data": name,
        "n": n,
        "eps": eps,
        "releases": len(hits),
        "attempts": attempts,
        "pinned": pinned,
        "coverage": cov.round(3).tolist(),
        "coverage_min": float(cov.min()),
        "coverage_mean": float(cov.mean()),
        "ols_coverage": ols_cov.round(3).tolist(),
        "ols_min": float(ols_cov.min()),
        "mc_se": math.sqrt(0.95 * 0.05 / k),
        "width_ratio_min": float(ratio.min()),
        "width_ratio_max": float(ratio.max()),
        "noise_min": float(noise_cov.min()),
        "noise_ratio_min": float(noise_ratio.min()),
        "noise_ratio_max": float(noise_ratio.max()),
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=200, help="released fits per cell")
    parser.add_argument("--quick", action="store_true", help="20 releases, n = 10^4 only")
    parser.add_argument("--data", default="diabetes,fair,randhie")
    parser.add_argument("--n", type=int, default=None, help="only this n")
    parser.add_argument("--epsilon", type=float, default=None, help="only this epsilon")
    args = parser.parse_args(argv)
    releases = 20 if args.quick else args.releases
    ns = (10_000,) if args.quick else (10_000, 100_000)
    ns = tuple(n for n in ns if args.n in (None, n))
    epsilons = tuple(e for e in (1.0, 4.0) if args.epsilon in (None, e))
    print(
        "| data | n | eps | releases / attempts | pinned | coverage min / mean | MC SE "
        "| OLS HC0 min | width / OLS HC0 (min-max) | noise-only min "
        "| noise-only width / OLS HC0 (min-max) | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in args.data.split(","):
        for n in ns:
            for eps in epsilons:
                t0 = time.process_time()
                r = cell(name, n, eps, releases, seed=zlib.crc32(f"{name} {n} {eps}".encode()))
                rows.append(r)
                print(
                    f"| {name} | {n} | {eps:g} | {r['releases']} / {r['attempts']} | "
                    f"{r['pinned']} | {r['coverage_min']:.3f} / {r['coverage_mean']:.3f} | "
                    f"{r['mc_se']:.3f} | {r['ols_min']:.3f} "
                    f"| {r['width_ratio_min']:.2f}-{r['width_ratio_max']:.2f} "
                    f"| {r['noise_min']:.3f} "
                    f"| {r['noise_ratio_min']:.2f}-{r['noise_ratio_max']:.2f} "
                    f"| {time.process_time() - t0:.0f} |",
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()

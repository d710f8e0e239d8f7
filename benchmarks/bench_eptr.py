"""ePTR (paper 001) against the anchors users would pick instead, and ePTR-OLS speed.

Accuracy, in the paper's simulation settings, over an epsilon grid (mean over replicates):

* OLS (E5: n = 8000, p = 5, x ~ N(0, I), theta = v/||v||, noise N(0, 1), delta = 0.01,
  R_x = 4, R_theta = 1, c0 = 0.4): test MSE of ePTR-OLS vs diffprivlib ``LinearRegression``
  (epsilon-DP, no intercept, bounds_X = (-4, 4) and bounds_y = (-4, 4) per column, data clipped
  to them). Symmetric bounds on purpose: diffprivlib 0.6.6 computes a diagonal sensitivity from
  the lower bound twice (IBM/differential-privacy-library#105), which adds no noise when a lower
  bound is 0.
* OLS with one feature (same setting, p = 1): also OpenDP's ``LinearRegression`` (private
  Theil-Sen, the only OpenDP regression; single feature only), its scale calibrated so that its
  privacy map at replace-one distance (symmetric distance 2) equals epsilon.
* Bayes classifier (E1: K = 3, p = 10, mu = (0.75, 0.15, 0.10), n = 5000, c0 = 0.04, R_x = 8,
  delta = 0.01): balanced error of ePTR-Bayes vs diffprivlib ``GaussianNB`` (bounds (-8, 8) per
  feature, data clipped). OpenDP has no classifier.

ePTR is (eps, delta)-DP with delta = 0.01; the anchors are pure eps-DP (stricter), as noted.

Speed: ``EPTRLinearRegression.fit`` (default ``inference="sandwich"``, and ``"none"``) at
n = 10^6, p = 20 as a ratio to ``numpy.linalg.lstsq`` on the same data in the same run
(best of 3). Goal: within 2x.

    python benchmarks/bench_eptr.py [--quick] [--reps 10] [--skip-speed]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from privest.models.eptr_bayes import EPTRBayesClassifier
from privest.models.eptr_ols import EPTRLinearRegression

DELTA = 0.01


def _theta(p: int) -> np.ndarray:
    v = 1.0 / np.arange(1, p + 1)
    return v / np.linalg.norm(v)


def _anchor(name: str):
    """Import an anchor or return the reason it is skipped."""
    try:
        if name == "diffprivlib":
            import diffprivlib.models as m

            return m, ""
        import opendp.prelude as dp

        dp.enable_features("contrib", "honest-but-curious")
        return dp, ""
    except Exception as exc:  # noqa: BLE001 - report any import failure as a skip
        return None, f"{type(exc).__name__}: {exc}"


def _opendp_ols(dp, eps: float, X, y, seed: int):
    """OpenDP private Theil-Sen (one feature) calibrated to eps at replace-one distance."""
    lr = dp.sklearn.linear_model.LinearRegression(
        dp.max_divergence(), x_bounds=[(-4.0, 4.0)], y_bounds=(-4.0, 4.0), scale=1.0
    )
    scale = float(lr.measurement.map(2)) / eps  # the map is linear in 1/scale
    lr = dp.sklearn.linear_model.LinearRegression(
        dp.max_divergence(), x_bounds=[(-4.0, 4.0)], y_bounds=(-4.0, 4.0), scale=scale
    )
    assert float(lr.measurement.map(2)) <= eps * (1 + 1e-9)
    return lr.fit(np.clip(X, -4, 4), np.clip(y, -4, 4))


def bench_ols(eps_grid, reps: int, p: int, rng) -> list[dict]:
    dpl, why_dpl = _anchor("diffprivlib")
    odp, why_odp = _anchor("opendp") if p == 1 else (None, "single-feature only (p > 1)")
    rows = []
    theta = _theta(p)
    for eps in eps_grid:
        res: dict[str, list[float]] = {
            "non-private": [],
            "ePTR": [],
            "diffprivlib": [],
            "OpenDP": [],
        }
        for r in range(reps):
            X = rng.standard_normal((8000, p))
            y = X @ theta + rng.standard_normal(8000)
            Xt = rng.standard_normal((10_000, p))
            yt = Xt @ theta + rng.standard_normal(10_000)

            def mse(pred, yt=yt):
                return float(np.mean((pred - yt) ** 2))

            res["non-private"].append(mse(Xt @ np.linalg.lstsq(X, y, rcond=None)[0]))
            m = EPTRLinearRegression(
                epsilon=eps,
                delta=DELTA,
                x_radius=4.0,
                theta_radius=1.0,
                c0=0.4,
                random_state=rng,
                clip=True,
                inference="none",  # the point estimate at the whole budget
            ).fit(X, y)
            res["ePTR"].append(mse(m.predict(Xt)))
            if dpl is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    a = dpl.LinearRegression(
                        epsilon=eps,
                        bounds_X=(-4.0, 4.0),
                        bounds_y=(-4.0, 4.0),
                        fit_intercept=False,
                        random_state=int(rng.integers(2**31)),
                    ).fit(np.clip(X, -4, 4), np.clip(y, -4, 4))
                res["diffprivlib"].append(mse(a.predict(Xt)))
            if odp is not None:
                res["OpenDP"].append(mse(_opendp_ols(odp, eps, X, y, r).predict(Xt)))
        row = {"eps": eps}
        for k, v in res.items():
            row[k] = float(np.mean(v)) if v else float("nan")
        rows.append(row)
    _print("OLS test MSE", p, rows, {"diffprivlib": why_dpl, "OpenDP": why_odp})
    return rows


def _balanced_error(pred, labels):
    return float(np.mean([np.mean(pred[labels == k] != k) for k in range(3)]))


def bench_bayes(eps_grid, reps: int, rng) -> list[dict]:
    dpl, why = _anchor("diffprivlib")
    mu = np.array([0.75, 0.15, 0.10])
    rows = []

    def sim(n):
        lab = rng.choice(3, size=n, p=mu)
        X = rng.standard_normal((n, 10))
        X[np.arange(n), lab] += 3.0
        return X, lab

    for eps in eps_grid:
        res: dict[str, list[float]] = {"ePTR": [], "diffprivlib": []}
        for _ in range(reps):
            X, lab = sim(5000)
            Xt, lt = sim(50_000)
            m = EPTRBayesClassifier(
                epsilon=eps,
                delta=DELTA,
                classes=[0, 1, 2],
                x_radius=8.0,
                c0=0.04,
                random_state=rng,
                clip=True,
            )
            res["ePTR"].append(_balanced_error(m.fit(X, lab).predict(Xt), lt))
            if dpl is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    a = dpl.GaussianNB(
                        epsilon=eps, bounds=(-8.0, 8.0), random_state=int(rng.integers(2**31))
                    )
                    a.fit(np.clip(X, -8, 8), lab)
                    res["diffprivlib"].append(_balanced_error(a.predict(Xt), lt))
        rows.append(
            {"eps": eps, **{k: float(np.mean(v)) if v else float("nan") for k, v in res.items()}}
        )
    _print("Bayes balanced error", 10, rows, {"diffprivlib": why})
    return rows


def _print(title: str, p: int, rows: list[dict], skipped: dict[str, str]) -> None:
    cols = [k for k in rows[0] if k != "eps"]
    print(f"\n{title} (p = {p}); lower is better")
    print("  eps  " + "".join(f"{c:>13}" for c in cols))
    for r in rows:
        print(f"  {r['eps']:<5g}" + "".join(f"{r[c]:>13.4f}" for c in cols))
    for name, why in skipped.items():
        if why:
            print(f"  {name}: skipped ({why})")


def bench_speed(n: int, p: int, repeats: int = 3) -> dict[str, float]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, p))
    y = X @ _theta(p) + rng.standard_normal(n)
    times: dict[str, list[float]] = {"lstsq_s": [], "eptr_s": [], "eptr_none_s": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.linalg.lstsq(X, y, rcond=None)
        times["lstsq_s"].append(time.perf_counter() - t0)
        for key, inference in (("eptr_s", "sandwich"), ("eptr_none_s", "none")):
            t0 = time.perf_counter()
            EPTRLinearRegression(
                epsilon=1.0,
                delta=1e-6,
                x_radius=2 * np.sqrt(p * np.log(n)),
                theta_radius=1.0,
                c0=0.25,
                random_state=1,
                clip=True,
                inference=inference,
            ).fit(X, y)
            times[key].append(time.perf_counter() - t0)
    out = {key: min(v) for key, v in times.items()}
    out["ratio"] = out["eptr_s"] / out["lstsq_s"]
    print(f"\nePTR-OLS speed, n = {n:,}, p = {p} (best of {repeats})")
    print(f"  numpy.linalg.lstsq: {out['lstsq_s']:.3f} s")
    print(
        f"  EPTRLinearRegression.fit: {out['eptr_s']:.3f} s (inference='none': "
        f"{out['eptr_none_s']:.3f} s)"
    )
    print(f"  ratio {out['ratio']:.2f}x (goal <= 2x)")
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 replicates, smaller grids")
    parser.add_argument("--reps", type=int, default=None, help="replicates (default 10)")
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args(argv)
    reps = args.reps or (2 if args.quick else 10)
    rng = np.random.default_rng(2026)
    ols_grid = (1.0, 4.0) if args.quick else (1.0, 1.5, 2.0, 4.0, 8.0)
    bayes_grid = (1.0, 3.0) if args.quick else (0.5, 1.0, 1.5, 2.0, 3.0)
    out = {
        "ols_p5": bench_ols(ols_grid, reps, 5, rng),
        "ols_p1": bench_ols(ols_grid, reps, 1, rng),
        "bayes": bench_bayes(bayes_grid, reps, rng),
    }
    if not args.skip_speed:
        out["speed"] = bench_speed(200_000 if args.quick else 1_000_000, 20)
    return out


if __name__ == "__main__":
    main()

"""Coverage and Wald type I error of PrivateLinearRegression's ``results_`` on real data
(docs/central-models.md, "Standard errors, intervals and Wald tests").

The data set is the population; each release resamples n records with replacement and fits
once (default ``method="auto"``); the truth is the population's non-private OLS fit. Per
cell, on the same releases: the current intervals (HC0 sampling term, simulated privacy
noise) and the previous ones (homoscedastic first-order sandwich, recomputed from the same
released statistics), the worst, the mean and the best coverage over the coefficients with
the Monte Carlo standard error, the median over coefficients of the mean ratio of the standard error
to the non-private HC0 one on the same sample, the share of releases without standard
errors (a fallback) and the share flagged unstable; and the noise-only interval (the
anchors' kind: the estimate +- z times the privacy noise's standard error alone, the
library's ``simulated_cov(sampling=False)`` of the same released statistics), its coverage
of the population coefficients and its width over the non-private HC0 interval.

Calibrated intervals (``--only intervals``): on the type I cells' population below (true
coefficients: the population OLS fit, z's 0), the coverage of the slopes' 95% intervals of
``results_.conf_int()`` ("calibrated": the inverted simulated test where the public rule
fires), of the shipped Wald intervals coef +- 1.96 ``bse`` and of the non-private OLS (HC0)
interval, all from the same releases (``method="adassp"``), with the width over the
non-private one's (mean and median over the releases, median over the slopes); z's type I
error by the calibrated test (0 outside the interval); the intercept's (Wald) coverage of
the population intercept; and the share
of releases where 0 lies in every slope's calibrated interval iff its calibrated p-value is
>= 0.05 (by construction: 1).

Type I error: a pure-noise feature z, made exactly orthogonal to the constant, the features
and y in the population (so its population coefficient is 0), is added to diabetes bmi, bp,
s5; the rate of p-values of z below 0.05 (``method="adassp"``: ``"auto"`` may fall back),
calibrated (``results_.pvalues``) and by the normal approximation of the same z, on the same
releases, beside the non-private OLS (HC0) Wald test of z on the same resamples. Power: the
same with y + beta z (z's population coefficient beta).

    OMP_NUM_THREADS=1 python benchmarks/bench_linear_inference.py [--reps 1000]
        [--power-reps 1000] [--only coverage|intervals|type1|power|nulls] [--n 300]
        [--diagnose [--seeds 300 301]]

Null-world diagnostics (``--only nulls``, docs/central-models.md): on the type I releases,
the calibrated tests of the slopes at their population values with the null world's X'X
the released one (shipped), the sample's own (an oracle) or the released spectrum de-biased.

Which term is short (``--diagnose``, n = 10^4 and epsilon 1 and 4 unless given;
docs/central-models.md, "n = 10^4: which term is short"): on the type I releases (``--seeds
300``; another seed draws other resamples and fit seeds; several are pooled), the error of
the ridge-free solve split into the sampling part (the sample's own OLS - the population's)
and the privacy noise's part (the solve - the sample's OLS), each against its part of the reported
first-order sandwich (A^-1 M~ A^-1; A^-1 (s_xy^2 I + s^2/2 (||theta||^2 I + theta
theta')) A^-1) and against the same terms at the sample's own X'X, HC0 matrix and OLS fit
(oracles: they read the data).
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
from scipy.stats import norm
from sklearn.datasets import load_diabetes

import privest as pv
from privest.models.central import public_design
from privest.models.linear_inference import (
    _sym_noise,
    calibrated_pivot,
    calibration_needed,
    linear_inference,
    ridge_free_solve,
    robust_gram,
    simulated_cov,
)

Z975 = 1.959963984540054

#: fair (statsmodels): rate_marriage on age, yrs_married, religious, educ, with bounds from
#: the survey's coding of each variable (not read off the data)
FAIR_COLUMNS = ["age", "yrs_married", "religious", "educ"]
FAIR_BOUNDS = [(17.5, 42.0), (0.5, 23.0), (1.0, 4.0), (9.0, 20.0)]
FAIR_Y_BOUNDS = (1.0, 5.0)


def population(data: str, cols: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """X, y, the feature bounds and y_bounds of a population."""
    if data == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        X = X[:, cols]  # standardised columns: their range is the public scaling's
        return X, y, np.column_stack([X.min(0), X.max(0)]), (25.0, 346.0)
    import statsmodels.api as sm

    df = sm.datasets.fair.load_pandas().data
    X = df[[FAIR_COLUMNS[j] for j in cols]].to_numpy(float)
    return X, df["rate_marriage"].to_numpy(float), np.array(FAIR_BOUNDS)[cols], FAIR_Y_BOUNDS


def old_se(rel: dict, n: int) -> np.ndarray:
    """The previous intervals' standard errors (theta coordinates): the first-order sandwich
    A^-1 (sigma^2 A + s_xy^2 I + s^2/2 (||theta||^2 I + theta theta')) A^-1 with a
    homoscedastic sigma^2 from the released y'y."""
    theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
    vals, vecs = np.linalg.eigh(rel["S"])
    A_inv = (vecs / np.maximum(vals, rel["floor"])) @ vecs.T
    S = (vecs * np.maximum(vals, 0.0)) @ vecs.T
    sigma2 = max((rel["yy"] - 2.0 * theta @ rel["b"] + theta @ S @ theta) / n, 0.0)
    d = theta.size
    tt = (theta @ theta) * np.eye(d) + np.outer(theta, theta)
    mid = sigma2 * S + rel["sd_xy"] ** 2 * np.eye(d) + rel["sd_xx"] ** 2 / 2.0 * tt
    return A_inv @ mid @ A_inv


def _user_se(model: pv.PrivateLinearRegression, cov: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """theta coordinates -> (intercept, coef): the map of central_results."""

    design = public_design(bounds, np.asarray(model.y_bounds, float), True)
    p = bounds.shape[0]
    J = np.vstack([np.append(-design["centre"], design["const"]), np.eye(p, p + 1)])
    return np.sqrt(np.diag(J @ cov @ J.T))


def noise_only_cov(rel: dict, seed: int) -> np.ndarray:
    """The privacy noise's covariance alone (theta coordinates) at the released estimate."""
    theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
    return simulated_cov(theta, rel, np.random.default_rng(seed), sampling=False)


def _hc_se(D: np.ndarray, y: np.ndarray) -> np.ndarray:
    Q = np.linalg.inv(D.T @ D)
    r = y - D @ (Q @ D.T @ y)
    return np.sqrt(np.diag(Q @ (D.T * r**2) @ D @ Q))


def cell(data: str, cols: list[int], n: int, epsilon: float, reps: int) -> dict[str, dict]:
    X, y, bounds, y_bounds = population(data, cols)
    truth = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    rng = np.random.default_rng(2027)
    hits: dict[str, list] = {"new": [], "old": [], "non-private": [], "noise-only": []}
    ratio = {"new": [], "old": [], "noise-only": []}
    no_se = unstable = 0
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = pv.PrivateLinearRegression(
                epsilon=epsilon, delta=1e-6, bounds=bounds, y_bounds=y_bounds, random_state=r
            ).fit(X[idx], y[idx])
        if m.results_.cov is None:
            no_se += 1
            continue
        unstable += any("unstable" in note for note in m.results_.notes)
        params = m.results_.params.to_numpy()
        Ds = np.column_stack([np.ones(n), X[idx]])
        se0 = _hc_se(Ds, y[idx])
        ols = np.linalg.lstsq(Ds, y[idx], rcond=None)[0]
        hits["non-private"].append(np.abs(ols - truth) <= 1.959963984540054 * se0)
        ses = {
            "new": m.results_.bse.to_numpy(),
            "old": _user_se(m, old_se(m.released_stats_, n), bounds),
            "noise-only": _user_se(m, noise_only_cov(m.released_stats_, r), bounds),
        }
        for k, se in ses.items():
            hits[k].append(np.abs(params - truth) <= 1.959963984540054 * se)
            ratio[k].append(se / se0)
    out = {}
    for k in hits:
        cover = np.mean(hits[k], axis=0)
        out[k] = {"worst": float(cover.min()), "mean": float(cover.mean())}
        out[k]["best"] = float(cover.max())
        if k in ratio:
            out[k]["ratio"] = float(np.median(np.mean(ratio[k], axis=0)))
    kept = reps - no_se
    out["mc_se"] = math.sqrt(0.95 * 0.05 / max(kept, 1))
    out["no_se"] = no_se / reps
    out["unstable"] = unstable / max(kept, 1)
    return out


def noise_population(seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """diabetes bmi, bp, s5 and a pure-noise z orthogonal to (1, X, y): its population
    coefficient is exactly 0. Its bounds are those of its construction (public)."""
    X, y, bounds, y_bounds = population("diabetes", [2, 3, 8])
    z = np.random.default_rng(seed).uniform(-1.0, 1.0, len(y))
    B = np.column_stack([np.ones(len(y)), X, y])
    z = z - B @ np.linalg.lstsq(B, z, rcond=None)[0]
    z *= 0.1 / np.abs(z).max()  # the scale of the standardised diabetes columns
    return np.column_stack([X, z]), y, np.vstack([bounds, [-0.1, 0.1]]), y_bounds


def _adassp_fit(
    X: np.ndarray, y: np.ndarray, bounds: np.ndarray, y_bounds: tuple, epsilon: float, seed: int
) -> pv.PrivateLinearRegression:
    """One seeded AdaSSP release at delta 1e-6 (warnings silenced; the bench reads the results)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pv.PrivateLinearRegression(
            epsilon=epsilon,
            delta=1e-6,
            bounds=bounds,
            y_bounds=y_bounds,
            method="adassp",
            random_state=seed,
        ).fit(X, y)


def rejections(n: int, epsilon: float, reps: int, beta: float = 0.0) -> dict[str, float]:
    """Rejection rates at 0.05 of z's coefficient = 0 over ``reps`` releases, on the same
    releases: the calibrated p-values of ``results_`` ("new": simulated null where the public
    rule asks for it) and the normal approximation of the same z ("old"). ``beta`` is z's
    population coefficient (y + beta z; y_bounds widened for the largest beta of POWER)."""
    X, y, bounds, y_bounds = noise_population()
    y = y + beta * X[:, -1]
    pad = 0.1 * max(abs(k) for k in POWER_MULTIPLES) * nonprivate_se(n) if beta else 0.0
    y_bounds = (y_bounds[0] - pad, y_bounds[1] + pad) if pad else y_bounds
    rng = np.random.default_rng(300)
    reject = {"new": 0, "old": 0, "non-private": 0}
    unstable = calibrated = 0
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        m = _adassp_fit(X[idx], y[idx], bounds, y_bounds, epsilon, r)
        res = m.results_
        unstable += any("unstable" in note for note in res.notes)
        sim = getattr(res, "null_pvalues", None)  # NaN where the normal approximation is used
        calibrated += sim is not None and not np.isnan(sim.iloc[-1])
        normal_p = 2.0 * norm.sf(abs(res.tvalues.to_numpy()[-1]))
        reject["new"] += bool(res.pvalues.to_numpy()[-1] < 0.05)
        reject["old"] += bool(normal_p < 0.05)
        Ds = np.column_stack([np.ones(n), X[idx]])  # the non-private OLS (HC0) Wald test
        ols = np.linalg.lstsq(Ds, y[idx], rcond=None)[0]
        reject["non-private"] += bool(abs(ols[-1]) > Z975 * _hc_se(Ds, y[idx])[-1])
    return {
        "new": reject["new"] / reps,
        "old": reject["old"] / reps,
        "non-private": reject["non-private"] / reps,
        "mc_se": math.sqrt(0.05 * 0.95 / reps),
        "unstable": unstable / reps,
        "calibrated": calibrated / reps,
    }


def interval_cell(n: int, epsilon: float, reps: int) -> dict[str, float]:
    """Coverage and width of the slopes' calibrated, shipped and non-private intervals on the
    same ``reps`` releases, the intercept's (Wald) coverage and z's type I error by the
    calibrated test (module docstring)."""
    X, y, bounds, y_bounds = noise_population()
    D = np.column_stack([np.ones(len(y)), X])
    full = np.linalg.lstsq(D, y, rcond=None)[0]
    truth = full[1:]
    rng = np.random.default_rng(300)
    keys = ("calibrated", "shipped", "non-private")
    hits: dict[str, list] = {k: [] for k in keys}
    width: dict[str, list] = {k: [] for k in keys[:2]}
    agree = calibrated = intercept = type1 = 0
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        m = _adassp_fit(X[idx], y[idx], bounds, y_bounds, epsilon, r)
        res = m.results_
        params = res.params.to_numpy()[1:]
        se = res.bse.to_numpy()[1:]
        ci = res.conf_int().to_numpy()
        intercept += bool(ci[0, 0] <= full[0] <= ci[0, 1])
        ci = ci[1:]
        type1 += bool(not ci[-1, 0] <= 0.0 <= ci[-1, 1])  # z's coefficient is 0
        Ds = D[idx]
        ols = np.linalg.lstsq(Ds, y[idx], rcond=None)[0][1:]
        se0 = _hc_se(Ds, y[idx])[1:]
        ends = {
            "calibrated": ci,
            "shipped": np.column_stack([params - Z975 * se, params + Z975 * se]),
            "non-private": np.column_stack([ols - Z975 * se0, ols + Z975 * se0]),
        }
        for k, e in ends.items():
            hits[k].append((e[:, 0] <= truth) & (truth <= e[:, 1]))
            if k in width:
                width[k].append((e[:, 1] - e[:, 0]) / (2.0 * Z975 * se0))
        sim = getattr(res, "null_pvalues", None)
        calibrated += sim is not None and not np.isnan(sim.iloc[-1])
        zero_in = (ci[:, 0] <= 0.0) & (0.0 <= ci[:, 1])
        agree += bool(np.all(zero_in == (res.pvalues.to_numpy()[1:] >= 0.05)))
    out: dict[str, float] = {"mc_se": math.sqrt(0.95 * 0.05 / reps)}
    for k, h in hits.items():
        cover = np.mean(h, axis=0)
        out[f"{k} worst"], out[f"{k} mean"] = float(cover.min()), float(cover.mean())
        out[f"{k} best"] = float(cover.max())
    for k, w in width.items():  # mean and median over releases, median over the slopes
        out[f"{k} width"] = float(np.median(np.mean(w, axis=0)))
        out[f"{k} median width"] = float(np.median(np.median(w, axis=0)))
    out["agree"], out["calibrated"] = agree / reps, calibrated / reps
    out["intercept"] = intercept / reps
    out["type1"] = type1 / reps
    return out


def interval_table(reps: int, cells: list[tuple[int, float]]) -> None:
    """The calibrated intervals' table of the module docstring."""
    print(
        "\n| n | epsilon | worst / mean / best coverage, calibrated | shipped | non-private "
        "| MC se "
        "| width / non-private (mean; median), calibrated | shipped | z's type I, calibrated "
        "| intercept (Wald) | calibrated share | 0 in CI iff p >= 0.05 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, eps in cells:
        c = interval_cell(n, eps, reps)
        cov = f"{c['calibrated worst']:.3f} / {c['calibrated mean']:.3f} / "
        cov += f"{c['calibrated best']:.3f} | " + " | ".join(
            f"{c[k + ' worst']:.3f} / {c[k + ' mean']:.3f}" for k in ("shipped", "non-private")
        )
        wid = " | ".join(
            f"{c[k + ' width']:.2f}; {c[k + ' median width']:.2f}"
            for k in ("calibrated", "shipped")
        )
        print(
            f"| {n} | {eps:g} | {cov} | {c['mc_se']:.3f} | {wid} "
            f"| {c['type1']:.3f} | {c['intercept']:.3f} "
            f"| {c['calibrated']:.2f} | {c['agree']:.2f} |",
            flush=True,
        )


def debiased_gram(rel: dict, steps: int, rng: np.random.Generator) -> np.ndarray:
    """The released A's eigenvectors with its eigenvalues de-biased by the simulated spread
    of A + E* (400 draws of the noise's law): l <- max(l + lambda(A) - mean lambda(V diag(l)
    V' + E*), floor) from l = lambda(A), ``steps`` times (1: the bootstrap's bias correction
    2 lambda(A) - mean lambda(A + E*); 6: the method of moments)."""
    A = rel["S"]
    vals, vecs = np.linalg.eigh(A)
    E = _sym_noise(rel["sd_xx"], A.shape[0], 400, rng)
    lam = vals.copy()
    for _ in range(steps):
        spread = np.linalg.eigvalsh((vecs * lam) @ vecs.T + E).mean(axis=0)
        lam = np.maximum(lam + vals - spread, rel["floor"])
    return (vecs * lam) @ vecs.T


def null_worlds(n: int, epsilon: float, reps: int) -> dict[str, np.ndarray]:
    """Diagnostics of the calibrated test's null world (docs/central-models.md): on the type I
    releases, whether each slope's calibrated test accepts its population value at 0.05
    (= its calibrated interval covers it), with the null world's X'X the released A (as
    shipped), the sample's own X'X (an oracle: it reads the data), or A's spectrum de-biased
    (one step, six steps); 1,000 draws per test, seeds per release. Returns (releases, 4)
    acceptance per variant, over the releases where the rule calibrates."""
    X, y, bounds, y_bounds = noise_population()
    D = np.column_stack([np.ones(len(y)), X])
    beta = np.linalg.lstsq(D, y, rcond=None)[0]
    design = public_design(bounds, np.asarray(y_bounds, float), True)
    const = (beta[0] + beta[1:] @ design["centre"] - design["y_centre"]) / design["const"]
    truth = np.append(beta[1:], const)[:, None]  # theta coordinates
    rng = np.random.default_rng(300)
    out: dict[str, list] = {
        "released A": [],
        "oracle X'X": [],
        "de-biased, 1": [],
        "de-biased, 6": [],
    }
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        m = _adassp_fit(X[idx], y[idx], bounds, y_bounds, epsilon, r)
        rel = m.released_stats_
        if not calibration_needed(rel):
            continue
        Xc = np.column_stack([X[idx] - design["centre"], np.full(n, design["const"])])
        theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
        worlds = {
            "released A": None,
            "oracle X'X": Xc.T @ Xc,
            "de-biased, 1": debiased_gram(rel, 1, np.random.default_rng(5000 + r)),
            "de-biased, 6": debiased_gram(rel, 6, np.random.default_rng(5000 + r)),
        }
        for k, gram in worlds.items():
            pivot = calibrated_pivot(theta, rel, np.random.default_rng(2000 + r), 1000, gram)
            out[k].append(pivot.pvalues(truth)[:-1, 0] >= 0.05)
    return {k: np.array(v) for k, v in out.items()}


def null_table(reps: int, cells: list[tuple[int, float]]) -> None:
    """The null-world diagnostics' table (:func:`null_worlds`): worst / mean coverage over
    the slopes and z's type I error per variant."""
    print("\n| n | epsilon | releases | null X'X | worst / mean coverage | z's type I |")
    print("|---|---|---|---|---|---|")
    for n, eps in cells:
        for k, acc in null_worlds(n, eps, reps).items():
            if not len(acc):  # the rule calibrated no release of the cell
                print(f"| {n} | {eps:g} | 0 | {k} | | |", flush=True)
                continue
            cover = acc.mean(axis=0)
            print(
                f"| {n} | {eps:g} | {len(acc)} | {k} | {cover.min():.3f} / {cover.mean():.3f} "
                f"| {1.0 - cover[-1]:.3f} |",
                flush=True,
            )


def _noise_mid(rel: dict, t: np.ndarray) -> np.ndarray:
    """The privacy noise's middle matrix s_xy^2 I + s^2/2 (||t||^2 I + t t') at t."""
    tt = (t @ t) * np.eye(t.size) + np.outer(t, t)
    return rel["sd_xy"] ** 2 * np.eye(t.size) + rel["sd_xx"] ** 2 / 2.0 * tt


def diagnose_cell(
    n: int, epsilon: float, reps: int, seeds: tuple[int, ...] = (300,)
) -> dict[str, np.ndarray]:
    """Which term of the linear sandwich is short (module docstring), per coefficient in the
    design's coordinates (features centred at the box centre, then the constant column),
    over ``reps`` releases of each resample seed in ``seeds`` (pooled)."""
    X, y, bounds, y_bounds = noise_population()
    beta = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    design = public_design(bounds, np.asarray(y_bounds, float), True)
    const = (beta[0] + beta[1:] @ design["centre"] - design["y_centre"]) / design["const"]
    truth = np.append(beta[1:], const)
    keys = ("samp", "noise", "se2", "samp2", "noise2", "oracle_samp2", "oracle_noise2")
    rows: dict[str, list] = {k: [] for k in keys}
    for seed, r in ((s, r) for s in seeds for r in range(reps)):
        if r == 0:
            rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(y), n)
        m = _adassp_fit(X[idx], y[idx], bounds, y_bounds, epsilon, r + 100_000 * (seed - 300))
        rel = m.released_stats_
        Xc = np.column_stack([X[idx] - design["centre"], np.full(n, design["const"])])
        yc = y[idx] - design["y_centre"]
        G_inv = np.linalg.inv(Xc.T @ Xc)
        ols = G_inv @ (Xc.T @ yc)
        theta = ridge_free_solve(rel["S"], rel["b"], rel["floor"])
        vals, vecs = np.linalg.eigh(rel["S"])
        A_inv = (vecs / np.maximum(vals, rel["floor"])) @ vecs.T
        resid = yc - Xc @ ols
        rows["samp"].append(ols - truth)
        rows["noise"].append(theta - ols)
        rows["se2"].append(np.diag(linear_inference(rel, np.random.default_rng(10**6 + r))[1]))
        rows["samp2"].append(np.diag(A_inv @ robust_gram(theta, rel) @ A_inv))
        rows["noise2"].append(np.diag(A_inv @ _noise_mid(rel, theta) @ A_inv))
        rows["oracle_samp2"].append(np.diag(G_inv @ (Xc.T * resid**2) @ Xc @ G_inv))
        rows["oracle_noise2"].append(np.diag(G_inv @ _noise_mid(rel, ols) @ G_inv))
    a = {k: np.array(v) for k, v in rows.items()}
    err = a["samp"] + a["noise"]
    mean = {k: a[k].mean(axis=0) for k in keys[2:]}
    d = err.shape[1]
    return {
        "coverage": np.mean(np.abs(err) <= Z975 * np.sqrt(a["se2"]), axis=0),
        "sd / rms se": err.std(axis=0) / np.sqrt(mean["se2"]),
        "bias / se": err.mean(axis=0) / np.sqrt(mean["se2"]),
        "noise share": mean["noise2"] / (mean["noise2"] + mean["samp2"]),
        "noise: sd / reported": a["noise"].std(axis=0) / np.sqrt(mean["noise2"]),
        "noise: sd / oracle": a["noise"].std(axis=0) / np.sqrt(mean["oracle_noise2"]),
        "reported / oracle noise": mean["noise2"] / mean["oracle_noise2"],
        "sampling: sd / reported": a["samp"].std(axis=0) / np.sqrt(mean["samp2"]),
        "sampling: sd / oracle HC0": a["samp"].std(axis=0) / np.sqrt(mean["oracle_samp2"]),
        "corr(noise, sampling)": np.array(
            [np.corrcoef(a["noise"][:, j], a["samp"][:, j])[0, 1] for j in range(d)]
        ),
    }


def diagnose_table(reps: int, cells: list[tuple[int, float]], seeds: tuple[int, ...]) -> None:
    """The table of :func:`diagnose_cell`, one row per coefficient (z is the type I's)."""
    names = ["bmi", "bp", "s5", "z", "constant column"]
    cols: list[str] = []  # the first cell's keys
    for n, eps in cells:
        c = diagnose_cell(n, eps, reps, seeds)
        if not cols:
            cols = list(c)
            print("\n| n | epsilon | coefficient | " + " | ".join(cols) + " |")
            print("|---" * (3 + len(cols)) + "|")
        for j, name in enumerate(names):
            vals = " | ".join(f"{c[k][j]:.3f}" for k in cols)
            print(f"| {n} | {eps:g} | {name} | {vals} |", flush=True)


def nonprivate_se(n: int) -> float:
    """The non-private (OLS) standard error of z's coefficient at n in the noise population."""
    X, y, _, _ = noise_population()
    D = np.column_stack([np.ones(len(y)), X])
    r = y - D @ np.linalg.lstsq(D, y, rcond=None)[0]
    return float(r.std() / (X[:, -1].std() * math.sqrt(n)))


CELLS = [
    ("diabetes", [2, 3, 8], 1_000, 1.0),
    ("diabetes", [2, 3, 8], 1_000, 4.0),
    ("diabetes", [2, 3, 8], 10_000, 1.0),
    ("diabetes", [2, 3, 8], 10_000, 4.0),
    ("diabetes", [2, 3, 8], 100_000, 1.0),
    ("diabetes", [2, 3, 8], 100_000, 4.0),
    ("diabetes", list(range(10)), 10_000, 1.0),
    ("fair", [0, 1, 2, 3], 1_000, 1.0),
    ("fair", [0, 1, 2, 3], 10_000, 1.0),
    ("fair", [0, 1, 2, 3], 10_000, 4.0),
    ("fair", [0, 1, 2, 3], 100_000, 1.0),
]
TYPE1_CELLS = [(n, eps) for n in (300, 1_000, 10_000) for eps in (0.5, 1.0, 4.0)]
#: power: z's population coefficient in multiples of its non-private standard error
POWER_CELLS = [(1_000, 1.0), (10_000, 1.0)]
POWER_MULTIPLES = [0.0, 4.0, 8.0, 16.0, 32.0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--power-reps", type=int, default=1000)
    parser.add_argument(
        "--only", choices=["coverage", "intervals", "type1", "power", "nulls"], default=None
    )
    parser.add_argument("--n", type=int, default=None, help="only the cells of this n")
    parser.add_argument("--epsilon", type=float, default=None, help="only this epsilon")
    parser.add_argument(
        "--diagnose", action="store_true", help="which term is short (oracles read the data)"
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[300], help="--diagnose: resample seeds, pooled"
    )
    args = parser.parse_args(argv)
    if args.diagnose:
        cells = [(10_000, 1.0), (10_000, 4.0)] if args.n is None else TYPE1_CELLS
        cells = [c for c in cells if args.n in (None, c[0]) and args.epsilon in (None, c[1])]
        diagnose_table(args.reps, cells, tuple(args.seeds))
        return
    cells = [c for c in TYPE1_CELLS if args.n in (None, c[0]) and args.epsilon in (None, c[1])]
    if args.only in (None, "coverage"):
        coverage_table(args.reps, args.n, args.epsilon)
    if args.only in (None, "intervals"):
        interval_table(args.reps, cells)
    if args.only == "nulls":  # diagnostics (an oracle reads the data): on request only
        null_table(args.reps, cells)
    if args.only in (None, "type1"):
        print(
            "\n| n | epsilon | type I error, calibrated | normal approximation | non-private HC0 "
            "| MC se | calibrated share | unstable |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for n, eps in cells:
            t = rejections(n, eps, args.reps)
            print(
                f"| {n} | {eps:g} | {t['new']:.3f} | {t['old']:.3f} | {t['non-private']:.3f} "
                f"| {t['mc_se']:.3f} "
                f"| {t['calibrated']:.2f} | {t['unstable']:.2f} |",
                flush=True,
            )
    if args.only in (None, "power"):
        print(
            "\n| n | epsilon | beta / non-private se | rejection, calibrated "
            "| normal approximation | non-private HC0 |"
        )
        print("|---|---|---|---|---|---|")
        for n, eps in POWER_CELLS:
            for k in POWER_MULTIPLES:
                t = rejections(n, eps, args.power_reps, k * nonprivate_se(n))
                print(
                    f"| {n} | {eps:g} | {k:g} | {t['new']:.3f} | {t['old']:.3f} "
                    f"| {t['non-private']:.3f} |",
                    flush=True,
                )


def coverage_table(reps: int, only_n: int | None = None, only_eps: float | None = None) -> None:
    """The coverage table of the module docstring (the cells of ``only_n``, ``only_eps``)."""
    print(
        "| data (columns) | n | epsilon | worst / mean / best coverage, new | old "
        "| non-private HC0 "
        "| MC se | width / non-private HC, new | old | no SE | unstable "
        "| noise-only worst / mean | noise-only width / non-private HC |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for data, cols, n, eps in CELLS:
        if only_n not in (None, n) or only_eps not in (None, eps):
            continue
        c = cell(data, cols, n, eps, reps)
        new, old, plain, noise = c["new"], c["old"], c["non-private"], c["noise-only"]
        print(
            f"| {data} {cols} | {n} | {eps:g} "
            f"| {new['worst']:.3f} / {new['mean']:.3f} / {new['best']:.3f} "
            f"| {old['worst']:.3f} / {old['mean']:.3f} "
            f"| {plain['worst']:.3f} / {plain['mean']:.3f} | {c['mc_se']:.3f} "
            f"| {new['ratio']:.2f} | {old['ratio']:.2f} | {c['no_se']:.2f} "
            f"| {c['unstable']:.2f} | {noise['worst']:.3f} / {noise['mean']:.3f} "
            f"| {noise['ratio']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

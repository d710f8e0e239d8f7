"""Coverage of the logistic models' 95% intervals on real data (docs/central-models.md; the
linear model's: ``bench_linear_inference.py``).

The data set is the population; each release resamples n records with replacement and fits
once; the truth is the full data set's non-private maximum likelihood fit. Per cell and
``cov_type`` ("nonrobust", "HC0", on the same resamples and seeds): the worst and the mean
coverage over the coefficients, with the Monte Carlo standard error, the mean width ratio
to the non-private robust (HC0) interval on the same sample, the worst coverage of the
non-private classical and HC0 intervals, and the CPU ms of one fit.

    OMP_NUM_THREADS=1 python benchmarks/bench_model_inference.py [--reps 200] [--bootstrap]
        [--data fair] [--n 10000] [--epsilon 1] [--cov-type nonrobust] [--cost] [--nonprivate]
        [--diagnose]

Cells fit the default method (``method="noisy_mm"``) with its noise-aware sandwich
(``inference="sandwich"``: the default's n x epsilon rule would skip the small cells); the
"multinomial" cells fit three classes (:data:`MULTICLASS_DATA`, n = 10^4 and 10^5; truth and
non-private intervals from statsmodels' MNLogit);
``--nonprivate`` gives, per coefficient, the coverage, bias and sd of the non-private
MLE alone on the same resamples (:func:`nonprivate_cell`); ``--diagnose`` splits the
default's error per coefficient into its privacy noise and sampling parts against the
reported ones (:func:`diagnose_cell`; binary cells, or with ``--only multinomial`` the
three-class ones, n = 10^4 and epsilon 1 unless given);
``--no-noise-only`` skips the noise-only interval's refit (its columns NaN; half the time);
``--bootstrap`` adds the cells of ``method="noisy_gd", inference="bootstrap"`` (about 1,000
times slower); ``--data``, ``--n``, ``--epsilon`` run the matching cells only; ``--cost``
times one fit at n = 10^5, p = 10 with and without standard errors. Coverage is over the
releases that have standard errors ("no SE" is the share without). The statsmodels data
sets (fair: affairs > 0; randhie: mdvis > 0; anes96: vote) need statsmodels (the ``bench``
extra); their bounds are public facts about each variable, not read off the data. For a
same-run baseline, run the file again with ``PYTHONPATH`` at the other code base.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer

import privest as pv
from privest.models.inference import nearest_psd
from privest.models.logistic_fit import gradient_sum
from privest.models.logistic_inference import contrasts, in_classes, noisy_hessian, one_step_cov


def _logit_se(D: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-private maximum likelihood estimate (Newton's method to a step of 1e-10), its
    classical standard errors and its robust (HC0: H^-1 sum_i s_i s_i' H^-1) ones."""
    theta = np.zeros(D.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-D @ theta))
        H_inv = np.linalg.inv(D.T @ (D * (p * (1 - p))[:, None]))
        step = H_inv @ (D.T @ (y - p))
        theta = theta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    else:
        raise RuntimeError("the non-private logistic MLE did not converge in 100 Newton steps")
    p = 1.0 / (1.0 + np.exp(-D @ theta))
    H_inv = np.linalg.inv(D.T @ (D * (p * (1 - p))[:, None]))
    S = D * (y - p)[:, None]
    robust = np.sqrt(np.diag(H_inv @ (S.T @ S) @ H_inv))
    return theta, np.sqrt(np.diag(H_inv)), robust


#: statsmodels data sets: the response, and each feature with its public bounds
STATSMODELS_DATA = {
    "fair": (
        lambda d: d["affairs"] > 0,
        {"rate_marriage": (1, 5), "yrs_married": (0, 25), "religious": (1, 4)},
    ),
    "randhie": (
        lambda d: d["mdvis"] > 0,
        {"lncoins": (0, 4.62), "physlm": (0, 1), "disea": (0, 60)},
    ),
    "anes96": (
        lambda d: d["vote"] > 0,
        {"TVnews": (0, 7), "selfLR": (1, 7), "age": (18, 100), "educ": (1, 7)},
    ),
}


def logistic_data(name: str, cols: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, bounds) of a logistic population: breast cancer columns mapped to [-1, 1] by
    public constants, or a statsmodels data set with public bounds."""
    if name == "breast cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X = X[:, cols]
        X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
        return X, y, np.tile([-1.0, 1.0], (X.shape[1], 1))
    import statsmodels.api as sm

    frame = getattr(sm.datasets, name).load_pandas().data
    response, columns = STATSMODELS_DATA[name]
    X = frame[list(columns)].to_numpy(float)
    return X, response(frame).to_numpy(int), np.array(list(columns.values()), float)


#: multiclass populations: sklearn columns mapped to [-1, 1] by public constants, or a
#: statsmodels outcome binned into three classes by a public rule (cut points), with the
#: features' public bounds
MULTICLASS_DATA = {
    "wine": [2, 4],  # ash, magnesium: three cultivars
    "iris": [1],  # sepal width: three species
    "anes96": ("PID", [1.5, 4.5], {"selfLR": (1, 7), "age": (18, 100), "educ": (1, 7)}),
    "randhie": ("mdvis", [0.5, 3.5], {"lncoins": (0, 4.62), "physlm": (0, 1), "disea": (0, 60)}),
}


def multiclass_data(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, bounds) of a population with three classes (:data:`MULTICLASS_DATA`): party
    identification Democrat (0-1) / independent (2-4) / Republican (5-6); doctor visits
    none / 1-3 / 4 or more."""
    spec = MULTICLASS_DATA[name]
    if isinstance(spec, list):
        from sklearn.datasets import load_iris, load_wine

        X, y = {"wine": load_wine, "iris": load_iris}[name](return_X_y=True)
        X = X[:, spec]
        X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
        return X, y, np.tile([-1.0, 1.0], (X.shape[1], 1))
    import statsmodels.api as sm

    frame = getattr(sm.datasets, name).load_pandas().data
    outcome, cuts, columns = spec
    y = np.digitize(frame[outcome].to_numpy(float), cuts)
    return frame[list(columns)].to_numpy(float), y, np.array(list(columns.values()), float)


def _mnlogit_se(D: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-private multinomial MLE (statsmodels' MNLogit: classes 1..K-1 against class
    0, intercept first in each block), its classical and its robust (HC0) standard errors."""
    import statsmodels.api as sm

    fit = sm.MNLogit(y, D).fit(method="newton", maxiter=100, disp=0)
    params = np.asarray(fit.params).T.ravel()  # the model's order: class blocks
    H_inv = np.linalg.inv(-fit.model.hessian(params))
    S = fit.model.score_obs(params)
    robust = np.sqrt(np.diag(H_inv @ (S.T @ S) @ H_inv))
    return params, np.sqrt(np.diag(H_inv)), robust


@contextlib.contextmanager
def _noise_only():
    """Fits inside report the noise-only interval: ``results_`` carries the privacy noise's
    part of the sandwich alone (``one_step_cov(noise_only=True)``), mapped to the user's
    coordinates by the fit itself; the same seed and data give the same releases."""
    import privest.models.logistic as module

    full = module.one_step_cov
    module.one_step_cov = functools.partial(full, noise_only=True)
    try:
        yield
    finally:
        module.one_step_cov = full


def _bias(errors: list, ses: list) -> float:
    """The largest over coefficients of |mean error| / mean standard error (NaN rows out)."""
    e, s = np.array(errors), np.array(ses)
    given = ~np.isnan(s).any(axis=1)
    if not given.any():
        return math.nan
    return float(np.max(np.abs(e[given].mean(axis=0)) / s[given].mean(axis=0)))


def _coverage(covered: list, ratio: list, errors: list, ses: list, noise: list) -> dict:
    """Worst and mean coverage over the releases with standard errors, their MC se, the
    share without, the median over coefficients of the mean width ratio, the largest
    bias in standard errors, and the noise-only interval's worst coverage and median width
    ratio (``noise``: rows of (covered, ratio); NaN where not measured)."""
    given = ~np.isnan(np.array(ratio)).any(axis=1)
    nz = np.array(noise, float).reshape(len(noise), 2, -1)[given] if noise else None
    some = nz is not None and nz.size > 0
    cover = np.mean(np.array(covered)[given], axis=0) if given.any() else np.full(1, np.nan)
    width = np.median(np.mean(np.array(ratio)[given], axis=0)) if given.any() else np.nan
    return {
        "worst": float(cover.min()),
        "mean": float(cover.mean()),
        "mc_se": math.sqrt(0.95 * 0.05 / max(int(given.sum()), 1)),
        "no_se": float(1.0 - given.mean()),
        "ratio": float(width),
        "bias": _bias(errors, ses),
        "noise_worst": float(np.min(np.mean(nz[:, 0], axis=0))) if some else math.nan,
        "noise_ratio": float(np.median(np.mean(nz[:, 1], axis=0))) if some else math.nan,
    }


def cell(
    kind: str,
    data: str,
    cols: list[int],
    n: int,
    epsilon: float,
    reps: int,
    cov_types: tuple[str, ...] | None = None,
    noise_only: bool = True,
) -> dict:
    """Coverage per ``cov_type`` ("nonrobust", "HC0"; "bootstrap" cells: one) on the same
    resamples and fit seeds (the fits' paths are identical; only the Hessian's share and the
    score release differ), widths against the non-private robust (HC0) interval, and the
    worst coverage of the non-private classical and HC0 intervals and the largest bias of
    the non-private estimate in its (HC0) standard errors (the bias over the resamples:
    what no standard error covers)."""
    if kind == "multinomial":
        X, y, bounds = multiclass_data(data)
    else:
        X, y, bounds = logistic_data(data, cols)
    k = int(y.max()) + 1
    if kind == "multinomial":
        truth = _mnlogit_se(np.column_stack([np.ones(len(y)), X]), y)[0]
    else:
        truth = _logit_se(np.column_stack([np.ones(len(y)), X]), y)[0]
    if kind == "bootstrap":
        variants = {"bootstrap": {"method": "noisy_gd", "inference": "bootstrap"}}
    else:
        wanted = cov_types or ("nonrobust", "HC0")
        variants = {c: {"inference": "sandwich", "cov_type": c} for c in wanted}
    rng = np.random.default_rng(2027)
    covered = {v: [] for v in variants}
    ratio = {v: [] for v in variants}
    errors = {v: [] for v in variants}
    ses = {v: [] for v in variants}
    noise = {v: [] for v in variants}
    plain, robust, mle_err, mle_se, seconds = [], [], [], [], 0.0
    z = 1.959963984540054
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        Xs, ys = X[idx], y[idx]
        D = np.column_stack([np.ones(n), Xs])
        mle, se0, se_hc0 = _mnlogit_se(D, ys) if kind == "multinomial" else _logit_se(D, ys)
        plain.append(np.abs(mle - truth) <= z * se0)
        robust.append(np.abs(mle - truth) <= z * se_hc0)
        mle_err.append(mle - truth)
        mle_se.append(se_hc0)
        for v, kw in variants.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                est = pv.PrivateLogisticRegression(
                    epsilon=epsilon, delta=1e-6, bounds=bounds, random_state=r, **kw
                )
                if kind == "multinomial":
                    est.set_params(classes=list(range(k)))
                tic = time.process_time()
                m = est.fit(Xs, ys)
                seconds += time.process_time() - tic
            ci = m.results_.conf_int().to_numpy()
            covered[v].append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
            ratio[v].append(m.results_.bse.to_numpy() / se_hc0)
            errors[v].append(m.results_.params.to_numpy() - truth)
            ses[v].append(m.results_.bse.to_numpy())
            if kind != "bootstrap" and noise_only:
                noise[v].append(_noise_row(est, Xs, ys, truth, se_hc0, m.results_.params))
    out = {v: _coverage(covered[v], ratio[v], errors[v], ses[v], noise[v]) for v in variants}
    out["plain"] = float(np.min(np.mean(plain, axis=0)))
    out["plain_hc0"] = float(np.min(np.mean(robust, axis=0)))
    out["plain_bias"] = _bias(mle_err, mle_se)
    out["ms"] = 1e3 * seconds / reps / len(variants)
    return out


def _noise_row(
    est: pv.PrivateLogisticRegression,
    Xs: np.ndarray,
    ys: np.ndarray,
    truth: np.ndarray,
    se_hc0: np.ndarray,
    params: pd.Series,
) -> np.ndarray:
    """(covered, width / non-private HC0) of the noise-only interval of a refit with the same
    seed (:func:`_noise_only`): the released estimate +- z times the noise part alone."""
    with warnings.catch_warnings(), _noise_only():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = est.fit(Xs, ys).results_
    if not np.array_equal(r.params.to_numpy(), params.to_numpy()):
        raise RuntimeError("the refit for the noise-only interval released other numbers")
    ci = r.conf_int().to_numpy()
    return np.stack([(ci[:, 0] <= truth) & (truth <= ci[:, 1]), r.bse.to_numpy() / se_hc0])


def nonprivate_cell(data: str, cols: list[int], n: int, reps: int) -> dict:
    """The non-private logistic MLE on the resamples of :func:`cell` (same seed): per
    coefficient the coverage of the classical and HC0 intervals, the bias and the sd of the
    estimate over the resamples in mean HC0 standard errors (what decides whether a
    shortfall is the MLE's finite-sample bias, its variance function or Monte Carlo noise)."""
    X, y, _ = logistic_data(data, cols)
    truth = _logit_se(np.column_stack([np.ones(len(y)), X]), y)[0]
    rng = np.random.default_rng(2027)
    errors, classical, robust = [], [], []
    for _ in range(reps):
        idx = rng.integers(0, len(y), n)
        mle, se0, se_hc0 = _logit_se(np.column_stack([np.ones(n), X[idx]]), y[idx])
        errors.append(mle - truth)
        classical.append(se0)
        robust.append(se_hc0)
    e, s0, s1 = np.array(errors), np.array(classical), np.array(robust)
    z = 1.959963984540054
    return {
        "classical": np.mean(np.abs(e) <= z * s0, axis=0),
        "HC0": np.mean(np.abs(e) <= z * s1, axis=0),
        "bias": e.mean(axis=0) / s1.mean(axis=0),
        "sd": e.std(axis=0) / s1.mean(axis=0),
    }


@contextlib.contextmanager
def _released():
    """Fits inside record, in ``rec``, the one step's arguments (the released path and
    Hessian, design coordinates), its covariance and its noise-only part, and the design
    rows the Hessian was released from; the releases are unchanged."""
    import privest.models.logistic as module

    full, hessian, rec = module.one_step_cov, module.noisy_hessian, {}

    def one_step(*args, **kw):
        theta, cov = full(*args, **kw)
        rec.update(args=args, kw=kw, cov=cov, noise=full(*args, **kw, noise_only=True)[1])
        return theta, cov

    def noisy(Xc, *args):
        rec.update(Xc=Xc, at=args[0], x_radius=args[1])
        return hessian(Xc, *args)

    module.one_step_cov, module.noisy_hessian = one_step, noisy
    try:
        yield rec
    finally:
        module.one_step_cov, module.noisy_hessian = full, hessian


def diagnose_cell(
    data: str, cols: list[int], n: int, epsilon: float, reps: int, kind: str = "logistic"
) -> dict:
    """Which term of the default sandwich is short (docs/central-models.md, "Epsilon 1: which
    term is short"), per coefficient over the resamples of :func:`cell` (same seeds, so the
    same releases): the error of the released estimate split into the privacy noise's part
    (estimate - the sample's own MLE) and the sampling part (the MLE - truth), each against
    its part of the reported variance; and the noise part split into -M zbar (the mean
    gradient noise through the step, exact from the known gradients) and the remainder, with
    their covariance. Releases without standard errors are skipped. ``kind="multinomial"``:
    the three-class populations of :data:`MULTICLASS_DATA` (the default ``cov_type``, the
    contrasts' coordinates, the truth and the sample's MLE from MNLogit)."""
    multi = kind == "multinomial"
    X, y, bounds = multiclass_data(data) if multi else logistic_data(data, cols)
    mle = _mnlogit_se if multi else _logit_se
    truth = mle(np.column_stack([np.ones(len(y)), X]), y)[0]
    k = int(y.max()) + 1
    rng = np.random.default_rng(2027)
    keys = ("err", "noise", "samp", "se2", "noise2", "zlin", "zvar", "hc0", "point", "oracle")
    rows = {k: [] for k in keys}
    for r in range(reps):
        idx = rng.integers(0, len(y), n)
        Xs, ys = X[idx], y[idx]
        D = np.column_stack([np.ones(n), Xs])
        with warnings.catch_warnings(), _released() as rec:
            warnings.simplefilter("ignore", RuntimeWarning)
            est = pv.PrivateLogisticRegression(
                epsilon=epsilon, delta=1e-6, bounds=bounds, random_state=r, inference="sandwich"
            )
            if multi:
                est.set_params(classes=list(range(k)))
            est.fit(Xs, ys)
        if rec["cov"] is None:
            continue
        thetas, grads, sd_g, H, sd_h = rec["args"]
        T = np.linalg.lstsq(D, rec["Xc"], rcond=None)[0]  # user = T design (exact: affine)
        d = T.shape[1]
        T = np.kron(np.eye(len(H) // d), T)  # one block per class against the first
        Y = np.eye(k)[ys] if multi else ys[:, None].astype(float)
        exact = np.array(
            [contrasts(*2 * [gradient_sum(rec["Xc"], Y, in_classes(t, d))])[1] for t in thetas]
        )
        clean, _ = one_step_cov(thetas, exact, sd_g, H, sd_h)  # the step without z: linear
        theta = one_step_cov(thetas, grads, sd_g, H, sd_h)[0]
        hat, _, se_hc0 = mle(D, ys)
        rows["hc0"].append(se_hc0**2)
        hess = functools.partial(noisy_hessian, rec["Xc"], x_radius=rec["x_radius"], rho=1e8)
        at_point = np.linalg.inv(hess(rec["at"], rng=np.random.default_rng(0))[0])
        at_fit = np.linalg.inv(hess(in_classes(theta, d), rng=np.random.default_rng(0))[0])
        rows["point"].append(np.diag(T @ at_point @ T.T) / np.diag(T @ at_fit @ T.T))
        K = rec["kw"].get("K")  # the sampling term with the exact Hessian at theta_os
        sampling = at_fit if K is None else at_fit @ nearest_psd(K) @ at_fit
        rows["oracle"].append(np.diag(T @ (rec["noise"] + sampling) @ T.T))
        M = np.array(
            [theta - one_step_cov(thetas, grads + e, sd_g, H, sd_h)[0] for e in np.eye(len(H))]
        )
        rows["zvar"].append(sd_g**2 / len(thetas) * np.diag(T @ M.T @ M @ T.T))  # rows M e_k
        rows["err"].append(T @ theta - truth)
        rows["noise"].append(T @ theta - hat)
        rows["samp"].append(hat - truth)
        rows["se2"].append(np.diag(T @ rec["cov"] @ T.T))
        rows["noise2"].append(np.diag(T @ rec["noise"] @ T.T))
        rows["zlin"].append(T @ (theta - clean))
    a = {k: np.array(v) for k, v in rows.items()}
    se = np.sqrt(a["se2"])
    v_n, v_s = a["noise2"].mean(axis=0), (a["se2"] - a["noise2"]).mean(axis=0)
    rest = a["noise"] - a["zlin"]
    cols_ = range(se.shape[1])
    cross = np.mean((a["zlin"] - a["zlin"].mean(0)) * (rest - rest.mean(0)), axis=0)
    z = 1.959963984540054
    return {
        "given": float(len(se) / reps),
        "coverage": np.mean(np.abs(a["err"]) <= z * se, axis=0),
        "coverage, sampling term with H at theta_os": np.mean(
            np.abs(a["err"]) <= z * np.sqrt(a["oracle"]), axis=0
        ),
        "sd / rms se": a["err"].std(axis=0) / np.sqrt(a["se2"].mean(axis=0)),
        "bias / se": a["err"].mean(axis=0) / se.mean(axis=0),
        "sd(se) / se": se.std(axis=0) / se.mean(axis=0),
        "corr(|err|, se)": [np.corrcoef(np.abs(a["err"][:, j]), se[:, j])[0, 1] for j in cols_],
        "noise share": v_n / (v_n + v_s),
        "noise: sd / reported": a["noise"].std(axis=0) / np.sqrt(v_n),
        "sampling: sd / reported": a["samp"].std(axis=0) / np.sqrt(v_s),
        "sampling: sd / non-private HC0": a["samp"].std(axis=0) / np.sqrt(a["hc0"].mean(0)),
        "sampling: reported / non-private HC0 (var)": v_s / a["hc0"].mean(axis=0),
        "H^-1 at the released point / at theta_os": a["point"].mean(axis=0),
        "-M zbar: var / reported noise": a["zlin"].var(axis=0) / v_n,
        "-M zbar: var / its reported part": a["zlin"].var(axis=0) / a["zvar"].mean(axis=0),
        "remainder: var / reported noise": rest.var(axis=0) / v_n,
        "2 cov(-M zbar, remainder) / reported noise": 2.0 * cross / v_n,
    }


def cost(reps: int, n: int = 100_000, p: int = 10) -> dict:
    """CPU ms per fit at n records and p features (synthetic, uniform on the box): the fit
    without standard errors, and with them (Hessian release, one step, calibration)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, p))
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.linspace(-1, 1, p)))).astype(int)
    out = {}
    for inference in ("none", "sandwich"):
        est = pv.PrivateLogisticRegression(bounds=(-1, 1), inference=inference, random_state=0)
        tic = time.process_time()
        for _ in range(reps):
            est.fit(X, y)
        out[inference] = 1e3 * (time.process_time() - tic) / reps
    return out


DATASETS = {"breast cancer": [1, 8], "fair": [], "randhie": [], "anes96": []}
GRID = ((2_000, 1.0), (2_000, 4.0), (10_000, 0.5), (10_000, 1.0), (10_000, 4.0), (100_000, 1.0))
CELLS = [("logistic", data, cols, n, eps) for data, cols in DATASETS.items() for n, eps in GRID]
CELLS += [("multinomial", data, [], 10_000, eps) for data in MULTICLASS_DATA for eps in (0.5, 1, 4)]
CELLS += [("multinomial", data, [], 100_000, 1.0) for data in MULTICLASS_DATA]
BOOTSTRAP_CELLS = [("bootstrap", "breast cancer", [1, 8], n, 1.0) for n in (2_000, 10_000)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--bootstrap", action="store_true")
    parser.add_argument("--only", default=None, help="run only the cells of this model kind")
    parser.add_argument("--data", default=None, help="run only the cells of this data set")
    parser.add_argument("--n", type=int, default=None, help="run only the cells of this n")
    parser.add_argument("--epsilon", type=float, default=None, help="only this epsilon")
    parser.add_argument("--cost", action="store_true", help="CPU ms per fit at n = 1e5, p = 10")
    parser.add_argument("--nonprivate", action="store_true", help="the non-private MLE only")
    parser.add_argument(
        "--cov-type", choices=["auto", "nonrobust", "HC0"], default=None, help="only this cov_type"
    )
    parser.add_argument(
        "--no-noise-only", action="store_true", help="skip the noise-only refits (half the time)"
    )
    parser.add_argument(
        "--diagnose", action="store_true", help="which term is short, per coefficient"
    )
    args = parser.parse_args(argv)
    if args.diagnose:
        n, eps = args.n or 10_000, args.epsilon or 1.0
        kind = args.only or "logistic"
        sets = {d: [] for d in MULTICLASS_DATA} if kind == "multinomial" else DATASETS
        for data, cols in sets.items():
            if args.data not in (None, data):
                continue
            c = diagnose_cell(data, cols, n, eps, args.reps, kind)
            print(f"{data} {cols or ''}, n = {n}, epsilon {eps:g}: {c.pop('given'):.2f} given")
            print("(per coefficient, intercept first)")
            for key, v in c.items():
                print(f"  {key:44s}", " ".join(f"{x:7.3f}" for x in v), flush=True)
        return
    if args.cost:
        c = cost(max(1, args.reps // 100))
        print(f"ms per fit (n = 1e5, p = 10): none {c['none']:.0f}, sandwich {c['sandwich']:.0f}")
        return
    if args.nonprivate:
        print("| data | n | coverage, classical | HC0 | bias / se | sd / se | MC se |")
        print("|---|---|---|---|---|---|---|")
        for data, cols in DATASETS.items():
            if args.data not in (None, data):
                continue
            n = args.n or 10_000
            c = nonprivate_cell(data, cols, n, args.reps)
            row = " | ".join(", ".join(f"{v:.3f}" for v in c[k]) for k in c)
            print(f"| {data} | {n} | {row} | {math.sqrt(0.95 * 0.05 / args.reps):.4f} |")
        return
    print(
        "| model | data (columns) | n | epsilon | cov_type | worst coverage | mean coverage "
        "| MC se | no SE | width / non-private HC0 | non-private worst (classical, HC0) "
        "| largest bias / se, private | non-private | ms per fit "
        "| noise-only worst coverage | noise-only width / non-private HC0 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, data, cols, n, eps in CELLS + BOOTSTRAP_CELLS * args.bootstrap:
        wanted = ((args.only, kind), (args.data, data), (args.n, n), (args.epsilon, eps))
        if any(want is not None and want != have for want, have in wanted):
            continue
        wanted_cov = args.cov_type and (args.cov_type,)
        out = cell(kind, data, cols, n, eps, args.reps, wanted_cov, not args.no_noise_only)
        for v, c in out.items():
            if not isinstance(c, dict):
                continue
            print(
                f"| {kind} | {data} {cols or ''} | {n} | {eps:g} | {v} | {c['worst']:.3f} "
                f"| {c['mean']:.3f} | {c['mc_se']:.3f} | {c['no_se']:.2f} | {c['ratio']:.2f} "
                f"| {out['plain']:.3f}, {out['plain_hc0']:.3f} | {c['bias']:.2f} "
                f"| {out['plain_bias']:.2f} | {out['ms']:.0f} "
                f"| {c['noise_worst']:.3f} | {c['noise_ratio']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Paper 004, Fig. 8 (E5): linear regression with a noised continuous target (App. E.2).

Target PINCP (income, not thresholded) and features AGEP, SEX, SCHL, WKHP of ACSIncome, both
mapped to [-1, 1] with public bounds (||Y|| = 1). Loss (theta^T x - y)^2 / 2, lambda = 10,
batch 128, gamma = 5e-6, (eps, delta) = (2, 1e-5) split (1, 1) and (5e-6, 5e-6) (the split
is unstated: A1 in docs/iwp-sgd.md).
IWP gradient x~ (theta^T x~ - y~) - sigma_x^2 theta; naive omits the correction. Uses the
folktables cache when ``PRIVEST_ACS_DIR`` is set, otherwise an OFFLINE SYNTHETIC STAND-IN
(labelled in every row). Repetitions redraw the LDP noise on a fixed split.

A second setting with gamma = 1e-4 is added (ours): at the paper's gamma = 5e-6 one pass of
~4 200 batches moves theta by gamma * lambda * steps ~ 0.2 of the way to the optimum, so
all three curves stay close to their start.
"""

from __future__ import annotations

import math
import os

import numpy as np

from privest.datasets.acs import acs_features, load_acs
from privest.datasets.synthetic_iwp import ACS_PUBLIC_BOUNDS, make_acs_like
from privest.experiments.iwp_common import METHODS, Curves, plot_curves
from privest.experiments.registry import ExperimentResult, Row, register
from privest.learn.iwp_sgd import sgd_replicated
from privest.progress import progress_iter
from privest.release.examples import release_regression_examples

N_ROWS, LAM, BATCH = 668_859, 10.0, 128
GAMMAS = (5e-6, 1e-4)


def _data(rng: np.random.Generator, n: int | None):
    cols = acs_features("income")
    root = os.environ.get("PRIVEST_ACS_DIR")
    if root:
        X, y = load_acs(root, "income", continuous_target=True)
        return X.to_numpy(float), y, f"folktables ACS 2018 cache at {root}"
    n = n or N_ROWS
    df = make_acs_like(int(n * 1.6), rng)
    df = df[(df.AGEP > 16) & (df.PINCP > 100) & (df.WKHP > 0)].iloc[:n]
    return df[cols].to_numpy(float), df.PINCP.to_numpy(float), "OFFLINE SYNTHETIC STAND-IN"


def _risk(hist: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Clean test squared risk of each recorded theta: hist (T, R, p) -> (T, R)."""
    pred = np.einsum("mp,trp->trm", X, hist)
    return 0.5 * np.mean((pred - y) ** 2, axis=2)


@register("iwp-regression", "Paper 004 Fig. 8 (E5): IWP-SGD linear regression (stand-in)", 100, 4)
def run(
    reps: int,
    rng: np.random.Generator,
    progress: bool = True,
    n: int | None = None,
    group: int = 10,
) -> ExperimentResult:
    """Paper 004 Fig. 8: IWP-SGD, naive and oracle SGD risk paths on the ACS income task
    (the folktables cache, or the labelled synthetic stand-in), per step size.

    One function on purpose: the experiment's design and replication loop, read top to
    bottom.
    """
    import matplotlib.pyplot as plt

    X, t, source = _data(rng, n)
    cols = acs_features("income")
    bounds = [ACS_PUBLIC_BOUNDS[c] for c in cols]
    tb = ACS_PUBLIC_BOUNDS["PINCP"]
    perm = rng.permutation(X.shape[0])
    cut = int(0.8 * X.shape[0])
    tr, te = perm[:cut], perm[cut:]
    lo, hi = np.array(bounds).T
    Xte = (np.clip(X[te], lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)
    yte = (np.clip(t[te], *tb) - sum(tb) / 2) / ((tb[1] - tb[0]) / 2)
    rows: list[Row] = []
    fig, axes = plt.subplots(len(GAMMAS), 2, figsize=(11, 4.2 * len(GAMMAS)), squeeze=False)
    seed = int(rng.integers(0, 2**31 - 10_000))
    for gi, gamma in enumerate(GAMMAS):
        curves = Curves()
        clean = None
        starts = list(range(0, reps, group))
        for start in progress_iter(starts, f"regression gamma={gamma:g}", progress):
            g = min(group, reps - start)
            rels = [
                release_regression_examples(
                    X[tr],
                    t[tr],
                    epsilon_x=1.0,
                    epsilon_y=1.0,
                    delta_x=5e-6,
                    delta_y=5e-6,
                    y_bounds=tb,
                    bounds=bounds,
                    clip=True,
                    rng=seed + start + r,
                )
                for r in range(g)
            ]
            rel = rels[0]
            Xn = np.stack([r.X for r in rels])
            yn = np.stack([r.y for r in rels])
            if clean is None:
                clean = (
                    rel.transform(np.clip(X[tr], lo, hi)),
                    rel.transform_target(np.clip(t[tr], *tb)),
                )
            # The paper's settings (Sec. 6): constant step, last iterate, no projection.
            kw = dict(
                task="regression",
                sigma2=rel.sigma2,
                batch_size=BATCH,
                learning_rate=gamma,
                alpha=LAM,
                record_every=max(1, cut // BATCH // 60),
                averaging=None,
                theta_radius=None,
                drop_last=True,
            )
            for m in ("naive", "iwp"):
                path = sgd_replicated(Xn, yn, method=m, **kw)
                curves.hist[m].append(path.history)
                curves.loss[m].append(_risk(path.history, Xte, yte))
                curves.batches = path.batches
        path = sgd_replicated(clean[0], clean[1], method="oracle", **kw)
        curves.hist["oracle"].append(path.history)
        curves.loss["oracle"].append(_risk(path.history, Xte, yte))
        avg = {
            m: _risk(curves.stack("hist", m).mean(axis=1, keepdims=True), Xte, yte)[:, 0]
            for m in METHODS
        }
        setting = (
            f"gamma={gamma:g} [{source}], sigma2_x={rel.sigma2:.4g}, sigma2_y={rel.sigma2_y:.4g}"
        )
        for m, label in METHODS.items():
            L = curves.stack("loss", m)[-1]
            se = float(L.std() / math.sqrt(L.size)) if L.size > 1 else math.nan
            note = "paper: figure only" + ("; gamma not the paper's (ours)" if gi else "")
            rows.append(
                Row(
                    setting,
                    cut,
                    label,
                    "test squared risk, last iterate (mean)",
                    float(L.mean()),
                    mc_se=se,
                    note=note,
                )
            )
            rows.append(
                Row(
                    setting,
                    cut,
                    label,
                    "test squared risk of averaged model",
                    float(avg[m][-1]),
                    note="aggregation (b)",
                )
            )
        plot_curves(axes[gi], curves, avg, f"regression, gamma={gamma:g}", "test squared risk")
    fig.suptitle(f"Paper 004 Fig. 8 on {source}")
    fig.tight_layout()
    return ExperimentResult(rows=rows, figures={"main": fig})

"""Paper 004, Figs. 2 and 4 (E2): IWP-SGD on ACSIncome / ACSPublicCoverage, exponential loss.

The ACS data needs a download from census.gov. When ``--data DIR`` or the environment variable
``PRIVEST_ACS_DIR`` points to a folktables cache, :func:`privest.datasets.acs.load_acs`
reads it (CA, TX, FL, NY, PA, 2018, 1-Year); otherwise the same pipeline runs on an
**offline synthetic stand-in** (:func:`privest.datasets.synthetic_iwp.make_acs_like`) with the
paper's row counts, and every table row says so. Features AGEP, SEX, SCHL + WKHP (Income) or
+ PINCP (PubCov) mapped to [-1, 1] with public codebook bounds (A6 in docs/iwp-sgd.md;
out-of-range values
are projected and counted), one 80/20 split, (eps, delta) = (2, 1e-5) split evenly,
lambda = 10, batch 50, gamma = 2e-5, one pass; repetitions redraw the LDP noise only, so
"SGD real" is a single deterministic curve (paper 004, Sec. 6).
"""

from __future__ import annotations

import math
import os

import numpy as np

from privest.datasets.acs import acs_features, load_acs
from privest.datasets.synthetic_iwp import ACS_PUBLIC_BOUNDS, make_acs_like
from privest.experiments.iwp_common import (
    METHODS,
    Curves,
    averaged_model_loss,
    plot_curves,
    run_group,
)
from privest.experiments.registry import ExperimentResult, Row, register
from privest.progress import progress_iter
from privest.release.examples import project_features

ROWS = {"income": 668_859, "pubcov": 883_984}  # paper's counts (Sec. 6; A14)
EPS, DELTA, LAM, BATCH, GAMMA = 2.0, 1e-5, 10.0, 50, 2e-5
PUBCOV_PINCP = (-20_000.0, 30_000.0)  # the PubCov filter keeps PINCP <= 30 000 (public)


def acs_task_data(
    task: str, rng: np.random.Generator, n: int | None = None, data_dir: str | None = None
):
    """(X in [-1, 1], y in +-1, source label, number projected) for one ACS task.

    The folktables cache is ``data_dir``, else ``$PRIVEST_ACS_DIR``; without either, an
    offline synthetic stand-in, labelled as such."""
    cols = acs_features(task)
    root = data_dir or os.environ.get("PRIVEST_ACS_DIR")
    if root:
        X, y = load_acs(root, task)
        source = f"folktables ACS 2018 cache at {root}"
    else:
        n = n or ROWS[task]
        df = make_acs_like(int(n * 3), rng)
        if task == "income":
            df = df[(df.AGEP > 16) & (df.PINCP > 100) & (df.WKHP > 0)]
            y = np.where(df.PINCP > 50_000, 1.0, -1.0)
        else:
            df = df[(df.AGEP < 65) & (df.PINCP <= 30_000)]
            y = np.where(df.PUBCOV == 1, 1.0, -1.0)
        X, y = df[cols].iloc[:n], y[:n]
        source = "OFFLINE SYNTHETIC STAND-IN (not ACS data; pass --data or set PRIVEST_ACS_DIR)"
    bounds = [
        PUBCOV_PINCP if (c == "PINCP" and task == "pubcov") else ACS_PUBLIC_BOUNDS[c] for c in cols
    ]
    Z, _, _, n_proj = project_features(X.to_numpy(float), bounds=bounds, clip=True)
    return Z, np.asarray(y, dtype=float), source, n_proj


def _se(v: np.ndarray) -> float:
    return float(v.std() / math.sqrt(v.size)) if v.size > 1 else math.nan


def run_acs(
    reps: int,
    rng: np.random.Generator,
    progress: bool,
    loss: str = "exponential",
    tasks: tuple[str, ...] = ("income", "pubcov"),
    n: int | None = None,
    group: int = 10,
    data_dir: str | None = None,
) -> ExperimentResult:
    import matplotlib.pyplot as plt

    data_dir = data_dir or os.environ.get("PRIVEST_ACS_DIR")

    rows: list[Row] = []
    fig, axes = plt.subplots(2 * len(tasks), 2, figsize=(11, 8.4 * len(tasks)), squeeze=False)
    seed = int(rng.integers(0, 2**31 - 10_000))
    for ti, task in enumerate(tasks):
        Z, y, source, n_proj = acs_task_data(task, rng, n, data_dir)
        perm = rng.permutation(Z.shape[0])
        cut = int(0.8 * Z.shape[0])
        Xtr, ytr = Z[perm[:cut]], y[perm[:cut]]
        Xte, yte = Z[perm[cut:]], y[perm[cut:]]
        curves = Curves()
        kw = dict(
            loss=loss,
            eps_x=EPS / 2,
            eps_y=EPS / 2,
            delta=DELTA,
            lam=LAM,
            batch_size=BATCH,
            gamma=GAMMA,
            n_records=60,
        )
        te = (Xte[None], yte[None])
        sigma2 = run_group(curves, Xtr[None], ytr[None], *te, seed=seed, methods=("oracle",), **kw)
        starts = list(range(0, reps, group))
        for start in progress_iter(starts, f"ACS {task}", progress):
            g = min(group, reps - start)
            Xg = np.broadcast_to(Xtr, (g, *Xtr.shape))
            yg = np.broadcast_to(ytr, (g, *ytr.shape))
            Xtg = np.broadcast_to(Xte, (g, *Xte.shape))
            ytg = np.broadcast_to(yte, (g, *yte.shape))
            run_group(
                curves, Xg, yg, Xtg, ytg, seed=seed + 1 + start, methods=("naive", "iwp"), **kw
            )
        avg = {m: averaged_model_loss(curves, [te], loss, m) for m in METHODS}
        setting = (
            f"{task} [{source}], n_train={cut}, p={Z.shape[1]}, sigma2={sigma2:.4g}, "
            f"projected={n_proj}"
        )
        for m, label in METHODS.items():
            L, A = curves.stack("loss", m)[-1], curves.stack("acc", m)[-1]
            rows.append(
                Row(
                    setting,
                    cut,
                    label,
                    f"test {loss} risk, last iterate (mean)",
                    float(L.mean()),
                    mc_se=_se(L),
                    note="paper: figure only",
                )
            )
            rows.append(
                Row(
                    setting,
                    cut,
                    label,
                    "test accuracy, last iterate (mean)",
                    float(A.mean()),
                    mc_se=_se(A),
                    note="paper: Fig. 4 only",
                )
            )
            rows.append(
                Row(
                    setting,
                    cut,
                    label,
                    f"test {loss} risk of averaged model",
                    float(avg[m][-1]),
                    note="aggregation (b)",
                )
            )
        plot_curves(axes[2 * ti], curves, avg, f"ACS {task} ({loss})", f"test {loss} risk")
        acc_curves = Curves(batches=curves.batches, loss=curves.acc)
        acc_avg = {m: curves.stack("acc", m).mean(axis=1) for m in METHODS}
        plot_curves(axes[2 * ti + 1], acc_curves, acc_avg, f"ACS {task} accuracy", "accuracy")
        axes[2 * ti + 1][1].set_title(f"ACS {task}\n(b') mean accuracy")
    fig.suptitle(
        "Paper 004 Figs. 2 and 4"
        + ("" if data_dir else " on an OFFLINE SYNTHETIC STAND-IN for ACS")
    )
    fig.tight_layout()
    return ExperimentResult(rows=rows, figures={"main": fig})


@register("iwp-acs", "Paper 004 Figs. 2/4 (E2): IWP-SGD on ACS (or an offline stand-in)", 100, 4)
def run(
    reps: int,
    rng: np.random.Generator,
    progress: bool = True,
    data_dir: str | None = None,
    **kw,
) -> ExperimentResult:
    return run_acs(reps, rng, progress, data_dir=data_dir, **kw)

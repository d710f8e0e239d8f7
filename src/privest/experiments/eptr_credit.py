"""Paper 001 Figure 1 (bottom row): credit default Bayes classifier (E4), balanced error
against log2 eps.

Data (paper 001, Sec. 3.4): UCI Default of Credit Card Clients (Yeh and Lien 2009), 30,000
clients, binary label (default next month, about 22% positive), so K = 2. The file is
``privest reproduce eptr-credit --data PATH`` (the UCI ``.xls`` or a CSV export of it, see
:func:`privest.datasets.credit.load_credit_default`), else ``$PRIVEST_CREDIT_PATH``: the
library ships no copy and reads no default location.

Features: the authors' code's 11 engineered features (:func:`privest.datasets.credit_features`,
public constants only). Protocol (the paper states none of it; from the authors' code,
docs/eptr.md, "Notes, errata and choices"): stratified 20% train (n ~ 6000) / 80% test;
standardisation with the training means and sds (that step is NOT differentially private,
flagged in every row's note, as in the wine experiment); train and test rows projected onto
the R_x = 4 ball; c0 = 0.08, delta = 0.01, eps = 2^t for t in {0, 0.25, ..., 3.25}; 200
replicates (the paper does not state its count).

Methods (Sec. 3.4): the non-private plug-in Bayes rule, ePTR-Bayes (Algorithm 3 as printed:
``constants="paper"``, fixed c0, no centring, random bottom) and DPNB / DPNBSS with the count
share s = 0.5 (baselines B1-B2 as in the authors' code; NOT formally DP, see
:mod:`privest.models.eptr_baselines`). Metric: balanced error on the test rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privest.datasets.credit import credit_features, load_credit_default
from privest.experiments.eptr_common import (
    Collector,
    balanced_error,
    bayes_fit_all,
    data_file,
    plot_panel,
)
from privest.experiments.registry import ExperimentResult, register
from privest.models.eptr_bayes import linear_bayes_scores
from privest.progress import progress_iter
from privest.projection import project_rows

K, RX, C0, DELTA, SPLIT, TRAIN = 2, 4.0, 0.08, 0.01, 0.5, 0.2
LOG2_EPS = tuple(np.arange(0.0, 3.26, 0.25))
METHODS = ["non-private", "ePTR", "DPNB", "DPNBSS"]
_NAMES = (
    "default of credit card clients.xls",
    "default of credit card clients.csv",
    "UCI_Credit_Card.csv",
)
_HINT = (
    "the UCI 'default of credit card clients.xls' (30,000 rows; columns LIMIT_BAL, AGE, PAY_0, "
    "PAY_2..PAY_6, BILL_AMT1..6, PAY_AMT1..6 and 'default payment next month'; reading .xls "
    "needs xlrd) or a CSV export of it, from "
    "https://archive.ics.uci.edu/dataset/350/default+of+credit+card+clients"
)


def credit_path(data_dir: str | Path | None = None) -> Path:
    """``data_dir`` (the file, or a folder holding it), else ``$PRIVEST_CREDIT_PATH``."""
    return data_file("eptr-credit", data_dir, "PRIVEST_CREDIT_PATH", _NAMES, _HINT)


def split(X: np.ndarray, labels: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Stratified train/test split; standardised by the TRAINING mean and sd (NOT DP, as the
    authors' code); both parts projected onto the R_x ball."""
    train = np.zeros(labels.size, dtype=bool)
    for k in range(K):
        idx = rng.permutation(np.flatnonzero(labels == k))
        train[idx[: int(round(TRAIN * idx.size))]] = True
    mu, sd = X[train].mean(axis=0), X[train].std(axis=0)
    Z = (X - mu) / np.where(sd > 0, sd, 1.0)
    Z *= project_rows(Z, RX)[0][:, None]
    return Z[train], labels[train], Z[~train], labels[~train]


def fit_all(X: np.ndarray, labels: np.ndarray, eps: float, rng: np.random.Generator):
    """(prior, means) of every method at eps, and whether ePTR released."""
    kw = dict(k=K, x_radius=RX, delta=DELTA, eps=eps, c0=C0, split=SPLIT, rng=rng)
    return bayes_fit_all(X, labels, **kw)


@register("eptr-credit", "Paper 001 Figure 1 (bottom): credit default Bayes (E4)", 200, 5)
def run(
    reps: int, rng: np.random.Generator, progress: bool = True, data_dir: str | None = None
) -> ExperimentResult:
    """E4 with ``reps`` replicates (authors' code 200; the paper states none)."""
    import matplotlib.pyplot as plt

    X, labels = credit_features(load_credit_default(credit_path(data_dir)))
    col = Collector()
    n_tr = 0
    for _ in progress_iter(range(reps), "eptr-credit", progress):
        Xtr, ytr, Xte, yte = split(X, labels, rng)
        n_tr = Xtr.shape[0]
        for t in LOG2_EPS:
            fits, rel = fit_all(Xtr, ytr, float(2.0**t), rng)
            setting = f"E4 log2eps={t:g}"
            for method, (prior, means) in fits.items():
                pred = np.argmax(linear_bayes_scores(Xte, prior, means), axis=1)
                col.add(setting, n_tr, method, "balanced_error", balanced_error(pred, yte, K))
            col.add(setting, n_tr, "ePTR", "release_rate", float(rel))
    note = (
        f"{reps} reps (code 200); training-data standardisation is not DP (as in the code); "
        "paper gives a figure only"
    )
    rows = col.rows(note=note)
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_panel(
        ax,
        col,
        [(f"E4 log2eps={t:g}", n_tr, float(t)) for t in LOG2_EPS],
        METHODS,
        "balanced_error",
        r"$\log_2\epsilon$",
        "balanced test error",
        logy=False,
    )
    ax.set_title(f"E4 credit default: 20% train (n = {n_tr}), delta = {DELTA:g}")
    ax.legend(fontsize=8)
    fig.suptitle(f"Credit default Bayes classifier ({reps} replicates)")
    return ExperimentResult(rows, {"main": fig})

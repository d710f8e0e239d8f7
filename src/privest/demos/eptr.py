"""``privest demo`` section: the ePTR Bayes classifier (paper 001, Algorithm 3) on embedded data.

Wisconsin breast cancer (569 tumours, 5 features scaled to [0, 1] by public bounds; see
:mod:`privest.datasets.embedded`). The features are multiplied by the public constant 6 so that
the model's unit-variance assumption roughly holds (their sds are about 0.12-0.18), so R_x =
6 sqrt(5). A fixed 400/169 train/test split. For each epsilon (delta = 1e-5, c0 = 0.2) the
section fits ePTR 20 times and reports the release rate and mean test accuracy, beside the
non-private plug-in rule and the Gaussian mechanism with global sensitivity (baseline B0).
diffprivlib (the usual anchor, GaussianNB) is not installed in the main environment; it is
compared in ``benchmarks/bench_eptr.py`` instead.
"""

from __future__ import annotations

import math
import pathlib
from typing import Any

import numpy as np

__all__ = ["demo_section"]

SCALE, C0, DELTA = 6.0, 0.2, 1e-5
EPSILONS = (1.0, 2.0, 4.0, 8.0)
FITS = 20


def demo_section(console: Any, output: pathlib.Path, rng: np.random.Generator) -> dict:
    """Print the ePTR-Bayes table, save ``eptr_bayes.png`` and return the numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rich.table import Table

    from privest.datasets import load_demo_data
    from privest.models.eptr_baselines import bayes_global_sensitivity, gaussian_baseline
    from privest.models.eptr_bayes import (
        EPTRBayesClassifier,
        bayes_statistics,
        linear_bayes_scores,
    )

    console.rule("[bold]central DP model: efficient Propose-Test-Release (paper 001)")
    data = load_demo_data()
    X = data.X.to_numpy() * SCALE
    y = data.y.to_numpy()
    radius = SCALE * math.sqrt(X.shape[1])
    split = np.random.default_rng(0).permutation(len(y))  # public, fixed split
    tr, te = split[:400], split[400:]
    st = bayes_statistics(X[tr], y[tr], 2, radius, C0)
    acc_np = float(
        np.mean(
            np.argmax(linear_bayes_scores(X[te], st["class_prior"], st["means"]), axis=1) == y[te]
        )
    )
    sens = bayes_global_sensitivity(len(tr), radius)
    results: dict[str, Any] = {"non_private_accuracy": acc_np, "rows": []}
    table = Table(title="ePTR Bayes classifier, breast cancer (400 train / 169 test)")
    for col in ("epsilon", "release rate", "ePTR accuracy", "GS accuracy", "non-private"):
        table.add_column(col, justify="right")
    for eps in EPSILONS:
        accs, rel, gs = [], 0, []
        for _ in range(FITS):
            m = EPTRBayesClassifier(
                epsilon=eps,
                delta=DELTA,
                classes=[0, 1],
                x_radius=radius,
                c0=C0,
                random_state=rng,
                clip=True,
            )
            m.fit(X[tr], y[tr])
            rel += m.released_
            accs.append(float(np.mean(m.predict(X[te]) == y[te])))
            noisy = gaussian_baseline(st["estimate"], sens, eps, DELTA, rng)
            prior = np.maximum(noisy[:2], C0)
            means = noisy[2:].reshape(2, -1)
            pred = np.argmax(linear_bayes_scores(X[te], prior / prior.sum(), means), axis=1)
            gs.append(float(np.mean(pred == y[te])))
        row = {
            "epsilon": eps,
            "release_rate": rel / FITS,
            "eptr_accuracy": float(np.mean(accs)),
            "gs_accuracy": float(np.mean(gs)),
        }
        results["rows"].append(row)
        table.add_row(
            f"{eps:g}",
            f"{row['release_rate']:.2f}",
            f"{row['eptr_accuracy']:.3f}",
            f"{row['gs_accuracy']:.3f}",
            f"{acc_np:.3f}",
        )
    console.print(table)
    console.print(
        f"(eps, {DELTA:g})-DP per fit; c0 = {C0}, R_x = {radius:.2f}; mean of {FITS} fits. "
        "diffprivlib GaussianNB is compared in benchmarks/bench_eptr.py (not installed here)."
    )
    fig, ax = plt.subplots(figsize=(5, 3.5))
    eps_axis = [r["epsilon"] for r in results["rows"]]
    ax.plot(eps_axis, [r["eptr_accuracy"] for r in results["rows"]], "o-", label="ePTR")
    ax.plot(eps_axis, [r["gs_accuracy"] for r in results["rows"]], "s-", label="GS (B0)")
    ax.axhline(acc_np, color="k", ls="--", label="non-private")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("test accuracy")
    ax.legend()
    ax.set_title("ePTR Bayes classifier (breast cancer)")
    path = pathlib.Path(output) / "eptr_bayes.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    results["figure"] = str(path)
    return results

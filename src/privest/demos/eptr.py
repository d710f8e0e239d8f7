"""``privest demo`` section: central private classifiers on embedded data (paper 001 and
docs/central-models.md).

Wisconsin breast cancer (569 tumours, 5 features scaled to [0, 1] by public bounds; see
:mod:`privest.datasets.embedded`), scaled by the public constant 6 (the Bayes model's
unit-variance assumption roughly holds) and a fixed 400/169 train/test split. For each
epsilon (delta = 1e-5) the section fits, 20 times each:

* ``PrivateLogisticRegression`` (the recommended classifier: noisy gradient descent on the
  float-safe lattice, zCDP accounting) with its defaults;
* the ePTR Bayes classifier (paper 001, Algorithm 3) with the improved defaults: features
  centred at the public box centre, ``c0="auto"`` chosen privately, analytic Gaussian step;
* the paper's configuration (no centring, c0 = 0.2 fixed, ``constants="paper"``);

and reports median test accuracy (and the ePTR release rate) beside the non-private plug-in
rule. diffprivlib's ``LogisticRegression``, the usual anchor, is shown when it is installed
(``pip install privest[bench]``); ``benchmarks/bench_central_models.py`` compares it on five
real data sets.
"""

from __future__ import annotations

import math
import pathlib
import warnings
from typing import Any

import numpy as np

__all__ = ["demo_section"]

SCALE, PAPER_C0, DELTA = 6.0, 0.2, 1e-5
EPSILONS = (1.0, 2.0, 4.0, 8.0)
FITS = 20


def _anchor() -> Any:
    """diffprivlib's LogisticRegression when installed, else None."""
    try:
        from diffprivlib.models import LogisticRegression
    except ImportError:
        return None
    return LogisticRegression


def _models(eps: float, radius: float, rng: np.random.Generator) -> dict[str, Any]:
    from privest.models.eptr_bayes import EPTRBayesClassifier
    from privest.models.logistic import PrivateLogisticRegression

    box = (0.0, SCALE)
    common = dict(epsilon=eps, delta=DELTA, classes=[0, 1], random_state=rng, clip=True)
    models = {
        "logistic": PrivateLogisticRegression(bounds=box, **common),
        "eptr": EPTRBayesClassifier(
            x_radius=radius / 2, c0="auto", bounds=box, **common
        ),  # centred: the box's half-diagonal is radius / 2
        "eptr_paper": EPTRBayesClassifier(
            x_radius=radius, c0=PAPER_C0, constants="paper", **common
        ),
    }
    anchor = _anchor()
    if anchor is not None:
        models["diffprivlib"] = anchor(
            epsilon=eps, data_norm=radius, random_state=int(rng.integers(2**31))
        )
    return models


def demo_section(
    console: Any, output: pathlib.Path, rng: np.random.Generator, budget: Any = None
) -> dict:
    """Print the accuracy table, save ``central_models.png`` and return the numbers.

    One function on purpose: a script whose steps are the demo's printed sections, in order.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rich.table import Table

    from privest.datasets import load_demo_data
    from privest.errors import NothingReleasedWarning
    from privest.models.eptr_bayes import bayes_statistics, linear_bayes_scores

    console.rule(
        "[bold]central DP models: private logistic regression and efficient "
        "Propose-Test-Release (paper 001)"
    )
    data = load_demo_data()
    X = data.X.to_numpy() * SCALE
    y = data.y.to_numpy()
    radius = SCALE * math.sqrt(X.shape[1])
    split = np.random.default_rng(0).permutation(len(y))  # public, fixed split
    tr, te = split[:400], split[400:]
    st = bayes_statistics(X[tr], y[tr], 2, radius, PAPER_C0)
    scores = linear_bayes_scores(X[te], st["class_prior"], st["means"])
    acc_np = float(np.mean(np.argmax(scores, axis=1) == y[te]))
    names = list(_models(1.0, radius, rng))
    results: dict[str, Any] = {"non_private_accuracy": acc_np, "rows": []}
    table = Table(title="median test accuracy, breast cancer (400 train / 169 test)")
    headers = {
        "logistic": "PrivateLogisticRegression",
        "eptr": "ePTR Bayes (improved)",
        "eptr_paper": "ePTR Bayes (paper)",
        "diffprivlib": "diffprivlib LogReg",
    }
    for col in ["epsilon", *(headers[n] for n in names), "non-private"]:
        table.add_column(col, justify="right")
    for eps in EPSILONS:
        acc: dict[str, list[float]] = {n: [] for n in names}
        released = {"eptr": 0, "eptr_paper": 0}
        for _ in range(FITS):
            for name, model in _models(eps, radius, rng).items():
                with warnings.catch_warnings():  # no release is counted below
                    warnings.simplefilter("ignore", NothingReleasedWarning)
                    if name == "diffprivlib":
                        warnings.simplefilter("ignore")  # its own bounds warnings
                    model.fit(X[tr], y[tr])
                acc[name].append(float(np.mean(model.predict(X[te]) == y[te])))
                if name in released:
                    released[name] += bool(model.released_)
        row = {"epsilon": eps, **{n: float(np.median(v)) for n, v in acc.items()}}
        row.update({f"{n}_release_rate": r / FITS for n, r in released.items()})
        results["rows"].append(row)
        cells = []
        for n in names:
            cell = f"{row[n]:.3f}"
            if n in released:
                cell += f" ({row[f'{n}_release_rate']:.0%} rel.)"
            cells.append(cell)
        table.add_row(f"{eps:g}", *cells, f"{acc_np:.3f}")
    console.print(table)
    console.print(
        f"(eps, {DELTA:g})-DP per fit; median of {FITS} fits; 'rel.' is how often ePTR released."
        + (
            ""
            if "diffprivlib" in names
            else " diffprivlib (pure eps-DP) is compared in benchmarks/bench_central_models.py "
            "(installing the bench extra shows it here)."
        )
    )
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    eps_axis = [r["epsilon"] for r in results["rows"]]
    for n, marker in zip(names, "os^d", strict=False):
        ax.plot(eps_axis, [r[n] for r in results["rows"]], marker + "-", label=headers[n])
    ax.axhline(acc_np, color="k", ls="--", label="non-private")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("median test accuracy")
    ax.legend(fontsize=8)
    ax.set_title("central private classifiers (breast cancer)")
    path = pathlib.Path(output) / "central_models.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    console.print(f"figure: {path}")
    results["figure"] = str(path)
    return results

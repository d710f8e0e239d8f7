"""Paper 001 Figure 1 (top row): ePTR Bayes classifier simulations E1-E3.

Setup (paper 001, Sec. 3.3; unstated constants from the authors' code, docs/eptr.md, "Notes,
errata and choices"): K = 3, p = 10, x | y = k ~ N(3 e_k, I), rows clipped to R_x = 8 before
estimation (test rows are not), delta = 0.01, balanced error on a fresh test set.

* E1: mu = (0.75, 0.15, 0.10), n = 5000, eps in {0.5, 0.75, ..., 3}; c0 = 0.04, DPNB split 0.5.
* E2: same mu, eps = 1.5, n in {1000, ..., 10000}; c0 = 0.04, split 0.4.
* E3: mu = (0.7 - pi_min, 0.3, pi_min), n = 5000, eps = 1.5, pi_min in {0.05, ..., 0.30};
  c0 = pi_min / 2, split 0.2.

Methods: non-private plug-in rule, ePTR-Bayes (Algorithm 3, random bottom), DPNB and DPNBSS
(baselines B1-B2 as in the reference code; NOT formally DP, see privest.models.eptr_baselines).
The paper uses 10^5 test points and 500 replicates and prints no numbers (figure only).
"""

from __future__ import annotations

import numpy as np

from privest.experiments.eptr_common import Collector, balanced_error, bayes_fit_all, plot_panel
from privest.experiments.registry import ExperimentResult, register
from privest.models.eptr_bayes import linear_bayes_scores
from privest.progress import progress_iter

K, P, SEP, RX, DELTA = 3, 10, 3.0, 8.0, 0.01
MU = (0.75, 0.15, 0.10)
E1_EPS = tuple(np.round(np.arange(0.5, 3.01, 0.25), 2))
E2_N = tuple(range(1000, 10001, 1000))
E3_PI = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
METHODS = ["non-private", "ePTR", "DPNB", "DPNBSS"]
N_TEST = 50_000


def simulate(n: int, mu: tuple[float, ...], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    labels = rng.choice(K, size=n, p=np.asarray(mu) / np.sum(mu))
    X = rng.standard_normal((n, P))
    X[np.arange(n), labels] += SEP
    return X, labels


def fit_all(X, labels, eps, c0, split, rng):
    """(prior, means) of every method at eps, and whether ePTR released."""
    kw = dict(k=K, x_radius=RX, delta=DELTA, eps=eps, c0=c0, split=split, rng=rng)
    return bayes_fit_all(X, labels, **kw)


def _record(col, setting, n, fits, released, Xt, yt) -> None:
    for method, (prior, means) in fits.items():
        pred = np.argmax(linear_bayes_scores(Xt, prior, means), axis=1)
        col.add(setting, n, method, "balanced_error", balanced_error(pred, yt, K))
    col.add(setting, n, "ePTR", "release_rate", float(released))


@register("eptr-bayes", "Paper 001 Figure 1 (top): ePTR Bayes classifier E1-E3", 500, 6)
def run(reps: int, rng: np.random.Generator, progress: bool = True) -> ExperimentResult:
    """E1-E3 with ``reps`` replicates (paper: 500) and 5 x 10^4 test points (paper: 10^5)."""
    import matplotlib.pyplot as plt

    col = Collector()
    for _ in progress_iter(range(reps), "eptr-bayes", progress):
        X, y = simulate(10_000, MU, rng)
        Xt, yt = simulate(N_TEST, MU, rng)
        for eps in E1_EPS:
            fits, rel = fit_all(X[:5000], y[:5000], float(eps), 0.04, 0.5, rng)
            _record(col, f"E1 eps={eps:g}", 5000, fits, rel, Xt, yt)
        for n in E2_N:
            fits, rel = fit_all(X[:n], y[:n], 1.5, 0.04, 0.4, rng)
            _record(col, "E2 eps=1.5", n, fits, rel, Xt, yt)
        for pi in E3_PI:
            mu = (0.7 - pi, 0.3, pi)
            X3, y3 = simulate(5000, mu, rng)
            Xt3, yt3 = simulate(N_TEST // 2, mu, rng)
            fits, rel = fit_all(X3, y3, 1.5, pi / 2, 0.2, rng)
            _record(col, f"E3 pi_min={pi:g}", 5000, fits, rel, Xt3, yt3)
    rows = col.rows(note=f"{reps} reps (paper 500); paper gives a figure only")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    plot_panel(
        axes[0],
        col,
        [(f"E1 eps={e:g}", 5000, float(e)) for e in E1_EPS],
        METHODS,
        "balanced_error",
        "epsilon",
        "balanced error",
        logy=False,
    )
    axes[0].set_title("E1: n = 5000")
    plot_panel(
        axes[1],
        col,
        [("E2 eps=1.5", n, float(n)) for n in E2_N],
        METHODS,
        "balanced_error",
        "n",
        "balanced error",
        logy=False,
    )
    axes[1].set_title("E2: eps = 1.5")
    plot_panel(
        axes[2],
        col,
        [(f"E3 pi_min={p:g}", 5000, p) for p in E3_PI],
        METHODS,
        "balanced_error",
        r"$\pi_{min}$",
        "balanced error",
        logy=False,
    )
    axes[2].set_title("E3: n = 5000, eps = 1.5")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"ePTR Bayes classifier vs DPNB/DPNBSS ({reps} replicates)")
    return ExperimentResult(rows, {"main": fig})

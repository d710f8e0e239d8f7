"""Paper 001 supplementary NW simulations E9-E11 (setup from the authors' reference code).

The supplement with these figures is not in the paper text; settings follow the authors'
code (docs/eptr.md, "Notes, errata and choices"):
f(x) = sin(2 pi x) + 0.5 cos(4 pi x), noise N(0, 0.2^2), query x_0 = 0.5 (f(x_0) = 0.5),
Gaussian kernel with h = 0.2 n^(-1/5), R_f = 1, delta = n^-3, bottom ~ U[-1, 1], WPE with L = 8.
Metric: squared error at x_0.

* E9: x ~ U[0, 1], n = 2000, eps in {0.5, 1, ..., 5}, c0 = 0.4.
* E10: x ~ U[0, 1], eps = 1.5, n in {500, 1000, ..., 5000}, c0 = 0.5.
* E11: x ~ Beta(a, a), n = 2000, eps = 1.5, a in {0.5, 0.8, ..., 3.5}, c0 = 0.5.

Methods: non-private NW, ePTR-NW (Algorithm 5), WPE (B6) and the Gaussian mechanism with global
sensitivity 2 R_f (B0). The reference code uses 500 replicates (100 for E11).
"""

from __future__ import annotations

import numpy as np

from privest.experiments.eptr_common import Collector, plot_panel
from privest.experiments.registry import ExperimentResult, register
from privest.models.eptr_baselines import gaussian_baseline, wpe
from privest.models.eptr_nw import EPTRKernelRegressor, nw_statistics
from privest.progress import progress_iter

X0, RF, NOISE_SD, LEVELS = 0.5, 1.0, 0.2, 8
E9_EPS = tuple(np.arange(0.5, 5.01, 0.5))
E10_N = tuple(range(500, 5001, 500))
E11_A = tuple(np.round(np.arange(0.5, 3.51, 0.3), 2))
METHODS = ["non-private", "ePTR", "WPE", "GS"]


def f_true(x: np.ndarray) -> np.ndarray:
    return np.sin(2 * np.pi * x) + 0.5 * np.cos(4 * np.pi * x)


def simulate(n: int, rng: np.random.Generator, a: float | None = None) -> tuple[np.ndarray, ...]:
    x = rng.random(n) if a is None else rng.beta(a, a, n)
    return x, f_true(x) + NOISE_SD * rng.standard_normal(n)


def fit_all(x, y, eps, c0, rng) -> tuple[dict[str, float], bool]:
    n = x.size
    h = 0.2 * n ** (-1 / 5)
    model = EPTRKernelRegressor(
        query_points=[[X0]],
        epsilon=eps,
        delta=float(n) ** -3,
        bandwidth=h,
        y_radius=RF,
        c0=c0,
        bottom="uniform",
        random_state=rng,
        clip=True,
    ).fit(x[:, None], y)
    np_est = float(
        nw_statistics(np.array([[X0]]), x[:, None], np.clip(y, -RF, RF), h, RF, c0)["estimate"][0]
    )
    return {
        "non-private": np_est,
        "ePTR": float(model.estimates_[0]),
        "WPE": wpe(x, y, X0, RF, LEVELS, eps, rng),
        "GS": float(
            np.clip(
                gaussian_baseline(np.array([np_est]), 2 * RF, eps, float(n) ** -3, rng)[0], -RF, RF
            )
        ),
    }, bool(model.released_[0])


def _record(col, setting, n, fits, released) -> None:
    target = float(f_true(np.array(X0)))
    for method, est in fits.items():
        col.add(setting, n, method, "squared_error", (est - target) ** 2)
    col.add(setting, n, "ePTR", "release_rate", float(released))


@register("eptr-nw", "Paper 001 supplement: ePTR Nadaraya-Watson simulations E9-E11", 500, 40)
def run(reps: int, rng: np.random.Generator, progress: bool = True) -> ExperimentResult:
    """E9-E11 with ``reps`` replicates (reference code: 500, 100 for E11)."""
    import matplotlib.pyplot as plt

    col = Collector()
    for _ in progress_iter(range(reps), "eptr-nw", progress):
        x, y = simulate(5000, rng)
        for eps in E9_EPS:
            fits, rel = fit_all(x[:2000], y[:2000], float(eps), 0.4, rng)
            _record(col, f"E9 eps={eps:g}", 2000, fits, rel)
        for n in E10_N:
            fits, rel = fit_all(x[:n], y[:n], 1.5, 0.5, rng)
            _record(col, "E10 eps=1.5", n, fits, rel)
        for a in E11_A:
            xa, ya = simulate(2000, rng, float(a))
            fits, rel = fit_all(xa, ya, 1.5, 0.5, rng)
            _record(col, f"E11 a={a:g}", 2000, fits, rel)
    rows = col.rows(note=f"{reps} reps (code 500/100); the supplement is not in the paper text")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    plot_panel(
        axes[0],
        col,
        [(f"E9 eps={e:g}", 2000, float(e)) for e in E9_EPS],
        METHODS,
        "squared_error",
        "epsilon",
        "squared error at $x_0$",
    )
    axes[0].set_title("E9: n = 2000")
    plot_panel(
        axes[1],
        col,
        [("E10 eps=1.5", n, float(n)) for n in E10_N],
        METHODS,
        "squared_error",
        "n",
        "squared error at $x_0$",
    )
    axes[1].set_title("E10: eps = 1.5")
    plot_panel(
        axes[2],
        col,
        [(f"E11 a={a:g}", 2000, float(a)) for a in E11_A],
        METHODS,
        "squared_error",
        "Beta(a, a) shape a",
        "squared error at $x_0$",
    )
    axes[2].set_title("E11: n = 2000, eps = 1.5")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"ePTR Nadaraya-Watson vs WPE and GS ({reps} replicates)")
    return ExperimentResult(rows, {"main": fig})

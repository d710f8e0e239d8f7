"""Paper 001 Figure 2 (top row): ePTR-OLS simulations E5 (eps sweep) and E6 (n sweep).

Setup (paper 001, Sec. 4.3; unstated constants from the authors' code): x ~ N(0, I_5),
y = x^T theta + N(0, 1), theta = v/||v||, v = (1, 1/2, ..., 1/5); delta = 0.01; R_x = 4,
R_theta = 1 (R_y = 4), bottom 0 (authors' code);
c0 = 0.4 (E5, n = 8000, eps in {1, 1.5, ..., 8}) and 0.5 (E6, eps = 4, n in {1000, ..., 10000}).
Methods on the same data: non-private OLS, ePTR-OLS (Algorithm 4), DPJL, DPGD, FM (baselines
B3-B5 with the reference-code settings) and the Gaussian mechanism with global sensitivity
2 R_theta (B0, not in the paper). Metrics: ||theta_tilde - theta||^2, test MSE on m fresh
points (paper: 10^4) and the ePTR release rate. The paper uses 500 replicates and prints no
numbers (figure only), so ``paper`` is empty.
"""

from __future__ import annotations

import numpy as np

from privest.experiments.eptr_common import Collector, plot_panel, quiet_bottom
from privest.experiments.registry import ExperimentResult, register
from privest.models.eptr_baselines import dpgd, dpjl, functional_mechanism, gaussian_baseline
from privest.models.eptr_ols import EPTRLinearRegression
from privest.progress import progress_iter

P = 5
DELTA = 0.01
RX, RTHETA = 4.0, 1.0
E5_EPS = tuple(np.arange(1.0, 8.01, 0.5))
E6_N = tuple(range(1000, 10001, 1000))
METHODS = ["non-private", "ePTR", "DPJL", "DPGD", "FM", "GS"]


def true_theta(p: int = P) -> np.ndarray:
    v = 1.0 / np.arange(1, p + 1)
    return v / np.linalg.norm(v)


def simulate(n: int, rng: np.random.Generator, p: int = P) -> tuple[np.ndarray, np.ndarray]:
    X = rng.standard_normal((n, p))
    return X, X @ true_theta(p) + rng.standard_normal(n)


def fit_all(
    X: np.ndarray, y: np.ndarray, eps: float, c0: float, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], bool]:
    """Every method's coefficients on (X, y) at eps; and whether ePTR released."""
    with quiet_bottom():  # the release rate is recorded
        model = EPTRLinearRegression(
            epsilon=eps,
            delta=DELTA,
            x_radius=RX,
            theta_radius=RTHETA,
            c0=c0,
            constants="paper",  # the paper's Algorithm 4, so the figures compare
            random_state=rng,
            clip=True,
            inference="none",  # all of the budget on Algorithm 4, as in the paper
        ).fit(X, y)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    proj = np.linalg.norm(ols)
    ols_proj = ols * min(1.0, RTHETA / proj) if proj > 0 else ols
    fits = {
        "non-private": ols,
        "ePTR": model.coef_,
        "DPJL": dpjl(X, y, RX, RX, eps, DELTA, rng),
        "DPGD": dpgd(X, y, 4.5, 3.0, 1.0, eps, DELTA, rng, iterations=30, step=0.8),
        "FM": functional_mechanism(X, y, RX, RX, eps, rng, theta_radius=1.0),
        "GS": gaussian_baseline(ols_proj, 2 * RTHETA, eps, DELTA, rng),
    }
    return fits, model.released_


def _record(col: Collector, setting: str, n: int, fits: dict, released: bool, Xt, yt) -> None:
    theta = true_theta(Xt.shape[1])
    for method, coef in fits.items():
        col.add(setting, n, method, "param_error", float(np.sum((coef - theta) ** 2)))
        col.add(setting, n, method, "test_mse", float(np.mean((Xt @ coef - yt) ** 2)))
    col.add(setting, n, "ePTR", "release_rate", float(released))


@register("eptr-ols", "Paper 001 Figure 2 (top): ePTR-OLS simulations E5-E6", 500, 8)
def run(reps: int, rng: np.random.Generator, progress: bool = True) -> ExperimentResult:
    """E5 and E6 with ``reps`` replicates (paper: 500); test sets of 10^4 points."""
    import matplotlib.pyplot as plt

    col = Collector()
    m_test = 10_000
    for _ in progress_iter(range(reps), "eptr-ols", progress):
        X, y = simulate(max(E6_N), rng)  # E5 uses the first 8000 rows, E6 the first n
        Xt, yt = simulate(m_test, rng)
        for eps in E5_EPS:
            fits, rel = fit_all(X[:8000], y[:8000], float(eps), 0.4, rng)
            _record(col, f"E5 eps={eps:g}", 8000, fits, rel, Xt, yt)
        for n in E6_N:
            fits, rel = fit_all(X[:n], y[:n], 4.0, 0.5, rng)
            _record(col, "E6 eps=4", n, fits, rel, Xt, yt)
    rows = col.rows(note=f"{reps} reps (paper 500); paper gives a figure only")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_panel(
        axes[0],
        col,
        [(f"E5 eps={e:g}", 8000, float(e)) for e in E5_EPS],
        METHODS,
        "param_error",
        "epsilon",
        r"$\|\tilde\theta-\theta\|^2$",
    )
    axes[0].set_title("E5: n = 8000, p = 5, delta = 0.01")
    plot_panel(
        axes[1],
        col,
        [("E6 eps=4", n, float(n)) for n in E6_N],
        METHODS,
        "param_error",
        "n",
        r"$\|\tilde\theta-\theta\|^2$",
    )
    axes[1].set_title("E6: eps = 4, p = 5")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"ePTR-OLS vs baselines ({reps} replicates)")
    return ExperimentResult(rows, {"main": fig})

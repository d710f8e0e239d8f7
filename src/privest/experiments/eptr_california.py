"""Paper 001 Figure 3: California housing kernel regression (E8), test MSE against log2 eps.

Data (paper 001, Sec. 5.2): California Housing (Pace and Barry 1997), 20,640 block groups,
response the median house value in $100k, predictors income, location and house age. The file
is ``privest reproduce eptr-california --data PATH`` (a CSV export of scikit-learn's frame, see
:func:`privest.datasets.california.load_california_housing`), else ``$PRIVEST_CALIFORNIA_PATH``:
the library ships no copy, and scikit-learn's fetcher would download at run time.

Features (:func:`privest.datasets.california_features`, public constants only): MedInc,
Latitude, Longitude and HouseAge clipped to public ranges and mapped to [0, 1]^4; y clipped to
[0, 5] and mapped to [-1, 1].

Protocol: 20% train / 80% test, 50 replicates (paper); from the authors' code (the paper gives
no constants, docs/eptr.md): Gaussian kernel, h = 0.5 n^(-1/8), R_f = 1, c0 = 0.3,
delta = 0.01, bottom 0 (the midpoint of the public response range), eps = 2^t for t in
{0, 0.25, ..., 3.25}; the MSE is over 20 random held-out test points per replicate (the same
points for every eps), and, as in the authors' code, each of the 20 queries spends the full
(eps, delta) (``budget_mode="per_query"``: the composed guarantee of one replicate is
(20 eps, 0.2); stated in every row's note).

Methods (Sec. 5.2): non-private NW, ePTR-NW (Algorithm 5 as printed) and WPE (baseline B6 as in
the authors' code: 1-D Haar on MedInc only, L = 10, full eps per query), plus the
data-independent midpoint predictor (ePTR's bottom). Test MSE is in ($100k)^2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privest.datasets.california import california_features, load_california_housing
from privest.experiments.eptr_common import Collector, data_file, plot_panel
from privest.experiments.registry import ExperimentResult, register
from privest.models.eptr_baselines import wpe
from privest.models.eptr_nw import EPTRKernelRegressor, nw_statistics
from privest.progress import progress_iter

RF, C0, DELTA, BW_SCALE, LEVELS, TRAIN, N_QUERY = 1.0, 0.3, 0.01, 0.5, 10, 0.2, 20
SCALE = 2.5  # $100k per unit of the scaled response
LOG2_EPS = tuple(np.arange(0.0, 3.26, 0.25))
METHODS = ["non-private", "ePTR", "WPE", "bottom (midpoint)"]
_NAMES = ("california_housing.csv", "cal_housing.csv")
_HINT = (
    "a CSV with the columns MedInc, HouseAge, Latitude, Longitude and MedHouseVal (20,640 rows): "
    "on a machine with internet access run sklearn.datasets.fetch_california_housing("
    "as_frame=True).frame.to_csv('california_housing.csv', index=False)"
)


def california_path(data_dir: str | Path | None = None) -> Path:
    """``data_dir`` (the CSV, or a folder holding it), else ``$PRIVEST_CALIFORNIA_PATH``."""
    return data_file("eptr-california", data_dir, "PRIVEST_CALIFORNIA_PATH", _NAMES, _HINT)


def fit_all(
    Xtr: np.ndarray, ytr: np.ndarray, queries: np.ndarray, eps: float, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Each method's estimates (scaled units) at the query points, and ePTR's release flags."""
    model = EPTRKernelRegressor(
        query_points=queries,
        epsilon=eps,
        delta=DELTA,
        bandwidth_scale=BW_SCALE,  # h = 0.5 n^(-1/(d+4)) = 0.5 n^(-1/8)
        y_radius=RF,
        c0=C0,
        bounds=(0.0, 1.0),
        budget_mode="per_query",  # the authors' code: full (eps, delta) per query
        bottom=0.0,
        clip=True,
        random_state=rng,
    ).fit(Xtr, ytr)
    h = model.bandwidth_
    est = nw_statistics(queries, Xtr, np.clip(ytr, -RF, RF), h, RF, C0)["estimate"]
    return {
        "non-private": np.asarray(est, dtype=float),
        "ePTR": model.estimates_,
        "WPE": np.array([wpe(Xtr[:, 0], ytr, float(q[0]), RF, LEVELS, eps, rng) for q in queries]),
        "bottom (midpoint)": np.zeros(queries.shape[0]),
    }, model.released_


@register("eptr-california", "Paper 001 Figure 3: California housing kernel regression (E8)", 50, 3)
def run(
    reps: int, rng: np.random.Generator, progress: bool = True, data_dir: str | None = None
) -> ExperimentResult:
    """E8 with ``reps`` replicates (paper 50)."""
    import matplotlib.pyplot as plt

    X, y = california_features(load_california_housing(california_path(data_dir)))
    n = X.shape[0]
    n_tr = int(round(TRAIN * n))
    col = Collector()
    for _ in progress_iter(range(reps), "eptr-california", progress):
        idx = rng.permutation(n)
        tr, te = idx[:n_tr], idx[n_tr:]
        q = rng.choice(te, size=min(N_QUERY, te.size), replace=False)  # same for every eps
        queries, target = X[q], y[q]
        for t in LOG2_EPS:
            fits, released = fit_all(X[tr], y[tr], queries, float(2.0**t), rng)
            setting = f"E8 log2eps={t:g}"
            for method, est in fits.items():
                mse = float(np.mean((SCALE * (est - target)) ** 2))
                col.add(setting, n_tr, method, "test_mse", mse)
            col.add(setting, n_tr, "ePTR", "release_rate", float(np.mean(released)))
    note = (
        f"{reps} reps (paper 50); {N_QUERY} test points per replicate, each query at the full "
        "(eps, delta) as in the authors' code (composed: 20 eps per replicate); MSE in ($100k)^2"
    )
    rows = col.rows(note=note)
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_panel(
        ax,
        col,
        [(f"E8 log2eps={t:g}", n_tr, float(t)) for t in LOG2_EPS],
        METHODS,
        "test_mse",
        r"$\log_2\epsilon$",
        r"test MSE (\$100k$^2$)",
    )
    ax.set_title(f"E8 California housing: 20% train (n = {n_tr}), delta = {DELTA:g}")
    ax.legend(fontsize=8)
    fig.suptitle(f"California housing NW ({reps} replicates)")
    return ExperimentResult(rows, {"main": fig})
